/* test_nontemporal.c — te_pragma(stage, x, "nontemporal", 1): the stores to argument buffers
 * inside loop x are streaming stores where the buffers are 64-byte aligned, plain ones where
 * they are not, with the same results either way.
 *
 * The kernel, Y[i, j] = X[i, j] * 3 + T[i, j] - 1 with T a temporary computed at each row, has
 * rows of 1000 (not a multiple of the 16 vector lanes: each row ends in a masked tail, which
 * stays plain) and runs its rows in parallel (the pragma's attribute must reach the parallel
 * loop's closure). Outputs are poisoned before each run and compared with a plain loop, for a
 * 64-byte aligned Y and for a Y one element past an aligned address (a DLTensor byte offset).
 * The assembly for an AVX2 and an AVX-512 CPU shows streaming vector stores with the pragma and
 * none without; the IR keeps the attribute inside the row loop.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(nontemporal, .init = tt_setup, .fini = tt_teardown);

enum { ROWS = 37, COLS = 1000 };

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

typedef struct nt_kernel {
  te_tensor *X, *Y;
  te_schedule *s;
} nt_kernel;

/* The kernel's schedule; pragma_value 0 leaves the pragma out. */
static nt_kernel make_kernel(int64_t pragma_value) {
  nt_kernel k;
  k.X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(ROWS, COLS));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *T = te_compute(tt_ctx, "T", 2, TE_EXPRS(I(ROWS), I(COLS)), TE_EXPRS(i, j),
                            te_add(tt_at2(k.X, i, j), te_cast(TE_F32, te_add(i, j))));
  te_expr *i2 = te_var(tt_ctx, "i"), *j2 = te_var(tt_ctx, "j");
  k.Y = te_compute(
      tt_ctx, "Y", 2, TE_EXPRS(I(ROWS), I(COLS)), TE_EXPRS(i2, j2),
      te_sub(te_add(te_mul(tt_at2(k.X, i2, j2), te_float(tt_ctx, TE_F32, 3.0)), tt_at2(T, i2, j2)),
             te_float(tt_ctx, TE_F32, 1.0)));
  k.s = tt_schedule1(k.Y);
  te_stage *y = tt_stage(k.s, k.Y), *t = tt_stage(k.s, T);
  te_iter *jo, *ji, *tjo, *tji;
  TT_OK(te_split(y, te_axis(y, 1), 16, &jo, &ji));
  TT_OK(te_vectorize(y, ji));
  TT_OK(te_parallel(y, te_axis(y, 0)));
  TT_OK(te_compute_at(t, y, te_axis(y, 0)));
  TT_OK(te_split(t, te_axis(t, 1), 16, &tjo, &tji));
  TT_OK(te_vectorize(t, tji));
  if (pragma_value)
    TT_OK(te_pragma(y, te_axis(y, 0), "nontemporal", pragma_value));
  return k;
}

static double expected(const tt_buf *x, int64_t r, int64_t c) {
  double v = tt_get(x, r * COLS + c);
  return v * 3.0 + (v + (double)(r + c)) - 1.0;
}

/* Runs the kernel with Y at y_offset elements past an aligned address; checks every element. */
static void run_and_check(te_module *m, int64_t y_offset) {
  tt_buf *x = TT_ALLOC(TE_F32, ROWS, COLS);
  tt_buf *ybase = TT_ALLOC(TE_F32, ROWS * COLS + 16);
  tt_fill(x, 7);
  tt_poison(ybase);
  tt_buf y = *ybase;
  y.dl.ndim = 2;
  y.shape[0] = ROWS;
  y.shape[1] = COLS;
  y.dl.shape = y.shape;
  y.dl.byte_offset = (uint64_t)y_offset * sizeof(float);
  y.numel = ROWS * COLS;
  DLTensor *args[2] = {&x->dl, &y.dl};
  TT_OK(te_module_call(m, "nt", 2, args, 0, NULL));
  for (int64_t r = 0; r < ROWS; r++)
    for (int64_t c = 0; c < COLS; c++) {
      double want = expected(x, r, c), got = tt_get(ybase, y_offset + r * COLS + c);
      cr_assert_float_eq(got, want, 1e-5 * (1.0 + (want < 0 ? -want : want)),
                         "Y[%lld, %lld] = %g, expected %g (Y offset %lld)", (long long)r,
                         (long long)c, got, want, (long long)y_offset);
    }
}

Test(nontemporal, aligned_and_unaligned_outputs_are_right) {
  nt_kernel k = make_kernel(1);
  te_module *m = tt_build(k.s, "nt", 2, TT_TENSORS(k.X, k.Y), 0, NULL);
  run_and_check(m, 0); /* streaming copy */
  run_and_check(m, 1); /* plain copy: 4 bytes past a line */
  run_and_check(m, 16);
}

/* Lines of the assembly that hold needle. */
static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
    n++;
  return n;
}

static const char *kernel_asm(int64_t pragma_value, const char *target) {
  nt_kernel k = make_kernel(pragma_value);
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  TT_OK(te_build(k.s, "nt", 2, TT_TENSORS(k.X, k.Y), 0, NULL, t, &m));
  return TT_NN((void *)te_module_source(m, "asm"));
}

Test(nontemporal, streaming_stores_with_the_pragma_only) {
  const char *targets[] = {"llvm -mtriple=x86_64-linux-gnu -mcpu=haswell",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"};
  for (int i = 0; i < 2; i++) {
    const char *with = kernel_asm(1, targets[i]);
    cr_expect_gt(count(with, "vmovntps"), 0, "%s: no streaming store with the pragma:\n%s",
                 targets[i], with);
    cr_expect_gt(count(with, "fence"), 0, "%s: no fence after the streaming stores:\n%s",
                 targets[i], with);
    const char *without = kernel_asm(0, targets[i]);
    cr_expect_eq(count(without, "movnt"), 0, "%s: streaming stores without the pragma:\n%s",
                 targets[i], without);
    const char *off = kernel_asm(-1, targets[i]);
    cr_expect_eq(count(off, "movnt"), 0, "%s: streaming stores with the pragma at -1", targets[i]);
  }
}

Test(nontemporal, attribute_inside_the_row_loop) {
  nt_kernel k = make_kernel(1);
  char *text = TT_NN(te_lower_text(k.s, 2, TT_TENSORS(k.X, k.Y), 0, NULL));
  const char *loop = strstr(text, "parallel");
  const char *attr = strstr(text, "nontemporal");
  cr_expect(loop && attr && attr > loop, "the attribute is not inside the parallel loop:\n%s",
            text);
  te_free(text);
}

Test(nontemporal, replays_from_its_trace) {
  nt_kernel k = make_kernel(1);
  char *trace = TT_NN(te_schedule_trace(k.s));
  cr_expect(strstr(trace, "nontemporal 1") != NULL, "trace:\n%s", trace);
  te_schedule *again = tt_schedule1(k.Y);
  TT_OK(te_schedule_replay(again, trace));
  te_free(trace);
  te_module *m = tt_build(again, "nt", 2, TT_TENSORS(k.X, k.Y), 0, NULL);
  run_and_check(m, 0);
}
