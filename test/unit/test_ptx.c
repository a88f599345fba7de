/* test_ptx.c — the CUDA back end without a GPU: every PTX this file produces is checked for
 * `.entry` kernels and, where NVIDIA's ptxas is installed (PATH or /usr/local/cuda/bin), assembled
 * with `ptxas -arch=sm_90` (and the PTX made for sm_80 with -arch=sm_80). Without ptxas the
 * assembly step prints a skip line and the textual checks still run.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_cases.h"
#include "te/te.h"
#include "te_test.h"

static te_module *build_case(te_ctx *ctx, gpu_case_builder b, const char *target, gpu_case *c) {
  cr_assert(b(ctx, c), "%s", te_last_error(ctx));
  te_target *t = te_target_parse(ctx, target);
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(te_build(c->sch, c->name, c->ntensors, c->tensors, c->nscalars, c->scalars, t, &m),
               TE_OK, "%s: %s", c->name, te_last_error(ctx));
  return m;
}

static void check_case(const char *name, gpu_case_builder b, bool barrier) {
  const char *archs[2][2] = {{"cuda", "sm_80"}, {"cuda -arch=sm_90", "sm_90"}};
  for (int a = 0; a < 2; a++) {
    te_ctx *ctx = te_ctx_new();
    gpu_case c;
    te_module *m = build_case(ctx, b, archs[a][0], &c);
    const char *ptx = te_module_source(m, "ptx");
    cr_assert_not_null(ptx, "%s", te_last_error(ctx));
    char entry[200], target[64];
    snprintf(entry, sizeof entry, ".entry %s_kernel0(", c.name);
    snprintf(target, sizeof target, ".target %s", archs[a][1]);
    cr_expect(strstr(ptx, entry), "%s: no '%s' in\n%s", name, entry, ptx);
    cr_expect(strstr(ptx, target), "%s: no '%s'", name, target);
    cr_expect(strstr(ptx, ".func") == NULL, "%s: a kernel came out as .func", name);
    cr_expect(!barrier || strstr(ptx, "bar.sync"), "%s: no barrier in\n%s", name, ptx);
    cr_expect(!barrier || strstr(ptx, ".shared"), "%s: no shared memory", name);
    cr_expect_str_eq(te_module_source(m, "asm"), ptx);
    const char *ll = te_module_source(m, "ll");
    cr_expect(ll && strstr(ll, "ptx_kernel"), "%s: the kernel has not the PTX_Kernel convention",
              name);
    char what[100];
    snprintf(what, sizeof what, "%s (%s)", name, archs[a][1]);
    tt_ptxas_assemble(what, ptx, archs[a][1]);
    te_ctx_free(ctx);
  }
}

Test(ptx, elementwise) { check_case("elementwise", gpu_case_elementwise, false); }
Test(ptx, reduce) { check_case("reduce", gpu_case_reduce, true); }
Test(ptx, matmul) { check_case("matmul", gpu_case_matmul, true); }
Test(ptx, softmax) { check_case("softmax", gpu_case_softmax, true); }

/* y = f(x) for one math function over x[256] (f32 or f64), 64 threads a block, for target. */
static te_module *math_kernel_for(te_ctx *ctx, const char *fn, te_dtype dt, const char *target) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 256);
  te_tensor *x = te_placeholder(ctx, "x", dt, 1, TE_EXPRS(n));
  te_expr *v = TE_AT(x, i);
  te_expr *body = !strcmp(fn, "fma")   ? te_call(ctx, fn, 3, TE_EXPRS(v, v, v))
                  : !strcmp(fn, "pow") ? te_call(ctx, fn, 2, TE_EXPRS(v, v))
                                       : te_call(ctx, fn, 1, TE_EXPRS(v));
  te_tensor *y = te_compute(ctx, "y", 1, TE_EXPRS(n), TE_EXPRS(i), body);
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){y});
  te_stage *st = te_stage_of(s, y);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 64, &o, &in), TE_OK, "%s", te_last_error(ctx));
  te_bind(st, o, TE_BLOCK_X);
  te_bind(st, in, TE_THREAD_X);
  te_module *m = NULL;
  te_build(s, "math", 2, (te_tensor *const[]){x, y}, 0, NULL, te_target_parse(ctx, target), &m);
  return m;
}

