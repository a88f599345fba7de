/* test_vulkan.c — the "vulkan" target end to end: every GPU kernel of the suite (gpu_cases.h,
 * plus conv2d and element-wise maps over many operators and dtypes) is built to SPIR-V, RUN on
 * the machine's Vulkan device (Mesa's lavapipe on CPU-only machines) on poisoned outputs and
 * compared with a plain C reference.
 *
 * Without a Vulkan driver a call fails with TE_ERR_RUNTIME "no Vulkan driver": the test prints
 * a SKIP line and is reported as skipped (ctest passes; TE_REQUIRE=vulkan makes it fail).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "../common/gpu_cases.h"
#include "../common/gpu_ref.h"
#include "../common/te_test.h"

TestSuite(vulkan, .init = tt_setup, .fini = tt_teardown);

static te_module *vk_build(te_schedule *s, const char *name, int nt, te_tensor *const ts[], int ns,
                           te_expr *const sc[]) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_module *m = NULL;
  TT_OK(te_build(s, name, nt, ts, ns, sc, t, &m));
  return m;
}

/* Calls a vulkan kernel on poisoned outputs; skips the test when there is no Vulkan driver. */
static void vk_call(te_module *m, const char *name, int nt, tt_buf *const bufs[], int ns,
                    const void *const sc[]) {
  DLTensor *dl[16];
  tt_dl(nt, bufs, dl);
  te_status st = te_module_call(m, name, nt, dl, ns, sc);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
    tt_skip("vulkan", "kernel %s: %s", name, te_last_error(tt_ctx));
  TT_OK(st);
}

static void vk_case(gpu_case_builder build, gpu_case *c) {
  cr_assert(build(tt_ctx, c), "building the case failed: %s", te_last_error(tt_ctx));
}

Test(vulkan, elementwise_symbolic_n) {
  gpu_case c;
  vk_case(gpu_case_elementwise, &c);
  te_module *m = vk_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL);
  static const int64_t sizes[] = {1000, 1, 64, 4097}; /* tails, one element, exact, growth */
  for (int t = 0; t < 4; t++) {
    int64_t n = sizes[t];
    tt_note("n = %lld", (long long)n);
    tt_buf *a = TT_ALLOC(TE_F32, n), *b = TT_ALLOC(TE_F32, n);
    tt_buf *got = TT_ALLOC(TE_F32, n), *ref = TT_ALLOC(TE_F32, n);
    tt_fill(a, 1 + (uint64_t)t);
    tt_fill(b, 7 + (uint64_t)t);
    gpu_ref_elementwise(a, b, ref);
    vk_call(m, c.name, 3, TT_BUFS(a, b, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
}

Test(vulkan, reduce_shared_memory_and_barrier) {
  gpu_case c;
  vk_case(gpu_case_reduce, &c);
  te_module *m = vk_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL);
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  cr_expect(strstr(dis, "OpControlBarrier") && strstr(dis, "Workgroup"), "%s", dis);
  tt_buf *a = TT_ALLOC(TE_F32, 64, 1024), *got = TT_ALLOC(TE_F32, 64), *ref = TT_ALLOC(TE_F32, 64);
  tt_fill(a, 3);
  gpu_ref_rowsum(a, ref);
  vk_call(m, c.name, 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, 1024);
}

Test(vulkan, matmul_shared_tiles) {
  enum { N = 128 };
  gpu_case c;
  vk_case(gpu_case_matmul, &c);
  te_module *m = vk_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, N, N), *b = TT_ALLOC(TE_F32, N, N);
  tt_buf *got = TT_ALLOC(TE_F32, N, N), *ref = TT_ALLOC(TE_F32, N, N);
  tt_fill(a, 4);
  tt_fill(b, 5);
  tt_ref_matmul(a, b, ref, N, N, N);
  vk_call(m, c.name, 3, TT_BUFS(a, b, got), 0, NULL);
  tt_assert_close(got, ref, N);
}

Test(vulkan, softmax_rows) {
  enum { R = 32, L = 256 };
  gpu_case c;
  vk_case(gpu_case_softmax, &c);
  te_module *m = vk_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL);
  tt_buf *x = TT_ALLOC(TE_F32, R, L), *got = TT_ALLOC(TE_F32, R, L), *ref = TT_ALLOC(TE_F32, R, L);
  tt_fill(x, 6);
  gpu_ref_softmax(x, ref);
  vk_call(m, c.name, 2, TT_BUFS(x, got), 0, NULL);
  tt_assert_close(got, ref, L);
}

