/* spirv_math64_trig.c — f64 sin, cos, tan and erf for Vulkan kernels (see spirv_math64.c for
 * why and how these are SPIR-V functions of f64 arithmetic).
 *
 * sin, cos, tan. k = round(x 2/pi) and the reduced argument r = x - k pi/2 in double-double:
 * pi/2 is the sum of five 26-bit pieces and a tail (183 bits), so k * piece is exact for
 * |k| < 2^27 and every subtraction's error is kept (two_sum). The reduction is exact to well
 * below an ulp of r for |x| <= 2^27 (about 1.3e8); larger arguments are reduced as below. On
 * |r| <= pi/4: sin r = r + r^3 S(r^2) (Taylor to r^19), cos r = 1 - r^2/2 + r^4 C(r^2) (to
 * r^18, the 1 - r^2/2 rounding error recovered as in fdlibm's kernel), each corrected for
 * r's low part; the quadrant k mod 4 picks +-sin r or +-cos r; tan = sin / cos.
 * |x| < 2^-27: sin x = tan x = x (-0 kept), cos x = 1.
 *
 * |x| > 2^27: Payne & Hanek's reduction. |x| = X 2^E with X a 53-bit integer, 2/pi the sum of
 * 24-bit chunks c_j 2^(-24 (j + 1)) (a table of 56, 1344 bits, in a Function array). The products
 * X c_j 2^(E - 24 (j + 1)) of the chunks before j0 are multiples of 4 (dropped: only |x| 2/pi
 * mod 4 matters); the next eight, each split in two exact halves (X = Xh 2^27 + Xl) and reduced
 * mod 4 exactly, are summed in double-double: k = round(sum), r = (sum - k) pi/2. Measured
 * within an ulp of glibc up to DBL_MAX, the double closest to a multiple of pi/2 included
 * (6381956970095103 2^797, |r| ~ 2^-61: test/e2e/test_vulkan_math64.c).
 * Negative x: sin and tan are odd, cos even, applied as r -> -r, k -> -k.
 *
 * erf. |x| < 3: erf x = 2/sqrt(pi) x e^(-x^2) sum_n 2^n x^(2n) / (1 3 5 ... (2n + 1)), a series
 * of positive terms (no cancellation; 47 terms reach 2^-58 at 3). Using the rounded x^2 in both
 * e^(-x^2) and the sum costs nothing: their product varies slowly in x^2. |x| >= 3:
 * erf x = 1 - erfc x, erfc x = e^(-x^2) / sqrt(pi) / K(x) with K the continued fraction
 * x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))) to depth 20 (exact to 2^-56 of erfc at 3, and
 * erfc < 2.3e-5 there, so its error is far below erf's ulp).
 */
#include <math.h>

#include "spirv_math64.h"

#define M64_TWO_OVER_PI 0x1.45f306dc9c883p-1
#define M64_TWO_OVER_SQRTPI 0x1.20dd750429b6dp+0
#define M64_ONE_OVER_SQRTPI 0x1.20dd750429b6dp-1
#define M64_TRIG_MAX 0x1p27
#define M64_PIO2 0x1.921fb54442d18p+0
#define M64_PIO2_LO 0x1.1a62633145c07p-54

/* 2/pi in 24-bit chunks: 2/pi = sum_j m64_two_over_pi[j] 2^(-24 (j + 1)). */
static const uint32_t m64_two_over_pi[56] = {
    0xa2f983, 0x6e4e44, 0x1529fc, 0x2757d1, 0xf534dd, 0xc0db62, 0x95993c, 0x439041,
    0xfe5163, 0xabdebb, 0xc561b7, 0x246e3a, 0x424dd2, 0xe00649, 0x2eea09, 0xd1921c,
    0xfe1deb, 0x1cb129, 0xa73ee8, 0x8235f5, 0x2ebb44, 0x84e99c, 0x7026b4, 0x5f7e41,
    0x3991d6, 0x398353, 0x39f49c, 0x845f8b, 0xbdf928, 0x3b1ff8, 0x97ffde, 0x05980f,
    0xef2f11, 0x8b5a0a, 0x6d1f6d, 0x367ecf, 0x27cb09, 0xb74f46, 0x3f669e, 0x5fea2d,
    0x7527ba, 0xc7ebe5, 0xf17b3d, 0x0739f7, 0x8a5292, 0xea6bfb, 0x5fb11f, 0x8d5d08,
    0x560330, 0x46fc7b, 0x6babf0, 0xcfbc20, 0x9af436, 0x1da9e3, 0x91615e, 0xe61b08,
};

