/* test_scan.c — scans (te_scan), against plain C on random non-zero inputs with outputs
 * poisoned, at odd shapes:
 *   a cumulative sum down the rows;
 *   a first-order IIR blur along the rows, then down the columns (two chained scans);
 *   a second-order recurrence (two initial steps, reads t - 1 and t - 2);
 *   a simple RNN cell unrolled over time: h[t] = tanh(W h[t - 1] + U x[t]), whose lifted
 *   W h[t - 1] reads the scan (a stage in a cycle with it, computed inside its time loop).
 * Each under the default schedule and legal schedules of the other axes (split, vectorize,
 * parallel, reorder outside the scan axis, compute_at into a consumer) and of the scan axis
 * (split, unroll); the traces replay.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(scan, .init = tt_setup, .fini = tt_teardown);

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

/* The trace of s replays on a fresh schedule of out to the same trace. */
static void check_replay(te_schedule *s, te_tensor *out) {
  char *trace = TT_NN(te_schedule_trace(s));
  te_schedule *t = tt_schedule1(out);
  TT_OK(te_schedule_replay(t, trace));
  char *again = TT_NN(te_schedule_trace(t));
  cr_assert_str_eq(again, trace);
  te_free(trace);
  te_free(again);
}

/* ---------------------------------------------------------------- cumulative sum */

enum { T = 17, N = 13 };

Test(scan, cumsum) {
  te_expr *t = te_var(tt_ctx, "t"), *i = te_var(tt_ctx, "i");
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(T, N));
  te_tensor *S = tt_placeholder("S", TE_F32, 2, TT_SHAPE(T, N));
  te_expr *update = te_add(tt_at2(S, te_sub(t, I(1)), i), tt_at2(X, t, i));
  te_tensor *C = TT_NN(te_scan(tt_ctx, "C", S, 0, 1, TE_EXPRS(t, i), tt_at2(X, t, i), update));
  /* a consumer, so that the scan can also be computed at its loops */
  te_expr *a = te_var(tt_ctx, "a"), *b = te_var(tt_ctx, "b");
  te_tensor *Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(I(T), I(N)), TE_EXPRS(a, b),
                                  te_mul(tt_at2(C, a, b), te_float(tt_ctx, TE_F32, 2))));
  tt_buf *x = TT_ALLOC(TE_F32, T, N), *got = TT_ALLOC(TE_F32, T, N), *ref = TT_ALLOC(TE_F32, T, N);
  tt_fill(x, 5);
  for (int q = 0; q < N; q++) {
    double acc = 0;
    for (int p = 0; p < T; p++)
      tt_set(ref, p * N + q, 2 * (acc += tt_get(x, p * N + q)));
  }
  static const char *names[] = {"default",
                                "i split by 4, i.i vectorized",
                                "i outside t, parallel",
                                "t split by 5, t.i unrolled",
                                "C at Y's row loop b (C whole along t)",
                                "C at Y's b, i split by 8 vectorized"};
  for (int kind = 0; kind < 6; kind++) {
    tt_note("cumsum %dx%d, schedule %s", T, N, names[kind]);
    te_schedule *s = tt_schedule1(Y);
    te_stage *c = tt_stage(s, C), *y = tt_stage(s, Y);
    te_iter *o, *in;
    switch (kind) {
    case 1:
      TT_OK(te_split(c, te_axis(c, 1), 4, &o, &in));
      TT_OK(te_vectorize(c, in));
      break;
    case 2:
      TT_OK(te_reorder(c, 2, (te_iter *const[]){te_axis(c, 1), te_axis(c, 0)}));
      TT_OK(te_parallel(c, te_axis(c, 1)));
      break;
    case 3:
      TT_OK(te_split(c, te_axis(c, 0), 5, &o, &in));
      TT_OK(te_unroll(c, in));
      break;
    case 4:
      TT_OK(te_compute_at(c, y, te_axis(y, 1)));
      break;
    case 5:
      TT_OK(te_compute_at(c, y, te_axis(y, 0)));
      TT_OK(te_reorder(c, 2, (te_iter *const[]){te_axis(c, 1), te_axis(c, 0)}));
      TT_OK(te_split(c, te_axis(c, 1), 8, &o, &in));
      TT_OK(te_reorder(c, 3, (te_iter *const[]){o, te_axis(c, 0), in}));
      TT_OK(te_vectorize(c, in));
      break;
    }
    tt_check(s, 2, TT_TENSORS(X, Y), TT_BUFS(x, got), 0, NULL, NULL, got, ref, T);
    check_replay(s, Y);
  }
}

