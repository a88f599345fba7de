/* test_accessors.c (errors) — misuse of the small calls: tensor, iterator, target and module
 * accessors given NULL or an index out of range, thread counts that are negative, and
 * te_tune_workload given bad outputs. NULL alone has no context to record on (nothing is
 * recorded, core.h); an out-of-range index is TE_ERR_INVALID_ARG naming the object.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(err_accessors, .init = tt_setup, .fini = tt_teardown);

Test(err_accessors, tensor_accessors_of_null) {
  cr_expect_null(te_tensor_name(NULL));
  cr_expect_eq(te_tensor_ndim(NULL), -1);
  cr_expect_null(te_tensor_dim(NULL, 0));
  te_dtype none = te_tensor_dtype(NULL);
  cr_expect(none.code == 0 && none.bits == 0 && none.lanes == 0, "dtype of NULL is {0, 0, 0}");
  TT_NO_ERR(tt_ctx);
}

Test(err_accessors, tensor_dim_out_of_range) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(3, 4));
  cr_expect_eq(te_tensor_ndim(A), 2);
  cr_expect_str_eq(te_tensor_name(A), "A");
  cr_expect_not_null(te_tensor_dim(A, 1));
  cr_expect_null(te_tensor_dim(A, 2));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tensor_dim: tensor 'A' has rank 2 (asked for 2)");
  te_clear_error(tt_ctx);
  cr_expect_null(te_tensor_dim(A, -1));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tensor_dim", "(asked for -1)");
  te_clear_error(tt_ctx);
  te_tensor *S = tt_placeholder("S", TE_F32, 0, NULL); /* a scalar: no dimension at all */
  cr_expect_null(te_tensor_dim(S, 0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "tensor 'S' has rank 0");
}

Test(err_accessors, iter_and_leaf_accessors) {
  cr_expect_null(te_iter_name(NULL));
  cr_expect_eq(te_leaf_count(NULL), -1);
  cr_expect_null(te_leaf(NULL, 0));
  TT_NO_ERR(tt_ctx);
  te_tensor *B = tt_placeholder("B", TE_F32, 1, TT_SHAPE(8));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *D =
      TT_NN(te_compute(tt_ctx, "D", 1, TE_EXPRS(te_int(tt_ctx, 8)), TE_EXPRS(i), tt_at1(B, i)));
  te_stage *st = tt_stage(tt_schedule1(D), D);
  cr_expect_str_eq(te_iter_name(te_axis(st, 0)), "i");
  cr_expect_eq(te_leaf_count(st), 1);
  cr_expect_null(te_leaf(st, 1));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_leaf: stage 'D' has 1 leaves (asked for 1)");
  te_clear_error(tt_ctx);
  cr_expect_null(te_leaf(st, -3));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_leaf", "(asked for -3)");
  te_clear_error(tt_ctx);
  cr_expect_null(te_reduce_iter(st, 0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_reduce_iter: stage 'D' has 0 reduce axes");
}

Test(err_accessors, target_accessors_of_null) {
  cr_expect_null(te_target_str(NULL));
  cr_expect_eq(te_target_vector_bits(NULL), 0);
  te_target *t = tt_target();
  cr_expect(te_target_str(t) && !strncmp(te_target_str(t), "llvm -mtriple=", 14), "%s",
            te_target_str(t));
  cr_expect_geq(te_target_vector_bits(t), 128);
  TT_NO_ERR(tt_ctx);
}

Test(err_accessors, module_build_times) {
  te_build_times z = te_module_build_times(NULL);
  cr_expect(z.lower_s == 0 && z.llvm_s == 0 && z.jit_s == 0, "a NULL module: all 0");
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(64));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, 64)), TE_EXPRS(i),
                                  te_mul(tt_at1(A, i), tt_at1(A, i))));
  te_module *m = tt_build(tt_schedule1(C), "sq", 2, TT_TENSORS(A, C), 0, NULL);
  te_build_times t = te_module_build_times(m);
  cr_expect(isfinite(t.lower_s) && t.lower_s > 0, "lowering took time: %g", t.lower_s);
  cr_expect(isfinite(t.llvm_s) && t.llvm_s > 0, "LLVM took time: %g", t.llvm_s);
  cr_expect(isfinite(t.jit_s) && t.jit_s >= 0, "jit: %g", t.jit_s);
  cr_expect_lt(t.lower_s + t.llvm_s + t.jit_s, 60, "a tiny kernel builds in well under a minute");
}

