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
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sch.h"

void sch_trace_add(te_schedule *s, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!sch_grow(s->ctx, (void ***)&s->steps, &s->cap_steps, s->nsteps, s->nsteps + 1)) return;
  char *copy = ir_strdup_persistent(s->ctx, buf);
  if (copy) s->steps[s->nsteps++] = copy;
}

void sch_trace_iters(te_stage *st, const char *verb, int n, te_iter *const its[]) {
  char buf[2048];
  size_t k = (size_t)snprintf(buf, sizeof buf, "%s %s", verb, st->name);
  for (int i = 0; i < n && k < sizeof buf; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, " %s", its[i]->name);
  sch_trace_add(st->sch, "%s", buf);
}

char *te_schedule_trace(te_schedule *s) {
  if (!s) return NULL;
  ir_str out = {0};
  for (int i = 0; i < s->nsteps; i++) ir_str_printf(&out, "%s\n", s->steps[i]);
  if (!out.buf) ir_str_puts(&out, "");
  return ir_str_take(&out);
}

/* ---------------------------------------------------------------- replay */

#define MAX_WORDS 70

typedef struct step {
  te_schedule *s;
  int line;
  int n;
  char *w[MAX_WORDS];
} step;

static te_status bad(step *p, te_status st, const char *what, const char *word) {
  return ir_error(p->s->ctx, st, "te_schedule_replay: line %d: %s '%s'", p->line, what,
                  word ? word : "");
}

static te_stage *stage_word(step *p, int i) {
  te_stage *st = sch_stage_by_name(p->s, p->w[i]);
  if (!st) bad(p, TE_ERR_NOT_FOUND, "no stage named", p->w[i]);
  return st;
}

static te_iter *iter_word(step *p, te_stage *st, int i) {
  te_iter *it = sch_stage_find_iter(st, p->w[i]);
  if (!it) {
    ir_error(p->s->ctx, TE_ERR_NOT_FOUND, "te_schedule_replay: line %d: stage '%s' has no iter '%s'",
             p->line, st->name, p->w[i]);
  }
  return it;
}

/* A tensor by name: the output of a single-output stage of that (unique) stage name, else the
   one tensor of that name among multi-output stages and placeholders (two: ambiguous). */
static te_tensor *tensor_word(step *p, int i) {
  te_schedule *s = p->s;
  te_stage *st = sch_stage_by_name(s, p->w[i]);
  if (st && st->op->nout == 1) return st->op->outputs[0];
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
  if (!found) bad(p, TE_ERR_NOT_FOUND, "no tensor named", p->w[i]);
  return found;
}

