/* trace.c — the schedule as a list of primitive steps, and replaying such a list.
 *
 * One step a line, words separated by single spaces, no quotes and no backslashes, so a trace
 * goes into a JSON string unchanged (docs/schedule-trace.md is the reference):
 *   split C i 32            split_nparts C i 4        tile C i j 32 32
 *   fuse C i.o j.o          reorder C i.o j.o k i.i
 *   vectorize C j.i         unroll C k.i              parallel C i.o      bind C i.o blockIdx.x
 *   compute_inline P        compute_root P            compute_at P C i.o
 *   set_tail C i.o guard    pragma C i.o unroll_max_step 16   reorder_storage C_local k y x
 * Stages are named by their (unique) stage names, iterators by their names in that stage, which
 * are deterministic: replaying the same steps on a fresh schedule of the same computation makes
 * the same names and so the same loop nest.
 *
 * Which words a step has is steps.def's; this file only knows how each kind of word is written
 * (sch_trace_step) and read back (te_schedule_replay).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

const sch_step_info sch_steps[SCH_STEP_COUNT] = {
#define SCH_STEP(verb, words, outs, adds, call) {#verb, words, outs, adds},
#include "steps.def"
#undef SCH_STEP
};

int sch_step_find(const char *verb) {
  for (int k = 0; verb && k < SCH_STEP_COUNT; k++)
    if (strcmp(sch_steps[k].verb, verb) == 0)
      return k;
  return -1;
}

int sch_step_nkinds(const sch_step_info *info, bool *list) {
  int n = 0;
  *list = false;
  for (const char *c = info->words; *c; c++) {
    if (*c == '*')
      *list = true;
    else
      n++;
  }
  return n;
}

const ir_enum_words *sch_kind_enum(char kind) {
  switch (kind) {
  case 'C':
    return &ir_scope_words;
  case 'G':
    return &ir_thread_tag_words;
  case 'L':
    return &ir_tail_words;
  default:
    return NULL;
  }
}

/* ---------------------------------------------------------------- recording */

/* How a trace names a tensor: by its stage when that stage has one output (stage names are
   unique), else by its own name (replay's tensor_word reads both). */
static const char *tensor_name(te_schedule *s, const te_tensor *t) {
  te_stage *st = sch_stage_of_tensor(s, t);
  return st && st->op->nout == 1 ? st->name : t->name;
}

static void put_word(ir_str *out, te_schedule *s, char kind, const sch_arg *a) {
  switch (kind) {
  case 'S':
    ir_str_printf(out, " %s", a->stage->name);
    return;
  case 'T':
    ir_str_printf(out, " %s", tensor_name(s, a->tensor));
    return;
  case 'I':
  case 'A':
    ir_str_printf(out, " %s", a->iter->name);
    return;
  case 'N':
  case 'P':
    ir_str_printf(out, " %lld", (long long)a->i);
    return;
  case 'K':
    ir_str_printf(out, " %s", a->word);
    return;
  default: {
    const char *w = ir_enum_word(sch_kind_enum(kind), a->e);
    ir_str_printf(out, " %s", w ? w : "?");
  }
  }
}

static void put_list(ir_str *out, char kind, const sch_arg *a) {
  if (kind == 'S')
    for (int k = 0; k < a->stages.n; k++)
      ir_str_printf(out, " %s", a->stages.v[k]->name);
  else
    for (int k = 0; k < a->iters.n; k++)
      ir_str_printf(out, " %s", a->iters.v[k]->name);
}

te_status sch_trace_step(te_schedule *s, sch_step_id id, const sch_arg args[]) {
  const char *kinds = sch_steps[id].words;
  ir_str line = {0};
  ir_str_puts(&line, sch_steps[id].verb);
  for (int k = 0; kinds[k] && kinds[k] != '*'; k++) {
    if (kinds[k + 1] == '*')
      put_list(&line, kinds[k], &args[k]);
    else
      put_word(&line, s, kinds[k], &args[k]);
  }
  char *copy = line.oom ? NULL : ir_strdup_persistent(s->ctx, line.buf);
  ir_str_free(&line);
  if (!copy)
    return ir_error(s->ctx, TE_ERR_NOMEM, "te_schedule_trace: out of memory recording a step");
  if (!sch_grow(s->ctx, (void ***)&s->steps, &s->cap_steps, s->nsteps, s->nsteps + 1))
    return TE_ERR_NOMEM;
  s->steps[s->nsteps++] = copy;
  return TE_OK;
}

