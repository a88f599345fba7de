/* blur.c — the 3x3 separable box blur over a 4096x4096 f32 image (Halide's classic example):
 *     bx[y][x]  = (in[y][x] + in[y][x+1] + in[y][x+2]) / 3          (H+2) x W
 *     out[y][x] = (bx[y][x] + bx[y+1][x] + bx[y+2][x]) / 3           H x W
 * over an input of (H+2) x (W+2) (no boundary condition), multiplying by 1/3 in every variant.
 * te vs Halide 14 (same classic schedule) vs C, at 1 and 2 threads (C: 1).
 *
 * te's hand schedule ("blur WxH") is the form te-tune's `simple` sketch found best: bx inlined
 * into out (each output reads its 9 inputs, the 3 input rows L1-resident), out's columns split
 * by 16 and vectorized, rows in parallel: no intermediate, no bx rows computed twice.
 * "blur WxH tiles" is Halide's classic schedule with another tile: out tiled 64 rows x 128
 * columns, the tile's columns split by 16 and vectorized, rows of tiles in parallel; bx computed
 * per tile (te_compute_at at the tile's column loop: the extra step "compute_at") with its
 * columns vectorized too. Without compute_at bx is computed at root (a full intermediate
 * image), in parallel and vectorized. The tile: bx's 66 x 128 floats (33 KiB) fit L1 as
 * Halide's 34 x 256 do, while the 2 rows of bx each tile computes twice are 3% of its rows
 * instead of 6%; on a Zen 5 by CPU time, 64 x 128 ran 1.05x Halide, 32 x 256 0.95x. On
 * Emerald Rapids the inlined form runs 1.2-1.6x the tiles by CPU time (docs/tuning-space.md).
 * The C version keeps a ring of three blurred rows (L1-resident) and is vectorized by gcc.
 * Rate: GB/s of minimal traffic (input read once, output written once).
 */
#include "bench.h"
#include "dot_time.h"
#include "halide_bench.h"
#include "report.h"
#include "te_util.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct blur_shape {
  int w, h;
} blur_shape;

static void blur_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const blur_shape *s = params;
  te_expr *y = te_var(ctx, "y"), *x = te_var(ctx, "x");
  te_expr *third = te_float(ctx, TE_F32, 1.0 / 3.0), *one = te_int(ctx, 1), *two = te_int(ctx, 2);
  te_tensor *in =
      te_placeholder(ctx, "In", TE_F32, 2, TE_EXPRS(te_int(ctx, s->h + 2), te_int(ctx, s->w + 2)));
  te_tensor *bx =
      te_compute(ctx, "bx", 2, TE_EXPRS(te_int(ctx, s->h + 2), te_int(ctx, s->w)), TE_EXPRS(y, x),
                 te_mul(te_add(te_add(TE_AT(in, y, x), TE_AT(in, y, te_add(x, one))),
                               TE_AT(in, y, te_add(x, two))),
                        third));
  te_tensor *by =
      te_compute(ctx, "by", 2, TE_EXPRS(te_int(ctx, s->h), te_int(ctx, s->w)), TE_EXPRS(y, x),
                 te_mul(te_add(te_add(TE_AT(bx, y, x), TE_AT(bx, te_add(y, one), x)),
                               TE_AT(bx, te_add(y, two), x)),
                        third));
  out->s = te_schedule_new(ctx, 1, &by);
  out->ntensors = 2;
  out->tensors[0] = in;
  out->tensors[1] = by;
  if (!out->s || !(flags & TB_TILE))
    return;

  te_stage *sy = te_stage_of(out->s, by), *sx = te_stage_of(out->s, bx);
  if (flags & TB_EXTRA2) { /* blur_inline_define's form */
    te_iter *xo = NULL, *xi = NULL;
    te_compute_inline(sx);
    te_split(sy, te_axis(sy, 1), 16, &xo, &xi);
    if (flags & TB_VEC)
      te_vectorize(sy, xi);
    if (flags & TB_PAR)
      te_parallel(sy, te_axis(sy, 0));
    return;
  }
  te_iter *yo = NULL, *xo = NULL, *yi = NULL, *xi = NULL, *xio = NULL, *xii = NULL;
  te_tile(sy, te_axis(sy, 0), te_axis(sy, 1), 64, 128, &yo, &xo, &yi, &xi);
  te_split(sy, xi, 16, &xio, &xii);
  if (flags & TB_VEC)
    te_vectorize(sy, xii);
  if (flags & TB_PAR)
    te_parallel(sy, yo);
  if (flags & TB_UNROLL)
    te_unroll(sy, xio);
  te_iter *bxo = NULL, *bxi = NULL;
  if (flags & TB_EXTRA)
    te_compute_at(sx, sy, xo);
  te_split(sx, te_axis(sx, 1), 16, &bxo, &bxi);
  if (flags & TB_VEC)
    te_vectorize(sx, bxi);
  if ((flags & TB_PAR) && !(flags & TB_EXTRA))
    te_parallel(sx, te_axis(sx, 0));
}

