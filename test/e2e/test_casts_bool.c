/* test_casts_bool.c — conversions between int and float dtypes (float to int truncates towards
 * zero, narrowing ints wraps, signed widening sign-extends, unsigned zero-extends) and bool
 * tensors (comparison results stored one byte per element, bool inputs used as conditions).
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(casts_bool, .init = tt_setup, .fini = tt_teardown);

#define INF(k) tt_get(in[k], i)
#define INI(k) tt_geti(in[k], i)

static te_dtype to;
static te_expr *b_cast(te_expr *const v[]) { return te_cast(to, v[0]); }
static void r_f2i(tt_buf *const in[], tt_buf *out, int64_t i) { tt_seti(out, i, (int64_t)INF(0)); }
static void r_i2f(tt_buf *const in[], tt_buf *out, int64_t i) { tt_set(out, i, (double)INI(0)); }
static void r_f2f(tt_buf *const in[], tt_buf *out, int64_t i) { tt_set(out, i, INF(0)); }
static void r_i2i(tt_buf *const in[], tt_buf *out, int64_t i) { tt_seti(out, i, INI(0)); }

static void run_cast(te_dtype from, te_dtype dst, double lo, double hi,
                     void (*ref)(tt_buf *const[], tt_buf *, int64_t)) {
  to = dst;
  tt_map m = {"cast", 1, {from}, {lo}, {hi}, b_cast, ref, dst};
  tt_run_map_all(&m);
}

Test(casts_bool, float_to_int_truncates) {
  run_cast(TE_F32, TE_I32, -20, 20, r_f2i);
  run_cast(TE_F64, TE_I64, -1e6, 1e6, r_f2i);
  run_cast(TE_F64, TE_I8, -100, 100, r_f2i);
  run_cast(TE_F32, TE_U8, 0.1, 250, r_f2i);
}

Test(casts_bool, int_to_float) {
  run_cast(TE_I32, TE_F32, -1000000, 1000000, r_i2f);
  run_cast(TE_I8, TE_F64, -128, 127, r_i2f);
  run_cast(TE_U8, TE_F32, 1, 255, r_i2f);
  run_cast(TE_I64, TE_F64, -1e15, 1e15, r_i2f);
}

Test(casts_bool, float_to_float) {
  run_cast(TE_F64, TE_F32, -2, 2, r_f2f);
  run_cast(TE_F32, TE_F64, -2, 2, r_f2f);
}

/* The reference stores through tt_seti, which keeps the low bits: the wrap of a narrowing. */
Test(casts_bool, int_to_int_extend_and_wrap) {
  run_cast(TE_I32, TE_I8, -1000, 1000, r_i2i);
  run_cast(TE_I8, TE_I32, -128, 127, r_i2i);
  run_cast(TE_U8, TE_I32, 1, 255, r_i2i);
  run_cast(TE_I64, TE_U8, -100000, 100000, r_i2i);
  run_cast(TE_I16, TE_I64, -32768, 32767, r_i2i);
  run_cast(TE_U32, TE_I64, 1, 4000000000.0, r_i2i);
}

/* bool outputs: a < b, a == b (small ints, so equality happens), and a logic combination. */
static te_expr *b_lt(te_expr *const v[]) { return te_lt(v[0], v[1]); }
static void r_lt(tt_buf *const in[], tt_buf *out, int64_t i) { tt_seti(out, i, INF(0) < INF(1)); }
static te_expr *b_eq(te_expr *const v[]) { return te_eq(v[0], v[1]); }
static void r_eq(tt_buf *const in[], tt_buf *out, int64_t i) { tt_seti(out, i, INI(0) == INI(1)); }
static te_expr *b_logic(te_expr *const v[]) {
  return te_or(te_and(te_gt(v[0], v[1]), te_ne(v[0], v[2])), te_not(te_le(v[2], v[1])));
}
static void r_logic(tt_buf *const in[], tt_buf *out, int64_t i) {
  tt_seti(out, i, (INI(0) > INI(1) && INI(0) != INI(2)) || !(INI(2) <= INI(1)));
}

Test(casts_bool, comparison_outputs_are_bool) {
  tt_map lt = {"lt", 2, {TE_F32, TE_F32}, {0}, {0}, b_lt, r_lt, TE_BOOL};
  tt_map eq = {"eq", 2, {TE_I32, TE_I32}, {-3, -3}, {3, 3}, b_eq, r_eq, TE_BOOL};
  tt_map lg = {"logic", 3,      {TE_I64, TE_I64, TE_I64}, {-3, -3, -3}, {3, 3, 3}, b_logic,
               r_logic, TE_BOOL};
  tt_run_map_all(&lt);
  tt_run_map_all(&eq);
  tt_run_map_all(&lg);
}

/* A bool tensor as an input: select(c, a, b) and c counted as an int. */
static te_expr *b_bool_in(te_expr *const v[]) {
  te_expr *sel = te_select(v[0], v[1], te_neg(v[2]));
  return te_add(sel, te_cast(TE_F32, te_cast(TE_I32, te_not(v[0]))));
}
static void r_bool_in(tt_buf *const in[], tt_buf *out, int64_t i) {
  int c = INI(0) != 0;
  tt_set(out, i, (c ? INF(1) : -INF(2)) + (c ? 0.0 : 1.0));
}
Test(casts_bool, bool_inputs) {
  tt_map m = {"bool_in", 3, {TE_BOOL, TE_F32, TE_F32}, {0}, {0}, b_bool_in, r_bool_in, TE_F32};
  tt_run_map_all(&m);
}