/* conv2d NCHW, 3x3, padding 1 (the padding inlined: a select that must not read out of
   bounds): a 16-channel output pixel a thread, 4 x 16 workgroups. */
Test(vulkan, conv2d_padded) {
  enum { C = 8, H = 16, W = 16, O = 16, K = 3 };
  te_tensor *data = tt_placeholder("data", TE_F32, 4, TT_SHAPE(1, C, H, W));
  te_tensor *kern = tt_placeholder("kern", TE_F32, 4, TT_SHAPE(O, C, K, K));
  te_conv2d_params p = {.pad_h = 1, .pad_w = 1};
  te_tensor *out = TT_NN(te_op_conv2d_nchw(tt_ctx, data, kern, &p, "conv"));
  te_schedule *s = tt_schedule1(out);
  te_stage *so = tt_stage(s, out);
  TT_OK(te_compute_inline(tt_stage(s, TT_NN(te_op_stage(out, "pad")))));
  te_iter *no = NULL, *yx = NULL, *bx = NULL, *tx = NULL;
  TT_OK(te_fuse(so, te_axis(so, 0), te_axis(so, 1), &no));
  TT_OK(te_fuse(so, te_axis(so, 2), te_axis(so, 3), &yx));
  TT_OK(te_split(so, yx, 64, &bx, &tx));
  TT_OK(te_bind(so, no, TE_BLOCK_Y));
  TT_OK(te_bind(so, bx, TE_BLOCK_X));
  TT_OK(te_bind(so, tx, TE_THREAD_X));
  te_module *m = vk_build(s, "conv", 3, TT_TENSORS(data, kern, out), 0, NULL);
  tt_buf *d = TT_ALLOC(TE_F32, 1, C, H, W), *k = TT_ALLOC(TE_F32, O, C, K, K);
  tt_buf *got = TT_ALLOC(TE_F32, 1, O, H, W), *ref = TT_ALLOC(TE_F32, 1, O, H, W);
  tt_fill(d, 8);
  tt_fill(k, 9);
  for (int o = 0; o < O; o++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        double acc = 0;
        for (int c = 0; c < C; c++)
          for (int ry = 0; ry < K; ry++)
            for (int rx = 0; rx < K; rx++) {
              int iy = y + ry - 1, ix = x + rx - 1;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                acc +=
                    tt_get(d, (c * H + iy) * W + ix) * tt_get(k, ((o * C + c) * K + ry) * K + rx);
            }
        tt_set(ref, (o * H + y) * W + x, acc);
      }
  vk_call(m, "conv", 3, TT_BUFS(d, k, got), 0, NULL);
  tt_assert_close(got, ref, C * K * K);
}

/* ---- element-wise maps: the same expression on Vulkan and in plain C ---- */

typedef struct vk_map {
  const char *name;
  te_dtype in[2], out;
  double lo, hi; /* input range (lo == hi: tt_fill) */
  te_expr *(*body)(te_expr *a, te_expr *b);
  /* out[i] in plain C: floats in double (the f32 roundings where a result is discontinuous in
     them: floor, round, casts), integers exactly */
  void (*ref)(const tt_buf *a, const tt_buf *b, tt_buf *out, int64_t i);
} vk_map;

static float f32_at(const tt_buf *t, int64_t i) { return (float)tt_get(t, i); }

