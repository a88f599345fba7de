/* test_schedule.c (errors) — misuses of schedules and primitives: bad outputs, foreign tensors
 * and iterators, out-of-range axes, split factors <= 0, splitting a non-leaf, fusing
 * non-adjacent or mixed (data-parallel with reduce) loops, reorders with duplicates, foreign or
 * non-leaf iterators, inlining an output or a reduction, bad tiles. Messages name the primitive,
 * the stage and the rule ("factor must be > 0", "belongs to stage").
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_schedule, .init = tt_setup, .fini = tt_teardown);

/* Ain (8x6) -> Pmid = Ain * 2 (element-wise) -> Cout[i] = sum_k Pmid[i, k]; also Dout = Pmid + 1 */
static te_tensor *Ain, *Pmid, *Cout, *Dout;
static te_schedule *S;
static te_stage *SC, *SP;

static void build(void) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 6));
  te_expr *sh[] = {te_int(tt_ctx, 8), te_int(tt_ctx, 6)};
  Ain = tt_placeholder("Ain", TE_F32, 2, TT_SHAPE(8, 6));
  Pmid = TT_NN(te_compute(tt_ctx, "Pmid", 2, sh, TE_EXPRS(i, j),
                          te_mul(tt_at2(Ain, i, j), te_float(tt_ctx, TE_F32, 2))));
  Cout = TT_NN(te_compute(tt_ctx, "Cout", 1, sh, TE_EXPRS(i), TE_SUM(tt_at2(Pmid, i, k), k)));
  Dout = TT_NN(te_compute(tt_ctx, "Dout", 2, sh, TE_EXPRS(i, j),
                          te_add(tt_at2(Pmid, i, j), te_float(tt_ctx, TE_F32, 1))));
  S = tt_schedule1(Cout);
  SC = tt_stage(S, Cout);
  SP = tt_stage(S, Pmid);
  TT_NO_ERR(tt_ctx);
}