/* n <= 0 restores the default; it never makes the count 0 or negative. */
Test(err_accessors, negative_thread_counts) {
  int def = te_num_threads();
  cr_assert_geq(def, 1);
  te_set_num_threads(3);
  cr_expect_eq(te_num_threads(), 3);
  te_set_num_threads(-5);
  cr_expect_eq(te_num_threads(), def, "a negative count restores the default");
  te_rt_set_num_threads(2);
  cr_expect_eq(te_rt_num_threads(), 2);
  te_rt_set_num_threads(-1);
  cr_expect_eq(te_rt_num_threads(), def);
  te_set_num_threads(0);
  cr_expect_eq(te_num_threads(), def);
}

/* TE_NUM_THREADS that is negative is ignored (OpenMP's default is used). Criterion runs each
   test in a fresh process, so the variable is read here for the first time. */
Test(err_accessors, negative_thread_count_in_the_environment) {
  setenv("TE_NUM_THREADS", "-4", 1);
  cr_expect_geq(te_num_threads(), 1);
}

/* te_tune's thread and job counts: negative is TE_ERR_INVALID_ARG naming the option. */
Test(err_accessors, tune_negative_counts) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(16));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, 16)), TE_EXPRS(i), tt_at1(A, i)));
  te_tune_options o = {.log_path = "/tmp/te-test-never-written.jsonl", .threads = -2};
  cr_expect_eq(te_tune(tt_ctx, 1, &C, tt_target(), &o), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune: threads must be >= 0 (got -2)");
  o.threads = 0;
  o.jobs = -1;
  cr_expect_eq(te_tune(tt_ctx, 1, &C, tt_target(), &o), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune: jobs must be >= 0 (got -1)");
  o.jobs = 0;
  o.time_budget_s = NAN;
  cr_expect_eq(te_tune(tt_ctx, 1, &C, tt_target(), &o), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune: time_budget_s must be >= 0");
}

/* ---------------------------------------------------------------- te_tune_workload */

static te_tensor *small_compute(te_ctx *ctx, const char *name) {
  te_expr *n = te_int(ctx, 8);
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 1, &n);
  te_expr *i = te_var(ctx, "i");
  return te_compute(ctx, name, 1, &n, &i, te_add(te_at(A, 1, &i), te_float(ctx, TE_F32, 1)));
}

Test(err_accessors, tune_workload_good) {
  te_tensor *C = TT_NN(small_compute(tt_ctx, "C"));
  char key[17] = "";
  char *text = TT_NN(te_tune_workload(tt_ctx, 1, &C, key));
  cr_expect_eq(strlen(key), 16, "the key is 16 hex digits: '%s'", key);
  char *again = TT_NN(te_tune_workload(tt_ctx, 1, &C, NULL)); /* key is optional */
  cr_expect_str_eq(text, again);
  te_free(text), te_free(again);
  TT_NO_ERR(tt_ctx);
}

Test(err_accessors, tune_workload_bad_outputs) {
  te_tensor *C = TT_NN(small_compute(tt_ctx, "C"));
  char key[17];
  cr_expect_null(te_tune_workload(NULL, 1, &C, key));
  cr_expect_null(te_tune_workload(tt_ctx, 0, &C, key));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune_workload", "at least one output");
  te_clear_error(tt_ctx);
  cr_expect_null(te_tune_workload(tt_ctx, 1, NULL, key));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune_workload");
  te_clear_error(tt_ctx);
  cr_expect_null(te_tune_workload(tt_ctx, 1, (te_tensor *[]){NULL}, key));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune_workload: output 0 is NULL");
  te_clear_error(tt_ctx);
  te_ctx *other = te_ctx_new();
  te_tensor *D = small_compute(other, "D");
  cr_expect_null(te_tune_workload(tt_ctx, 1, &D, key));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune_workload", "'D' belongs to another context");
  te_ctx_free(other);
  te_clear_error(tt_ctx);
  te_tensor *A = tt_placeholder("P", TE_F32, 1, TT_SHAPE(4));
  cr_expect_null(te_tune_workload(tt_ctx, 1, &A, key));
  cr_expect_neq(te_last_status(tt_ctx), TE_OK, "a placeholder computes nothing");
  cr_expect(strstr(te_last_error(tt_ctx), "te_tune_workload") != NULL, "%s", te_last_error(tt_ctx));
}

/* A NULL output after a failure keeps the failure's message (core.h). */
Test(err_accessors, tune_workload_after_a_failure) {
  te_tensor *bad = te_compute(tt_ctx, "1bad", 1, TE_EXPRS(te_int(tt_ctx, 4)),
                              TE_EXPRS(te_var(tt_ctx, "i")), te_float(tt_ctx, TE_F32, 0));
  cr_assert_null(bad);
  cr_expect_null(te_tune_workload(tt_ctx, 1, &bad, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute: name '1bad'");
}