static const double m64_pio2_pieces[6] = {
    0x1.921fb50000000p+0,  0x1.110b460000000p-26,  0x1.1a62630000000p-54,
    0x1.8a2e030000000p-81, 0x1.c1cd128000000p-107, 0x1.024e088a67cc7p-135,
};

/* r = x - k pi/2 in double-double, for |x| <= M64_TRIG_MAX; k's low two bits in *quadrant. */
static cg_dd m64_trig_reduce(cg_m64 *m, uint32_t x, uint32_t *quadrant) {
  uint32_t xc = cg_m64_clamp(m, x, -M64_TRIG_MAX, M64_TRIG_MAX);
  uint32_t k = cg_m64_floor(
      m, cg_m64_add(m, cg_m64_mul(m, xc, cg_m64_c(m, M64_TWO_OVER_PI)), cg_m64_c(m, 0.5)));
  *quadrant = cg_m64_iop(m, SpvOpBitwiseAnd, cg_m64_ftoi(m, k), cg_m64_ci(m, 3));
  cg_dd r = {xc, cg_m64_c(m, 0)};
  for (int i = 0; i < 5; i++) { /* k * piece is exact; two_sum keeps each rounding error */
    uint32_t w = cg_m64_mul(m, k, cg_m64_c(m, m64_pio2_pieces[i]));
    cg_dd d = cg_dd_two_sum(m, r.hi, cg_m64_neg(m, w));
    r = (cg_dd){d.hi, cg_m64_add(m, r.lo, d.lo)};
  }
  uint32_t lo = cg_m64_sub(m, r.lo, cg_m64_mul(m, k, cg_m64_c(m, m64_pio2_pieces[5])));
  return cg_dd_two_sum(m, r.hi, lo);
}

/* The array of m64_two_over_pi's chunks as f64: a Function variable with that initializer,
   declared by cg_m64_trig_table at the top of the function's first block (SPIR-V's rule for
   Function variables; lavapipe reads an initialized Private array wrongly in some processes). */
uint32_t cg_m64_trig_table(cg_m64 *m) {
  cg_spv *s = m->s;
  uint32_t n = sizeof m64_two_over_pi / sizeof m64_two_over_pi[0];
  uint32_t arr = cg_spv_type(s, SpvOpTypeArray, 2, (uint32_t[]){m->d, cg_spv_const_u32(s, n)});
  uint32_t ops[2 + 56] = {arr, cg_spv_id(s)};
  for (uint32_t j = 0; j < n; j++)
    ops[2 + j] = cg_m64_c(m, (double)m64_two_over_pi[j]);
  cg_spv_op(s, &s->globals, SpvOpConstantComposite, 2 + (int)n, ops);
  uint32_t var = cg_spv_id(s);
  cg_spv_op(s, &s->code, SpvOpVariable, 4,
            (uint32_t[]){cg_spv_t_ptr(s, SpvStorageClassFunction, arr), var,
                         SpvStorageClassFunction, ops[1]});
  return s->two_over_pi = var;
}

/* p mod 4 for an exact p >= 0 (exact: p's bits from 4 up are cleared). */
static uint32_t m64_mod4(cg_m64 *m, uint32_t p) {
  uint32_t q = cg_m64_floor(m, cg_m64_mul(m, p, cg_m64_c(m, 0.25)));
  return cg_m64_sub(m, p, cg_m64_mul(m, q, cg_m64_c(m, 4)));
}