/* The form te-tune's `simple` sketch finds best: bx inlined into out (each output reads its 9
   inputs, 3 rows of them L1-resident), out's columns split by 16 and vectorized, rows in
   parallel. No tiles, no intermediate buffer, no bx rows computed twice. */
static void blur_inline_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  blur_define(ctx, flags & TB_TILE ? flags | TB_EXTRA2 : flags, params, out);
}

/* The same computation as a workload text, for `te-tune tune "$(text)"` and the "blur tuned"
   row (te-bench --tuned LOG): te_apply_best finds the log's schedule by its canonical text. */
static void blur_text(const blur_shape *s, char *buf, size_t size) {
  snprintf(buf, size,
           "bx[y, x] = (In[y, x] + In[y, x + 1] + In[y, x + 2])*0.333333343f; "
           "by[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x])*0.333333343f "
           "where In: f32[%d, %d], bx: [%d, %d], by: [%d, %d]",
           s->h + 2, s->w + 2, s->h + 2, s->w, s->h, s->w);
}

typedef struct blur_tuned {
  blur_shape s;
  const char *log;
} blur_tuned;

/* blur_text's computation with te_apply_best(log); no schedule (te's message) without one. */
static void blur_define_tuned(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  const blur_tuned *p = params;
  char text[512];
  blur_text(&p->s, text, sizeof text);
  int nout = 0, nin = 0;
  te_tensor **outs = NULL, **ins = NULL;
  out->s = NULL;
  if (te_parse(ctx, text, &nout, &outs) != TE_OK || nout != 1 ||
      te_workload_inputs(nout, outs, &nin, &ins, NULL, NULL) != TE_OK || nin != 1)
    return;
  out->s = te_schedule_new(ctx, 1, outs);
  out->ntensors = 2;
  out->tensors[0] = ins[0];
  out->tensors[1] = outs[0];
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  if (out->s && (!target || te_apply_best(out->s, p->log, target) != TE_OK))
    out->s = NULL; /* tb_build reports te's message */
}

typedef struct blur_data {
  blur_shape s;
  float *in, *out, *ring;
} blur_data;

static void blur_row(const float *restrict in, float *restrict bx, int w) {
  const float third = 1.0f / 3.0f;
  for (int x = 0; x < w; x++)
    bx[x] = (in[x] + in[x + 1] + in[x + 2]) * third;
}

static void blur_c(const float *restrict in, float *restrict out, float *restrict ring, int w,
                   int h) {
  const float third = 1.0f / 3.0f;
  size_t iw = (size_t)w + 2;
  blur_row(in, ring, w);
  blur_row(in + iw, ring + w, w);
  for (int y = 0; y < h; y++) {
    const float *restrict r0 = ring + (size_t)(y % 3) * w, *restrict r1 =
                                                               ring + (size_t)((y + 1) % 3) * w;
    float *restrict r2 = ring + (size_t)((y + 2) % 3) * w;
    blur_row(in + (size_t)(y + 2) * iw, r2, w);
    float *restrict o = out + (size_t)y * w;
    for (int x = 0; x < w; x++)
      o[x] = (r0[x] + r1[x] + r2[x]) * third;
  }
}

