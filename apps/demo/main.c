/* main.c — te-demo: what te is for, in one matmul and one screen.
 *
 *   1. the computation, C = A * B (n x n f32, n = 512), written once as a tensor expression;
 *   2. three schedules of it, each compiled for this CPU, checked against a plain loop on
 *      random non-zero inputs (C poisoned with NaN before each checked run) and timed beside
 *      OpenBLAS, in alternating rounds so that all share the machine's moods:
 *        the default schedule (the loops as written),
 *        the benchmark's hand schedule (bench/sgemm_schedule.c: packing, register tiles,
 *        threads), and the schedule te-tune finds in a short time budget (te_tune);
 *   3. the fastest te kernel saved as a static library and called from a small C program
 *      linked only with libte_runtime (library.c, use_kernel.c).
 *
 * Options (usage() below, te-demo --help): the size, te-tune's budget, the thread count (one on a
 * busy machine: machine_busy), where files go, a log to reuse instead of a search, --verbose.
 * Exit status 0 when every kernel ran and every check passed, 1 otherwise, 2 for bad usage.
 */
#define _DEFAULT_SOURCE /* getloadavg */
#include "demo.h"
#include "sgemm_schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct options {
  int n, threads;
  double budget_s;
  const char *out, *tuned; /* tuned: a log to take te-tune's schedule from, instead of a search */
  bool verbose;
} options;

/* A te kernel as a dm_run_fn. */
typedef struct te_kernel {
  te_ctx *ctx; /* the module's, which holds its errors */
  te_module *mod;
  dm_data *d;
} te_kernel;

static int run_te(void *user, char *msg, size_t msg_size) {
  te_kernel *k = user;
  DLTensor *args[3] = {&k->d->ta, &k->d->tb, &k->d->tc};
  if (te_module_call(k->mod, "matmul_f32", 3, args, 0, NULL) == TE_OK)
    return 0;
  snprintf(msg, msg_size, "%s", te_last_error(k->ctx));
  return 1;
}

static void die(te_ctx *ctx, const char *what) {
  fprintf(stderr, "te-demo: %s failed: %s (%s)\n", what, te_last_error(ctx),
          te_status_str(te_last_status(ctx)));
  exit(1);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: te-demo [--quick] [--size N] [--budget SECONDS] [--threads N] [--out DIR]\n"
          "               [--tuned LOG] [--verbose]\n"
          "  --quick       a short run (the test suite's): n = 256, 5 s of tuning\n"
          "  --size N      the matmul's n, 16..4096 (default 512)\n"
          "  --budget S    te-tune's time budget in seconds, >= 1 (default 30)\n"
          "  --threads N   threads of te and OpenBLAS (default: every core; one when the\n"
          "                machine is busy)\n"
          "  --out DIR     the tuning log, library and program go there (default %s)\n"
          "  --tuned LOG   te-tune's schedule from that log, without a search\n"
          "  --verbose     every schedule's trace and the whole target string\n"
          "exit status: 0 every check passed, 1 a kernel failed or was wrong, 2 usage error\n",
          TE_DEMO_OUT_DIR);
}

/* 0: run; 1: done (--help); 2: usage error. */
static int parse_args(int argc, char **argv, options *o) {
  *o = (options){512, 0, 30, TE_DEMO_OUT_DIR, NULL, false};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return usage(stdout), 1;
    if (!strcmp(a, "--quick"))
      o->n = 256, o->budget_s = 5;
    else if (!strcmp(a, "--verbose"))
      o->verbose = true;
    else if (!strcmp(a, "--size") && v && atoi(v) >= 16 && atoi(v) <= 4096)
      o->n = atoi(v), i++;
    else if (!strcmp(a, "--threads") && v && atoi(v) >= 1 && atoi(v) <= 1024)
      o->threads = atoi(v), i++;
    else if (!strcmp(a, "--budget") && v && atof(v) >= 1)
      o->budget_s = atof(v), i++;
    else if (!strcmp(a, "--out") && v)
      o->out = v, i++;
    else if (!strcmp(a, "--tuned") && v)
      o->tuned = v, i++;
    else {
      fprintf(stderr, "te-demo: bad option '%s'%s\n", a, v ? "" : " (or its value missing)");
      usage(stderr);
      return 2;
    }
  }
  return 0;
}