static te_expr *m_math(te_expr *a, te_expr *b) {
  te_ctx *c = tt_ctx;
  te_expr *e = te_add(te_call(c, "exp", 1, TE_EXPRS(te_mul(a, te_float(c, TE_F32, 0.5)))),
                      te_call(c, "log", 1, TE_EXPRS(te_call(c, "abs", 1, TE_EXPRS(b)))));
  e = te_add(e, te_call(c, "tanh", 1, TE_EXPRS(te_mul(a, b))));
  e = te_add(e, te_call(c, "sigmoid", 1, TE_EXPRS(b)));
  e = te_add(e, te_call(c, "erf", 1, TE_EXPRS(a)));
  e = te_add(e, te_call(c, "sqrt", 1, TE_EXPRS(te_call(c, "abs", 1, TE_EXPRS(a)))));
  e = te_add(e, te_call(c, "floor", 1, TE_EXPRS(te_mul(a, te_float(c, TE_F32, 3)))));
  e = te_add(e, te_call(c, "round", 1, TE_EXPRS(te_mul(b, te_float(c, TE_F32, 2)))));
  e = te_add(e, te_call(c, "pow", 2, TE_EXPRS(a, te_float(c, TE_F32, 3))));
  e = te_add(e, te_max(te_min(a, b), te_float(c, TE_F32, -0.5)));
  return te_add(e, te_call(c, "log10", 1, TE_EXPRS(te_call(c, "exp2", 1, TE_EXPRS(b)))));
}
static void r_math(const tt_buf *ta, const tt_buf *tb, tt_buf *out, int64_t i) {
  float fa = f32_at(ta, i), fb = f32_at(tb, i);
  double a = fa, b = fb;
  double e = exp(a * 0.5) + log(fabs(b)) + tanh(a * b) + 1 / (1 + exp(-b)) + erf(a) + sqrt(fabs(a));
  e += floorf(fa * 3.0f) + roundf(fb * 2.0f) + pow(a, 3) + fmax(fmin(a, b), -0.5);
  tt_set(out, i, e + log10(exp2(b)));
}
static te_expr *m_select(te_expr *a, te_expr *b) {
  return te_select(te_and(te_lt(a, b), te_not(te_eq(a, te_float(tt_ctx, TE_F32, 0)))), te_sub(a, b),
                   te_div(a, b));
}
static void r_select(const tt_buf *ta, const tt_buf *tb, tt_buf *out, int64_t i) {
  float a = f32_at(ta, i), b = f32_at(tb, i);
  tt_set(out, i, a < b && a != 0 ? (double)(a - b) : (double)(a / b));
}
static te_expr *m_intdiv(te_expr *a, te_expr *b) {
  return te_add(te_mul(te_floordiv(a, b), te_int(tt_ctx, 100)), te_floormod(a, b));
}
static void r_intdiv(const tt_buf *ta, const tt_buf *tb, tt_buf *out, int64_t i) {
  int64_t a = tt_geti(ta, i), b = tt_geti(tb, i);
  tt_seti(out, i, tt_floordiv(a, b) * 100 + tt_floormod(a, b));
}
static te_expr *m_i64(te_expr *a, te_expr *b) {
  /* 64-bit data: values beyond 32 bits */
  te_expr *big = te_mul(a, te_cast(TE_I64, te_int(tt_ctx, 3000000000LL)));
  return te_add(big, te_floordiv(b, te_cast(TE_I64, te_int(tt_ctx, 4))));
}
static void r_i64(const tt_buf *ta, const tt_buf *tb, tt_buf *out, int64_t i) {
  tt_seti(out, i, tt_geti(ta, i) * 3000000000LL + tt_floordiv(tt_geti(tb, i), 4));
}
static te_expr *m_casts(te_expr *a, te_expr *b) {
  te_expr *i = te_cast(TE_I32, te_mul(a, te_float(tt_ctx, TE_F32, 10)));
  te_expr *u = te_cast(TE_U32, te_add(te_cast(TE_I32, b), te_int(tt_ctx, 100)));
  te_expr *bl = te_cast(TE_F32, te_gt(a, b));
  return te_add(te_add(te_cast(TE_F32, i), te_cast(TE_F32, u)), bl);
}
static void r_casts(const tt_buf *ta, const tt_buf *tb, tt_buf *out, int64_t i) {
  float a = f32_at(ta, i), b = f32_at(tb, i);
  int32_t iv = (int32_t)(a * 10.0f);
  uint32_t uv = (uint32_t)((int32_t)b + 100);
  tt_set(out, i, (double)((float)iv + (float)uv + (a > b ? 1.0f : 0.0f)));
}
static te_expr *m_f64(te_expr *a, te_expr *b) {
  te_ctx *c = tt_ctx;
  return te_add(te_call(c, "fma", 3, TE_EXPRS(a, b, te_float(c, TE_F64, 0.25))),
                te_call(c, "sqrt", 1, TE_EXPRS(te_mul(a, a))));
}
static void r_f64(const tt_buf *ta, const tt_buf *tb, tt_buf *out, int64_t i) {
  double a = tt_get(ta, i), b = tt_get(tb, i);
  tt_set(out, i, fma(a, b, 0.25) + sqrt(a * a));
}

