/* test_scan.c (errors) — misuses of te_scan and schedules that would break a scan's order: a
 * state that is no placeholder, init reading the state, update reading the current or a later
 * step (or too far back), a dtype mismatch, a bad axis or initial count; parallel, vectorized or
 * bound loops of the scan axis; a dependent axis moved outside the scan axis or fused with it;
 * split pieces of the scan axis out of order; a lifted reduction of the recurrence computed outside
 * the scan's time loop; inlining, caching a scan. Messages name the call, the tensor or stage, the
 * loop and the rule.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_scan, .init = tt_setup, .fini = tt_teardown);

static te_expr *T_, *I_;
static te_tensor *X, *S;

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

static void setup(void) {
  T_ = te_var(tt_ctx, "t");
  I_ = te_var(tt_ctx, "i");
  X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(8, 6));
  S = tt_placeholder("S", TE_F32, 2, TT_SHAPE(8, 6));
}

static te_tensor *scan(te_tensor *state, int axis, int ninit, te_expr *init, te_expr *update) {
  return te_scan(tt_ctx, "C", state, axis, ninit, TE_EXPRS(T_, I_), init, update);
}

static te_expr *back(int c, te_expr *i) { return tt_at2(S, te_sub(T_, I(c)), i); }

Test(err_scan, definitions) {
  setup();
  te_expr *x = tt_at2(X, T_, I_);
  cr_assert_null(scan(S, 0, 1, x, te_add(back(0, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_scan", "'C'", "reads state 'S' at t - 0 along",
                "scan axis 't'", "only the 1 step before it");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 1, x, te_add(tt_at2(S, te_add(T_, I(1)), I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "reads state 'S' at t + 1");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 1, x, te_add(back(2, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "only the 1 step before it");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 1, back(1, I_), te_add(back(1, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "init reads state 'S'");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 1, x, x));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "update never reads state 'S'");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 1, te_cast(TE_F64, x), te_add(back(1, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "init is f64 but the state 'S' is f32");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 2, 1, x, te_add(back(1, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "scan axis 2 is outside [0, 2)");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 0, x, te_add(back(1, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "0 initial steps");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(S, 0, 9, x, te_add(back(1, I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "9 initial steps", "at most the scan axis' extent");
  te_clear_error(tt_ctx);
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(I(8), I(6)), TE_EXPRS(T_, I_), x));
  cr_assert_null(scan(P, 0, 1, x, te_add(tt_at2(P, te_sub(T_, I(1)), I_), x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "state 'P' is a compute");
  te_clear_error(tt_ctx);
  cr_assert_null(scan(NULL, 0, 1, x, x));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_scan", "state is NULL");
}

/* C[t, i] = t < 1 ? X[t, i] : C[t - 1, i + 1 clamped] + X[t, i]: axis i is dependent. */
static te_tensor *dependent_scan(void) {
  setup();
  te_expr *x = tt_at2(X, T_, I_);
  te_expr *next = te_min(te_add(I_, I(1)), I(5));
  return TT_NN(scan(S, 0, 1, x, te_add(back(1, next), x)));
}

static void expect_build_error(te_schedule *s, te_tensor *out, const char *a, const char *b) {
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "k", 2, TT_TENSORS(X, out), 0, NULL, tt_target(), &m), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, a, b);
  te_clear_error(tt_ctx);
}