/* 1. The computation: A, B and C = A * B, named as te-tune's "matmul" operator names them
   (te_op_matmul), so the demo's tuning log is one `te-tune show` reads. */
static te_tensor *define_matmul(te_ctx *ctx, int n, te_tensor *args[3]) {
  te_expr *N = te_int(ctx, n);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), N);
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *C = te_compute(ctx, "matmul", 2, TE_EXPRS(N, N), TE_EXPRS(i, j),
                            TE_SUM(te_mul(TE_AT(A, i, k), TE_AT(B, k, j)), k));
  if (!C) /* errors are sticky: one check covers every call above */
    die(ctx, "defining the matmul");
  args[0] = A, args[1] = B, args[2] = C;
  return C;
}

static void print_indented(const char *text, const char *indent) {
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, "\n");
    printf("%s%.*s\n", indent, (int)len, p);
    p += len + (p[len] == '\n');
  }
}

static te_module *build(te_ctx *ctx, te_schedule *s, te_tensor *const args[3], te_target *target,
                        const char *what) {
  te_module *mod = NULL;
  if (!s || te_last_status(ctx) != TE_OK ||
      te_build(s, "matmul_f32", 3, args, 0, NULL, target, &mod) != TE_OK)
    die(ctx, what);
  return mod;
}

/* The hand schedule: its computation is the same product with two packing stages more (A and B
   copied into panels the register tiles read contiguously), so it has tensors of its own. */
static te_module *build_hand(te_ctx *ctx, int n, te_target *target, bool verbose) {
  te_tensor *args[3];
  sgemm_params p = sgemm_tiles(n, sysconf(_SC_LEVEL2_CACHE_SIZE), te_target_vector_bits(target));
  te_schedule *s = sgemm_define(ctx, &p, SGEMM_ALL_STEPS, args);
  te_module *mod = build(ctx, s, args, target, "the hand schedule");
  if (verbose) {
    char *trace = te_schedule_trace(s);
    printf("  the hand schedule's trace:\n");
    print_indented(trace ? trace : "", "    ");
    te_free(trace);
  }
  return mod;
}

typedef struct variant {
  const char *label;
  te_kernel k;
  dm_run_fn run;
  void *user;
  const char *skipped; /* why it is not timed (NULL: it is) */
  dm_timing t;
} variant;

static void print_row(const variant *v, const variant *blas) {
  if (v->skipped) {
    printf("  %-24s  (%s)\n", v->label, v->skipped);
    return;
  }
  if (!v->t.ok) {
    printf("  %-24s  FAILED: %s\n", v->label, v->t.msg);
    return;
  }
  double n = v->k.d->n, gflops = 2.0 * n * n * n / v->t.fastest_s * 1e-9;
  char vs[32] = "";
  if (blas && !blas->skipped && blas->t.ok)
    snprintf(vs, sizeof vs, "%5.0f%%", 100.0 * blas->t.fastest_s / v->t.fastest_s);
  printf("  %-24s %9.2f %9.1f   %-11s %8.1e  %d\n", v->label, v->t.fastest_s * 1e3, gflops, vs,
         v->t.err, v->t.runs);
}

/* 2. Every variant timed: the slow default once, the fast ones in 3 alternating rounds. */
static bool time_all(variant *v, int nv, bool quick) {
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < nv; i++)
      if (!v[i].skipped && (i > 0 || round == 0))
        dm_time(v[i].k.d, v[i].run, v[i].user, quick ? 0.05 : 0.3, &v[i].t);
  printf("\n  %-24s %9s %9s   %-11s %8s  %s\n", "", "ms", "GFLOP/s", "of OpenBLAS", "max err",
         "runs (the fastest counts)");
  bool ok = true;
  for (int i = 0; i < nv; i++) {
    print_row(&v[i], &v[nv - 1]);
    ok = ok && (v[i].skipped || v[i].t.ok);
  }
  return ok;
}

