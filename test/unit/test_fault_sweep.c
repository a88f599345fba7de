/* test_fault_sweep.c — fault injection across whole builds (the failing allocator of
 * runtime/mem_hook.h, as in SQLite's and Lua's test suites).
 *
 * Each scenario runs a whole user program in a fresh context: define, schedule, lower, compile,
 * JIT, call (and, per scenario, save a static library, parse a workload, tune). It is first run
 * with nothing failing, counting the allocations charged to the context (T) and recording the
 * call site of each; then it is run again with the n-th allocation failing (and every one after
 * it), for n = 1, 2, ... T + 1. Each run must either succeed, with the right numbers, or return
 * TE_ERR_NOMEM with a message; a call reporting success must leave nothing recorded; nothing may
 * crash (the ASan+UBSan build) or leak (LeakSanitizer checks at the end of each test).
 *
 * A full sweep is T + 1 builds per scenario. CI runs a sample that still fails every site: each
 * site's first allocation, the first and last 48 allocations and every stride-th one in between
 * (at most TE_FAULT_SWEEP_RUNS runs, default 300). TE_FAULT_SWEEP=full runs every n.
 * Each scenario prints one line: allocations, runs, sites that allocated, sites where a failure
 * was injected, seconds. With TE_FAULT_SITES=path, every site is appended to that file
 * ("file:line allocations failures"), for a report of the union over scenarios.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/ctx_internal.h"
#include "runtime/mem_hook.h"
#include "te_test.h" /* tt_skip_part */

/* ---------------------------------------------------------------- harness */

/* A call that returned TE_OK (or an object) must leave nothing recorded: the harness makes no
   failing calls of its own, so a recorded error there is a failure the call swallowed. */
static void expect_clean(te_ctx *ctx, const char *what, long n) {
  cr_expect_eq(te_last_status(ctx), TE_OK, "fail_after=%ld: %s succeeded but recorded %s: %s", n,
               what, te_status_str(te_last_status(ctx)), te_last_error(ctx));
}

static long current_n; /* the run's fail_after, for messages */
/* Whose n-th allocation fails: the scenario's context; the contexts te makes for itself
   (te_tune's compile threads: through TE_DEBUG_FAIL_ALLOC_AFTER, which every new context
   reads); or the process's counter (what belongs to no context: runtime records, kernel
   buffers). */
typedef enum { FAIL_CONTEXT, FAIL_NEW_CONTEXTS, FAIL_PROCESS } fail_what;
static fail_what fail_mode = FAIL_CONTEXT;

