/* test_tensorize_conv_bf16.c — a bf16 conv2d accumulating in f32 (3x3, stride 1, pad 1, NHWC,
 * weights in the pair layout Kp[ry][rx][c / 2][o][c % 2]) with bench/dot_conv.c's schedule: a
 * padding stage, an 8 x 32 tile of (x, o) in a local block, loops ry, rx, c / 2, x (unrolled),
 * o.v (unrolled), c % 2 (te_tensorize "vdpbf16ps"), o (16, vectorized). Widths and output
 * channels that do not divide the tile (W = 11 of 8, K = 48 of 32), random non-zero bf16 inputs
 * and a poisoned output, against the f64 sum of the bf16 values' products within f32's rounding
 * of a 9 C term sum; the same nest without the step likewise; the assembly for a sapphirerapids
 * target holds vdpbf16ps on zmm (cross-compiled, runs everywhere); kernels run only on a host
 * with AVX512-BF16 (a visible skip elsewhere).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../common/te_test.h"

TestSuite(tensorize_conv_bf16, .init = tt_setup, .fini = tt_teardown);

typedef struct conv {
  int64_t h, w, c, k; /* N = 1 */
  te_tensor *D, *Kp, *O;
  te_schedule *s;
} conv;

#define CONV(H, W, C, K) ((conv){.h = (H), .w = (W), .c = (C), .k = (K)})

/* O[0, y, x, o] = sum_{ry, rx, c} f32(Dp[0, y + ry, x + rx, c]) * f32(Kp[ry, rx, c / 2, o, c % 2]),
   Dp the data padded by 1 on each side of H and W. */
static void conv_define(conv *g, bool tensorize) {
  te_ctx *ctx = tt_ctx;
  te_expr *one = te_int(ctx, 1), *two = te_int(ctx, 2);
  g->D = tt_placeholder("D", TE_BF16, 4, TT_SHAPE(1, g->h, g->w, g->c));
  g->Kp = tt_placeholder("Kp", TE_BF16, 5, TT_SHAPE(3, 3, g->c / 2, g->k, 2));
  te_expr *n = te_var(ctx, "n"), *h = te_var(ctx, "h"), *w = te_var(ctx, "w"),
          *c = te_var(ctx, "c");
  te_expr *inside = te_and(te_and(te_ge(h, one), te_le(h, te_int(ctx, g->h))),
                           te_and(te_ge(w, one), te_le(w, te_int(ctx, g->w))));
  te_tensor *Dp = TT_NN(te_compute(
      ctx, "Dp", 4, TE_EXPRS(one, te_int(ctx, g->h + 2), te_int(ctx, g->w + 2), te_int(ctx, g->c)),
      TE_EXPRS(n, h, w, c),
      te_if_then_else(inside, TE_AT(g->D, n, te_sub(h, one), te_sub(w, one), c),
                      te_const(ctx, TE_BF16, 0))));
  te_expr *y = te_var(ctx, "y"), *x = te_var(ctx, "x"), *o = te_var(ctx, "o"),
          *n2 = te_var(ctx, "n");
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), te_int(ctx, g->c));
  te_expr *d = TE_AT(Dp, n2, te_add(y, ry), te_add(x, rx), rc);
  te_expr *kw = TE_AT(g->Kp, ry, rx, te_floordiv(rc, two), o, te_floormod(rc, two));
  te_expr *body = te_mul(te_cast(TE_F32, d), te_cast(TE_F32, kw));
  g->O = TT_NN(te_compute(ctx, "O", 4,
                          TE_EXPRS(one, te_int(ctx, g->h), te_int(ctx, g->w), te_int(ctx, g->k)),
                          TE_EXPRS(n2, y, x, o), TE_SUM(body, ry, rx, rc)));
  te_schedule *s = g->s = tt_schedule1(g->O);
  te_tensor *OL = NULL;
  TT_OK(te_cache_write(s, g->O, TE_SCOPE_LOCAL, &OL));
  te_stage *os = tt_stage(s, g->O), *ls = tt_stage(s, OL), *ps = tt_stage(s, Dp);
  te_iter *xo, *xi, *oo, *oi, *ov, *ol, *cg, *q, *oio, *oii;
  TT_OK(te_split(os, te_axis(os, 2), 8, &xo, &xi));
  TT_OK(te_split(os, te_axis(os, 3), 32, &oo, &oi));
  TT_OK(te_reorder(os, 6, (te_iter *const[]){te_axis(os, 0), te_axis(os, 1), xo, oo, xi, oi}));
  TT_OK(te_compute_at(ls, os, oo));
  TT_OK(te_split(ls, te_axis(ls, 3), 16, &ov, &ol));
  TT_OK(te_split(ls, te_reduce_iter(ls, 2), 2, &cg, &q));
  TT_OK(te_reorder(ls, 9,
                   (te_iter *const[]){te_axis(ls, 0), te_axis(ls, 1), te_reduce_iter(ls, 0),
                                      te_reduce_iter(ls, 1), cg, te_axis(ls, 2), ov, q, ol}));
  TT_OK(te_split(os, oi, 16, &oio, &oii));
  TT_OK(te_vectorize(ls, ol));
  TT_OK(te_vectorize(os, oii));
  TT_OK(te_vectorize(ps, te_axis(ps, 3)));
  TT_OK(te_unroll(ls, te_axis(ls, 2)));
  TT_OK(te_unroll(ls, ov));
  if (tensorize)
    TT_OK(te_tensorize(ls, q, "vdpbf16ps"));
  TT_OK(te_parallel(os, te_axis(os, 1)));
}