static const vk_map vk_maps[] = {
    {"math_f32", {TE_F32, TE_F32}, TE_F32, -1.5, 1.5, m_math, r_math},
    {"select_f32", {TE_F32, TE_F32}, TE_F32, 0, 0, m_select, r_select},
    {"floordiv_i32", {TE_I32, TE_I32}, TE_I32, -50, 50, m_intdiv, r_intdiv},
    {"floordiv_i64", {TE_I64, TE_I64}, TE_I64, -50, 50, m_intdiv, r_intdiv},
    {"data_i64", {TE_I64, TE_I64}, TE_I64, -1000, 1000, m_i64, r_i64},
    {"casts", {TE_F32, TE_F32}, TE_F32, -3, 3, m_casts, r_casts},
    {"f64", {TE_F64, TE_F64}, TE_F64, 0, 0, m_f64, r_f64},
};

static void vk_run_map(const vk_map *mp, int64_t n) {
  tt_note("map %s, n = %lld", mp->name, (long long)n);
  te_expr *nv = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", mp->in[0], 1, TE_EXPRS(nv)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", mp->in[1], 1, TE_EXPRS(nv)));
  te_tensor *C = TT_NN(
      te_compute(tt_ctx, "C", 1, TE_EXPRS(nv), TE_EXPRS(i), mp->body(tt_at1(A, i), tt_at1(B, i))));
  tt_buf *a = TT_ALLOC(mp->in[0], n), *b = TT_ALLOC(mp->in[1], n);
  tt_buf *got = TT_ALLOC(mp->out, n), *ref = TT_ALLOC(mp->out, n);
  if (mp->lo == mp->hi) {
    tt_fill(a, 11), tt_fill(b, 12);
  } else {
    tt_fill_range(a, 11, mp->lo, mp->hi), tt_fill_range(b, 12, mp->lo, mp->hi);
  }
  for (int64_t k = 0; k < n; k++)
    mp->ref(a, b, ref, k);

  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_module *m = vk_build(s, "gpu", 3, TT_TENSORS(A, B, C), 0, NULL);
  tt_poison(got);
  vk_call(m, "gpu", 3, TT_BUFS(a, b, got), 0, NULL);
  tt_assert_close(got, ref, 1);
}

Test(vulkan, maps_against_c) {
  for (size_t k = 0; k < sizeof vk_maps / sizeof vk_maps[0]; k++)
    vk_run_map(&vk_maps[k], 333);
}

/* Scalar parameters travel as push constants: f32 alpha, i32 shift, i64 offset. */
Test(vulkan, scalar_params) {
  enum { L = 100 };
  te_expr *alpha = TT_NN(te_param(tt_ctx, "alpha", TE_F32));
  te_expr *shift = TT_NN(te_param(tt_ctx, "shift", TE_I32));
  te_expr *off = TT_NN(te_param(tt_ctx, "off", TE_I64));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(L));
  te_expr *idx = te_floormod(te_add(i, off), te_int(tt_ctx, L)); /* a wide index, narrowed */
  te_expr *body = te_add(te_mul(alpha, tt_at1(A, idx)), te_cast(TE_F32, shift));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, L)), TE_EXPRS(i), body));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), 16, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_module *m = vk_build(s, "axpb", 2, TT_TENSORS(A, C), 3, TE_EXPRS(alpha, shift, off));
  tt_buf *a = TT_ALLOC(TE_F32, L), *got = TT_ALLOC(TE_F32, L), *ref = TT_ALLOC(TE_F32, L);
  tt_fill(a, 13);
  float al = -1.25f;
  int32_t sh = 7;
  int64_t of = 3000000007LL; /* beyond 32 bits: the index is computed in 64 bits, then narrowed */
  for (int p = 0; p < L; p++)
    tt_set(ref, p, (double)(al * (float)tt_get(a, (p + of) % L) + (float)sh));
  tt_poison(got);
  vk_call(m, "axpb", 2, TT_BUFS(a, got), 3, (const void *const[]){&al, &sh, &of});
  tt_assert_close(got, ref, 1);
}

