/* test_custom_reduce.c — custom commutative reducers and multi-output computes: argmax over the
 * rows of a matrix (index and value updated together), a conditional custom sum, and
 * te_compute_multi of element-wise outputs; each under several schedules, against plain C. */
#include <criterion/criterion.h>
#include <math.h>

#include "te_test.h"

TestSuite(custom_reduce, .init = tt_setup, .fini = tt_teardown);

static te_reducer *argmax_reducer(void) {
  te_expr *li = te_param(tt_ctx, "li", TE_I32), *lv = te_param(tt_ctx, "lv", TE_F32);
  te_expr *ri = te_param(tt_ctx, "ri", TE_I32), *rv = te_param(tt_ctx, "rv", TE_F32);
  te_expr *lhs[2] = {li, lv}, *rhs[2] = {ri, rv};
  te_expr *res[2] = {te_select(te_gt(rv, lv), ri, li), te_max(lv, rv)};
  te_expr *id[2] = {te_const(tt_ctx, TE_I32, -1), te_const(tt_ctx, TE_F32, -INFINITY)};
  return TT_NN(te_reducer_new(tt_ctx, 2, lhs, rhs, res, id));
}

/* idx[i], val[i] = argmax_k A[i, k] */
static void argmax_case(int64_t M, int64_t K, int sched) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *vals[2] = {te_cast(TE_I32, k), tt_at2(A, i, k)};
  te_expr *out[2];
  TT_OK(te_reduce(argmax_reducer(), 2, vals, 1, &k, NULL, out));
  te_tensor *outs[2];
  TT_OK(te_compute_multi(tt_ctx, "amax", 1, TE_EXPRS(te_int(tt_ctx, M)), &i, 2, out, outs));
  te_schedule *s = tt_schedule1(outs[0]);
  te_stage *st = tt_stage(s, outs[0]);
  if (sched == 1) {
    te_iter *ko, *ki;
    TT_OK(te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki));
    TT_OK(te_split(st, te_axis(st, 0), 3, NULL, NULL));
  } else if (sched == 2) {
    te_iter *io, *ii;
    TT_OK(te_split(st, te_axis(st, 0), 2, &io, &ii));
    TT_OK(te_parallel(st, io));
    TT_OK(te_reorder(st, 2, (te_iter *const[]){te_reduce_iter(st, 0), ii}));
  }
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *gi = TT_ALLOC(TE_I32, M), *gv = TT_ALLOC(TE_F32, M);
  tt_buf *ri = TT_ALLOC(TE_I32, M), *rv = TT_ALLOC(TE_F32, M);
  tt_fill(a, 7 + (uint64_t)sched);
  for (int64_t r = 0; r < M; r++) {
    int64_t best = -1;
    double bv = -INFINITY;
    for (int64_t c = 0; c < K; c++)
      if (tt_get(a, r * K + c) > bv)
        bv = tt_get(a, r * K + c), best = c;
    tt_seti(ri, r, best);
    tt_set(rv, r, bv);
  }
  te_tensor *ts[3] = {A, outs[0], outs[1]};
  te_module *m = tt_build(s, "amax", 3, ts, 0, NULL);
  tt_poison(gi);
  tt_poison(gv);
  tt_call(m, "amax", 3, TT_BUFS(a, gi, gv), 0, NULL);
  tt_assert_close(gi, ri, 1);
  tt_assert_close(gv, rv, 1);
}

Test(custom_reduce, argmax_default) { argmax_case(7, 13, 0); }
Test(custom_reduce, argmax_split_tails) { argmax_case(11, 17, 1); }
Test(custom_reduce, argmax_parallel_reordered) { argmax_case(6, 9, 2); }

/* s[i] = sum of A[i, k] over the k where A[i, k] > 0, with a one-value custom reducer */
Test(custom_reduce, conditional_custom_sum) {
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
  tt_buf *a = TT_ALLOC(TE_F64, M, K), *got = TT_ALLOC(TE_F64, M), *ref = TT_ALLOC(TE_F64, M);
  tt_fill(a, 3);
  for (int64_t x = 0; x < M; x++) {
    double acc = 0;
    for (int64_t c = 0; c < K; c++)
      acc += tt_get(a, x * K + c) > 0 ? tt_get(a, x * K + c) : 0;
    tt_set(ref, x, acc);
  }
  tt_check_all(S, 2, TT_TENSORS(A, S), TT_BUFS(a, got), got, ref, K);
}

/* two element-wise outputs over one loop nest */
Test(custom_reduce, multi_output_elementwise) {
  int64_t N = 19;
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *bodies[2] = {te_mul(tt_at1(A, i), te_float(tt_ctx, TE_F32, 2)), te_neg(tt_at1(A, i))};
  te_tensor *outs[2];
  TT_OK(te_compute_multi(tt_ctx, "pair", 1, TE_EXPRS(te_int(tt_ctx, N)), &i, 2, bodies, outs));
  te_schedule *s = tt_schedule1(outs[0]);
  TT_OK(te_split(tt_stage(s, outs[0]), te_axis(tt_stage(s, outs[0]), 0), 4, NULL, NULL));
  tt_buf *a = TT_ALLOC(TE_F32, N), *g0 = TT_ALLOC(TE_F32, N), *g1 = TT_ALLOC(TE_F32, N);
  tt_buf *r0 = TT_ALLOC(TE_F32, N), *r1 = TT_ALLOC(TE_F32, N);
  tt_fill(a, 11);
  for (int64_t x = 0; x < N; x++)
    tt_set(r0, x, 2 * tt_get(a, x)), tt_set(r1, x, -tt_get(a, x));
  te_module *m = tt_build(s, "pair", 3, TT_TENSORS(A, outs[0], outs[1]), 0, NULL);
  tt_call(m, "pair", 3, TT_BUFS(a, g0, g1), 0, NULL);
  tt_assert_close(g0, r0, 1);
  tt_assert_close(g1, r1, 1);
}

Test(custom_reduce, errors) {
  te_expr *l = te_param(tt_ctx, "l", TE_F32), *r = te_param(tt_ctx, "r", TE_F32);
  te_expr *res = te_add(l, r), *id = te_const(tt_ctx, TE_F64, 0);
  cr_assert_null(te_reducer_new(tt_ctx, 1, &l, &r, &res, &id));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_reducer_new", "value 0");
  te_clear_error(tt_ctx);
  te_expr *v = te_var(tt_ctx, "v");
  cr_assert_null(te_reducer_new(tt_ctx, 1, &v, &r, &res, &id));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_param");
}
