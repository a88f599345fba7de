/* test_random_schedules.c — property test: every legal schedule computes the function its
 * definition says, checked against a plain C evaluation of that definition.
 *
 * Workloads (random_workloads.h, each with a C reference written out by hand): matmul; a producer
 * feeding a reduction; a two-stage stencil; a sum over two axes; symbolic shapes with a scalar
 * parameter (one kernel called at two sizes); integer ops feeding an f64 contraction; an i32 matmul
 * (exact); a multi-output element-wise stage read by a custom argmax reducer with two outputs;
 * a zero-padding stage written with te_if_then_else under a 3x3 convolution; a matmul of strided
 * inputs (a transposed view and a crop, te_placeholder_strided); a gemm whose sum
 * sits inside the expression (alpha * sum + C0, lifted into C_red0, which sometimes keeps its
 * default placement fused into C); a nested reduction lifted into two stages; a scan with a
 * dependent axis (whose order many random schedules break: te_build refuses those); an extern
 * stage (te_extern) between two te stages (its loop primitives and inlining refused). On each,
 * random sequences of primitives are applied with random arguments (split, split_nparts, tile,
 * fuse, reorder, unroll, parallel, vectorize, set_tail, pragma unroll_max_step/prefetch,
 * compute_inline/root/at, cache_read, cache_write, rfactor, reorder_storage, and te_specialize
 * on a random condition over the sizes with a random branch schedule) at a random
 * parallel thread count. A primitive may refuse its arguments: the step is then skipped and its
 * error cleared, so what remains is a legal schedule; te_build may still refuse it with
 * TE_ERR_SCHEDULE (a vectorized loop without a constant extent) and a message. A schedule that
 * builds must give the reference's numbers (outputs poisoned before every call), and its trace,
 * replayed on a fresh schedule, must lower to the same IR.
 *
 * Accepted steps are counted per primitive: each workload names the primitives it must see
 * accepted at least once, so a change that made a primitive refuse everything fails here
 * instead of comparing default schedules with themselves. A GPU test binds random splits to
 * blocks and threads and runs them on Vulkan (Mesa's lavapipe without a GPU).
 *
 * Seeds: a fixed corpus, then a few cases from each run seed of a fixed list (seeds that found
 * bugs and a few that passed), so that every run, CI's included, checks the same schedules.
 * TE_RANDOM_SCHEDULES_SEED=N runs run seed N instead of the list (to repeat a failure),
 * TE_RANDOM_SCHEDULES_SEED=random a fresh one (scripts/explore-schedules.sh runs many);
 * TE_RANDOM_SCHEDULES_CASES=N sets the number of cases per run seed and workload (a longer
 * search). Every failure prints the case's seed, its run seed and the trace;
 * TE_RANDOM_SCHEDULES_VERBOSE=1 prints each refusal, and each trace before it runs (a crash loses
 * the note). Under AddressSanitizer the fixed corpus is smaller and the counts are only printed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "random_workloads.h"
#include "te_test.h"

/* Under AddressSanitizer (several times slower) a prefix of the corpus runs; too few cases to
   promise that every primitive gets accepted, so the counts are printed but not required there
   (the RelWithDebInfo suite requires them). */
#if defined(__SANITIZE_ADDRESS__)
#define FIXED_CASES 16
#define RUN_CASES 2
#define GPU_CASES 3
#define REQUIRE_COUNTS 0
#else
#define FIXED_CASES 40
#define RUN_CASES 10
#define GPU_CASES 8
#define REQUIRE_COUNTS 1
#endif

static void suite_fini(void);
TestSuite(random_schedules, .init = tt_setup, .fini = suite_fini, .timeout = 280);

/* ---------------------------------------------------------------- seeds */

/* splitmix64: consecutive draws are independent (an LCG's high bits made a cache_write and the
   next draw's cache_read coincide). */
static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (uint32_t)(z % (n ? n : 1));
}

