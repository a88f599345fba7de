/* test_trace_replay.c — schedule traces round-trip: for schedules using every kind of primitive
 * (split, split_nparts, tile, fuse, reorder, vectorize, unroll, parallel, pragma, set_tail,
 * bind, compute_at, compute_inline, compute_root, cache_read, cache_write, rfactor), the trace
 * of a schedule replayed on a fresh schedule of the same computation
 *   - gives the same trace text and byte-identical te_lower_text output, in the same context
 *     and in a new context where the computation is built again (what a tuning log relies on);
 *   - gives kernels that compute the same numbers: the replayed kernel's output is bit-identical
 *     to the original's, and both match the default schedule's within tolerance.
 * Sizes are small and mostly not multiples of the split factors, so tails are exercised.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "te_test.h"

TestSuite(trace_replay, .init = tt_setup, .fini = tt_teardown, .timeout = 120);

/* A workload: its tensors (inputs, then the output, last) with constant shapes, and the
   intermediate tensors its schedule refers to. */
typedef struct wl {
  int nt;
  te_tensor *t[6];
  int ndim[6];
  int64_t shape[6][4];
  te_tensor *mid[4];
  int64_t reduce_len;
} wl;

typedef void (*wl_build)(te_ctx *, wl *);
typedef void (*wl_sched)(te_schedule *, wl *);

static te_tensor *out_of(wl *w) { return w->t[w->nt - 1]; }

/* A placeholder of constant shape, recorded as tensor number w->nt. */
static te_tensor *input(te_ctx *ctx, wl *w, const char *name, int ndim, const int64_t *shape) {
  te_expr *sh[4];
  for (int d = 0; d < ndim; d++)
    sh[d] = te_int(ctx, shape[d]);
  te_tensor *t = te_placeholder(ctx, name, TE_F32, ndim, sh);
  w->t[w->nt] = t;
  w->ndim[w->nt] = ndim;
  memcpy(w->shape[w->nt], shape, sizeof(int64_t) * (size_t)ndim);
  w->nt++;
  return t;
}

/* Records the output (last tensor). */
static void output(wl *w, te_tensor *t, int ndim, const int64_t *shape) {
  w->t[w->nt] = t;
  w->ndim[w->nt] = ndim;
  memcpy(w->shape[w->nt], shape, sizeof(int64_t) * (size_t)ndim);
  w->nt++;
}

static char *lower(te_schedule *s, wl *w) {
  char *ir = te_lower_text(s, w->nt, w->t, 0, NULL);
  cr_assert_not_null(ir, "te_lower_text failed: %s\n%s", te_last_error(tt_ctx), tt_note_text());
  return ir;
}

static char *trace_of(te_schedule *s) {
  char *t = te_schedule_trace(s);
  cr_assert_not_null(t);
  return t;
}

/* Runs the schedule's kernel on the workload's inputs (bufs) into got. */
static void run(te_schedule *s, wl *w, tt_buf *const bufs[], tt_buf *got) {
  tt_buf *b[6];
  for (int i = 0; i < w->nt; i++)
    b[i] = bufs[i];
  b[w->nt - 1] = got;
  tt_poison(got);
  te_module *m = tt_build(s, "k", w->nt, w->t, 0, NULL);
  tt_call(m, "k", w->nt, b, 0, NULL);
}

