/* spirv_math64.c — f64 exp, exp2, log, log2, log10, pow, tanh and sigmoid for Vulkan kernels.
 *
 * GLSL.std.450's Exp, Log, Pow, Sin, Tanh, ... take 16/32-bit floats only, so on f64 te writes
 * its own, from f64 arithmetic, range reduction and polynomials (the algorithms are the classic
 * ones — Cody & Waite reductions, Taylor kernels on a reduced range, double-double arithmetic
 * after Dekker — written here for this builder). Each function is one SPIR-V function
 * (OpFunction), written into the module the first time a kernel calls it and called with
 * OpFunctionCall: a kernel calling exp ten times carries one copy of it, the body of each stays
 * one readable sequence, and no other back end needs them (the CPU has libm, CUDA libdevice),
 * so they are not IR expansions. The bodies are branch-free: every case is computed and the
 * special values (inf, NaN, 0, -0, over- and underflow) are chosen with OpSelect at the end.
 *
 * Accuracy (measured against glibc's libm on lavapipe, test/e2e/test_vulkan_math64.c, which
 * prints the max error of each): a few ulp over the whole f64 range, subnormal results included
 * where the device keeps f64 subnormals (Vulkan leaves denormal handling to the device).
 *   exp(x)    k = round(x / ln 2), r = x - k ln2_hi - k ln2_lo (ln2_hi has 41 bits: k ln2_hi is
 *             exact), e^r = 1 + expm1_kernel(r), scaled by 2^k
 *   exp2(x)   k = round(x), e^((x - k) ln 2) likewise
 *   log(x)    x = 2^e m, m in (sqrt(1/2), sqrt(2)], f = m - 1 (exact), log m = 2 atanh(s) with
 *             s = f / (2 + f): 2s + 2s^3/3 + s^5 Q(s^2), in double-double; log2 and log10 from
 *             the same double-double log m: e + log(m) / ln 2, e log10(2) + log(m) / ln 10
 *   pow(x, y) 2^(y log2|x|) with the product in double-double (an error of 2^-60 in it would
 *             cost 2^10 ulp at 2^1000), C99's special cases (Annex F.10.4.4) chosen at the end
 *   tanh(x)   expm1(2|x|) / (expm1(2|x|) + 2), 1 for |x| > 22, x for |x| < 2^-28
 *   sigmoid   1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below (no overflow, no cancellation)
 * sin, cos, tan and erf are in spirv_math64_trig.c.
 */
#include <math.h>
#include <stdio.h>

#include "spirv_math64.h"

/* ---- the builder ---- */

static const te_dtype m64_f64 = {kDLFloat, 64, 1};

uint32_t cg_m64_c(cg_m64 *m, double v) { return cg_spv_const_float(m->s, m64_f64, v); }
uint32_t cg_m64_ci(cg_m64 *m, int32_t v) { return cg_spv_const_i32(m->s, v); }

static uint32_t m64_op2(cg_m64 *m, SpvOp op, uint32_t a, uint32_t b) {
  uint32_t r = cg_spv_inst(m->s, op, m->d, 2, (uint32_t[]){a, b});
  cg_spv_decorate(m->s, r, SpvDecorationNoContraction, 0, NULL);
  return r;
}

uint32_t cg_m64_add(cg_m64 *m, uint32_t a, uint32_t b) { return m64_op2(m, SpvOpFAdd, a, b); }
uint32_t cg_m64_sub(cg_m64 *m, uint32_t a, uint32_t b) { return m64_op2(m, SpvOpFSub, a, b); }
uint32_t cg_m64_mul(cg_m64 *m, uint32_t a, uint32_t b) { return m64_op2(m, SpvOpFMul, a, b); }
uint32_t cg_m64_div(cg_m64 *m, uint32_t a, uint32_t b) { return m64_op2(m, SpvOpFDiv, a, b); }
uint32_t cg_m64_neg(cg_m64 *m, uint32_t a) { return cg_spv_inst(m->s, SpvOpFNegate, m->d, 1, &a); }
uint32_t cg_m64_abs(cg_m64 *m, uint32_t a) {
  return cg_spv_glsl(m->s, m->d, GLSLstd450FAbs, 1, &a);
}
uint32_t cg_m64_floor(cg_m64 *m, uint32_t a) {
  return cg_spv_glsl(m->s, m->d, GLSLstd450Floor, 1, &a);
}
uint32_t cg_m64_trunc(cg_m64 *m, uint32_t a) {
  return cg_spv_glsl(m->s, m->d, GLSLstd450Trunc, 1, &a);
}

