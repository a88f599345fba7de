/* test_if_then_else.c — te_if_then_else evaluates only the side its condition takes.
 *
 * Padding whose reads are not clamped reads A[y - 1, x - 1] for every (y, x) of the padded
 * result: at the border those indices are outside A. A is laid out on one page between two
 * inaccessible pages, so a read the condition excludes (for a lane or for an iteration) faults
 * and fails the test. Covered: scalar code, vectors with a masked tail, parallel and unrolled
 * loops, vectors along the rows (gathers), a condition uniform across the lanes (a branch), a
 * reduction with its padding inline (a 1-D convolution), nested guards; conditions the
 * simplifier knows leave one side; te_call and the workload text make the same node; errors;
 * the Vulkan target builds it as a structured selection, the CUDA target as a branch.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

TestSuite(if_then_else, .init = tt_setup, .fini = tt_teardown, .timeout = 240);

enum { H = 16, W = 64 }; /* H * W floats: one 4 KiB page */

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

/* b's data copied onto a page with no access on either side, which the kernels then read;
   unguard puts b back on its own memory (tt_teardown frees that) and unmaps the pages. */
typedef struct guarded {
  tt_buf *b;
  void *own;
  char *map;
} guarded;

static guarded guard(tt_buf *b) {
  long page = sysconf(_SC_PAGESIZE);
  size_t bytes = (size_t)b->numel * b->elem_bytes;
  cr_assert_eq((long)bytes, page, "the guarded input fills one page");
  char *m =
      mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  memcpy(m + page, b->dl.data, bytes);
  cr_assert_eq(mprotect(m, (size_t)page, PROT_NONE), 0);
  cr_assert_eq(mprotect(m + 2 * page, (size_t)page, PROT_NONE), 0);
  guarded g = {b, b->dl.data, m};
  b->dl.data = m + page;
  return g;
}

static void unguard(guarded g) {
  g.b->dl.data = g.own;
  munmap(g.map, 3 * (size_t)sysconf(_SC_PAGESIZE));
}

/* lo <= v <= hi */
static te_expr *within(te_expr *v, int64_t lo, int64_t hi) {
  return te_and(te_ge(v, I(lo)), te_le(v, I(hi)));
}

/* B[y, x] = if_then_else(1 <= y <= H && 1 <= x <= W, A[y - 1, x - 1], -1), (H + 2) x (W + 2). */
static te_tensor *padded(te_tensor *A) {
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_expr *inside = te_and(within(y, 1, H), within(x, 1, W));
  te_expr *v = te_if_then_else(inside, tt_at2(A, te_sub(y, I(1)), te_sub(x, I(1))),
                               te_float(tt_ctx, TE_F32, -1));
  return TT_NN(te_compute(tt_ctx, "B", 2, TE_EXPRS(I(H + 2), I(W + 2)), TE_EXPRS(y, x), v));
}

enum { PAD_PLAIN, PAD_VEC16, PAD_VEC8_PAR, PAD_TILE_UNROLL, PAD_VEC_ROWS, PAD_COUNT };
static const char *pad_names[] = {"no schedule", "x split 16, vectorized (masked tail of 2)",
                                  "x split 8, vectorized, rows parallel",
                                  "tile 4 x 16, rows unrolled, columns vectorized",
                                  "rows vectorized (18 lanes: gathers)"};

static void pad_schedule(te_stage *st, int kind) {
  te_iter *o, *i, *yo, *xo, *yi, *xi;
  switch (kind) {
  case PAD_VEC16:
    TT_OK(te_split(st, te_axis(st, 1), 16, &o, &i));
    TT_OK(te_vectorize(st, i));
    break;
  case PAD_VEC8_PAR:
    TT_OK(te_split(st, te_axis(st, 1), 8, &o, &i));
    TT_OK(te_vectorize(st, i));
    TT_OK(te_parallel(st, te_axis(st, 0)));
    break;
  case PAD_TILE_UNROLL:
    TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 4, 16, &yo, &xo, &yi, &xi));
    TT_OK(te_unroll(st, yi));
    TT_OK(te_vectorize(st, xi));
    break;
  case PAD_VEC_ROWS:
    TT_OK(te_reorder(st, 2, (te_iter *const[]){te_axis(st, 1), te_axis(st, 0)}));
    TT_OK(te_vectorize(st, te_axis(st, 0)));
    break;
  }
}

