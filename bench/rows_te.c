/* rows_te.c — te building blocks shared by the row-wise workloads (softmax.c, layernorm.c):
 * per-row reductions written in one or two levels, and the schedules of element-wise, per-row
 * and partial-lane stages (rows_te.h).
 */
#include "rows_te.h"
#include "dot_time.h"
#include "report.h"

#include <stdio.h>

te_tensor *row_reduce(te_ctx *ctx, const char *name, const rows_shape *s, int lanes64, int kind,
                      elem_fn elem, void *user, te_tensor **partial) {
  te_expr *R = te_int(ctx, s->rows), *i = te_var(ctx, "i");
  *partial = NULL;
  if (lanes64 && s->cols % LANES == 0) {
    char pname[32];
    snprintf(pname, sizeof pname, "%s_p", name);
    te_expr *l = te_var(ctx, "l");
    te_expr *kk = te_reduce_axis(ctx, "kk", te_int(ctx, 0), te_int(ctx, s->cols / LANES));
    te_expr *v = elem(ctx, i, te_add(te_mul(kk, te_int(ctx, LANES)), l), user);
    *partial = te_compute(ctx, pname, 2, TE_EXPRS(R, te_int(ctx, LANES)), TE_EXPRS(i, l),
                          kind ? TE_SUM(v, kk) : te_max_r(v, 1, TE_EXPRS(kk)));
    te_expr *i2 = te_var(ctx, "i");
    te_expr *l2 = te_reduce_axis(ctx, "l", te_int(ctx, 0), te_int(ctx, LANES));
    te_expr *pv = TE_AT(*partial, i2, l2);
    return te_compute(ctx, name, 1, TE_EXPRS(R), TE_EXPRS(i2),
                      kind ? TE_SUM(pv, l2) : te_max_r(pv, 1, TE_EXPRS(l2)));
  }
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, s->cols));
  te_expr *v = elem(ctx, i, k, user);
  return te_compute(ctx, name, 1, TE_EXPRS(R), TE_EXPRS(i),
                    kind ? TE_SUM(v, k) : te_max_r(v, 1, TE_EXPRS(k)));
}

te_expr *elem_x(te_ctx *ctx, te_expr *i, te_expr *k, void *user) {
  (void)ctx;
  return TE_AT((te_tensor *)user, i, k);
}

void sched_elementwise(te_stage *st, unsigned flags, int parallel_rows) {
  te_iter *jo = NULL, *j1 = NULL, *ju = NULL, *jv = NULL;
  te_split(st, te_axis(st, 1), LANES, &jo, &j1);
  te_split(st, j1, 16, &ju, &jv);
  if (flags & TB_VEC)
    te_vectorize(st, jv);
  if (flags & TB_UNROLL)
    te_unroll(st, ju);
  if (parallel_rows && (flags & TB_PAR))
    te_parallel(st, te_axis(st, 0));
  /* streaming stores of the output rows: no read of each output line before it is written
     (layer norm 4096^2 on a Zen 3, te / the C: 1.07-1.29 plain, 1.47-2.01 streaming) */
  if (parallel_rows && (flags & TB_VEC))
    te_pragma(st, te_axis(st, 0), "nontemporal", 1);
}

void place_row_stage(te_stage *st, te_stage *consumer, unsigned flags) {
  if (flags & TB_EXTRA2)
    te_compute_at(st, consumer, te_axis(consumer, 0));
  else if (flags & TB_PAR)
    te_parallel(st, te_axis(st, 0));
}

void sched_partial(te_stage *p, te_stage *consumer, unsigned flags) {
  te_reorder(p, 2, (te_iter *const[]){te_reduce_iter(p, 0), te_axis(p, 1)});
  if (flags & TB_VEC)
    te_vectorize(p, te_axis(p, 1));
  place_row_stage(p, consumer, flags);
}

