/* test_schedule_multistage.c (errors) — misuses of the multi-stage schedule primitives and of
 * traces: compute_at, compute_inline, rfactor, cache_read, cache_write, bind, vectorize and
 * parallel of reduce axes, set_tail, pragma, and te_schedule_replay of malformed or mismatched
 * text. Each test checks the exact te_status and substrings of the message (the primitive, the
 * stage or iterator named, the rule), and, where it matters, that a refused call changed
 * nothing. A few tests check the accepted neighbour of a refused case (the rule is not broader
 * than it says).
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(err_multistage, .init = tt_setup, .fini = tt_teardown);

/* Ain [8, 6] -> P1 = Ain * 2 -> P2 = P1 + 1 -> R[i] = sum_k P2[i, k] -> Out[i] = R[i] * 3.
   S schedules Out; SP1, SP2, SR, SO are its stages. */
static te_tensor *Ain, *P1, *P2, *R, *Out;
static te_schedule *S;
static te_stage *SP1, *SP2, *SR, *SO;

static void build(void) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 6));
  te_expr *sh[] = {te_int(tt_ctx, 8), te_int(tt_ctx, 6)};
  Ain = tt_placeholder("Ain", TE_F32, 2, TT_SHAPE(8, 6));
  P1 = TT_NN(te_compute(tt_ctx, "P1", 2, sh, TE_EXPRS(i, j),
                        te_mul(tt_at2(Ain, i, j), te_float(tt_ctx, TE_F32, 2))));
  P2 = TT_NN(te_compute(tt_ctx, "P2", 2, sh, TE_EXPRS(i, j),
                        te_add(tt_at2(P1, i, j), te_float(tt_ctx, TE_F32, 1))));
  R = TT_NN(te_compute(tt_ctx, "R", 1, sh, TE_EXPRS(i), TE_SUM(tt_at2(P2, i, k), k)));
  Out = TT_NN(te_compute(tt_ctx, "Out", 1, sh, TE_EXPRS(i),
                         te_mul(tt_at1(R, i), te_float(tt_ctx, TE_F32, 3))));
  S = tt_schedule1(Out);
  SP1 = tt_stage(S, P1);
  SP2 = tt_stage(S, P2);
  SR = tt_stage(S, R);
  SO = tt_stage(S, Out);
  TT_NO_ERR(tt_ctx);
}

/* Lowering S fails with status and the message substring. */
static void expect_lower_err(te_status st, const char *sub1, const char *sub2) {
  char *ir = te_lower_text(S, 2, TT_TENSORS(Ain, Out), 0, NULL);
  cr_assert_null(ir, "lowering should fail, got:\n%s", ir ? ir : "");
  TT_EXPECT_ERR(tt_ctx, st, sub1, sub2);
}

/* Lowering S succeeds. */
static void expect_lower_ok(void) {
  char *ir = te_lower_text(S, 2, TT_TENSORS(Ain, Out), 0, NULL);
  cr_assert_not_null(ir, "lowering failed: %s", te_last_error(tt_ctx));
  te_free(ir);
}

/* The schedule's trace equals want. */
static void expect_trace(const char *want) {
  char *t = te_schedule_trace(S);
  cr_assert_not_null(t);
  cr_assert_str_eq(t, want);
  te_free(t);
}

/* ---------------------------------------------------------------- compute_at */