/* The round trip of one schedule; numbers checked unless compute is false (bound schedules). */
static void round_trip(const char *name, wl_build build, wl_sched sched, bool compute,
                       const char *want_trace) {
  wl w = {0};
  build(tt_ctx, &w);
  TT_NO_ERR(tt_ctx);
  te_schedule *s1 = tt_schedule1(out_of(&w));
  sched(s1, &w);
  TT_NO_ERR(tt_ctx);
  char *tr1 = trace_of(s1);
  tt_note("case %s, trace:\n%s", name, tr1);
  if (want_trace)
    cr_assert_str_eq(tr1, want_trace, "case %s: trace", name);
  char *ir1 = lower(s1, &w);

  /* replay in the same context */
  te_schedule *s2 = tt_schedule1(out_of(&w));
  TT_OK(te_schedule_replay(s2, tr1));
  char *tr2 = trace_of(s2), *ir2 = lower(s2, &w);
  cr_assert_str_eq(tr2, tr1, "case %s: the replayed schedule's trace differs", name);
  cr_assert_str_eq(ir2, ir1, "case %s: the replayed schedule's IR differs", name);

  /* replay on the computation built again in a new context */
  te_ctx *c3 = te_ctx_new();
  cr_assert_not_null(c3);
  wl w3 = {0};
  build(c3, &w3);
  te_schedule *s3 = te_schedule_new(c3, 1, (te_tensor *const[]){out_of(&w3)});
  cr_assert_not_null(s3, "%s", te_last_error(c3));
  cr_assert_eq(te_schedule_replay(s3, tr1), TE_OK, "case %s: replay in a new context: %s", name,
               te_last_error(c3));
  char *tr3 = te_schedule_trace(s3), *ir3 = te_lower_text(s3, w3.nt, w3.t, 0, NULL);
  cr_assert_not_null(ir3, "case %s: %s", name, te_last_error(c3));
  cr_assert_str_eq(tr3, tr1, "case %s: the trace differs in a new context", name);
  cr_assert_str_eq(ir3, ir1, "case %s: the IR differs in a new context", name);
  te_free(tr3);
  te_free(ir3);
  te_ctx_free(c3);

  if (compute) {
    tt_buf *bufs[6], *ref, *got1, *got2;
    for (int i = 0; i < w.nt; i++) {
      bufs[i] = tt_alloc(TE_F32, w.ndim[i], w.shape[i]);
      if (i < w.nt - 1)
        tt_fill(bufs[i], 1000 + (uint64_t)i);
    }
    int o = w.nt - 1;
    ref = bufs[o];
    got1 = tt_alloc(TE_F32, w.ndim[o], w.shape[o]);
    got2 = tt_alloc(TE_F32, w.ndim[o], w.shape[o]);
    run(tt_schedule1(out_of(&w)), &w, bufs, ref); /* the default schedule */
    run(s1, &w, bufs, got1);
    run(s2, &w, bufs, got2);
    tt_assert_close(got1, ref, w.reduce_len);
    cr_assert(memcmp(got1->dl.data, got2->dl.data, (size_t)got1->numel * sizeof(float)) == 0,
              "case %s: the replayed kernel's output differs from the original's", name);
  }
  te_free(tr1);
  te_free(ir1);
  te_free(tr2);
  te_free(ir2);
}

#define E TE_EXPRS
#define SH(...) ((const int64_t[]){__VA_ARGS__})

/* ---------------------------------------------------------------- workloads */

/* C[i, j] = sum_k A[i, k] * B[k, j], 67 x 45 x 33. */
static void build_matmul(te_ctx *ctx, wl *w) {
  te_tensor *a = input(ctx, w, "A", 2, SH(67, 33)), *b = input(ctx, w, "B", 2, SH(33, 45));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, 33));
  te_tensor *c = te_compute(ctx, "C", 2, E(te_int(ctx, 67), te_int(ctx, 45)), E(i, j),
                            TE_SUM(te_mul(TE_AT(a, i, k), TE_AT(b, k, j)), k));
  output(w, c, 2, SH(67, 45));
  w->reduce_len = 33;
}

/* C[i, j] = A[i, j] * B[i, j] + 1, 13 x 29. */
static void build_elementwise(te_ctx *ctx, wl *w) {
  te_tensor *a = input(ctx, w, "A", 2, SH(13, 29)), *b = input(ctx, w, "B", 2, SH(13, 29));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_tensor *c =
      te_compute(ctx, "C", 2, E(te_int(ctx, 13), te_int(ctx, 29)), E(i, j),
                 te_add(te_mul(TE_AT(a, i, j), TE_AT(b, i, j)), te_float(ctx, TE_F32, 1)));
  output(w, c, 2, SH(13, 29));
}

/* Halide's blur: bx[y, x] = (In[y, x] + In[y, x+1] + In[y, x+2]) / 3 over 32 x 70, then
   by[y, x] = (bx[y, x] + bx[y+1, x] + bx[y+2, x]) / 3 over 30 x 70. */
static void build_blur(te_ctx *ctx, wl *w) {
  te_tensor *in = input(ctx, w, "In", 2, SH(32, 72));
  te_expr *y = te_var(ctx, "y"), *x = te_var(ctx, "x");
  te_expr *one = te_int(ctx, 1), *two = te_int(ctx, 2), *three = te_float(ctx, TE_F32, 3);
  te_tensor *bx = te_compute(ctx, "blur_x", 2, E(te_int(ctx, 32), te_int(ctx, 70)), E(y, x),
                             te_div(te_add(te_add(TE_AT(in, y, x), TE_AT(in, y, te_add(x, one))),
                                           TE_AT(in, y, te_add(x, two))),
                                    three));
  te_tensor *by = te_compute(ctx, "blur_y", 2, E(te_int(ctx, 30), te_int(ctx, 70)), E(y, x),
                             te_div(te_add(te_add(TE_AT(bx, y, x), TE_AT(bx, te_add(y, one), x)),
                                           TE_AT(bx, te_add(y, two), x)),
                                    three));
  w->mid[0] = bx;
  output(w, by, 2, SH(30, 70));
}

