/* test_specialize.c (errors) — misuse of te_specialize: NULL arguments, a condition that is no
 * scalar bool, one that uses a loop variable, a variable foreign to the computation, a
 * parameter the computation does not use or reads a tensor, one the trace cannot write; a GPU
 * target given a runtime condition; malformed specialize blocks in a replayed trace.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_specialize, .init = tt_setup, .fini = tt_teardown);

typedef struct wl {
  te_expr *n, *i;
  te_tensor *A, *C;
} wl;

/* C[i] = A[i] * 2 over a symbolic n. */
static wl make(void) {
  wl w;
  w.n = te_var(tt_ctx, "n"), w.i = te_var(tt_ctx, "i");
  w.A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(w.n)));
  w.C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(w.n), TE_EXPRS(w.i),
                         te_mul(tt_at1(w.A, w.i), te_float(tt_ctx, TE_F32, 2))));
  return w;
}

static te_expr *i64(int64_t v) { return te_int(tt_ctx, v); }

static void refused(te_schedule *s, te_expr *cond, te_status want, const char *msg) {
  te_clear_error(tt_ctx);
  te_schedule *b = (te_schedule *)1;
  cr_expect_eq(te_specialize(s, cond, &b), want, "%s", te_last_error(tt_ctx));
  cr_expect_null(b);
  TT_EXPECT_ERR(tt_ctx, want, msg);
}

Test(err_specialize, arguments) {
  wl w = make();
  te_schedule *s = tt_schedule1(w.C), *b;
  cr_expect_eq(te_specialize(NULL, te_lt(w.n, i64(4)), &b), TE_ERR_INVALID_ARG);
  cr_expect_eq(te_specialize(s, te_lt(w.n, i64(4)), NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_specialize: branch is NULL");
  refused(s, NULL, TE_ERR_INVALID_ARG, "te_specialize: cond is NULL");
  refused(s, te_add(w.n, i64(1)), TE_ERR_TYPE,
          "te_specialize: cond must be a scalar bool (got i64)");
  te_ctx *other = te_ctx_new();
  refused(s, te_lt(te_var(other, "n"), te_int(other, 3)), TE_ERR_INVALID_ARG,
          "cond belongs to another context");
  te_ctx_free(other);
}

Test(err_specialize, condition_variables) {
  wl w = make();
  te_schedule *s = tt_schedule1(w.C);
  refused(s, te_lt(w.i, i64(4)), TE_ERR_SCHEDULE,
          "the condition uses 'i', which is no size, stride or parameter of the computation");
  refused(s, te_lt(te_var(tt_ctx, "m"), i64(4)), TE_ERR_SCHEDULE,
          "the condition uses 'm', which is no size");
  refused(s, te_gt(te_param(tt_ctx, "flag", TE_I64), i64(0)), TE_ERR_SCHEDULE,
          "the condition uses parameter 'flag', which the computation does not use");
  refused(s, te_lt(tt_at1(w.A, i64(0)), te_float(tt_ctx, TE_F32, 0)), TE_ERR_SCHEDULE,
          "the condition reads tensor 'A'");
  refused(s, te_lt(te_cast(TE_I32, w.n), te_int(tt_ctx, 7)), TE_ERR_UNSUPPORTED,
          "has a form the trace cannot write");
  /* a refused te_specialize leaves the schedule usable and its trace unchanged */
  te_clear_error(tt_ctx);
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(trace, "");
  te_free(trace);
}

Test(err_specialize, gpu_target) {
  wl w = make();
  te_schedule *s = tt_schedule1(w.C), *b;
  te_stage *st = tt_stage(s, w.C);
  te_iter *bx, *tx;
  TT_OK(te_split(st, te_axis(st, 0), 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  TT_OK(te_specialize(s, te_eq(te_floormod(w.n, i64(32)), i64(0)), &b));
  te_target *cuda = TT_NN(te_target_parse(tt_ctx, "cuda"));
  cr_expect_null(te_lower_text_for(s, cuda, 2, TT_TENSORS(w.A, w.C), 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED,
                "te_specialize) whose condition is not constant; GPU targets do not support");
  /* a constant condition needs no branch at run time: accepted */
  te_clear_error(tt_ctx);
  te_schedule *s2 = tt_schedule1(w.C);
  st = tt_stage(s2, w.C);
  TT_OK(te_split(st, te_axis(st, 0), 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  TT_OK(te_specialize(s2, te_lt(w.n, i64(0)), &b));
  char *text = te_lower_text_for(s2, cuda, 2, TT_TENSORS(w.A, w.C), 0, NULL);
  cr_expect_not_null(text, "%s", te_last_error(tt_ctx));
  te_free(text);
}

static void bad_replay(const char *trace, te_status want, const char *msg) {
  wl w = make();
  te_schedule *s = tt_schedule1(w.C);
  te_clear_error(tt_ctx);
  cr_expect_eq(te_schedule_replay(s, trace), want, "%s: %s", trace, te_last_error(tt_ctx));
  TT_EXPECT_ERR(tt_ctx, want, msg);
}

Test(err_specialize, replay) {
  bad_replay("specialize n < 4 {\nsplit C i 2\n", TE_ERR_PARSE,
             "line 1: no '}' closes the block of 'specialize'");
  bad_replay("split C i 2\n}\n", TE_ERR_PARSE, "line 2: no 'specialize' block is open");
  bad_replay("specialize n < 4\n}\n", TE_ERR_PARSE, "line 1: expected 'specialize CONDITION {'");
  bad_replay("specialize q < 4 {\n}\n", TE_ERR_NOT_FOUND,
             "te_schedule_replay: line 1: the computation has no size, stride or parameter "
             "named 'q'");
  bad_replay("specialize n < < 4 {\n}\n", TE_ERR_PARSE, "condition 'n < < 4'");
  bad_replay("specialize n + 4 {\n}\n", TE_ERR_PARSE, "a condition must be a bool");
  bad_replay("specialize n < 4 {\n  split C j 2\n}\n", TE_ERR_NOT_FOUND,
             "line 2: stage 'C' has no iter 'j'");
}