/* B = f(A) under every pad_schedule kind, with a on guarded pages. */
static void check_every_schedule(const char *what, te_tensor *A, te_tensor *B, tt_buf *a,
                                 tt_buf *got, const tt_buf *ref) {
  guarded m = guard(a);
  for (int kind = 0; kind < PAD_COUNT; kind++) {
    tt_note("%s, %s", what, pad_names[kind]);
    te_schedule *s = tt_schedule1(B);
    pad_schedule(tt_stage(s, B), kind);
    tt_check(s, 2, TT_TENSORS(A, B), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
  }
  unguard(m);
}

Test(if_then_else, padding_reads_nothing_outside) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(H, W));
  te_tensor *B = padded(A);
  tt_buf *a = TT_ALLOC(TE_F32, H, W), *got = TT_ALLOC(TE_F32, H + 2, W + 2),
         *ref = TT_ALLOC(TE_F32, H + 2, W + 2);
  tt_fill(a, 81);
  for (int y = 0; y < H + 2; y++)
    for (int x = 0; x < W + 2; x++) {
      bool in = y >= 1 && y <= H && x >= 1 && x <= W;
      tt_set(ref, y * (W + 2) + x, in ? tt_get(a, (y - 1) * W + x - 1) : -1);
    }
  check_every_schedule("padding", A, B, a, got, ref);
}

/* C[y, x] = sum over r of if_then_else(0 <= x + r - 1 < W, A[y, x + r - 1], 0) * w[r]: the
   padding inline in a reduction, columns vectorized by 24 (a masked tail of 16). */
Test(if_then_else, inline_padding_in_a_reduction) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(H, W));
  te_tensor *w = tt_placeholder("w", TE_F32, 1, TT_SHAPE(3));
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_expr *r = te_reduce_axis(tt_ctx, "r", I(0), I(3));
  te_expr *sx = te_sub(te_add(x, r), I(1));
  te_expr *term =
      te_mul(te_if_then_else(within(sx, 0, W - 1), tt_at2(A, y, sx), te_float(tt_ctx, TE_F32, 0)),
             tt_at1(w, r));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(H), I(W)), TE_EXPRS(y, x),
                                  te_sum(term, 1, TE_EXPRS(r))));
  tt_buf *a = TT_ALLOC(TE_F32, H, W), *wb = TT_ALLOC(TE_F32, 3), *got = TT_ALLOC(TE_F32, H, W),
         *ref = TT_ALLOC(TE_F32, H, W);
  tt_fill(a, 82);
  tt_fill(wb, 83);
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) {
      double acc = 0;
      for (int k = 0; k < 3; k++)
        if (j + k - 1 >= 0 && j + k - 1 < W)
          acc += tt_get(a, i * W + j + k - 1) * tt_get(wb, k);
      tt_set(ref, i * W + j, acc);
    }
  guarded m = guard(a);
  for (int vec = 0; vec < 2; vec++) {
    tt_note("1-D convolution, %s", vec ? "columns vectorized by 24" : "scalar");
    te_schedule *s = tt_schedule1(C);
    te_stage *st = tt_stage(s, C);
    if (vec) {
      te_iter *o, *i;
      TT_OK(te_split(st, te_axis(st, 1), 24, &o, &i));
      TT_OK(te_reorder(st, 4, (te_iter *const[]){te_axis(st, 0), o, te_reduce_iter(st, 0), i}));
      TT_OK(te_vectorize(st, i));
    }
    tt_check(s, 3, TT_TENSORS(A, w, C), TT_BUFS(a, wb, got), 0, NULL, NULL, got, ref, 3);
  }
  unguard(m);
}

/* Guards inside guards, and one that does not vary along the vector (the rows' guard with the
   columns vectorized: a branch around vector loads). */
Test(if_then_else, nested_and_uniform_guards) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(H, W));
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_expr *at = tt_at2(A, te_sub(y, I(1)), te_sub(x, I(1)));
  te_expr *inner = te_if_then_else(te_le(x, I(W)), at, te_float(tt_ctx, TE_F32, 2));
  te_expr *cols = te_if_then_else(te_ge(x, I(1)), inner, te_float(tt_ctx, TE_F32, 3));
  te_expr *v = te_if_then_else(within(y, 1, H), cols, te_float(tt_ctx, TE_F32, 4));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 2, TE_EXPRS(I(H + 2), I(W + 2)), TE_EXPRS(y, x), v));
  tt_buf *a = TT_ALLOC(TE_F32, H, W), *got = TT_ALLOC(TE_F32, H + 2, W + 2),
         *ref = TT_ALLOC(TE_F32, H + 2, W + 2);
  tt_fill(a, 84);
  for (int i = 0; i < H + 2; i++)
    for (int j = 0; j < W + 2; j++)
      tt_set(ref, i * (W + 2) + j,
             i < 1 || i > H ? 4
             : j < 1        ? 3
             : j > W        ? 2
                            : tt_get(a, (i - 1) * W + j - 1));
  check_every_schedule("nested guards", A, B, a, got, ref);
}

/* A condition the loop bounds decide leaves one side; te_call("if_then_else") and the
   workload text make the same node; the lowered text names it. */