static int run_c(void *arg) {
  blur_data *d = arg;
  blur_c(d->in, d->out, d->ring, d->s.w, d->s.h);
  return 0;
}

static void reference(const blur_data *d, double *ref) {
  int w = d->s.w, h = d->s.h;
  size_t iw = (size_t)w + 2;
  const float third = 1.0f / 3.0f;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double col = 0;
      for (int dy = 0; dy < 3; dy++) {
        const float *r = d->in + (size_t)(y + dy) * iw + x;
        col += ((double)r[0] + r[1] + r[2]) * third;
      }
      ref[(size_t)y * w + x] = col * third;
    }
}

/* "blur ... tuned": te_apply_best's kernel as variant te-tuned, alternating with Halide; with
   TE_BENCH_CPU also by CPU time against Halide and te's hand schedule. */
static void run_tuned(const bench_cfg *cfg, const char *wl, blur_data *d, const tb_args *hand,
                      int have_hand, hl_pipe *const hl[2], double bytes, const bench_ref *chk) {
  char twl[64];
  snprintf(twl, sizeof twl, "%s tuned", wl);
  blur_tuned tp = {d->s, cfg->tuned_log};
  unsigned only = TB_TILE;
  tb_kernel tk;
  if (!tb_build(twl, "blur_tuned", blur_define_tuned, &tp, &only, 1, NULL, &tk)) {
    bench_add_failed(twl, "te-tuned", 1, tk.note);
    return;
  }
  snprintf(tk.note, sizeof tk.note, "te_apply_best(%s)", cfg->tuned_log);
  tb_args targs = {&tk, {hand->args[0], hand->args[1]}};
  size_t nout = (size_t)d->s.w * d->s.h;
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    for (int round = 0; round < cfg->rounds; round++) {
      tb_set_threads(t);
      bench_run_variant(cfg, twl, "te-tuned", t, ROW_BYTES, bytes, tb_run, &targs, d->out, nout,
                        chk, tk.note);
      if (hl[t > 1])
        bench_run_variant(cfg, twl, "halide", t, ROW_BYTES, bytes, hl_run, hl[t > 1], d->out, nout,
                          chk, "the anchor, beside te-tuned");
    }
    char label[80];
    snprintf(label, sizeof label, "%s %dT", twl, t);
    tb_set_threads(t);
    if (hl[t > 1])
      dot_cpu_versus(label, "te-tuned", tb_run, &targs, "halide", hl_run, hl[t > 1]);
    if (have_hand)
      dot_cpu_versus(label, "te-tuned", tb_run, &targs, "te-hand", tb_run, (void *)hand);
  }
  tb_free(&tk);
}