/* |x| 2/pi mod 4 for a finite |x| = ax > 2^27, as (r, quadrant): Payne & Hanek (above). */
static cg_dd m64_trig_reduce_huge(cg_m64 *m, uint32_t ax, uint32_t *quadrant) {
  uint32_t hi = cg_m64_hiword(m, ax);
  uint32_t e = cg_m64_iop(m, SpvOpISub,
                          cg_m64_iop(m, SpvOpBitwiseAnd,
                                     cg_m64_iop(m, SpvOpShiftRightLogical, hi, cg_m64_ci(m, 20)),
                                     cg_m64_ci(m, 0x7ff)),
                          cg_m64_ci(m, 1023 + 52)); /* |x| = X 2^e, X < 2^53 an integer */
  uint32_t X = cg_m64_scale(m, ax, cg_m64_iop(m, SpvOpISub, cg_m64_ci(m, 0), e));
  uint32_t Xh = cg_m64_floor(m, cg_m64_mul(m, X, cg_m64_c(m, 0x1p-27)));
  uint32_t Xl = cg_m64_sub(m, X, cg_m64_mul(m, Xh, cg_m64_c(m, 0x1p27)));
  /* the first chunk whose product is not a multiple of 4: e - 24 (j0 + 1) <= 1 */
  uint32_t t = cg_m64_iop(m, SpvOpISub, e, cg_m64_ci(m, 2));
  uint32_t j0 = cg_m64_seli(
      m, cg_spv_inst(m->s, SpvOpSGreaterThan, m->b, 2, (uint32_t[]){t, cg_m64_ci(m, 0)}),
      cg_m64_iop(m, SpvOpSDiv, t, cg_m64_ci(m, 24)), cg_m64_ci(m, 0));
  uint32_t table = m->s->two_over_pi;
  uint32_t pd = cg_spv_t_ptr(m->s, SpvStorageClassFunction, m->d);
  cg_dd sum = {cg_m64_c(m, 0), cg_m64_c(m, 0)};
  for (int i = 0; i < 8; i++) {
    uint32_t j = cg_m64_iop(m, SpvOpIAdd, j0, cg_m64_ci(m, i));
    uint32_t ptr = cg_spv_inst(m->s, SpvOpAccessChain, pd, 2, (uint32_t[]){table, j});
    uint32_t c = cg_spv_inst(m->s, SpvOpLoad, m->d, 1, &ptr);
    /* 2^(e - 24 (j + 1)), in [2^-190, 2^1] */
    uint32_t sc = cg_m64_iop(
        m, SpvOpISub, e,
        cg_m64_iop(m, SpvOpIMul, cg_m64_iop(m, SpvOpIAdd, j, cg_m64_ci(m, 1)), cg_m64_ci(m, 24)));
    uint32_t th = m64_mod4(
        m, cg_m64_scale(m, cg_m64_mul(m, Xh, c), cg_m64_iop(m, SpvOpIAdd, sc, cg_m64_ci(m, 27))));
    uint32_t tl = m64_mod4(m, cg_m64_scale(m, cg_m64_mul(m, Xl, c), sc));
    sum = cg_dd_add(m, sum, (cg_dd){th, cg_m64_c(m, 0)});
    sum = cg_dd_add(m, sum, (cg_dd){tl, cg_m64_c(m, 0)});
  }
  uint32_t s4 = m64_mod4(m, sum.hi); /* < 64 before: exact */
  uint32_t k = cg_m64_floor(m, cg_m64_add(m, s4, cg_m64_c(m, 0.5)));
  cg_dd f = cg_dd_fast_two_sum(m, cg_m64_sub(m, s4, k), sum.lo);
  *quadrant = cg_m64_iop(m, SpvOpBitwiseAnd, cg_m64_ftoi(m, k), cg_m64_ci(m, 3));
  return cg_dd_mul(m, f, cg_dd_const(m, M64_PIO2, M64_PIO2_LO));
}