/* The module's SPIR-V text: one entry point per device kernel, with its workgroup size. */
Test(vulkan, spirv_disassembly) {
  gpu_case c;
  vk_case(gpu_case_matmul, &c);
  te_module *m = vk_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL);
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  cr_expect(strstr(dis, "OpEntryPoint GLCompute") != NULL, "%s", dis);
  cr_expect(strstr(dis, "LocalSize 16 16 1") != NULL, "%s", dis);
  cr_expect(strstr(dis, "OpLoopMerge") != NULL, "%s", dis);
  cr_expect(strstr(dis, "DescriptorSet 0") != NULL, "%s", dis);
  cr_expect(strstr(dis, "Int64") == NULL, "an f32 matmul needs no 64-bit integers:\n%s", dis);
}

/* TE_SAVE_SPIRV writes each device kernel's SPIR-V binary: "name.spv" for one kernel. */
Test(vulkan, save_spirv) {
  gpu_case c;
  vk_case(gpu_case_reduce, &c);
  te_module *m = vk_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL);
  char dir[] = "/tmp/te_spv_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char prefix[64], path[80];
  snprintf(prefix, sizeof prefix, "%s/rowsum", dir);
  TT_OK(te_module_save(m, prefix, TE_SAVE_SPIRV));
  snprintf(path, sizeof path, "%s.spv", prefix);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s was not written", path);
  uint32_t head[5] = {0};
  cr_assert_eq(fread(head, 4, 5, f), 5u);
  fclose(f);
  cr_expect_eq(head[0], 0x07230203u, "SPIR-V magic number");
  cr_expect_eq(head[1], 0x00010300u, "SPIR-V 1.3");
  char cmd[200];
  snprintf(cmd, sizeof cmd, "spirv-val --target-env vulkan1.1 %s", path);
  if (system("command -v spirv-val >/dev/null") == 0)
    cr_expect_eq(system(cmd), 0, "spirv-val rejected %s", path);
  else
    tt_skip_part("spirv-val", "spirv-val not installed: %s not validated", path);
  remove(path);
  rmdir(dir);
  cr_assert_eq(te_module_save(m, prefix, TE_SAVE_PTX), TE_ERR_TARGET);
}

/* Two stages bound separately: two device kernels, the intermediate T a device temporary that
   lives between the launches (allocated by the host steps, n symbolic). */
Test(vulkan, two_kernels_with_temporary) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *T = TT_NN(te_compute(tt_ctx, "T", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_mul(tt_at1(A, i), te_float(tt_ctx, TE_F32, 3))));
  te_tensor *C = TT_NN(
      te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                 te_add(tt_at1(T, i), tt_at1(T, te_floormod(te_add(i, te_int(tt_ctx, 1)), n)))));
  te_schedule *s = tt_schedule1(C);
  te_tensor *stages[2] = {T, C};
  for (int k = 0; k < 2; k++) {
    te_stage *st = tt_stage(s, stages[k]);
    te_iter *bx = NULL, *tx = NULL;
    TT_OK(te_split(st, te_axis(st, 0), k ? 32 : 64, &bx, &tx));
    TT_OK(te_bind(st, bx, TE_BLOCK_X));
    TT_OK(te_bind(st, tx, TE_THREAD_X));
  }
  te_module *m = vk_build(s, "two", 2, TT_TENSORS(A, C), 0, NULL);
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  cr_expect(strstr(dis, "two_kernel0") && strstr(dis, "two_kernel1"), "%s", dis);
  static const int64_t sizes[] = {100, 1000};
  for (int t = 0; t < 2; t++) {
    int64_t len = sizes[t];
    tt_buf *a = TT_ALLOC(TE_F32, len), *got = TT_ALLOC(TE_F32, len), *ref = TT_ALLOC(TE_F32, len);
    tt_fill(a, 20 + (uint64_t)t);
    for (int64_t q = 0; q < len; q++)
      tt_set(ref, q, 3 * tt_get(a, q) + 3 * tt_get(a, (q + 1) % len));
    vk_call(m, "two", 2, TT_BUFS(a, got), 0, NULL);
    tt_assert_close(got, ref, 2);
  }
}

/* if_then_else on Vulkan: a structured selection, only the chosen side evaluated. The
   neighbours of element i outside [0, n) are never read (nested: both guards), and a side whose
   value would be NaN (log of a negative element) is not chosen. n = 1000 is not a multiple of
   the 64 threads a workgroup. */
