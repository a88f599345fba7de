/* test_arith_stmt.c — ir_simplify_stmt: loop-aware index simplification and the structural
 * cleanups (empty and single-iteration loops, decided ifs, likely, lets, evaluates, no-op
 * stores, sequences), as before/after pairs of printed statements. */
#include "arith_util.h"

ARITH_FIXTURE(arith_stmt);

static ir_buffer *buf(const char *name) {
  te_expr *shape[1] = {I(4096)};
  return ir_buffer_new(ctx, name, TE_F32, 1, shape, TE_SCOPE_GLOBAL, NULL, 0);
}

static ir_stmt *loop(te_expr *v, int64_t min, te_expr *ext, ir_stmt *body) {
  return ir_for(v, I(min), ext, IR_FOR_SERIAL, TE_BLOCK_X, body);
}

#define EXPECT_STMT(st, want)                                                                      \
  do {                                                                                             \
    ir_stmt *st_ = (st);                                                                           \
    cr_assert_not_null(st_, "NULL statement (error: %s)", te_last_error(ctx));                     \
    char *s_ = ir_stmt_to_string(st_);                                                             \
    cr_expect_str_eq(s_, (want), "got:\n%s\nwant:\n%s", s_, (want));                               \
    free(s_);                                                                                      \
  } while (0)

Test(arith_stmt, loop_bounds_simplify_indices) {
  ir_buffer *A = buf("A"), *B = buf("B");
  te_expr *io = V("i.o"), *ii = V("i.i");
  te_expr *i = ADD(MUL(io, I(32)), ii);
  ir_stmt *st = ir_store(A, ir_load(B, TE_F32, MOD(i, I(32))), DIV(i, I(32)));
  ir_stmt *body = ir_if(LT(i, I(128)), st, NULL);
  ir_stmt *s = loop(io, 0, I(4), loop(ii, 0, I(32), body));
  EXPECT_STMT(ir_simplify_stmt(an, s), "for (i.o, 0, 4) {\n"
                                       "  for (i.i, 0, 32) {\n"
                                       "    A[i.o] = B[i.i]\n"
                                       "  }\n"
                                       "}\n");
  /* out of the loops the variables are free again */
  cr_expect_eq(ir_const_bound_of(an, ii).min, INT64_MIN);
}

Test(arith_stmt, guard_kept_when_not_provable) {
  ir_buffer *A = buf("A");
  te_expr *io = V("i.o"), *ii = V("i.i");
  te_expr *i = ADD(MUL(ADD(MUL(io, I(32)), ii), I(1)), I(0));
  te_expr *cond = ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, (te_expr *[]){LT(i, I(100))});
  ir_stmt *s = loop(
      io, 0, I(4), loop(ii, 0, I(32), ir_if(cond, ir_store(A, ir_float(ctx, TE_F32, 1), i), NULL)));
  EXPECT_STMT(ir_simplify_stmt(an, s), "for (i.o, 0, 4) {\n"
                                       "  for (i.i, 0, 32) {\n"
                                       "    if (likely(i.o*32 + i.i < 100)) {\n"
                                       "      A[i.o*32 + i.i] = 1.0f\n"
                                       "    }\n"
                                       "  }\n"
                                       "}\n");
}

Test(arith_stmt, likely_folds) {
  ir_buffer *A = buf("A");
  te_expr *i = V("i");
  te_expr *cond = ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, (te_expr *[]){LT(i, I(8))});
  ir_stmt *s = loop(i, 0, I(8), ir_if(cond, ir_store(A, ir_float(ctx, TE_F32, 1), i), NULL));
  EXPECT_STMT(ir_simplify_stmt(an, s), "for (i, 0, 8) {\n  A[i] = 1.0f\n}\n");
}