static bool make_dir(const char *dir) {
  if (mkdir(dir, 0777) == 0 || errno == EEXIST)
    return true;
  fprintf(stderr, "te-demo: cannot create '%s': %s\n", dir, strerror(errno));
  return false;
}

/* path relative to the working directory when it is below it ("build/apps/demo-out"). */
static const char *shown_path(const char *path) {
  static char cwd[4096];
  if (!getcwd(cwd, sizeof cwd))
    return path;
  size_t len = strlen(cwd);
  return !strncmp(path, cwd, len) && path[len] == '/' ? path + len + 1 : path;
}

/* On a busy machine (a load average over 1.5 per core: other programs want the cores) a
   parallel loop waits at its end for its slowest thread, which another program may hold for a
   scheduler slice: timings at several threads then measure the other programs (10x slower, or
   not, from run to run). The demo then runs on one thread unless --threads says otherwise. */
static bool machine_busy(double *load, long *cores) {
  *cores = sysconf(_SC_NPROCESSORS_ONLN);
  return getloadavg(load, 1) == 1 && *cores > 1 && *load > 1.5 * (double)*cores;
}

/* Tunes C (2.) and builds the best schedule found; NULL, with *why, when none was found. */
static te_module *build_tuned(te_ctx *ctx, te_tensor *C, te_tensor *const args[3],
                              te_target *target, const options *o, const char *log,
                              const char **why) {
  char desc[96];
  snprintf(desc, sizeof desc, "matmul M=%d N=%d K=%d dtype=f32", o->n, o->n, o->n);
  if (o->tuned) {
    printf("  te-tune's schedule: the best in %s (no search: --tuned)\n", o->tuned);
    log = o->tuned;
  } else {
    printf("  te-tune searching for %.0f s (te_tune; the log: %s):\n", o->budget_s,
           shown_path(log));
    fflush(stdout);
    dm_tune_result tr = dm_tune(ctx, C, target, o->budget_s, log, desc);
    if (tr.status != TE_OK)
      die(ctx, "te_tune");
    printf("  %d schedules measured in %.0f s (%d failed), the best at %.1f GFLOP/s there\n",
           tr.trials, tr.seconds, tr.errors, tr.best_gflops);
  }
  te_schedule *tuned = te_schedule_new(ctx, 1, &C);
  te_status st = te_apply_best(tuned, log, target);
  if (st == TE_ERR_NOT_FOUND) {
    te_clear_error(ctx);
    *why = "te-tune found no working schedule in its budget";
    return NULL;
  }
  if (st != TE_OK)
    die(ctx, "te_apply_best");
  if (o->verbose) {
    char *trace = te_schedule_trace(tuned);
    printf("  te-tune's best schedule:\n");
    print_indented(trace ? trace : "", "    ");
    te_free(trace);
  }
  return build(ctx, tuned, args, target, "te-tune's schedule");
}