/* The run seeds. By default (CTest, `make test`) a fixed list, so that every run checks the
   same schedules: seeds that once found a bug (each fixed with a named regression test: here,
   in test/errors or in test/fuzz/regressions) and a few that passed. TE_RANDOM_SCHEDULES_SEED=N
   runs run seed N alone (to repeat a failure); TE_RANDOM_SCHEDULES_SEED=random a fresh one, chosen
   once by the runner process before the tests (each in a process of its own) start and passed to
   them in the environment. Exploring fresh seeds: scripts/explore-schedules.sh. A fresh seed that
   finds a bug joins this list with the fix. */
static const uint64_t fixed_run_seeds[] = {
    32806395,  /* SIGFPE: a zero divisor in masked vector code */
    176212385, /* scan axis pieces out of order */
    176466452, /* scan axis pieces out of order */
    187238261, /* a prefetch of a buffer allocated inside the loop */
    412915428, /* vectorize: a tail widened with the steady state's memo */
    818127778, /* a rounded-up inner split summed points twice */
    919040777, /* a fused loop rounded up wrote past its buffer */
    1,         /* passing seeds */
    20261201,
};
#define NFIXED_RUN_SEEDS ((int)(sizeof fixed_run_seeds / sizeof fixed_run_seeds[0]))

ReportHook(PRE_ALL)(struct criterion_test_set *tests) {
  (void)tests;
  const char *env = getenv("TE_RANDOM_SCHEDULES_SEED");
  if (env && !strcmp(env, "random")) {
    char buf[32];
    snprintf(buf, sizeof buf, "%llu",
             (unsigned long long)((((uint64_t)time(NULL) * 1000003u) ^ ((uint64_t)getpid() << 16)) %
                                  1000000007u));
    setenv("TE_RANDOM_SCHEDULES_SEED", buf, 1);
    env = getenv("TE_RANDOM_SCHEDULES_SEED");
  }
  if (env && *env)
    fprintf(stderr,
            "random_schedules: run seed %s (TE_RANDOM_SCHEDULES_SEED=%s repeats this run)\n", env,
            env);
  else
    fprintf(stderr,
            "random_schedules: the %d fixed run seeds (TE_RANDOM_SCHEDULES_SEED=N runs seed N, "
            "=random a fresh one)\n",
            NFIXED_RUN_SEEDS);
}

/* The run seeds of this run: the environment's one, else the fixed list. */
static int run_seeds(const uint64_t **seeds) {
  static uint64_t one;
  const char *env = getenv("TE_RANDOM_SCHEDULES_SEED");
  if (env && *env) {
    char *end;
    one = strtoull(env, &end, 10);
    cr_assert(end != env && !*end, "TE_RANDOM_SCHEDULES_SEED='%s': expected a number or 'random'",
              env);
    *seeds = &one;
    return 1;
  }
  *seeds = fixed_run_seeds;
  return NFIXED_RUN_SEEDS;
}

static int run_cases(void) {
  const char *env = getenv("TE_RANDOM_SCHEDULES_CASES");
  return env && *env ? atoi(env) : RUN_CASES;
}

/* Strings te returned for the current case (traces, lowered IR): a failing assertion leaves the
   test function early, so the suite's fini frees what the case did not (LeakSanitizer reported
   them next to the real failure). */
#define MAX_CASE_STRINGS 16
static char *case_strings[MAX_CASE_STRINGS];

static char *case_string(char *s) {
  for (int i = 0; s && i < MAX_CASE_STRINGS; i++)
    if (!case_strings[i])
      return case_strings[i] = s;
  cr_assert(!s, "more than %d strings held for one case", MAX_CASE_STRINGS);
  return s;
}

static void free_case_strings(void) {
  for (int i = 0; i < MAX_CASE_STRINGS; i++) {
    te_free(case_strings[i]);
    case_strings[i] = NULL;
  }
}

