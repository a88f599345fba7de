/* test_lifted_reduce.c — reductions inside expressions (te_lifted_reduction), against plain C on
 * random non-zero inputs with outputs poisoned, at shapes that no split factor divides:
 *   gemm with beta and alpha in one compute: C = beta*C0 + alpha*sum_k A*B;
 *   the column mean: mean[j] = sum_k X[k, j] / K;
 *   a nested reduction: D[i] = X[i, 0] + sum_{k in [2, K)} X[i, k] * sum_l Y[k, l] * Z[i, l];
 *   a reduction holding one: E[i] = sum_k X[i, k] * max_l Y[k, l].
 * Each under the default schedule (lifted stages fused into their reader) and schedules of the
 * lifted stages: compute_at a split loop, compute_root, rfactor, cache_write, vectorize and
 * parallel around them; the trace of such a schedule replays; the workload text round-trips.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "te/parse.h"

TestSuite(lifted_reduce, .init = tt_setup, .fini = tt_teardown);

enum { M = 13, N = 19, K = 23 };

/* ---------------------------------------------------------------- gemm with beta and alpha */

typedef struct gemm {
  te_tensor *A, *B, *C0, *C;
  te_expr *alpha, *beta;
  tt_buf *a, *b, *c0, *got, *ref;
  float av, bv;
} gemm;

static void gemm_make(gemm *g) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  g->A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  g->B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  g->C0 = tt_placeholder("C0", TE_F32, 2, TT_SHAPE(M, N));
  g->alpha = te_param(tt_ctx, "alpha", TE_F32);
  g->beta = te_param(tt_ctx, "beta", TE_F32);
  te_expr *prod = TE_SUM(te_mul(tt_at2(g->A, i, k), tt_at2(g->B, k, j)), k);
  te_expr *body = te_add(te_mul(g->beta, tt_at2(g->C0, i, j)), te_mul(g->alpha, prod));
  g->C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                          TE_EXPRS(i, j), body));
  g->a = TT_ALLOC(TE_F32, M, K);
  g->b = TT_ALLOC(TE_F32, K, N);
  g->c0 = TT_ALLOC(TE_F32, M, N);
  g->got = TT_ALLOC(TE_F32, M, N);
  g->ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(g->a, 1);
  tt_fill(g->b, 2);
  tt_fill(g->c0, 3);
  g->av = 1.25f;
  g->bv = -0.75f;
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++) {
      double acc = 0;
      for (int r = 0; r < K; r++)
        acc += tt_get(g->a, p * K + r) * tt_get(g->b, r * N + q);
      tt_set(g->ref, p * N + q, g->bv * tt_get(g->c0, p * N + q) + g->av * acc);
    }
}

static void gemm_check(gemm *g, te_schedule *s) {
  tt_check(s, 4, TT_TENSORS(g->A, g->B, g->C0, g->C), TT_BUFS(g->a, g->b, g->c0, g->got), 2,
           TE_EXPRS(g->alpha, g->beta), (const void *const[]){&g->av, &g->bv}, g->got, g->ref, K);
}

enum { G_DEFAULT, G_VECTOR, G_AT_OUTER, G_ROOT, G_RFACTOR, G_CACHE, G_PARALLEL_TILE, G_COUNT };
static const char *gnames[] = {"default (fused)",
                               "C: split j by 8, vectorize j.i",
                               "C_red0 at C's j.o, its j vectorized",
                               "C_red0 at root, k split by 5",
                               "C_red0: rfactor of k.i (split by 4), rf vectorized",
                               "C_red0: cache_write local at C's j.o",
                               "C: tile 4x8 parallel, C_red0 k split by 6 and unrolled"};