/* GEMM with a packed B (TVM's tutorial, smaller): M = N = 48, K = 40, bn = 16,
   B_packed[n / 16, k, n % 16] = B[k, n]; C[m, n] = sum_k A[m, k] * B_packed[n / 16, k, n % 16]. */
static void build_gemm_packed(te_ctx *ctx, wl *w) {
  te_tensor *a = input(ctx, w, "A", 2, SH(48, 40)), *b = input(ctx, w, "B", 2, SH(40, 48));
  te_expr *bn = te_int(ctx, 16), *ek = te_int(ctx, 40);
  te_expr *x = te_var(ctx, "bigN"), *kk = te_var(ctx, "k"), *z = te_var(ctx, "littleN");
  te_tensor *p = te_compute(ctx, "B_packed", 3, E(te_int(ctx, 3), ek, bn), E(x, kk, z),
                            TE_AT(b, kk, te_add(te_mul(x, bn), z)));
  te_expr *m = te_var(ctx, "m"), *n = te_var(ctx, "n");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), ek);
  te_tensor *c = te_compute(
      ctx, "C", 2, E(te_int(ctx, 48), te_int(ctx, 48)), E(m, n),
      TE_SUM(te_mul(TE_AT(a, m, k), TE_AT(p, te_floordiv(n, bn), k, te_floormod(n, bn))), k));
  w->mid[0] = p;
  output(w, c, 2, SH(48, 48));
  w->reduce_len = 40;
}

/* B[i] = sum_k A[i, k], 5 x 1000. */
static void build_long_sum(te_ctx *ctx, wl *w) {
  te_tensor *a = input(ctx, w, "A", 2, SH(5, 1000));
  te_expr *i = te_var(ctx, "i");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, 1000));
  te_tensor *b = te_compute(ctx, "B", 1, E(te_int(ctx, 5)), E(i), TE_SUM(TE_AT(a, i, k), k));
  output(w, b, 1, SH(5));
  w->reduce_len = 1000;
}

/* te_op_softmax over x[6, 17]. */
static void build_softmax(te_ctx *ctx, wl *w) {
  te_tensor *x = input(ctx, w, "x", 2, SH(6, 17));
  te_tensor *sm = te_op_softmax(ctx, x, "sm");
  w->mid[0] = te_op_stage(sm, "sum"); /* readers before what they read (compute_at order) */
  w->mid[1] = te_op_stage(sm, "exp");
  w->mid[2] = te_op_stage(sm, "max");
  output(w, sm, 2, SH(6, 17));
  w->reduce_len = 17;
}

/* relu(conv2d NCHW(data [1, 3, 10, 9], kernel [4, 3, 3, 3], padding 1, stride 1)). */
static void build_conv_relu(te_ctx *ctx, wl *w) {
  te_tensor *d = input(ctx, w, "data", 4, SH(1, 3, 10, 9));
  te_tensor *k = input(ctx, w, "kern", 4, SH(4, 3, 3, 3));
  te_conv2d_params p = {.pad_h = 1, .pad_w = 1};
  te_tensor *conv = te_op_conv2d_nchw(ctx, d, k, &p, "conv");
  te_tensor *out = te_op_relu(ctx, conv, "out");
  w->mid[0] = conv;
  w->mid[1] = te_op_stage(conv, "pad");
  output(w, out, 4, SH(1, 4, 10, 9));
  w->reduce_len = 27;
}

/* P1 = A * 2, P2 = P1 + 1, C = P2 * P1, 1-D of 37. */
static void build_chain(te_ctx *ctx, wl *w) {
  te_tensor *a = input(ctx, w, "A", 1, SH(37));
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 37);
  te_tensor *p1 =
      te_compute(ctx, "P1", 1, E(n), E(i), te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2)));
  te_tensor *p2 =
      te_compute(ctx, "P2", 1, E(n), E(i), te_add(TE_AT(p1, i), te_float(ctx, TE_F32, 1)));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_mul(TE_AT(p2, i), TE_AT(p1, i)));
  w->mid[0] = p1;
  w->mid[1] = p2;
  output(w, c, 1, SH(37));
}