static void conv_run(conv *g) {
  te_module *m = NULL;
  TT_OK(te_build(g->s, "conv", 3, TT_TENSORS(g->D, g->Kp, g->O), 0, NULL, tt_target(), &m));
  tt_buf *d = TT_ALLOC(TE_BF16, 1, g->h, g->w, g->c),
         *kp = TT_ALLOC(TE_BF16, 3, 3, g->c / 2, g->k, 2);
  tt_buf *got = TT_ALLOC(TE_F32, 1, g->h, g->w, g->k), *ref = TT_ALLOC(TE_F32, 1, g->h, g->w, g->k);
  tt_fill(d, 11), tt_fill(kp, 12);
  for (int64_t y = 0; y < g->h; y++)
    for (int64_t x = 0; x < g->w; x++)
      for (int64_t o = 0; o < g->k; o++) {
        double s = 0;
        for (int64_t ry = 0; ry < 3; ry++)
          for (int64_t rx = 0; rx < 3; rx++) {
            int64_t iy = y + ry - 1, ix = x + rx - 1;
            if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
              continue;
            for (int64_t c = 0; c < g->c; c++)
              s += tt_get(d, (iy * g->w + ix) * g->c + c) *
                   tt_get(kp, (((ry * 3 + rx) * (g->c / 2) + c / 2) * g->k + o) * 2 + c % 2);
          }
        tt_set(ref, (y * g->w + x) * g->k + o, s);
      }
  tt_poison(got);
  tt_call(m, "conv", 3, TT_BUFS(d, kp, got), 0, NULL);
  tt_assert_close(got, ref, 9 * g->c); /* products exact in f32: only the adds round */
}

static void run_case(conv g, bool tensorize) {
  if (tensorize && !__builtin_cpu_supports("avx512bf16")) {
    tt_skip("avx512bf16", "this CPU has no AVX512-BF16: the tensorized kernel is not run");
    return;
  }
  conv_define(&g, tensorize);
  conv_run(&g);
}

Test(tensorize_conv_bf16, close_resnet_like_tile_tails) { run_case(CONV(9, 11, 16, 48), true); }
Test(tensorize_conv_bf16, close_more_channels) { run_case(CONV(5, 16, 64, 32), true); }
Test(tensorize_conv_bf16, same_nest_untensorized_is_close) { run_case(CONV(9, 11, 16, 48), false); }

Test(tensorize_conv_bf16, asm_has_vdpbf16ps_zmm) {
  conv g = CONV(9, 11, 16, 48);
  conv_define(&g, true);
  te_target *t =
      TT_NN(te_target_parse(tt_ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids"));
  te_module *m = NULL;
  TT_OK(te_build(g.s, "conv", 3, TT_TENSORS(g.D, g.Kp, g.O), 0, NULL, t, &m));
  const char *text = TT_NN((char *)te_module_source(m, "asm"));
  cr_assert(strstr(text, "vdpbf16ps") && strstr(text, "zmm"), "no vdpbf16ps on zmm:\n%.3000s",
            text);
}