#define TRY(ctx, call)                                                                             \
  do {                                                                                             \
    te_status st_ = (call);                                                                        \
    if (st_ != TE_OK)                                                                              \
      return st_;                                                                                  \
    expect_clean((ctx), #call, current_n);                                                         \
  } while (0)
#define TRY_NN(ctx, var, call)                                                                     \
  do {                                                                                             \
    if (!((var) = (call)))                                                                         \
      return te_last_status(ctx) != TE_OK ? te_last_status(ctx) : TE_ERR_INTERNAL;                 \
    expect_clean((ctx), #call, current_n);                                                         \
  } while (0)

typedef te_status (*scenario_fn)(te_ctx *);

/* LeakSanitizer's check, now (the ASan build; a no-op without it or with detect_leaks=0): a
   report at exit would not fail the test, so each sweep asks itself. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
/* Mesa's lavapipe (the Vulkan device of a machine without a GPU) makes one 48-byte block at the
   first submission that a check before exit sees as unreferenced (it is the same block after 1
   or 10 calls, and the check at exit finds nothing): a suppression matching its library only. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libvulkan_lvp.so\n"; }

static void expect_no_leaks(const char *name) {
  if (__lsan_do_recoverable_leak_check)
    cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "%s: LeakSanitizer found leaks (above)",
                 name);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One run with the n-th allocation failing (n < 0: none). */
static te_status run_once(scenario_fn fn, long n, long *count) {
  te_ctx *ctx = te_ctx_new();
  cr_assert_not_null(ctx);
  current_n = n;
  char env[32];
  snprintf(env, sizeof env, "%ld", n);
  long process_before = te_rt_mem_process_count();
  if (fail_mode == FAIL_CONTEXT)
    ir_debug_fail_alloc_after(ctx, n);
  else if (fail_mode == FAIL_NEW_CONTEXTS && n > 0)
    setenv("TE_DEBUG_FAIL_ALLOC_AFTER", env, 1);
  else if (fail_mode == FAIL_PROCESS)
    te_rt_mem_process_fail_after(n);
  te_status st = fn(ctx);
  unsetenv("TE_DEBUG_FAIL_ALLOC_AFTER");
  te_rt_mem_process_fail_after(-1);
  if (st != TE_OK) {
    cr_expect_eq(st, TE_ERR_NOMEM, "fail_after=%ld: %s (%s)", n, te_status_str(st),
                 te_last_error(ctx));
    cr_expect_eq(te_last_status(ctx), st, "fail_after=%ld: returned %s but recorded %s", n,
                 te_status_str(st), te_status_str(te_last_status(ctx)));
    cr_expect_neq(te_last_error(ctx)[0], '\0', "fail_after=%ld: no message", n);
  }
  if (count)
    *count = fail_mode == FAIL_PROCESS ? te_rt_mem_process_count() - process_before
                                       : ir_debug_alloc_count(ctx);
  te_ctx_free(ctx);
  return st;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* The values of n to run: every one (full), or the CI sample (see the header). */
static long *plan(long total, const te_rt_mem_site *sites, int nsites, int *nplan) {
  const char *mode = getenv("TE_FAULT_SWEEP");
  const char *runs_env = getenv("TE_FAULT_SWEEP_RUNS");
  bool full = mode && !strcmp(mode, "full");
  long budget = runs_env && *runs_env ? atol(runs_env) : 300;
  long cap = total + 1 + nsites + 256;
  long *ns = calloc((size_t)cap, sizeof *ns);
  cr_assert_not_null(ns);
  int k = 0;
  if (full) {
    for (long n = 1; n <= total + 1; n++)
      ns[k++] = n;
  } else {
    for (int i = 0; i < nsites; i++)
      if (sites[i].first > 0 && sites[i].first <= total) /* sites of this context's counter */
        ns[k++] = sites[i].first;
    long edge = 48, left = budget - k - 2 * edge;
    long stride = left > 0 ? (total + left - 1) / left : total;
    stride = stride < 1 ? 1 : stride;
    for (long n = 1; n <= total + 1; n++)
      if (n <= edge || n > total + 1 - edge || n % stride == 0)
        ns[k++] = n;
  }
  qsort(ns, (size_t)k, sizeof *ns, cmp_long);
  int u = 0;
  for (int i = 0; i < k; i++)
    if (u == 0 || ns[u - 1] != ns[i])
      ns[u++] = ns[i];
  *nplan = u;
  return ns;
}

static void report_sites(const char *name, int *allocating, int *failing) {
  enum { MAX = 4096 };
  te_rt_mem_site *s = calloc(MAX, sizeof *s);
  cr_assert_not_null(s);
  int n = te_rt_mem_sites(s, MAX);
  *allocating = *failing = 0;
  const char *path = getenv("TE_FAULT_SITES");
  FILE *out = path && *path ? fopen(path, "a") : NULL;
  for (int i = 0; i < n && i < MAX; i++) {
    ++*allocating;
    *failing += s[i].failures > 0;
    if (out)
      fprintf(out, "%s %s:%d %ld %ld\n", name, s[i].file, s[i].line, s[i].allocations,
              s[i].failures);
  }
  if (out)
    fclose(out);
  free(s);
}

static void sweep(const char *name, scenario_fn fn) {
  double t0 = now_s();
  te_rt_mem_record_sites(true);
  long total = 0, process_base = te_rt_mem_process_count();
  te_status st = run_once(fn, -1, &total);
  cr_assert_eq(st, TE_OK, "%s: the scenario fails without fault injection", name);
  cr_assert_gt(total, 0);
  te_rt_mem_site *first = calloc(4096, sizeof *first);
  cr_assert_not_null(first);
  int nfirst = te_rt_mem_sites(first, 4096);
  if (fail_mode == FAIL_NEW_CONTEXTS) { /* the longest of te's own contexts, as its sites show */
    total = 0;
    for (int i = 0; i < nfirst && i < 4096; i++)
      total = first[i].first > total ? first[i].first : total;
  } else if (fail_mode == FAIL_PROCESS) { /* first: the process's count, from before the run */
    for (int i = 0; i < nfirst && i < 4096; i++)
      first[i].first = first[i].first < 0 ? -first[i].first - process_base : 0;
  }
  int nplan = 0;
  long *ns = plan(total, first, nfirst < 4096 ? nfirst : 4096, &nplan);
  free(first);
  te_rt_mem_record_sites(true);                  /* from here: what the failing runs reach */
  const char *only = getenv("TE_FAULT_SWEEP_N"); /* debugging: that run alone */
  int ok = 0;
  for (int i = 0; i < nplan; i++)
    if (!only || !*only || atol(only) == ns[i])
      ok += run_once(fn, ns[i], NULL) == TE_OK;
  free(ns);
  int allocating, failing;
  report_sites(name, &allocating, &failing);
  te_rt_mem_record_sites(false);
  cr_expect_gt(ok, 0, "%s: no run succeeded (not even with nothing failing)", name);
  expect_no_leaks(name);
  fprintf(stderr,
          "fault sweep %-10s %6ld allocations, %4d runs (%d succeeded), %3d sites allocated, "
          "%3d failed, %.1f s\n",
          name, total, nplan, ok, allocating, failing, now_s() - t0);
}

/* ---------------------------------------------------------------- data */

static void fill(float *x, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 16) % 19) / 4.0f - 2.3f; /* never 0 */
  }
}

