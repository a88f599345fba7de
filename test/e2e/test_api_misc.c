/* test_api_misc.c — the public API around building: te_lower_text names the split/fused loops,
 * te_module_source gives LLVM IR and assembly that define the kernel, te_module_entry can be
 * called directly, te_target_str resolves the host, explicit target options build and run, the
 * schedule trace records primitives, te_expr_text prints, each build phase is timed (more than
 * zero, and together no more than the whole te_build).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

TestSuite(api_misc, .init = tt_setup, .fini = tt_teardown);

/* C[i, j] = A[i, j] * 2 on 10 x 12. */
static te_tensor *scale2(te_tensor **A) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(10, 12));
  return TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, 10), te_int(tt_ctx, 12)),
                          TE_EXPRS(i, j), te_mul(tt_at2(*A, i, j), te_float(tt_ctx, TE_F32, 2))));
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void expect_contains(const char *text, const char *what, const char *needle) {
  cr_assert(text != NULL, "%s is NULL: %s", what, te_last_error(tt_ctx));
  cr_assert(strstr(text, needle) != NULL, "%s lacks \"%s\":\n%s", what, needle, text);
}

Test(api_misc, lower_text_names_split_loops) {
  te_tensor *A, *C = scale2(&A);
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in, *f;
  TT_OK(te_split(st, te_axis(st, 0), 4, &o, &in));
  cr_assert_str_eq(te_iter_name(o), "i.o");
  cr_assert_str_eq(te_iter_name(in), "i.i");
  TT_OK(te_fuse(st, in, te_axis(st, 1), &f));
  cr_assert_str_eq(te_iter_name(f), "i.i.j.f");
  cr_assert_eq(te_leaf_count(st), 2);
  cr_assert_eq(te_leaf(st, 0), o);
  cr_assert_eq(te_leaf(st, 1), f);
  char *text = te_lower_text(s, 2, TT_TENSORS(A, C), 0, NULL);
  expect_contains(text, "te_lower_text", "i.o");
  expect_contains(text, "te_lower_text", "i.i.j.f");
  te_free(text);
}

Test(api_misc, lower_text_of_tile) {
  te_tensor *A, *C = scale2(&A);
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *io, *jo, *ii, *ji;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 4, 5, &io, &jo, &ii, &ji));
  cr_assert_eq(te_leaf_count(st), 4);
  cr_assert_eq(te_leaf(st, 0), io);
  cr_assert_eq(te_leaf(st, 1), jo);
  cr_assert_eq(te_leaf(st, 2), ii);
  cr_assert_eq(te_leaf(st, 3), ji);
  char *text = te_lower_text(s, 2, TT_TENSORS(A, C), 0, NULL);
  expect_contains(text, "te_lower_text", "i.o");
  expect_contains(text, "te_lower_text", "j.o");
  expect_contains(text, "te_lower_text", "j.i");
  te_free(text);
}

Test(api_misc, module_source_entry_and_times) {
  te_tensor *A, *C = scale2(&A);
  double t0 = wall_s();
  te_module *m = tt_build(tt_schedule1(C), "scale_two", 2, TT_TENSORS(A, C), 0, NULL);
  double build_s = wall_s() - t0;
  expect_contains(te_module_source(m, "ll"), "ll source", "scale_two");
  expect_contains(te_module_source(m, "ll"), "ll source", "define");
  expect_contains(te_module_source(m, "asm"), "asm source", "scale_two");
  /* each phase took some time, and together no more than the whole te_build call */
  te_build_times bt = te_module_build_times(m);
  cr_assert(bt.lower_s > 0 && bt.llvm_s > 0 && bt.jit_s > 0, "build times %g, %g, %g s", bt.lower_s,
            bt.llvm_s, bt.jit_s);
  cr_assert(bt.lower_s + bt.llvm_s + bt.jit_s <= build_s,
            "lower %g + llvm %g + jit %g s is more than te_build's %g s", bt.lower_s, bt.llvm_s,
            bt.jit_s, build_s);

  typedef int32_t (*kern2)(DLTensor *, DLTensor *);
  kern2 fn = (kern2)te_module_entry(m, "scale_two");
  cr_assert(fn != NULL, "te_module_entry returned NULL: %s", te_last_error(tt_ctx));
  tt_buf *a = TT_ALLOC(TE_F32, 10, 12), *got = TT_ALLOC(TE_F32, 10, 12);
  tt_buf *ref = TT_ALLOC(TE_F32, 10, 12);
  tt_fill(a, 9);
  for (int p = 0; p < 120; p++)
    tt_set(ref, p, tt_get(a, p) * 2);
  int32_t rc = fn(&a->dl, &got->dl);
  cr_assert_eq(rc, 0, "direct call returned %d: %s", rc, te_rt_last_error());
  tt_assert_close(got, ref, 1);
  /* the direct entry checks its arguments too */
  tt_poison(got);
  got->shape[1] = 11;
  rc = fn(&a->dl, &got->dl);
  cr_assert_eq(rc, TE_ERR_SHAPE, "direct call with a wrong extent returned %d", rc);
  cr_assert(strlen(te_rt_last_error()) > 0, "no te_rt_last_error message");
}

