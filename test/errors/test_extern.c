/* test_extern.c (errors) — misuses of te_extern and schedules an extern stage cannot take:
 * NULL function and symbol, a bad name or symbol, wrong arity (ninputs out of range, inputs
 * NULL or holding NULL, an input of another context), an unsupported dtype; loop primitives on
 * the extern stage, compute_at at it, inlining it or its input, cache_write, rfactor and
 * reorder_storage of it; computing it inside a vectorized loop, a padded (round_up) input; a
 * GPU target; a missing dlsym symbol, a reserved symbol; saving a module whose extern has no
 * symbol. Each names the call, the stage and the rule.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_extern, .init = tt_setup, .fini = tt_teardown);

static te_expr *CI(int64_t v) { return te_int(tt_ctx, v); }

static int noop(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  (void)nin, (void)in, (void)out;
  return 0;
}

static te_tensor *X, *P, *E, *Y;

/* X -> P = X + 1 -> E = noop(P) -> Y = E * 2, all 10 x 12. */
static void pipeline(void) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(10, 12));
  P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(CI(10), CI(12)), TE_EXPRS(i, j),
                       te_add(tt_at2(X, i, j), te_float(tt_ctx, TE_F32, 1))));
  E = TT_NN(
      te_extern(tt_ctx, "E", TE_F32, 2, TE_EXPRS(CI(10), CI(12)), 1, TT_TENSORS(P), noop, "e_fn"));
  Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(CI(10), CI(12)), TE_EXPRS(i, j),
                       te_mul(tt_at2(E, i, j), te_float(tt_ctx, TE_F32, 2))));
}

static te_tensor *ext(const char *name, int nin, te_tensor *const in[], te_extern_fn fn,
                      const char *sym) {
  return te_extern(tt_ctx, name, TE_F32, 1, TE_EXPRS(CI(4)), nin, in, fn, sym);
}