static DLTensor dl2(float *data, int64_t *shape) {
  return (DLTensor){data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
}

static bool close_to(float got, double want) {
  return fabs(got - want) <= 1e-4 * fabs(want) + 1e-5;
}

/* ---------------------------------------------------------------- scenarios */

/* Element-wise: C[i, j] = exp(A[i, j]) * 2 + B[i, j], split, vectorized; printed, built, called
   and its LLVM text read back. */
static te_status elementwise(te_ctx *ctx) {
  enum { M = 5, N = 12 };
  te_expr *m = te_int(ctx, M), *n = te_int(ctx, N);
  te_tensor *A, *B, *C;
  TRY_NN(ctx, A, te_placeholder(ctx, "A", TE_F32, 2, (te_expr *[]){m, n}));
  TRY_NN(ctx, B, te_placeholder(ctx, "B", TE_F32, 2, (te_expr *[]){m, n}));
  te_expr *i, *j, *body;
  TRY_NN(ctx, i, te_var(ctx, "i"));
  TRY_NN(ctx, j, te_var(ctx, "j"));
  te_expr *a = te_at(A, 2, (te_expr *[]){i, j}), *b = te_at(B, 2, (te_expr *[]){i, j});
  TRY_NN(ctx, body,
         te_add(te_mul(te_call(ctx, "exp", 1, (te_expr *[]){a}), te_float(ctx, TE_F32, 2)), b));
  TRY_NN(ctx, C, te_compute(ctx, "C", 2, (te_expr *[]){m, n}, (te_expr *[]){i, j}, body));
  te_schedule *s;
  TRY_NN(ctx, s, te_schedule_new(ctx, 1, &C));
  te_stage *st;
  TRY_NN(ctx, st, te_stage_of(s, C));
  te_iter *jo, *ji;
  TRY(ctx, te_split(st, te_axis(st, 1), 8, &jo, &ji));
  TRY(ctx, te_vectorize(st, ji));
  te_tensor *args[3] = {A, B, C};
  char *text;
  TRY_NN(ctx, text, te_lower_text(s, 3, args, 0, NULL));
  te_free(text);
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  te_module *mod;
  TRY(ctx, te_build(s, "ew", 3, args, 0, NULL, t, &mod));
  const char *ll;
  TRY_NN(ctx, ll, te_module_source(mod, "ll"));
  float xa[M * N], xb[M * N], xc[M * N];
  fill(xa, M * N, 1), fill(xb, M * N, 2);
  for (int q = 0; q < M * N; q++)
    xc[q] = NAN;
  int64_t shape[2] = {M, N};
  DLTensor da = dl2(xa, shape), db = dl2(xb, shape), dc = dl2(xc, shape);
  TRY(ctx, te_module_call(mod, "ew", 3, (DLTensor *[]){&da, &db, &dc}, 0, NULL));
  for (int q = 0; q < M * N; q++)
    cr_expect(close_to(xc[q], exp((double)xa[q]) * 2 + xb[q]), "C[%d] = %g", q, xc[q]);
  return TE_OK;
}

/* te_specialize: C[i] = A[i] * 2 over a symbolic n, split by 8 and vectorized, with a branch
   under n % 16 == 0 split again; the trace replayed on a fresh schedule, which is built and
   called at a size that takes the branch and one that does not. */
static te_status specialize(te_ctx *ctx) {
  te_expr *n, *i;
  TRY_NN(ctx, n, te_var(ctx, "n"));
  TRY_NN(ctx, i, te_var(ctx, "i"));
  te_tensor *A, *C;
  TRY_NN(ctx, A, te_placeholder(ctx, "A", TE_F32, 1, (te_expr *[]){n}));
  te_expr *body = te_mul(te_at(A, 1, (te_expr *[]){i}), te_float(ctx, TE_F32, 2));
  TRY_NN(ctx, C, te_compute(ctx, "C", 1, (te_expr *[]){n}, (te_expr *[]){i}, body));
  te_schedule *s, *b, *r;
  TRY_NN(ctx, s, te_schedule_new(ctx, 1, &C));
  te_stage *st;
  TRY_NN(ctx, st, te_stage_of(s, C));
  te_iter *o, *in;
  TRY(ctx, te_split(st, te_axis(st, 0), 8, &o, &in));
  TRY(ctx, te_vectorize(st, in));
  te_expr *cond = te_eq(te_floormod(n, te_int(ctx, 16)), te_int(ctx, 0));
  TRY(ctx, te_specialize(s, cond, &b));
  TRY_NN(ctx, st, te_stage_of(b, C));
  TRY(ctx, te_split(st, te_leaf(st, 0), 2, &o, &in));
  char *trace;
  TRY_NN(ctx, trace, te_schedule_trace(s));
  r = te_schedule_new(ctx, 1, &C);
  te_status st_replay = r ? te_schedule_replay(r, trace) : te_last_status(ctx);
  te_free(trace);
  TRY(ctx, st_replay);
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  te_module *mod;
  TRY(ctx, te_build(r, "sp", 2, (te_tensor *[]){A, C}, 0, NULL, t, &mod));
  for (int64_t len = 32; len > 0; len -= 11) { /* 32 (the branch), 21 (the general), 10 */
    float xa[32], xc[32];
    fill(xa, (int)len, 3);
    for (int q = 0; q < 32; q++)
      xc[q] = NAN;
    DLTensor da = {
        .data = xa, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = &len};
    DLTensor dc = da;
    dc.data = xc;
    TRY(ctx, te_module_call(mod, "sp", 2, (DLTensor *[]){&da, &dc}, 0, NULL));
    for (int q = 0; q < len; q++)
      cr_expect(close_to(xc[q], 2.0 * xa[q]), "n = %lld: C[%d] = %g", (long long)len, q, xc[q]);
  }
  return TE_OK;
}

/* The multi-stage pipeline: C = (2 A) x B with P = 2 A inlined, C cached in local storage
   (cache_write) computed at C's tile loop (compute_at), C's tiles 4 x 8, the cache's k split and
   reordered, its inner loop vectorized, C's outer loop parallel. 13 x 16 x 7: tiles with tails. */
enum { PM = 13, PN = 16, PK = 7 };

static te_status pipeline_build(te_ctx *ctx, te_module **mod) {
  te_expr *M = te_int(ctx, PM), *N = te_int(ctx, PN), *K = te_int(ctx, PK);
  te_tensor *A, *B, *P, *C, *CC = NULL;
  TRY_NN(ctx, A, te_placeholder(ctx, "A", TE_F32, 2, (te_expr *[]){M, K}));
  TRY_NN(ctx, B, te_placeholder(ctx, "B", TE_F32, 2, (te_expr *[]){K, N}));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *body;
  TRY_NN(ctx, body, te_mul(te_at(A, 2, (te_expr *[]){i, j}), te_float(ctx, TE_F32, 2.0)));
  TRY_NN(ctx, P, te_compute(ctx, "P", 2, (te_expr *[]){M, K}, (te_expr *[]){i, j}, body));
  te_expr *k, *m = te_var(ctx, "m"), *n = te_var(ctx, "n");
  TRY_NN(ctx, k, te_reduce_axis(ctx, "k", te_int(ctx, 0), K));
  TRY_NN(ctx, body,
         te_sum(te_mul(te_at(P, 2, (te_expr *[]){m, k}), te_at(B, 2, (te_expr *[]){k, n})), 1, &k));
  TRY_NN(ctx, C, te_compute(ctx, "C", 2, (te_expr *[]){M, N}, (te_expr *[]){m, n}, body));
  te_schedule *s;
  TRY_NN(ctx, s, te_schedule_new(ctx, 1, &C));
  TRY(ctx, te_cache_write(s, C, TE_SCOPE_LOCAL, &CC));
  te_stage *sc, *scc, *sp;
  TRY_NN(ctx, sc, te_stage_of(s, C));
  TRY_NN(ctx, scc, te_stage_of(s, CC));
  TRY_NN(ctx, sp, te_stage_of(s, P));
  te_iter *mo, *no, *mi, *ni, *ko, *ki;
  TRY(ctx, te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 4, 8, &mo, &no, &mi, &ni));
  TRY(ctx, te_compute_at(scc, sc, no));
  TRY(ctx, te_split(scc, te_reduce_iter(scc, 0), 4, &ko, &ki));
  TRY(ctx, te_reorder(scc, 4, (te_iter *const[]){ko, te_axis(scc, 0), ki, te_axis(scc, 1)}));
  TRY(ctx, te_vectorize(scc, te_axis(scc, 1)));
  TRY(ctx, te_parallel(sc, mo));
  TRY(ctx, te_compute_inline(sp));
  char *trace;
  TRY_NN(ctx, trace, te_schedule_trace(s));
  te_free(trace);
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  TRY(ctx, te_build(s, "mm", 3, (te_tensor *[]){A, B, C}, 0, NULL, t, mod));
  return TE_OK;
}