/* Steps from first on, each te_specialize's block where it was made: "specialize COND {", the
   branch's own steps (after those it copied), "}", indented by depth. */
static void put_steps(ir_str *out, te_schedule *s, int first, int depth) {
  int k = 0;
  for (int i = first; i <= s->nsteps; i++) {
    for (; k < s->nspecial && s->special[k].at_step <= i; k++) {
      const sch_special *sp = &s->special[k];
      char *cond = ir_expr_to_string(sp->cond);
      if (!cond) {
        out->oom = true;
        return;
      }
      ir_str_printf(out, "%*sspecialize %s {\n", 2 * depth, "", cond);
      free(cond);
      put_steps(out, sp->branch, sp->branch->nprefix, depth + 1);
      ir_str_printf(out, "%*s}\n", 2 * depth, "");
    }
    if (i < s->nsteps)
      ir_str_printf(out, "%*s%s\n", 2 * depth, "", s->steps[i]);
  }
}

static char *trace_text(te_schedule *s) {
  ir_str out = {.ctx = s->ctx};
  put_steps(&out, s, 0, 0);
  if (!out.buf)
    ir_str_puts(&out, "");
  return ir_str_take(&out);
}

char *te_schedule_trace(te_schedule *s) {
  if (!s)
    return NULL;
  ir_call_begin(s->ctx);
  char *text = sch_check_usable(s, "te_schedule_trace") == TE_OK ? trace_text(s) : NULL;
  return ir_call_end_ptr(s->ctx, text);
}

/* ---------------------------------------------------------------- replay */

#define MAX_WORDS 70

typedef struct step {
  te_schedule *s;
  int line;
  int n;
  char *w[MAX_WORDS];
  te_stage *cur; /* the stage named last: the one I and A words belong to */
  /* the storage of a list word */
  te_stage *stages[MAX_WORDS];
  te_iter *iters[MAX_WORDS];
} step;

static te_status bad(step *p, te_status st, const char *what, const char *word) {
  return ir_error(p->s->ctx, st, "te_schedule_replay: line %d: %s '%s'", p->line, what,
                  word ? word : "");
}

static te_stage *stage_word(step *p, int i) {
  te_stage *st = sch_stage_by_name(p->s, p->w[i]);
  if (!st)
    bad(p, TE_ERR_NOT_FOUND, "no stage named", p->w[i]);
  return st;
}

static te_iter *iter_word(step *p, int i) {
  te_iter *it = sch_stage_find_iter(p->cur, p->w[i]);
  if (!it) {
    ir_error(p->s->ctx, TE_ERR_NOT_FOUND,
             "te_schedule_replay: line %d: stage '%s' has no iter '%s'", p->line, p->cur->name,
             p->w[i]);
  }
  return it;
}

/* A tensor by name: the output of a single-output stage of that (unique) stage name, else the
   one tensor of that name among multi-output stages and placeholders (two: ambiguous). */
static te_tensor *tensor_word(step *p, int i) {
  te_schedule *s = p->s;
  te_stage *st = sch_stage_by_name(s, p->w[i]);
  if (st && st->op->nout == 1)
    return st->op->outputs[0];
  te_tensor *found = NULL;
  for (int k = 0; k < s->nstage; k++) {
    sch_op *op = s->stages[k]->op;
    te_tensor **in;
    int n = sch_op_inputs(op, &in);
    for (int j = -op->nout; j < n; j++) {
      te_tensor *t = j < 0 ? op->outputs[-j - 1] : in[j];
      if ((j < 0 && op->nout == 1) || (j >= 0 && t->op->kind != SCH_OP_PLACEHOLDER) ||
          strcmp(t->name, p->w[i]) != 0 || t == found)
        continue;
      if (found) {
        bad(p, TE_ERR_NOT_FOUND, "two tensors are named", p->w[i]);
        return NULL;
      }
      found = t;
    }
  }
  if (!found)
    bad(p, TE_ERR_NOT_FOUND, "no tensor named", p->w[i]);
  return found;
}