/* sin(h + l) for |h| <= pi/4 + tiny, |l| <= ulp(h). */
static uint32_t m64_sin_kernel(cg_m64 *m, cg_dd r) {
  double c[9]; /* -1/3!, 1/5!, ..., 1/19! */
  long double f = 1;
  for (int i = 0; i < 9; i++) {
    f /= (long double)((2 * i + 2) * (2 * i + 3));
    c[i] = (double)(i % 2 ? f : -f);
  }
  uint32_t z = cg_m64_mul(m, r.hi, r.hi);
  uint32_t s3 = cg_m64_mul(m, cg_m64_mul(m, r.hi, z), cg_m64_horner(m, z, c, 9));
  /* l cos h ~ l (1 - z/2) */
  uint32_t lc =
      cg_m64_mul(m, r.lo, cg_m64_sub(m, cg_m64_c(m, 1), cg_m64_mul(m, z, cg_m64_c(m, 0.5))));
  return cg_m64_add(m, r.hi, cg_m64_add(m, s3, lc));
}

/* cos(h + l), same range. */
static uint32_t m64_cos_kernel(cg_m64 *m, cg_dd r) {
  double c[8]; /* 1/4!, -1/6!, ..., -1/18! */
  long double f = 0.5L;
  for (int i = 0; i < 8; i++) {
    f /= (long double)((2 * i + 3) * (2 * i + 4));
    c[i] = (double)(i % 2 ? -f : f);
  }
  uint32_t z = cg_m64_mul(m, r.hi, r.hi);
  uint32_t hz = cg_m64_mul(m, z, cg_m64_c(m, 0.5));
  uint32_t w = cg_m64_sub(m, cg_m64_c(m, 1), hz);
  uint32_t tail = cg_m64_sub(m, cg_m64_mul(m, cg_m64_mul(m, z, z), cg_m64_horner(m, z, c, 8)),
                             cg_m64_mul(m, r.hi, r.lo));
  /* (1 - w) - hz is the rounding error of w = 1 - hz, exactly */
  uint32_t corr = cg_m64_add(m, cg_m64_sub(m, cg_m64_sub(m, cg_m64_c(m, 1), w), hz), tail);
  return cg_m64_add(m, w, corr);
}

