/* test_ops_util.h — schedules shared by the operator tests (test_ops_*.c), header only.
 *
 * Every operator of te/ops.h runs under these schedules, each against the same plain C
 * reference (built once per test) with the output poisoned before each run:
 *   OPS_DEFAULT  nothing;
 *   OPS_TILE     on the output stage: tile the last two data-parallel axes by 3 x 5, split the
 *                first reduce axis by 2 and move its outer loop out past the inner tile rows
 *                (te_reorder), fuse the two outermost loops (factors do not divide: tails);
 *   OPS_INLINE   te_compute_inline of the operator's injective intermediate stages (by suffix),
 *                plus a split of the output's last axis by 4;
 *   OPS_AT       te_compute_at of an intermediate stage into a loop of its consumer.
 * A test lists which kinds apply; OPS_INLINE / OPS_AT are skipped where the operator has no
 * such stage.
 */
#ifndef TEST_OPS_UTIL_H
#define TEST_OPS_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../common/te_test.h"

enum { OPS_DEFAULT, OPS_TILE, OPS_INLINE, OPS_AT, OPS_NSCHED };

static inline const char *ops_sched_name(int k) {
  static const char *const n[] = {"default", "tile+split+reorder+fuse", "inline", "compute_at"};
  return k >= 0 && k < OPS_NSCHED ? n[k] : "?";
}

/* A compute_at placement: producer "<out>_<producer>" at the root axis `axis` of consumer
   ("<out>_<consumer>", or the output when consumer is NULL). */
typedef struct ops_at {
  const char *producer, *consumer;
  int axis;
} ops_at;

/* How to schedule one operator's stages. */
typedef struct ops_plan {
  const char *inline_stages[4]; /* suffixes, NULL-terminated */
  ops_at at[3];                 /* producer NULL ends */
  int nreduce;                  /* reduce axes of the output stage */
} ops_plan;

static inline te_stage *ops_stage(te_schedule *s, te_tensor *out, const char *suffix) {
  if (!suffix)
    return tt_stage(s, out);
  te_tensor *t = TT_NN(te_op_stage(out, suffix));
  return tt_stage(s, t);
}

/* The OPS_TILE schedule of a stage with ndim data-parallel axes and nreduce reduce axes. */
static inline void ops_tile(te_stage *st, int ndim, int nreduce) {
  te_iter *yo, *xo, *yi, *xi, *ro, *ri, *f;
  if (ndim >= 2) {
    TT_OK(te_tile(st, TT_NN(te_axis(st, ndim - 2)), TT_NN(te_axis(st, ndim - 1)), 3, 5, &yo, &xo,
                  &yi, &xi));
  } else if (ndim == 1) {
    TT_OK(te_split(st, TT_NN(te_axis(st, 0)), 3, &yo, &yi));
  }
  if (nreduce >= 1 && ndim >= 1) {
    TT_OK(te_split(st, TT_NN(te_reduce_iter(st, 0)), 2, &ro, &ri));
    TT_OK(te_reorder(st, 2, (te_iter *const[]){ro, yi}));
  }
  if (ndim >= 2) {
    TT_OK(te_fuse(st, TT_NN(te_leaf(st, 0)), TT_NN(te_leaf(st, 1)), &f));
  }
}

static inline void ops_apply(te_schedule *s, te_tensor *out, const ops_plan *p, int kind) {
  te_stage *st = tt_stage(s, out);
  int ndim = te_tensor_ndim(out);
  if (kind == OPS_TILE)
    ops_tile(st, ndim, p->nreduce);
  if (kind == OPS_INLINE) {
    for (int i = 0; i < 4 && p->inline_stages[i]; i++)
      TT_OK(te_compute_inline(ops_stage(s, out, p->inline_stages[i])));
    if (ndim >= 1) {
      te_iter *o, *in;
      TT_OK(te_split(st, TT_NN(te_axis(st, ndim - 1)), 4, &o, &in));
    }
  }
  if (kind == OPS_AT) {
    for (int i = 0; i < 3 && p->at[i].producer; i++) {
      te_stage *prod = ops_stage(s, out, p->at[i].producer);
      te_stage *cons = ops_stage(s, out, p->at[i].consumer);
      TT_OK(te_compute_at(prod, cons, TT_NN(te_axis(cons, p->at[i].axis))));
    }
  }
}

static inline bool ops_applies(const ops_plan *p, int kind) {
  if (kind == OPS_INLINE)
    return p->inline_stages[0] != NULL;
  if (kind == OPS_AT)
    return p->at[0].producer != NULL;
  return true;
}

/* Builds and runs out under every applicable schedule kind; the buffers are in the order of
   ts, got is the output's buffer. Returns the number of schedules run. */