int main(int argc, char **argv) {
  options o;
  int args_rc = parse_args(argc, argv, &o);
  if (args_rc)
    return args_rc == 1 ? 0 : 2;
  if (!make_dir(o.out))
    return 1;
  te_ctx *ctx = te_ctx_new();
  te_target *target = ctx ? te_target_parse(ctx, "llvm -mcpu=native") : NULL;
  if (!target)
    die(ctx, "te_target_parse");
  double load;
  long cores;
  bool busy = o.threads == 0 && machine_busy(&load, &cores);
  if (o.threads > 0 || busy)
    te_set_num_threads(busy ? 1 : o.threads);
  int n = o.n;
  printf("te %s: one matmul, C = A * B, %d x %d x %d f32, for %s, %d thread%s\n", TE_VERSION_STRING,
         n, n, n, te_target_short_str(target), te_num_threads(), te_num_threads() == 1 ? "" : "s");
  if (busy)
    printf(
        "  (this machine is busy, load %.1f on %ld cores: a parallel loop would wait for threads "
        "that\n   other programs hold, so one thread; --threads %ld to use every core)\n",
        load, cores, cores);
  if (o.verbose)
    printf("  (the whole target: %s)\n", te_target_str(target));

  te_tensor *args[3];
  te_tensor *C = define_matmul(ctx, n, args);
  char *text = te_workload_text(1, &C);
  printf("\n1. What to compute, once (te_placeholder, te_reduce_axis, te_compute; as text):\n");
  print_indented(text ? text : "?", "     ");
  te_free(text);

  dm_data d;
  if (!dm_data_init(&d, n)) {
    fprintf(stderr, "te-demo: out of memory\n");
    return 1;
  }
  char why[256];
  bool have_blas = dm_openblas_load(why, sizeof why);
  if (have_blas)
    dm_openblas_set_threads(te_num_threads());

  printf("\n2. How to compute it: schedules, each checked against a plain loop (C poisoned first)"
         "\n   and timed beside OpenBLAS\n"
         "  default   the loops i, j, k as written\n"
         "  hand      bench/sgemm.c's: A and B packed into panels, 6 x 64 register tiles summed in "
         "a\n            local block over k blocks of 128, row blocks in parallel\n"
         "  te-tune   searched from the computation alone (tiles, caching, vectors, threads)\n");
  te_schedule *plain = te_schedule_new(ctx, 1, &C);
  te_module *m_plain = build(ctx, plain, args, target, "the default schedule");
  te_module *m_hand = build_hand(ctx, n, target, o.verbose);
  char log[4200], tuned_label[64];
  snprintf(log, sizeof log, "%s/tune.jsonl", o.out);
  if (o.tuned)
    snprintf(tuned_label, sizeof tuned_label, "te-tune (its log)");
  else
    snprintf(tuned_label, sizeof tuned_label, "te-tune (%.0f s budget)", o.budget_s);
  const char *no_tuned = NULL;
  te_module *m_tuned = build_tuned(ctx, C, args, target, &o, log, &no_tuned);

  variant v[4] = {{"default", {ctx, m_plain, &d}, run_te, NULL, NULL, {0}},
                  {"hand", {ctx, m_hand, &d}, run_te, NULL, NULL, {0}},
                  {tuned_label, {ctx, m_tuned, &d}, run_te, NULL, no_tuned, {0}},
                  {"OpenBLAS", {NULL, NULL, &d}, dm_openblas_run, &d, have_blas ? NULL : why, {0}}};
  for (int i = 0; i < 3; i++)
    v[i].user = &v[i].k;
  bool ok = time_all(v, 4, n < 512);
  if (have_blas)
    printf("  %s\n", dm_openblas_config());

  bool use_tuned = m_tuned && v[2].t.ok && v[2].t.fastest_s < v[1].t.fastest_s;
  printf("\n3. Without te: the %s kernel as a static library, called from C\n",
         use_tuned ? "tuned" : "hand-scheduled");
  if (!ok)
    printf("  (skipped: a kernel above failed)\n");
  else if (!dm_library(use_tuned ? m_tuned : m_hand, "matmul_f32", n, o.out, shown_path(o.out))) {
    fprintf(stderr, "te-demo: the library step failed%s%s\n",
            te_last_status(ctx) != TE_OK ? ": " : "",
            te_last_status(ctx) != TE_OK ? te_last_error(ctx) : "");
    ok = false;
  }
  printf("\nMore: te-tune show --log %s matmul M=%d N=%d K=%d   (the tuned schedule)\n"
         "      te-demo --verbose   (every schedule's trace, the whole target string)\n",
         shown_path(o.tuned ? o.tuned : log), n, n, n);
  printf("%s\n", ok ? "te-demo: every result checked: correct" : "te-demo: FAILED");
  dm_data_free(&d);
  te_ctx_free(ctx);
  return ok ? 0 : 1;
}