uint32_t cg_m64_sin_cos_tan(cg_m64 *m, ir_intrin id, uint32_t x) {
  uint32_t q, qh;
  cg_dd r = m64_trig_reduce(m, x, &q);
  /* huge x: reduced as |x| (a finite stand-in where it is not huge), then x's sign applied */
  uint32_t ax = cg_m64_abs(m, x);
  uint32_t huge = cg_m64_and(m, cg_m64_gt(m, ax, cg_m64_c(m, M64_TRIG_MAX)),
                             cg_m64_not(m, cg_m64_isinf(m, ax)));
  cg_dd rh = m64_trig_reduce_huge(m, cg_m64_sel(m, huge, ax, cg_m64_c(m, 0x1p28)), &qh);
  uint32_t xneg = cg_m64_lt(m, x, cg_m64_c(m, 0));
  rh = (cg_dd){cg_m64_sel(m, xneg, cg_m64_neg(m, rh.hi), rh.hi),
               cg_m64_sel(m, xneg, cg_m64_neg(m, rh.lo), rh.lo)};
  qh = cg_m64_seli(m, xneg,
                   cg_m64_iop(m, SpvOpBitwiseAnd, cg_m64_iop(m, SpvOpISub, cg_m64_ci(m, 4), qh),
                              cg_m64_ci(m, 3)),
                   qh);
  r = (cg_dd){cg_m64_sel(m, huge, rh.hi, r.hi), cg_m64_sel(m, huge, rh.lo, r.lo)};
  q = cg_m64_seli(m, huge, qh, q);
  uint32_t sn = m64_sin_kernel(m, r), cs = m64_cos_kernel(m, r);
  uint32_t odd = cg_spv_inst(
      m->s, SpvOpINotEqual, m->b, 2,
      (uint32_t[]){cg_m64_iop(m, SpvOpBitwiseAnd, q, cg_m64_ci(m, 1)), cg_m64_ci(m, 0)});
  uint32_t v;
  if (id == IR_INTRIN_TAN) {
    /* odd quadrant: tan(r + pi/2) = -cos r / sin r */
    v = cg_m64_sel(m, odd, cg_m64_neg(m, cg_m64_div(m, cs, sn)), cg_m64_div(m, sn, cs));
  } else {
    /* sin: quadrants 0..3 give sin r, cos r, -sin r, -cos r; cos is sin one quadrant on */
    uint32_t qq = id == IR_INTRIN_COS ? cg_m64_iop(m, SpvOpIAdd, q, cg_m64_ci(m, 1)) : q;
    uint32_t swap = id == IR_INTRIN_COS ? cg_m64_not(m, odd) : odd;
    uint32_t neg = cg_spv_inst(
        m->s, SpvOpINotEqual, m->b, 2,
        (uint32_t[]){cg_m64_iop(m, SpvOpBitwiseAnd, qq, cg_m64_ci(m, 2)), cg_m64_ci(m, 0)});
    v = cg_m64_sel(m, swap, cs, sn);
    v = cg_m64_sel(m, neg, cg_m64_neg(m, v), v);
  }
  uint32_t tiny = cg_m64_lt(m, ax, cg_m64_c(m, 0x1p-27));
  v = cg_m64_sel(m, tiny, id == IR_INTRIN_COS ? cg_m64_c(m, 1) : x, v);
  /* inf and NaN */
  return cg_m64_sel(m, cg_m64_or(m, cg_m64_isinf(m, x), cg_m64_isnan(m, x)), cg_m64_c(m, NAN), v);
}

uint32_t cg_m64_erf(cg_m64 *m, uint32_t x) {
  uint32_t one = cg_m64_c(m, 1);
  uint32_t ax = cg_m64_abs(m, x);
  /* |x| < 3: the series */
  double c[47];
  long double f = 1;
  for (int n = 0; n < 47; n++) {
    c[n] = (double)f;
    f *= 2.0L / (long double)(2 * n + 3);
  }
  uint32_t xs = cg_m64_clamp(m, x, -3, 3);
  uint32_t z = cg_m64_mul(m, xs, xs);
  uint32_t g = cg_m64_mul(m, cg_m64_exp_finite(m, cg_m64_neg(m, z)), cg_m64_horner(m, z, c, 47));
  uint32_t small = cg_m64_mul(m, cg_m64_mul(m, xs, cg_m64_c(m, M64_TWO_OVER_SQRTPI)), g);
  /* |x| >= 3: 1 - erfc, the continued fraction */
  uint32_t a = cg_m64_clamp(m, ax, 3, 27);
  uint32_t k = a;
  for (int n = 20; n >= 1; n--)
    k = cg_m64_add(m, a, cg_m64_div(m, cg_m64_c(m, n * 0.5), k));
  uint32_t e = cg_m64_exp_finite(m, cg_m64_neg(m, cg_m64_mul(m, a, a)));
  uint32_t erfc = cg_m64_div(m, cg_m64_mul(m, e, cg_m64_c(m, M64_ONE_OVER_SQRTPI)), k);
  uint32_t big = cg_m64_sub(m, one, erfc);
  big = cg_m64_sel(m, cg_m64_lt(m, x, cg_m64_c(m, 0)), cg_m64_neg(m, big), big);
  uint32_t v = cg_m64_sel(m, cg_m64_lt(m, ax, cg_m64_c(m, 3)), small, big);
  return cg_m64_sel(m, cg_m64_isnan(m, x), x, v);
}
