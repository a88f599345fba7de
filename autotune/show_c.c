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

static const char *enum_of(const char *word, const char *const table[][2]) {
  for (int i = 0; table[i][0]; i++)
    if (!strcmp(word, table[i][0]))
      return table[i][1];
  return NULL;
}

static const char *const scopes[][2] = {{"global", "TE_SCOPE_GLOBAL"}, {"local", "TE_SCOPE_LOCAL"},
                                        {"shared", "TE_SCOPE_SHARED"}, {NULL, NULL}};
static const char *const tails[][2] = {{"guard", "TE_TAIL_GUARD"},
                                       {"shift_inwards", "TE_TAIL_SHIFT_INWARDS"},
                                       {"round_up", "TE_TAIL_ROUND_UP"}, {NULL, NULL}};
static const char *const tags[][2] = {
    {"blockIdx.x", "TE_BLOCK_X"},   {"blockIdx.y", "TE_BLOCK_Y"},   {"blockIdx.z", "TE_BLOCK_Z"},
    {"threadIdx.x", "TE_THREAD_X"}, {"threadIdx.y", "TE_THREAD_Y"}, {"threadIdx.z", "TE_THREAD_Z"},
    {NULL, NULL}};

static bool made_tensor(gen *g, const char *name) {
  if (g->nmade >= MAX_MADE)
    return fail(g, "too many new stages at", name);
  snprintf(g->made[g->nmade++], sizeof g->made[0], "%s", name);
  return true;
}

/* Steps that take a tensor (cache_read, cache_write, rfactor). */
static bool tensor_step(gen *g, char **w, int n) {
  ir_str *o = &g->out;
  const char *t = tensor_c(g, w[1]);
  char made[96], st[200];
  if (!t)
    return fail(g, "unknown tensor", w[1]);
  char tc[160];
  snprintf(tc, sizeof tc, "%s", t);
  if (!strcmp(w[0], "rfactor")) {
    if (n != 4 || !stage_c(g, w[1], st, sizeof st))
      return n == 4 ? false : fail(g, "malformed step", w[0]);
    snprintf(made, sizeof made, "%s_rf", w[1]);
    ir_str_printf(o, "  TRY(te_rfactor(s, %s, it(%s, \"%s\"), %s, &t_%s));\n", tc, st, w[2], w[3],
                  made);
    return made_tensor(g, made);
  }
  const char *scope = n >= 3 ? enum_of(w[2], scopes) : NULL;
  if (!scope)
    return fail(g, "bad scope in", w[0]);
  snprintf(made, sizeof made, "%s_%s", w[1], w[2]);
  if (!strcmp(w[0], "cache_write")) {
    ir_str_printf(o, "  TRY(te_cache_write(s, %s, %s, &t_%s));\n", tc, scope, made);
    return made_tensor(g, made);
  }
  ir_str_printf(o, "  TRY(te_cache_read(s, %s, %s, %d, (te_stage *const[]){", tc, scope, n - 3);
  for (int i = 3; i < n; i++) {
    if (!stage_c(g, w[i], st, sizeof st))
      return false;
    ir_str_printf(o, "%s%s", i > 3 ? ", " : "", st);
  }
  ir_str_printf(o, "}, &t_%s));\n", made);
  return made_tensor(g, made);
}

