/* test_int_ops.c — integer kernels: floor division and modulo with negative operands (against a
 * C reference of floor semantics), wraparound of i8/u8/i16/u16 arithmetic, min/max/abs on ints,
 * unsigned division, and the promotion rules (immediates take the other operand's type, the
 * narrower int widens). Every case runs under every generic schedule.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdlib.h>

TestSuite(int_ops, .init = tt_setup, .fini = tt_teardown);

#define IN(k) tt_geti(in[k], i)
#define REF(fn, expr)                                                                              \
  static void fn(tt_buf *const in[], tt_buf *out, int64_t i) { tt_seti(out, i, (expr)); }

static te_expr *icst(te_expr *like, int64_t v) {
  return te_const(tt_ctx, te_expr_dtype(like), (double)v);
}

static te_expr *b_fdiv(te_expr *const v[]) { return te_floordiv(v[0], v[1]); }
static te_expr *b_fmod(te_expr *const v[]) { return te_floormod(v[0], v[1]); }
REF(r_fdiv, tt_floordiv(IN(0), IN(1)))
REF(r_fmod, tt_floormod(IN(0), IN(1)))

Test(int_ops, floordiv_floormod_negative_i32) {
  tt_map d = {"floordiv", 2, {TE_I32, TE_I32}, {-50, -7}, {50, 7}, b_fdiv, r_fdiv, TE_I32};
  tt_map m = {"floormod", 2, {TE_I32, TE_I32}, {-50, -7}, {50, 7}, b_fmod, r_fmod, TE_I32};
  tt_run_map_all(&d);
  tt_run_map_all(&m);
}

Test(int_ops, floordiv_floormod_negative_i64) {
  tt_map d = {"floordiv64", 2, {TE_I64, TE_I64}, {-1000, -13}, {1000, 13}, b_fdiv, r_fdiv, TE_I64};
  tt_map m = {"floormod64", 2, {TE_I64, TE_I64}, {-1000, -13}, {1000, 13}, b_fmod, r_fmod, TE_I64};
  tt_run_map_all(&d);
  tt_run_map_all(&m);
}

/* By constants, where te may strength-reduce: a // 4, a % 4, a // -3, a % -3, a // 7 + a % 7. */
static te_expr *b_const_div(te_expr *const v[]) {
  te_expr *a = v[0];
  te_expr *t1 = te_add(te_floordiv(a, te_int(tt_ctx, 4)),
                       te_mul(te_floormod(a, te_int(tt_ctx, 4)), icst(a, 100)));
  te_expr *t2 = te_add(te_floordiv(a, te_int(tt_ctx, -3)),
                       te_mul(te_floormod(a, te_int(tt_ctx, -3)), icst(a, 1000)));
  te_expr *t3 = te_add(te_floordiv(a, te_int(tt_ctx, 7)),
                       te_mul(te_floormod(a, te_int(tt_ctx, 7)), icst(a, 10000)));
  return te_add(te_add(t1, t2), t3);
}
REF(r_const_div, (int32_t)(tt_floordiv(IN(0), 4) + tt_floormod(IN(0), 4) * 100 +
                           tt_floordiv(IN(0), -3) + tt_floormod(IN(0), -3) * 1000 +
                           tt_floordiv(IN(0), 7) + tt_floormod(IN(0), 7) * 10000))
Test(int_ops, floordiv_floormod_by_constants) {
  tt_map m = {"constdiv", 1, {TE_I32}, {-200}, {200}, b_const_div, r_const_div, TE_I32};
  tt_run_map_all(&m);
}

/* Unsigned floordiv/floormod are plain division and remainder. */
REF(r_udiv, (int64_t)((uint32_t)IN(0) / (uint32_t)IN(1) + (uint32_t)IN(0) % (uint32_t)IN(1)))
static te_expr *b_udiv(te_expr *const v[]) {
  return te_add(te_floordiv(v[0], v[1]), te_floormod(v[0], v[1]));
}
Test(int_ops, unsigned_div_mod_u32) {
  tt_map m = {"udiv", 2, {TE_U32, TE_U32}, {1, 1}, {4000000000.0, 1000}, b_udiv, r_udiv, TE_U32};
  tt_run_map_all(&m);
}

/* i8: a + b and a * b wrap around (two's complement). */
static te_expr *b_wrap(te_expr *const v[]) {
  return te_sub(te_add(v[0], v[1]), te_mul(v[0], v[1]));
}
REF(r_wrap_i8,
    (int8_t)(uint8_t)((uint8_t)IN(0) + (uint8_t)IN(1) - (uint8_t)((uint8_t)IN(0) * (uint8_t)IN(1))))