/* ---------------------------------------------------------------- schedules */

/* tile, split, reorder, vectorize, unroll, parallel, pragma. */
static void sched_loops(te_schedule *s, wl *w) {
  te_stage *st = tt_stage(s, out_of(w));
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 16, 8, &io, &jo, &ii, &ji));
  TT_OK(te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki));
  TT_OK(te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}));
  TT_OK(te_vectorize(st, ji));
  TT_OK(te_unroll(st, ki));
  TT_OK(te_parallel(st, io));
  TT_OK(te_pragma(st, jo, "unroll_max_step", 16));
  TT_OK(te_pragma(st, ko, "prefetch", 1));
}

/* fuse, split_nparts, split, parallel, vectorize. */
static void sched_fuse(te_schedule *s, wl *w) {
  te_stage *st = tt_stage(s, out_of(w));
  te_iter *f, *o, *in, *io, *ii;
  TT_OK(te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f));
  TT_OK(te_split_nparts(st, f, 4, &o, &in));
  TT_OK(te_parallel(st, o));
  TT_OK(te_split(st, in, 8, &io, &ii));
  TT_OK(te_vectorize(st, ii));
}

/* set_tail shift_inwards on a data axis, guard on another, split both, unroll. */
static void sched_tails(te_schedule *s, wl *w) {
  te_stage *st = tt_stage(s, out_of(w));
  te_iter *i = te_axis(st, 0), *j = te_axis(st, 1), *io, *ii, *jo, *ji;
  TT_OK(te_set_tail(st, j, TE_TAIL_SHIFT_INWARDS));
  TT_OK(te_set_tail(st, i, TE_TAIL_GUARD));
  TT_OK(te_split(st, j, 8, &jo, &ji));
  TT_OK(te_split(st, i, 5, &io, &ii));
  TT_OK(te_unroll(st, ji));
}

/* Halide's blur schedule: tile, compute_at, parallel, split + vectorize in both stages. */
static void sched_blur(te_schedule *s, wl *w) {
  te_stage *sy = tt_stage(s, out_of(w)), *sx = tt_stage(s, w->mid[0]);
  te_iter *yo, *xo, *yi, *xi, *a, *b;
  TT_OK(te_tile(sy, te_axis(sy, 0), te_axis(sy, 1), 8, 32, &yo, &xo, &yi, &xi));
  TT_OK(te_compute_at(sx, sy, xo));
  TT_OK(te_parallel(sy, yo));
  TT_OK(te_split(sy, xi, 8, &a, &b));
  TT_OK(te_vectorize(sy, b));
  TT_OK(te_split(sx, te_axis(sx, 1), 8, &a, &b));
  TT_OK(te_vectorize(sx, b));
}

/* TVM's GEMM steps 3-5: packing, cache_write + compute_at into the tile, parallel. */
static void sched_gemm(te_schedule *s, wl *w) {
  te_tensor *cc;
  TT_OK(te_cache_write(s, out_of(w), TE_SCOPE_LOCAL, &cc));
  te_stage *sc = tt_stage(s, out_of(w)), *scc = tt_stage(s, cc), *sp = tt_stage(s, w->mid[0]);
  te_iter *mo, *no, *mi, *ni, *ko, *ki;
  TT_OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 16, 16, &mo, &no, &mi, &ni));
  TT_OK(te_compute_at(scc, sc, no));
  te_iter *mc = te_axis(scc, 0), *nc = te_axis(scc, 1);
  TT_OK(te_split(scc, te_reduce_iter(scc, 0), 4, &ko, &ki));
  TT_OK(te_reorder(scc, 4, (te_iter *const[]){ko, mc, ki, nc}));
  TT_OK(te_vectorize(scc, nc));
  TT_OK(te_unroll(scc, ki));
  TT_OK(te_parallel(sc, mo));
  TT_OK(te_vectorize(sp, te_axis(sp, 2)));
  TT_OK(te_parallel(sp, te_axis(sp, 0)));
}

