/* show_c.c — a schedule trace as a C program of te_* calls (`te-tune show --as-c`).
 *
 * Each step of the trace (docs/schedule-trace.md) becomes the call of its primitive, with the
 * step as a comment above it. Stages are found from tensors (te_stage_of), tensors by name: the
 * workload's variables, te_op_stage for an operator's intermediate stages ("conv2d_pad"), and
 * the variables that cache_read, cache_write and rfactor fill. Iterators are found by name
 * among the stage's leaf loops (the generated helper it()), which is how trace replay finds
 * them too, so the program makes the same schedule: `prog --trace` prints the logged trace.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"
#include "schedule/trace.h"

enum { MAX_WORDS = 72, MAX_MADE = 32 };

typedef struct gen {
  ir_str out;
  const char *const *names;
  int nnames;
  const char *out_name;
  char made[MAX_MADE][96];
  int nmade;
  char *err;
  size_t errsize;
  int line;
} gen;

static bool fail(gen *g, const char *what, const char *word) {
  snprintf(g->err, g->errsize, "trace line %d: %s '%s'", g->line, what, word);
  return false;
}

/* The C expression of the tensor called name (static buffer, valid until the next call). */
static const char *tensor_c(gen *g, const char *name) {
  static char buf[160];
  if (!strcmp(name, g->out_name))
    return "out";
  for (int i = 0; i < g->nnames; i++)
    if (!strcmp(name, g->names[i]))
      return snprintf(buf, sizeof buf, "t_%s", name), buf;
  for (int i = 0; i < g->nmade; i++)
    if (!strcmp(name, g->made[i]))
      return snprintf(buf, sizeof buf, "t_%s", name), buf;
  size_t n = strlen(g->out_name);
  if (!strncmp(name, g->out_name, n) && name[n] == '_' && name[n + 1])
    return snprintf(buf, sizeof buf, "te_op_stage(out, \"%s\")", name + n + 1), buf;
  return NULL;
}

static bool stage_c(gen *g, const char *name, char *buf, size_t size) {
  const char *t = tensor_c(g, name);
  if (!t)
    return fail(g, "no tensor for stage", name);
  snprintf(buf, size, "STAGE(%s)", t);
  return true;
}

static bool made_tensor(gen *g, const char *name) {
  if (g->nmade >= MAX_MADE)
    return fail(g, "too many new stages at", name);
  snprintf(g->made[g->nmade++], sizeof g->made[0], "%s", name);
  return true;
}

static bool is_integer(const char *w) {
  char *end;
  (void)strtoll(w, &end, 10);
  return *w && !*end;
}

/* One word of kind (steps.def) as a C argument. cur is the STAGE(...) of the stage named last,
   which I and A words belong to; count is the number of words of a list (A: the stage's axes). */
static bool word_c(gen *g, char kind, const char *w, char *cur, size_t cursize, int count) {
  ir_str *o = &g->out;
  const ir_enum_words *words = sch_kind_enum(kind);
  switch (kind) {
  case 'S':
    if (!stage_c(g, w, cur, cursize))
      return false;
    ir_str_puts(o, cur);
    return true;
  case 'T': {
    const char *t = tensor_c(g, w);
    if (!t)
      return fail(g, "unknown tensor", w);
    snprintf(cur, cursize, "STAGE(%s)", t);
    ir_str_puts(o, t);
    return true;
  }
  case 'I':
    ir_str_printf(o, "it(%s, \"%s\")", cur, w);
    return true;
  case 'A':
    ir_str_printf(o, "axis(%s, %d, \"%s\")", cur, count, w);
    return true;
  case 'N':
  case 'P':
    if (!is_integer(w))
      return fail(g, "expected an integer, got", w);
    ir_str_puts(o, w);
    return true;
  case 'K':
    if (strpbrk(w, "\"\\"))
      return fail(g, "bad pragma key", w);
    ir_str_printf(o, "\"%s\"", w);
    return true;
  default: {
    int v = ir_enum_value(words, w);
    if (v < 0) {
      char what[40];
      snprintf(what, sizeof what, "unknown %s", words->what);
      return fail(g, what, w);
    }
    ir_str_puts(o, ir_enum_enumerator(words, v));
    return true;
  }
  }
}