Test(err_scan, scan_axis_loops) {
  te_tensor *C = dependent_scan();
  te_schedule *s = tt_schedule1(C);
  te_stage *c = tt_stage(s, C);
  te_iter *o, *in;
  cr_assert_eq(te_parallel(c, te_axis(c, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_parallel", "stage 'C'", "loop 't' of scan axis 't'",
                "cannot be parallel", "run in order");
  te_clear_error(tt_ctx);
  TT_OK(te_split(c, te_axis(c, 0), 4, &o, &in));
  cr_assert_eq(te_vectorize(c, in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize", "loop 't.i' of scan axis 't'",
                "cannot be vectorized");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_bind(c, o, TE_BLOCK_X), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_bind", "loop 't.o'", "bound to a GPU index");
  te_clear_error(tt_ctx);
  /* a fused loop made from t is refused too */
  te_iter *f;
  TT_OK(te_fuse(c, in, te_axis(c, 1), &f));
  cr_assert_eq(te_parallel(c, f), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "loop 't.i.i.f' of scan axis 't'");
  te_clear_error(tt_ctx);
  /* which te_build then refuses too: i depends on other elements of earlier steps */
  expect_build_error(s, C, "fuses scan axis 't' with axis 'i'", "keep 'i' inside the loops of 't'");
}

Test(err_scan, dependent_axis_outside) {
  te_tensor *C = dependent_scan();
  te_schedule *s = tt_schedule1(C);
  te_stage *c = tt_stage(s, C);
  TT_OK(te_reorder(c, 2, (te_iter *const[]){te_axis(c, 1), te_axis(c, 0)}));
  expect_build_error(s, C, "stage 'C': loop 'i' of axis 'i' runs outside loop 't'",
                     "keep its loops inside those of 't'");
  /* te_lower_text says the same */
  cr_assert_null(te_lower_text(s, 2, TT_TENSORS(X, C), 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "runs outside loop 't'");
}

/* The pieces of a split scan axis out of order: t.i outside t.o would run step 4 before step 1
   (a schedule the property test found accepted, with wrong values). In order it builds. */
Test(err_scan, scan_axis_pieces_out_of_order) {
  te_tensor *C = dependent_scan();
  te_schedule *s = tt_schedule1(C);
  te_stage *c = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split_nparts(c, te_axis(c, 0), 4, &o, &in));
  TT_OK(te_reorder(c, 3, (te_iter *const[]){in, o, te_axis(c, 1)}));
  expect_build_error(s, C, "stage 'C': loop 't.i' runs outside loop 't.o'",
                     "steps of scan axis 't' out of order");
  te_iter *f;
  TT_OK(te_fuse(c, in, o, &f));
  expect_build_error(s, C, "loop 't.i.t.o.f' fuses 't.i' outside 't.o'",
                     "steps of scan axis 't' out of order");
  te_schedule *ok = tt_schedule1(C);
  te_stage *k = tt_stage(ok, C);
  TT_OK(te_split(k, te_axis(k, 0), 3, &o, &in));
  TT_OK(te_fuse(k, o, in, &f));
  te_module *m = NULL;
  TT_OK(te_build(ok, "k", 2, TT_TENSORS(X, C), 0, NULL, tt_target(), &m));
}

Test(err_scan, placement) {
  te_tensor *C = dependent_scan();
  te_schedule *s = tt_schedule1(C);
  te_stage *c = tt_stage(s, C);
  cr_assert_null(te_schedule_new(tt_ctx, 0, NULL));
  te_clear_error(tt_ctx);
  te_tensor *cache;
  cr_assert_eq(te_cache_write(s, C, TE_SCOPE_LOCAL, &cache), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_cache_write", "stage 'C' is a scan");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_cache_read(s, C, TE_SCOPE_LOCAL, 1, &c, &cache), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_read", "stage 'C' reads earlier steps of scan");
  te_clear_error(tt_ctx);
  /* an intermediate scan cannot be inlined into its reader */
  te_expr *a = te_var(tt_ctx, "a"), *b = te_var(tt_ctx, "b");
  te_tensor *Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(I(8), I(6)), TE_EXPRS(a, b),
                                  te_mul(tt_at2(C, a, b), te_float(tt_ctx, TE_F32, 2))));
  te_schedule *sy = tt_schedule1(Y);
  cr_assert_eq(te_compute_inline(tt_stage(sy, C)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "'C' is a scan");
}

/* h[t, i] = t < 1 ? X[0, i] : tanh(sum_j X[t, j] * h[t - 1, j]): h_red0 reads h and h reads it. */
Test(err_scan, recurrence_stage_outside_the_time_loop) {
  setup();
  te_expr *j = te_reduce_axis(tt_ctx, "j", I(0), I(6));
  te_expr *wh = TE_SUM(te_mul(tt_at2(X, T_, j), back(1, j)), j);
  te_tensor *H = TT_NN(scan(S, 0, 1, tt_at2(X, T_, I_), te_call(tt_ctx, "tanh", 1, &wh)));
  te_schedule *s = tt_schedule1(H);
  te_stage *r = TT_NN(te_lifted_reduction_stage(s, H, 0));
  TT_OK(te_compute_root(r));
  expect_build_error(s, H, "stage 'C_red0' reads earlier steps of scan 'C' and is read by it",
                     "inside the scan's loop 't'");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_cache_read(s, H, TE_SCOPE_LOCAL, 1, &r, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'C_red0' reads earlier steps of scan 'C'");
}