/* P1 does not read P2 (it is the other way round), directly or through other stages. */
Test(err_multistage, compute_at_consumer_does_not_read_producer) {
  build();
  cr_assert_eq(te_compute_at(SP2, SP1, te_axis(SP1, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "stage 'P1' does not read stage 'P2'");
  expect_trace("");
}

/* A consumer that reads the producer through another stage is accepted when that stage is
   computed inside the same loop too (as TVM's softmax schedules do)... */
Test(err_multistage, compute_at_through_a_chain_is_accepted) {
  build();
  TT_OK(te_compute_at(SP2, SR, te_axis(SR, 0)));
  TT_OK(te_compute_at(SP1, SR, te_axis(SR, 0)));
  expect_lower_ok();
}

/* ...and refused while that stage still runs outside the loop, */
Test(err_multistage, compute_at_through_a_chain_with_reader_outside) {
  build();
  cr_assert_eq(te_compute_at(SP1, SR, te_axis(SR, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at",
                "stage 'P2' also reads 'P1' and runs outside loop 'i' of 'R'");
  expect_trace("");
}

/* ...or when lowering, if that stage was moved back to root afterwards. */
Test(err_multistage, compute_at_reader_moved_outside_afterwards) {
  build();
  TT_OK(te_compute_at(SP2, SR, te_axis(SR, 0)));
  TT_OK(te_compute_at(SP1, SR, te_axis(SR, 0)));
  TT_OK(te_compute_root(SP2));
  expect_lower_err(TE_ERR_SCHEDULE, "stage 'P1' is computed at loop 'i' of 'R'",
                   "stage 'P2' reads it outside that loop");
}

/* The accepted neighbour: R reads P1 through the inlined P2. */
Test(err_multistage, compute_at_through_inlined_stage_is_accepted) {
  build();
  TT_OK(te_compute_inline(SP2));
  TT_OK(te_compute_at(SP1, SR, te_axis(SR, 0)));
  expect_lower_ok();
}

Test(err_multistage, compute_at_iter_of_unrelated_stage) {
  build();
  cr_assert_eq(te_compute_at(SP1, SP2, te_axis(SR, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at",
                "iter 'i' belongs to stage 'R', not to consumer 'P2'");
}

Test(err_multistage, compute_at_iter_of_producer) {
  build();
  cr_assert_eq(te_compute_at(SP1, SP2, te_axis(SP1, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "belongs to stage 'P1'");
}

Test(err_multistage, compute_at_stages_of_different_schedules) {
  build();
  te_schedule *s2 = tt_schedule1(Out);
  te_stage *p2b = tt_stage(s2, P2);
  cr_assert_eq(te_compute_at(SP1, p2b, te_axis(p2b, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "different schedules");
}

Test(err_multistage, compute_at_non_leaf_iter) {
  build();
  te_iter *i = te_axis(SP2, 0), *o, *in;
  TT_OK(te_split(SP2, i, 4, &o, &in));
  cr_assert_eq(te_compute_at(SP1, SP2, i), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "stage 'P2'", "iter 'i' is not a leaf");
}

Test(err_multistage, compute_at_of_output) {
  build();
  /* R and Out both outputs: Out reads R, but an output is computed at root */
  te_schedule *s2 = te_schedule_new(tt_ctx, 2, TT_TENSORS(R, Out));
  cr_assert_not_null(s2);
  te_stage *r = tt_stage(s2, R), *o = tt_stage(s2, Out);
  cr_assert_eq(te_compute_at(r, o, te_axis(o, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "stage 'R' is an output");
}

Test(err_multistage, compute_at_itself) {
  build();
  cr_assert_eq(te_compute_at(SP2, SP2, te_axis(SP2, 1)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at",
                "stage 'P2' cannot be computed at itself");
}

Test(err_multistage, compute_at_into_inlined_stage) {
  build();
  TT_OK(te_compute_inline(SP2));
  cr_assert_eq(te_compute_at(SP1, SP2, te_axis(SP2, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "consumer 'P2' is inlined");
}

Test(err_multistage, compute_at_null_arguments) {
  build();
  cr_assert_eq(te_compute_at(NULL, SP2, te_axis(SP2, 0)), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute_at: the producer stage is NULL");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_compute_at(SP1, SP2, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute_at", "stage 'P2': iter is NULL");
}

/* Placement is checked again when lowering: the attachment loop was split afterwards. */
Test(err_multistage, compute_at_loop_split_afterwards) {
  build();
  te_iter *i = te_axis(SR, 0);
  TT_OK(te_compute_at(SP2, SR, i));
  TT_OK(te_split(SR, i, 2, NULL, NULL));
  expect_lower_err(TE_ERR_SCHEDULE, "stage 'P2'", "iter 'i' of 'R' is no longer a leaf loop");
}

/* Every reader of a producer computed at a loop must be inside that loop: softmax_exp is read
   by the output and by softmax_sum, still at root (compute sm_sum there first). */
Test(err_multistage, compute_at_producer_with_another_reader) {
  te_tensor *x = tt_placeholder("x", TE_F32, 2, TT_SHAPE(4, 10));
  te_tensor *sm = TT_NN(te_op_softmax(tt_ctx, x, "sm"));
  te_schedule *s = tt_schedule1(sm);
  te_stage *so = tt_stage(s, sm), *se = tt_stage(s, TT_NN(te_op_stage(sm, "exp")));
  cr_assert_eq(te_compute_at(se, so, te_axis(so, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at",
                "stage 'sm_sum' also reads 'sm_exp' and runs outside loop 'i0' of 'sm'");
  te_clear_error(tt_ctx);
  TT_OK(te_compute_at(tt_stage(s, TT_NN(te_op_stage(sm, "sum"))), so, te_axis(so, 0)));
  TT_OK(te_compute_at(se, so, te_axis(so, 0)));
}

/* ---------------------------------------------------------------- compute_inline, compute_root */

Test(err_multistage, compute_inline_of_reduction) {
  build();
  cr_assert_eq(te_compute_inline(SR), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "stage 'R' is a reduction");
}

Test(err_multistage, compute_inline_of_output) {
  build();
  cr_assert_eq(te_compute_inline(SO), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "stage 'Out' is an output");
}

Test(err_multistage, compute_inline_of_stage_with_attached_producer) {
  build();
  TT_OK(te_compute_at(SP1, SP2, te_axis(SP2, 0)));
  cr_assert_eq(te_compute_inline(SP2), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline",
                "stage 'P2' has stage 'P1' computed at one of its loops");
}

Test(err_multistage, compute_inline_null) {
  build();
  cr_assert_eq(te_compute_inline(NULL), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_compute_root(NULL), TE_ERR_INVALID_ARG);
}

/* compute_root undoes compute_at and compute_inline (the later placement wins). */
Test(err_multistage, compute_root_after_compute_at_is_accepted) {
  build();
  TT_OK(te_compute_at(SP2, SR, te_axis(SR, 0)));
  TT_OK(te_compute_root(SP2));
  TT_OK(te_split(SR, te_axis(SR, 0), 2, NULL, NULL)); /* no attachment left to break */
  expect_lower_ok();
}

/* ---------------------------------------------------------------- rfactor */

Test(err_multistage, rfactor_of_data_parallel_iter) {
  build();
  te_tensor *rf = NULL;
  cr_assert_eq(te_rfactor(S, R, te_axis(SR, 0), 0, &rf), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_rfactor", "stage 'R'", "iter 'i' is data-parallel");
  cr_assert_null(rf);
}

Test(err_multistage, rfactor_of_non_reduction_stage) {
  build();
  cr_assert_eq(te_rfactor(S, P2, te_axis(SP2, 1), 0, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_rfactor",
                "stage 'P2' is not a reduction (te_sum, te_prod, te_min_r, te_max_r or te_reduce)");
}

Test(err_multistage, rfactor_bad_factor_axis) {
  build();
  te_iter *ko, *ki;
  TT_OK(te_split(SR, te_reduce_iter(SR, 0), 2, &ko, &ki));
  cr_assert_eq(te_rfactor(S, R, ki, 2, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_rfactor", "stage 'R'",
                "factor axis must be in [0, 1] (got 2)");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_rfactor(S, R, ki, -1, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_rfactor", "(got -1)");
  /* nothing changed: R is still one stage with its split */
  cr_assert_eq(te_leaf_count(SR), 3);
  expect_trace("split R k 2\n");
}

Test(err_multistage, rfactor_with_fused_reduce_iters) {
  /* Q[i] = sum_{j, l} A3[i, j, l], j and l fused */
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *j = te_reduce_axis(tt_ctx, "j", te_int(tt_ctx, 0), te_int(tt_ctx, 4));
  te_expr *l = te_reduce_axis(tt_ctx, "l", te_int(tt_ctx, 0), te_int(tt_ctx, 5));
  te_tensor *a3 = tt_placeholder("A3", TE_F32, 3, TT_SHAPE(3, 4, 5));
  te_tensor *q = TT_NN(te_compute(tt_ctx, "Q", 1, TE_EXPRS(te_int(tt_ctx, 3)), TE_EXPRS(i),
                                  TE_SUM(tt_at3(a3, i, j, l), j, l)));
  te_schedule *s = tt_schedule1(q);
  te_stage *st = tt_stage(s, q);
  te_iter *f;
  TT_OK(te_fuse(st, te_reduce_iter(st, 0), te_reduce_iter(st, 1), &f));
  cr_assert_eq(te_rfactor(s, q, f, 0, NULL), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_rfactor", "stage 'Q'", "fused reduce iters");
}

Test(err_multistage, rfactor_iter_of_another_stage) {
  build();
  cr_assert_eq(te_rfactor(S, R, te_axis(SP2, 1), 0, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_rfactor", "iter 'j' belongs to stage 'P2'");
}

Test(err_multistage, rfactor_non_leaf_reduce_iter) {
  build();
  te_iter *k = te_reduce_iter(SR, 0);
  TT_OK(te_split(SR, k, 2, NULL, NULL));
  cr_assert_eq(te_rfactor(S, R, k, 0, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_rfactor", "iter 'k' is not a leaf loop");
}

Test(err_multistage, rfactor_of_placeholder) {
  build();
  cr_assert_eq(te_rfactor(S, Ain, te_reduce_iter(SR, 0), 0, NULL), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_rfactor", "'Ain' has no stage");
}

Test(err_multistage, rfactor_null_iter) {
  build();
  cr_assert_eq(te_rfactor(S, R, NULL, 0, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_rfactor", "stage 'R': iter is NULL");
}

/* A one-value custom reduction am[i] over A[i, k], k split by 2, rfactored on k.i: the status
   te_rfactor returns for the combiner res of the parameters l and r. */
static te_status rfactor_custom(te_expr *l, te_expr *r, te_expr *res) {
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 10));
  te_tensor *a = tt_placeholder("A", TE_F32, 2, TT_SHAPE(4, 10));
  te_reducer *red =
      TT_NN(te_reducer_new(tt_ctx, 1, &l, &r, &res, TE_EXPRS(te_float(tt_ctx, TE_F32, 0))));
  te_expr *val;
  TT_OK(te_reduce(red, 1, TE_EXPRS(tt_at2(a, i, k)), 1, TE_EXPRS(k), NULL, &val));
  te_tensor *out =
      TT_NN(te_compute(tt_ctx, "am", 1, TE_EXPRS(te_int(tt_ctx, 4)), TE_EXPRS(i), val));
  te_schedule *s = tt_schedule1(out);
  te_stage *st = tt_stage(s, out);
  te_iter *ko, *ki;
  TT_OK(te_split(st, te_reduce_iter(st, 0), 2, &ko, &ki));
  return te_rfactor(s, out, ki, 0, NULL);
}

/* l + r * r sums squares of the incoming values but is no combination of two partial sums of
   squares (neither commutative nor associative): refused. */
Test(err_multistage, rfactor_of_non_associative_combiner) {
  te_expr *l = te_param(tt_ctx, "l", TE_F32), *r = te_param(tt_ctx, "r", TE_F32);
  cr_assert_eq(rfactor_custom(l, r, te_add(l, te_mul(r, r))), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_rfactor", "stage 'am'",
                "partial results cannot be combined");
}

/* l * r + 1 is commutative but not associative ((ab + 1)c + 1 = abc + c + 1, a(bc + 1) + 1 =
   abc + a + 1): refused as such. */
Test(err_multistage, rfactor_of_commutative_non_associative_combiner) {
  te_expr *l = te_param(tt_ctx, "l", TE_F32), *r = te_param(tt_ctx, "r", TE_F32);
  cr_assert_eq(rfactor_custom(l, r, te_add(te_mul(l, r), te_float(tt_ctx, TE_F32, 1))),
               TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_rfactor", "stage 'am'", "not associative");
}

/* l - r is not commutative: refused. */
Test(err_multistage, rfactor_of_non_commutative_combiner) {
  te_expr *l = te_param(tt_ctx, "l", TE_F32), *r = te_param(tt_ctx, "r", TE_F32);
  cr_assert_eq(rfactor_custom(l, r, te_sub(l, r)), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_rfactor", "stage 'am'", "not commutative");
}

/* A combiner reading a tensor: the partial and the final stage would read it at other points. */
Test(err_multistage, rfactor_of_combiner_reading_a_tensor) {
  te_expr *l = te_param(tt_ctx, "l", TE_F32), *r = te_param(tt_ctx, "r", TE_F32);
  te_tensor *w = tt_placeholder("W", TE_F32, 1, TT_SHAPE(1));
  te_expr *res = te_add(l, te_mul(r, tt_at1(w, te_int(tt_ctx, 0))));
  cr_assert_eq(rfactor_custom(l, r, res), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_rfactor", "stage 'am'", "reads the tensor 'W'");
}

/* An argmax (custom reducer over two values) is factored, both values together. */
Test(err_multistage, rfactor_of_custom_reduction_accepted) {
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 10));
  te_tensor *a = tt_placeholder("A", TE_F32, 2, TT_SHAPE(4, 10));
  te_expr *li = te_param(tt_ctx, "li", TE_I64), *lv = te_param(tt_ctx, "lv", TE_F32);
  te_expr *ri = te_param(tt_ctx, "ri", TE_I64), *rv = te_param(tt_ctx, "rv", TE_F32);
  te_reducer *red =
      TT_NN(te_reducer_new(tt_ctx, 2, TE_EXPRS(li, lv), TE_EXPRS(ri, rv),
                           TE_EXPRS(te_select(te_gt(rv, lv), ri, li), te_max(lv, rv)),
                           TE_EXPRS(te_int(tt_ctx, -1), te_float(tt_ctx, TE_F32, -1e30))));
  te_expr *vals[2];
  TT_OK(te_reduce(red, 2, TE_EXPRS(k, tt_at2(a, i, k)), 1, TE_EXPRS(k), NULL, vals));
  te_tensor *outs[2];
  TT_OK(te_compute_multi(tt_ctx, "am", 1, TE_EXPRS(te_int(tt_ctx, 4)), TE_EXPRS(i), 2, vals, outs));
  te_schedule *s = te_schedule_new(tt_ctx, 2, outs);
  cr_assert_not_null(s);
  te_stage *st = tt_stage(s, outs[0]);
  te_iter *ko, *ki;
  TT_OK(te_split(st, te_reduce_iter(st, 0), 2, &ko, &ki));
  te_tensor *rf = NULL;
  TT_OK(te_rfactor(s, outs[0], ki, 0, &rf));
  cr_assert_not_null(rf);
}

/* ---------------------------------------------------------------- cache_read */

Test(err_multistage, cache_read_reader_does_not_read_tensor) {
  build();
  te_tensor *c = NULL;
  cr_assert_eq(te_cache_read(S, Ain, TE_SCOPE_LOCAL, 2, (te_stage *const[]){SP1, SP2}, &c),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_read", "stage 'P2' does not read tensor 'Ain'");
  cr_assert_null(c);
  /* nothing changed: no Ain_local stage, P1 still reads Ain */
  expect_trace("");
  cr_assert_eq(te_leaf_count(SP1), 2);
}

Test(err_multistage, cache_read_no_readers) {
  build();
  cr_assert_eq(te_cache_read(S, Ain, TE_SCOPE_LOCAL, 0, NULL, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_cache_read", "tensor 'Ain'",
                "needs at least one reader (got 0)");
}

Test(err_multistage, cache_read_bad_scope) {
  build();
  cr_assert_eq(te_cache_read(S, Ain, (te_scope)7, 1, (te_stage *const[]){SP1}, NULL),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_cache_read", "unknown scope 7");
}

Test(err_multistage, cache_read_null_reader) {
  build();
  cr_assert_eq(te_cache_read(S, Ain, TE_SCOPE_LOCAL, 1, (te_stage *const[]){NULL}, NULL),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_cache_read", "reader 0 is NULL");
}

Test(err_multistage, cache_read_reader_of_another_schedule) {
  build();
  te_schedule *s2 = tt_schedule1(Out);
  cr_assert_eq(
      te_cache_read(S, Ain, TE_SCOPE_LOCAL, 1, (te_stage *const[]){tt_stage(s2, P1)}, NULL),
      TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_read",
                "reader 'P1' belongs to another schedule");
}

Test(err_multistage, cache_read_tensor_not_in_schedule) {
  build();
  te_schedule *s2 = tt_schedule1(P2); /* Out and R are not part of it */
  cr_assert_eq(te_cache_read(s2, R, TE_SCOPE_LOCAL, 1, (te_stage *const[]){tt_stage(s2, P2)}, NULL),
               TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_cache_read",
                "tensor 'R' is not part of this schedule");
}

/* ---------------------------------------------------------------- cache_write */

Test(err_multistage, cache_write_after_split) {
  build();
  TT_OK(te_split(SR, te_axis(SR, 0), 2, NULL, NULL));
  cr_assert_eq(te_cache_write(S, R, TE_SCOPE_LOCAL, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_write", "stage 'R' was already scheduled");
}

Test(err_multistage, cache_write_after_annotation) {
  build();
  TT_OK(te_parallel(SP2, te_axis(SP2, 0)));
  cr_assert_eq(te_cache_write(S, P2, TE_SCOPE_LOCAL, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_write", "stage 'P2' was already scheduled");
}

Test(err_multistage, cache_write_after_compute_at) {
  build();
  TT_OK(te_compute_at(SP2, SR, te_axis(SR, 0)));
  cr_assert_eq(te_cache_write(S, P2, TE_SCOPE_LOCAL, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_write", "stage 'P2' was already scheduled");
}

Test(err_multistage, cache_write_of_placeholder) {
  build();
  cr_assert_eq(te_cache_write(S, Ain, TE_SCOPE_LOCAL, NULL), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_cache_write", "tensor 'Ain' is a placeholder");
}

Test(err_multistage, cache_write_bad_scope) {
  build();
  cr_assert_eq(te_cache_write(S, R, (te_scope)-1, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_cache_write", "unknown scope -1");
}

Test(err_multistage, cache_write_tensor_not_in_schedule) {
  build();
  te_schedule *s2 = tt_schedule1(P2);
  cr_assert_eq(te_cache_write(s2, R, TE_SCOPE_LOCAL, NULL), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_cache_write", "'R' is not part of this schedule");
}

/* ---------------------------------------------------------------- bind */

Test(err_multistage, bind_same_tag_twice_in_one_stage) {
  build();
  TT_OK(te_bind(SP2, te_axis(SP2, 0), TE_THREAD_X));
  cr_assert_eq(te_bind(SP2, te_axis(SP2, 1), TE_THREAD_X), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_bind", "stage 'P2'",
                "thread tag threadIdx.x is already bound to iter 'i'");
}

/* The accepted neighbours: one tag in two stages, and the same bind repeated. */
Test(err_multistage, bind_same_tag_in_two_stages_is_accepted) {
  build();
  TT_OK(te_bind(SP2, te_axis(SP2, 0), TE_BLOCK_X));
  TT_OK(te_bind(SR, te_axis(SR, 0), TE_BLOCK_X));
  TT_OK(te_bind(SR, te_axis(SR, 0), TE_BLOCK_X));
}

Test(err_multistage, bind_reduce_axis) {
  build();
  cr_assert_eq(te_bind(SR, te_reduce_iter(SR, 0), TE_THREAD_X), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_bind", "stage 'R'", "iter 'k' is a reduction axis");
}

Test(err_multistage, bind_unknown_tag) {
  build();
  cr_assert_eq(te_bind(SP2, te_axis(SP2, 0), (te_thread_tag)9), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_bind", "unknown thread tag 9");
}

Test(err_multistage, bind_parallel_iter) {
  build();
  TT_OK(te_parallel(SP2, te_axis(SP2, 0)));
  cr_assert_eq(te_bind(SP2, te_axis(SP2, 0), TE_BLOCK_X), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_bind", "iter 'i' is already parallel");
}

/* Binding is valid, but the CPU cannot run thread-bound loops. */
Test(err_multistage, build_bound_schedule_for_cpu) {
  build();
  te_iter *o, *in;
  TT_OK(te_split(SO, te_axis(SO, 0), 4, &o, &in));
  TT_OK(te_bind(SO, o, TE_BLOCK_X));
  TT_OK(te_bind(SO, in, TE_THREAD_X));
  char *ir = te_lower_text(S, 2, TT_TENSORS(Ain, Out), 0, NULL); /* lowering keeps the binding */
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  cr_assert(strstr(ir, "blockIdx.x") && strstr(ir, "threadIdx.x"), "%s", ir);
  te_free(ir);
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 2, TT_TENSORS(Ain, Out), 0, NULL, tt_target(), &m), TE_ERR_TARGET);
  cr_assert_null(m);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_build", "kernel 'k'", "bound to a GPU thread index");
}

/* ---------------------------------------------------------------- vectorize, parallel */

Test(err_multistage, vectorize_reduce_axis) {
  build();
  te_iter *ko, *ki;
  TT_OK(te_split(SR, te_reduce_iter(SR, 0), 2, &ko, &ki));
  cr_assert_eq(te_vectorize(SR, ki), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize", "stage 'R'",
                "iter 'k.i' is a reduction axis");
}

Test(err_multistage, parallel_reduce_axis) {
  build();
  cr_assert_eq(te_parallel(SR, te_reduce_iter(SR, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_parallel", "stage 'R'", "iter 'k' is a reduction axis",
                "te_rfactor");
}

/* The accepted neighbour: a reduce loop may be unrolled. */
Test(err_multistage, unroll_reduce_axis_is_accepted) {
  build();
  TT_OK(te_unroll(SR, te_reduce_iter(SR, 0)));
  expect_lower_ok();
}

/* ---------------------------------------------------------------- set_tail, pragma */

/* Shifting the last tile of a reduce loop inwards would add terms twice. */
Test(err_multistage, set_tail_shift_inwards_of_reduce_axis) {
  build();
  cr_assert_eq(te_set_tail(SR, te_reduce_iter(SR, 0), TE_TAIL_SHIFT_INWARDS), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_set_tail", "stage 'R'", "iter 'k' is a reduction axis",
                "twice");
}

/* Rounding an output's loops up would write past the caller's buffer; an intermediate is fine. */
Test(err_multistage, set_tail_round_up_of_output) {
  build();
  cr_assert_eq(te_set_tail(SO, te_axis(SO, 0), TE_TAIL_ROUND_UP), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_set_tail", "stage 'Out' is an output");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_set_tail(SP2, te_axis(SP2, 0), TE_TAIL_ROUND_UP), TE_OK);
}

Test(err_multistage, set_tail_unknown_strategy) {
  build();
  cr_assert_eq(te_set_tail(SP2, te_axis(SP2, 0), (te_tail)5), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_set_tail", "unknown tail strategy 5");
}

Test(err_multistage, set_tail_iter_of_another_stage) {
  build();
  cr_assert_eq(te_set_tail(SP2, te_axis(SR, 0), TE_TAIL_GUARD), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_set_tail", "iter 'i' belongs to stage 'R'");
}

/* The accepted neighbours: guard and shift_inwards on a data axis, recorded in the trace. */
Test(err_multistage, set_tail_guard_and_shift_are_accepted) {
  build();
  te_iter *i = te_axis(SP2, 0), *j = te_axis(SP2, 1);
  TT_OK(te_set_tail(SP2, i, TE_TAIL_SHIFT_INWARDS));
  TT_OK(te_set_tail(SP2, j, TE_TAIL_GUARD));
  TT_OK(te_split(SP2, i, 3, NULL, NULL));
  expect_trace("set_tail P2 i shift_inwards\nset_tail P2 j guard\nsplit P2 i 3\n");
  expect_lower_ok();
}

Test(err_multistage, pragma_unknown_key) {
  build();
  cr_assert_eq(te_pragma(SP2, te_axis(SP2, 0), "vectorize_me", 1), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_pragma", "stage 'P2'",
                "unknown pragma 'vectorize_me'", "unroll_max_step, prefetch");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_pragma(SP2, te_axis(SP2, 0), NULL, 1), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_pragma", "unknown pragma '(null)'");
}

Test(err_multistage, pragma_non_leaf_iter) {
  build();
  te_iter *i = te_axis(SP2, 0);
  TT_OK(te_split(SP2, i, 2, NULL, NULL));
  cr_assert_eq(te_pragma(SP2, i, "prefetch", 1), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_pragma", "iter 'i' is not a leaf loop");
}

/* ---------------------------------------------------------------- replay: malformed text */

/* Replays text on a fresh schedule of the same computation; expects status and substrings. */
#define EXPECT_REPLAY_ERR(text, status, ...)                                                       \
  do {                                                                                             \
    build();                                                                                       \
    cr_assert_eq(te_schedule_replay(S, (text)), (status), "%s", te_last_error(tt_ctx));            \
    TT_EXPECT_ERR(tt_ctx, (status), "te_schedule_replay", __VA_ARGS__);                            \
  } while (0)

Test(err_multistage, replay_unknown_step) {
  EXPECT_REPLAY_ERR("split P2 i 2\nfrobnicate P2 i\n", TE_ERR_PARSE, "line 2",
                    "unknown step 'frobnicate'");
}

Test(err_multistage, replay_too_few_words) {
  EXPECT_REPLAY_ERR("split P2 i\n", TE_ERR_PARSE, "line 1", "'split' takes 3 words (got 2)");
}

Test(err_multistage, replay_too_many_words) {
  EXPECT_REPLAY_ERR("compute_root P2 extra\n", TE_ERR_PARSE, "line 1",
                    "'compute_root' takes 1 words (got 2)");
}

Test(err_multistage, replay_reorder_without_iters) {
  EXPECT_REPLAY_ERR("reorder P2\n", TE_ERR_PARSE, "line 1", "'reorder' takes at least 2 words");
}

Test(err_multistage, replay_non_integer_factor) {
  EXPECT_REPLAY_ERR("split P2 i four\n", TE_ERR_PARSE, "line 1", "expected an integer, got 'four'");
}

Test(err_multistage, replay_factor_with_trailing_garbage) {
  EXPECT_REPLAY_ERR("tile P2 i j 2 3x\n", TE_ERR_PARSE, "line 1", "expected an integer, got '3x'");
}

Test(err_multistage, replay_non_integer_pragma_value) {
  EXPECT_REPLAY_ERR("pragma P2 i prefetch 1.5\n", TE_ERR_PARSE, "line 1",
                    "expected an integer, got '1.5'");
}

Test(err_multistage, replay_unknown_scope) {
  EXPECT_REPLAY_ERR("cache_write R texture\n", TE_ERR_PARSE, "line 1", "unknown scope 'texture'");
}

Test(err_multistage, replay_unknown_thread_tag) {
  EXPECT_REPLAY_ERR("bind P2 i warp.x\n", TE_ERR_PARSE, "line 1", "unknown thread tag 'warp.x'");
}

Test(err_multistage, replay_unknown_tail) {
  EXPECT_REPLAY_ERR("set_tail P2 i wrap\n", TE_ERR_PARSE, "line 1", "unknown tail strategy 'wrap'");
}

/* Comment and blank lines count in the line numbers. */
Test(err_multistage, replay_line_number_counts_comments_and_blanks) {
  EXPECT_REPLAY_ERR("# a comment\n\nsplit P2 i 2\n   \nsplit P2 i.o\n", TE_ERR_PARSE, "line 5",
                    "'split' takes 3 words");
}

Test(err_multistage, replay_null_trace) {
  build();
  cr_assert_eq(te_schedule_replay(S, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_schedule_replay", "trace is NULL");
}

/* An empty trace (or only comments) is valid and changes nothing. */
Test(err_multistage, replay_empty_trace_is_accepted) {
  build();
  TT_OK(te_schedule_replay(S, ""));
  TT_OK(te_schedule_replay(S, "# nothing\n\n"));
  expect_trace("");
}

/* ---------------------------------------------------------------- replay: mismatched trace */

Test(err_multistage, replay_unknown_stage) {
  EXPECT_REPLAY_ERR("split P2 i 2\nsplit Conv i 4\n", TE_ERR_NOT_FOUND, "line 2",
                    "no stage named 'Conv'");
}

Test(err_multistage, replay_unknown_iter) {
  EXPECT_REPLAY_ERR("split P2 x 4\n", TE_ERR_NOT_FOUND, "line 1", "stage 'P2' has no iter 'x'");
}

/* A trace of a schedule where i was split: i.o does not exist yet here. */
Test(err_multistage, replay_iter_made_by_a_missing_step) {
  EXPECT_REPLAY_ERR("split P2 i.o 2\n", TE_ERR_NOT_FOUND, "line 1", "stage 'P2' has no iter 'i.o'");
}

Test(err_multistage, replay_unknown_reader_stage) {
  EXPECT_REPLAY_ERR("cache_read Ain local P1 Nope\n", TE_ERR_NOT_FOUND, "line 1",
                    "no stage named 'Nope'");
}

Test(err_multistage, replay_unknown_tensor) {
  EXPECT_REPLAY_ERR("cache_write Conv local\n", TE_ERR_NOT_FOUND, "line 1",
                    "no tensor named 'Conv'");
}

Test(err_multistage, replay_rfactor_of_placeholder) {
  EXPECT_REPLAY_ERR("rfactor Ain k 0\n", TE_ERR_NOT_FOUND, "line 1", "no stage computes 'Ain'");
}

Test(err_multistage, replay_compute_at_unknown_consumer_iter) {
  EXPECT_REPLAY_ERR("compute_at P1 P2 z\n", TE_ERR_NOT_FOUND, "line 1",
                    "stage 'P2' has no iter 'z'");
}

/* A well-formed step that its primitive refuses: the primitive's status and message. */
Test(err_multistage, replay_step_refused_by_primitive) {
  build();
  cr_assert_eq(te_schedule_replay(S, "split P2 i 0\n"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "stage 'P2'", "factor must be > 0 (got 0)");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_schedule_replay(S, "compute_inline R\n"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "stage 'R' is a reduction");
}

/* Steps before the failing line stay applied (and are in the trace); later ones are not. */
Test(err_multistage, replay_keeps_steps_before_the_failure) {
  build();
  cr_assert_eq(te_schedule_replay(S, "split P2 i 2\nsplit P2 nope 2\nsplit P2 j 3\n"),
               TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "line 2");
  expect_trace("split P2 i 2\n");
  cr_assert_eq(te_leaf_count(SP2), 3);
}