static void gemm_sched(gemm *g, te_schedule *s, int kind) {
  te_stage *c = tt_stage(s, g->C);
  te_stage *r = TT_NN(te_lifted_reduction_stage(s, g->C, 0));
  te_tensor *rt = te_lifted_reduction(g->C, 0);
  te_iter *o, *in, *o2, *in2;
  switch (kind) {
  case G_VECTOR:
    TT_OK(te_split(c, te_axis(c, 1), 8, &o, &in));
    TT_OK(te_vectorize(c, in));
    break;
  case G_AT_OUTER:
    TT_OK(te_split(c, te_axis(c, 1), 8, &o, &in));
    TT_OK(te_compute_at(r, c, o));
    TT_OK(te_reorder(r, 2, (te_iter *const[]){te_reduce_iter(r, 0), te_axis(r, 1)}));
    TT_OK(te_vectorize(r, te_axis(r, 1)));
    break;
  case G_ROOT:
    TT_OK(te_compute_root(r));
    TT_OK(te_split(r, te_reduce_iter(r, 0), 5, &o, &in));
    break;
  case G_RFACTOR: {
    TT_OK(te_split(r, te_reduce_iter(r, 0), 4, &o, &in));
    te_tensor *rf;
    TT_OK(te_rfactor(s, rt, in, 2, &rf));
    te_stage *rfs = tt_stage(s, rf);
    TT_OK(te_reorder(rfs, 2, (te_iter *const[]){te_reduce_iter(rfs, 0), te_axis(rfs, 2)}));
    TT_OK(te_vectorize(rfs, te_axis(rfs, 2)));
    break;
  }
  case G_CACHE: {
    te_tensor *loc;
    TT_OK(te_cache_write(s, rt, TE_SCOPE_LOCAL, &loc));
    TT_OK(te_split(c, te_axis(c, 1), 4, &o, &in));
    TT_OK(te_compute_at(r, c, o));
    TT_OK(te_compute_at(tt_stage(s, loc), r, te_axis(r, 1)));
    break;
  }
  case G_PARALLEL_TILE:
    TT_OK(te_tile(c, te_axis(c, 0), te_axis(c, 1), 4, 8, &o, &o2, &in, &in2));
    TT_OK(te_parallel(c, o));
    TT_OK(te_split(r, te_reduce_iter(r, 0), 6, &o, &in));
    TT_OK(te_unroll(r, in));
    break;
  }
}

Test(lifted_reduce, gemm_beta_alpha) {
  gemm g;
  gemm_make(&g);
  cr_assert_eq(te_lifted_reduction_count(g.C), 1);
  te_tensor *r = TT_NN(te_lifted_reduction(g.C, 0));
  cr_assert_str_eq(te_tensor_name(r), "C_red0");
  cr_assert_eq(te_tensor_ndim(r), 2);
  for (int kind = 0; kind < G_COUNT; kind++) {
    tt_note("gemm beta*C0 + alpha*sum(A*B), %dx%dx%d, schedule %s", M, N, K, gnames[kind]);
    te_schedule *s = tt_schedule1(g.C);
    gemm_sched(&g, s, kind);
    gemm_check(&g, s);
  }
}

/* The default schedule is one fused loop nest: C_red0 is realized inside C's loops, and its
   buffer is one element (the region C's innermost loop reads). */
Test(lifted_reduce, default_is_fused) {
  gemm g;
  gemm_make(&g);
  te_schedule *s = tt_schedule1(g.C);
  char *ir =
      TT_NN(te_lower_text(s, 4, TT_TENSORS(g.A, g.B, g.C0, g.C), 2, TE_EXPRS(g.alpha, g.beta)));
  char *j = strstr(ir, "for (j");
  char *alloc = strstr(ir, "C_red0");
  cr_assert(j && alloc && alloc > j, "C_red0 is not inside C's j loop:\n%s", ir);
  cr_assert(!strstr(ir, "C_red0[13"), "C_red0 has a whole buffer:\n%s", ir);
  te_free(ir);
  /* placing it at root gives it its whole buffer, before C's loops */
  TT_OK(te_compute_root(te_lifted_reduction_stage(s, g.C, 0)));
  ir = TT_NN(te_lower_text(s, 4, TT_TENSORS(g.A, g.B, g.C0, g.C), 2, TE_EXPRS(g.alpha, g.beta)));
  cr_assert(strstr(ir, "C_red0") < strstr(ir, "for (j"), "C_red0 not at root:\n%s", ir);
  te_free(ir);
}