uint32_t cg_m64_sel(cg_m64 *m, uint32_t c, uint32_t a, uint32_t b) {
  return cg_spv_inst(m->s, SpvOpSelect, m->d, 3, (uint32_t[]){c, a, b});
}
uint32_t cg_m64_seli(cg_m64 *m, uint32_t c, uint32_t a, uint32_t b) {
  return cg_spv_inst(m->s, SpvOpSelect, m->i32, 3, (uint32_t[]){c, a, b});
}

uint32_t cg_m64_clamp(cg_m64 *m, uint32_t x, double lo, double hi) {
  uint32_t s = cg_m64_sel(m, cg_m64_isnan(m, x), cg_m64_c(m, 0), x);
  uint32_t h = cg_spv_glsl(m->s, m->d, GLSLstd450FMin, 2, (uint32_t[]){s, cg_m64_c(m, hi)});
  return cg_spv_glsl(m->s, m->d, GLSLstd450FMax, 2, (uint32_t[]){h, cg_m64_c(m, lo)});
}

static uint32_t m64_cmp(cg_m64 *m, SpvOp op, uint32_t a, uint32_t b) {
  return cg_spv_inst(m->s, op, m->b, 2, (uint32_t[]){a, b});
}
uint32_t cg_m64_lt(cg_m64 *m, uint32_t a, uint32_t b) {
  return m64_cmp(m, SpvOpFOrdLessThan, a, b);
}
uint32_t cg_m64_gt(cg_m64 *m, uint32_t a, uint32_t b) {
  return m64_cmp(m, SpvOpFOrdGreaterThan, a, b);
}
uint32_t cg_m64_eq(cg_m64 *m, uint32_t a, uint32_t b) { return m64_cmp(m, SpvOpFOrdEqual, a, b); }
uint32_t cg_m64_isnan(cg_m64 *m, uint32_t a) { return cg_spv_inst(m->s, SpvOpIsNan, m->b, 1, &a); }
uint32_t cg_m64_isinf(cg_m64 *m, uint32_t a) { return cg_spv_inst(m->s, SpvOpIsInf, m->b, 1, &a); }
uint32_t cg_m64_and(cg_m64 *m, uint32_t a, uint32_t b) { return m64_cmp(m, SpvOpLogicalAnd, a, b); }
uint32_t cg_m64_or(cg_m64 *m, uint32_t a, uint32_t b) { return m64_cmp(m, SpvOpLogicalOr, a, b); }
uint32_t cg_m64_not(cg_m64 *m, uint32_t a) {
  return cg_spv_inst(m->s, SpvOpLogicalNot, m->b, 1, &a);
}

uint32_t cg_m64_iop(cg_m64 *m, SpvOp op, uint32_t a, uint32_t b) {
  return cg_spv_inst(m->s, op, m->i32, 2, (uint32_t[]){a, b});
}
uint32_t cg_m64_ftoi(cg_m64 *m, uint32_t a) {
  return cg_spv_inst(m->s, SpvOpConvertFToS, m->i32, 1, &a);
}
uint32_t cg_m64_itof(cg_m64 *m, uint32_t a) {
  return cg_spv_inst(m->s, SpvOpConvertSToF, m->d, 1, &a);
}

/* OpBitcast maps a vector's component 0 to the low-order bits: word 1 is the high one. */
uint32_t cg_m64_hiword(cg_m64 *m, uint32_t x) {
  uint32_t v = cg_spv_inst(m->s, SpvOpBitcast, m->v2i, 1, &x);
  return cg_spv_inst(m->s, SpvOpCompositeExtract, m->i32, 2, (uint32_t[]){v, 1});
}

uint32_t cg_m64_with_hiword(cg_m64 *m, uint32_t x, uint32_t hi) {
  uint32_t v = cg_spv_inst(m->s, SpvOpBitcast, m->v2i, 1, &x);
  uint32_t w = cg_spv_inst(m->s, SpvOpCompositeInsert, m->v2i, 3, (uint32_t[]){hi, v, 1});
  return cg_spv_inst(m->s, SpvOpBitcast, m->d, 1, &w);
}