static te_status pipeline_call(te_ctx *ctx, te_module *mod) {
  static float a[PM * PK], b[PK * PN], c[PM * PN];
  fill(a, PM * PK, 3), fill(b, PK * PN, 4);
  for (int q = 0; q < PM * PN; q++)
    c[q] = NAN;
  int64_t sa[2] = {PM, PK}, sb[2] = {PK, PN}, sc[2] = {PM, PN};
  DLTensor da = dl2(a, sa), db = dl2(b, sb), dc = dl2(c, sc);
  TRY(ctx, te_module_call(mod, "mm", 3, (DLTensor *[]){&da, &db, &dc}, 0, NULL));
  for (int x = 0; x < PM; x++)
    for (int y = 0; y < PN; y++) {
      double want = 0;
      for (int z = 0; z < PK; z++)
        want += 2.0 * a[x * PK + z] * b[z * PN + y];
      cr_expect(close_to(c[x * PN + y], want), "C[%d, %d] = %g, want %g", x, y, c[x * PN + y],
                want);
    }
  return TE_OK;
}

static te_status pipeline(te_ctx *ctx) {
  te_module *mod = NULL;
  te_status st = pipeline_build(ctx, &mod);
  return st != TE_OK ? st : pipeline_call(ctx, mod);
}

/* The pipeline saved as a static library and a header; on failure nothing is left behind. */
static te_status save(te_ctx *ctx) {
  te_module *mod = NULL;
  te_status st = pipeline_build(ctx, &mod);
  if (st != TE_OK)
    return st;
  char dir[] = "/tmp/te_fault_XXXXXX", prefix[64], lib[80], hdr[80];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(prefix, sizeof prefix, "%s/mm", dir);
  snprintf(lib, sizeof lib, "%s/libmm.a", dir);
  snprintf(hdr, sizeof hdr, "%s/mm.h", dir);
  st = te_module_save(mod, prefix, TE_SAVE_STATIC_LIB | TE_SAVE_HEADER);
  bool have_lib = access(lib, F_OK) == 0, have_hdr = access(hdr, F_OK) == 0;
  unlink(lib), unlink(hdr);
  cr_expect_eq(rmdir(dir), 0, "fail_after=%ld: files left behind in %s", current_n, dir);
  if (st != TE_OK) {
    cr_expect(!have_lib && !have_hdr, "fail_after=%ld: a failed save left files", current_n);
    return st;
  }
  expect_clean(ctx, "te_module_save", current_n);
  cr_expect(have_lib && have_hdr, "the library and header were written");
  return TE_OK;
}

