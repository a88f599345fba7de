/* test_tune_custom_reduce.c — workloads with custom reducers in the tuner: at_workload_clone
 * keeps the values of a tuple reduction on one reducer (te_compute_multi refuses results of
 * different te_reduce calls), and a tuning run of an argmax measures candidates without errors,
 * each checked against the default schedule (check = 100).
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_custom_reduce, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

/* (idx, val)[i] = argmax_k A[i, k] in context c; outs[0], outs[1] */
static void argmax(te_ctx *c, int64_t M, int64_t K, te_tensor *outs[2]) {
  te_tensor *A = te_placeholder(c, "A", TE_F32, 2, TE_EXPRS(te_int(c, M), te_int(c, K)));
  te_expr *li = te_param(c, "li", TE_I32), *lv = te_param(c, "lv", TE_F32);
  te_expr *ri = te_param(c, "ri", TE_I32), *rv = te_param(c, "rv", TE_F32);
  te_expr *take = te_or(te_gt(rv, lv), te_and(te_eq(rv, lv), te_lt(ri, li)));
  te_reducer *red = te_reducer_new(
      c, 2, TE_EXPRS(li, lv), TE_EXPRS(ri, rv), TE_EXPRS(te_select(take, ri, li), te_max(lv, rv)),
      TE_EXPRS(te_const(c, TE_I32, 1 << 30), te_const(c, TE_F32, -INFINITY)));
  cr_assert_not_null(red, "%s", te_last_error(c));
  te_expr *i = te_var(c, "i");
  te_expr *k = te_reduce_axis(c, "k", te_int(c, 0), te_int(c, K));
  te_expr *r[2];
  cr_assert_eq(te_reduce(red, 2, TE_EXPRS(te_cast(TE_I32, k), TE_AT(A, i, k)), 1, &k, NULL, r),
               TE_OK, "%s", te_last_error(c));
  cr_assert_eq(te_compute_multi(c, "amax", 1, TE_EXPRS(te_int(c, M)), &i, 2, r, outs), TE_OK, "%s",
               te_last_error(c));
}

Test(tune_custom_reduce, clone_keeps_one_reducer) {
  te_tensor *outs[2];
  argmax(ctx, 6, 40, outs);
  at_workload wl, copy;
  cr_assert_eq(at_workload_make(ctx, 2, outs, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  te_ctx *c2 = te_ctx_new();
  cr_assert_eq(at_workload_clone(&wl, c2, &copy), TE_OK, "%s", te_last_error(c2));
  cr_assert_eq(copy.nout, 2);
  sch_op *op = copy.outs[0]->op;
  cr_assert_eq(op->nbody, 2);
  cr_assert_eq(op->body[0]->u.reduce->custom, op->body[1]->u.reduce->custom);
  cr_assert_neq(op->body[0]->u.reduce->custom, wl.outs[0]->op->body[0]->u.reduce->custom);
  char *a = at_workload_text(&wl), *b = at_workload_text(&copy);
  cr_assert_str_eq(a, b);
  free(a);
  free(b);
  te_ctx_free(c2);
}

Test(tune_custom_reduce, argmax_tunes) {
  te_tensor *outs[2];
  argmax(ctx, 8, 300, outs);
  te_tune_summary sum;
  te_tune_options o = tu_quick(tu_path("log.jsonl"), 4, 3);
  o.check = 100;
  o.summary = &sum;
  te_target *t = tu_target(ctx);
  cr_assert_eq(te_tune(ctx, 2, outs, t, &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.errors, 0, "%d errors", sum.errors);
  cr_assert_eq(sum.measured, 4);
}