/* 2^k for an i32 k in [-1022, 1023]: the exponent field k + 1023, the rest 0. */
static uint32_t m64_pow2(cg_m64 *m, uint32_t k) {
  uint32_t e = cg_m64_iop(m, SpvOpIAdd, k, cg_m64_ci(m, 1023));
  uint32_t hi = cg_m64_iop(m, SpvOpShiftLeftLogical, e, cg_m64_ci(m, 20));
  uint32_t v =
      cg_spv_inst(m->s, SpvOpCompositeConstruct, m->v2i, 2, (uint32_t[]){cg_m64_ci(m, 0), hi});
  return cg_spv_inst(m->s, SpvOpBitcast, m->d, 1, &v);
}

uint32_t cg_m64_scale(cg_m64 *m, uint32_t p, uint32_t k) {
  uint32_t k1 = cg_m64_iop(m, SpvOpShiftRightArithmetic, k, cg_m64_ci(m, 1));
  uint32_t k2 = cg_m64_iop(m, SpvOpISub, k, k1);
  return cg_m64_mul(m, cg_m64_mul(m, p, m64_pow2(m, k1)), m64_pow2(m, k2));
}

uint32_t cg_m64_horner(cg_m64 *m, uint32_t x, const double *c, int n) {
  uint32_t r = cg_m64_c(m, c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    r = cg_m64_add(m, cg_m64_mul(m, r, x), cg_m64_c(m, c[i]));
  return r;
}

/* ---- double-double ---- */

cg_dd cg_dd_two_sum(cg_m64 *m, uint32_t a, uint32_t b) {
  uint32_t s = cg_m64_add(m, a, b);
  uint32_t bb = cg_m64_sub(m, s, a);
  uint32_t err = cg_m64_add(m, cg_m64_sub(m, a, cg_m64_sub(m, s, bb)), cg_m64_sub(m, b, bb));
  return (cg_dd){s, err};
}

cg_dd cg_dd_fast_two_sum(cg_m64 *m, uint32_t a, uint32_t b) {
  uint32_t s = cg_m64_add(m, a, b);
  return (cg_dd){s, cg_m64_sub(m, b, cg_m64_sub(m, s, a))};
}

/* Veltkamp's split: a = hi + lo, each of 26 bits. */
static void m64_split(cg_m64 *m, uint32_t a, uint32_t *hi, uint32_t *lo) {
  uint32_t t = cg_m64_mul(m, a, cg_m64_c(m, 134217729.0)); /* 2^27 + 1 */
  *hi = cg_m64_sub(m, t, cg_m64_sub(m, t, a));
  *lo = cg_m64_sub(m, a, *hi);
}

cg_dd cg_dd_two_prod(cg_m64 *m, uint32_t a, uint32_t b) {
  uint32_t p = cg_m64_mul(m, a, b), ah, al, bh, bl;
  m64_split(m, a, &ah, &al);
  m64_split(m, b, &bh, &bl);
  uint32_t e = cg_m64_sub(m, cg_m64_mul(m, ah, bh), p);
  e = cg_m64_add(m, e, cg_m64_mul(m, ah, bl));
  e = cg_m64_add(m, e, cg_m64_mul(m, al, bh));
  e = cg_m64_add(m, e, cg_m64_mul(m, al, bl));
  return (cg_dd){p, e};
}

cg_dd cg_dd_add(cg_m64 *m, cg_dd a, cg_dd b) {
  cg_dd s = cg_dd_two_sum(m, a.hi, b.hi);
  uint32_t e = cg_m64_add(m, s.lo, cg_m64_add(m, a.lo, b.lo));
  return cg_dd_fast_two_sum(m, s.hi, e);
}

cg_dd cg_dd_mul(cg_m64 *m, cg_dd a, cg_dd b) {
  cg_dd p = cg_dd_two_prod(m, a.hi, b.hi);
  uint32_t e = cg_m64_add(m, cg_m64_mul(m, a.hi, b.lo), cg_m64_mul(m, a.lo, b.hi));
  return cg_dd_fast_two_sum(m, p.hi, cg_m64_add(m, p.lo, e));
}

cg_dd cg_dd_const(cg_m64 *m, double hi, double lo) {
  return (cg_dd){cg_m64_c(m, hi), cg_m64_c(m, lo)};
}

/* ---- exp ---- */

#define M64_LN2 0x1.62e42fefa39efp-1
#define M64_LN2_LO 0x1.abc9e3b39803fp-56
#define M64_LN2_HI41 0x1.62e42fefa3000p-1 /* ln 2 to 41 bits: k * it is exact for |k| < 2^12 */
#define M64_LN2_LO41 0x1.3de6af278ece6p-42
#define M64_INV_LN2 0x1.71547652b82fep+0
#define M64_INV_LN2_LO 0x1.777d0ffda0d24p-56
#define M64_INV_LN10 0x1.bcb7b1526e50ep-2
#define M64_INV_LN10_LO 0x1.95355baaafad3p-57
#define M64_LOG10_2_HI41 0x1.34413509f7000p-2
#define M64_LOG10_2_LO41 0x1.3fde623e2566bp-43

uint32_t cg_m64_expm1_kernel(cg_m64 *m, uint32_t r) {
  double c[12]; /* 1/2!, 1/3!, ..., 1/13!: r^14/14! < 2^-56 r for |r| <= 0.35 */
  long double f = 1;
  for (int i = 0; i < 12; i++) {
    f /= (long double)(i + 2);
    c[i] = (double)f;
  }
  uint32_t q = cg_m64_horner(m, r, c, 12);
  return cg_m64_add(m, r, cg_m64_mul(m, cg_m64_mul(m, r, r), q));
}

/* k = round(x / ln 2) (as f64 and i32) and r = x - k ln 2, |r| <= ln 2 / 2 (+ rounding). */
static uint32_t m64_exp_reduce(cg_m64 *m, uint32_t x, uint32_t *ki) {
  uint32_t k =
      cg_m64_floor(m, cg_m64_add(m, cg_m64_mul(m, x, cg_m64_c(m, M64_INV_LN2)), cg_m64_c(m, 0.5)));
  *ki = cg_m64_ftoi(m, k);
  uint32_t r = cg_m64_sub(m, x, cg_m64_mul(m, k, cg_m64_c(m, M64_LN2_HI41)));
  return cg_m64_sub(m, r, cg_m64_mul(m, k, cg_m64_c(m, M64_LN2_LO41)));
}

uint32_t cg_m64_exp_finite(cg_m64 *m, uint32_t x) {
  uint32_t k;
  uint32_t r = m64_exp_reduce(m, x, &k);
  uint32_t e = cg_m64_add(m, cg_m64_c(m, 1), cg_m64_expm1_kernel(m, r));
  return cg_m64_scale(m, e, k);
}

static uint32_t m64_exp(cg_m64 *m, uint32_t x) {
  /* clamped where the result is inf (x > 709.78) or 0 (x < -745.14) anyway */
  uint32_t r = cg_m64_exp_finite(m, cg_m64_clamp(m, x, -746, 710));
  r = cg_m64_sel(m, cg_m64_gt(m, x, cg_m64_c(m, 709.8)), cg_m64_c(m, INFINITY), r);
  return cg_m64_sel(m, cg_m64_isnan(m, x), x, r);
}

static uint32_t m64_exp2(cg_m64 *m, uint32_t x) {
  uint32_t xc = cg_m64_clamp(m, x, -1080, 1030);
  uint32_t k = cg_m64_floor(m, cg_m64_add(m, xc, cg_m64_c(m, 0.5)));
  uint32_t r = cg_m64_mul(m, cg_m64_sub(m, xc, k), cg_m64_c(m, M64_LN2)); /* xc - k is exact */
  uint32_t e = cg_m64_add(m, cg_m64_c(m, 1), cg_m64_expm1_kernel(m, r));
  uint32_t v = cg_m64_scale(m, e, cg_m64_ftoi(m, k));
  return cg_m64_sel(m, cg_m64_isnan(m, x), x, v);
}

/* ---- log ---- */

/* x = 2^e m for a finite x > 0, m in (sqrt(1/2), sqrt(2)]: e (f64) and log m (double-double). */
static cg_dd m64_log_parts(cg_m64 *m, uint32_t x, uint32_t *e_out) {
  /* subnormal x: scaled by 2^54 first */
  uint32_t sub = cg_m64_lt(m, x, cg_m64_c(m, 0x1p-1022));
  uint32_t xs = cg_m64_sel(m, sub, cg_m64_mul(m, x, cg_m64_c(m, 0x1p54)), x);
  uint32_t hi = cg_m64_hiword(m, xs);
  uint32_t bexp =
      cg_m64_iop(m, SpvOpBitwiseAnd, cg_m64_iop(m, SpvOpShiftRightLogical, hi, cg_m64_ci(m, 20)),
                 cg_m64_ci(m, 0x7ff));
  uint32_t e = cg_m64_iop(m, SpvOpISub, bexp,
                          cg_m64_seli(m, sub, cg_m64_ci(m, 1023 + 54), cg_m64_ci(m, 1023)));
  /* the significand with exponent 0: m in [1, 2) */
  uint32_t mhi =
      cg_m64_iop(m, SpvOpBitwiseOr, cg_m64_iop(m, SpvOpBitwiseAnd, hi, cg_m64_ci(m, 0x000fffff)),
                 cg_m64_ci(m, 0x3ff00000));
  uint32_t mant = cg_m64_with_hiword(m, xs, mhi);
  uint32_t big = cg_m64_gt(m, mant, cg_m64_c(m, 0x1.6a09e667f3bcdp+0));
  mant = cg_m64_sel(m, big, cg_m64_mul(m, mant, cg_m64_c(m, 0.5)), mant);
  e = cg_m64_seli(m, big, cg_m64_iop(m, SpvOpIAdd, e, cg_m64_ci(m, 1)), e);
  *e_out = cg_m64_itof(m, e);
  uint32_t f = cg_m64_sub(m, mant, cg_m64_c(m, 1)); /* exact (Sterbenz) */

  /* s = f / (2 + f) in double-double: den = 2 + f exactly as dh + dl, then the remainder */
  cg_dd den = cg_dd_fast_two_sum(m, cg_m64_c(m, 2), f);
  uint32_t sh = cg_m64_div(m, f, den.hi);
  cg_dd p = cg_dd_two_prod(m, sh, den.hi);
  uint32_t rem =
      cg_m64_sub(m, cg_m64_sub(m, cg_m64_sub(m, f, p.hi), p.lo), cg_m64_mul(m, sh, den.lo));
  cg_dd s = {sh, cg_m64_div(m, rem, den.hi)};
  /* log m = 2 atanh(s) = 2s + (2/3) s^3 + s^5 Q(s^2), |s| <= 0.1716: the first two in
     double-double; s^5 Q (< 2e-4 of the whole) in double; Q's terms 2 z^j / (2j + 5) to
     z^8 (z^9 / 23 < 2^-64 of 2s) */
  cg_dd z = cg_dd_mul(m, s, s);
  cg_dd s3 = cg_dd_mul(m, s, z);
  cg_dd t3 = cg_dd_mul(m, s3, cg_dd_const(m, 0x1.5555555555555p-1, 0x1.5555555555555p-55));
  double q[9];
  for (int j = 0; j < 9; j++)
    q[j] = 2.0 / (2 * j + 5);
  uint32_t s5q = cg_m64_mul(m, cg_m64_mul(m, s3.hi, z.hi), cg_m64_horner(m, z.hi, q, 9));
  cg_dd two_s = {cg_m64_mul(m, s.hi, cg_m64_c(m, 2)), cg_m64_mul(m, s.lo, cg_m64_c(m, 2))};
  return cg_dd_add(m, cg_dd_add(m, two_s, t3), (cg_dd){s5q, cg_m64_c(m, 0)});
}

/* log's special values: +inf at +inf, -inf at +-0, NaN below 0 and at NaN. */
static uint32_t m64_log_specials(cg_m64 *m, uint32_t x, uint32_t v) {
  v = cg_m64_sel(m, cg_m64_isinf(m, x), x, v);
  v = cg_m64_sel(m, cg_m64_eq(m, x, cg_m64_c(m, 0)), cg_m64_c(m, -INFINITY), v);
  v = cg_m64_sel(m, cg_m64_lt(m, x, cg_m64_c(m, 0)), cg_m64_c(m, NAN), v);
  return cg_m64_sel(m, cg_m64_isnan(m, x), x, v);
}

/* log2 x = e + log(m) / ln 2 in double-double. */
static cg_dd m64_log2_from(cg_m64 *m, uint32_t e, cg_dd l) {
  cg_dd l2 = cg_dd_mul(m, l, cg_dd_const(m, M64_INV_LN2, M64_INV_LN2_LO));
  return cg_dd_add(m, (cg_dd){e, cg_m64_c(m, 0)}, l2);
}

static uint32_t m64_log_any(cg_m64 *m, ir_intrin id, uint32_t x) {
  uint32_t xs = cg_m64_sel(m, cg_m64_gt(m, x, cg_m64_c(m, 0)), x, cg_m64_c(m, 1));
  xs = cg_m64_sel(m, cg_m64_isinf(m, xs), cg_m64_c(m, 1), xs); /* finite and > 0 */
  uint32_t e, v;
  cg_dd l = m64_log_parts(m, xs, &e);
  if (id == IR_INTRIN_LOG2) {
    v = m64_log2_from(m, e, l).hi;
  } else if (id == IR_INTRIN_LOG) { /* e ln2_hi is exact (|e| < 2^11) */
    cg_dd el = {cg_m64_mul(m, e, cg_m64_c(m, M64_LN2_HI41)),
                cg_m64_mul(m, e, cg_m64_c(m, M64_LN2_LO41))};
    v = cg_dd_add(m, cg_dd_fast_two_sum(m, el.hi, el.lo), l).hi;
  } else {
    cg_dd el = {cg_m64_mul(m, e, cg_m64_c(m, M64_LOG10_2_HI41)),
                cg_m64_mul(m, e, cg_m64_c(m, M64_LOG10_2_LO41))};
    cg_dd l10 = cg_dd_mul(m, l, cg_dd_const(m, M64_INV_LN10, M64_INV_LN10_LO));
    v = cg_dd_add(m, cg_dd_fast_two_sum(m, el.hi, el.lo), l10).hi;
  }
  return m64_log_specials(m, x, v);
}

/* ---- pow ---- */

/* 2^(t.hi + t.lo) for |t.hi| <= 1100. */
static uint32_t m64_exp2_dd(cg_m64 *m, cg_dd t) {
  uint32_t k = cg_m64_floor(m, cg_m64_add(m, t.hi, cg_m64_c(m, 0.5)));
  uint32_t r = cg_m64_add(m, cg_m64_sub(m, t.hi, k), t.lo); /* t.hi - k is exact */
  uint32_t e =
      cg_m64_add(m, cg_m64_c(m, 1), cg_m64_expm1_kernel(m, cg_m64_mul(m, r, cg_m64_c(m, M64_LN2))));
  return cg_m64_scale(m, e, cg_m64_ftoi(m, k));
}

static uint32_t m64_pow(cg_m64 *m, uint32_t x, uint32_t y) {
  uint32_t zero = cg_m64_c(m, 0), one = cg_m64_c(m, 1), inf = cg_m64_c(m, INFINITY);
  uint32_t ax = cg_m64_abs(m, x);
  uint32_t finite_x = cg_m64_not(m, cg_m64_or(m, cg_m64_isinf(m, x), cg_m64_isnan(m, x)));
  uint32_t axs = cg_m64_sel(m, cg_m64_and(m, finite_x, cg_m64_gt(m, ax, zero)), ax, one);
  uint32_t e;
  cg_dd l = m64_log_parts(m, axs, &e);
  l = m64_log2_from(m, e, l);
  /* y log2|x|: past +-1100 the result is inf or 0 whatever the rounding */
  uint32_t yl = cg_m64_mul(m, y, l.hi);
  uint32_t huge = cg_m64_not(m, cg_m64_lt(m, cg_m64_abs(m, yl), cg_m64_c(m, 1100)));
  uint32_t ys = cg_m64_sel(m, huge, zero, y);
  cg_dd t = cg_dd_two_prod(m, ys, l.hi);
  t = cg_dd_fast_two_sum(m, t.hi, cg_m64_add(m, t.lo, cg_m64_mul(m, ys, l.lo)));
  uint32_t mag = m64_exp2_dd(m, t);
  mag = cg_m64_sel(m, huge, cg_m64_sel(m, cg_m64_gt(m, yl, zero), inf, zero), mag);
  /* the magnitude's special cases */
  uint32_t yneg = cg_m64_lt(m, y, zero);
  uint32_t inf_or_0 = cg_m64_sel(m, yneg, inf, zero); /* |x| = 0 */
  uint32_t below1 = cg_m64_lt(m, ax, one);
  uint32_t yinf = cg_m64_sel(
      m, cg_spv_inst(m->s, SpvOpLogicalEqual, m->b, 2, (uint32_t[]){below1, yneg}), inf, zero);
  yinf = cg_m64_sel(m, cg_m64_eq(m, ax, one), one, yinf);
  mag = cg_m64_sel(m, cg_m64_isinf(m, y), yinf, mag);
  mag = cg_m64_sel(m, cg_m64_eq(m, ax, zero), inf_or_0, mag);
  mag = cg_m64_sel(m, cg_m64_isinf(m, x), cg_m64_sel(m, yneg, zero, inf), mag);
  /* the sign: x negative (-0 too) and y an odd integer */
  uint32_t yint = cg_m64_eq(m, cg_m64_trunc(m, y), y);
  uint32_t half = cg_m64_mul(m, y, cg_m64_c(m, 0.5));
  uint32_t yodd = cg_m64_and(
      m, yint,
      cg_spv_inst(m->s, SpvOpFUnordNotEqual, m->b, 2, (uint32_t[]){cg_m64_trunc(m, half), half}));
  uint32_t xneg = cg_m64_iop(m, SpvOpShiftRightArithmetic, cg_m64_hiword(m, x), cg_m64_ci(m, 31));
  xneg = cg_spv_inst(m->s, SpvOpINotEqual, m->b, 2, (uint32_t[]){xneg, cg_m64_ci(m, 0)});
  uint32_t r = cg_m64_sel(m, cg_m64_and(m, xneg, yodd), cg_m64_neg(m, mag), mag);
  uint32_t nan = cg_m64_c(m, NAN);
  uint32_t neg_frac =
      cg_m64_and(m, cg_m64_and(m, cg_m64_lt(m, x, zero), finite_x), cg_m64_not(m, yint));
  r = cg_m64_sel(m, neg_frac, nan, r);
  r = cg_m64_sel(m, cg_m64_or(m, cg_m64_isnan(m, x), cg_m64_isnan(m, y)), nan, r);
  return cg_m64_sel(m, cg_m64_or(m, cg_m64_eq(m, x, one), cg_m64_eq(m, y, zero)), one, r);
}

/* ---- tanh, sigmoid ---- */

/* e^a - 1 for a finite 0 <= a <= 44: 2^k (1 + p) - 1 = 2^k p + (2^k - 1), 2^k - 1 exact. */
static uint32_t m64_expm1_pos(cg_m64 *m, uint32_t a) {
  uint32_t k;
  uint32_t r = m64_exp_reduce(m, a, &k);
  uint32_t p = cg_m64_expm1_kernel(m, r);
  uint32_t two_k = cg_m64_scale(m, cg_m64_c(m, 1), k);
  return cg_m64_add(m, cg_m64_mul(m, two_k, p), cg_m64_sub(m, two_k, cg_m64_c(m, 1)));
}

static uint32_t m64_tanh(cg_m64 *m, uint32_t x) {
  uint32_t ax = cg_m64_abs(m, x);
  uint32_t t = m64_expm1_pos(m, cg_m64_mul(m, cg_m64_clamp(m, ax, 0, 22), cg_m64_c(m, 2)));
  uint32_t r = cg_m64_div(m, t, cg_m64_add(m, t, cg_m64_c(m, 2)));
  r = cg_m64_sel(m, cg_m64_gt(m, ax, cg_m64_c(m, 22)), cg_m64_c(m, 1), r);
  r = cg_m64_sel(m, cg_m64_lt(m, x, cg_m64_c(m, 0)), cg_m64_neg(m, r), r);
  /* tiny x (and +-0, NaN) are their own tanh */
  uint32_t tiny = cg_m64_not(m, cg_m64_gt(m, ax, cg_m64_c(m, 0x1p-28)));
  return cg_m64_sel(m, tiny, x, r);
}

static uint32_t m64_sigmoid(cg_m64 *m, uint32_t x) {
  uint32_t one = cg_m64_c(m, 1);
  uint32_t ax = cg_m64_abs(m, x);
  /* e^-|x|, 0 past 746 */
  uint32_t e = cg_m64_exp_finite(m, cg_m64_neg(m, cg_m64_clamp(m, ax, 0, 746)));
  uint32_t den = cg_m64_add(m, one, e);
  uint32_t r = cg_m64_sel(m, cg_m64_lt(m, x, cg_m64_c(m, 0)), cg_m64_div(m, e, den),
                          cg_m64_div(m, one, den));
  return cg_m64_sel(m, cg_m64_isnan(m, x), x, r);
}

/* ---- the functions in the module ---- */

bool cg_spv_is_f64_fn(ir_intrin id) {
  switch (id) {
  case IR_INTRIN_EXP:
  case IR_INTRIN_EXP2:
  case IR_INTRIN_LOG:
  case IR_INTRIN_LOG2:
  case IR_INTRIN_LOG10:
  case IR_INTRIN_POW:
  case IR_INTRIN_TANH:
  case IR_INTRIN_SIGMOID:
  case IR_INTRIN_SIN:
  case IR_INTRIN_COS:
  case IR_INTRIN_TAN:
  case IR_INTRIN_ERF:
    return true;
  default:
    return false;
  }
}

static uint32_t m64_body(cg_m64 *m, ir_intrin id, const uint32_t *a) {
  switch (id) {
  case IR_INTRIN_EXP:
    return m64_exp(m, a[0]);
  case IR_INTRIN_EXP2:
    return m64_exp2(m, a[0]);
  case IR_INTRIN_LOG:
  case IR_INTRIN_LOG2:
  case IR_INTRIN_LOG10:
    return m64_log_any(m, id, a[0]);
  case IR_INTRIN_POW:
    return m64_pow(m, a[0], a[1]);
  case IR_INTRIN_TANH:
    return m64_tanh(m, a[0]);
  case IR_INTRIN_SIGMOID:
    return m64_sigmoid(m, a[0]);
  case IR_INTRIN_ERF:
    return cg_m64_erf(m, a[0]);
  default:
    return cg_m64_sin_cos_tan(m, id, a[0]);
  }
}

/* Writes te_<name>_f64 into s->fns: the code section is swapped for it meanwhile (the body
   uses no variables, labels or cached expressions of the caller). */
static uint32_t m64_define(cg_spv *s, ir_intrin id) {
  cg_m64 m = {s, cg_spv_t_float(s, 64), s->t_bool, s->t_i32, 0};
  m.v2i = cg_spv_type(s, SpvOpTypeVector, 2, (uint32_t[]){m.i32, 2});
  int nargs = ir_intrin_table[id].nargs;
  uint32_t fty = cg_spv_type(s, SpvOpTypeFunction, 1 + nargs, (uint32_t[]){m.d, m.d, m.d});
  uint32_t fn = cg_spv_id(s), args[2] = {0};
  char name[40];
  snprintf(name, sizeof name, "te_%s_f64", ir_intrin_table[id].name);
  cg_spv_name(s, fn, name);

  cg_spv_words caller = s->code;
  uint32_t caller_block = s->block;
  ir_map *caller_cache = s->cache;
  s->code = s->fns;
  cg_spv_op(s, &s->code, SpvOpFunction, 4, (uint32_t[]){m.d, fn, SpvFunctionControlMaskNone, fty});
  for (int i = 0; i < nargs; i++) {
    args[i] = cg_spv_id(s);
    cg_spv_op(s, &s->code, SpvOpFunctionParameter, 2, (uint32_t[]){m.d, args[i]});
  }
  cg_spv_label(s, cg_spv_id(s));
  if (id == IR_INTRIN_SIN || id == IR_INTRIN_COS || id == IR_INTRIN_TAN)
    cg_m64_trig_table(&m);
  uint32_t r = m64_body(&m, id, args);
  cg_spv_op(s, &s->code, SpvOpReturnValue, 1, &r);
  cg_spv_op(s, &s->code, SpvOpFunctionEnd, 0, NULL);
  s->fns = s->code;
  s->code = caller, s->block = caller_block, s->cache = caller_cache;
  return r ? fn : 0;
}

uint32_t cg_spv_f64_call(cg_spv *s, ir_intrin id, const uint32_t *args) {
  if (!cg_spv_is_f64_fn(id))
    return 0;
  if (!s->f64_fns[id])
    s->f64_fns[id] = m64_define(s, id);
  if (!s->f64_fns[id])
    return 0;
  uint32_t ops[3] = {s->f64_fns[id], args[0], args[1]};
  return cg_spv_inst(s, SpvOpFunctionCall, cg_spv_t_float(s, 64), 1 + ir_intrin_table[id].nargs,
                     ops);
}