/* cache_read of both inputs into local buffers computed at the tile's k.o loop. */
static void sched_cache_read(te_schedule *s, wl *w) {
  te_stage *sc = tt_stage(s, out_of(w));
  te_tensor *al, *bl;
  TT_OK(te_cache_read(s, w->t[0], TE_SCOPE_LOCAL, 1, (te_stage *const[]){sc}, &al));
  TT_OK(te_cache_read(s, w->t[1], TE_SCOPE_GLOBAL, 1, (te_stage *const[]){sc}, &bl));
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  TT_OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 8, 12, &io, &jo, &ii, &ji));
  TT_OK(te_split(sc, te_reduce_iter(sc, 0), 10, &ko, &ki));
  TT_OK(te_reorder(sc, 6, (te_iter *const[]){io, jo, ko, ii, ji, ki}));
  TT_OK(te_compute_at(tt_stage(s, al), sc, ko));
  TT_OK(te_compute_at(tt_stage(s, bl), sc, ko));
}

/* rfactor on k.i at axis 1, the partial sums parallel over i and vectorized over k.i. */
static void sched_rfactor(te_schedule *s, wl *w) {
  te_stage *sb = tt_stage(s, out_of(w));
  te_iter *ko, *ki;
  te_tensor *rf;
  TT_OK(te_split(sb, te_reduce_iter(sb, 0), 16, &ko, &ki));
  TT_OK(te_rfactor(s, out_of(w), ki, 1, &rf));
  te_stage *srf = tt_stage(s, rf);
  te_iter *i = te_axis(srf, 0), *kin = te_axis(srf, 1), *kout = te_reduce_iter(srf, 0);
  TT_OK(te_reorder(srf, 3, (te_iter *const[]){i, kout, kin}));
  TT_OK(te_parallel(srf, i));
  TT_OK(te_vectorize(srf, kin));
}

/* rfactor on k.o at axis 0, the partial sums computed at the final sum's row loop. */
static void sched_rfactor_at(te_schedule *s, wl *w) {
  te_stage *sb = tt_stage(s, out_of(w));
  te_iter *ko, *ki;
  te_tensor *rf;
  TT_OK(te_split(sb, te_reduce_iter(sb, 0), 64, &ko, &ki));
  TT_OK(te_rfactor(s, out_of(w), ko, 0, &rf));
  sb = tt_stage(s, out_of(w));
  TT_OK(te_compute_at(tt_stage(s, rf), sb, te_axis(sb, 0)));
}

/* softmax: the three intermediate stages at the output's row loop; the output's columns
   split and unrolled. */
static void sched_softmax(te_schedule *s, wl *w) {
  te_stage *so = tt_stage(s, out_of(w));
  for (int i = 0; i < 3; i++)
    TT_OK(te_compute_at(tt_stage(s, w->mid[i]), so, te_axis(so, 0)));
  te_iter *o, *in;
  TT_OK(te_split(so, te_axis(so, 1), 4, &o, &in));
  TT_OK(te_unroll(so, in));
}

/* conv computed at relu's y loop, its padding at conv's y loop (nested compute_at). */
static void sched_conv(te_schedule *s, wl *w) {
  te_stage *so = tt_stage(s, out_of(w)), *sc = tt_stage(s, w->mid[0]);
  te_stage *sp = tt_stage(s, w->mid[1]);
  te_iter *yo, *yi;
  TT_OK(te_split(so, te_axis(so, 2), 4, &yo, &yi));
  TT_OK(te_compute_at(sc, so, yo));
  TT_OK(te_compute_at(sp, sc, te_axis(sc, 2)));
  TT_OK(
      te_reorder(sc, 3, (te_iter *const[]){te_reduce_iter(sc, 0), te_axis(sc, 2), te_axis(sc, 3)}));
}

/* compute_inline, compute_at, compute_root, compute_at again (the last placement wins). */
static void sched_placement(te_schedule *s, wl *w) {
  te_stage *sc = tt_stage(s, out_of(w)), *s1 = tt_stage(s, w->mid[0]), *s2 = tt_stage(s, w->mid[1]);
  te_iter *o, *in;
  TT_OK(te_split(sc, te_axis(sc, 0), 8, &o, &in));
  TT_OK(te_compute_inline(s2));
  TT_OK(te_compute_at(s1, sc, o));
  TT_OK(te_compute_root(s1));
  TT_OK(te_compute_at(s1, sc, in));
}

/* GPU-style binding (lowered, not built: the CPU cannot run it). */
static void sched_bind(te_schedule *s, wl *w) {
  te_stage *st = tt_stage(s, out_of(w));
  te_iter *f, *o, *in;
  TT_OK(te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f));
  TT_OK(te_split(st, f, 64, &o, &in));
  TT_OK(te_bind(st, o, TE_BLOCK_X));
  TT_OK(te_bind(st, in, TE_THREAD_X));
}

