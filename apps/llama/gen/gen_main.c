/* gen_main.c — te-llama's kernel generator (te_add_kernel_library runs it at build time):
 *
 *   tl_gen <dir/name> "<target string>" [<kernel>...] [--tuning-log LOG [--no-guard]] [SHAPE]
 *   tl_gen --export-tasks FILE [--target T] [<kernel>...] [SHAPE]
 *   SHAPE: --dim D --hidden H --layers L --tokens T   (defaults: stories15M's 288 768 6, 32)
 *
 * builds the named kernels (all of them when none is named) for the target and writes them
 * into dir/libname.a and dir/name.h (and dir/name.s, to read) with te_modules_save.
 * With --tuning-log, each dense kernel (gen_tasks.c) takes the log's best schedule for the
 * model SHAPE (the one the tasks were exported at) when it replays on the symbolic kernel and
 * the timing guard (gen_guard.c; --no-guard: untimed) finds it clearly faster than the hand
 * schedule, which every other kernel keeps. A log with none of them at SHAPE (tuned for another
 * shape or other kernels) is refused; one with no record for this target at all (tuned on
 * another CPU) leaves the hand schedules, with a note.
 * --export-tasks writes the named dense kernels (all twelve when none is named) at SHAPE as
 * `te-tune tune-tasks` task lines (docs/tuning-tasks.md) and compiles nothing.
 * Exit status 0 on success, 1 with te's message on stderr, 2 for a wrong command line. */
#include "gen.h"

