/* test_random_schedules.c — property test: every legal schedule computes the same function as
 * the default schedule.
 *
 * For several workloads (matmul, a producer feeding a reduction, a two-stage stencil, a sum over
 * two axes), random sequences of primitives are applied (split, split_nparts, fuse, reorder,
 * unroll, parallel, vectorize, shift-inwards and round-up tails, compute_inline, compute_at, compute_root,
 * cache_read, cache_write, rfactor, reorder_storage of intermediate and cache buffers) with random arguments. A primitive that refuses its arguments is skipped
 * (its error cleared): what remains is a legal schedule, which must build and give the default
 * schedule's numbers. Seeded and reproducible; a failure prints the seed and the schedule trace,
 * which te_schedule_replay reproduces.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te_test.h"

TestSuite(random_schedules, .init = tt_setup, .fini = tt_teardown, .timeout = 280);

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(rng_state >> 33) % (n ? n : 1);
}

/* Applies a primitive result: a refusal is cleared (the step is skipped). */
static void step(te_status s) {
  if (s != TE_OK) te_clear_error(tt_ctx);
}

static void random_loop_steps(te_stage *st, int nsteps) {
  for (int k = 0; k < nsteps; k++) {
    int n = te_leaf_count(st);
    te_iter *l = te_leaf(st, (int)rnd((uint32_t)n));
    switch (rnd(9)) {
    case 0: step(te_set_tail(st, l, rnd(2) ? TE_TAIL_SHIFT_INWARDS : TE_TAIL_ROUND_UP));
      step(te_split(st, l, 1 + rnd(9), NULL, NULL));
      break;
    case 1: step(te_split(st, l, 1 + rnd(9), NULL, NULL)); break;
    case 2: step(te_split_nparts(st, l, 1 + rnd(4), NULL, NULL)); break;
    case 3:
      if (n >= 2) {
        int p = (int)rnd((uint32_t)n - 1);
        step(te_fuse(st, te_leaf(st, p), te_leaf(st, p + 1), NULL));
      }
      break;
    case 4: {
      te_iter *perm[64];
      for (int i = 0; i < n; i++) perm[i] = te_leaf(st, i);
      for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((uint32_t)i + 1);
        te_iter *t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      step(te_reorder(st, n, perm));
      break;
    }
    case 5: step(te_unroll(st, l)); break;
    case 6: step(te_parallel(st, l)); break;
    case 7: step(te_vectorize(st, l)); break;
    default: {
      int n2 = te_leaf_count(st);
      if (n2 >= 2) {
        te_iter *a = te_leaf(st, (int)rnd((uint32_t)n2)), *b = te_leaf(st, (int)rnd((uint32_t)n2));
        step(te_tile(st, a, b, 1 + rnd(6), 1 + rnd(6), NULL, NULL, NULL, NULL));
      }
    }
    }
  }
}

/* A random placement for a producer stage read by consumer. */
static void random_placement(te_stage *producer, te_stage *consumer) {
  switch (rnd(4)) {
  case 0: step(te_compute_inline(producer)); break;
  case 1: step(te_compute_root(producer)); break;
  default: {
    int n = te_leaf_count(consumer);
    step(te_compute_at(producer, consumer, te_leaf(consumer, (int)rnd((uint32_t)n))));
  }
  }
}

/* One workload: tensors (inputs first, then the output), buffers, the default result. */
typedef struct workload {
  const char *name;
  int nt;
  te_tensor *t[6];
  tt_buf *b[6];
  tt_buf *ref;
  int64_t reduce_len;
  te_tensor *stages[4]; /* computed tensors, producers first; the last is the output */
  int nstages;
  te_tensor *reduction;  /* a tensor whose stage may be rfactored, or NULL */
  te_tensor *cacheable;  /* an input that may be cache_read by the output stage, or NULL */
} workload;

static void run_schedule(workload *w, te_schedule *s, uint64_t seed) {
  char *trace = te_schedule_trace(s);
  if (getenv("TE_RANDOM_SCHEDULES_VERBOSE")) /* a crash loses the note: print before running */
    fprintf(stderr, "%s seed %llu:\n%s", w->name, (unsigned long long)seed, trace ? trace : "?");
  tt_note("workload %s, seed %llu, trace:\n%s", w->name, (unsigned long long)seed, trace ? trace : "?");
  te_free(trace);
  tt_buf *got = w->b[w->nt - 1];
  tt_check(s, w->nt, w->t, w->b, 0, NULL, NULL, got, w->ref, w->reduce_len);
}