/* ---------------------------------------------------------------- IIR blur, rows then columns */

enum { H = 11, W = 19 };
static const float KA = 0.25f; /* y[t] = a x[t] + (1 - a) y[t - 1] */

Test(scan, iir_rows_and_columns) {
  te_expr *i = te_var(tt_ctx, "i"), *t = te_var(tt_ctx, "t");
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(H, W));
  te_expr *a = te_float(tt_ctx, TE_F32, KA), *na = te_float(tt_ctx, TE_F32, 1 - KA);
  /* along the rows: the scan axis is 1 */
  te_tensor *Rs = tt_placeholder("R", TE_F32, 2, TT_SHAPE(H, W));
  te_expr *ru = te_add(te_mul(a, tt_at2(X, i, t)), te_mul(na, tt_at2(Rs, i, te_sub(t, I(1)))));
  te_tensor *R = TT_NN(te_scan(tt_ctx, "R", Rs, 1, 1, TE_EXPRS(i, t), tt_at2(X, i, t), ru));
  /* down the columns: the scan axis is 0 */
  te_expr *u = te_var(tt_ctx, "u"), *j = te_var(tt_ctx, "j");
  te_tensor *Vs = tt_placeholder("V", TE_F32, 2, TT_SHAPE(H, W));
  te_expr *vu = te_add(te_mul(a, tt_at2(R, u, j)), te_mul(na, tt_at2(Vs, te_sub(u, I(1)), j)));
  te_tensor *V = TT_NN(te_scan(tt_ctx, "V", Vs, 0, 1, TE_EXPRS(u, j), tt_at2(R, u, j), vu));
  tt_buf *x = TT_ALLOC(TE_F32, H, W), *got = TT_ALLOC(TE_F32, H, W), *ref = TT_ALLOC(TE_F32, H, W);
  tt_buf *r = TT_ALLOC(TE_F32, H, W);
  tt_fill(x, 9);
  for (int p = 0; p < H; p++)
    for (int q = 0; q < W; q++)
      tt_set(r, p * W + q,
             q == 0 ? tt_get(x, p * W)
                    : KA * tt_get(x, p * W + q) + (1 - KA) * tt_get(r, p * W + q - 1));
  for (int p = 0; p < H; p++)
    for (int q = 0; q < W; q++)
      tt_set(ref, p * W + q,
             p == 0 ? tt_get(r, q)
                    : KA * tt_get(r, p * W + q) + (1 - KA) * tt_get(ref, (p - 1) * W + q));
  static const char *names[] = {"default", "R's rows parallel, V's j split by 8 vectorized",
                                "R at V's row loop u (one row of R per step)",
                                "V's j outside u, split by 4 and parallel; R's i split by 3"};
  for (int kind = 0; kind < 4; kind++) {
    tt_note("IIR blur %dx%d, schedule %s", H, W, names[kind]);
    te_schedule *s = tt_schedule1(V);
    te_stage *rs = tt_stage(s, R), *vs = tt_stage(s, V);
    te_iter *o, *in;
    switch (kind) {
    case 1:
      TT_OK(te_parallel(rs, te_axis(rs, 0)));
      TT_OK(te_split(vs, te_axis(vs, 1), 8, &o, &in));
      TT_OK(te_vectorize(vs, in));
      break;
    case 2:
      TT_OK(te_compute_at(rs, vs, te_axis(vs, 0)));
      break;
    case 3:
      TT_OK(te_reorder(vs, 2, (te_iter *const[]){te_axis(vs, 1), te_axis(vs, 0)}));
      TT_OK(te_split(vs, te_axis(vs, 1), 4, &o, &in));
      TT_OK(te_parallel(vs, o));
      TT_OK(te_split(rs, te_axis(rs, 0), 3, &o, &in));
      break;
    }
    tt_check(s, 2, TT_TENSORS(X, V), TT_BUFS(x, got), 0, NULL, NULL, got, ref, W + H);
    check_replay(s, V);
  }
}

/* ---------------------------------------------------------------- second order */