static void suite_fini(void) {
  free_case_strings();
  tt_teardown();
}

/* ---------------------------------------------------------------- counting primitives */

/* Per test (Criterion runs each test in its own process). */
static int accepted[P_COUNT], tried[P_COUNT];
static int cases_built, cases_refused;

/* Applies a primitive's result: a refusal must be a user error with a message; it is cleared
   (the step is skipped). */
static void step(enum prim p, te_status s) {
  tried[p]++;
  if (s == TE_OK) {
    accepted[p]++;
    return;
  }
  cr_assert(s != TE_ERR_INTERNAL && s != TE_ERR_CODEGEN && *te_last_error(tt_ctx),
            "[%s] te_%s refused with %s: '%s'", tt_note_text(), prim_name[p], te_status_str(s),
            te_last_error(tt_ctx));
  if (getenv("TE_RANDOM_SCHEDULES_VERBOSE"))
    fprintf(stderr, "  refused: %s\n", te_last_error(tt_ctx));
  te_clear_error(tt_ctx);
}

/* Every primitive of `must` was accepted at least once; prints the counts. */
static void check_counts(const char *name, unsigned must) {
  char line[1024];
  size_t k = (size_t)snprintf(line, sizeof line,
                              "random_schedules %s: %d built, %d refused by "
                              "te_build; accepted/tried:",
                              name, cases_built, cases_refused);
  for (int p = 0; p < P_COUNT && k < sizeof line; p++)
    if (tried[p])
      k += (size_t)snprintf(line + k, sizeof line - k, " %s %d/%d", prim_name[p], accepted[p],
                            tried[p]);
  printf("%s\n", line);
  fflush(stdout);
  for (int p = 0; p < P_COUNT && REQUIRE_COUNTS; p++)
    if (must & BIT(p))
      cr_expect(accepted[p] > 0, "%s: te_%s was never accepted (%d tries)", name, prim_name[p],
                tried[p]);
  /* te_build refuses a vectorized loop without a constant extent (often, with symbolic sizes);
     refusing most schedules would leave little checked */
  cr_expect(cases_built >= cases_refused, "%s: te_build refused %d of %d schedules", name,
            cases_refused, cases_built + cases_refused);
}

/* ---------------------------------------------------------------- random CPU schedules */

static void random_loop_steps(te_stage *st, int nsteps) {
  for (int k = 0; k < nsteps; k++) {
    int n = te_leaf_count(st);
    te_iter *l = te_leaf(st, (int)rnd((uint32_t)n));
    switch (rnd(12)) {
    case 0:
      step(P_SET_TAIL, te_set_tail(st, l, rnd(2) ? TE_TAIL_SHIFT_INWARDS : TE_TAIL_ROUND_UP));
      step(P_SPLIT, te_split(st, l, 1 + rnd(9), NULL, NULL));
      break;
    case 1:
      step(P_SPLIT, te_split(st, l, 1 + rnd(9), NULL, NULL));
      break;
    case 2:
      step(P_SPLIT_NPARTS, te_split_nparts(st, l, 1 + rnd(4), NULL, NULL));
      break;
    case 3:
      if (n >= 2) {
        int p = (int)rnd((uint32_t)n - 1);
        step(P_FUSE, te_fuse(st, te_leaf(st, p), te_leaf(st, p + 1), NULL));
      }
      break;
    case 4: {
      te_iter *perm[64];
      for (int i = 0; i < n; i++)
        perm[i] = te_leaf(st, i);
      for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((uint32_t)i + 1);
        te_iter *t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      step(P_REORDER, te_reorder(st, n, perm));
      break;
    }
    case 5:
      step(P_UNROLL, te_unroll(st, l));
      break;
    case 6:
      step(P_PARALLEL, te_parallel(st, l));
      break;
    case 7:
      step(P_VECTORIZE, te_vectorize(st, l));
      break;
    case 8:
      step(P_PRAGMA, te_pragma(st, l, rnd(2) ? "prefetch" : "unroll_max_step", 1 + rnd(8)));
      break;
    case 9:
      step(P_SET_TAIL, te_set_tail(st, l, (te_tail)rnd(3)));
      break;
    default:
      if (n >= 2) {
        te_iter *a = te_leaf(st, (int)rnd((uint32_t)n)), *b = te_leaf(st, (int)rnd((uint32_t)n));
        step(P_TILE, te_tile(st, a, b, 1 + rnd(6), 1 + rnd(6), NULL, NULL, NULL, NULL));
      }
    }
  }
}