static void make_ref(workload *w) {
  tt_buf *out = w->b[w->nt - 1];
  w->ref = tt_alloc(out->dl.dtype, out->dl.ndim, out->shape);
  te_schedule *s = tt_schedule1(w->t[w->nt - 1]);
  te_module *m = tt_build(s, "ref", w->nt, w->t, 0, NULL);
  tt_buf *bufs[6];
  for (int i = 0; i < w->nt; i++) bufs[i] = w->b[i];
  bufs[w->nt - 1] = w->ref;
  tt_call(m, "ref", w->nt, bufs, 0, NULL);
}

/* Sometimes a random storage order for t's buffer (refused, and skipped, for outputs). */
static void random_storage(te_schedule *s, te_tensor *t) {
  if (!t || rnd(3) != 0) return;
  te_stage *st = te_stage_of(s, t);
  int n = te_tensor_ndim(t);
  if (!st || n < 2) {
    te_clear_error(tt_ctx);
    return;
  }
  te_iter *dims[8];
  for (int i = 0; i < n; i++) dims[i] = te_axis(st, i);
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)rnd((uint32_t)i + 1);
    te_iter *x = dims[i];
    dims[i] = dims[j];
    dims[j] = x;
  }
  step(te_reorder_storage(st, n, dims));
}

static void random_case(workload *w, uint64_t seed) {
  rng_state = seed * 2654435761ULL + 12345;
  te_schedule *s = tt_schedule1(w->t[w->nt - 1]);
  te_tensor *out = w->stages[w->nstages - 1];
  te_stage *so = tt_stage(s, out);
  te_tensor *written = NULL, *read = NULL;
  if (rnd(5) == 0) step(te_cache_write(s, out, rnd(2) ? TE_SCOPE_LOCAL : TE_SCOPE_GLOBAL, &written));
  if (w->cacheable && rnd(4) == 0)
    step(te_cache_read(s, w->cacheable, TE_SCOPE_LOCAL, 1, &so, &read));
  random_storage(s, written);
  random_storage(s, read);
  for (int i = 0; i < w->nstages; i++) random_storage(s, w->stages[i]);
  if (w->reduction && rnd(4) == 0) {
    te_stage *sr = te_stage_of(s, w->reduction);
    int n = te_leaf_count(sr);
    te_iter *l = te_leaf(sr, (int)rnd((uint32_t)n));
    step(te_split(sr, l, 1 + rnd(5), NULL, NULL));
    n = te_leaf_count(sr);
    step(te_rfactor(s, w->reduction, te_leaf(sr, (int)rnd((uint32_t)n)), 0, NULL));
  }
  /* every stage of the schedule gets loop steps; producers then a placement */
  for (int i = w->nstages - 1; i >= 0; i--) {
    te_stage *st = te_stage_of(s, w->stages[i]);
    if (st) random_loop_steps(st, (int)rnd(5));
    te_clear_error(tt_ctx);
  }
  for (int i = w->nstages - 2; i >= 0; i--) {
    te_stage *p = te_stage_of(s, w->stages[i]), *c = te_stage_of(s, w->stages[i + 1]);
    if (p && c) random_placement(p, c);
    te_clear_error(tt_ctx);
  }
  run_schedule(w, s, seed);
}

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

static void matmul_workload(workload *w, int64_t M, int64_t N, int64_t K) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(K));
  te_tensor *C = te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                            TE_SUM(te_mul(tt_at2(A, i, k), tt_at2(B, k, j)), k));
  *w = (workload){"matmul", 3, {A, B, TT_NN(C)}, {0}, NULL, K, {C}, 1, C, A};
  w->b[0] = TT_ALLOC(TE_F32, M, K);
  w->b[1] = TT_ALLOC(TE_F32, K, N);
  w->b[2] = TT_ALLOC(TE_F32, M, N);
  tt_fill(w->b[0], 1);
  tt_fill(w->b[1], 2);
}