static bool int_word(step *p, int i, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(p->w[i], &end, 10);
  if (*p->w[i] == '\0' || *end != '\0' || errno == ERANGE) {
    bad(p, TE_ERR_PARSE, "expected an integer, got", p->w[i]);
    return false;
  }
  *v = x;
  return true;
}

/* Reads word i as kind into a; the status of the first word that does not read. */
static te_status read_word(step *p, char kind, int i, sch_arg *a) {
  switch (kind) {
  case 'S':
    if (!(a->stage = p->cur = stage_word(p, i)))
      return TE_ERR_NOT_FOUND;
    return TE_OK;
  case 'T':
    if (!(a->tensor = tensor_word(p, i)))
      return TE_ERR_NOT_FOUND;
    p->cur = sch_stage_of_tensor(p->s, a->tensor);
    return TE_OK;
  case 'I':
  case 'A':
    if (!p->cur)
      return bad(p, TE_ERR_NOT_FOUND, "no stage computes", p->w[i - 1]);
    return (a->iter = iter_word(p, i)) ? TE_OK : TE_ERR_NOT_FOUND;
  case 'N':
    return int_word(p, i, &a->i) ? TE_OK : TE_ERR_PARSE;
  case 'P':
    if (!int_word(p, i, &a->i))
      return TE_ERR_PARSE;
    if (a->i < 0 || a->i > INT_MAX)
      return bad(p, TE_ERR_PARSE, "axis out of range:", p->w[i]);
    return TE_OK;
  case 'K':
    a->word = p->w[i];
    return TE_OK;
  default: {
    const ir_enum_words *t = sch_kind_enum(kind);
    char what[40];
    if ((a->e = ir_enum_value(t, p->w[i])) >= 0)
      return TE_OK;
    snprintf(what, sizeof what, "unknown %s", t->what);
    return bad(p, TE_ERR_PARSE, what, p->w[i]);
  }
  }
}

/* The words from first on as a list of kind (S, I or A), into a. */
static te_status read_list(step *p, char kind, int first, sch_arg *a) {
  sch_arg one;
  int n = p->n - first;
  for (int i = first; i < p->n; i++) {
    te_status st = read_word(p, kind, i, &one);
    if (st != TE_OK)
      return st;
    if (kind == 'S')
      p->stages[i - first] = one.stage;
    else
      p->iters[i - first] = one.iter;
  }
  if (kind == 'S') {
    a->stages.n = n;
    a->stages.v = p->stages;
  } else {
    a->iters.n = n;
    a->iters.v = p->iters;
  }
  return TE_OK;
}

/* The step's primitive, as steps.def calls it (s and a are the names CALL uses). */
static te_status apply(te_schedule *s, sch_step_id id, const sch_arg a[]) {
  switch (id) {
#define SCH_STEP(verb, words, outs, adds, call)                                                    \
  case SCH_STEP_##verb:                                                                            \
    return call;
#include "steps.def"
#undef SCH_STEP
  default:
    break;
  }
  return ir_error(s->ctx, TE_ERR_INTERNAL, "te_schedule_replay: step %d has no primitive", (int)id);
}

static te_status run_step(step *p) {
  int id = sch_step_find(p->w[0]);
  if (id < 0)
    return bad(p, TE_ERR_PARSE, "unknown step", p->w[0]);
  const sch_step_info *info = &sch_steps[id];
  bool list;
  int n = sch_step_nkinds(info, &list) + 1; /* words, the verb included */
  if (list ? p->n < n : p->n != n)
    return ir_error(p->s->ctx, TE_ERR_PARSE,
                    "te_schedule_replay: line %d: '%s' takes %s%d words (got %d)", p->line, p->w[0],
                    list ? "at least " : "", n - 1, p->n - 1);
  sch_arg a[8];
  p->cur = NULL;
  for (int k = 0; k < n - 1; k++) {
    bool is_list = list && k == n - 2;
    te_status st = is_list ? read_list(p, info->words[k], k + 1, &a[k])
                           : read_word(p, info->words[k], k + 1, &a[k]);
    if (st != TE_OK)
      return st;
  }
  return apply(p->s, (sch_step_id)id, a);
}

/* Splits line into p's words, in place (strtok is not thread-safe). */
static te_status split_words(step *p, char *line) {
  p->n = 0;
  for (char *c = line; *c;) {
    while (*c == ' ' || *c == '\t' || *c == '\r')
      *c++ = '\0';
    if (!*c)
      break;
    if (p->n == MAX_WORDS)
      return bad(p, TE_ERR_PARSE, "too many words after", c);
    p->w[p->n++] = c;
    while (*c && *c != ' ' && *c != '\t' && *c != '\r')
      c++;
  }
  return TE_OK;
}