/* A random placement for a producer stage read by consumer. */
static void random_placement(te_stage *producer, te_stage *consumer) {
  switch (rnd(4)) {
  case 0:
    step(P_COMPUTE_INLINE, te_compute_inline(producer));
    break;
  case 1:
    step(P_COMPUTE_ROOT, te_compute_root(producer));
    break;
  default: {
    int n = te_leaf_count(consumer);
    step(P_COMPUTE_AT, te_compute_at(producer, consumer, te_leaf(consumer, (int)rnd((uint32_t)n))));
  }
  }
}

/* Sometimes a random storage order for t's buffer (refused, and skipped, for outputs), half
   the time blocked: some axes split by a factor that need not divide them, stored as their two
   parts (the split stays in the loops). */
static void random_storage(te_schedule *s, te_tensor *t) {
  if (!t || rnd(3) != 0)
    return;
  te_stage *st = te_stage_of(s, t);
  int nd = te_tensor_ndim(t), n = 0;
  if (!st || nd < 2) {
    te_clear_error(tt_ctx);
    return;
  }
  te_iter *dims[16];
  bool blocked = rnd(2) == 0;
  for (int i = 0; i < nd; i++) {
    te_iter *o = NULL, *in = NULL;
    if (blocked && rnd(2) == 0 && te_split(st, te_axis(st, i), 1 + rnd(5), &o, &in) == TE_OK) {
      dims[n++] = o;
      dims[n++] = in;
    } else {
      te_clear_error(tt_ctx);
      dims[n++] = te_axis(st, i);
    }
  }
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)rnd((uint32_t)i + 1);
    te_iter *x = dims[i];
    dims[i] = dims[j];
    dims[j] = x;
  }
  step(P_REORDER_STORAGE, te_reorder_storage(st, n, dims));
}

static te_schedule *new_schedule(workload *w) {
  te_schedule *s = te_schedule_new(tt_ctx, w->nout, w->t + w->nin);
  cr_assert(s, "te_schedule_new: %s", te_last_error(tt_ctx));
  return s;
}

static void random_schedule(workload *w, te_schedule *s) {
  te_tensor *out = w->stages[w->nstages - 1];
  te_stage *reader = tt_stage(s, w->reader ? w->reader : out);
  te_tensor *written = NULL, *read = NULL;
  /* cache_read first: after a cache_write the output stage reads the write cache, not inputs */
  if (w->cacheable && rnd(4) == 0)
    step(P_CACHE_READ, te_cache_read(s, w->cacheable, TE_SCOPE_LOCAL, 1, &reader, &read));
  if (rnd(5) == 0)
    step(P_CACHE_WRITE,
         te_cache_write(s, out, rnd(2) ? TE_SCOPE_LOCAL : TE_SCOPE_GLOBAL, &written));
  random_storage(s, written);
  random_storage(s, read);
  for (int i = 0; i < w->nstages; i++)
    random_storage(s, w->stages[i]);
  if (w->reduction && rnd(4) == 0) {
    te_stage *sr = te_stage_of(s, w->reduction);
    int n = te_leaf_count(sr);
    step(P_SPLIT, te_split(sr, te_leaf(sr, (int)rnd((uint32_t)n)), 1 + rnd(5), NULL, NULL));
    n = te_leaf_count(sr);
    step(P_RFACTOR, te_rfactor(s, w->reduction, te_leaf(sr, (int)rnd((uint32_t)n)), 0, NULL));
  }
  /* every stage of the schedule gets loop steps; producers then a placement */
  for (int i = w->nstages - 1; i >= 0; i--) {
    te_stage *st = te_stage_of(s, w->stages[i]);
    if (st)
      random_loop_steps(st, (int)rnd(6));
    te_clear_error(tt_ctx);
  }
  for (int i = w->nstages - 2; i >= 0; i--) {
    te_stage *p = te_stage_of(s, w->stages[i]), *c = te_stage_of(s, w->stages[i + 1]);
    if (p && c && !(w->keep_default && rnd(3) == 0))
      random_placement(p, c);
    te_clear_error(tt_ctx);
  }
}