/* The workload as text, parsed back, built and called (te_parse, te_workload_text). */
static te_status parse(te_ctx *ctx) {
  const char *text = "C[i, j] = sum(A[i, k] * B[k, j], k) where A: f32[6, 5], B: f32[5, 9], "
                     "k: [0, 5)";
  int nout = 0;
  te_tensor **outs = NULL;
  TRY(ctx, te_parse(ctx, text, &nout, &outs));
  char *again;
  TRY_NN(ctx, again, te_workload_text(nout, outs));
  te_free(again);
  int nin = 0;
  te_tensor **ins = NULL;
  TRY(ctx, te_workload_inputs(nout, outs, &nin, &ins, NULL, NULL));
  cr_assert_eq(nin, 2);
  te_schedule *s;
  TRY_NN(ctx, s, te_schedule_new(ctx, 1, outs));
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  te_module *mod;
  TRY(ctx, te_build(s, "p", 3, (te_tensor *[]){ins[0], ins[1], outs[0]}, 0, NULL, t, &mod));
  float a[30], b[45], c[54];
  fill(a, 30, 5), fill(b, 45, 6);
  int64_t sa[2] = {6, 5}, sb[2] = {5, 9}, sc[2] = {6, 9};
  DLTensor da = dl2(a, sa), db = dl2(b, sb), dc = dl2(c, sc);
  TRY(ctx, te_module_call(mod, "p", 3, (DLTensor *[]){&da, &db, &dc}, 0, NULL));
  for (int x = 0; x < 6; x++)
    for (int y = 0; y < 9; y++) {
      double want = 0;
      for (int z = 0; z < 5; z++)
        want += (double)a[x * 5 + z] * b[z * 9 + y];
      cr_expect(close_to(c[x * 9 + y], want), "C[%d, %d]", x, y);
    }
  return TE_OK;
}

/* An extern stage between two te stages: X -> P = 3 X -> E = plus_one(P) -> Y = 2 E, its
   workload text printed (the extern's function and symbol are kept through every failure). */
static int plus_one(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  const float *x = in[0]->data;
  float *y = out->data;
  for (int64_t q = 0; nin == 1 && q < out->shape[0] * out->shape[1]; q++)
    y[q] = x[q] + 1;
  return 0;
}

static te_status extern_stage(te_ctx *ctx) {
  te_expr *shape[2] = {te_int(ctx, 6), te_int(ctx, 5)};
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *body;
  te_tensor *X, *P, *E, *Y;
  TRY_NN(ctx, X, te_placeholder(ctx, "X", TE_F32, 2, shape));
  TRY_NN(ctx, body, te_mul(te_at(X, 2, (te_expr *[]){i, j}), te_float(ctx, TE_F32, 3)));
  TRY_NN(ctx, P, te_compute(ctx, "P", 2, shape, (te_expr *[]){i, j}, body));
  TRY_NN(ctx, E, te_extern(ctx, "E", TE_F32, 2, shape, 1, &P, plus_one, "plus_one"));
  TRY_NN(ctx, body, te_mul(te_at(E, 2, (te_expr *[]){i, j}), te_float(ctx, TE_F32, 2)));
  TRY_NN(ctx, Y, te_compute(ctx, "Y", 2, shape, (te_expr *[]){i, j}, body));
  char *text;
  TRY_NN(ctx, text, te_workload_text(1, &Y));
  te_free(text);
  te_schedule *s;
  TRY_NN(ctx, s, te_schedule_new(ctx, 1, &Y));
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  te_module *mod;
  TRY(ctx, te_build(s, "ex", 2, (te_tensor *[]){X, Y}, 0, NULL, t, &mod));
  float x[30], y[30];
  fill(x, 30, 7);
  int64_t sh[2] = {6, 5};
  DLTensor dx = dl2(x, sh), dy = dl2(y, sh);
  TRY(ctx, te_module_call(mod, "ex", 2, (DLTensor *[]){&dx, &dy}, 0, NULL));
  for (int q = 0; q < 30; q++)
    cr_expect(close_to(y[q], 2.0 * (3.0 * x[q] + 1)), "Y[%d]", q);
  return TE_OK;
}

/* A short tune of a small element-wise kernel (random search, two candidates, no confirm pass)
   into a fresh log, then te_apply_best. Swept twice: failing te_tune's context, and failing the
   contexts of its compile threads instead (a candidate that cannot be built is an error record:
   the tune still succeeds, or fails with TE_ERR_NOMEM). */
static te_status tune(te_ctx *ctx) {
  te_expr *n = te_int(ctx, 64);
  te_tensor *A, *C;
  TRY_NN(ctx, A, te_placeholder(ctx, "A", TE_F32, 1, &n));
  te_expr *i = te_var(ctx, "i"), *body;
  TRY_NN(ctx, body, te_mul(te_at(A, 1, &i), te_float(ctx, TE_F32, 3)));
  TRY_NN(ctx, C, te_compute(ctx, "C", 1, &n, &i, body));
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  char log[] = "/tmp/te_fault_tune_XXXXXX";
  int fd = mkstemp(log);
  cr_assert_geq(fd, 0);
  close(fd);
  te_tune_summary sum = {0};
  te_tune_options o = {.trials = 2,
                       .batch = 2,
                       .jobs = 1,
                       .seed = 7,
                       .log_path = log,
                       .no_model = 1,
                       .min_repeat_s = 1e-4,
                       .min_repeats = 1,
                       .max_repeats = 1,
                       .timeout_s = 10,
                       .check = 1,
                       .confirm = -1,
                       .summary = &sum};
  te_status st = te_tune(ctx, 1, &C, t, &o);
  if (st == TE_OK) {
    expect_clean(ctx, "te_tune", current_n);
    cr_expect_gt(sum.trials_done, 0);
    te_schedule *s = te_schedule_new(ctx, 1, &C);
    st = s ? te_apply_best(s, log, t) : te_last_status(ctx);
    if (st == TE_OK)
      expect_clean(ctx, "te_apply_best", current_n);
    else if (st == TE_ERR_NOT_FOUND && sum.errors == sum.measured) /* every candidate failed */
      st = TE_OK;
  }
  unlink(log);
  return st;
}

