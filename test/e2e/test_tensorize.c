/* test_tensorize.c — te_tensorize(stage, loop, "vpdpbusd"): int8 GEMMs mapped onto AVX512-VNNI /
 * AVX-VNNI give exactly the plain C result (u8 x s8 over the whole ranges, extremes included;
 * M not dividing the tiles), with B in the VNNI layout (one contiguous load per side), in plain
 * row-major layout (the interleave path), at 16 and 8 lanes; the emitted assembly holds
 * vpdpbusd for targets that have it (cross-compiled, so this runs everywhere); kernels run only
 * on a host with the instruction (a visible skip elsewhere). The trace records and replays the
 * step; the same nest without the step is correct everywhere.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../common/te_test.h"

TestSuite(tensorize, .init = tt_setup, .fini = tt_teardown);

static bool host_has_vnni(void) { return __builtin_cpu_supports("avx512vnni"); }

static void fill_q(tt_buf *b, uint64_t seed) {
  te_dtype t = b->dl.dtype;
  srand((unsigned)seed);
  int64_t lo = t.code == kDLInt ? -128 : 0, hi = t.code == kDLInt ? 127 : 255;
  for (int64_t i = 0; i < b->numel; i++) {
    int64_t v = lo + rand() % (hi - lo + 1);
    if (i % 5 == 0)
      v = (i / 5) % 2 ? lo : hi;
    tt_seti(b, i, v);
  }
}

#define GEMM(M, N, K, V, L) ((gemm){.m = (M), .n = (N), .k = (K), .vnni_layout = (V), .lanes = (L)})

typedef struct gemm {
  int64_t m, n, k;
  bool vnni_layout; /* B as Bp[k / 4][n][4], else B[k][n] */
  int lanes;        /* the vector loop's lanes */
  te_tensor *A, *B, *C;
  te_schedule *s;
  te_iter *ki;
} gemm;

/* C[i, j] = sum_k i32(A[i, k]) * i32(B(k, j)), tiled: i, j.o, k.o, k.i(4), j.i(lanes). */
static void gemm_define(gemm *g, bool tensorize) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, g->k));
  g->A = tt_placeholder("A", TE_U8, 2, TT_SHAPE(g->m, g->k));
  te_expr *b;
  te_expr *four = te_int(tt_ctx, 4);
  if (g->vnni_layout) {
    g->B = tt_placeholder("B", TE_I8, 3, TT_SHAPE(g->k / 4, g->n, 4));
    b = TE_AT(g->B, te_floordiv(k, four), j, te_floormod(k, four));
  } else {
    g->B = tt_placeholder("B", TE_I8, 2, TT_SHAPE(g->k, g->n));
    b = TE_AT(g->B, k, j);
  }
  te_expr *body = te_mul(te_cast(TE_I32, TE_AT(g->A, i, k)), te_cast(TE_I32, b));
  te_expr *shape[2] = {te_int(tt_ctx, g->m), te_int(tt_ctx, g->n)};
  g->C = TT_NN(te_compute(tt_ctx, "C", 2, shape, TE_EXPRS(i, j), TE_SUM(body, k)));
  g->s = tt_schedule1(g->C);
  te_stage *st = tt_stage(g->s, g->C);
  te_iter *jo, *ji, *ko;
  TT_OK(te_split(st, TT_NN(te_axis(st, 1)), g->lanes, &jo, &ji));
  TT_OK(te_split(st, TT_NN(te_reduce_iter(st, 0)), 4, &ko, &g->ki));
  TT_OK(te_reorder(st, 5, (te_iter *const[]){TT_NN(te_axis(st, 0)), jo, ko, g->ki, ji}));
  TT_OK(te_vectorize(st, ji));
  if (tensorize)
    TT_OK(te_tensorize(st, g->ki, "vpdpbusd"));
}

