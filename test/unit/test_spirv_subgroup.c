/* test_spirv_subgroup.c — cross-thread reductions through subgroup operations on vulkan
 * (lib/lower/gpu_tree_subgroup.c, lib/codegen/spirv_subgroup.c): B[i] = R_k A[i, k], k split by
 * T threads and rfactored, a row a workgroup, for R = sum, max, min, product on f32, f64, i32
 * and i64, T = 20, 48, 100, 256 (K = 1000: no T divides it). For each kernel:
 *   - both modules (with subgroup operations, and the plain one for devices without them) are
 *     validated in-process and by `spirv-val --target-env vulkan1.1`; the first holds
 *     OpGroupNonUniform<op> with Reduce, the second none;
 *   - each module is RUN on the machine's Vulkan device (lavapipe: subgroups of 8 with
 *     arithmetic) through libte_runtime's launcher on random non-zero inputs and a poisoned
 *     output, against a plain C reduction (skipped without a device; the subgroup module is
 *     skipped, visibly, on a device without subgroup arithmetic).
 * Two- and three-dimensional workgroups get the shared-memory tree only (one module, no
 * subgroup operations: lavapipe's subgroups of such workgroups are not the ones SubgroupId and
 * NumSubgroups describe, gpu_tree_subgroup.c): the partials over threadIdx.x and y (and z) of
 * the whole workgroup, and along y and z while threadIdx.x indexes 3 outputs (a tree per x),
 * validated and run the same way.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/spirv.h"
#include "gpu_cases.h"
#include "lower/gpu_lower.h"
#include "runtime/vulkan.h"
#include "te/te.h"
#include "te_test.h"

typedef te_expr *(*reduce_fn)(te_expr *, int, te_expr *const[]);

typedef struct sg_case {
  const char *name;
  reduce_fn red;
  int op; /* 0 sum, 1 max, 2 min, 3 product */
  te_dtype dt;
  int64_t threads;
  const char *spv_op; /* the instruction expected in the subgroup module (NULL: none made) */
  gpu_partials layout;
  int64_t inner, inner2;
} sg_case;

enum { ROWS = 9, K = 1000, COLS = 3 };

static te_schedule *sg_schedule(te_ctx *ctx, const sg_case *c, te_tensor **A, te_tensor **B) {
  te_expr *i = te_var(ctx, "i");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, K));
  *A = te_placeholder(ctx, "A", c->dt, 2, TE_EXPRS(te_int(ctx, ROWS), te_int(ctx, K)));
  *B = te_compute(ctx, "B", 1, TE_EXPRS(te_int(ctx, ROWS)), TE_EXPRS(i),
                  c->red(TE_AT(*A, i, k), 1, TE_EXPRS(k)));
  cr_assert_not_null(*B, "%s", te_last_error(ctx));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){*B});
  te_stage *sb = te_stage_of(s, *B);
  te_iter *ko = NULL, *ki = NULL, *io = NULL, *ii = NULL;
  te_tensor *rf = NULL;
  cr_assert_eq(te_split(sb, te_reduce_iter(sb, 0), c->threads, &ko, &ki), TE_OK);
  cr_assert_eq(te_rfactor(s, *B, ki, 0, &rf), TE_OK, "%s", te_last_error(ctx));
  te_stage *srf = te_stage_of(s, rf);
  if (c->layout == ALONG_YZ_COLS_X) {
    cr_assert_eq(te_split(sb, te_axis(sb, 0), COLS, &io, &ii), TE_OK);
    cr_assert_eq(te_bind(sb, ii, TE_THREAD_X), TE_OK);
  } else
    io = te_axis(sb, 0);
  cr_assert_eq(te_bind(sb, io, TE_BLOCK_X), TE_OK);
  cr_assert_eq(te_compute_at(srf, sb, io), TE_OK);
  cr_assert_eq(gpu_bind_partials(srf, c->layout, c->inner, c->inner2), TE_OK);
  return s;
}