static te_module *math_kernel(te_ctx *ctx, const char *fn, te_dtype dt) {
  return math_kernel_for(ctx, fn, dt, "cuda -arch=sm_90");
}

/* libdevice is part of the CUDA toolkit: without it the math tests skip (a failure when
   TE_REQUIRE lists "ptxas": the toolkit is expected then). */
static bool tt_libdevice_found(void) {
  static const char path[] = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  const char *own = getenv("TE_LIBDEVICE");
  if (access(own && *own ? own : path, R_OK) == 0)
    return true;
  tt_skip_part("ptxas", "no libdevice (%s): the CUDA toolkit's math library is not installed",
               own && *own ? own : path);
  return false;
}

/* Every math function te has, f32 and f64, in a CUDA kernel: the PTX defines every function it
   calls (libdevice's are linked in; an extern one would be unresolved on the device), only the
   ones used (libdevice has ~350), and ptxas assembles it for sm_80 and sm_90. */
Test(ptx, every_math_function) {
  static const char *const fns[] = {"exp",   "exp2", "log",   "log2",  "log10",   "sin",  "cos",
                                    "tan",   "tanh", "pow",   "erf",   "sigmoid", "sqrt", "rsqrt",
                                    "floor", "ceil", "round", "trunc", "abs",     "fma"};
  if (!tt_libdevice_found())
    return;
  for (int d = 0; d < 2; d++)
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
      te_ctx *ctx = te_ctx_new();
      te_module *m = math_kernel(ctx, fns[k], d ? TE_F64 : TE_F32);
      cr_assert_not_null(m, "%s: %s", fns[k], te_last_error(ctx));
      const char *ptx = te_module_source(m, "ptx");
      cr_expect(strstr(ptx, ".entry math_kernel0("));
      cr_expect(strstr(ptx, ".extern") == NULL, "%s: an unresolved function in the PTX:\n%s",
                fns[k], ptx);
      const char *ll = te_module_source(m, "ll");
      int defs = 0;
      for (const char *p = ll; (p = strstr(p, "define ")); p++)
        defs++;
      cr_expect_leq(defs, 3, "%s: %d functions defined, not only the used ones", fns[k], defs);
      char what[64];
      snprintf(what, sizeof what, "%s %s", fns[k], d ? "f64" : "f32");
      tt_ptxas_assemble(what, ptx, "sm_90");
      te_ctx_free(ctx);
    }
}

/* The same kernels made for sm_80 assemble for sm_80 (libdevice's __nvvm_reflect answers). */
Test(ptx, libdevice_sm80) {
  static const char *const fns[] = {"sin", "pow", "erf", "tan"};
  if (!tt_libdevice_found())
    return;
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++)
    for (int d = 0; d < 2; d++) {
      te_ctx *ctx = te_ctx_new();
      te_module *m = math_kernel_for(ctx, fns[k], d ? TE_F64 : TE_F32, "cuda -arch=sm_80");
      cr_assert_not_null(m, "%s: %s", fns[k], te_last_error(ctx));
      char what[64];
      snprintf(what, sizeof what, "%s %s", fns[k], d ? "f64" : "f32");
      tt_ptxas_assemble(what, te_module_source(m, "ptx"), "sm_80");
      te_ctx_free(ctx);
    }
}

Test(ptx, save_ptx) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  te_module *m = build_case(ctx, gpu_case_matmul, "cuda -arch=sm_90", &c);
  char dir[] = "/tmp/te_save_ptx_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char prefix[600], path[700];
  snprintf(prefix, sizeof prefix, "%s/mm", dir);
  snprintf(path, sizeof path, "%s.ptx", prefix);
  cr_assert_eq(te_module_save(m, prefix, TE_SAVE_PTX), TE_OK, "%s", te_last_error(ctx));
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  char head[4096] = "";
  size_t n = fread(head, 1, sizeof head - 1, f);
  head[n] = '\0';
  fclose(f);
  cr_expect(strstr(head, ".entry gpu_matmul_kernel0("));
  unlink(path);
  cr_expect_eq(te_module_save(m, prefix, TE_SAVE_OBJECT), TE_ERR_TARGET);
  rmdir(dir);
  te_ctx_free(ctx);
}