static inline int ops_check(const char *what, te_tensor *out, const ops_plan *p, int nt,
                            te_tensor *const ts[], tt_buf *const bufs[], tt_buf *got,
                            const tt_buf *ref, int64_t reduce_len) {
  int n = 0;
  for (int kind = 0; kind < OPS_NSCHED; kind++) {
    if (!ops_applies(p, kind))
      continue;
    tt_note("%s, schedule %s", what, ops_sched_name(kind));
    te_schedule *s = tt_schedule1(out);
    ops_apply(s, out, p, kind);
    tt_check(s, nt, ts, bufs, 0, NULL, NULL, got, ref, reduce_len);
    n++;
  }
  tt_note("%s", "");
  return n;
}

/* Fills every buffer with seeded random non-zero values. */
static inline void ops_fill(int n, tt_buf *const bufs[], uint64_t seed) {
  for (int i = 0; i < n; i++)
    tt_fill(bufs[i], seed + (uint64_t)i);
}

/* A 2-D convolution case for the operators' _acc forms: batch, input channels, height, width,
   output channels, kernel height and width, and the strides, padding and dilation. */
typedef struct ops_conv_case {
  int64_t n, c, h, w, o, kh, kw;
  te_conv2d_params p;
} ops_conv_case;

/* Runs te_op_conv2d_nchw_acc (or _nhwc_acc) with inputs of types td and tk accumulating in acc
   under every schedule kind, against a plain convolution summed in double and stored once into
   acc (tt_set: rounded once for f32, exact for i32, whose sums here stay far below 2^53). The
   inputs are filled by fill with seeds seed and seed + 1. */
static inline void ops_check_conv_acc(te_dtype td, te_dtype tk, te_dtype acc, bool nhwc,
                                      const ops_conv_case *q, void (*fill)(tt_buf *, uint64_t),
                                      uint64_t seed) {
  const te_conv2d_params *p = &q->p;
  int64_t oh = (q->h + 2 * p->pad_h - p->dilation_h * (q->kh - 1) - 1) / p->stride_h + 1;
  int64_t ow = (q->w + 2 * p->pad_w - p->dilation_w * (q->kw - 1) - 1) / p->stride_w + 1;
  int64_t ds[4] = {q->n, q->c, q->h, q->w}, ks[4] = {q->o, q->c, q->kh, q->kw};
  int64_t os[4] = {q->n, q->o, oh, ow};
  if (nhwc) {
    int64_t d2[4] = {q->n, q->h, q->w, q->c}, k2[4] = {q->kh, q->kw, q->c, q->o},
            o2[4] = {q->n, oh, ow, q->o};
    memcpy(ds, d2, sizeof ds), memcpy(ks, k2, sizeof ks), memcpy(os, o2, sizeof os);
  }
  te_tensor *D = tt_placeholder("D", td, 4, ds), *K = tt_placeholder("K", tk, 4, ks);
  te_tensor *O = TT_NN(nhwc ? te_op_conv2d_nhwc_acc(tt_ctx, D, K, p, acc, "conv")
                            : te_op_conv2d_nchw_acc(tt_ctx, D, K, p, acc, "conv"));
  cr_assert(te_dtype_eq(te_tensor_dtype(O), acc));
  tt_buf *d = tt_alloc(td, 4, ds), *k = tt_alloc(tk, 4, ks);
  tt_buf *got = tt_alloc(acc, 4, os), *ref = tt_alloc(acc, 4, os);
  fill(d, seed), fill(k, seed + 1);
  for (int64_t n = 0; n < q->n; n++)
    for (int64_t o = 0; o < q->o; o++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t x = 0; x < ow; x++) {
          double s = 0;
          for (int64_t c = 0; c < q->c; c++)
            for (int64_t ry = 0; ry < q->kh; ry++)
              for (int64_t rx = 0; rx < q->kw; rx++) {
                int64_t iy = y * p->stride_h + ry * p->dilation_h - p->pad_h;
                int64_t ix = x * p->stride_w + rx * p->dilation_w - p->pad_w;
                if (iy < 0 || iy >= q->h || ix < 0 || ix >= q->w)
                  continue;
                int64_t di = nhwc ? ((n * q->h + iy) * q->w + ix) * q->c + c
                                  : ((n * q->c + c) * q->h + iy) * q->w + ix;
                int64_t ki = nhwc ? ((ry * q->kw + rx) * q->c + c) * q->o + o
                                  : ((o * q->c + c) * q->kh + ry) * q->kw + rx;
                s += tt_get(d, di) * tt_get(k, ki);
              }
          int64_t oi =
              nhwc ? ((n * oh + y) * ow + x) * q->o + o : ((n * q->o + o) * oh + y) * ow + x;
          tt_set(ref, oi, s);
        }
  ops_plan pl = {.inline_stages = {"pad"}, .at = {{"pad", NULL, 1}}, .nreduce = 3};
  ops_check(nhwc ? "conv2d_nhwc_acc" : "conv2d_nchw_acc", O, &pl, 3, TT_TENSORS(D, K, O),
            TT_BUFS(d, k, got), got, ref, q->c * q->kh * q->kw);
}

#endif
