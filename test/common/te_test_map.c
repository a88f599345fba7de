/* te_test_map.c — generic schedules for data-parallel stages and a harness for element-wise
 * kernels, so each e2e kernel runs under several schedules (tails, fused and reordered loops)
 * with one reference.
 */
#include "te_test.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>

static char note[512];

void tt_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(note, sizeof note, fmt, ap);
  va_end(ap);
}

const char *tt_note_text(void) { return note; }

const char *tt_sched_name(int kind) {
  static const char *names[] = {"default", "split+reorder", "fuse+split", "split_nparts"};
  return kind >= 0 && kind < TT_S_COUNT ? names[kind] : "?";
}

static void sched_split(te_stage *st, int ndim) {
  te_iter *o, *in, *oo, *oi;
  if (ndim == 1) {
    TT_OK(te_split(st, TT_NN(te_axis(st, 0)), 5, &o, &in));
    TT_OK(te_split(st, o, 3, &oo, &oi));
    TT_OK(te_reorder(st, 2, (te_iter *const[]){in, oo}));
    return;
  }
  TT_OK(te_split(st, TT_NN(te_axis(st, ndim - 1)), 5, &o, &in));
  TT_OK(te_split(st, TT_NN(te_axis(st, 0)), 3, &oo, &oi));
  TT_OK(te_reorder(st, 2, (te_iter *const[]){in, oo}));
}

static void sched_fuse(te_stage *st, int ndim) {
  te_iter *f, *o, *in, *oo, *oi;
  if (ndim == 1) {
    TT_OK(te_split(st, TT_NN(te_axis(st, 0)), 4, &o, &in));
    TT_OK(te_split(st, o, 2, &oo, &oi));
    return;
  }
  TT_OK(te_fuse(st, TT_NN(te_axis(st, 0)), TT_NN(te_axis(st, 1)), &f));
  TT_OK(te_split(st, f, 7, &o, &in));
}

static void sched_nparts(te_stage *st) {
  te_iter *o, *in, *io, *ii;
  TT_OK(te_split_nparts(st, TT_NN(te_axis(st, 0)), 3, &o, &in));
  TT_OK(te_split(st, in, 2, &io, &ii));
}

void tt_apply_sched(te_schedule *s, te_tensor *out, int kind) {
  te_stage *st = tt_stage(s, out);
  int ndim = te_tensor_ndim(out);
  if (ndim == 0 || kind == TT_S_DEFAULT)
    return;
  switch (kind) {
  case TT_S_SPLIT:
    sched_split(st, ndim);
    break;
  case TT_S_FUSE:
    sched_fuse(st, ndim);
    break;
  case TT_S_NPARTS:
    sched_nparts(st);
    break;
  default:
    cr_assert_fail("tt_apply_sched: unknown kind %d", kind);
  }
}

static te_expr *load(te_tensor *t, int ndim, te_expr *const vars[]) {
  return TT_NN(te_at(t, ndim, vars));
}

void tt_run_map(const tt_map *m, int ndim, const int64_t shape[], int kind) {
  tt_note("map '%s', rank %d (first extent %lld), schedule %s", m->name, ndim,
          ndim ? (long long)shape[0] : 0LL, tt_sched_name(kind));
  static const char *in_names[] = {"A", "B", "C", "D"};
  static const char *var_names[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  te_tensor *ins[4], *all[5];
  te_expr *vars[TE_MAX_DIMS], *loads[4], *sh[TE_MAX_DIMS];
  tt_buf *bin[4], *ball[5];
  for (int d = 0; d < ndim; d++)
    vars[d] = te_var(tt_ctx, var_names[d]);
  for (int k = 0; k < m->nin; k++) {
    ins[k] = all[k] = tt_placeholder(in_names[k], m->in_dtype[k], ndim, shape);
    loads[k] = load(ins[k], ndim, vars);
  }
  tt_shape_exprs(ndim, shape, sh);
  te_expr *body = TT_NN(m->body(loads));
  te_tensor *out = TT_NN(te_compute(tt_ctx, "Out", ndim, sh, vars, body));
  all[m->nin] = out;
  if (m->out_dtype.bits) {
    char a[32], b[32];
    cr_assert(te_dtype_eq(te_tensor_dtype(out), m->out_dtype), "[%s] output dtype %s, expected %s",
              tt_note_text(), te_dtype_str(te_tensor_dtype(out), a, sizeof a),
              te_dtype_str(m->out_dtype, b, sizeof b));
  }
  te_schedule *s = tt_schedule1(out);
  tt_apply_sched(s, out, kind);
  te_module *mod = tt_build(s, "map", m->nin + 1, all, 0, NULL);

  for (int k = 0; k < m->nin; k++) {
    bin[k] = ball[k] = tt_alloc(m->in_dtype[k], ndim, shape);
    if (m->lo[k] == m->hi[k])
      tt_fill(bin[k], 100 + (uint64_t)k);
    else
      tt_fill_range(bin[k], 100 + (uint64_t)k, m->lo[k], m->hi[k]);
  }
  tt_buf *got = ball[m->nin] = tt_alloc(te_tensor_dtype(out), ndim, shape);
  tt_buf *ref = tt_alloc(te_tensor_dtype(out), ndim, shape);
  for (int64_t i = 0; i < ref->numel; i++)
    m->ref(bin, ref, i);
  tt_poison(got);
  tt_call(mod, "map", m->nin + 1, ball, 0, NULL);
  tt_assert_close(got, ref, 1);
}

void tt_run_map_all(const tt_map *m) {
  for (int kind = 0; kind < TT_S_COUNT; kind++) {
    tt_run_map(m, 2, TT_SHAPE(7, 13), kind);
    tt_run_map(m, 1, TT_SHAPE(37), kind);
  }
  tt_run_map(m, 2, TT_SHAPE(1, 1), TT_S_DEFAULT);
  tt_run_map(m, 2, TT_SHAPE(1, 1), TT_S_SPLIT);
  tt_note("%s", "");
}

void tt_check(te_schedule *s, int nt, te_tensor *const ts[], tt_buf *const bufs[], int ns,
              te_expr *const scalars[], const void *const values[], tt_buf *got, const tt_buf *ref,
              int64_t reduce_len) {
  te_module *mod = tt_build(s, "kern", nt, ts, ns, scalars);
  tt_poison(got);
  tt_call(mod, "kern", nt, bufs, ns, values);
  tt_assert_close(got, ref, reduce_len);
}

void tt_check_all(te_tensor *out, int nt, te_tensor *const ts[], tt_buf *const bufs[], tt_buf *got,
                  const tt_buf *ref, int64_t reduce_len) {
  for (int kind = 0; kind < TT_S_COUNT; kind++) {
    tt_note("kernel '%s', schedule %s", te_tensor_name(out), tt_sched_name(kind));
    te_schedule *s = tt_schedule1(out);
    tt_apply_sched(s, out, kind);
    tt_check(s, nt, ts, bufs, 0, NULL, NULL, got, ref, reduce_len);
  }
  tt_note("%s", "");
}