/* The words from w[first] on as a list: `count, (te_X *const[]){...}`. */
static bool list_c(gen *g, char kind, char **w, int first, int n, char *cur, size_t cursize) {
  ir_str *o = &g->out;
  char stage[200];
  ir_str_printf(o, "%d, (%s *const[]){", n - first, kind == 'S' ? "te_stage" : "te_iter");
  for (int i = first; i < n; i++) {
    if (i > first)
      ir_str_puts(o, ", ");
    /* a list of stages does not change the stage later words belong to */
    bool ok = kind == 'S' ? word_c(g, kind, w[i], stage, sizeof stage, n - first)
                          : word_c(g, kind, w[i], cur, cursize, n - first);
    if (!ok)
      return false;
  }
  ir_str_puts(o, "}");
  return true;
}

/* A step as the call of its primitive te_<verb>, its words rendered by their kinds: the table
   of lib/schedule/steps.def, which replay reads too, so the two cannot disagree. */
static bool step_c(gen *g, char **w, int n) {
  if (!strcmp(w[0], "specialize") || !strcmp(w[0], "}")) /* the condition would need C too */
    return fail(g, "--as-c does not render te_specialize blocks yet; at", w[0]);
  int id = sch_step_find(w[0]);
  if (id < 0)
    return fail(g, "unknown step", w[0]);
  const sch_step_info *info = &sch_steps[id];
  bool list;
  int nk = sch_step_nkinds(info, &list);
  if (list ? n < nk + 1 : n != nk + 1)
    return fail(g, "malformed step", w[0]);
  ir_str *o = &g->out;
  char cur[200] = "";
  ir_str_printf(o, "  TRY(te_%s(", info->verb);
  if (info->words[0] == 'T') /* the steps on tensors are primitives of the schedule */
    ir_str_puts(o, "s, ");
  for (int k = 0; k < nk; k++) {
    if (k > 0)
      ir_str_puts(o, ", ");
    bool ok = list && k == nk - 1 ? list_c(g, info->words[k], w, k + 1, n, cur, sizeof cur)
                                  : word_c(g, info->words[k], w[k + 1], cur, sizeof cur, 1);
    if (!ok)
      return false;
  }
  char made[96] = "";
  if (info->adds)
    snprintf(made, sizeof made, info->adds, w[1], n > 2 ? w[2] : "");
  if (info->outs)
    ir_str_printf(o, ", %s", info->outs);
  else if (info->adds)
    ir_str_printf(o, ", &t_%s", made);
  ir_str_puts(o, "));\n");
  return !info->adds || made_tensor(g, made);
}

static bool step(gen *g, char *line) {
  char *w[MAX_WORDS], *save = NULL;
  int n = 0;
  for (char *t = strtok_r(line, " ", &save); t && n < MAX_WORDS; t = strtok_r(NULL, " ", &save))
    w[n++] = t;
  if (n == 0 || w[0][0] == '#')
    return true;
  ir_str_printf(&g->out, "  /*");
  for (int i = 0; i < n; i++)
    ir_str_printf(&g->out, " %s", w[i]);
  ir_str_puts(&g->out, " */\n");
  return step_c(g, w, n);
}