/* B's buffer in the layout g uses, and the reference C. */
static void gemm_run(gemm *g, te_target *t) {
  te_module *m = NULL;
  TT_OK(te_build(g->s, "gemm", 3, TT_TENSORS(g->A, g->B, g->C), 0, NULL, t, &m));
  tt_buf *a = TT_ALLOC(TE_U8, g->m, g->k), *got = TT_ALLOC(TE_I32, g->m, g->n);
  tt_buf *ref = TT_ALLOC(TE_I32, g->m, g->n);
  tt_buf *b = g->vnni_layout ? TT_ALLOC(TE_I8, g->k / 4, g->n, 4) : TT_ALLOC(TE_I8, g->k, g->n);
  fill_q(a, 3), fill_q(b, 4);
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++) {
      int64_t s = 0;
      for (int64_t r = 0; r < g->k; r++) {
        int64_t bi = g->vnni_layout ? ((r / 4) * g->n + j) * 4 + r % 4 : r * g->n + j;
        s += tt_geti(a, i * g->k + r) * tt_geti(b, bi);
      }
      tt_seti(ref, i * g->n + j, s);
    }
  tt_poison(got);
  tt_call(m, "gemm", 3, TT_BUFS(a, b, got), 0, NULL);
  tt_assert_close(got, ref, g->k);
}

static char *gemm_asm(gemm *g, const char *target) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  TT_OK(te_build(g->s, "gemm", 3, TT_TENSORS(g->A, g->B, g->C), 0, NULL, t, &m));
  return TT_NN((char *)te_module_source(m, "asm"));
}

static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p++)
    n++;
  return n;
}

Test(tensorize, asm_has_vpdpbusd_zmm_on_avx512vnni_targets) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, true);
  const char *text = gemm_asm(&g, "llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server");
  cr_assert(count(text, "vpdpbusd") >= 1 && strstr(text, "zmm"), "no vpdpbusd on zmm:\n%.3000s",
            text);
  /* the VNNI layout of B is one 64-byte load, A's 4 bytes one 32-bit broadcast */
  cr_assert(strstr(text, "vpbroadcastd"), "A's bytes are not broadcast as one 32-bit lane");
}

Test(tensorize, asm_has_vpdpbusd_ymm_with_avx_vnni) {
  gemm g = GEMM(5, 16, 32, true, 8);
  gemm_define(&g, true);
  const char *text = gemm_asm(&g, "llvm -mtriple=x86_64-linux-gnu -mcpu=alderlake");
  cr_assert(count(text, "vpdpbusd") >= 1 && strstr(text, "ymm"), "no vpdpbusd on ymm:\n%.3000s",
            text);
}

Test(tensorize, without_the_step_no_vpdpbusd_is_promised) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, false);
  const char *text = gemm_asm(&g, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512");
  cr_assert(count(text, "vpdpbusd") == 0); /* skylake has no VNNI: plain vector code */
}

static void run_case(gemm g, bool tensorize) {
  if (tensorize && !host_has_vnni()) {
    tt_skip("avx512vnni", "this CPU has no AVX512-VNNI: the tensorized kernel is not run");
    return;
  }
  gemm_define(&g, tensorize);
  gemm_run(&g, tt_target());
}

Test(tensorize, exact_vnni_layout_16_lanes) { run_case(GEMM(13, 48, 64, true, 16), true); }
Test(tensorize, exact_row_major_b_interleaved) { run_case(GEMM(9, 32, 36, false, 16), true); }
Test(tensorize, exact_8_lanes) { run_case(GEMM(5, 24, 20, true, 8), true); }
Test(tensorize, same_nest_untensorized_is_exact) { run_case(GEMM(13, 48, 64, true, 16), false); }

Test(tensorize, trace_records_and_replays_the_step) {
  gemm g = GEMM(7, 32, 64, true, 16);
  gemm_define(&g, true);
  char *trace = TT_NN(te_schedule_trace(g.s));
  cr_assert(strstr(trace, "tensorize C k.i vpdpbusd"), "%s", trace);
  gemm h = GEMM(7, 32, 64, true, 16);
  gemm_define(&h, false);
  te_schedule *s2 = tt_schedule1(h.C);
  TT_OK(te_schedule_replay(s2, trace));
  char *again = TT_NN(te_schedule_trace(s2));
  cr_assert_str_eq(again, trace);
  te_free(trace);
  te_free(again);
}
