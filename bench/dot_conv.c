/* dot_conv.c — the low-precision conv2d definition, schedule and reference (dot_conv.h). */
#include "dot_conv.h"

#include <math.h>
#include <string.h>

enum { DC_XR = 8, DC_OB = 32 };

const int dot_conv_rows[DC_CHECK_ROWS] = {0, DC_H / 2 - 1, DC_H - 1};

/* Schedules O through a local block OL (dot_conv.h); Dp is the padding stage. */
static void dc_schedule(te_schedule *s, te_tensor *O, te_tensor *Dp, const dot_conv *g,
                        unsigned flags) {
  te_tensor *OL = NULL;
  te_cache_write(s, O, TE_SCOPE_LOCAL, &OL);
  if (!OL)
    return;
  te_stage *os = te_stage_of(s, O), *ls = te_stage_of(s, OL), *ps = te_stage_of(s, Dp);
  te_iter *xo, *xi, *oo, *oi, *ov, *ol, *cg, *q, *oio, *oii;
  te_split(os, te_axis(os, 2), DC_XR, &xo, &xi);
  te_split(os, te_axis(os, 3), DC_OB, &oo, &oi);
  te_reorder(os, 6, (te_iter *const[]){te_axis(os, 0), te_axis(os, 1), xo, oo, xi, oi});
  te_compute_at(ls, os, oo);
  te_split(ls, te_axis(ls, 3), 16, &ov, &ol);
  te_split(ls, te_reduce_iter(ls, 2), g->group, &cg, &q);
  te_reorder(ls, 9,
             (te_iter *const[]){te_axis(ls, 0), te_axis(ls, 1), te_reduce_iter(ls, 0),
                                te_reduce_iter(ls, 1), cg, te_axis(ls, 2), ov, q, ol});
  te_split(os, oi, 16, &oio, &oii);
  if (flags & TB_VEC) {
    te_vectorize(ls, ol);
    te_vectorize(os, oii);
    te_vectorize(ps, te_axis(ps, 3));
  }
  if (flags & TB_UNROLL) {
    te_unroll(ls, te_axis(ls, 2));
    te_unroll(ls, ov);
  }
  if (flags & TB_EXTRA)
    te_tensorize(ls, q, g->instruction);
  if (flags & TB_PAR) {
    te_parallel(os, te_axis(os, 1));
    te_parallel(ps, te_axis(ps, 1));
  }
}

void dot_conv_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const dot_conv *g = params;
  te_expr *one = te_int(ctx, 1), *grp = te_int(ctx, g->group);
  te_tensor *D = te_placeholder(
      ctx, "D", g->data, 4,
      TE_EXPRS(te_int(ctx, DC_N), te_int(ctx, DC_H), te_int(ctx, DC_W), te_int(ctx, DC_C)));
  te_tensor *Kp = te_placeholder(ctx, "Kp", g->weight, 5,
                                 TE_EXPRS(te_int(ctx, 3), te_int(ctx, 3),
                                          te_int(ctx, DC_C / g->group), te_int(ctx, DC_K), grp));
  te_expr *n = te_var(ctx, "n"), *h = te_var(ctx, "h"), *w = te_var(ctx, "w"),
          *c = te_var(ctx, "c");
  te_expr *inside = te_and(te_and(te_ge(h, one), te_le(h, te_int(ctx, DC_H))),
                           te_and(te_ge(w, one), te_le(w, te_int(ctx, DC_W))));
  te_tensor *Dp = te_compute(
      ctx, "Dp", 4,
      TE_EXPRS(te_int(ctx, DC_N), te_int(ctx, DC_H + 2), te_int(ctx, DC_W + 2), te_int(ctx, DC_C)),
      TE_EXPRS(n, h, w, c),
      te_if_then_else(inside, TE_AT(D, n, te_sub(h, one), te_sub(w, one), c),
                      te_const(ctx, g->data, 0)));
  te_expr *y = te_var(ctx, "y"), *x = te_var(ctx, "x"), *o = te_var(ctx, "o"),
          *n2 = te_var(ctx, "n");
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), te_int(ctx, DC_C));
  te_expr *d = TE_AT(Dp, n2, te_add(y, ry), te_add(x, rx), rc);
  te_expr *k = TE_AT(Kp, ry, rx, te_floordiv(rc, grp), o, te_floormod(rc, grp));
  te_expr *body = te_mul(te_cast(g->acc, d), te_cast(g->acc, k));
  te_tensor *O = te_compute(
      ctx, "O", 4,
      TE_EXPRS(te_int(ctx, DC_N), te_int(ctx, DC_H), te_int(ctx, DC_W), te_int(ctx, DC_K)),
      TE_EXPRS(n2, y, x, o), TE_SUM(body, ry, rx, rc));
  out->ntensors = 3;
  out->tensors[0] = D, out->tensors[1] = Kp, out->tensors[2] = O;
  te_schedule *s = out->s = te_schedule_new(ctx, 1, &O);
  if (s && (flags & TB_TILE))
    dc_schedule(s, O, Dp, g, flags);
}

void dot_conv_pack(const void *hwio, void *kp, size_t elem, int group) {
  const unsigned char *src = hwio;
  unsigned char *dst = kp;
  for (int ry = 0; ry < 3; ry++) /* Kp[ry][rx][c / G][o][c % G] = W[ry][rx][c][o] */
    for (int rx = 0; rx < 3; rx++)
      for (int c = 0; c < DC_C; c++)
        for (int o = 0; o < DC_K; o++) {
          size_t to = (((size_t)ry * 3 + rx) * (DC_C / group) + c / group) * DC_K * group +
                      (size_t)o * group + c % group;
          size_t from = (((size_t)ry * 3 + rx) * DC_C + c) * DC_K + o;
          memcpy(dst + to * elem, src + from * elem, elem);
        }
}

void dot_conv_reference(const double *in, const double *w, double *ref, double *scale) {
  size_t per = (size_t)DC_W * DC_K;
  for (int q = 0; q < DC_CHECK_ROWS; q++) {
    int y = dot_conv_rows[q];
    for (int x = 0; x < DC_W; x++)
      for (int o = 0; o < DC_K; o++) {
        double acc = 0, mag = 0;
        for (int ry = 0; ry < 3; ry++)
          for (int rx = 0; rx < 3; rx++) {
            int iy = y + ry - 1, ix = x + rx - 1;
            if (iy < 0 || iy >= DC_H || ix < 0 || ix >= DC_W)
              continue;
            for (int c = 0; c < DC_C; c++) {
              double p = in[((size_t)iy * DC_W + ix) * DC_C + c] *
                         w[(((size_t)ry * 3 + rx) * DC_C + c) * DC_K + o];
              acc += p, mag += fabs(p);
            }
          }
        ref[q * per + (size_t)x * DC_K + o] = acc;
        if (scale)
          scale[q * per + (size_t)x * DC_K + o] = mag;
      }
  }
}