static int scope_word(const char *w) {
  static const char *const names[] = {"global", "local", "shared"};
  for (int k = 0; k < 3; k++)
    if (!strcmp(w, names[k])) return k;
  return -1;
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

static te_status need(step *p, int n, bool exact) {
  if (exact ? p->n != n : p->n < n)
    return ir_error(p->s->ctx, TE_ERR_PARSE, "te_schedule_replay: line %d: '%s' takes %s%d words (got %d)",
                    p->line, p->w[0], exact ? "" : "at least ", n - 1, p->n - 1);
  return TE_OK;
}

static int tag_word(const char *w) {
  for (int t = TE_BLOCK_X; t <= TE_THREAD_Z; t++)
    if (strcmp(w, sch_thread_tag_name((te_thread_tag)t)) == 0) return t;
  return -1;
}

static te_status run_step(step *p) {
  const char *verb = p->w[0];
  te_stage *st = NULL;
  te_iter *a = NULL, *b = NULL;
  int64_t x = 0, y = 0;
  te_status s;
#define NEED(n, exact) \
  if ((s = need(p, (n), (exact))) != TE_OK) return s
#define STAGE(i) \
  if (!(st = stage_word(p, (i)))) return TE_ERR_NOT_FOUND
#define ITER(v, i) \
  if (!((v) = iter_word(p, st, (i)))) return TE_ERR_NOT_FOUND
#define INT(v, i) \
  if (!int_word(p, (i), &(v))) return TE_ERR_PARSE

  if (!strcmp(verb, "split") || !strcmp(verb, "split_nparts")) {
    NEED(4, true); STAGE(1); ITER(a, 2); INT(x, 3);
    return verb[5] ? te_split_nparts(st, a, x, NULL, NULL) : te_split(st, a, x, NULL, NULL);
  }
  if (!strcmp(verb, "tile")) {
    NEED(6, true); STAGE(1); ITER(a, 2); ITER(b, 3); INT(x, 4); INT(y, 5);
    return te_tile(st, a, b, x, y, NULL, NULL, NULL, NULL);
  }
  if (!strcmp(verb, "fuse")) {
    NEED(4, true); STAGE(1); ITER(a, 2); ITER(b, 3);
    return te_fuse(st, a, b, NULL);
  }
  if (!strcmp(verb, "reorder")) {
    NEED(3, false); STAGE(1);
    te_iter *order[MAX_WORDS];
    for (int i = 2; i < p->n; i++) ITER(order[i - 2], i);
    return te_reorder(st, p->n - 2, order);
  }
  if (!strcmp(verb, "reorder_storage")) {
    NEED(3, false); STAGE(1);
    te_iter *dims[MAX_WORDS];
    for (int i = 2; i < p->n; i++) ITER(dims[i - 2], i);
    return te_reorder_storage(st, p->n - 2, dims);
  }
  if (!strcmp(verb, "vectorize") || !strcmp(verb, "unroll") || !strcmp(verb, "parallel")) {
    NEED(3, true); STAGE(1); ITER(a, 2);
    return verb[0] == 'v' ? te_vectorize(st, a) : verb[0] == 'u' ? te_unroll(st, a) : te_parallel(st, a);
  }
  if (!strcmp(verb, "bind")) {
    NEED(4, true); STAGE(1); ITER(a, 2);
    int tag = tag_word(p->w[3]);
    if (tag < 0) return bad(p, TE_ERR_PARSE, "unknown thread tag", p->w[3]);
    return te_bind(st, a, (te_thread_tag)tag);
  }
  if (!strcmp(verb, "compute_inline") || !strcmp(verb, "compute_root")) {
    NEED(2, true); STAGE(1);
    return verb[8] == 'i' ? te_compute_inline(st) : te_compute_root(st);
  }
  if (!strcmp(verb, "compute_at")) {
    NEED(4, true); STAGE(1);
    te_stage *prod = st;
    STAGE(2); ITER(a, 3);
    return te_compute_at(prod, st, a);
  }
  if (!strcmp(verb, "cache_read") || !strcmp(verb, "cache_write")) {
    bool rd = verb[6] == 'r';
    NEED(rd ? 4 : 3, !rd);
    te_tensor *t = tensor_word(p, 1);
    if (!t) return TE_ERR_NOT_FOUND;
    int sc = scope_word(p->w[2]);
    if (sc < 0) return bad(p, TE_ERR_PARSE, "unknown scope", p->w[2]);
    if (!rd) return te_cache_write(p->s, t, (te_scope)sc, NULL);
    te_stage *readers[MAX_WORDS];
    for (int i = 3; i < p->n; i++) {
      STAGE(i);
      readers[i - 3] = st;
    }
    return te_cache_read(p->s, t, (te_scope)sc, p->n - 3, readers, NULL);
  }
  if (!strcmp(verb, "rfactor")) {
    NEED(4, true);
    te_tensor *t = tensor_word(p, 1);
    if (!t) return TE_ERR_NOT_FOUND;
    st = sch_stage_of_tensor(p->s, t);
    if (!st) return bad(p, TE_ERR_NOT_FOUND, "no stage computes", p->w[1]);
    ITER(a, 2); INT(x, 3);
    if (x < 0 || x > INT_MAX) return bad(p, TE_ERR_PARSE, "axis out of range:", p->w[3]);
    return te_rfactor(p->s, t, a, (int)x, NULL);
  }
  if (!strcmp(verb, "set_tail")) {
    NEED(4, true); STAGE(1); ITER(a, 2);
    static const char *const tails[] = {"guard", "shift_inwards", "round_up"};
    for (int t = 0; t < 3; t++)
      if (!strcmp(p->w[3], tails[t])) return te_set_tail(st, a, (te_tail)t);
    return bad(p, TE_ERR_PARSE, "unknown tail strategy", p->w[3]);
  }
  if (!strcmp(verb, "pragma")) {
    NEED(5, true); STAGE(1); ITER(a, 2); INT(x, 4);
    return te_pragma(st, a, p->w[3], x);
  }
  return bad(p, TE_ERR_PARSE, "unknown step", verb);
#undef NEED
#undef STAGE
#undef ITER
#undef INT
}

te_status te_schedule_replay(te_schedule *s, const char *trace) {
  if (!s) return TE_ERR_INVALID_ARG;
  if (!trace) return ir_error(s->ctx, TE_ERR_INVALID_ARG, "te_schedule_replay: trace is NULL");
  char *text = ir_strdup(s->ctx, trace);
  if (!text) return TE_ERR_NOMEM;
  step p = {s, 0, 0, {0}};
  for (char *line = text, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    p.line++;
    p.n = 0;
    for (char *c = line; *c;) { /* split on blanks in place (strtok is not thread-safe) */
      while (*c == ' ' || *c == '\t' || *c == '\r') *c++ = '\0';
      if (!*c) break;
      if (p.n == MAX_WORDS) return bad(&p, TE_ERR_PARSE, "too many words after", c);
      p.w[p.n++] = c;
      while (*c && *c != ' ' && *c != '\t' && *c != '\r') c++;
    }
    if (p.n == 0 || p.w[0][0] == '#') continue;
    te_status st = run_step(&p);
    if (st != TE_OK) return st;
  }
  return TE_OK;
}