/* A traced schedule of lifted stages replays on a fresh schedule: same trace, same numbers. */
Test(lifted_reduce, trace_replays) {
  gemm g;
  gemm_make(&g);
  for (int kind = 1; kind < G_COUNT; kind++) {
    tt_note("replay of schedule %s", gnames[kind]);
    te_schedule *s = tt_schedule1(g.C);
    gemm_sched(&g, s, kind);
    char *trace = TT_NN(te_schedule_trace(s));
    cr_assert(kind == G_VECTOR || strstr(trace, "C_red0"), "trace does not name C_red0:\n%s",
              trace);
    te_schedule *t = tt_schedule1(g.C);
    TT_OK(te_schedule_replay(t, trace));
    char *again = TT_NN(te_schedule_trace(t));
    cr_assert_str_eq(again, trace);
    gemm_check(&g, t);
    te_free(trace);
    te_free(again);
  }
}

/* ---------------------------------------------------------------- column mean */

Test(lifted_reduce, column_mean) {
  te_expr *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(K, N));
  te_expr *body = te_div(TE_SUM(tt_at2(X, k, j), k), te_float(tt_ctx, TE_F32, K));
  te_tensor *mean =
      TT_NN(te_compute(tt_ctx, "mean", 1, TE_EXPRS(te_int(tt_ctx, N)), TE_EXPRS(j), body));
  cr_assert_str_eq(te_tensor_name(te_lifted_reduction(mean, 0)), "mean_red0");
  tt_buf *x = TT_ALLOC(TE_F32, K, N), *got = TT_ALLOC(TE_F32, N), *ref = TT_ALLOC(TE_F32, N);
  tt_fill(x, 7);
  for (int q = 0; q < N; q++) {
    double acc = 0;
    for (int p = 0; p < K; p++)
      acc += tt_get(x, p * N + q);
    tt_set(ref, q, acc / K);
  }
  for (int kind = 0; kind < TT_S_COUNT; kind++) {
    tt_note("column mean %dx%d, schedule %s of mean", K, N, tt_sched_name(kind));
    te_schedule *s = tt_schedule1(mean);
    tt_apply_sched(s, mean, kind);
    tt_check(s, 2, TT_TENSORS(X, mean), TT_BUFS(x, got), 0, NULL, NULL, got, ref, K);
  }
  /* the reduction over rows outermost, vectorized along columns, computed at root */
  tt_note("column mean, mean_red0 at root with k outermost and j vectorized by 8");
  te_schedule *s = tt_schedule1(mean);
  te_stage *r = TT_NN(te_lifted_reduction_stage(s, mean, 0));
  te_iter *o, *in;
  TT_OK(te_compute_root(r));
  TT_OK(te_split(r, te_axis(r, 0), 8, &o, &in));
  TT_OK(te_reorder(r, 3, (te_iter *const[]){o, te_reduce_iter(r, 0), in}));
  TT_OK(te_vectorize(r, in));
  tt_check(s, 2, TT_TENSORS(X, mean), TT_BUFS(x, got), 0, NULL, NULL, got, ref, K);
}

/* ---------------------------------------------------------------- nested reductions */

enum { KLO = 2, L = 11 };