Test(api_misc, target_strings) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, "llvm"));
  expect_contains(te_target_str(t), "te_target_str", "llvm");
  expect_contains(te_target_str(t), "te_target_str", "-mtriple=");
  expect_contains(te_target_str(t), "te_target_str", "-mcpu=");
  te_target *nat = TT_NN(te_target_parse(tt_ctx, "llvm -mcpu=native"));
  cr_assert(strstr(te_target_str(nat), "native") == NULL, "native not resolved: %s",
            te_target_str(nat));
  /* the host's triple and CPU given explicitly build and run; a generic x86-64 CPU builds
     (cross compilation: its assembly is available) */
  const char *host = te_target_str(t);
  const char *cpu = strstr(host, "-mcpu=");
  char spec[256];
  snprintf(spec, sizeof spec, "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=%.*s",
           (int)strcspn(cpu + 6, " "), cpu + 6);
  te_target *x = TT_NN(te_target_parse(tt_ctx, spec));
  te_tensor *A, *C = scale2(&A);
  te_module *m = NULL;
  TT_OK(te_build(tt_schedule1(C), "k", 2, TT_TENSORS(A, C), 0, NULL, x, &m));
  tt_buf *a = TT_ALLOC(TE_F32, 10, 12), *got = TT_ALLOC(TE_F32, 10, 12);
  tt_buf *ref = TT_ALLOC(TE_F32, 10, 12);
  tt_fill(a, 3);
  for (int p = 0; p < 120; p++)
    tt_set(ref, p, tt_get(a, p) * 2);
  tt_call(m, "k", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, 1);
  m = NULL;
  TT_OK(te_build(tt_schedule1(C), "k", 2, TT_TENSORS(A, C), 0, NULL, nat, &m));
  tt_poison(got);
  tt_call(m, "k", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, 1);
  te_target *generic = TT_NN(te_target_parse(
      tt_ctx, "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64 -mattr=+sse2,-avx512f"));
  m = NULL;
  TT_OK(te_build(tt_schedule1(C), "k", 2, TT_TENSORS(A, C), 0, NULL, generic, &m));
  expect_contains(te_module_source(m, "asm"), "x86-64 asm", "k");
  te_target *arm =
      TT_NN(te_target_parse(tt_ctx, "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v2"));
  m = NULL;
  TT_OK(te_build(tt_schedule1(C), "k", 2, TT_TENSORS(A, C), 0, NULL, arm, &m));
  expect_contains(te_module_source(m, "asm"), "aarch64 asm", "ret");
}

Test(api_misc, trace_and_replay) {
  te_tensor *A, *C = scale2(&A);
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 1), 5, &o, &in));
  TT_OK(te_reorder(st, 2, (te_iter *const[]){in, te_axis(st, 0)}));
  char *trace = te_schedule_trace(s);
  expect_contains(trace, "trace", "split");
  expect_contains(trace, "trace", "reorder");
  te_schedule *s2 = tt_schedule1(C);
  TT_OK(te_schedule_replay(s2, trace));
  te_free(trace);
  te_stage *st2 = tt_stage(s2, C);
  cr_assert_eq(te_leaf_count(st2), 3);
  cr_assert_str_eq(te_iter_name(te_leaf(st2, 0)), "j.i");
  cr_assert_str_eq(te_iter_name(te_leaf(st2, 1)), "j.o");
  cr_assert_str_eq(te_iter_name(te_leaf(st2, 2)), "i");
}

Test(api_misc, expr_text_and_dtypes) {
  te_expr *x = te_param(tt_ctx, "x", TE_F32);
  char *t = te_expr_text(te_add(x, te_float(tt_ctx, TE_F32, 1.5)));
  expect_contains(t, "te_expr_text", "x");
  te_free(t);
  char buf[32];
  cr_assert_str_eq(te_dtype_str(TE_F32, buf, sizeof buf), "f32");
  cr_assert_str_eq(te_dtype_str(TE_I64, buf, sizeof buf), "i64");
  cr_assert_str_eq(te_dtype_str(TE_BOOL, buf, sizeof buf), "bool");
  cr_assert_str_eq(te_status_str(TE_ERR_SHAPE), "TE_ERR_SHAPE");
  cr_assert_str_eq(te_status_str(TE_OK), "TE_OK");
  cr_assert(te_status_str((te_status)999) != NULL, "te_status_str of an unknown code is NULL");
  cr_assert(te_expr_ctx(x) == tt_ctx, "te_expr_ctx");
  cr_assert(te_add(x, x) == te_add(x, x), "hash-consing: same expression, same pointer");
  cr_assert(te_var(tt_ctx, "v") != te_var(tt_ctx, "v"), "two te_var calls must differ");
}
