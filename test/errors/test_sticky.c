/* test_sticky.c (errors) — the error protocol itself: a fresh context has no error; a failed
 * constructor does not overwrite the recorded error (the first message wins), a failed status
 * call does (it reports its own outcome); NULL results propagate through constructors without
 * new messages; successful calls do not clear the error; te_clear_error resets status and
 * message; contexts are independent. (test_contract.c: valid calls after a failure.)
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(err_sticky, .init = tt_setup, .fini = tt_teardown);

Test(err_sticky, fresh_context_has_no_error) {
  cr_assert_eq(te_last_status(tt_ctx), TE_OK);
  cr_assert_str_eq(te_last_error(tt_ctx), "");
}

Test(err_sticky, second_error_does_not_overwrite_first) {
  te_tensor *A = tt_placeholder("Ain", TE_F32, 1, TT_SHAPE(8));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "Cout", 1, TE_EXPRS(te_int(tt_ctx, 8)), TE_EXPRS(i), tt_at1(A, i)));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 0, &o, &in), TE_ERR_SCHEDULE);
  /* failed constructors, of other kinds: the first message stays */
  cr_assert_null(te_var(tt_ctx, "not valid"));
  cr_assert_null(te_target_parse(tt_ctx, "foo"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "factor must be > 0", "(got 0)");
  cr_assert(strstr(te_last_error(tt_ctx), "te_var") == NULL, "message was overwritten: %s",
            te_last_error(tt_ctx));
  /* a failed status call reports its own failure */
  cr_assert_eq(te_split(st, te_axis(st, 0), -1, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "factor must be > 0", "(got -1)");
}

Test(err_sticky, null_propagates_without_new_message) {
  te_expr *x = te_param(tt_ctx, "x", TE_F32);
  te_expr *bad = te_call(tt_ctx, "nosuchfn", 1, TE_EXPRS(x));
  cr_assert_null(bad);
  te_expr *e = te_mul(te_add(bad, x), te_call(tt_ctx, "exp", 1, TE_EXPRS(bad)));
  cr_assert_null(e);
  te_tensor *t =
      te_compute(tt_ctx, "Cout", 1, TE_EXPRS(te_int(tt_ctx, 4)), TE_EXPRS(te_var(tt_ctx, "i")), e);
  cr_assert_null(t);
  cr_assert_null(te_schedule_new(tt_ctx, 1, TT_TENSORS(t)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "nosuchfn");
}

Test(err_sticky, success_does_not_clear) {
  cr_assert_null(te_var(tt_ctx, "1x"));
  te_expr *ok = te_add(te_int(tt_ctx, 1), te_var(tt_ctx, "y"));
  cr_assert_not_null(ok);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_var", "1x");
}

Test(err_sticky, clear_resets) {
  cr_assert_null(te_var(tt_ctx, "1x"));
  te_clear_error(tt_ctx);
  cr_assert_eq(te_last_status(tt_ctx), TE_OK);
  cr_assert_str_eq(te_last_error(tt_ctx), "");
  /* and the next error is recorded */
  cr_assert_null(te_target_parse(tt_ctx, "cuda -arch=sm_1"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "sm_1");
}

Test(err_sticky, contexts_are_independent) {
  te_ctx *other = te_ctx_new();
  cr_assert_null(te_var(other, "2y"));
  cr_assert_eq(te_last_status(other), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_last_status(tt_ctx), TE_OK);
  te_ctx_free(other);
}

/* A kernel error after te_clear_error becomes the context's error; a later build error does
   not replace it. */
Test(err_sticky, kernel_error_is_sticky_too) {
  te_tensor *A = tt_placeholder("Ain", TE_F32, 1, TT_SHAPE(4));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "Cout", 1, TE_EXPRS(te_int(tt_ctx, 4)), TE_EXPRS(i), tt_at1(A, i)));
  te_module *m = tt_build(tt_schedule1(C), "k", 2, TT_TENSORS(A, C), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, 5), *c = TT_ALLOC(TE_F32, 4);
  DLTensor *dl[2];
  tt_dl(2, TT_BUFS(a, c), dl);
  cr_assert_eq(te_module_call(m, "k", 2, dl, 0, NULL), TE_ERR_SHAPE);
  cr_assert_null(te_target_parse(tt_ctx, "foo"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "Ain", "expected 4", "got 5");
}

/* te_ctx_free(NULL) is allowed; te_free(NULL) too: they free nothing and record nothing, so a
   live context and what was made in it stay usable (under ASan a wrong free shows here). */
Test(err_sticky, free_null) {
  te_expr *x = TT_NN(te_var(tt_ctx, "x"));
  te_ctx_free(NULL);
  te_free(NULL);
  cr_assert_eq(te_last_status(tt_ctx), TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_str_eq(te_last_error(tt_ctx), "");
  char *text = TT_NN(te_expr_text(te_add(x, te_int(tt_ctx, 1))));
  cr_assert_str_eq(text, "x + 1");
  te_free(text);
}
