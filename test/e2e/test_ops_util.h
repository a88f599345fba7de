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

#endif