Test(vulkan, if_then_else_neighbours) {
  enum { N = 1000 };
  te_expr *n = te_int(tt_ctx, N), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_expr *one = te_int(tt_ctx, 1), *ai = tt_at1(A, i);
  te_expr *left = tt_at1(A, te_sub(i, one)), *right = tt_at1(A, te_add(i, one));
  te_expr *both = te_call(tt_ctx, "if_then_else", 3,
                          TE_EXPRS(te_lt(i, te_int(tt_ctx, N - 1)), te_add(left, right), left));
  te_expr *nb = te_call(tt_ctx, "if_then_else", 3,
                        TE_EXPRS(te_ge(i, one), both, te_mul(right, te_float(tt_ctx, TE_F32, 3))));
  te_expr *lg = te_call(tt_ctx, "if_then_else", 3,
                        TE_EXPRS(te_gt(ai, te_float(tt_ctx, TE_F32, 0)),
                                 te_call(tt_ctx, "log", 1, TE_EXPRS(ai)), ai));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(n), TE_EXPRS(i), te_add(nb, lg)));
  te_schedule *s = tt_schedule1(B);
  te_stage *st = tt_stage(s, B);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), 64, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_module *m = vk_build(s, "ite", 2, TT_TENSORS(A, B), 0, NULL);
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  int merges = 0;
  for (const char *p = dis; (p = strstr(p, "OpSelectionMerge")); p++)
    merges++;
  cr_expect_geq(merges, 3, "not a structured selection for each if_then_else:\n%s", dis);
  cr_expect(strstr(dis, "OpPhi"), "no OpPhi joining the sides:\n%s", dis);
  tt_buf *a = TT_ALLOC(TE_F32, N), *got = TT_ALLOC(TE_F32, N), *ref = TT_ALLOC(TE_F32, N);
  tt_fill(a, 21);
  for (int k = 0; k < N; k++) {
    double x = f32_at(a, k);
    double l = k >= 1 ? f32_at(a, k - 1) : 0, r = k < N - 1 ? f32_at(a, k + 1) : 0;
    double v = k >= 1 ? (k < N - 1 ? l + r : l) : 3 * r;
    tt_set(ref, k, v + (x > 0 ? log(x) : x));
  }
  tt_poison(got);
  vk_call(m, "ite", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, 1);
}

/* A reduction across blocks without atomics: te_rfactor's stage at the root, its factor axis
   bound to workgroups, is a kernel of its own writing a device temporary; the final sum over
   the factor axis is a second kernel (docs/gpu.md). B[i] = sum_k A[i, k], A 16 x 3000: k split
   by 128 (not dividing: 24 blocks, the last short). */
Test(vulkan, rfactor_across_blocks) {
  enum { R = 16, K = 3000 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A =
      TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, K))));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, R)), TE_EXPRS(i),
                                  TE_SUM(TE_AT(A, i, k), k)));
  te_schedule *s = tt_schedule1(B);
  te_stage *sb = tt_stage(s, B);
  te_iter *ko = NULL, *ki = NULL;
  te_tensor *rf = NULL;
  TT_OK(te_split(sb, te_reduce_iter(sb, 0), 128, &ko, &ki));
  TT_OK(te_rfactor(s, B, ko, 0, &rf)); /* rf[ko, i] = sum over ki */
  te_stage *srf = tt_stage(s, rf);
  TT_OK(te_bind(srf, te_axis(srf, 0), TE_BLOCK_X));
  TT_OK(te_bind(srf, te_axis(srf, 1), TE_THREAD_X));
  TT_OK(te_bind(sb, te_axis(sb, 0), TE_THREAD_X));
  te_module *m = vk_build(s, "xblock", 2, TT_TENSORS(A, B), 0, NULL);
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  int entries = 0;
  for (const char *p = dis; (p = strstr(p, "OpEntryPoint")); p++)
    entries++;
  cr_expect_eq(entries, 2, "two kernels expected:\n%s", dis);
  tt_buf *a = TT_ALLOC(TE_F32, R, K), *got = TT_ALLOC(TE_F32, R), *ref = TT_ALLOC(TE_F32, R);
  tt_fill(a, 31);
  for (int r = 0; r < R; r++) {
    double acc = 0;
    for (int c = 0; c < K; c++)
      acc += tt_get(a, (int64_t)r * K + c);
    tt_set(ref, r, acc);
  }
  tt_poison(got);
  vk_call(m, "xblock", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, K);
}