/* te_specialize on a random condition over an input's extents (symbolic: the symbolic
   workload's two sizes meet and miss it; constant: it folds to true or false), the branch
   scheduled at random on its own. */
static te_expr *random_condition(workload *w) {
  static const int64_t consts[] = {1, 2, 5, 7, 8, 13, 16};
  te_tensor *in = w->t[rnd((uint32_t)w->nin)];
  int nd = te_tensor_ndim(in);
  if (nd < 1)
    return NULL;
  te_expr *d = te_tensor_dim(in, (int)rnd((uint32_t)nd));
  te_expr *c = te_int(tt_ctx, consts[rnd(7)]);
  te_expr *a;
  switch (rnd(4)) {
  case 0:
    a = te_eq(te_floormod(d, te_int(tt_ctx, 1 + (int64_t)rnd(5))), te_int(tt_ctx, 0));
    break;
  case 1:
    a = te_lt(d, c);
    break;
  case 2:
    a = te_eq(d, c);
    break;
  default:
    a = te_ge(d, c);
  }
  return rnd(3) ? a : te_and(a, random_condition(w));
}

static void random_specialize(workload *w, te_schedule *s) {
  uint64_t saved = rng_state; /* a stream of its own: the general schedule stays the seed's */
  rng_state = saved * 0x9E3779B97F4A7C15ULL + 77;
  te_expr *cond = random_condition(w);
  te_schedule *b = NULL;
  if (cond)
    step(P_SPECIALIZE, te_specialize(s, cond, &b));
  if (b)
    random_schedule(w, b);
  rng_state = saved;
}

/* ---------------------------------------------------------------- checking a schedule */

/* The trace of s replays on a fresh schedule of the same computation to the same loop IR. */
static void check_replay(workload *w, te_schedule *s, const char *trace) {
  te_schedule *s2 = new_schedule(w);
  TT_OK(te_schedule_replay(s2, trace));
  char *t2 = case_string(te_schedule_trace(s2));
  cr_assert(t2 && !strcmp(trace, t2), "[%s] the replayed schedule's trace differs:\n%s",
            tt_note_text(), t2);
  char *a = case_string(te_lower_text(s, w->nin + w->nout, w->t, w->ns, w->scalars));
  te_status sa = te_last_status(tt_ctx);
  te_clear_error(tt_ctx);
  char *b = case_string(te_lower_text(s2, w->nin + w->nout, w->t, w->ns, w->scalars));
  te_status sb = te_last_status(tt_ctx);
  te_clear_error(tt_ctx);
  cr_assert(sa == sb && (a == NULL) == (b == NULL),
            "[%s] replay lowers with %s, the schedule with %s", tt_note_text(), te_status_str(sb),
            te_status_str(sa));
  cr_assert(!a || !strcmp(a, b), "[%s] the replayed schedule lowers to other IR:\n%s\n--- vs\n%s",
            tt_note_text(), a, b);
}

/* Builds s for target (NULL: the host), runs it at every size variant with the outputs
   poisoned and compares each output with the reference; a build refusal is counted. */