/* F[t, i] = t < 2 ? X[t, i] : 0.5 F[t - 1, i] - 0.25 F[t - 2, i] + X[t, i] */
Test(scan, second_order) {
  te_expr *t = te_var(tt_ctx, "t"), *i = te_var(tt_ctx, "i");
  te_tensor *X = tt_placeholder("X", TE_F64, 2, TT_SHAPE(T, N));
  te_tensor *Fs = tt_placeholder("F", TE_F64, 2, TT_SHAPE(T, N));
  te_expr *u =
      te_add(te_sub(te_mul(te_float(tt_ctx, TE_F64, 0.5), tt_at2(Fs, te_sub(t, I(1)), i)),
                    te_mul(te_float(tt_ctx, TE_F64, 0.25), tt_at2(Fs, te_sub(t, I(2)), i))),
             tt_at2(X, t, i));
  te_tensor *F = TT_NN(te_scan(tt_ctx, "F", Fs, 0, 2, TE_EXPRS(t, i), tt_at2(X, t, i), u));
  tt_buf *x = TT_ALLOC(TE_F64, T, N), *got = TT_ALLOC(TE_F64, T, N), *ref = TT_ALLOC(TE_F64, T, N);
  tt_fill(x, 3);
  for (int p = 0; p < T; p++)
    for (int q = 0; q < N; q++)
      tt_set(ref, p * N + q,
             p < 2 ? tt_get(x, p * N + q)
                   : 0.5 * tt_get(ref, (p - 1) * N + q) - 0.25 * tt_get(ref, (p - 2) * N + q) +
                         tt_get(x, p * N + q));
  for (int kind = 0; kind < 2; kind++) {
    tt_note("second-order recurrence, schedule %s", kind ? "i split by 4 vectorized" : "default");
    te_schedule *s = tt_schedule1(F);
    te_stage *fs = tt_stage(s, F);
    te_iter *o, *in;
    if (kind) {
      TT_OK(te_split(fs, te_axis(fs, 1), 4, &o, &in));
      TT_OK(te_vectorize(fs, in));
    }
    tt_check(s, 2, TT_TENSORS(X, F), TT_BUFS(x, got), 0, NULL, NULL, got, ref, T);
  }
}

/* ---------------------------------------------------------------- at a vectorized loop */

/* S[t, i] = t < 1 ? X[t, i] : 0.5 S[t - 1, i] + 0.25 S[t - 1, min(i + 1, N - 1)] + X[t, i],
   computed at the vectorized row loop a of its consumer Y = 2 S (each lane its own copy of S)
   with i split by 5: the steady state drops the clamp min(i + 1, N - 1), the tail (i in
   [10, 13)) needs it. Vectorize once gave the tail the steady state's widened reads (a memo
   shared by both copies of the body), which read past the end of a row at i = 12 (found by the
   property test at run seed 412915428). */
Test(scan, at_a_vectorized_loop_with_a_split_tail) {
  te_expr *t = te_var(tt_ctx, "t"), *i = te_var(tt_ctx, "i");
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(T, N));
  te_tensor *St = tt_placeholder("S", TE_F32, 2, TT_SHAPE(T, N));
  te_expr *prev = te_sub(t, I(1));
  te_expr *right = tt_at2(St, prev, te_min(te_add(i, I(1)), I(N - 1)));
  te_expr *update = te_add(te_add(te_mul(te_float(tt_ctx, TE_F32, 0.5), tt_at2(St, prev, i)),
                                  te_mul(te_float(tt_ctx, TE_F32, 0.25), right)),
                           tt_at2(X, t, i));
  te_tensor *S = TT_NN(te_scan(tt_ctx, "S", St, 0, 1, TE_EXPRS(t, i), tt_at2(X, t, i), update));
  te_expr *a = te_var(tt_ctx, "a"), *b = te_var(tt_ctx, "b");
  te_tensor *Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(I(T), I(N)), TE_EXPRS(a, b),
                                  te_mul(tt_at2(S, a, b), te_float(tt_ctx, TE_F32, 2))));
  tt_buf *x = TT_ALLOC(TE_F32, T, N), *got = TT_ALLOC(TE_F32, T, N), *ref = TT_ALLOC(TE_F32, T, N);
  tt_buf *st = TT_ALLOC(TE_F64, T, N);
  tt_fill(x, 11);
  for (int p = 0; p < T; p++)
    for (int q = 0; q < N; q++) {
      double v = tt_get(x, p * N + q);
      if (p > 0)
        v += 0.5 * tt_get(st, (p - 1) * N + q) +
             0.25 * tt_get(st, (p - 1) * N + (q + 1 < N ? q + 1 : N - 1));
      tt_set(st, p * N + q, v);
      tt_set(ref, p * N + q, 2 * v);
    }
  for (int kind = 0; kind < 2; kind++) {
    tt_note("scan at Y's vectorized a, i split by 5%s", kind ? ", i.i unrolled" : "");
    te_schedule *s = tt_schedule1(Y);
    te_stage *c = tt_stage(s, S), *y = tt_stage(s, Y);
    te_iter *o, *in;
    TT_OK(te_vectorize(y, te_axis(y, 0)));
    TT_OK(te_split(c, te_axis(c, 1), 5, &o, &in));
    if (kind)
      TT_OK(te_unroll(c, in));
    TT_OK(te_compute_at(c, y, te_axis(y, 0)));
    tt_check(s, 2, TT_TENSORS(X, Y), TT_BUFS(x, got), 0, NULL, NULL, got, ref, T);
    check_replay(s, Y);
  }
}