static void spirv_val(const char *what, const uint32_t *words, size_t nwords) {
  if (system("command -v spirv-val > /dev/null 2>&1") != 0) {
    tt_skip_part("spirv-val", "spirv-val not installed: %s is not validated", what);
    return;
  }
  char path[] = "/tmp/te_spirv_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, words, nwords * 4), (ssize_t)(nwords * 4));
  close(fd);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "spirv-val --target-env vulkan1.1 %s", path);
  int rc = system(cmd);
  unlink(path);
  cr_assert_eq(rc, 0, "spirv-val rejected %s", what);
}

static bool is_int(te_dtype t) { return t.code == kDLInt; }

/* Random non-zero inputs (max of negative values, min of positive ones: a value read past the
   partials would show; products of values near 1 or of +-1 integers). */
static void fill(const sg_case *c, void *data, int64_t n) {
  unsigned seed = 99u + (unsigned)c->threads;
  for (int64_t i = 0; i < n; i++) {
    double u = (rand_r(&seed) % 10000) / 10000.0;
    int64_t v = (int64_t)(rand_r(&seed) % 2001) - 1000;
    if (v == 0)
      v = 5;
    if (c->op == 1)
      v = -1 - (rand_r(&seed) % 1000);
    if (c->op == 2)
      v = 1 + (rand_r(&seed) % 1000);
    if (c->op == 3)
      v = rand_r(&seed) % 2 ? 1 : -1;
    double f = c->op == 0   ? u * 2 - 1 + 0.001
               : c->op == 1 ? -2 + 1.9 * u
               : c->op == 2 ? 0.1 + 1.9 * u
                            : 0.999 + 0.002 * u;
    if (is_int(c->dt) && c->dt.bits == 32)
      ((int32_t *)data)[i] = (int32_t)v;
    else if (is_int(c->dt))
      ((int64_t *)data)[i] = v;
    else if (c->dt.bits == 32)
      ((float *)data)[i] = (float)f;
    else
      ((double *)data)[i] = f;
  }
}

static double get(const sg_case *c, const void *data, int64_t i) {
  if (is_int(c->dt))
    return c->dt.bits == 32 ? ((const int32_t *)data)[i] : (double)((const int64_t *)data)[i];
  return c->dt.bits == 32 ? ((const float *)data)[i] : ((const double *)data)[i];
}

/* Runs one module on the device and compares with C. */
static void run_module(const sg_case *c, const lw_gpu_kernel *k, const uint32_t *words,
                       size_t nwords, const char *which) {
  size_t eb = (size_t)c->dt.bits / 8;
  void *a = malloc(eb * ROWS * K), *out = malloc(eb * ROWS);
  fill(c, a, ROWS * K);
  te_rt_vk_buffer *bufs[2] = {NULL, NULL};
  cr_assert_eq(te_rt_vk_buffer_new(eb * ROWS * K, &bufs[0]), 0, "%s", te_rt_last_error());
  cr_assert_eq(te_rt_vk_buffer_write(bufs[0], 0, a, eb * ROWS * K), 0);
  cr_assert_eq(te_rt_vk_buffer_new(eb * ROWS, &bufs[1]), 0);
  memset(te_rt_vk_buffer_data(bufs[1]), 0xff, eb * ROWS); /* poison: NaN, or -1 */
  cr_assert_eq(k->nparams, 2);
  cr_assert(k->params[0].buffer->arg_index == 0 && k->params[1].buffer->arg_index == 1);
  te_rt_vk_kernel *pipe = NULL;
  cr_assert_eq(te_rt_vk_kernel_new(k->name, words, nwords, k->name, 2, 0, &pipe), 0, "%s",
               te_rt_last_error());
  uint64_t g[3] = {c->layout == ALONG_YZ_COLS_X ? ROWS / COLS : ROWS, 1, 1};
  cr_assert_eq(te_rt_vk_dispatch(pipe, 2, bufs, NULL, 0, g), 0, "%s", te_rt_last_error());
  cr_assert_eq(te_rt_vk_buffer_read(bufs[1], 0, out, eb * ROWS), 0);
  int bad = 0;
  for (int r = 0; r < ROWS; r++) {
    double ref = c->op == 3 ? 1 : 0, mag = 0;
    for (int j = 0; j < K; j++) {
      double x = get(c, a, (int64_t)r * K + j);
      ref = c->op == 0   ? ref + x
            : c->op == 1 ? (j == 0 ? x : fmax(ref, x))
            : c->op == 2 ? (j == 0 ? x : fmin(ref, x))
                         : ref * x;
      mag += fabs(x);
    }
    double got = get(c, out, r);
    double eps = is_int(c->dt) ? 0 : c->dt.bits == 32 ? 1e-6 : 1e-14;
    double tol = c->op == 0 ? 4 * eps * mag : c->op == 3 ? 4 * eps * K * fabs(ref) : 0;
    if (!(fabs(got - ref) <= tol) && bad++ < 5)
      cr_expect_fail("%s (%s module): B[%d] = %.17g, expected %.17g", c->name, which, r, got, ref);
  }
  cr_expect_eq(bad, 0, "%s (%s module): %d rows differ", c->name, which, bad);
  te_rt_vk_kernel_free(pipe);
  te_rt_vk_buffer_free(bufs[0]);
  te_rt_vk_buffer_free(bufs[1]);
  free(a), free(out);
}

