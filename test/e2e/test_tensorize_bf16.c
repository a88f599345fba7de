/* test_tensorize_bf16.c — te_tensorize(stage, loop, "vdpbf16ps"): bf16 GEMMs accumulating in f32
 * mapped onto AVX512-BF16 agree with an f64 reference within f32's rounding of the sum (random
 * non-zero inputs, output poisoned, M and N not dividing the tiles), with B in the pair layout
 * Bp[k / 2][n][2] (one contiguous load per side), in plain row-major layout (the interleave
 * path), at 16 and 8 lanes; the emitted assembly holds vdpbf16ps for targets that have it
 * (cross-compiled, so this runs everywhere) and none without the step; kernels run only on a
 * host with the instruction (a visible skip elsewhere). The trace records and replays the step.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../common/te_test.h"

TestSuite(tensorize_bf16, .init = tt_setup, .fini = tt_teardown);

typedef struct gemm {
  int64_t m, n, k;
  bool pair_layout; /* B as Bp[k / 2][n][2], else B[k][n] */
  int lanes;        /* the vector loop's lanes */
  te_tensor *A, *B, *C;
  te_schedule *s;
  te_iter *ki;
} gemm;

#define GEMM(M, N, K, P, L) ((gemm){.m = (M), .n = (N), .k = (K), .pair_layout = (P), .lanes = (L)})

/* C[i, j] = sum_k f32(A[i, k]) * f32(B(k, j)), tiled: i, j.o, k.o, k.i(2), j.i(lanes). */
static void gemm_define(gemm *g, bool tensorize) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j"), *two = te_int(tt_ctx, 2);
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, g->k));
  g->A = tt_placeholder("A", TE_BF16, 2, TT_SHAPE(g->m, g->k));
  te_expr *b;
  if (g->pair_layout) {
    g->B = tt_placeholder("B", TE_BF16, 3, TT_SHAPE(g->k / 2, g->n, 2));
    b = TE_AT(g->B, te_floordiv(k, two), j, te_floormod(k, two));
  } else {
    g->B = tt_placeholder("B", TE_BF16, 2, TT_SHAPE(g->k, g->n));
    b = TE_AT(g->B, k, j);
  }
  te_expr *body = te_mul(te_cast(TE_F32, TE_AT(g->A, i, k)), te_cast(TE_F32, b));
  te_expr *shape[2] = {te_int(tt_ctx, g->m), te_int(tt_ctx, g->n)};
  g->C = TT_NN(te_compute(tt_ctx, "C", 2, shape, TE_EXPRS(i, j), TE_SUM(body, k)));
  g->s = tt_schedule1(g->C);
  te_stage *st = tt_stage(g->s, g->C);
  te_iter *jo, *ji, *ko;
  TT_OK(te_split(st, TT_NN(te_axis(st, 1)), g->lanes, &jo, &ji));
  TT_OK(te_split(st, TT_NN(te_reduce_iter(st, 0)), 2, &ko, &g->ki));
  TT_OK(te_reorder(st, 5, (te_iter *const[]){TT_NN(te_axis(st, 0)), jo, ko, g->ki, ji}));
  TT_OK(te_vectorize(st, ji));
  if (tensorize)
    TT_OK(te_tensorize(st, g->ki, "vdpbf16ps"));
}

/* Runs g on the host against the f64 sum of the bf16 values' products. */
static void gemm_run(gemm *g) {
  te_module *m = NULL;
  TT_OK(te_build(g->s, "gemm", 3, TT_TENSORS(g->A, g->B, g->C), 0, NULL, tt_target(), &m));
  tt_buf *a = TT_ALLOC(TE_BF16, g->m, g->k), *got = TT_ALLOC(TE_F32, g->m, g->n);
  tt_buf *ref = TT_ALLOC(TE_F32, g->m, g->n); /* the f64 sum rounded once */
  tt_buf *b = g->pair_layout ? TT_ALLOC(TE_BF16, g->k / 2, g->n, 2) : TT_ALLOC(TE_BF16, g->k, g->n);
  tt_fill(a, 5), tt_fill(b, 6);
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++) {
      double s = 0;
      for (int64_t r = 0; r < g->k; r++) {
        int64_t bi = g->pair_layout ? ((r / 2) * g->n + j) * 2 + r % 2 : r * g->n + j;
        s += tt_get(a, i * g->k + r) * tt_get(b, bi);
      }
      tt_set(ref, i * g->n + j, s);
    }
  tt_poison(got);
  tt_call(m, "gemm", 3, TT_BUFS(a, b, got), 0, NULL);
  /* f32's tolerance for a sum of k terms: the products are exact, only the adds round */
  tt_assert_close(got, ref, g->k);
}

