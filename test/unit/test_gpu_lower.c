/* test_gpu_lower.c — golden tests of the GPU lowering (host/device split, shared memory,
 * barriers, cooperative loads, cross-thread reductions) and its unit-level checks.
 *
 * Each case of test/common/gpu_cases.c is lowered for "cuda" with te_lower_text_for and
 * compared with test/unit/gpu_golden/<case>.txt. TE_GOLDEN_UPDATE=1 in the environment rewrites
 * the expected files from the current output (read the diff before keeping it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cases.h"
#include "lower/gpu_lower.h"

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  if (buf)
    buf[n] = '\0';
  fclose(f);
  return buf;
}

static char *lower_case(te_ctx *ctx, const char *name, const char *target) {
  for (int i = 0; i < gpu_ncases; i++) {
    if (strcmp(gpu_cases[i].name, name))
      continue;
    gpu_case c;
    cr_assert(gpu_cases[i].build(ctx, &c), "building case %s: %s", name, te_last_error(ctx));
    te_target *t = te_target_parse(ctx, target);
    cr_assert_not_null(t, "%s", te_last_error(ctx));
    char *text = te_lower_text_for(c.sch, t, c.ntensors, c.tensors, c.nscalars, c.scalars);
    cr_assert_not_null(text, "lowering %s: %s", name, te_last_error(ctx));
    return text;
  }
  cr_assert_fail("no case %s", name);
  return NULL;
}

static void golden(const char *name) {
  te_ctx *ctx = te_ctx_new();
  char *got = lower_case(ctx, name, "cuda");
  char *again = lower_case(ctx, name, "cuda");
  cr_expect_str_eq(got, again, "lowering twice must print the same text");
  char path[512];
  snprintf(path, sizeof path, "%s/test/unit/gpu_golden/%s.txt", TE_SOURCE_DIR, name);
  const char *update = getenv("TE_GOLDEN_UPDATE");
  if (update && *update && strcmp(update, "0")) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(got, f);
    fclose(f);
  }
  char *want = read_text(path);
  cr_assert_not_null(want, "missing %s (run with TE_GOLDEN_UPDATE=1)", path);
  cr_expect_str_eq(got, want, "%s differs; got:\n%s", path, got);
  free(want);
  te_free(got);
  te_free(again);
  te_ctx_free(ctx);
}

Test(gpu_lower, elementwise) { golden("elementwise"); }
Test(gpu_lower, reduce_shared_barrier) { golden("reduce"); }
Test(gpu_lower, matmul_shared_tiles) { golden("matmul"); }
Test(gpu_lower, softmax) { golden("softmax"); }

/* The facts the golden texts show, checked on the structure itself. */
Test(gpu_lower, matmul_structure) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(gpu_case_matmul(ctx, &c));
  te_target *t = te_target_parse(ctx, "cuda");
  ir_scratch_begin(ctx);
  lw_func *f = NULL;
  cr_assert_eq(lw_lower(c.sch, "mm", c.ntensors, c.tensors, 0, NULL, t, &f), TE_OK, "%s",
               te_last_error(ctx));
  lw_gpu_module *m = f->gpu;
  cr_assert_not_null(m);
  cr_assert_eq(m->nkernels, 1);
  lw_gpu_kernel *k = &m->kernels[0];
  int64_t v;
  cr_expect(ir_is_const_int(k->grid[0], &v) && v == 8);
  cr_expect(ir_is_const_int(k->grid[1], &v) && v == 8);
  cr_expect(ir_is_const_int(k->block[0], &v) && v == 16);
  cr_expect(ir_is_const_int(k->block[1], &v) && v == 16);
  cr_expect_eq(k->nshared, 2);
  cr_expect_eq(k->shared_bytes, 2 * 256 * 4);
  cr_expect(k->uses_barrier);
  cr_expect_eq(k->nparams, 3);
  cr_expect(k->params[0].read && !k->params[0].written);
  cr_expect(k->params[2].written);
  cr_expect_not_null(k->idx[TE_THREAD_X]);
  cr_expect_null(k->idx[TE_THREAD_Z]);
  cr_expect_eq(m->nsteps, 1);
  cr_expect_eq(m->steps[0].kind, LW_GPU_STEP_LAUNCH);
  ir_scratch_end(ctx);
  te_ctx_free(ctx);
}

/* Stages at root, each its own kernel: the intermediates become device temporaries. */
Test(gpu_lower, two_kernels_with_a_temporary) {
  te_ctx *ctx = te_ctx_new();
  te_expr *i = te_var(ctx, "i");
  te_expr *n = te_int(ctx, 1024);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, TE_EXPRS(n));
  te_tensor *b = te_compute(ctx, "B", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_call(ctx, "exp", 1, TE_EXPRS(TE_AT(a, i))));
  te_tensor *out = te_compute(ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                              te_add(TE_AT(b, i), te_float(ctx, TE_F32, 1.0)));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){out});
  te_tensor *stages[2] = {b, out};
  for (int k = 0; k < 2; k++) {
    te_stage *st = te_stage_of(s, stages[k]);
    te_iter *o, *in;
    cr_assert_eq(te_split(st, te_axis(st, 0), 128, &o, &in), TE_OK);
    cr_assert_eq(te_bind(st, o, TE_BLOCK_X), TE_OK);
    cr_assert_eq(te_bind(st, in, TE_THREAD_X), TE_OK);
  }
  char *text =
      te_lower_text_for(s, te_target_parse(ctx, "cuda"), 2, (te_tensor *const[]){a, out}, 0, NULL);
  cr_assert_not_null(text, "%s", te_last_error(ctx));
  cr_expect(strstr(text, "alloc B[f32 * 1024]"), "%s", text);
  cr_expect(strstr(text, "launch main_kernel0"), "%s", text);
  cr_expect(strstr(text, "launch main_kernel1"), "%s", text);
  cr_expect(strstr(text, "free B"), "%s", text);
  cr_expect(strstr(text, "kernel main_kernel1(A") == NULL, "kernel 1 does not read A:\n%s", text);
  te_free(text);
  te_ctx_free(ctx);
}

/* A CPU target lowers thread-bound loops as loops (the GPU passes do nothing). */
Test(gpu_lower, cpu_target_unchanged) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(gpu_case_elementwise(ctx, &c));
  char *text = te_lower_text(c.sch, c.ntensors, c.tensors, 0, NULL);
  cr_assert_not_null(text);
  cr_expect(strstr(text, "thread(blockIdx.x)"), "%s", text);
  cr_expect(strstr(text, "launch") == NULL);
  te_free(text);
  te_ctx_free(ctx);
}

/* The vulkan target's smaller default limit: 16 x 16 threads fit, its shared memory too. */
Test(gpu_lower, vulkan_limits) {
  te_ctx *ctx = te_ctx_new();
  char *text = lower_case(ctx, "matmul", "vulkan");
  cr_expect(strstr(text, "block(16, 16, 1)"), "%s", text);
  te_free(text);
  te_ctx_free(ctx);
}