/* Cross-thread reductions as shared-memory trees (lib/lower/gpu_tree.c): B[i] = R_k A[i, k] for
   R = sum, max, min, A 20 x 1000; k split by 48 threads (not a power of two: the tree's guards)
   and rfactored, a row a workgroup; against C on lavapipe. The one-thread loop over the
   partials is gone from the lowered code. */
typedef te_expr *(*reduce_fn)(te_expr *, int, te_expr *const[]);

static void vk_tree_case(const char *name, reduce_fn red, int op) {
  enum { R = 20, K = 1000, T = 48 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A =
      TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, K))));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, R)), TE_EXPRS(i),
                                  red(TE_AT(A, i, k), 1, TE_EXPRS(k))));
  te_schedule *s = tt_schedule1(B);
  te_stage *sb = tt_stage(s, B);
  te_iter *ko = NULL, *ki = NULL;
  te_tensor *rf = NULL;
  TT_OK(te_split(sb, te_reduce_iter(sb, 0), T, &ko, &ki));
  TT_OK(te_rfactor(s, B, ki, 0, &rf)); /* rf[ki, i]: 48 partials a row */
  te_stage *srf = tt_stage(s, rf);
  TT_OK(te_bind(sb, te_axis(sb, 0), TE_BLOCK_X));
  TT_OK(te_compute_at(srf, sb, te_axis(sb, 0)));
  TT_OK(te_bind(srf, te_axis(srf, 0), TE_THREAD_X));
  te_target *t = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  char *text = TT_NN(te_lower_text_for(s, t, 2, TT_TENSORS(A, B), 0, NULL));
  cr_expect(strstr(text, "threadIdx.x + 32") && strstr(text, "threadIdx.x + 1]") &&
                !strstr(text, "if (threadIdx.x < 32)"),
            "%s: no tree (strides 32 .. 1, the first guarded by 48 - 32 = 16):\n%s", name, text);
  cr_expect(strstr(text, "for (k.i") == NULL, "%s: the one-thread loop is left:\n%s", name, text);
  te_free(text);
  te_module *m = vk_build(s, name, 2, TT_TENSORS(A, B), 0, NULL);
  /* two modules: with subgroup operations, and the tree for devices without them */
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  static const char *const sg_op[3] = {"OpGroupNonUniformFAdd", "OpGroupNonUniformFMax",
                                       "OpGroupNonUniformFMin"};
  cr_expect(strstr(dis, sg_op[op]) && strstr(dis, "without subgroup operations"),
            "%s: not both modules (%s):\n%s", name, sg_op[op], dis);
  tt_buf *a = TT_ALLOC(TE_F32, R, K), *got = TT_ALLOC(TE_F32, R), *ref = TT_ALLOC(TE_F32, R);
  /* max of negative values and min of positive ones: a partial read past the 48 (a zero, or
     garbage) would show */
  if (op == 0)
    tt_fill(a, 41);
  else
    tt_fill_range(a, 41, op == 1 ? -2 : 0.1, op == 1 ? -0.1 : 2);
  for (int r = 0; r < R; r++) {
    double acc = op == 0 ? 0 : tt_get(a, (int64_t)r * K);
    for (int c = op == 0 ? 0 : 1; c < K; c++) {
      double x = tt_get(a, (int64_t)r * K + c);
      acc = op == 0 ? acc + x : op == 1 ? fmax(acc, x) : fmin(acc, x);
    }
    tt_set(ref, r, acc);
  }
  tt_poison(got);
  vk_call(m, name, 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, op == 0 ? K : 1);
}

Test(vulkan, tree_reduce_sum) { vk_tree_case("tree_sum", te_sum, 0); }
Test(vulkan, tree_reduce_max) { vk_tree_case("tree_max", te_max_r, 1); }
Test(vulkan, tree_reduce_min) { vk_tree_case("tree_min", te_min_r, 2); }
/* The same where the device has no subgroup arithmetic (TE_VULKAN_HIDE_FEATURES, read when the
   device is made: each test runs in a process of its own): the plain module runs. */
Test(vulkan, tree_reduce_sum_without_subgroups) {
  setenv("TE_VULKAN_HIDE_FEATURES", "subgroup_arith", 1);
  vk_tree_case("tree_sum_nosg", te_sum, 0);
}
Test(vulkan, tree_reduce_max_without_subgroups) {
  setenv("TE_VULKAN_HIDE_FEATURES", "subgroup_arith", 1);
  vk_tree_case("tree_max_nosg", te_max_r, 1);
}