/* Operators and the dataflow primitives: a padded conv2d (its pad stage inlined, the input
   cached with cache_read at the output's loop), a softmax, and a row sum rfactor'ed over a
   split reduce loop; built together into one kernel and checked against plain C. */
enum { OC = 2, OO = 3, OH = 5, OW = 5, OR = 4, OK = 10 };

static te_status ops(te_ctx *ctx) {
  te_tensor *D, *W, *X;
  TRY_NN(ctx, D,
         te_placeholder(
             ctx, "D", TE_F32, 4,
             (te_expr *[]){te_int(ctx, 1), te_int(ctx, OC), te_int(ctx, OH), te_int(ctx, OW)}));
  TRY_NN(ctx, W,
         te_placeholder(
             ctx, "W", TE_F32, 4,
             (te_expr *[]){te_int(ctx, OO), te_int(ctx, OC), te_int(ctx, 3), te_int(ctx, 3)}));
  TRY_NN(ctx, X,
         te_placeholder(ctx, "X", TE_F32, 2, (te_expr *[]){te_int(ctx, OR), te_int(ctx, OK)}));
  te_conv2d_params cp = {1, 1, 1, 1, 1, 1};
  te_tensor *conv, *pad, *sm, *rs;
  TRY_NN(ctx, conv, te_op_conv2d_nchw(ctx, D, W, &cp, "conv"));
  TRY_NN(ctx, pad, te_op_stage(conv, "pad"));
  TRY_NN(ctx, sm, te_op_softmax(ctx, X, "sm"));
  te_expr *i = te_var(ctx, "i"), *k, *body;
  TRY_NN(ctx, k, te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, OK)));
  TRY_NN(ctx, body, te_sum(te_at(X, 2, (te_expr *[]){i, k}), 1, &k));
  TRY_NN(ctx, rs, te_compute(ctx, "rs", 1, (te_expr *[]){te_int(ctx, OR)}, &i, body));
  te_schedule *s;
  TRY_NN(ctx, s, te_schedule_new(ctx, 3, (te_tensor *[]){conv, sm, rs}));
  te_stage *sconv, *srs, *spad;
  TRY_NN(ctx, sconv, te_stage_of(s, conv));
  TRY_NN(ctx, spad, te_stage_of(s, pad));
  TRY(ctx, te_compute_inline(spad));
  te_tensor *Wc = NULL;
  TRY(ctx, te_cache_read(s, W, TE_SCOPE_LOCAL, 1, &sconv, &Wc));
  te_stage *swc;
  TRY_NN(ctx, swc, te_stage_of(s, Wc));
  TRY(ctx, te_compute_at(swc, sconv, te_axis(sconv, 1)));
  TRY_NN(ctx, srs, te_stage_of(s, rs));
  te_iter *ko, *ki;
  TRY(ctx, te_split(srs, te_reduce_iter(srs, 0), 4, &ko, &ki));
  te_tensor *rf = NULL;
  TRY(ctx, te_rfactor(s, rs, ki, 0, &rf));
  te_target *t;
  TRY_NN(ctx, t, te_target_parse(ctx, "llvm"));
  te_module *mod;
  TRY(ctx, te_build(s, "ops", 6, (te_tensor *[]){D, W, X, conv, sm, rs}, 0, NULL, t, &mod));
  static float d[OC * OH * OW], w[OO * OC * 9], x[OR * OK], c[OO * OH * OW], y[OR * OK], r[OR];
  fill(d, OC * OH * OW, 11), fill(w, OO * OC * 9, 12), fill(x, OR * OK, 13);
  int64_t sd[4] = {1, OC, OH, OW}, sw[4] = {OO, OC, 3, 3}, sx[2] = {OR, OK},
          sc[4] = {1, OO, OH, OW}, sr[1] = {OR};
  DLTensor td = {d, {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, sd, NULL, 0}, tw = td, tc = td;
  tw.data = w, tw.shape = sw, tc.data = c, tc.shape = sc;
  DLTensor tx = dl2(x, sx), ty = dl2(y, sx),
           tr = {r, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, sr, NULL, 0};
  TRY(ctx, te_module_call(mod, "ops", 6, (DLTensor *[]){&td, &tw, &tx, &tc, &ty, &tr}, 0, NULL));
  for (int o = 0; o < OO; o++)
    for (int yy = 0; yy < OH; yy++)
      for (int xx = 0; xx < OW; xx++) {
        double want = 0;
        for (int cc = 0; cc < OC; cc++)
          for (int ry = 0; ry < 3; ry++)
            for (int rx = 0; rx < 3; rx++) {
              int py = yy + ry - 1, px = xx + rx - 1;
              if (py >= 0 && py < OH && px >= 0 && px < OW)
                want += (double)d[(cc * OH + py) * OW + px] * w[((o * OC + cc) * 3 + ry) * 3 + rx];
            }
        cr_expect(close_to(c[(o * OH + yy) * OW + xx], want), "conv[%d, %d, %d]", o, yy, xx);
      }
  for (int row = 0; row < OR; row++) {
    double mx = -INFINITY, sum = 0, total = 0;
    for (int q = 0; q < OK; q++)
      mx = fmax(mx, x[row * OK + q]), total += x[row * OK + q];
    for (int q = 0; q < OK; q++)
      sum += exp((double)x[row * OK + q] - mx);
    for (int q = 0; q < OK; q++)
      cr_expect(close_to(y[row * OK + q], exp((double)x[row * OK + q] - mx) / sum), "sm[%d, %d]",
                row, q);
    cr_expect(close_to(r[row], total), "rs[%d] = %g, want %g", row, r[row], total);
  }
  return TE_OK;
}