Test(err_schedule, new_with_zero_outputs) {
  build();
  cr_assert_null(te_schedule_new(tt_ctx, 0, TT_TENSORS(Cout)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_schedule_new");
}

Test(err_schedule, new_with_placeholder_output) {
  build();
  cr_assert_null(te_schedule_new(tt_ctx, 1, TT_TENSORS(Ain)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_schedule_new", "Ain");
}

Test(err_schedule, new_with_null_output) {
  build();
  cr_assert_null(te_schedule_new(tt_ctx, 2, TT_TENSORS(Cout, NULL)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_schedule_new");
}

Test(err_schedule, stage_of_tensor_not_in_schedule) {
  build();
  cr_assert_null(te_stage_of(S, Dout));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_stage_of", "Dout");
}

Test(err_schedule, stage_of_placeholder) {
  build();
  cr_assert_null(te_stage_of(S, Ain));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_stage_of", "Ain");
}

/* Choice: an out-of-range index is TE_ERR_INVALID_ARG (not a primitive). */
Test(err_schedule, axis_out_of_range) {
  build();
  cr_assert_null(te_axis(SC, 1));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_axis", "Cout");
}

Test(err_schedule, reduce_iter_out_of_range) {
  build();
  cr_assert_null(te_reduce_iter(SP, 0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_reduce_iter", "Pmid");
}

Test(err_schedule, split_factor_zero) {
  build();
  te_iter *o = NULL, *in = NULL;
  cr_assert_eq(te_split(SC, te_axis(SC, 0), 0, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "Cout", "factor must be > 0");
}

Test(err_schedule, split_factor_negative) {
  build();
  te_iter *o, *in;
  cr_assert_eq(te_split(SC, te_axis(SC, 0), -3, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "factor must be > 0", "-3");
}

Test(err_schedule, split_nparts_zero) {
  build();
  te_iter *o, *in;
  cr_assert_eq(te_split_nparts(SC, te_axis(SC, 0), 0, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split_nparts", "Cout");
}

Test(err_schedule, split_non_leaf) {
  build();
  te_iter *i = te_axis(SC, 0), *o, *in;
  TT_OK(te_split(SC, i, 2, &o, &in));
  cr_assert_eq(te_split(SC, i, 2, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "Cout", "'i'");
}

Test(err_schedule, split_iter_of_another_stage) {
  build();
  te_iter *o, *in;
  cr_assert_eq(te_split(SC, te_axis(SP, 1), 2, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "belongs to stage", "Pmid");
}

Test(err_schedule, split_null_iter) {
  build();
  te_iter *o, *in;
  cr_assert_eq(te_split(SC, NULL, 2, &o, &in), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_split");
}

Test(err_schedule, fuse_non_adjacent) {
  build();
  te_stage *sd;
  te_schedule *s2 = TT_NN(te_schedule_new(tt_ctx, 1, TT_TENSORS(Dout)));
  sd = tt_stage(s2, Dout);
  te_iter *i = te_axis(sd, 0), *j = te_axis(sd, 1), *jo, *ji, *f;
  TT_OK(te_split(sd, j, 3, &jo, &ji));
  cr_assert_eq(te_fuse(sd, i, ji, &f), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_fuse", "Dout");
}

Test(err_schedule, fuse_inner_before_outer) {
  build();
  te_iter *f;
  cr_assert_eq(te_fuse(SP, te_axis(SP, 1), te_axis(SP, 0), &f), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_fuse", "Pmid");
}

Test(err_schedule, fuse_data_with_reduce) {
  build();
  te_iter *f;
  cr_assert_eq(te_fuse(SC, te_axis(SC, 0), te_reduce_iter(SC, 0), &f), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_fuse", "Cout");
}

Test(err_schedule, reorder_duplicate) {
  build();
  te_iter *i = te_axis(SP, 0);
  cr_assert_eq(te_reorder(SP, 2, (te_iter *const[]){i, i}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder", "Pmid");
}

Test(err_schedule, reorder_foreign_axis) {
  build();
  cr_assert_eq(te_reorder(SC, 2, (te_iter *const[]){te_reduce_iter(SC, 0), te_axis(SP, 0)}),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder", "belongs to stage");
}

Test(err_schedule, reorder_non_leaf) {
  build();
  te_iter *i = te_axis(SP, 0), *j = te_axis(SP, 1), *o, *in;
  TT_OK(te_split(SP, i, 4, &o, &in));
  cr_assert_eq(te_reorder(SP, 2, (te_iter *const[]){j, i}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder", "Pmid", "'i'");
}

Test(err_schedule, compute_inline_of_output) {
  build();
  cr_assert_eq(te_compute_inline(SC), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "Cout");
}

Test(err_schedule, compute_inline_of_reduction) {
  build();
  /* Eout reads Cout, so Cout is an intermediate reduction stage */
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *E = TT_NN(te_compute(tt_ctx, "Eout", 1, TE_EXPRS(te_int(tt_ctx, 8)), TE_EXPRS(i),
                                  te_neg(tt_at1(Cout, i))));
  te_schedule *s2 = tt_schedule1(E);
  cr_assert_eq(te_compute_inline(tt_stage(s2, Cout)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "Cout");
}

Test(err_schedule, tile_factor_zero) {
  build();
  te_iter *a, *b, *c, *d;
  cr_assert_eq(te_tile(SP, te_axis(SP, 0), te_axis(SP, 1), 4, 0, &a, &b, &c, &d), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tile", "Pmid", "must be > 0");
}

Test(err_schedule, tile_x_inside_y) {
  build();
  te_iter *a, *b, *c, *d;
  cr_assert_eq(te_tile(SP, te_axis(SP, 1), te_axis(SP, 0), 2, 2, &a, &b, &c, &d), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tile", "Pmid");
}

Test(err_schedule, tile_same_axis_twice) {
  build();
  te_iter *a, *b, *c, *d, *i = te_axis(SP, 0);
  cr_assert_eq(te_tile(SP, i, i, 2, 2, &a, &b, &c, &d), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tile", "Pmid");
}

/* A failed primitive changes nothing: the stage still builds with its old loops. */
Test(err_schedule, failed_primitive_leaves_stage_unchanged) {
  build();
  te_iter *o, *in;
  int before = te_leaf_count(SC);
  cr_assert_eq(te_split(SC, te_axis(SC, 0), 0, &o, &in), TE_ERR_SCHEDULE);
  cr_assert_eq(te_leaf_count(SC), before);
  cr_assert_eq(te_leaf(SC, 0), te_axis(SC, 0));
}

/* te_reorder_storage: outputs keep their caller's layout; every data axis once, whole or as the
   two parts of its own split. */
Test(err_schedule, reorder_storage_of_output) {
  build();
  cr_assert_eq(te_reorder_storage(SC, 1, (te_iter *const[]){te_axis(SC, 0)}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'Cout'", "an output");
}

Test(err_schedule, reorder_storage_wrong_count) {
  build();
  cr_assert_eq(te_reorder_storage(SP, 1, (te_iter *const[]){te_axis(SP, 1)}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'Pmid'", "1 dims given",
                "2 data axes");
}

Test(err_schedule, reorder_storage_duplicate_axis) {
  build();
  te_iter *j = te_axis(SP, 1);
  cr_assert_eq(te_reorder_storage(SP, 2, (te_iter *const[]){j, j}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'j'", "twice");
}

Test(err_schedule, reorder_storage_split_iter) {
  build();
  te_iter *o, *in;
  TT_OK(te_split(SP, te_axis(SP, 0), 4, &o, &in));
  cr_assert_eq(te_reorder_storage(SP, 2, (te_iter *const[]){te_axis(SP, 1), o}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'i'",
                "given by one part of its split only");
}

/* A blocked layout takes both parts of a data axis' own split by a factor, once each: not a
   part of a split of a part, not a split by a number of parts, not a part and the axis. */
Test(err_schedule, reorder_storage_blocked_misuse) {
  build();
  te_iter *o, *in, *oo, *oi, *jo, *ji;
  TT_OK(te_split(SP, te_axis(SP, 0), 4, &o, &in));
  TT_OK(te_split(SP, o, 2, &oo, &oi));
  cr_assert_eq(te_reorder_storage(SP, 3, (te_iter *const[]){oo, te_axis(SP, 1), in}),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'i.o.o'", "twice-split");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_reorder_storage(SP, 3, (te_iter *const[]){o, te_axis(SP, 0), in}),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'i'", "twice");
  te_clear_error(tt_ctx);
  TT_OK(te_split_nparts(SP, te_axis(SP, 1), 3, &jo, &ji));
  cr_assert_eq(te_reorder_storage(SP, 4, (te_iter *const[]){o, jo, in, ji}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'j.o'", "number of parts");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_reorder_storage(SP, 5, (te_iter *const[]){o, in, in, o, in}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "5 dims given", "2 data axes");
}

Test(err_schedule, reorder_storage_reduce_or_foreign_iter) {
  build();
  cr_assert_eq(te_reorder_storage(SP, 2, (te_iter *const[]){te_axis(SP, 1), te_reduce_iter(SC, 0)}),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'k'",
                "neither one of its data axes");
}

Test(err_schedule, reorder_storage_null) {
  build();
  cr_assert_eq(te_reorder_storage(NULL, 0, NULL), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_reorder_storage(SP, 2, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_reorder_storage", "dims is NULL");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_reorder_storage(SP, 2, (te_iter *const[]){te_axis(SP, 1), NULL}),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_reorder_storage", "dims[1] is NULL");
}