REF(r_wrap_u8,
    (uint8_t)((uint8_t)IN(0) + (uint8_t)IN(1) - (uint8_t)((uint8_t)IN(0) * (uint8_t)IN(1))))
REF(r_wrap_i16, (int16_t)(uint16_t)((uint16_t)IN(0) + (uint16_t)IN(1) -
                                    (uint16_t)((uint32_t)(uint16_t)IN(0) * (uint16_t)IN(1))))
REF(r_wrap_u16, (uint16_t)((uint16_t)IN(0) + (uint16_t)IN(1) -
                           (uint16_t)((uint32_t)(uint16_t)IN(0) * (uint16_t)IN(1))))
Test(int_ops, wraparound_i8_u8_i16_u16) {
  tt_map i8 = {"wrap_i8", 2, {TE_I8, TE_I8}, {-128, 60}, {127, 127}, b_wrap, r_wrap_i8, TE_I8};
  tt_map u8 = {"wrap_u8", 2, {TE_U8, TE_U8}, {100, 1}, {255, 255}, b_wrap, r_wrap_u8, TE_U8};
  tt_map i16 = {"wrap_i16",     2,      {TE_I16, TE_I16}, {-32768, 200},
                {32767, 32767}, b_wrap, r_wrap_i16,       TE_I16};
  tt_map u16 = {"wrap_u16",     2,      {TE_U16, TE_U16}, {1000, 1},
                {65535, 65535}, b_wrap, r_wrap_u16,       TE_U16};
  tt_run_map_all(&i8);
  tt_run_map_all(&u8);
  tt_run_map_all(&i16);
  tt_run_map_all(&u16);
}

/* min, max, abs and negation on i32 and i64. */
static te_expr *b_iminmax(te_expr *const v[]) {
  te_expr *abs_b = te_call(tt_ctx, "abs", 1, TE_EXPRS(v[1]));
  return te_add(te_max(te_min(v[0], v[1]), te_neg(v[2])), te_mul(abs_b, icst(v[0], 3)));
}
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
REF(r_iminmax, imax(imin(IN(0), IN(1)), -IN(2)) + llabs(IN(1)) * 3)
Test(int_ops, min_max_abs_neg) {
  tt_map m32 = {
      "minmax32", 3,     {TE_I32, TE_I32, TE_I32}, {-100, -100, -100}, {100, 100, 100}, b_iminmax,
      r_iminmax,  TE_I32};
  tt_map m64 = {"minmax64",
                3,
                {TE_I64, TE_I64, TE_I64},
                {-1e12, -1e12, -1e12},
                {1e12, 1e12, 1e12},
                b_iminmax,
                r_iminmax,
                TE_I64};
  tt_run_map_all(&m32);
  tt_run_map_all(&m64);
}

/* An immediate takes the other operand's type: i8 + 100 wraps in i8. */
static te_expr *b_imm(te_expr *const v[]) { return te_add(v[0], te_int(tt_ctx, 100)); }
REF(r_imm, (int8_t)(uint8_t)((uint8_t)IN(0) + 100))
Test(int_ops, immediate_takes_operand_type) {
  tt_map m = {"imm_i8", 1, {TE_I8}, {-128}, {127}, b_imm, r_imm, TE_I8};
  tt_run_map_all(&m);
  cr_assert(
      te_dtype_eq(te_expr_dtype(te_add(te_param(tt_ctx, "x", TE_I8), te_int(tt_ctx, 100))), TE_I8),
      "i8 + immediate should stay i8");
}

/* i8 meets i32: the i8 widens (sign-extends); u8 meets i32: zero-extends; u8 meets i8 at the
   same width: signed wins. */
static te_expr *b_widen(te_expr *const v[]) { return te_add(te_mul(v[0], v[1]), v[2]); }
REF(r_widen, (int32_t)(IN(0) * IN(1) + IN(2)))
Test(int_ops, promotion_widens_narrower) {
  tt_map m = {"widen", 3,     {TE_I8, TE_I32, TE_U8}, {-128, -1000, 1}, {127, 1000, 255}, b_widen,
              r_widen, TE_I32};
  tt_run_map_all(&m);
  te_expr *a = te_param(tt_ctx, "a", TE_U8), *b = te_param(tt_ctx, "b", TE_I8);
  cr_assert(te_dtype_eq(te_expr_dtype(te_add(a, b)), TE_I8), "u8 + i8 should be i8");
  cr_assert(te_dtype_eq(te_expr_dtype(te_add(b, te_param(tt_ctx, "c", TE_I32))), TE_I32),
            "i8 + i32 should be i32");
  cr_assert(te_dtype_eq(
                te_expr_dtype(te_add(te_param(tt_ctx, "d", TE_I64), te_param(tt_ctx, "e", TE_F32))),
                TE_F32),
            "i64 + f32 should be f32");
}