static void check(const sg_case *c) {
  te_ctx *ctx = te_ctx_new();
  te_tensor *A = NULL, *B = NULL;
  te_schedule *sch = sg_schedule(ctx, c, &A, &B);
  ir_scratch_begin(ctx);
  lw_func *f = NULL;
  cr_assert_eq(lw_lower(sch, c->name, 2, (te_tensor *const[]){A, B}, 0, NULL,
                        te_target_parse(ctx, "vulkan"), &f),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert(f->gpu && f->gpu->nkernels == 1);
  const lw_gpu_kernel *k = &f->gpu->kernels[0];
  cg_spv_kernel sk;
  cr_assert_eq(cg_spv_compile_kernel(ctx, k, true, &sk), TE_OK, "%s", te_last_error(ctx));
  if (!c->spv_op) { /* one module: the shared-memory tree */
    cr_expect_null(sk.plain_words, "%s: a second module", c->name);
    cr_expect(!(sk.features & CG_SPV_SUBGROUP));
    char *dis = cg_spv_disassemble(sk.words, sk.nwords);
    cr_assert(dis);
    cr_expect(strstr(dis, "GroupNonUniform") == NULL, "%s: subgroups in\n%s", c->name, dis);
    int barriers = 0; /* the serial loop has one, the tree one a step more */
    for (const char *q = dis; (q = strstr(q, "OpControlBarrier")); q++)
      barriers++;
    cr_expect_geq(barriers, 3, "%s: %d barriers (no tree) in\n%s", c->name, barriers, dis);
    free(dis);
    spirv_val("the module", sk.words, sk.nwords);
    sk.plain_words = sk.words, sk.plain_nwords = sk.nwords, sk.words = NULL;
  } else {
    cr_assert_not_null(sk.plain_words, "%s: no module without subgroup operations", c->name);
    cr_expect(sk.features & CG_SPV_SUBGROUP);
    cr_expect(!(sk.plain_features & CG_SPV_SUBGROUP));
    char *dis = cg_spv_disassemble(sk.words, sk.nwords);
    char *pdis = cg_spv_disassemble(sk.plain_words, sk.plain_nwords);
    cr_assert(dis && pdis);
    char want[80];
    snprintf(want, sizeof want, "%s %%", c->spv_op);
    cr_expect(strstr(dis, want) && strstr(dis, "Reduce") && strstr(dis, "OpGroupNonUniformElect") &&
                  strstr(dis, "SubgroupId") && strstr(dis, "NumSubgroups"),
              "%s: no subgroup reduction (%s) in\n%s", c->name, c->spv_op, dis);
    cr_expect(strstr(pdis, "OpGroupNonUniform") == NULL && strstr(pdis, "GroupNonUniform") == NULL,
              "%s: the plain module uses subgroups:\n%s", c->name, pdis);
    free(dis), free(pdis);
    spirv_val("the subgroup module", sk.words, sk.nwords);
    spirv_val("the plain module", sk.plain_words, sk.plain_nwords);
  }
  if (te_rt_vk_init() != 0)
    tt_skip("vulkan", "no Vulkan device: %s", te_rt_last_error());
  const te_rt_vk_info *in = te_rt_vk_device_info();
  if ((c->dt.bits == 64 && ((is_int(c->dt) && !in->int64) || (!is_int(c->dt) && !in->float64))))
    tt_skip("vulkan", "%s: device '%s' lacks 64-bit %s", c->name, in->name,
            is_int(c->dt) ? "integers" : "floats");
  run_module(c, k, sk.plain_words, sk.plain_nwords, "plain");
  if (!sk.words)
    ;
  else if (!in->subgroup_arith)
    tt_skip_part("vulkan-subgroup", "%s: device '%s' has no subgroup arithmetic", c->name,
                 in->name);
  else
    run_module(c, k, sk.words, sk.nwords, "subgroup");
  free(sk.words), free(sk.plain_words);
  ir_scratch_end(ctx);
  te_ctx_free(ctx);
}

Test(spirv_subgroup, sum_f32_48) {
  check(&(sg_case){"sg_sum48", te_sum, 0, TE_F32, 48, "OpGroupNonUniformFAdd", .layout = ALONG_X});
}
Test(spirv_subgroup, sum_f32_256) {
  check(
      &(sg_case){"sg_sum256", te_sum, 0, TE_F32, 256, "OpGroupNonUniformFAdd", .layout = ALONG_X});
}
Test(spirv_subgroup, max_f32_100) {
  check(&(sg_case){"sg_max100", te_max_r, 1, TE_F32, 100, "OpGroupNonUniformFMax",
                   .layout = ALONG_X});
}
Test(spirv_subgroup, min_f64_20) {
  check(
      &(sg_case){"sg_min20", te_min_r, 2, TE_F64, 20, "OpGroupNonUniformFMin", .layout = ALONG_X});
}
Test(spirv_subgroup, product_f32_64) {
  check(
      &(sg_case){"sg_prod64", te_prod, 3, TE_F32, 64, "OpGroupNonUniformFMul", .layout = ALONG_X});
}
Test(spirv_subgroup, sum_i32_48) {
  check(&(sg_case){"sg_isum48", te_sum, 0, TE_I32, 48, "OpGroupNonUniformIAdd", .layout = ALONG_X});
}
Test(spirv_subgroup, max_i64_96) {
  check(
      &(sg_case){"sg_imax96", te_max_r, 1, TE_I64, 96, "OpGroupNonUniformSMax", .layout = ALONG_X});
}
Test(spirv_subgroup, sum_f32_xy_8x6) {
  check(&(sg_case){"sg_sum_xy", te_sum, 0, TE_F32, 48, NULL, ALONG_XY, .inner = 8});
}
Test(spirv_subgroup, max_i32_xy_5x7) { /* 35: not a multiple of lavapipe's subgroups of 8 */
  check(&(sg_case){"sg_imax_xy", te_max_r, 1, TE_I32, 35, NULL, ALONG_XY, .inner = 5});
}
Test(spirv_subgroup, product_f64_xyz_4x3x5) {
  check(
      &(sg_case){"sg_prod_xyz", te_prod, 3, TE_F64, 60, NULL, ALONG_XYZ, .inner = 4, .inner2 = 12});
}
Test(spirv_subgroup, sum_f32_yz_cols_x_shared_tree) { /* 3 trees of 5 x 4 a workgroup */
  check(&(sg_case){"sg_sum_yz", te_sum, 0, TE_F32, 20, NULL, ALONG_YZ_COLS_X, .inner = 5});
}
Test(spirv_subgroup, min_i64_yz_cols_x_shared_tree) {
  check(&(sg_case){"sg_imin_yz", te_min_r, 2, TE_I64, 21, NULL, ALONG_YZ_COLS_X, .inner = 7});
}

Test(spirv_subgroup, min_i32_33) {
  check(
      &(sg_case){"sg_imin33", te_min_r, 2, TE_I32, 33, "OpGroupNonUniformSMin", .layout = ALONG_X});
}
