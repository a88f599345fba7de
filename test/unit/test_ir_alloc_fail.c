/* test_ir_alloc_fail.c — every allocation of the IR constructors may fail: with the failing
 * allocator (the n-th allocation fails, for every n) constructors return NULL and record
 * TE_ERR_NOMEM, printing and the verifier keep working, and nothing crashes or leaks. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "base/ctx_internal.h"
#include "ir/ir.h"

/* Builds a small kernel body; returns it or NULL. */
static ir_stmt *build(te_ctx *ctx) {
  te_expr *i = te_var(ctx, "i"), *n = te_var(ctx, "n"), *x = te_param(ctx, "x", TE_F32);
  te_expr *idx = te_add(te_mul(i, te_int(ctx, 4)), te_floormod(n, te_int(ctx, 3)));
  te_expr *v = te_call(ctx, "exp", 1, (te_expr *[]){te_mul(x, te_cast(TE_F32, idx))});
  v = te_select(te_lt(idx, n), v, te_float(ctx, TE_F32, 0.0));
  ir_buffer *B = ir_buffer_new(ctx, "B", TE_F32, 1, &n, TE_SCOPE_GLOBAL, NULL, 0);
  ir_stmt *body =
      ir_seq2(ctx, ir_store(B, v, idx), ir_evaluate(ir_substitute(ctx, idx, 1, &i, &n)));
  te_expr *k = ir_reduce_axis_new(ctx, "k", te_int(ctx, 0), n);
  te_expr *axes[1] = {k};
  ir_reduce red = {IR_REDUCER_SUM, NULL, 1, axes, NULL, 0};
  te_expr *sum = ir_reduce_make(ctx, TE_I64, &red, 1, &k);
  body = ir_seq2(ctx, body, ir_evaluate(sum));
  return ir_for(i, te_int(ctx, 0), n, IR_FOR_SERIAL, 0, body);
}

Test(ir_alloc_fail, every_allocation_may_fail) {
  int succeeded = 0;
  for (long n = 1; n < 400 && !succeeded; n++) {
    te_ctx *ctx = te_ctx_new();
    cr_assert_not_null(ctx);
    ir_debug_fail_alloc_after(ctx, n);
    ir_scratch_begin(ctx);
    ir_stmt *s = build(ctx);
    if (s) {
      cr_expect_eq(te_last_status(ctx), TE_OK, "n=%ld: %s", n, te_last_error(ctx));
      ir_debug_fail_alloc_after(ctx, -1);
      cr_expect_eq(ir_verify_stmt(ctx, s, "test", false), TE_OK);
      succeeded = 1;
    } else {
      cr_expect_eq(te_last_status(ctx), TE_ERR_NOMEM, "n=%ld: status %s (%s)", n,
                   te_status_str(te_last_status(ctx)), te_last_error(ctx));
    }
    ir_scratch_end(ctx);
    te_ctx_free(ctx);
  }
  cr_expect(succeeded, "the build never succeeded");
}

Test(ir_alloc_fail, printing_partial_ir_is_safe) {
  te_ctx *ctx = te_ctx_new();
  te_expr *i = te_var(ctx, "i");
  ir_debug_fail_alloc_after(ctx, 1);
  te_expr *e = te_add(i, te_int(ctx, 1));
  cr_expect_null(e);
  cr_expect_eq(te_last_status(ctx), TE_ERR_NOMEM);
  cr_expect_null(te_expr_text(e));
  cr_expect_null(te_expr_text(i)); /* printing allocates too: it fails, cleanly */
  cr_expect_eq(te_last_status(ctx), TE_ERR_NOMEM);
  ir_debug_fail_alloc_after(ctx, -1);
  char *s = te_expr_text(i);
  cr_expect_str_eq(s, "i");
  te_free(s);
  te_ctx_free(ctx);
}
