/* spirv_math64_trig.c — f64 sin, cos, tan and erf for Vulkan kernels (see spirv_math64.c for
 * why and how these are SPIR-V functions of f64 arithmetic).
 *
 * sin, cos, tan. k = round(x 2/pi) and the reduced argument r = x - k pi/2 in double-double:
 * pi/2 is the sum of five 26-bit pieces and a tail (183 bits), so k * piece is exact for
 * |k| < 2^27 and every subtraction's error is kept (two_sum). The reduction is exact to well
 * below an ulp of r for |x| <= 2^27 (about 1.3e8): that is the range these functions support.
 * Beyond it they return NaN — a deliberate limit (docs/gpu.md): the exact reduction of larger
 * arguments needs 2/pi to ~1100 bits (Payne & Hanek), not written for this version. On
 * |r| <= pi/4: sin r = r + r^3 S(r^2) (Taylor to r^19), cos r = 1 - r^2/2 + r^4 C(r^2) (to
 * r^18, the 1 - r^2/2 rounding error recovered as in fdlibm's kernel), each corrected for
 * r's low part; the quadrant k mod 4 picks +-sin r or +-cos r; tan = sin / cos.
 * |x| < 2^-27: sin x = tan x = x (-0 kept), cos x = 1.
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
  uint32_t lc = cg_m64_mul(m, r.lo, cg_m64_sub(m, cg_m64_c(m, 1), cg_m64_mul(m, z, cg_m64_c(m, 0.5))));
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
  uint32_t q;
  cg_dd r = m64_trig_reduce(m, x, &q);
  uint32_t sn = m64_sin_kernel(m, r), cs = m64_cos_kernel(m, r);
  uint32_t odd = cg_spv_inst(m->s, SpvOpINotEqual, m->b, 2,
                             (uint32_t[]){cg_m64_iop(m, SpvOpBitwiseAnd, q, cg_m64_ci(m, 1)),
                                          cg_m64_ci(m, 0)});
  uint32_t v;
  if (id == IR_INTRIN_TAN) {
    /* odd quadrant: tan(r + pi/2) = -cos r / sin r */
    v = cg_m64_sel(m, odd, cg_m64_neg(m, cg_m64_div(m, cs, sn)), cg_m64_div(m, sn, cs));
  } else {
    /* sin: quadrants 0..3 give sin r, cos r, -sin r, -cos r; cos is sin one quadrant on */
    uint32_t qq = id == IR_INTRIN_COS ? cg_m64_iop(m, SpvOpIAdd, q, cg_m64_ci(m, 1)) : q;
    uint32_t swap = id == IR_INTRIN_COS ? cg_m64_not(m, odd) : odd;
    uint32_t neg = cg_spv_inst(m->s, SpvOpINotEqual, m->b, 2,
                               (uint32_t[]){cg_m64_iop(m, SpvOpBitwiseAnd, qq, cg_m64_ci(m, 2)),
                                            cg_m64_ci(m, 0)});
    v = cg_m64_sel(m, swap, cs, sn);
    v = cg_m64_sel(m, neg, cg_m64_neg(m, v), v);
  }
  uint32_t ax = cg_m64_abs(m, x);
  uint32_t tiny = cg_m64_lt(m, ax, cg_m64_c(m, 0x1p-27));
  v = cg_m64_sel(m, tiny, id == IR_INTRIN_COS ? cg_m64_c(m, 1) : x, v);
  /* inf, NaN and what the reduction does not reach */
  uint32_t in_range = cg_spv_inst(m->s, SpvOpFOrdLessThanEqual, m->b, 2,
                                  (uint32_t[]){ax, cg_m64_c(m, M64_TRIG_MAX)});
  return cg_m64_sel(m, in_range, v, cg_m64_c(m, NAN));
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
