/* test_half_round.c — the compiler's own f16/bf16 rounding (constant folding, the printer,
 * the tuner's buffers: ir_float_round, ir_half_bits, ir_half_value) against the tests'
 * reference conversion (te_test_half.c), at every 16-bit value, every tie between neighbours and
 * just beside it, and past the largest finite value.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "ir/ir.h"
#include "te_test_half.h"

static void check_type(te_dtype t) {
  int nfinite = t.code == kDLBfloat ? 0x7f80 : 0x7c00;
  for (int h = 0; h < 0x10000; h++) {
    double v = tt_half_decode(t, (uint16_t)h);
    if (!isnan(v))
      cr_assert_eq(ir_half_bits(t, v), h, "bits of pattern 0x%04x", h);
    double back = ir_half_value(t, (uint16_t)h);
    cr_assert(isnan(v) ? isnan(back) : back == v, "value of 0x%04x: %g, want %g", h, back, v);
    int m = h & 0x7fff;
    if (m + 1 >= nfinite + 1)
      continue;
    double next = tt_half_decode(t, (uint16_t)(h + 1));
    double mid = (v + next) / 2;
    double near[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY), nextafter(mid, -INFINITY),
                     mid * (1 + 0x1p-40)};
    for (int k = 0; k < 5; k++) {
      uint16_t want = tt_half_encode(t, near[k]);
      cr_assert_eq(ir_half_bits(t, near[k]), want, "%a: got 0x%04x, want 0x%04x", near[k],
                   ir_half_bits(t, near[k]), want);
      cr_assert_eq(ir_float_round(t, near[k]), tt_half_decode(t, want), "%a", near[k]);
    }
  }
  cr_assert(isinf(ir_float_round(t, 1e300)) && isnan(ir_float_round(t, NAN)));
}

Test(half_round, f16) { check_type(TE_F16); }
Test(half_round, bf16) { check_type(TE_BF16); }