/* GPU targets: a tiled matmul bound to blocks and threads with its B tile in shared memory,
   compiled to PTX (no driver needed to build) and to SPIR-V for Vulkan, where it is called
   when a Vulkan device is there (lavapipe on a machine without a GPU). */
static bool no_vulkan;

static te_status gpu(te_ctx *ctx) {
  enum { M = 8, N = 16, K = 4 };
  te_expr *eM = te_int(ctx, M), *eN = te_int(ctx, N), *eK = te_int(ctx, K);
  te_tensor *A, *B, *C;
  TRY_NN(ctx, A, te_placeholder(ctx, "A", TE_F32, 2, (te_expr *[]){eM, eK}));
  TRY_NN(ctx, B, te_placeholder(ctx, "B", TE_F32, 2, (te_expr *[]){eK, eN}));
  te_expr *m = te_var(ctx, "m"), *n = te_var(ctx, "n"), *k, *body;
  TRY_NN(ctx, k, te_reduce_axis(ctx, "k", te_int(ctx, 0), eK));
  TRY_NN(ctx, body,
         te_sum(te_mul(te_at(A, 2, (te_expr *[]){m, k}), te_at(B, 2, (te_expr *[]){k, n})), 1, &k));
  TRY_NN(ctx, C, te_compute(ctx, "C", 2, (te_expr *[]){eM, eN}, (te_expr *[]){m, n}, body));
  const char *targets[2] = {"cuda", "vulkan"};
  for (int g = 0; g < 2; g++) {
    te_schedule *s;
    TRY_NN(ctx, s, te_schedule_new(ctx, 1, &C));
    te_stage *sc;
    TRY_NN(ctx, sc, te_stage_of(s, C));
    te_iter *mo, *no, *mi, *ni;
    TRY(ctx, te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 4, 8, &mo, &no, &mi, &ni));
    TRY(ctx, te_bind(sc, mo, TE_BLOCK_X));
    TRY(ctx, te_bind(sc, no, TE_BLOCK_Y));
    TRY(ctx, te_bind(sc, mi, TE_THREAD_X));
    TRY(ctx, te_bind(sc, ni, TE_THREAD_Y));
    te_tensor *Bs = NULL;
    TRY(ctx, te_cache_read(s, B, TE_SCOPE_SHARED, 1, &sc, &Bs));
    te_stage *sb;
    TRY_NN(ctx, sb, te_stage_of(s, Bs));
    TRY(ctx, te_compute_at(sb, sc, no));
    te_iter *bo, *bi;
    TRY(ctx, te_split(sb, te_axis(sb, 1), 8, &bo, &bi));
    TRY(ctx, te_bind(sb, bi, TE_THREAD_Y));
    te_target *t;
    TRY_NN(ctx, t, te_target_parse(ctx, targets[g]));
    char *text;
    TRY_NN(ctx, text, te_lower_text_for(s, t, 3, (te_tensor *[]){A, B, C}, 0, NULL));
    te_free(text);
    te_module *mod;
    TRY(ctx, te_build(s, "mm", 3, (te_tensor *[]){A, B, C}, 0, NULL, t, &mod));
    const char *src;
    TRY_NN(ctx, src, te_module_source(mod, g == 0 ? "ptx" : "spirv-dis"));
    if (g == 0)
      continue; /* running PTX needs a CUDA driver */
    float a[M * K], b[K * N], c[M * N];
    fill(a, M * K, 21), fill(b, K * N, 22);
    int64_t sa[2] = {M, K}, sbs[2] = {K, N}, scs[2] = {M, N};
    DLTensor da = dl2(a, sa), db = dl2(b, sbs), dc = dl2(c, scs);
    te_status st = te_module_call(mod, "mm", 3, (DLTensor *[]){&da, &db, &dc}, 0, NULL);
    if (st == TE_ERR_RUNTIME && strstr(te_last_error(ctx), "no Vulkan driver"))
      no_vulkan = true, te_clear_error(ctx); /* the builds are swept still; a skip is reported */
    else if (st != TE_OK)
      return st;
    else
      for (int x = 0; x < M; x++)
        for (int y = 0; y < N; y++) {
          double want = 0;
          for (int z = 0; z < K; z++)
            want += (double)a[x * K + z] * b[z * N + y];
          cr_expect(close_to(c[x * N + y], want), "vulkan C[%d, %d]", x, y);
        }
  }
  return TE_OK;
}

/* ---------------------------------------------------------------- the sweeps */