Test(ptx, target_strings) {
  te_ctx *ctx = te_ctx_new();
  te_target *t = te_target_parse(ctx, "cuda");
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  cr_expect_str_eq(
      te_target_str(t),
      "cuda -arch=sm_80 -max_threads_per_block=1024 -max_shared_memory_per_block=49152");
  t = te_target_parse(ctx, "nvptx -arch=sm_90 -max_threads_per_block=512");
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  cr_expect_str_eq(
      te_target_str(t),
      "cuda -arch=sm_90 -max_threads_per_block=512 -max_shared_memory_per_block=49152");
  cr_expect_str_eq(te_target_str(te_target_parse(ctx, te_target_str(t))), te_target_str(t));
  t = te_target_parse(ctx, "vulkan");
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  cr_expect_str_eq(te_target_str(t),
                   "vulkan -max_threads_per_block=256 -max_shared_memory_per_block=32768");
  cr_expect_null(te_target_parse(ctx, "cuda -arch=sm_7"));
  cr_expect_eq(te_last_status(ctx), TE_ERR_TARGET);
  te_clear_error(ctx);
  cr_expect_null(te_target_parse(ctx, "cuda -arch=sm_90 -arch=sm_80"));
  cr_expect_eq(te_last_status(ctx), TE_ERR_PARSE);
  te_clear_error(ctx);
  cr_expect_null(te_target_parse(ctx, "vulkan -arch=sm_90"));
  cr_expect_eq(te_last_status(ctx), TE_ERR_TARGET);
  te_clear_error(ctx);
  cr_expect_null(te_target_parse(ctx, "cuda -max_threads_per_block=2048"));
  cr_expect_eq(te_last_status(ctx), TE_ERR_TARGET);
  te_ctx_free(ctx);
}

/* f16 and bf16 buffers: y = a * b + a (computed in f32, rounded to the output's dtype), z =
   bf16(a) - b; for sm_80 and sm_90, assembled by ptxas. The conversions are PTX's cvt. */
static te_module *half_kernel(te_ctx *ctx, const char *target) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 256);
  te_tensor *a = te_placeholder(ctx, "a", TE_F16, 1, TE_EXPRS(n));
  te_tensor *b = te_placeholder(ctx, "b", TE_BF16, 1, TE_EXPRS(n));
  te_expr *va = TE_AT(a, i), *vb = TE_AT(b, i);
  te_tensor *y = te_compute(ctx, "y", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_cast(TE_F16, te_add(te_mul(te_cast(TE_F32, va), vb), va)));
  te_tensor *z = te_compute(ctx, "z", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_sub(te_cast(TE_BF16, te_call(ctx, "exp", 1, &va)), vb));
  te_schedule *s = te_schedule_new(ctx, 2, (te_tensor *const[]){y, z});
  for (int k = 0; k < 2; k++) {
    te_stage *st = te_stage_of(s, k ? z : y);
    te_iter *o, *in;
    cr_assert_eq(te_split(st, te_axis(st, 0), 64, &o, &in), TE_OK, "%s", te_last_error(ctx));
    te_bind(st, o, TE_BLOCK_X);
    te_bind(st, in, TE_THREAD_X);
  }
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "half", 4, (te_tensor *const[]){a, b, y, z}, 0, NULL,
                        te_target_parse(ctx, target), &m),
               TE_OK, "%s", te_last_error(ctx));
  return m;
}

Test(ptx, f16_bf16_kernels) {
  const char *archs[2][2] = {{"cuda", "sm_80"}, {"cuda -arch=sm_90", "sm_90"}};
  for (int a = 0; a < 2; a++) {
    te_ctx *ctx = te_ctx_new();
    te_module *m = half_kernel(ctx, archs[a][0]);
    const char *ptx = te_module_source(m, "ptx");
    cr_assert_not_null(ptx, "%s", te_last_error(ctx));
    cr_expect(strstr(ptx, "cvt.f32.f16"), "%s: no f16 -> f32 cvt in\n%s", archs[a][1], ptx);
    cr_expect(strstr(ptx, "cvt.rn.bf16.f32") || strstr(ptx, "cvt.rn.bf16x2.f32"),
              "%s: no f32 -> bf16 cvt in\n%s", archs[a][1], ptx);
    cr_expect(strstr(ptx, "call") == NULL, "%s: a call in the PTX:\n%s", archs[a][1], ptx);
    char what[64];
    snprintf(what, sizeof what, "f16/bf16 kernels (%s)", archs[a][1]);
    tt_ptxas_assemble(what, ptx, archs[a][1]);
    te_ctx_free(ctx);
  }
}