static char *gemm_asm(gemm *g, const char *target) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  TT_OK(te_build(g->s, "gemm", 3, TT_TENSORS(g->A, g->B, g->C), 0, NULL, t, &m));
  return TT_NN((char *)te_module_source(m, "asm"));
}

Test(tensorize_bf16, asm_has_vdpbf16ps_zmm_on_avx512bf16_targets) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, true);
  const char *text = gemm_asm(&g, "llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids");
  cr_assert(strstr(text, "vdpbf16ps") && strstr(text, "zmm"), "no vdpbf16ps on zmm:\n%.3000s",
            text);
  /* the pair layout of B is one 64-byte load, A's pair of bf16 one 32-bit broadcast */
  cr_assert(strstr(text, "vbroadcastss") || strstr(text, "vpbroadcastd") || strstr(text, "{1to16}"),
            "A's pair is not broadcast as one 32-bit lane:\n%.3000s", text);
}

Test(tensorize_bf16, asm_has_vdpbf16ps_ymm_with_vl_and_on_zen4) {
  gemm g = GEMM(5, 16, 32, true, 8);
  gemm_define(&g, true);
  const char *text = gemm_asm(&g, "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4");
  cr_assert(strstr(text, "vdpbf16ps") && strstr(text, "ymm"), "no vdpbf16ps on ymm:\n%.3000s",
            text);
}

Test(tensorize_bf16, without_the_step_no_vdpbf16ps_is_promised) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, false);
  const char *text = gemm_asm(&g, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512");
  cr_assert(!strstr(text, "vdpbf16ps")); /* skylake has no AVX512-BF16: plain vector code */
}

static void run_case(gemm g, bool tensorize) {
  if (tensorize && !__builtin_cpu_supports("avx512bf16")) {
    tt_skip("avx512bf16", "this CPU has no AVX512-BF16: the tensorized kernel is not run");
    return;
  }
  gemm_define(&g, tensorize);
  gemm_run(&g);
}

Test(tensorize_bf16, close_pair_layout_16_lanes) { run_case(GEMM(13, 48, 64, true, 16), true); }
Test(tensorize_bf16, close_row_major_b_interleaved) { run_case(GEMM(9, 32, 38, false, 16), true); }
Test(tensorize_bf16, close_8_lanes) { run_case(GEMM(5, 24, 20, true, 8), true); }
Test(tensorize_bf16, close_long_sum) { run_case(GEMM(3, 16, 1024, true, 16), true); }
Test(tensorize_bf16, same_nest_untensorized_is_close) {
  run_case(GEMM(13, 48, 64, true, 16), false);
}

Test(tensorize_bf16, trace_records_and_replays_the_step) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, true);
  char *trace = TT_NN(te_schedule_trace(g.s));
  cr_assert(strstr(trace, "tensorize C k.i vdpbf16ps"), "%s", trace);
  gemm h = GEMM(7, 32, 64, true, 16);
  gemm_define(&h, false);
  te_schedule *s2 = tt_schedule1(h.C);
  TT_OK(te_schedule_replay(s2, trace));
  char *again = TT_NN(te_schedule_trace(s2));
  cr_assert_str_eq(again, trace);
  te_free(trace);
  te_free(again);
}

Test(tensorize_bf16, lower_text_shows_the_call) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, true);
  char *text = TT_NN(te_lower_text(g.s, 3, TT_TENSORS(g.A, g.B, g.C), 0, NULL));
  cr_assert(strstr(text, "dot2_bf16"), "%s", text);
  te_free(text);
}