void wl_blur(const bench_cfg *cfg) {
  blur_data d = {{4096, 4096}, NULL, NULL, NULL};
  if (cfg->quick)
    d.s = (blur_shape){1024, 1024};
  int w = d.s.w, h = d.s.h;
  char wl[48], err[512];
  snprintf(wl, sizeof wl, "blur %dx%d", w, h);
  fprintf(stderr, "%s\n", wl);
  char text[512];
  blur_text(&d.s, text, sizeof text);
  fprintf(stderr, "  %s for te-tune: %s\n", wl, text);
  size_t nin = (size_t)(w + 2) * (h + 2), nout = (size_t)w * h;
  d.in = bench_alloc_f32(nin);
  d.out = bench_alloc_f32(nout);
  d.ring = bench_alloc_f32((size_t)3 * w);
  double *ref = malloc(sizeof *ref * nout);
  if (!d.in || !d.out || !d.ring || !ref) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  bench_fill_uniform(d.in, nin, 0.0f, 1.0f, 5);
  reference(&d, ref);
  bench_ref chk = {NULL, ref, NULL, 1e-3, nout, 1e-5};
  double bytes = 4.0 * (double)(nin + nout);

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(0, ladder);
  tb_kernel k;
  int have_te = tb_build(wl, "blur", blur_inline_define, &d.s, ladder, nl, NULL, &k);
  if (have_te) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("compile blur", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s, note);
  }
  hl_pipe *hl[2] = {NULL, NULL};
  for (int par = 1; par >= 0; par--)
    if (!(hl[par] = hl_blur_new(w, h, d.in, d.out, par, err, sizeof err)))
      fprintf(stderr, "  %s: Halide failed: %s\n", wl, err);
  if (hl[1])
    bench_add_compile("compile blur", "halide", hl_compile_s(hl[1]),
                      "compile_jit, parallel schedule");

  DLTensor ti, to;
  int64_t si[8], so[8];
  tb_tensor(&ti, si, d.in, 2, (int64_t[]){h + 2, w + 2});
  tb_tensor(&to, so, d.out, 2, (int64_t[]){h, w});
  tb_args targs = {&k, {&ti, &to}};
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti_ = 0; ti_ < nthreads; ti_++) {
    int t = threads[ti_];
    for (int round = 0; round < cfg->rounds; round++) { /* harness.h: rounds */
      tb_run_te(cfg, wl, t, ROW_BYTES, bytes, have_te, &targs, d.out, nout, &chk);
      if (hl[t > 1])
        bench_run_variant(cfg, wl, "halide", t, ROW_BYTES, bytes, hl_run, hl[t > 1], d.out, nout,
                          &chk, t > 1 ? "parallel schedule" : "schedule without parallel");
      else
        bench_add_failed(wl, "halide", t, "pipeline did not compile");
      if (t == 1)
        bench_run_variant(cfg, wl, "c", 1, ROW_BYTES, bytes, run_c, &d, d.out, nout, &chk,
                          "ring of 3 rows, gcc -O3 -march=native");
    }
    if (have_te && hl[t > 1] && (t == 1 || (k.flags & TB_PAR))) {
      char label[64];
      snprintf(label, sizeof label, "%s %dT", wl, t);
      tb_set_threads(t);
      dot_cpu_versus(label, "te", tb_run, &targs, "halide", hl_run, hl[t > 1]);
    }
  }
  unsigned ladder_t[TB_MAX_LADDER];
  int nlt = tb_ladder(TB_EXTRA, ladder_t);
  char wlt[64];
  snprintf(wlt, sizeof wlt, "%s tiles", wl);
  tb_kernel kt;
  int have_tiles = tb_build(wlt, "blur_tiles", blur_define, &d.s, ladder_t, nlt,
                            (const char *const[2]){"compute_at", NULL}, &kt);
  tb_args ttargs = {&kt, {&ti, &to}};
  for (int ti_ = 0; ti_ < nthreads; ti_++) { /* Halide's form in te, beside Halide and te's */
    int t = threads[ti_];
    for (int round = 0; round < cfg->rounds; round++)
      tb_run_te(cfg, wlt, t, ROW_BYTES, bytes, have_tiles, &ttargs, d.out, nout, &chk);
    char label[96];
    snprintf(label, sizeof label, "%s %dT", wlt, t);
    tb_set_threads(t);
    if (have_tiles && hl[t > 1])
      dot_cpu_versus(label, "te-tiles", tb_run, &ttargs, "halide", hl_run, hl[t > 1]);
    if (have_tiles && have_te)
      dot_cpu_versus(label, "te-tiles", tb_run, &ttargs, "te-inline", tb_run, &targs);
  }
  if (have_tiles)
    tb_free(&kt);
  if (cfg->tuned_log)
    run_tuned(cfg, wl, &d, &targs, have_te, hl, bytes, &chk);
  hl_free(hl[0]);
  hl_free(hl[1]);
  if (have_te)
    tb_free(&k);
done:
  bench_free(d.in);
  bench_free(d.out);
  bench_free(d.ring);
  free(ref);
}