static void build_and_compare(workload *w, te_schedule *s, te_target *target, const char *kernel) {
  te_module *m = NULL;
  te_status st = te_build(s, kernel, w->nin + w->nout, w->t, w->ns, w->scalars,
                          target ? target : tt_target(), &m);
  if (st != TE_OK) {
    cr_assert(st == TE_ERR_SCHEDULE && *te_last_error(tt_ctx),
              "[%s] te_build refused an accepted schedule with %s: %s", tt_note_text(),
              te_status_str(st), te_last_error(tt_ctx));
    cases_refused++;
    te_clear_error(tt_ctx);
    return;
  }
  cases_built++;
  for (int v = 0; v < w->nvariants; v++) {
    for (int o = 0; o < w->nout; o++)
      tt_poison(w->b[v][w->nin + o]);
    const void *values[2] = {&w->alpha[v], NULL};
    DLTensor *dl[8];
    tt_dl(w->nin + w->nout, w->b[v], dl);
    st = te_module_call(m, kernel, w->nin + w->nout, dl, w->ns, values);
    if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
      tt_skip("vulkan", "workload %s: %s", w->name, te_last_error(tt_ctx));
    cr_assert(st == TE_OK, "[%s] the kernel failed: %s", tt_note_text(), te_last_error(tt_ctx));
    for (int o = 0; o < w->nout; o++)
      tt_assert_close(w->b[v][w->nin + o], w->ref[v][o], w->reduce_len);
  }
}

/* The run seed that made the current case (0: the fixed corpus or a regression test). */
static uint64_t case_run_seed;

static void random_case(workload *w, uint64_t seed) {
  rng_state = seed * 2654435761ULL + 12345;
  int threads = 1 + (int)rnd(4);
  te_set_num_threads(threads);
  te_schedule *s = new_schedule(w);
  /* 0, 1: a specialization before or after the general steps; drawn from the seed, not the
     generator, so the general schedule of every older seed stays what it was */
  int special = (int)(((seed * 0x9E3779B97F4A7C15ULL) >> 59) % 6);
  if (special == 0)
    random_specialize(w, s);
  random_schedule(w, s);
  if (special == 1)
    random_specialize(w, s);
  char *trace = case_string(te_schedule_trace(s));
  const char *verbose = getenv("TE_RANDOM_SCHEDULES_VERBOSE");
  if (verbose)
    fprintf(stderr, "%s seed %llu, %d threads:\n%s", w->name, (unsigned long long)seed, threads,
            trace ? trace : "?");
  if (verbose && !strcmp(verbose, "2")) { /* and the loop IR, which a crashing kernel loses too */
    char *ir = case_string(te_lower_text(s, w->nin + w->nout, w->t, w->ns, w->scalars));
    fprintf(stderr, "%s\n", ir ? ir : te_last_error(tt_ctx));
    te_clear_error(tt_ctx);
  }
  char from[96] = "fixed corpus";
  if (case_run_seed)
    snprintf(from, sizeof from, "run seed %llu: TE_RANDOM_SCHEDULES_SEED=%llu repeats it",
             (unsigned long long)case_run_seed, (unsigned long long)case_run_seed);
  tt_note("workload %s, seed %llu (%s), %d threads, trace:\n%s", w->name, (unsigned long long)seed,
          from, threads, trace ? trace : "?");
  build_and_compare(w, s, NULL, "k");
  check_replay(w, s, trace);
  free_case_strings();
  te_set_num_threads(0);
}

/* The fixed corpus (seeds base+1 .. base+FIXED_CASES), then the cases of each run seed. */
static void run_workload(workload *w, uint64_t base) {
  for (uint64_t k = 1; k <= FIXED_CASES; k++)
    random_case(w, base + k);
  const uint64_t *seeds;
  int nseeds = run_seeds(&seeds);
  for (int i = 0; i < nseeds; i++) {
    case_run_seed = seeds[i];
    for (int k = 0; k < run_cases(); k++)
      random_case(w, (seeds[i] * 7919u + base) * 131u + (uint64_t)k);
  }
  case_run_seed = 0;
  check_counts(w->name, w->must);
}