#include "../../common/tune_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  tl_gen_fn build;
} kernels[] = {
    {"tl_matvec", tl_gen_matvec},
    {"tl_matvec_add", tl_gen_matvec_add},
    {"tl_matvec_swiglu", tl_gen_matvec_swiglu},
    {"tl_matmul", tl_gen_matmul},
    {"tl_matmul_add", tl_gen_matmul_add},
    {"tl_matmul_swiglu", tl_gen_matmul_swiglu},
    {"tl_bf16_matvec", tl_gen_bf16_matvec},
    {"tl_bf16_matvec_add", tl_gen_bf16_matvec_add},
    {"tl_bf16_matvec_swiglu", tl_gen_bf16_matvec_swiglu},
    {"tl_bf16_matmul", tl_gen_bf16_matmul},
    {"tl_bf16_matmul_add", tl_gen_bf16_matmul_add},
    {"tl_bf16_matmul_swiglu", tl_gen_bf16_matmul_swiglu},
    {"tl_rmsnorm", tl_gen_rmsnorm},
    {"tl_rope", tl_gen_rope},
    {"tl_attention", tl_gen_attention},
    {"tl_quantize_g64", tl_gen_quantize_g64},
    {"tl_quantize_g32", tl_gen_quantize_g32},
    {"tl_quantize_g16", tl_gen_quantize_g16},
    {"tl_quantize_g8", tl_gen_quantize_g8},
    {"tl_q8_matmul_g64", tl_gen_q8_matmul_g64},
    {"tl_q8_matmul_g32", tl_gen_q8_matmul_g32},
    {"tl_q8_matmul_g16", tl_gen_q8_matmul_g16},
    {"tl_q8_matmul_g8", tl_gen_q8_matmul_g8},
    {"tl_q8_matvec_g64", tl_gen_q8_matvec_g64},
    {"tl_q8_matvec_g32", tl_gen_q8_matvec_g32},
    {"tl_q8_matvec_g16", tl_gen_q8_matvec_g16},
    {"tl_q8_matvec_g8", tl_gen_q8_matvec_g8},
    {"tl_q8_matmul_add_g64", tl_gen_q8_matmul_add_g64},
    {"tl_q8_matmul_add_g32", tl_gen_q8_matmul_add_g32},
    {"tl_q8_matmul_add_g16", tl_gen_q8_matmul_add_g16},
    {"tl_q8_matmul_add_g8", tl_gen_q8_matmul_add_g8},
    {"tl_q8_matvec_add_g64", tl_gen_q8_matvec_add_g64},
    {"tl_q8_matvec_add_g32", tl_gen_q8_matvec_add_g32},
    {"tl_q8_matvec_add_g16", tl_gen_q8_matvec_add_g16},
    {"tl_q8_matvec_add_g8", tl_gen_q8_matvec_add_g8},
    {"tl_quantize_swiglu_g64", tl_gen_quantize_swiglu_g64},
    {"tl_quantize_swiglu_g32", tl_gen_quantize_swiglu_g32},
    {"tl_quantize_swiglu_g16", tl_gen_quantize_swiglu_g16},
    {"tl_quantize_swiglu_g8", tl_gen_quantize_swiglu_g8},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

static int find(const char *name) {
  for (int k = 0; k < NKERNELS; k++)
    if (!strcmp(name, kernels[k].name))
      return k;
  return -1;
}

typedef struct args {
  const char *prefix, *target, *tasks, *log;
  const char *wanted[NKERNELS];
  int nwanted;
  tl_shape shape;
} args;

/* "--dim N" etc.: a count from 1 to 1 << 20. */
static bool count_arg(const char *opt, const char *v, int64_t *out) {
  char *end;
  long long n = strtoll(v, &end, 10);
  if (*v == '\0' || *end != '\0' || n < 1 || n > (1 << 20)) {
    fprintf(stderr, "tl_gen: %s wants a count from 1 to %d (got '%s')\n", opt, 1 << 20, v);
    return false;
  }
  *out = n;
  return true;
}

static bool parse_args(int argc, char **argv, args *a) {
  *a = (args){.shape = {288, 768, 6, 32}};
  int first = 1;
  if (argc >= 3 && strcmp(argv[1], "--export-tasks")) {
    a->prefix = argv[1], a->target = argv[2];
    first = 3;
  }
  for (int i = first; i < argc; i++) {
    const char *opt = argv[i];
    if (!strcmp(opt, "--no-guard")) {
      tl_tune.no_guard = true;
      continue;
    }
    if (strncmp(opt, "--", 2)) {
      if (a->nwanted == NKERNELS) {
        fprintf(stderr, "tl_gen: too many kernels named\n");
        return false;
      }
      a->wanted[a->nwanted++] = opt;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "tl_gen: %s wants a value\n", opt);
      return false;
    }
    const char *v = argv[++i];
    bool ok = true;
    if (!strcmp(opt, "--export-tasks"))
      a->tasks = v;
    else if (!strcmp(opt, "--tuning-log"))
      a->log = v;
    else if (!strcmp(opt, "--target"))
      a->target = v;
    else if (!strcmp(opt, "--dim"))
      ok = count_arg(opt, v, &a->shape.dim);
    else if (!strcmp(opt, "--hidden"))
      ok = count_arg(opt, v, &a->shape.hidden);
    else if (!strcmp(opt, "--layers"))
      ok = count_arg(opt, v, &a->shape.layers);
    else if (!strcmp(opt, "--tokens"))
      ok = count_arg(opt, v, &a->shape.tokens);
    else {
      fprintf(stderr, "tl_gen: unknown option '%s'\n", opt);
      return false;
    }
    if (!ok)
      return false;
  }
  if (a->tasks ? a->prefix != NULL || a->log != NULL : a->prefix == NULL) {
    fprintf(stderr, "usage: tl_gen <dir/name> <target> [<kernel>...] [--tuning-log LOG "
                    "[--no-guard]] "
                    "[--dim D --hidden H --layers L --tokens T]\n"
                    "       tl_gen --export-tasks FILE [--target T] [<kernel>...] [--dim D "
                    "--hidden H --layers L --tokens T]\n");
    return false;
  }
  if (!a->target)
    a->target = "llvm";
  for (int w = 0; w < a->nwanted; w++)
    if (find(a->wanted[w]) < 0) {
      fprintf(stderr, "tl_gen: unknown kernel '%s'\n", a->wanted[w]);
      return false;
    }
  return true;
}

/* The kernels asked for: the named ones, else all (all tunable ones when exporting). */
static int kernel_list(const args *a, int ks[NKERNELS]) {
  int n = 0;
  if (a->nwanted)
    for (int w = 0; w < a->nwanted; w++)
      ks[n++] = find(a->wanted[w]);
  else
    for (int k = 0; k < NKERNELS; k++)
      if (!a->tasks || tl_tunable(kernels[k].name))
        ks[n++] = k;
  return n;
}

static int fail(te_ctx *ctx, const char *what) {
  fprintf(stderr, "tl_gen: %s: %s (%s)\n", what, te_last_error(ctx),
          te_status_str(te_last_status(ctx)));
  return 1;
}