/* ---------------------------------------------------------------- tests */

Test(trace_replay, loops_and_annotations) {
  round_trip("loops", build_matmul, sched_loops, true,
             "tile C i j 16 8\n"
             "split C k 4\n"
             "reorder C i.o j.o k.o i.i k.i j.i\n"
             "vectorize C j.i\n"
             "unroll C k.i\n"
             "parallel C i.o\n"
             "pragma C j.o unroll_max_step 16\n"
             "pragma C k.o prefetch 1\n");
}

Test(trace_replay, fuse_split_nparts) {
  round_trip("fuse", build_elementwise, sched_fuse, true,
             "fuse C i j\n"
             "split_nparts C i.j.f 4\n"
             "parallel C i.j.f.o\n"
             "split C i.j.f.i 8\n"
             "vectorize C i.j.f.i.i\n");
}

Test(trace_replay, tails) {
  round_trip("tails", build_elementwise, sched_tails, true,
             "set_tail C j shift_inwards\n"
             "set_tail C i guard\n"
             "split C j 8\n"
             "split C i 5\n"
             "unroll C j.i\n");
}

Test(trace_replay, blur_compute_at) {
  round_trip("blur", build_blur, sched_blur, true,
             "tile blur_y y x 8 32\n"
             "compute_at blur_x blur_y x.o\n"
             "parallel blur_y y.o\n"
             "split blur_y x.i 8\n"
             "vectorize blur_y x.i.i\n"
             "split blur_x x 8\n"
             "vectorize blur_x x.i\n");
}

Test(trace_replay, gemm_cache_write) {
  round_trip("gemm", build_gemm_packed, sched_gemm, true,
             "cache_write C local\n"
             "tile C m n 16 16\n"
             "compute_at C_local C n.o\n"
             "split C_local k 4\n"
             "reorder C_local k.o m k.i n\n"
             "vectorize C_local n\n"
             "unroll C_local k.i\n"
             "parallel C m.o\n"
             "vectorize B_packed littleN\n"
             "parallel B_packed bigN\n");
}

Test(trace_replay, cache_read) {
  round_trip("cache_read", build_matmul, sched_cache_read, true,
             "cache_read A local C\n"
             "cache_read B global C\n"
             "tile C i j 8 12\n"
             "split C k 10\n"
             "reorder C i.o j.o k.o i.i j.i k.i\n"
             "compute_at A_local C k.o\n"
             "compute_at B_global C k.o\n");
}

Test(trace_replay, rfactor) {
  round_trip("rfactor", build_long_sum, sched_rfactor, true,
             "split B k 16\n"
             "rfactor B k.i 1\n"
             "reorder B_rf i k.o k.i\n"
             "parallel B_rf i\n"
             "vectorize B_rf k.i\n");
}

Test(trace_replay, rfactor_compute_at) {
  round_trip("rfactor_at", build_long_sum, sched_rfactor_at, true,
             "split B k 64\n"
             "rfactor B k.o 0\n"
             "compute_at B_rf B i\n");
}

Test(trace_replay, softmax_compute_at) {
  round_trip("softmax", build_softmax, sched_softmax, true, NULL);
}

Test(trace_replay, conv_nested_compute_at) {
  round_trip("conv", build_conv_relu, sched_conv, true, NULL);
}

Test(trace_replay, placement) {
  round_trip("placement", build_chain, sched_placement, true,
             "split C i 8\n"
             "compute_inline P2\n"
             "compute_at P1 C i.o\n"
             "compute_root P1\n"
             "compute_at P1 C i.i\n");
}

Test(trace_replay, bind) {
  round_trip("bind", build_elementwise, sched_bind, false,
             "fuse C i j\n"
             "split C i.j.f 64\n"
             "bind C i.j.f.o blockIdx.x\n"
             "bind C i.j.f.i threadIdx.x\n");
}

/* Replaying a trace twice on one schedule is refused at the first step whose iterator is gone
   (the trace describes a schedule from its default, not an edit of any schedule). */
Test(trace_replay, replay_twice_is_refused) {
  wl w = {0};
  build_matmul(tt_ctx, &w);
  te_schedule *s = tt_schedule1(out_of(&w));
  TT_OK(te_schedule_replay(s, "split C i 8\n"));
  cr_assert_eq(te_schedule_replay(s, "split C i 8\n"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "iter 'i' is not a leaf loop");
}
