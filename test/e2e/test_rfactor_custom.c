/* test_rfactor_custom.c — te_rfactor of reductions by custom reducers (te_reducer_new): an argmax
 * (index and value factored together) and a Welford (count, mean, M2) combiner, each with the
 * partial results in vector lanes, with reduce extents the factor does not divide, against a
 * plain reference in double; and a conditional custom sum factored on its only reduce leaf
 * (the partials are the values themselves, the identity where the condition fails).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "te_test.h"

TestSuite(rfactor_custom, .init = tt_setup, .fini = tt_teardown);

/* argmax with ties going to the smaller index, so the result does not depend on the order the
   partials are combined in */
static te_reducer *argmax_reducer(void) {
  te_expr *li = te_param(tt_ctx, "li", TE_I32), *lv = te_param(tt_ctx, "lv", TE_F32);
  te_expr *ri = te_param(tt_ctx, "ri", TE_I32), *rv = te_param(tt_ctx, "rv", TE_F32);
  te_expr *take = te_or(te_gt(rv, lv), te_and(te_eq(rv, lv), te_lt(ri, li)));
  te_expr *res[2] = {te_select(take, ri, li), te_max(lv, rv)};
  te_expr *id[2] = {te_const(tt_ctx, TE_I32, 1 << 30), te_const(tt_ctx, TE_F32, -INFINITY)};
  return TT_NN(te_reducer_new(tt_ctx, 2, TE_EXPRS(li, lv), TE_EXPRS(ri, rv), res, id));
}

/* The rf stage's leaves put in the order [data..., reduce..., rfactored axis] and that axis
   vectorized (the partials in vector lanes). */
static void vectorize_rf(te_schedule *s, te_tensor *rf, int axis) {
  te_stage *rs = tt_stage(s, rf);
  te_iter *lanes = te_axis(rs, axis);
  te_iter *other = te_axis(rs, 1 - axis);
  TT_OK(te_reorder(rs, 3, (te_iter *const[]){other, te_reduce_iter(rs, 0), lanes}));
  TT_OK(te_vectorize(rs, lanes));
}

/* idx[i], val[i] = argmax_k A[i, k], k split by `lanes` and k.i rfactored at axis; M x K */
static void argmax_case(int64_t M, int64_t K, int lanes, int axis) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *vals[2] = {te_cast(TE_I32, k), tt_at2(A, i, k)}, *red[2];
  TT_OK(te_reduce(argmax_reducer(), 2, vals, 1, &k, NULL, red));
  te_tensor *outs[2];
  TT_OK(te_compute_multi(tt_ctx, "amax", 1, TE_EXPRS(te_int(tt_ctx, M)), &i, 2, red, outs));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, 2, outs));
  te_stage *st = tt_stage(s, outs[0]);
  te_iter *ko, *ki;
  TT_OK(te_split(st, te_reduce_iter(st, 0), lanes, &ko, &ki));
  te_tensor *rf = NULL;
  TT_OK(te_rfactor(s, outs[0], ki, axis, &rf));
  cr_assert_not_null(rf);
  vectorize_rf(s, rf, axis);
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *gi = TT_ALLOC(TE_I32, M), *gv = TT_ALLOC(TE_F32, M);
  tt_buf *ri = TT_ALLOC(TE_I32, M), *rv = TT_ALLOC(TE_F32, M);
  tt_fill(a, 17 + (uint64_t)axis);
  for (int64_t r = 0; r < M; r++) {
    int64_t best = -1;
    double bv = -INFINITY;
    for (int64_t c = 0; c < K; c++)
      if (tt_get(a, r * K + c) > bv)
        bv = tt_get(a, r * K + c), best = c;
    tt_seti(ri, r, best);
    tt_set(rv, r, bv);
  }
  te_module *m = tt_build(s, "amax", 3, TT_TENSORS(A, outs[0], outs[1]), 0, NULL);
  tt_poison(gi);
  tt_poison(gv);
  tt_call(m, "amax", 3, TT_BUFS(a, gi, gv), 0, NULL);
  tt_assert_close(gi, ri, 1);
  tt_assert_close(gv, rv, 1);
}

Test(rfactor_custom, argmax_lanes_axis0) { argmax_case(7, 37, 8, 0); }
Test(rfactor_custom, argmax_lanes_axis1) { argmax_case(5, 50, 16, 1); }

/* Welford's combination of two (count, mean, M2) states; the weight rn / max(n, 1) keeps the
   combination of two empty states (lanes no element reached) at the identity (0, 0, 0). */
static te_reducer *welford_reducer(te_dtype t) {
  te_expr *ln = te_param(tt_ctx, "ln", t), *lm = te_param(tt_ctx, "lm", t);
  te_expr *lq = te_param(tt_ctx, "lq", t), *rn = te_param(tt_ctx, "rn", t);
  te_expr *rm = te_param(tt_ctx, "rm", t), *rq = te_param(tt_ctx, "rq", t);
  te_expr *n = te_add(ln, rn), *d = te_sub(rm, lm);
  te_expr *w = te_div(rn, te_max(n, te_const(tt_ctx, t, 1)));
  te_expr *res[3] = {n, te_add(lm, te_mul(d, w)),
                     te_add(te_add(lq, rq), te_mul(te_mul(d, d), te_mul(ln, w)))};
  te_expr *zero = te_const(tt_ctx, t, 0);
  return TT_NN(te_reducer_new(tt_ctx, 3, TE_EXPRS(ln, lm, lq), TE_EXPRS(rn, rm, rq), res,
                              TE_EXPRS(zero, zero, zero)));
}