/* D[i] = X[i, 0] + sum_{k in [2, K)} X[i, k] * (sum_l Y[k, l] * Z[i, l]) */
Test(lifted_reduce, nested) {
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, KLO), te_int(tt_ctx, K - KLO));
  te_expr *l = te_reduce_axis(tt_ctx, "l", te_int(tt_ctx, 0), te_int(tt_ctx, L));
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *Y = tt_placeholder("Y", TE_F32, 2, TT_SHAPE(K, L));
  te_tensor *Z = tt_placeholder("Z", TE_F32, 2, TT_SHAPE(M, L));
  te_expr *inner = TE_SUM(te_mul(tt_at2(Y, k, l), tt_at2(Z, i, l)), l);
  te_expr *outer = TE_SUM(te_mul(tt_at2(X, i, k), inner), k);
  te_tensor *D = TT_NN(te_compute(tt_ctx, "D", 1, TE_EXPRS(te_int(tt_ctx, M)), TE_EXPRS(i),
                                  te_add(tt_at2(X, i, te_int(tt_ctx, 0)), outer)));
  cr_assert_eq(te_lifted_reduction_count(D), 2);
  te_tensor *r0 = te_lifted_reduction(D, 0), *r1 = te_lifted_reduction(D, 1);
  cr_assert_str_eq(te_tensor_name(r0), "D_red0");
  cr_assert_str_eq(te_tensor_name(r1), "D_red1");
  cr_assert_eq(te_tensor_ndim(r0), 1);
  cr_assert_eq(te_tensor_ndim(r1), 2); /* over i and k: k's extent, from k's min */
  tt_buf *x = TT_ALLOC(TE_F32, M, K), *y = TT_ALLOC(TE_F32, K, L), *z = TT_ALLOC(TE_F32, M, L);
  tt_buf *got = TT_ALLOC(TE_F32, M), *ref = TT_ALLOC(TE_F32, M);
  tt_fill(x, 11);
  tt_fill(y, 12);
  tt_fill(z, 13);
  for (int p = 0; p < M; p++) {
    double acc = 0;
    for (int q = KLO; q < K; q++) {
      double in = 0;
      for (int r = 0; r < L; r++)
        in += tt_get(y, q * L + r) * tt_get(z, p * L + r);
      acc += tt_get(x, p * K + q) * in;
    }
    tt_set(ref, p, tt_get(x, p * K) + acc);
  }
  for (int kind = 0; kind < 4; kind++) {
    static const char *names[] = {"default", "D_red1 at root", "D_red0 k split, D_red1 at k.o",
                                  "D split by 4 parallel, D_red1 l split by 4 unrolled"};
    tt_note("nested reduction %dx%dx%d, schedule %s", M, K, L, names[kind]);
    te_schedule *s = tt_schedule1(D);
    te_stage *s0 = TT_NN(te_lifted_reduction_stage(s, D, 0));
    te_stage *s1 = TT_NN(te_lifted_reduction_stage(s, D, 1));
    te_iter *o, *in;
    if (kind == 1)
      TT_OK(te_compute_root(s1));
    if (kind == 2) {
      TT_OK(te_split(s0, te_reduce_iter(s0, 0), 5, &o, &in));
      TT_OK(te_compute_at(s1, s0, o));
    }
    if (kind == 3) {
      TT_OK(te_split(tt_stage(s, D), te_axis(tt_stage(s, D), 0), 4, &o, &in));
      TT_OK(te_parallel(tt_stage(s, D), o));
      TT_OK(te_split(s1, te_reduce_iter(s1, 0), 4, &o, &in));
      TT_OK(te_unroll(s1, in));
    }
    tt_check(s, 4, TT_TENSORS(X, Y, Z, D), TT_BUFS(x, y, z, got), 0, NULL, NULL, got, ref, K * L);
  }
}

/* E[i] = sum_k X[i, k] * max_l Y[k, l]: the body is a reduction; the max inside it is lifted
   over k alone (E_red0[k]), computed inside E's k loop by default. */
Test(lifted_reduce, inside_a_reduction) {
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *l = te_reduce_axis(tt_ctx, "l", te_int(tt_ctx, 0), te_int(tt_ctx, L));
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *Y = tt_placeholder("Y", TE_F32, 2, TT_SHAPE(K, L));
  te_expr *body = TE_SUM(te_mul(tt_at2(X, i, k), te_max_r(tt_at2(Y, k, l), 1, TE_EXPRS(l))), k);
  te_tensor *E = TT_NN(te_compute(tt_ctx, "E", 1, TE_EXPRS(te_int(tt_ctx, M)), TE_EXPRS(i), body));
  cr_assert_eq(te_lifted_reduction_count(E), 1);
  cr_assert_eq(te_tensor_ndim(te_lifted_reduction(E, 0)), 1);
  tt_buf *x = TT_ALLOC(TE_F32, M, K), *y = TT_ALLOC(TE_F32, K, L);
  tt_buf *got = TT_ALLOC(TE_F32, M), *ref = TT_ALLOC(TE_F32, M);
  tt_fill(x, 21);
  tt_fill(y, 22);
  for (int p = 0; p < M; p++) {
    double acc = 0;
    for (int q = 0; q < K; q++) {
      double mx = tt_get(y, q * L);
      for (int r = 1; r < L; r++)
        mx = fmax(mx, tt_get(y, q * L + r));
      acc += tt_get(x, p * K + q) * mx;
    }
    tt_set(ref, p, acc);
  }
  for (int kind = 0; kind < 3; kind++) {
    tt_note("sum of X * max(Y), schedule %d (0 default, 1 E_red0 root, 2 E's k split by 7)", kind);
    te_schedule *s = tt_schedule1(E);
    te_stage *e = tt_stage(s, E);
    te_iter *o, *in;
    if (kind == 1)
      TT_OK(te_compute_root(te_lifted_reduction_stage(s, E, 0)));
    if (kind == 2)
      TT_OK(te_split(e, te_reduce_iter(e, 0), 7, &o, &in));
    tt_check(s, 3, TT_TENSORS(X, Y, E), TT_BUFS(x, y, got), 0, NULL, NULL, got, ref, K);
  }
}