void rows_define_tuned(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  const rows_tuned *p = params;
  te_expr *C = te_int(ctx, p->s.cols);
  te_tensor *x = te_placeholder(ctx, "x", TE_F32, 2, TE_EXPRS(te_int(ctx, p->s.rows), C));
  te_tensor *g = NULL, *b = NULL, *y;
  if (p->layer_norm) {
    g = te_placeholder(ctx, "gamma", TE_F32, 1, TE_EXPRS(C));
    b = te_placeholder(ctx, "beta", TE_F32, 1, TE_EXPRS(C));
    y = te_op_layer_norm(ctx, x, g, b, 1e-5, NULL);
  } else {
    y = te_op_softmax(ctx, x, NULL);
  }
  out->s = y ? te_schedule_new(ctx, 1, &y) : NULL;
  out->ntensors = 0;
  out->tensors[out->ntensors++] = x;
  if (p->layer_norm) {
    out->tensors[out->ntensors++] = g;
    out->tensors[out->ntensors++] = b;
  }
  out->tensors[out->ntensors++] = y;
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  if (out->s && (!target || te_apply_best(out->s, p->log, target) != TE_OK))
    out->s = NULL; /* tb_build reports te's message */
}

void rows_run_hand(const bench_cfg *cfg, const char *wl, tb_args *targs, int have_te,
                   const char *anchor_name, const char *anchor_note, bench_fn anchor,
                   void *anchor_arg, int *threads, float *out, size_t nout, double bytes,
                   const bench_ref *chk) {
  int tl[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = tl[ti];
    for (int round = 0; round < cfg->rounds; round++) { /* harness.h: rounds */
      tb_run_te(cfg, wl, t, ROW_BYTES, bytes, have_te, targs, out, nout, chk);
      *threads = t;
      bench_run_variant(cfg, wl, anchor_name, t, ROW_BYTES, bytes, anchor, anchor_arg, out, nout,
                        chk, anchor_note);
    }
    if (have_te && (t == 1 || (targs->k->flags & TB_PAR))) {
      char label[64];
      snprintf(label, sizeof label, "%s %dT", wl, t);
      tb_set_threads(t);
      *threads = t;
      dot_cpu_versus(label, "te", tb_run, targs, anchor_name, anchor, anchor_arg);
    }
  }
}

void rows_run_tuned(const bench_cfg *cfg, const char *wl, const rows_tuned *p,
                    DLTensor *const args[], int nargs, const tb_kernel *hand, int have_hand,
                    const char *anchor_name, bench_fn anchor, void *anchor_arg, int *threads,
                    float *out, size_t nout, double bytes, const bench_ref *chk) {
  char twl[64];
  snprintf(twl, sizeof twl, "%s tuned", wl);
  unsigned only = TB_TILE;
  tb_kernel tk;
  if (!tb_build(twl, p->layer_norm ? "layernorm_tuned" : "softmax_tuned", rows_define_tuned, p,
                &only, 1, NULL, &tk)) {
    bench_add_failed(twl, "te-tuned", 1, tk.note);
    return;
  }
  snprintf(tk.note, sizeof tk.note, "te_apply_best(%s)", p->log);
  tb_args targs = {&tk, {NULL}}, hargs = {hand, {NULL}};
  for (int a = 0; a < nargs; a++)
    targs.args[a] = hargs.args[a] = args[a];
  int tl[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = tl[ti];
    for (int round = 0; round < cfg->rounds; round++) {
      tb_set_threads(t);
      bench_run_variant(cfg, twl, "te-tuned", t, ROW_BYTES, bytes, tb_run, &targs, out, nout, chk,
                        tk.note);
      *threads = t;
      bench_run_variant(cfg, twl, anchor_name, t, ROW_BYTES, bytes, anchor, anchor_arg, out, nout,
                        chk, "the anchor, beside te-tuned");
    }
    char label[80];
    snprintf(label, sizeof label, "%s %dT", twl, t);
    tb_set_threads(t);
    *threads = t;
    dot_cpu_versus(label, "te-tuned", tb_run, &targs, anchor_name, anchor, anchor_arg);
    if (have_hand) {
      tb_set_threads(t);
      dot_cpu_versus(label, "te-tuned", tb_run, &targs, "te-hand", tb_run, &hargs);
    }
  }
  tb_free(&tk);
}