static const char prologue[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "\n"
    "#include <te/te.h>\n"
    "\n"
    "/* The leaf loop of stage st called name; NULL (reported by the call it is passed to) when\n"
    "   there is none. Trace replay finds iterators the same way. */\n"
    "static te_iter *it(te_stage *st, const char *name) {\n"
    "  for (int k = 0; st && k < te_leaf_count(st); k++)\n"
    "    if (strcmp(te_iter_name(te_leaf(st, k)), name) == 0)\n"
    "      return te_leaf(st, k);\n"
    "  return NULL;\n"
    "}\n"
    "\n"
    "/* The data axis of stage st called name (one of the first n), or the leaf of that name (a\n"
    "   part of a split data axis: a blocked storage layout), or NULL. */\n"
    "static inline te_iter *axis(te_stage *st, int n, const char *name) {\n"
    "  te_iter *leaf = it(st, name);\n"
    "  for (int k = 0; st && !leaf && k < n; k++)\n"
    "    if (te_axis(st, k) && strcmp(te_iter_name(te_axis(st, k)), name) == 0)\n"
    "      return te_axis(st, k);\n"
    "  return leaf;\n"
    "}\n"
    "\n"
    "#define STAGE(t) te_stage_of(s, (t))\n"
    "#define TRY(call)                                                                          "
    "\\\n"
    "  do {                                                                                     "
    "\\\n"
    "    if ((call) != TE_OK)                                                                   "
    "\\\n"
    "      goto fail;                                                                           "
    "\\\n"
    "  } while (0)\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  int print_trace = argc > 1 && strcmp(argv[1], \"--trace\") == 0;\n"
    "  te_ctx *ctx = te_ctx_new();\n"
    "  te_schedule *s = NULL;\n"
    "  te_iter *o, *i, *o2, *i2, *f; /* results of split, tile and fuse (looked up again by name) "
    "*/\n";

static const char epilogue[] =
    "  if (print_trace) {\n"
    "    char *trace = te_schedule_trace(s);\n"
    "    fputs(trace ? trace : \"\", stdout);\n"
    "    te_free(trace);\n"
    "  } else {\n"
    "    char *ir = te_lower_text(s, nargs, args, 0, NULL);\n"
    "    if (!ir)\n"
    "      goto fail;\n"
    "    fputs(ir, stdout);\n"
    "    te_free(ir);\n"
    "    te_target *target = te_target_parse(ctx, TARGET);\n"
    "    te_module *mod = NULL;\n"
    "    TRY(target ? te_build(s, \"kernel\", nargs, args, 0, NULL, target, &mod) : "
    "TE_ERR_TARGET);\n"
    "  }\n"
    "  (void)o, (void)i, (void)o2, (void)i2, (void)f;\n"
    "  te_ctx_free(ctx);\n"
    "  return 0;\n"
    "fail:\n"
    "  fprintf(stderr, \"schedule failed: %s (%s)\\n\", te_last_error(ctx),\n"
    "          te_status_str(te_last_status(ctx)));\n"
    "  te_ctx_free(ctx);\n"
    "  return 1;\n"
    "}\n";

char *at_trace_to_c(const char *trace, const char *workload_c, const char *const names[],
                    int nnames, const char *out_name, const char *target, const char *comment,
                    char *err, size_t errsize) {
  gen g = {.names = names, .nnames = nnames, .out_name = out_name, .err = err, .errsize = errsize};
  char *copy = ir_strdup_malloc(NULL, trace ? trace : ""), *save = NULL;
  bool ok = copy != NULL;
  for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; ok && line;
       line = strtok_r(NULL, "\n", &save)) {
    g.line++;
    ok = step(&g, line);
  }
  free(copy);
  if (!ok) {
    ir_str_free(&g.out);
    return NULL;
  }
  ir_str o = {0};
  ir_str_puts(&o, "/* ");
  for (const char *c = comment ? comment : ""; *c; c++)
    *c == '\n' ? ir_str_puts(&o, "\n * ")
               : ir_str_printf(&o, "%c", *c == '*' && c[1] == '/' ? '+' : *c);
  ir_str_puts(
      &o, "\n *\n"
          " * Generated by `te-tune show --as-c`: the tuned schedule as te_* calls, one call a\n"
          " * step of the logged trace (the step is the comment above it), applied to the\n"
          " * workload built with ops.h.\n"
          " *   build: cc -std=c11 prog.c -I<te>/include -L<te>/lib -lte -o prog\n"
          " *   run:   ./prog          prints the lowered IR, then builds the kernel\n"
          " *          ./prog --trace  prints the schedule's trace (the logged one)\n"
          " */\n");
  ir_str_printf(&o, "#define TARGET \"%s\"\n", target ? target : "llvm");
  ir_str_puts(&o, prologue);
  for (int k = 0; k < g.nmade; k++)
    ir_str_printf(&o, "  te_tensor *t_%s = NULL;\n", g.made[k]);
  ir_str_puts(&o, "\n  /* the workload */\n");
  ir_str_puts(&o, workload_c);
  ir_str_puts(&o, "  s = te_schedule_new(ctx, 1, &out);\n  if (!s)\n    goto fail;\n\n"
                  "  /* the schedule */\n");
  ir_str_puts(&o, g.out.buf ? g.out.buf : "");
  ir_str_puts(&o, "\n");
  ir_str_puts(&o, epilogue);
  ir_str_free(&g.out);
  return ir_str_take(&o);
}