Test(arith_stmt, empty_and_single_loops) {
  ir_buffer *A = buf("A");
  te_expr *i = V("i"), *j = V("j");
  ir_stmt *st = ir_store(A, ir_float(ctx, TE_F32, 2), ADD(MUL(i, I(8)), j));
  cr_expect_null(ir_simplify_stmt(an, loop(i, 0, I(0), st)));
  cr_expect_null(ir_simplify_stmt(an, loop(i, 0, SUB(I(3), I(5)), st)));
  cr_expect_eq(te_last_status(ctx), TE_OK, "an empty result is not an error");
  EXPECT_STMT(ir_simplify_stmt(an, loop(i, 3, I(1), loop(j, 0, I(8), st))),
              "for (j, 0, 8) {\n  A[j + 24] = 2.0f\n}\n");
  /* a thread-bound loop keeps its extent 1 */
  ir_stmt *t = ir_for(i, I(0), I(1), IR_FOR_THREAD, TE_THREAD_X, st);
  cr_expect_eq(ir_simplify_stmt(an, t)->kind, IR_S_FOR);
}

Test(arith_stmt, ifs_lets_evaluates_seqs) {
  ir_buffer *A = buf("A");
  te_expr *i = V("i"), *t = V("t"), *u = V("u");
  ir_stmt *a = ir_store(A, ir_float(ctx, TE_F32, 1), i),
          *b = ir_store(A, ir_float(ctx, TE_F32, 2), i);
  ir_stmt *body = ir_seq(ctx, 4,
                         (ir_stmt *[]){ir_if(LT(i, I(10)), a, b),    /* decided: a */
                                       ir_if(LT(I(10), i), a, NULL), /* decided: nothing */
                                       ir_evaluate(ADD(I(1), I(2))), /* constant: nothing */
                                       ir_let_stmt(t, I(5),
                                                   ir_store(A, ir_float(ctx, TE_F32, 3),
                                                            ADD(i, t)))}); /* substituted */
  EXPECT_STMT(ir_simplify_stmt(an, loop(i, 0, I(10), body)), "for (i, 0, 10) {\n"
                                                             "  A[i] = 1.0f\n"
                                                             "  A[i + 5] = 3.0f\n"
                                                             "}\n");
  /* a let of a non-trivial value stays, and its body knows the value */
  ir_stmt *l =
      ir_let_stmt(u, MUL(i, I(4)), ir_store(A, ir_float(ctx, TE_F32, 1), MOD(ADD(u, I(6)), I(2))));
  EXPECT_STMT(ir_simplify_stmt(an, l), "let u = i*4\nA[0] = 1.0f\n");
  /* an unused let disappears */
  ir_stmt *l2 = ir_let_stmt(u, MUL(i, I(4)), a);
  EXPECT_STMT(ir_simplify_stmt(an, l2), "A[i] = 1.0f\n");
}

Test(arith_stmt, sequences_flatten) {
  ir_buffer *A = buf("A");
  te_expr *i = V("i"), *j = V("j");
  ir_stmt *a = ir_store(A, ir_float(ctx, TE_F32, 1), ADD(i, j)),
          *b = ir_store(A, ir_float(ctx, TE_F32, 2), j);
  /* seq(for (i, 2, 1) { seq(a, b) }, b): the loop of one iteration becomes its body, inline */
  ir_stmt *s = ir_seq2(ctx, loop(i, 2, I(1), ir_seq2(ctx, a, b)), b);
  ir_stmt *r = ir_simplify_stmt(an, s);
  cr_assert_not_null(r);
  cr_expect_eq(r->kind, IR_S_SEQ);
  cr_expect_eq(r->nstmts, 3u);
  EXPECT_STMT(r, "A[j + 2] = 1.0f\nA[j] = 2.0f\nA[j] = 2.0f\n");
}

Test(arith_stmt, noop_store_and_else) {
  ir_buffer *A = buf("A");
  te_expr *i = V("i"), *n = V("n");
  ir_stmt *copy = ir_store(A, ir_load(A, TE_F32, ADD(i, I(0))), i);
  cr_expect_null(ir_simplify_stmt(an, copy), "A[i] = A[i] is a no-op");
  ir_stmt *st = ir_store(A, ir_float(ctx, TE_F32, 1), i);
  ir_stmt *s = ir_if(LT(i, n), ir_evaluate(I(0)), st);
  EXPECT_STMT(ir_simplify_stmt(an, s), "if (n <= i) {\n  A[i] = 1.0f\n}\n");
}