/* ---------------------------------------------------------------- workload text */

/* The parser accepts reductions inside expressions; the canonical text prints them in place
   and reads back to the same text; the parsed workload computes the same numbers. */
Test(lifted_reduce, workload_text) {
  const char *text = "C[i, j] = beta*C0[i, j] + alpha*sum(A[i, k]*B[k, j], k)\n"
                     "where A: f32[13, 23], B: f32[23, 19], C0: f32[13, 19], alpha: f32, "
                     "beta: f32, k: [0, 23)";
  int nout;
  te_tensor **outs;
  TT_OK(te_parse(tt_ctx, text, &nout, &outs));
  cr_assert_eq(nout, 1);
  cr_assert_eq(te_lifted_reduction_count(outs[0]), 1);
  char *canon = TT_NN(te_workload_text(1, outs));
  cr_assert(strstr(canon, "sum("), "%s", canon);
  cr_assert(!strstr(canon, "C_red0"), "the lifted stage is printed:\n%s", canon);
  int n2;
  te_tensor **outs2;
  TT_OK(te_parse(tt_ctx, canon, &n2, &outs2));
  char *again = TT_NN(te_workload_text(n2, outs2));
  cr_assert_str_eq(again, canon);
  /* the nested form prints and reads back too */
  const char *nested = "D[i] = X[i, 0] + sum(X[i, k]*sum(Y[k, l]*Z[i, l], l), k)\n"
                       "where X: f32[13, 23], Y: f32[23, 11], Z: f32[13, 11], k: [2, 23), "
                       "l: [0, 11)";
  TT_OK(te_parse(tt_ctx, nested, &n2, &outs2));
  cr_assert_eq(te_lifted_reduction_count(outs2[0]), 2);
  char *nc = TT_NN(te_workload_text(n2, outs2));
  TT_OK(te_parse(tt_ctx, nc, &n2, &outs2));
  char *nc2 = TT_NN(te_workload_text(n2, outs2));
  cr_assert_str_eq(nc2, nc);
  te_free(canon);
  te_free(again);
  te_free(nc);
  te_free(nc2);
  /* numbers of the parsed gemm: inputs A, B, C0; parameters in first-use order */
  int nin, np;
  te_tensor **ins;
  te_expr **ps;
  TT_OK(te_workload_inputs(1, outs, &nin, &ins, &np, &ps));
  cr_assert_eq(nin, 3);
  cr_assert_eq(np, 2);
  gemm g;
  gemm_make(&g);
  tt_buf *bufs[3];
  for (int q = 0; q < 3; q++) {
    const char *nm = te_tensor_name(ins[q]);
    bufs[q] = !strcmp(nm, "A") ? g.a : !strcmp(nm, "B") ? g.b : g.c0;
  }
  te_schedule *s = tt_schedule1(outs[0]);
  const void *vals[2];
  for (int q = 0; q < 2; q++) {
    char *name = te_expr_text(ps[q]);
    vals[q] = !strcmp(name, "alpha") ? (const void *)&g.av : (const void *)&g.bv;
    te_free(name);
  }
  tt_check(s, 4, TT_TENSORS(ins[0], ins[1], ins[2], outs[0]),
           TT_BUFS(bufs[0], bufs[1], bufs[2], g.got), 2, ps, vals, g.got, g.ref, K);
}
