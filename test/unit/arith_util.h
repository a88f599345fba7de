/* arith_util.h — shorthands shared by the analyzer's unit tests (test_arith*.c).
 *
 * Each test file defines the fixture (ctx, an) with ARITH_FIXTURE(suite); expressions are built
 * with the ir_* constructors on i64 and compared by printed text or by pointer (hash-consing).
 */
#ifndef TE_TEST_ARITH_UTIL_H
#define TE_TEST_ARITH_UTIL_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "ir/arith.h"

#define ARITH_FIXTURE(suite)                                                                       \
  static te_ctx *ctx;                                                                              \
  static ir_analyzer *an;                                                                          \
  static void setup(void) {                                                                        \
    ctx = te_ctx_new();                                                                            \
    an = ir_analyzer_new(ctx);                                                                     \
  }                                                                                                \
  static void teardown(void) { te_ctx_free(ctx); }                                                 \
  TestSuite(suite, .init = setup, .fini = teardown)

#define I(v) ir_i64(ctx, (v))
#define V(name) ir_var_new(ctx, (name), TE_I64, IR_VAR_INDEX)
#define ADD(a, b) ir_add((a), (b))
#define SUB(a, b) ir_sub((a), (b))
#define MUL(a, b) ir_mul((a), (b))
#define DIV(a, b) ir_floordiv((a), (b))
#define MOD(a, b) ir_floormod((a), (b))
#define MIN(a, b) ir_min((a), (b))
#define MAX(a, b) ir_max((a), (b))
#define LT(a, b) ir_lt((a), (b))
#define LE(a, b) ir_le((a), (b))
#define BIND(v, lo, ext) ir_analyzer_bind(an, (v), I(lo), I(ext))

/* Text of e, compared with want (NULL e fails with the context's error). */
#define EXPECT_TEXT(e, want)                                                                       \
  do {                                                                                             \
    te_expr *e_ = (e);                                                                             \
    cr_assert_not_null(e_, "NULL expression (error: %s)", te_last_error(ctx));                     \
    char *s_ = ir_expr_to_string(e_);                                                              \
    cr_expect_str_eq(s_, (want), "got \"%s\", want \"%s\"", s_, (want));                           \
    free(s_);                                                                                      \
  } while (0)

/* simplify(e) printed, and simplify is idempotent on it. */
#define EXPECT_SIMP(e, want)                                                                       \
  do {                                                                                             \
    te_expr *r_ = ir_simplify(an, (e));                                                            \
    EXPECT_TEXT(r_, want);                                                                         \
    cr_expect_eq(ir_simplify(an, r_), r_, "not idempotent at line %d", __LINE__);                  \
  } while (0)

#endif