Test(fault_sweep, elementwise, .timeout = 900) { sweep("elementwise", elementwise); }
Test(fault_sweep, pipeline, .timeout = 900) { sweep("pipeline", pipeline); }
Test(fault_sweep, specialize, .timeout = 900) { sweep("specialize", specialize); }
Test(fault_sweep, save_static_library, .timeout = 900) { sweep("save", save); }
Test(fault_sweep, parse_and_build, .timeout = 900) { sweep("parse", parse); }
Test(fault_sweep, extern_stage, .timeout = 900) { sweep("extern", extern_stage); }
Test(fault_sweep, short_tune, .timeout = 900) { sweep("tune", tune); }
Test(fault_sweep, short_tune_compile_threads, .timeout = 900) {
  fail_mode = FAIL_NEW_CONTEXTS;
  sweep("tune_jobs", tune);
}
Test(fault_sweep, gpu_runtime_records, .timeout = 900) {
  fail_mode = FAIL_PROCESS;
  sweep("gpu_rt", gpu);
}
Test(fault_sweep, operators_and_dataflow, .timeout = 900) { sweep("ops", ops); }
Test(fault_sweep, gpu_targets, .timeout = 900) {
  sweep("gpu", gpu);
  if (no_vulkan)
    tt_skip_part("vulkan", "the Vulkan kernel was built but not called (no Vulkan driver)");
}

/* Allocations with no context: a running kernel's intermediate buffers (te_rt_alloc, charged
   to the process's counter). A symbolic extent puts the cache on the heap; the n-th runtime
   allocation failing makes the call return TE_ERR_NOMEM naming the buffer. */
Test(fault_sweep, kernel_buffers) {
  te_ctx *ctx = te_ctx_new();
  te_expr *n = te_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 1, &n);
  te_expr *i = te_var(ctx, "i");
  te_tensor *C = te_compute(ctx, "C", 1, &n, &i, te_add(te_at(A, 1, &i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = te_schedule_new(ctx, 1, &C);
  te_tensor *CC = NULL;
  cr_assert_eq(te_cache_write(s, C, TE_SCOPE_GLOBAL, &CC), TE_OK, "%s", te_last_error(ctx));
  te_module *mod = NULL;
  cr_assert_eq(
      te_build(s, "k", 2, (te_tensor *[]){A, C}, 0, NULL, te_target_parse(ctx, "llvm"), &mod),
      TE_OK, "%s", te_last_error(ctx));
  float a[37], c[37];
  fill(a, 37, 9);
  int64_t shape[1] = {37};
  DLTensor da = {a, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0}, dc = da;
  dc.data = c;
  int failed = 0;
  for (long k = 1; k <= 8; k++) {
    te_rt_mem_process_fail_after(k);
    te_status st = te_module_call(mod, "k", 2, (DLTensor *[]){&da, &dc}, 0, NULL);
    te_rt_mem_process_fail_after(-1);
    if (st == TE_OK) {
      for (int q = 0; q < 37; q++)
        cr_expect(close_to(c[q], a[q] + 1.0), "C[%d]", q);
      break;
    }
    failed++;
    cr_expect_eq(st, TE_ERR_NOMEM, "k=%ld: %s (%s)", k, te_status_str(st), te_last_error(ctx));
    cr_expect(strstr(te_last_error(ctx), "out of memory") != NULL, "%s", te_last_error(ctx));
    te_clear_error(ctx);
  }
  cr_expect_gt(failed, 0, "the kernel allocated nothing from the runtime");
  te_ctx_free(ctx);
}

/* A primitive that runs out of memory half way leaves the schedule unusable: later calls on it
   fail with the same status and a message naming it (core.h). */
Test(fault_sweep, half_changed_schedule_is_refused) {
  int refused = 0;
  for (long n = 1; n < 400 && !refused; n++) {
    te_ctx *ctx = te_ctx_new();
    te_expr *e = te_int(ctx, 16);
    te_tensor *A = te_placeholder(ctx, "A", TE_F32, 1, &e);
    te_tensor *B = te_placeholder(ctx, "B", TE_F32, 1, &e);
    te_expr *i = te_var(ctx, "i");
    te_tensor *C = te_compute(ctx, "C", 1, &e, &i, te_add(te_at(A, 1, &i), te_at(B, 1, &i)));
    te_schedule *s = te_schedule_new(ctx, 1, &C);
    te_stage *st = te_stage_of(s, C);
    cr_assert_not_null(st);
    te_tensor *Acopy;
    long before = ir_debug_alloc_count(ctx);
    ir_debug_fail_alloc_after(ctx, n);
    te_status r = te_cache_read(s, A, TE_SCOPE_LOCAL, 1, &st, &Acopy);
    ir_debug_fail_alloc_after(ctx, -1);
    if (r == TE_OK) {
      te_ctx_free(ctx);
      break;
    }
    cr_assert_eq(r, TE_ERR_NOMEM);
    (void)before;
    te_module *mod = NULL;
    te_status b =
        te_build(s, "k", 3, (te_tensor *[]){A, B, C}, 0, NULL, te_target_parse(ctx, "llvm"), &mod);
    cr_expect_eq(b, TE_ERR_NOMEM, "n=%ld: %s", n, te_last_error(ctx));
    cr_expect(strstr(te_last_error(ctx), "te_build: the schedule is unusable: an earlier "
                                         "te_cache_read failed (TE_ERR_NOMEM)") != NULL,
              "n=%ld: %s", n, te_last_error(ctx));
    cr_expect_eq(te_split(st, te_axis(st, 0), 4, NULL, NULL), TE_ERR_NOMEM);
    cr_expect_null(te_schedule_trace(s));
    refused++;
    te_ctx_free(ctx);
  }
  cr_expect_gt(refused, 0);
}