/* The first word of a line not yet split, compared with w; and whether its last is "{". */
static bool first_word_is(const char *line, const char *w) {
  line += strspn(line, " \t\r");
  size_t n = strlen(w);
  return strncmp(line, w, n) == 0 && (line[n] == '\0' || strchr(" \t\r", line[n]));
}
static bool opens_block(const char *line) {
  size_t n = strlen(line);
  while (n > 0 && strchr(" \t\r", line[n - 1]))
    n--;
  return first_word_is(line, "specialize") && n > 0 && line[n - 1] == '{';
}

static te_status replay_lines(te_schedule *s, char **lines, int nlines, int first_line);

/* "specialize COND {" at lines[0] (split into p's words): the branch, replayed from the lines
   up to the matching "}"; *used is the number of lines the block took. */
static te_status replay_block(step *p, char **lines, int nlines, int *used) {
  if (p->n < 3 || strcmp(p->w[p->n - 1], "{") != 0)
    return bad(p, TE_ERR_PARSE, "expected 'specialize CONDITION {', got", p->w[0]);
  int depth = 1, end = 1;
  for (; end < nlines && depth > 0; end++)
    depth += opens_block(lines[end]) ? 1 : first_word_is(lines[end], "}") ? -1 : 0;
  if (depth > 0)
    return bad(p, TE_ERR_PARSE, "no '}' closes the block of", "specialize");
  ir_str cond = {.ctx = p->s->ctx};
  for (int i = 1; i < p->n - 1; i++)
    ir_str_printf(&cond, "%s%s", i > 1 ? " " : "", p->w[i]);
  char *text = ir_str_take(&cond);
  if (!text)
    return TE_ERR_NOMEM;
  char fn[64];
  snprintf(fn, sizeof fn, "te_schedule_replay: line %d", p->line);
  te_expr *c = sch_condition_parse(p->s, text, fn);
  free(text);
  if (!c)
    return te_last_status(p->s->ctx);
  te_schedule *branch;
  te_status st = sch_specialize(p->s, c, &branch);
  if (st != TE_OK)
    return st;
  *used = end;
  return replay_lines(branch, lines + 1, end - 2, p->line + 1);
}

static te_status replay_lines(te_schedule *s, char **lines, int nlines, int first_line) {
  step words = {.s = s}, *p = &words;
  for (int i = 0; i < nlines; i++) {
    p->line = first_line + i;
    te_status st = split_words(p, lines[i]);
    if (st != TE_OK)
      return st;
    if (p->n == 0 || p->w[0][0] == '#')
      continue;
    if (strcmp(p->w[0], "}") == 0)
      return bad(p, TE_ERR_PARSE, "no 'specialize' block is open at", "}");
    if (strcmp(p->w[0], "specialize") == 0) {
      int used = 0;
      if ((st = replay_block(p, lines + i, nlines - i, &used)) != TE_OK)
        return st;
      i += used - 1;
      continue;
    }
    if ((st = run_step(p)) != TE_OK)
      return st;
  }
  return TE_OK;
}

te_status sch_replay(te_schedule *s, const char *trace, int first_line) {
  char *text = ir_strdup(s->ctx, trace);
  if (!text)
    return TE_ERR_NOMEM;
  int n = 1;
  for (const char *c = text; *c; c++)
    n += *c == '\n';
  char **lines = ir_alloc(s->ctx, (size_t)n * sizeof *lines);
  if (!lines)
    return TE_ERR_NOMEM;
  n = 0;
  for (char *line = text, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next)
      *next++ = '\0';
    lines[n++] = line;
  }
  return replay_lines(s, lines, n, first_line);
}

static te_status schedule_replay_impl(te_schedule *s, const char *trace) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  if (!trace)
    return ir_error(s->ctx, TE_ERR_INVALID_ARG, "te_schedule_replay: trace is NULL");
  return sch_replay(s, trace, 1);
}

te_status te_schedule_replay(te_schedule *s, const char *trace) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(s, "te_schedule_replay", schedule_replay_impl(s, trace));
}