/* ---------------------------------------------------------------- RNN cell */

enum { STEPS = 9, HID = 13, IN = 7 };

typedef struct rnn {
  te_tensor *X, *Wt, *U, *H0, *Hs;
  tt_buf *x, *w, *u, *h0, *got, *ref;
} rnn;

/* h[t, i] = t < 1 ? h0[i] : tanh(sum_j W[i, j] h[t - 1, j] + sum_k U[i, k] x[t, k]) */
static void rnn_make(rnn *r) {
  te_expr *t = te_var(tt_ctx, "t"), *i = te_var(tt_ctx, "i");
  te_expr *j = te_reduce_axis(tt_ctx, "j", I(0), I(HID));
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(IN));
  r->X = tt_placeholder("x", TE_F32, 2, TT_SHAPE(STEPS, IN));
  r->Wt = tt_placeholder("W", TE_F32, 2, TT_SHAPE(HID, HID));
  r->U = tt_placeholder("U", TE_F32, 2, TT_SHAPE(HID, IN));
  r->H0 = tt_placeholder("h0", TE_F32, 1, TT_SHAPE(HID));
  te_tensor *state = tt_placeholder("h", TE_F32, 2, TT_SHAPE(STEPS, HID));
  te_expr *wh = TE_SUM(te_mul(tt_at2(r->Wt, i, j), tt_at2(state, te_sub(t, I(1)), j)), j);
  te_expr *ux = TE_SUM(te_mul(tt_at2(r->U, i, k), tt_at2(r->X, t, k)), k);
  te_expr *upd = te_call(tt_ctx, "tanh", 1, TE_EXPRS(te_add(wh, ux)));
  r->Hs = TT_NN(te_scan(tt_ctx, "h", state, 0, 1, TE_EXPRS(t, i), tt_at1(r->H0, i), upd));
  r->x = TT_ALLOC(TE_F32, STEPS, IN);
  r->w = TT_ALLOC(TE_F32, HID, HID);
  r->u = TT_ALLOC(TE_F32, HID, IN);
  r->h0 = TT_ALLOC(TE_F32, HID);
  r->got = TT_ALLOC(TE_F32, STEPS, HID);
  r->ref = TT_ALLOC(TE_F32, STEPS, HID);
  tt_fill_range(r->x, 31, -1, 1);
  tt_fill_range(r->w, 32, -0.3, 0.3);
  tt_fill_range(r->u, 33, -0.5, 0.5);
  tt_fill_range(r->h0, 34, -1, 1);
  for (int q = 0; q < HID; q++)
    tt_set(r->ref, q, tt_get(r->h0, q));
  for (int p = 1; p < STEPS; p++)
    for (int q = 0; q < HID; q++) {
      double acc = 0;
      for (int c = 0; c < HID; c++)
        acc += tt_get(r->w, q * HID + c) * tt_get(r->ref, (p - 1) * HID + c);
      for (int c = 0; c < IN; c++)
        acc += tt_get(r->u, q * IN + c) * tt_get(r->x, p * IN + c);
      tt_set(r->ref, p * HID + q, tanh(acc));
    }
}