Test(random_schedules, matmul) {
  workload w;
  matmul_workload(&w, TE_F32, 13, 17, 11);
  run_workload(&w, 0);
}

Test(random_schedules, producer_reduction) {
  workload w;
  producer_workload(&w, 9, 14);
  run_workload(&w, 1000);
}

Test(random_schedules, blur) {
  workload w;
  blur_workload(&w, 11, 19);
  run_workload(&w, 2000);
}

Test(random_schedules, sum_two_axes) {
  workload w;
  sum2_workload(&w, 5, 7, 6);
  run_workload(&w, 3000);
}

Test(random_schedules, symbolic_shapes_and_parameter) {
  workload w;
  symbolic_workload(&w);
  run_workload(&w, 4000);
}

Test(random_schedules, int_ops_into_f64) {
  workload w;
  int_f64_workload(&w, 7, 6, 9);
  run_workload(&w, 5000);
}

Test(random_schedules, int32_matmul) {
  workload w;
  matmul_workload(&w, TE_I32, 6, 5, 9);
  run_workload(&w, 6000);
}

Test(random_schedules, multi_output_custom_reducer) {
  workload w;
  argmax_workload(&w, 7, 10);
  run_workload(&w, 7000);
}

Test(random_schedules, lifted_reduction) {
  workload w;
  lifted_workload(&w, 9, 13, 11);
  run_workload(&w, 9000);
}

Test(random_schedules, nested_lifted_reductions) {
  workload w;
  nested_lifted_workload(&w, 7, 9, 6);
  run_workload(&w, 10000);
}

/* Found by run seed 32806395: a fused loop inside vectorized code, its extent moved into the
   vector mask and 0 there, still divided its index by that extent (i.k.f // extent): SIGFPE in
   the kernel. Scalar divisors inside masked code are now never 0 (lib/codegen/llvm_expr.c). */
Test(random_schedules, nested_lifted_masked_zero_divisor) {
  workload w;
  nested_lifted_workload(&w, 7, 9, 6);
  random_case(&w, 34032994612664ULL);
}

/* Found by run seed 818127778: a rounded-up inner loop of a split (split D_red1 k 3, set_tail
   k.i round_up, split k.i 2) ran into the next outer iteration's points, and with the reduce
   loop l outside those data loops each such point summed its terms twice. The guard now stays
   where the padding is not past the end and recomputing is not harmless
   (lib/schedule/stage_values.c). */
Test(random_schedules, nested_lifted_round_up_inner_split) {
  workload w;
  nested_lifted_workload(&w, 7, 9, 6);
  random_case(&w, 848716758801642ULL);
}

/* Found by run seed 412915428: the scan computed at Y's vectorized loop a (a copy of S per lane)
   with i split by 6 (i.o split by 1 first): the tail of i read S[t - 1, i + 1] without the clamp
   at N - 1, past the end of a row. Vectorize widened the tail with the steady state's memo,
   simplified under the steady state's range of i (lib/lower/vectorize.c). */
Test(random_schedules, scan_at_vectorized_loop_tail) {
  workload w;
  scan_workload(&w, 13, 9);
  random_case(&w, 428353924378499ULL);
}

Test(random_schedules, scan) {
  workload w;
  scan_workload(&w, 13, 9);
  run_workload(&w, 11000);
}

Test(random_schedules, extern_stage) {
  workload w;
  extern_workload(&w, 13, 9, 7);
  run_workload(&w, 12000);
}

Test(random_schedules, if_then_else_padding) {
  workload w;
  pad_conv_workload(&w, 8, 11);
  run_workload(&w, 8000);
}

Test(random_schedules, strided_inputs) {
  workload w;
  strided_matmul_workload(&w, 11, 13, 9);
  run_workload(&w, 9000);
}

