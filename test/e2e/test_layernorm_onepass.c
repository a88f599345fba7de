/* test_layernorm_onepass.c — the one-pass layer norm of bench/layernorm.c: both row statistics
 * in one tuple reduction (sum and sum of squares of X[i,k] - X[i,0], te_reducer_new), its k split
 * by the lanes and te_rfactor'ed into vector lanes, every per-row stage computed inside Y's row
 * loop, rows parallel; then Y = (X - mean) * rsqrt(var + eps) * gamma + beta. Row lengths the
 * lanes do not divide, against a double-precision reference.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "te_test.h"

TestSuite(layernorm_onepass, .init = tt_setup, .fini = tt_teardown);

#define EPS 1e-5

static te_reducer *sum_pair(void) {
  te_expr *ls = te_param(tt_ctx, "ls", TE_F32), *lq = te_param(tt_ctx, "lq", TE_F32);
  te_expr *rs = te_param(tt_ctx, "rs", TE_F32), *rq = te_param(tt_ctx, "rq", TE_F32);
  te_expr *zero = te_float(tt_ctx, TE_F32, 0);
  return TT_NN(te_reducer_new(tt_ctx, 2, TE_EXPRS(ls, lq), TE_EXPRS(rs, rq),
                              TE_EXPRS(te_add(ls, rs), te_add(lq, rq)), TE_EXPRS(zero, zero)));
}

static void onepass_case(int64_t R, int64_t C, int lanes, int rowlocal) {
  te_ctx *ctx = tt_ctx;
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(R, C));
  te_tensor *gamma = tt_placeholder("gamma", TE_F32, 1, TT_SHAPE(C));
  te_tensor *beta = tt_placeholder("beta", TE_F32, 1, TT_SHAPE(C));
  te_expr *i = te_var(ctx, "i"), *zero = te_int(ctx, 0);
  te_expr *k = te_reduce_axis(ctx, "k", zero, te_int(ctx, C));
  te_expr *d = te_sub(tt_at2(X, i, k), tt_at2(X, i, zero)), *red[2];
  TT_OK(te_reduce(sum_pair(), 2, TE_EXPRS(d, te_mul(d, d)), 1, &k, NULL, red));
  te_tensor *sq[2];
  TT_OK(te_compute_multi(ctx, "stats", 1, TE_EXPRS(te_int(ctx, R)), &i, 2, red, sq));
  te_expr *inv_c = te_float(ctx, TE_F32, 1.0 / (double)C);
  te_expr *r = te_var(ctx, "i");
  te_expr *m = te_mul(tt_at1(sq[0], r), inv_c);
  te_tensor *mean = TT_NN(te_compute(ctx, "mean", 1, TE_EXPRS(te_int(ctx, R)), TE_EXPRS(r),
                                     te_add(tt_at2(X, r, zero), m)));
  te_expr *var = te_sub(te_mul(tt_at1(sq[1], r), inv_c), te_mul(m, m));
  te_tensor *rstd = TT_NN(
      te_compute(ctx, "rstd", 1, TE_EXPRS(te_int(ctx, R)), TE_EXPRS(r),
                 te_call(ctx, "rsqrt", 1, TE_EXPRS(te_add(var, te_float(ctx, TE_F32, EPS))))));
  te_expr *y = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *norm = te_mul(te_sub(tt_at2(X, y, j), tt_at1(mean, y)), tt_at1(rstd, y));
  te_tensor *Y =
      TT_NN(te_compute(ctx, "Y", 2, TE_EXPRS(te_int(ctx, R), te_int(ctx, C)), TE_EXPRS(y, j),
                       te_add(te_mul(norm, tt_at1(gamma, j)), tt_at1(beta, j))));

  te_schedule *s = tt_schedule1(Y);
  te_stage *ys = tt_stage(s, Y), *ss = tt_stage(s, sq[0]);
  te_iter *jo, *ji;
  TT_OK(te_split(ys, te_axis(ys, 1), 16, &jo, &ji));
  TT_OK(te_vectorize(ys, ji));
  TT_OK(te_parallel(ys, te_axis(ys, 0)));
  te_iter *ko, *ki;
  TT_OK(te_split(ss, te_reduce_iter(ss, 0), lanes, &ko, &ki));
  te_tensor *rf = NULL;
  TT_OK(te_rfactor(s, sq[0], ki, 1, &rf));
  te_stage *rs = tt_stage(s, rf);
  TT_OK(te_reorder(rs, 2, (te_iter *const[]){te_reduce_iter(rs, 0), te_axis(rs, 1)}));
  TT_OK(te_vectorize(rs, te_axis(rs, 1)));
  te_stage *rows[4] = {tt_stage(s, rstd), tt_stage(s, mean), ss, rs}; /* readers first */
  for (int q = 0; q < 4; q++)
    if (rowlocal)
      TT_OK(te_compute_at(rows[q], ys, te_axis(ys, 0)));
    else
      TT_OK(te_parallel(rows[q], te_axis(rows[q], 0)));

  tt_buf *x = TT_ALLOC(TE_F32, R, C), *g = TT_ALLOC(TE_F32, C), *b = TT_ALLOC(TE_F32, C);
  tt_buf *got = TT_ALLOC(TE_F32, R, C), *ref = TT_ALLOC(TE_F32, R, C);
  tt_fill_range(x, 31, -2.0, 3.0);
  tt_fill(g, 32);
  tt_fill(b, 33);
  for (int64_t row = 0; row < R; row++) {
    double mu = 0, v = 0;
    for (int64_t c = 0; c < C; c++)
      mu += tt_get(x, row * C + c);
    mu /= (double)C;
    for (int64_t c = 0; c < C; c++)
      v += (tt_get(x, row * C + c) - mu) * (tt_get(x, row * C + c) - mu);
    v /= (double)C;
    double rsd = 1.0 / sqrt(v + EPS);
    for (int64_t c = 0; c < C; c++)
      tt_set(ref, row * C + c, (tt_get(x, row * C + c) - mu) * rsd * tt_get(g, c) + tt_get(b, c));
  }
  te_module *mod = tt_build(s, "ln1", 4, TT_TENSORS(X, gamma, beta, Y), 0, NULL);
  tt_poison(got);
  tt_call(mod, "ln1", 4, TT_BUFS(x, g, b, got), 0, NULL);
  tt_assert_close(got, ref, C);
}

Test(layernorm_onepass, rowlocal_64_lanes_tail) { onepass_case(7, 1000, 64, 1); }
Test(layernorm_onepass, rowlocal_16_lanes_tail) { onepass_case(5, 83, 16, 1); }
Test(layernorm_onepass, root_stages_64_lanes) { onepass_case(6, 4096 + 17, 64, 0); }
/* a row shorter than the lanes: most partials stay at the identity */
Test(layernorm_onepass, short_rows) { onepass_case(3, 9, 16, 1); }