Test(scan, rnn_cell) {
  rnn r;
  rnn_make(&r);
  cr_assert_eq(te_lifted_reduction_count(r.Hs), 2);
  static const char *names[] = {"default (both sums inside h's loops)",
                                "U x for every step at root, before the recurrence",
                                "W h[t - 1] for a whole step at h's t, its i vectorized by 4",
                                "h's i split by 4 and vectorized, h_red1 at root parallel"};
  for (int kind = 0; kind < 4; kind++) {
    tt_note("RNN %d steps, %d hidden, %d inputs, schedule %s", STEPS, HID, IN, names[kind]);
    te_schedule *s = tt_schedule1(r.Hs);
    te_stage *h = tt_stage(s, r.Hs);
    te_stage *wh = TT_NN(te_lifted_reduction_stage(s, r.Hs, 0));
    te_stage *ux = TT_NN(te_lifted_reduction_stage(s, r.Hs, 1));
    te_iter *o, *in;
    switch (kind) {
    case 1:
      TT_OK(te_compute_root(ux));
      break;
    case 2:
      TT_OK(te_compute_at(wh, h, te_axis(h, 0)));
      TT_OK(te_reorder(wh, 2, (te_iter *const[]){te_reduce_iter(wh, 0), te_axis(wh, 1)}));
      TT_OK(te_split(wh, te_axis(wh, 1), 4, &o, &in));
      TT_OK(te_vectorize(wh, in));
      break;
    case 3:
      TT_OK(te_split(h, te_axis(h, 1), 4, &o, &in));
      TT_OK(te_vectorize(h, in));
      TT_OK(te_compute_root(ux));
      TT_OK(te_parallel(ux, te_axis(ux, 0)));
      break;
    }
    tt_check(s, 5, TT_TENSORS(r.X, r.Wt, r.U, r.H0, r.Hs), TT_BUFS(r.x, r.w, r.u, r.h0, r.got), 0,
             NULL, NULL, r.got, r.ref, HID * STEPS);
    check_replay(s, r.Hs);
  }
}

/* ---------------------------------------------------------------- workload text */

#include "te/parse.h"

/* scan(t, init, update[, n]) in the workload text: C inside update is the earlier steps. The
   canonical text prints scans the same way and reads back to itself; the parsed cumsum and RNN
   compute the C reference's numbers. */
Test(scan, workload_text) {
  const char *text = "C[t, i] = scan(t, X[t, i], C[t - 1, i] + X[t, i]) where X: f32[17, 13]";
  int n;
  te_tensor **outs;
  TT_OK(te_parse(tt_ctx, text, &n, &outs));
  cr_assert_eq(n, 1);
  char *canon = TT_NN(te_workload_text(1, outs));
  cr_assert(strstr(canon, "scan(t, X[t, i], C[t - 1, i] + X[t, i])"), "%s", canon);
  int n2;
  te_tensor **outs2;
  TT_OK(te_parse(tt_ctx, canon, &n2, &outs2));
  char *again = TT_NN(te_workload_text(n2, outs2));
  cr_assert_str_eq(again, canon);
  int nin;
  te_tensor **ins;
  TT_OK(te_workload_inputs(1, outs, &nin, &ins, NULL, NULL));
  cr_assert_eq(nin, 1, "the state is no input");
  tt_buf *x = TT_ALLOC(TE_F32, T, N), *got = TT_ALLOC(TE_F32, T, N), *ref = TT_ALLOC(TE_F32, T, N);
  tt_fill(x, 5);
  for (int q = 0; q < N; q++) {
    double acc = 0;
    for (int p = 0; p < T; p++)
      tt_set(ref, p * N + q, acc += tt_get(x, p * N + q));
  }
  tt_check(tt_schedule1(outs[0]), 2, TT_TENSORS(ins[0], outs[0]), TT_BUFS(x, got), 0, NULL, NULL,
           got, ref, T);
  te_free(canon);
  te_free(again);

  /* the RNN: its shape is declared (init does not read along t) */
  const char *rnn_text =
      "h[t, i] = scan(t, h0[i], tanh(sum(W[i, j]*h[t - 1, j], j) + sum(U[i, k]*x[t, k], k)))\n"
      "where x: f32[9, 7], W: f32[13, 13], U: f32[13, 7], h0: f32[13], h: [9, 13], "
      "j: [0, 13), k: [0, 7)";
  TT_OK(te_parse(tt_ctx, rnn_text, &n, &outs));
  canon = TT_NN(te_workload_text(1, outs));
  TT_OK(te_parse(tt_ctx, canon, &n2, &outs2));
  again = TT_NN(te_workload_text(n2, outs2));
  cr_assert_str_eq(again, canon);
  te_free(canon);
  te_free(again);
  TT_OK(te_workload_inputs(1, outs, &nin, &ins, NULL, NULL));
  cr_assert_eq(nin, 4);
  rnn r;
  rnn_make(&r);
  tt_buf *bufs[4];
  for (int q = 0; q < 4; q++) {
    const char *nm = te_tensor_name(ins[q]);
    bufs[q] = !strcmp(nm, "x") ? r.x : !strcmp(nm, "W") ? r.w : !strcmp(nm, "U") ? r.u : r.h0;
  }
  tt_check(tt_schedule1(outs[0]), 5, TT_TENSORS(ins[0], ins[1], ins[2], ins[3], outs[0]),
           TT_BUFS(bufs[0], bufs[1], bufs[2], bufs[3], r.got), 0, NULL, NULL, r.got, r.ref,
           HID * STEPS);
}
