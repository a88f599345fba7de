/* test_vulkan_f16.c — f16 on the "vulkan" target (the Float16 capability, 16-bit storage
 * buffers), run on the machine's Vulkan device (lavapipe here) on poisoned outputs against C:
 *
 *   - element-wise f16 -> f16 with a tail (n = 1000, 64 threads a block): C = A * 2 + B, each
 *     operation rounded to f16 as te defines it (computed in f32, rounded once: widen_half.c),
 *     the reference rounding with the tests' own conversion (te_test_half.c);
 *   - a row sum of f16 values accumulated in f32 (f16 in, f32 out);
 *   - a conversion f32 -> f16 -> f32 of values around f16's range (overflow to inf, subnormals).
 * The SPIR-V declares OpCapability Float16 and passes spirv-val (te validates every module it
 * makes, te_build fails otherwise). Without a Vulkan driver each test prints a SKIP line.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../common/te_test.h"
#include "../common/te_test_half.h"

TestSuite(vulkan_f16, .init = tt_setup, .fini = tt_teardown);

static te_module *vk_build1(te_tensor *out, int nt, te_tensor *const ts[], int64_t threads) {
  te_schedule *s = tt_schedule1(out);
  te_stage *st = tt_stage(s, out);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), threads, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_module *m = NULL;
  TT_OK(te_build(s, "k", nt, ts, 0, NULL, TT_NN(te_target_parse(tt_ctx, "vulkan")), &m));
  const char *dis = te_module_source(m, "spirv-dis");
  cr_expect(dis && strstr(dis, "OpCapability Float16"), "no Float16 capability:\n%s",
            dis ? dis : "(none)");
  return m;
}

static void vk_call(te_module *m, int nt, tt_buf *const bufs[]) {
  DLTensor *dl[8];
  tt_dl(nt, bufs, dl);
  te_status st = te_module_call(m, "k", nt, dl, 0, NULL);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
    tt_skip("vulkan", "%s", te_last_error(tt_ctx));
  TT_OK(st);
}

static double r16(double v) { return tt_half_decode(TE_F16, tt_half_encode(TE_F16, v)); }

Test(vulkan_f16, elementwise_f16_with_tail) {
  enum { N = 1000 };
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, N);
  te_tensor *a = TT_NN(te_placeholder(tt_ctx, "A", TE_F16, 1, TE_EXPRS(n)));
  te_tensor *b = TT_NN(te_placeholder(tt_ctx, "B", TE_F16, 1, TE_EXPRS(n)));
  te_expr *v = te_add(te_mul(tt_at1(a, i), te_float(tt_ctx, TE_F16, 2)), tt_at1(b, i));
  te_tensor *c = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), v));
  te_module *m = vk_build1(c, 3, TT_TENSORS(a, b, c), 64);
  tt_buf *ba = TT_ALLOC(TE_F16, N), *bb = TT_ALLOC(TE_F16, N), *got = TT_ALLOC(TE_F16, N);
  tt_fill(ba, 11);
  tt_fill(bb, 12);
  tt_poison(got);
  vk_call(m, 3, TT_BUFS(ba, bb, got));
  int bad = 0;
  for (int64_t q = 0; q < N; q++) {
    double want = r16(r16(tt_get(ba, q) * 2) + tt_get(bb, q));
    double g = tt_get(got, q);
    if (!(g == want || fabs(g - want) <= 1e-3 * fabs(want)) && bad++ < 5) /* 1 ulp at most */
      cr_expect_fail("C[%lld] = %.8g, expected %.8g", (long long)q, g, want);
  }
  cr_expect_eq(bad, 0, "%d of %d elements differ", bad, N);
}

Test(vulkan_f16, row_sum_f16_into_f32) {
  enum { R = 40, K = 300 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *a =
      TT_NN(te_placeholder(tt_ctx, "A", TE_F16, 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, K))));
  te_tensor *s = TT_NN(te_compute(tt_ctx, "S", 1, TE_EXPRS(te_int(tt_ctx, R)), TE_EXPRS(i),
                                  te_sum(te_cast(TE_F32, TE_AT(a, i, k)), 1, TE_EXPRS(k))));
  te_module *m = vk_build1(s, 2, TT_TENSORS(a, s), 16);
  tt_buf *ba = TT_ALLOC(TE_F16, R, K), *got = TT_ALLOC(TE_F32, R), *ref = TT_ALLOC(TE_F32, R);
  tt_fill(ba, 21);
  tt_poison(got);
  for (int64_t r = 0; r < R; r++) {
    double sum = 0;
    for (int64_t q = 0; q < K; q++)
      sum += tt_get(ba, r * K + q);
    tt_set(ref, r, sum);
  }
  vk_call(m, 2, TT_BUFS(ba, got));
  tt_assert_close(got, ref, K);
}

Test(vulkan_f16, conversions_at_the_range_edges) {
  enum { N = 256 };
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, N);
  te_tensor *a = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *c = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_cast(TE_F32, te_cast(TE_F16, tt_at1(a, i)))));
  te_module *m = vk_build1(c, 2, TT_TENSORS(a, c), 64);
  tt_buf *ba = TT_ALLOC(TE_F32, N), *got = TT_ALLOC(TE_F32, N);
  for (int q = 0; q < N; q++) /* 1e-7 .. 1e5 in both signs: subnormals, normals, overflow */
    tt_set(ba, q, (q % 2 ? -1 : 1) * pow(10.0, -7 + 12.0 * q / N) * (1 + 0.37 * (q % 7)));
  tt_poison(got);
  vk_call(m, 2, TT_BUFS(ba, got));
  int bad = 0;
  for (int q = 0; q < N; q++) {
    double x = tt_get(ba, q), want = r16(x), g = tt_get(got, q);
    /* round to nearest even is what te's other targets do; a device may flush f16 subnormals
       (Vulkan allows it): accept 0 there, and 1 ulp elsewhere */
    bool ok = g == want || (fabs(want) < 6.2e-5 && g == 0) ||
              (isfinite(want) && fabs(g - want) <= 1e-3 * fabs(want));
    if (!ok && bad++ < 5)
      cr_expect_fail("f16(%.8g) = %.8g, expected %.8g", x, g, want);
  }
  cr_expect_eq(bad, 0, "%d of %d conversions differ", bad, N);
}

/* An f16 constant that stays f16 (a select's value: selects keep 16-bit types), so the module
   holds an f16 OpConstant. */
Test(vulkan_f16, select_with_f16_constant) {
  enum { N = 300 };
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, N);
  te_tensor *a = TT_NN(te_placeholder(tt_ctx, "A", TE_F16, 1, TE_EXPRS(n)));
  te_expr *x = tt_at1(a, i);
  te_expr *v = te_select(te_gt(x, te_float(tt_ctx, TE_F16, 0)), x, te_float(tt_ctx, TE_F16, -0.7));
  te_tensor *c = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), v));
  te_module *m = vk_build1(c, 2, TT_TENSORS(a, c), 64);
  tt_buf *ba = TT_ALLOC(TE_F16, N), *got = TT_ALLOC(TE_F16, N);
  tt_fill(ba, 31);
  tt_poison(got);
  vk_call(m, 2, TT_BUFS(ba, got));
  for (int64_t q = 0; q < N; q++) {
    double x0 = tt_get(ba, q), want = x0 > 0 ? x0 : r16(-0.7);
    cr_expect_eq(tt_get(got, q), want, "C[%lld] = %.8g, expected %.8g", (long long)q,
                 tt_get(got, q), want);
  }
}