/* count, mean, M2 of each row of A (M x K), k split by lanes and k.i rfactored, vectorized */
static void welford_case(te_dtype t, int64_t M, int64_t K, int lanes) {
  te_tensor *A = tt_placeholder("A", t, 2, TT_SHAPE(M, K));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *vals[3] = {te_const(tt_ctx, t, 1), tt_at2(A, i, k), te_const(tt_ctx, t, 0)}, *red[3];
  TT_OK(te_reduce(welford_reducer(t), 3, vals, 1, &k, NULL, red));
  te_tensor *outs[3];
  TT_OK(te_compute_multi(tt_ctx, "wf", 1, TE_EXPRS(te_int(tt_ctx, M)), &i, 3, red, outs));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, 3, outs));
  te_stage *st = tt_stage(s, outs[0]);
  te_iter *ko, *ki;
  TT_OK(te_split(st, te_reduce_iter(st, 0), lanes, &ko, &ki));
  te_tensor *rf = NULL;
  TT_OK(te_rfactor(s, outs[1], ki, 0, &rf)); /* any output names the stage */
  vectorize_rf(s, rf, 0);
  tt_buf *a = TT_ALLOC(t, M, K);
  tt_buf *g[3] = {TT_ALLOC(t, M), TT_ALLOC(t, M), TT_ALLOC(t, M)};
  tt_buf *ref[3] = {TT_ALLOC(t, M), TT_ALLOC(t, M), TT_ALLOC(t, M)};
  tt_fill_range(a, 5, 0.5, 3.0); /* one sign: the mean is no cancellation near zero */
  for (int64_t r = 0; r < M; r++) {
    double sum = 0, q = 0;
    for (int64_t c = 0; c < K; c++)
      sum += tt_get(a, r * K + c);
    double mean = sum / (double)K;
    for (int64_t c = 0; c < K; c++)
      q += (tt_get(a, r * K + c) - mean) * (tt_get(a, r * K + c) - mean);
    tt_set(ref[0], r, (double)K);
    tt_set(ref[1], r, mean);
    tt_set(ref[2], r, q);
  }
  te_module *m = tt_build(s, "wf", 4, TT_TENSORS(A, outs[0], outs[1], outs[2]), 0, NULL);
  for (int v = 0; v < 3; v++)
    tt_poison(g[v]);
  tt_call(m, "wf", 4, TT_BUFS(a, g[0], g[1], g[2]), 0, NULL);
  for (int v = 0; v < 3; v++)
    tt_assert_close(g[v], ref[v], K);
}

Test(rfactor_custom, welford_f32_lanes) { welford_case(TE_F32, 6, 1001, 16); }
Test(rfactor_custom, welford_f64_lanes) { welford_case(TE_F64, 4, 203, 8); }
/* fewer elements than lanes: some partials stay empty, (0, 0, 0) */
Test(rfactor_custom, welford_short_rows) { welford_case(TE_F32, 3, 5, 16); }

/* s[i] = sum of A[i, k] over the k with A[i, k] > 0 by a one-value custom reducer, rfactored on
   its only reduce leaf: the partials are the values (or the identity) */
Test(rfactor_custom, conditional_sum_only_leaf) {
  int64_t M = 5, K = 23;
  te_tensor *A = tt_placeholder("A", TE_F64, 2, TT_SHAPE(M, K));
  te_expr *l = te_param(tt_ctx, "l", TE_F64), *r = te_param(tt_ctx, "r", TE_F64);
  te_expr *res = te_add(l, r), *id = te_const(tt_ctx, TE_F64, 0);
  te_reducer *red = TT_NN(te_reducer_new(tt_ctx, 1, &l, &r, &res, &id));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *v = tt_at2(A, i, k), *out;
  TT_OK(te_reduce(red, 1, &v, 1, &k, te_gt(v, te_const(tt_ctx, TE_F64, 0)), &out));
  te_tensor *S = TT_NN(te_compute(tt_ctx, "S", 1, TE_EXPRS(te_int(tt_ctx, M)), &i, out));
  te_schedule *s = tt_schedule1(S);
  te_stage *st = tt_stage(s, S);
  te_tensor *rf = NULL;
  TT_OK(te_rfactor(s, S, te_reduce_iter(st, 0), 1, &rf));
  tt_buf *a = TT_ALLOC(TE_F64, M, K), *got = TT_ALLOC(TE_F64, M), *ref = TT_ALLOC(TE_F64, M);
  tt_fill(a, 3);
  for (int64_t x = 0; x < M; x++) {
    double acc = 0;
    for (int64_t c = 0; c < K; c++)
      acc += tt_get(a, x * K + c) > 0 ? tt_get(a, x * K + c) : 0;
    tt_set(ref, x, acc);
  }
  te_module *m = tt_build(s, "S", 2, TT_TENSORS(A, S), 0, NULL);
  tt_poison(got);
  tt_call(m, "S", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, K);
}