/* Steps on one stage: primitive name, stage, iterators, numbers. */
static bool stage_step(gen *g, char **w, int n) {
  ir_str *o = &g->out;
  char st[200], st2[200];
  if (n < 2 || !stage_c(g, w[1], st, sizeof st))
    return n < 2 ? fail(g, "malformed step", w[0]) : false;
  const char *k = w[0];
#define IT(i) "it(%s, \"%s\")"
  if (!strcmp(k, "split") || !strcmp(k, "split_nparts"))
    return n == 4 ? ir_str_printf(o, "  TRY(te_%s(%s, " IT() ", %s, &o, &i));\n", k, st, st, w[2], w[3]), true
                  : fail(g, "malformed step", k);
  if (!strcmp(k, "tile"))
    return n == 6 ? ir_str_printf(o, "  TRY(te_tile(%s, " IT() ", " IT() ", %s, %s, &o, &o2, &i, &i2));\n", st,
                                  st, w[2], st, w[3], w[4], w[5]), true
                  : fail(g, "malformed step", k);
  if (!strcmp(k, "fuse"))
    return n == 4 ? ir_str_printf(o, "  TRY(te_fuse(%s, " IT() ", " IT() ", &f));\n", st, st, w[2], st, w[3]), true
                  : fail(g, "malformed step", k);
  if (!strcmp(k, "vectorize") || !strcmp(k, "unroll") || !strcmp(k, "parallel"))
    return n == 3 ? ir_str_printf(o, "  TRY(te_%s(%s, " IT() "));\n", k, st, st, w[2]), true
                  : fail(g, "malformed step", k);
  if (!strcmp(k, "reorder")) {
    ir_str_printf(o, "  TRY(te_reorder(%s, %d, (te_iter *const[]){", st, n - 2);
    for (int i = 2; i < n; i++)
      ir_str_printf(o, "%s" IT(), i > 2 ? ", " : "", st, w[i]);
    ir_str_puts(o, "}));\n");
    return true;
  }
  if (!strcmp(k, "reorder_storage")) { /* lists every data axis of the stage: n - 2 of them */
    ir_str_printf(o, "  TRY(te_reorder_storage(%s, %d, (te_iter *const[]){", st, n - 2);
    for (int i = 2; i < n; i++)
      ir_str_printf(o, "%saxis(%s, %d, \"%s\")", i > 2 ? ", " : "", st, n - 2, w[i]);
    ir_str_puts(o, "}));\n");
    return true;
  }
  if (!strcmp(k, "compute_inline") || !strcmp(k, "compute_root"))
    return ir_str_printf(o, "  TRY(te_%s(%s));\n", k, st), true;
  if (!strcmp(k, "compute_at"))
    return n == 4 && stage_c(g, w[2], st2, sizeof st2)
               ? ir_str_printf(o, "  TRY(te_compute_at(%s, %s, " IT() "));\n", st, st2, st2, w[3]), true
               : (n == 4 ? false : fail(g, "malformed step", k));
  const char *e;
  if (!strcmp(k, "bind"))
    return n == 4 && (e = enum_of(w[3], tags))
               ? ir_str_printf(o, "  TRY(te_bind(%s, " IT() ", %s));\n", st, st, w[2], e), true
               : fail(g, "malformed step", k);
  if (!strcmp(k, "set_tail"))
    return n == 4 && (e = enum_of(w[3], tails))
               ? ir_str_printf(o, "  TRY(te_set_tail(%s, " IT() ", %s));\n", st, st, w[2], e), true
               : fail(g, "malformed step", k);
  if (!strcmp(k, "pragma"))
    return n == 5 ? ir_str_printf(o, "  TRY(te_pragma(%s, " IT() ", \"%s\", %s));\n", st, st, w[2], w[3], w[4]), true
                  : fail(g, "malformed step", k);
#undef IT
  return fail(g, "unknown step", k);
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
  if (!strcmp(w[0], "cache_read") || !strcmp(w[0], "cache_write") || !strcmp(w[0], "rfactor"))
    return tensor_step(g, w, n);
  return stage_step(g, w, n);
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
    "/* The data axis of stage st (one of its ndim) called name, or NULL. */\n"
    "static inline te_iter *axis(te_stage *st, int ndim, const char *name) {\n"
    "  for (int k = 0; st && k < ndim; k++)\n"
    "    if (strcmp(te_iter_name(te_axis(st, k)), name) == 0)\n"
    "      return te_axis(st, k);\n"
    "  return NULL;\n"
    "}\n"
    "\n"
    "#define STAGE(t) te_stage_of(s, (t))\n"
    "#define TRY(call)                                                                          \\\n"
    "  do {                                                                                     \\\n"
    "    if ((call) != TE_OK)                                                                   \\\n"
    "      goto fail;                                                                           \\\n"
    "  } while (0)\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  int print_trace = argc > 1 && strcmp(argv[1], \"--trace\") == 0;\n"
    "  te_ctx *ctx = te_ctx_new();\n"
    "  te_schedule *s = NULL;\n"
    "  te_iter *o, *i, *o2, *i2, *f; /* results of split, tile and fuse (looked up again by name) */\n";

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
    "    TRY(target ? te_build(s, \"kernel\", nargs, args, 0, NULL, target, &mod) : TE_ERR_TARGET);\n"
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
  char *copy = strdup(trace ? trace : ""), *save = NULL;
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
    *c == '\n' ? ir_str_puts(&o, "\n * ") : ir_str_printf(&o, "%c", *c == '*' && c[1] == '/' ? '+' : *c);
  ir_str_puts(&o, "\n *\n"
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