Test(random_schedules, lowp_f16_bf16_f32_accumulator) {
  workload w;
  lowp_workload(&w, 11, 15);
  run_workload(&w, 8500);
}

/* a sum accumulated in bf16 itself: every schedule rounds the same additions (short K) */
Test(random_schedules, bf16_matmul) {
  workload w;
  matmul_workload(&w, TE_BF16, 7, 19, 5);
  run_workload(&w, 8700);
}

/* ---------------------------------------------------------------- GPU bindings (Vulkan) */

/* Binds the data loops of a stage: fused or not, split by a random power of two, outer loops to
   blocks and inner ones to threads; a reduction stays a serial loop in each thread. */
static void random_binding(te_stage *st, int ndata) {
  te_iter *x = te_axis(st, 0), *y = ndata >= 2 ? te_axis(st, 1) : NULL;
  if (y && rnd(2)) {
    te_iter *f = NULL;
    step(P_FUSE, te_fuse(st, x, y, &f));
    x = f ? f : x;
    y = f ? NULL : y;
  }
  te_iter *xo = NULL, *xi = NULL, *yo = NULL, *yi = NULL;
  step(P_SPLIT, te_split(st, x, (int64_t)1 << rnd(6), &xo, &xi));
  if (y)
    step(P_SPLIT, te_split(st, y, (int64_t)1 << rnd(4), &yo, &yi));
  if (xo && yo)
    step(P_REORDER, te_reorder(st, 4, (te_iter *const[]){xo, yo, xi, yi}));
  if (xo)
    step(P_BIND, te_bind(st, xo, TE_BLOCK_X));
  if (xi)
    step(P_BIND, te_bind(st, xi, TE_THREAD_X));
  if (yo)
    step(P_BIND, te_bind(st, yo, TE_BLOCK_Y));
  if (yi)
    step(P_BIND, te_bind(st, yi, TE_THREAD_Y));
  if (rnd(2) && te_leaf_count(st) > 4)
    step(P_UNROLL, te_unroll(st, te_leaf(st, te_leaf_count(st) - 1)));
}

static void gpu_case(workload *w, te_target *vk, uint64_t seed) {
  rng_state = seed * 2654435761ULL + 777;
  te_schedule *s = new_schedule(w);
  te_tensor *out = w->stages[w->nstages - 1];
  random_binding(tt_stage(s, out), te_tensor_ndim(out));
  for (int i = w->nstages - 2; i >= 0; i--) { /* producers: inlined or their own kernel */
    te_stage *p = tt_stage(s, w->stages[i]);
    if (rnd(2))
      step(P_COMPUTE_INLINE, te_compute_inline(p));
    else
      random_binding(p, te_tensor_ndim(w->stages[i]));
  }
  char *trace = case_string(te_schedule_trace(s));
  tt_note("vulkan workload %s, seed %llu, trace:\n%s", w->name, (unsigned long long)seed,
          trace ? trace : "?");
  build_and_compare(w, s, vk, "g");
  check_replay(w, s, trace);
  free_case_strings();
}

Test(random_schedules, gpu_bindings_on_vulkan) {
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  workload mm, blur;
  matmul_workload(&mm, TE_F32, 9, 21, 7);
  blur_workload(&blur, 6, 37);
  for (int k = 1; k <= GPU_CASES; k++) {
    gpu_case(&mm, vk, 9000 + (uint64_t)k);
    gpu_case(&blur, vk, 9500 + (uint64_t)k);
  }
  const uint64_t *seeds;
  int nseeds = run_seeds(&seeds);
  for (int i = 0; i < nseeds; i++) {
    gpu_case(&mm, vk, seeds[i]);
    gpu_case(&blur, vk, seeds[i] + 1);
  }
  check_counts("vulkan", BIT(P_BIND) | BIT(P_SPLIT) | BIT(P_FUSE) | BIT(P_COMPUTE_INLINE));
}