Test(if_then_else, folding_call_and_text) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(W));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *always = te_if_then_else(te_lt(i, I(W + 5)), tt_at1(A, i), te_float(tt_ctx, TE_F32, 0));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(I(W)), TE_EXPRS(i), always));
  te_schedule *s = tt_schedule1(B);
  char *text = TT_NN(te_lower_text(s, 2, TT_TENSORS(A, B), 0, NULL));
  cr_expect(strstr(text, "if_then_else") == NULL, "a true condition leaves t:\n%s", text);
  te_free(text);

  te_expr *j = te_var(tt_ctx, "j");
  te_expr *args[3] = {te_ge(j, I(1)), tt_at1(A, te_sub(j, I(1))), te_float(tt_ctx, TE_F32, 0)};
  te_expr *by_call = TT_NN(te_call(tt_ctx, "if_then_else", 3, args));
  cr_expect_eq(by_call, te_if_then_else(args[0], args[1], args[2]), "one node either way");
  te_tensor *S = TT_NN(te_compute(tt_ctx, "S", 1, TE_EXPRS(I(W)), TE_EXPRS(j), by_call));
  s = tt_schedule1(S);
  text = TT_NN(te_lower_text(s, 2, TT_TENSORS(A, S), 0, NULL));
  cr_expect(strstr(text, "if_then_else(") != NULL, "%s", text);
  te_free(text);

  int nout = 0;
  te_tensor **outs = NULL;
  TT_OK(te_parse(tt_ctx, "S[j] = if_then_else(j >= 1, A[j - 1], 0.0f) where A: f32[64], S: [64]",
                 &nout, &outs));
  cr_assert_eq(nout, 1);
  int nin = 0;
  te_tensor **ins = NULL;
  TT_OK(te_workload_inputs(1, outs, &nin, &ins, NULL, NULL));
  cr_assert_eq(nin, 1);
  tt_buf *a = TT_ALLOC(TE_F32, W), *got = TT_ALLOC(TE_F32, W), *ref = TT_ALLOC(TE_F32, W);
  tt_fill(a, 85);
  for (int k = 0; k < W; k++)
    tt_set(ref, k, k >= 1 ? tt_get(a, k - 1) : 0);
  tt_check(tt_schedule1(outs[0]), 2, TT_TENSORS(ins[0], outs[0]), TT_BUFS(a, got), 0, NULL, NULL,
           got, ref, 1);
  char *wt = TT_NN(te_workload_text(1, outs));
  cr_expect(strstr(wt, "if_then_else(j >= 1, A[j - 1], 0.0f)"), "printed back:\n%s", wt);
  te_free(wt);
}

Test(if_then_else, errors_and_gpu_targets) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(W));
  te_expr *i = te_var(tt_ctx, "i");
  cr_expect_null(te_if_then_else(i, tt_at1(A, i), te_float(tt_ctx, TE_F32, 0)));
  cr_expect_eq(te_last_status(tt_ctx), TE_ERR_TYPE);
  cr_expect(strstr(te_last_error(tt_ctx), "te_if_then_else: condition must be bool"), "%s",
            te_last_error(tt_ctx));
  te_clear_error(tt_ctx);
  cr_expect_null(te_if_then_else(NULL, tt_at1(A, i), te_float(tt_ctx, TE_F32, 0)));
  te_expr *two[2] = {te_ge(i, I(1)), tt_at1(A, i)};
  cr_expect_null(te_call(tt_ctx, "if_then_else", 2, two));
  cr_expect_eq(te_last_status(tt_ctx), TE_ERR_INVALID_ARG);
  te_clear_error(tt_ctx);

  /* the Vulkan target branches too: a structured selection (run on lavapipe in
     e2e/test_vulkan.c, if_then_else_neighbours) */
  te_expr *v =
      te_if_then_else(te_ge(i, I(1)), tt_at1(A, te_sub(i, I(1))), te_float(tt_ctx, TE_F32, 0));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(I(W)), TE_EXPRS(i), v));
  te_schedule *s = tt_schedule1(B);
  te_stage *st = tt_stage(s, B);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), 32, &o, &in));
  TT_OK(te_bind(st, o, TE_BLOCK_X));
  TT_OK(te_bind(st, in, TE_THREAD_X));
  te_module *mod = NULL;
  TT_OK(te_build(s, "guarded", 2, TT_TENSORS(A, B), 0, NULL,
                 TT_NN(te_target_parse(tt_ctx, "vulkan")), &mod));
  const char *dis = TT_NN((void *)te_module_source(mod, "spirv-dis"));
  cr_expect(strstr(dis, "OpSelectionMerge") && strstr(dis, "OpPhi"), "%s", dis);
  /* the CUDA target branches around the read (PTX through LLVM, built without a device) */
  TT_OK(te_build(s, "guarded", 2, TT_TENSORS(A, B), 0, NULL, TT_NN(te_target_parse(tt_ctx, "cuda")),
                 &mod));
}