static int export_tasks(te_ctx *ctx, te_target *t, const args *a) {
  int ks[NKERNELS], n = kernel_list(a, ks);
  for (int i = 0; i < n; i++)
    if (!tl_tunable(kernels[ks[i]].name)) {
      fprintf(stderr,
              "tl_gen: %s is not a tunable kernel (only the dense f32 and bf16 ones are; "
              "see gen_tasks.c)\n",
              kernels[ks[i]].name);
      return 2;
    }
  if (!(tl_tune.tasks = fopen(a->tasks, "w"))) {
    perror(a->tasks);
    return 1;
  }
  tl_tune.constant = true;
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    te_module *none;
    tl_tune.kernel = kernels[ks[i]].name;
    if (kernels[ks[i]].build(ctx, t, &none) != TE_OK)
      rc = fail(ctx, kernels[ks[i]].name);
  }
  if (fclose(tl_tune.tasks) != 0 && rc == 0) {
    perror(a->tasks);
    rc = 1;
  }
  return rc;
}

/* Builds kernels[k] into *out: first at the model shape to find its schedule in the log. */
static te_status build_kernel(te_ctx *ctx, te_target *t, const args *a, int k, te_module **out) {
  tl_tune.kernel = kernels[k].name;
  if (a->log && tl_tunable(kernels[k].name)) {
    te_module *none;
    tl_tune.constant = true;
    te_status st = kernels[k].build(ctx, t, &none);
    tl_tune.constant = false;
    if (st != TE_OK)
      return st;
  }
  return kernels[k].build(ctx, t, out);
}

static int generate(te_ctx *ctx, te_target *t, const args *a) {
  int ks[NKERNELS], n = kernel_list(a, ks), ntunable = 0, rc = 0;
  te_module *mods[NKERNELS];
  int built = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    ntunable += tl_tunable(kernels[ks[i]].name);
    if (build_kernel(ctx, t, a, ks[i], &mods[built]) != TE_OK)
      rc = fail(ctx, kernels[ks[i]].name);
    else
      built++;
  }
  if (rc == 0 && a->log && ntunable > 0 && tl_tune.found == 0 &&
      !tg_log_has_target(a->log, te_target_str(t))) {
    fprintf(stderr,
            "tl_gen: the tuning log %s holds no schedule for this target (%s): it was tuned on "
            "another CPU; hand schedules\n",
            a->log, te_target_short_str(t));
  } else if (rc == 0 && a->log && ntunable > 0 && tl_tune.found == 0) {
    fprintf(stderr,
            "tl_gen: the tuning log %s has no schedule for any of these kernels at dim %lld, "
            "hidden %lld, tokens %lld for this target: it was tuned for another model shape or "
            "other kernels (export the tasks at this shape and tune them, or pass the shape the "
            "log was tuned at)\n",
            a->log, (long long)a->shape.dim, (long long)a->shape.hidden,
            (long long)a->shape.tokens);
    rc = 1;
  }
  if (rc == 0 && a->log)
    fprintf(stderr,
            "tl_gen: %d of %d dense kernels from the tuning log %s (%d found there: %d where "
            "its best is the hand schedule, %d not fitting the symbolic kernel, %d slower than "
            "the hand schedule or within the noise of it)\n",
            tl_tune.tuned, ntunable, a->log, tl_tune.found, tl_tune.same,
            tl_tune.found - tl_tune.same - tl_tune.replayed, tl_tune.kept);
  if (rc == 0 && te_modules_save(ctx, built, mods, a->prefix,
                                 TE_SAVE_STATIC_LIB | TE_SAVE_HEADER | TE_SAVE_ASM) != TE_OK)
    rc = fail(ctx, "saving the library");
  return rc;
}

int main(int argc, char **argv) {
  args a;
  if (!parse_args(argc, argv, &a))
    return 2;
  te_ctx *ctx = te_ctx_new();
  if (!ctx)
    return 1;
  te_target *t = te_target_parse(ctx, a.target);
  if (!t) {
    fprintf(stderr, "tl_gen: target '%s': %s\n", a.target, te_last_error(ctx));
    te_ctx_free(ctx);
    return 1;
  }
  tl_tune.ctx = ctx;
  tl_tune.shape = a.shape;
  tl_tune.log = a.log;
  int rc = a.tasks ? export_tasks(ctx, t, &a) : generate(ctx, t, &a);
  free(tl_tune.trace);
  te_ctx_free(ctx);
  return rc;
}