Test(err_extern, definitions) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(4));
  cr_assert_null(ext("E", 1, &A, NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_extern", "extern stage 'E'",
                "both the function and the symbol are NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(ext("E", 1, &A, noop, "not a symbol"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "symbol 'not a symbol' is not a C identifier");
  te_clear_error(tt_ctx);
  cr_assert_null(ext("1E", 1, &A, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_extern", "name '1E' is not a C identifier");
  te_clear_error(tt_ctx);
  cr_assert_null(ext("E", -1, &A, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "'E'", "ninputs must be in [0, 16] (got -1)");
  te_clear_error(tt_ctx);
  te_tensor *many[17];
  for (int k = 0; k < 17; k++)
    many[k] = A;
  cr_assert_null(ext("E", 17, many, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "ninputs must be in [0, 16] (got 17)");
  te_clear_error(tt_ctx);
  cr_assert_null(ext("E", 2, NULL, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "inputs is NULL but ninputs is 2");
  te_clear_error(tt_ctx);
  cr_assert_null(ext("E", 2, TT_TENSORS(A, NULL), noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "extern stage 'E': inputs[1] is NULL");
  te_clear_error(tt_ctx);
  te_ctx *other = te_ctx_new();
  te_tensor *B = te_placeholder(other, "B", TE_F32, 1, TE_EXPRS(te_int(other, 4)));
  cr_assert_null(ext("E", 1, &B, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "input 'B' (inputs[0]) belongs to another context");
  te_ctx_free(other);
  te_clear_error(tt_ctx);
  cr_assert_null(
      te_extern(tt_ctx, "E", (te_dtype){kDLFloat, 32, 4}, 1, TE_EXPRS(CI(4)), 1, &A, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "extern stage 'E': dtype", "is not supported");
  te_clear_error(tt_ctx);
  cr_assert_null(te_extern(tt_ctx, "E", TE_F32, 1, TE_EXPRS(CI(0)), 1, &A, noop, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_extern");
  te_clear_error(tt_ctx);
  cr_assert_null(te_extern_function(A));
  cr_assert_not_null(ext("E0", 0, NULL, noop, NULL)); /* a generator: no inputs */
  TT_NO_ERR(tt_ctx);
}

Test(err_extern, loop_primitives) {
  pipeline();
  te_schedule *s = tt_schedule1(Y);
  te_stage *se = tt_stage(s, E);
  te_iter *o, *in, *f;
  cr_assert_eq(te_split(se, te_axis(se, 0), 4, &o, &in), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "stage 'E' is an extern stage",
                "loop primitives do not apply");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_vectorize(se, te_axis(se, 1)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize", "'E' is an extern stage");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_parallel(se, te_axis(se, 0)), TE_ERR_SCHEDULE);
  te_clear_error(tt_ctx);
  cr_assert_eq(te_fuse(se, te_axis(se, 0), te_axis(se, 1), &f), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_fuse", "'E' is an extern stage");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_reorder(se, 2, (te_iter *const[]){te_axis(se, 1), te_axis(se, 0)}),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder", "'E' is an extern stage");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_unroll(se, te_axis(se, 1)), TE_ERR_SCHEDULE);
  te_clear_error(tt_ctx);
  cr_assert_eq(te_compute_at(tt_stage(s, P), se, te_axis(se, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "'E' is an extern stage",
                "no stage can be computed at its loops");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_reorder_storage(se, 2, (te_iter *const[]){te_axis(se, 1), te_axis(se, 0)}),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_reorder_storage", "'E' is an extern stage");
  te_clear_error(tt_ctx);
  te_tensor *cache = NULL;
  cr_assert_eq(te_cache_write(s, E, TE_SCOPE_GLOBAL, &cache), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_cache_write", "'E' is an extern stage");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_rfactor(s, E, te_axis(se, 0), 0, &cache), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_rfactor", "'E' is an extern stage");
  te_clear_error(tt_ctx);
  /* the schedule is still usable: nothing was changed */
  char *ir = TT_NN(te_lower_text(s, 2, TT_TENSORS(X, Y), 0, NULL));
  te_free(ir);
}

Test(err_extern, inline_refused) {
  pipeline();
  te_schedule *s = tt_schedule1(Y);
  cr_assert_eq(te_compute_inline(tt_stage(s, E)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "stage 'E' is an extern stage",
                "cannot be inlined");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_compute_inline(tt_stage(s, P)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline",
                "stage 'P' is read by extern stage "
                "'E'",
                "never inlined");
}

Test(err_extern, lowering_rules) {
  pipeline();
  /* computed inside a vectorized loop */
  te_schedule *s = tt_schedule1(Y);
  te_stage *sy = tt_stage(s, Y);
  TT_OK(te_vectorize(sy, te_axis(sy, 1)));
  TT_OK(te_compute_at(tt_stage(s, E), sy, te_axis(sy, 1)));
  TT_OK(te_compute_at(tt_stage(s, P), sy, te_axis(sy, 1)));
  cr_assert_null(te_lower_text(s, 2, TT_TENSORS(X, Y), 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "extern stage 'E' is computed inside vectorized loop",
                "of 'Y'");
  te_clear_error(tt_ctx);
  /* an input padded by round_up loops */
  s = tt_schedule1(Y);
  te_stage *sp = tt_stage(s, P);
  te_iter *o, *in;
  TT_OK(te_set_tail(sp, te_axis(sp, 1), TE_TAIL_ROUND_UP));
  TT_OK(te_split(sp, te_axis(sp, 1), 5, &o, &in));
  cr_assert_null(te_lower_text(s, 2, TT_TENSORS(X, Y), 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'P' is its input of extern stage 'E'",
                "pad its storage");
  te_clear_error(tt_ctx);
  /* a GPU target */
  s = tt_schedule1(Y);
  te_stage *sy2 = tt_stage(s, Y);
  te_iter *bx, *tx;
  TT_OK(te_split(sy2, te_axis(sy2, 0), 2, &bx, &tx));
  TT_OK(te_bind(sy2, bx, TE_BLOCK_X));
  TT_OK(te_bind(sy2, tx, TE_THREAD_X));
  for (int t = 0; t < 2; t++) {
    te_target *gpu = TT_NN(te_target_parse(tt_ctx, t ? "vulkan" : "cuda"));
    cr_assert_null(te_lower_text_for(s, gpu, 2, TT_TENSORS(X, Y), 0, NULL));
    TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "stage 'E' is an extern stage",
                  "supported by CPU targets only");
    te_clear_error(tt_ctx);
    te_module *m = NULL;
    cr_assert_eq(te_build(s, "k", 2, TT_TENSORS(X, Y), 0, NULL, gpu, &m), TE_ERR_UNSUPPORTED);
    te_clear_error(tt_ctx);
  }
}

Test(err_extern, build_and_save) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(4));
  te_tensor *missing = TT_NN(ext("M", 1, &A, NULL, "te_no_such_extern_function"));
  te_module *m = NULL;
  cr_assert_eq(
      te_build(tt_schedule1(missing), "k", 2, TT_TENSORS(A, missing), 0, NULL, tt_target(), &m),
      TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "extern stage 'M'",
                "symbol 'te_no_such_extern_function' is not defined in this process");
  te_clear_error(tt_ctx);
  te_tensor *reserved = TT_NN(ext("R", 1, &A, noop, "expf"));
  cr_assert_eq(
      te_build(tt_schedule1(reserved), "k2", 2, TT_TENSORS(A, reserved), 0, NULL, tt_target(), &m),
      TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "extern stage 'R'", "symbol 'expf'");
  te_clear_error(tt_ctx);
  te_tensor *clash = TT_NN(ext("C", 1, &A, noop, "k3"));
  cr_assert_eq(
      te_build(tt_schedule1(clash), "k3", 2, TT_TENSORS(A, clash), 0, NULL, tt_target(), &m),
      TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "extern stage 'C'",
                "symbol 'k3' is the name of the "
                "kernel");
  te_clear_error(tt_ctx);
  te_tensor *jit_only = TT_NN(ext("J", 1, &A, noop, NULL));
  m = tt_build(tt_schedule1(jit_only), "k4", 2, TT_TENSORS(A, jit_only), 0, NULL);
  cr_assert_eq(te_module_save(m, "/tmp/te_never_written", TE_SAVE_OBJECT), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED,
                "kernel 'k4' calls extern stage 'J' through a "
                "function pointer",
                "give te_extern a symbol");
}

Test(err_extern, tuner_refuses) {
  pipeline();
  te_tune_options o = {0};
  o.log_path = "/tmp/te_extern_never_written.jsonl";
  cr_assert_eq(te_tune(tt_ctx, 1, &Y, tt_target(), &o), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "'E' is an extern stage",
                "does not tune workloads with extern stages");
}