/* P = A * 2 + 1 (injective), C[i] = sum_j P[i, j] * v[j]. */
static void producer_workload(workload *w, int64_t M, int64_t N) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *v = tt_placeholder("v", TE_F32, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = te_compute(tt_ctx, "P", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                            te_add(te_mul(tt_at2(A, i, j), te_float(tt_ctx, TE_F32, 2)),
                                   te_float(tt_ctx, TE_F32, 1)));
  te_expr *r = te_reduce_axis(tt_ctx, "r", I(0), I(N));
  te_tensor *C = te_compute(tt_ctx, "C", 1, TE_EXPRS(I(M)), TE_EXPRS(i),
                            TE_SUM(te_mul(tt_at2(P, i, r), tt_at1(v, r)), r));
  *w = (workload){"producer", 3, {A, v, TT_NN(C)}, {0}, NULL, N, {P, C}, 2, C, v};
  w->b[0] = TT_ALLOC(TE_F32, M, N);
  w->b[1] = TT_ALLOC(TE_F32, N);
  w->b[2] = TT_ALLOC(TE_F32, M);
  tt_fill(w->b[0], 3);
  tt_fill(w->b[1], 4);
}

/* The classic two-stage 3x3 box blur. */
static void blur_workload(workload *w, int64_t H, int64_t W) {
  te_tensor *in = tt_placeholder("input", TE_F32, 2, TT_SHAPE(H + 2, W + 2));
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_expr *three = te_float(tt_ctx, TE_F32, 3);
  te_tensor *bx = te_compute(
      tt_ctx, "blur_x", 2, TE_EXPRS(I(H + 2), I(W)), TE_EXPRS(y, x),
      te_div(te_add(te_add(tt_at2(in, y, x), tt_at2(in, y, te_add(x, I(1)))), tt_at2(in, y, te_add(x, I(2)))),
             three));
  te_tensor *by = te_compute(
      tt_ctx, "blur_y", 2, TE_EXPRS(I(H), I(W)), TE_EXPRS(y, x),
      te_div(te_add(te_add(tt_at2(bx, y, x), tt_at2(bx, te_add(y, I(1)), x)), tt_at2(bx, te_add(y, I(2)), x)),
             three));
  *w = (workload){"blur", 2, {in, TT_NN(by)}, {0}, NULL, 9, {bx, by}, 2, NULL, in};
  w->b[0] = TT_ALLOC(TE_F32, H + 2, W + 2);
  w->b[1] = TT_ALLOC(TE_F32, H, W);
  tt_fill(w->b[0], 5);
}

/* S[i] = sum_{j,k} X[i, j, k] (max as a second reduction kind over it). */
static void sum2_workload(workload *w, int64_t A0, int64_t A1, int64_t A2) {
  te_tensor *X = tt_placeholder("X", TE_F32, 3, TT_SHAPE(A0, A1, A2));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *j = te_reduce_axis(tt_ctx, "j", I(0), I(A1)), *k = te_reduce_axis(tt_ctx, "k", I(0), I(A2));
  te_tensor *S = te_compute(tt_ctx, "S", 1, TE_EXPRS(I(A0)), TE_EXPRS(i),
                            te_sum(tt_at3(X, i, j, k), 2, TE_EXPRS(j, k)));
  te_expr *i2 = te_var(tt_ctx, "i");
  te_tensor *T = te_compute(tt_ctx, "T", 1, TE_EXPRS(I(A0)), TE_EXPRS(i2),
                            te_max(tt_at1(S, i2), te_float(tt_ctx, TE_F32, 0.5)));
  *w = (workload){"sum2", 2, {X, TT_NN(T)}, {0}, NULL, A1 * A2, {S, T}, 2, S, NULL};
  w->b[0] = TT_ALLOC(TE_F32, A0, A1, A2);
  w->b[1] = TT_ALLOC(TE_F32, A0);
  tt_fill(w->b[0], 6);
}

#define CASES 100

Test(random_schedules, matmul) {
  workload w;
  matmul_workload(&w, 13, 17, 11);
  make_ref(&w);
  for (uint64_t seed = 1; seed <= CASES; seed++) random_case(&w, seed);
}

Test(random_schedules, producer_reduction) {
  workload w;
  producer_workload(&w, 9, 14);
  make_ref(&w);
  for (uint64_t seed = 1; seed <= CASES; seed++) random_case(&w, 1000 + seed);
}

Test(random_schedules, blur) {
  workload w;
  blur_workload(&w, 11, 19);
  make_ref(&w);
  for (uint64_t seed = 1; seed <= CASES; seed++) random_case(&w, 2000 + seed);
}

Test(random_schedules, sum_two_axes) {
  workload w;
  sum2_workload(&w, 5, 7, 6);
  make_ref(&w);
  for (uint64_t seed = 1; seed <= CASES; seed++) random_case(&w, 3000 + seed);
}
