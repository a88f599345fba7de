/* test_spirv.c — the SPIR-V back end and the Vulkan launcher, on hand-built device kernels
 * (gpu.h), independent of the GPU lowering:
 *   - the push-constant layout; a non-constant workgroup size (TE_ERR_TARGET); the validator's
 *     verdict on a broken module (TE_ERR_CODEGEN with its message);
 *   - a kernel with a Function-storage array, narrow and wide i64 (indices in 32 bits, 64-bit
 *     data), floor division of negative values, a bool output (8-bit storage), a guard, push
 *     constants; validated in-process, by `spirv-val --target-env vulkan1.1` when installed, and
 *     RUN through libte_runtime's launcher against a C reference (skipped without a driver);
 *   - a workgroup (shared) array with a barrier: a block-wide reversal;
 *   - the host programs of vulkan modules (launch sizes evaluated at call time).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/spirv.h"
#include "codegen/vulkan_host.h"
#include "runtime/vulkan.h"
#include "te_test.h"

static te_ctx *ctx;
static void setup(void) {
  ctx = te_ctx_new();
  ir_scratch_begin(ctx);
}
static void teardown(void) {
  ir_scratch_end(ctx);
  te_ctx_free(ctx);
}
TestSuite(spirv, .init = setup, .fini = teardown);

#define I64(v) ir_i64(ctx, (v))
#define OKP(p) ok_ptr_((p), #p)
static void *ok_ptr_(void *p, const char *what) {
  cr_assert_not_null(p, "%s: %s", what, te_last_error(ctx));
  return p;
}

static te_expr *idx_var(const char *name) {
  return OKP(ir_var_new(ctx, name, TE_I64, IR_VAR_INDEX));
}
static ir_buffer *buf(const char *name, te_dtype t, int arg, te_scope scope) {
  te_expr *n = I64(16);
  return OKP(ir_buffer_new(ctx, name, t, 1, &n, scope, NULL, arg));
}
static lw_gpu_param pbuf(ir_buffer *b, bool read, bool written) {
  return (lw_gpu_param){.kind = LW_GPU_PARAM_BUFFER, .buffer = b, .read = read, .written = written};
}
static lw_gpu_param pvar(lw_gpu_param_kind k, te_expr *v) {
  return (lw_gpu_param){.kind = k, .var = v};
}
static void set_launch(lw_gpu_kernel *k, int64_t grid, int64_t block) {
  for (int d = 0; d < 3; d++)
    k->grid[d] = k->block[d] = I64(1);
  k->grid[0] = I64(grid);
  k->block[0] = I64(block);
}

/* Skips the test (with a line saying so) when no Vulkan device exists. */
static const te_rt_vk_info *device_or_skip(void) {
  if (te_rt_vk_init() != 0)
    tt_skip("vulkan", "no Vulkan device: %s", te_rt_last_error());
  return te_rt_vk_device_info();
}

static te_rt_vk_buffer *dev_buf(const void *data, uint64_t bytes) {
  te_rt_vk_buffer *b = NULL;
  cr_assert_eq(te_rt_vk_buffer_new(bytes, &b), 0, "%s", te_rt_last_error());
  if (data)
    cr_assert_eq(te_rt_vk_buffer_write(b, 0, data, bytes), 0);
  else
    memset(te_rt_vk_buffer_data(b), 0x5A, bytes);
  return b;
}

static void run(const lw_gpu_kernel *k, const cg_spv_kernel *sk, int nb, te_rt_vk_buffer **bufs,
                const void *push, uint64_t groups) {
  te_rt_vk_kernel *pipe = NULL;
  cr_assert_eq(
      te_rt_vk_kernel_new(k->name, sk->words, sk->nwords, k->name, nb, sk->push.bytes, &pipe), 0,
      "%s", te_rt_last_error());
  uint64_t g[3] = {groups, 1, 1};
  cr_assert_eq(te_rt_vk_dispatch(pipe, nb, bufs, push, sk->push.bytes, g), 0, "%s",
               te_rt_last_error());
  te_rt_vk_kernel_free(pipe);
}

/* spirv-val --target-env vulkan1.1 on the words, when the tool exists. */
static void spirv_val(const cg_spv_kernel *sk) {
  if (system("command -v spirv-val > /dev/null 2>&1") != 0) {
    tt_skip_part("spirv-val", "spirv-val not installed: the module is not validated");
    return;
  }
  char path[] = "/tmp/te_spirv_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, sk->words, sk->nwords * 4), (ssize_t)(sk->nwords * 4));
  close(fd);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "spirv-val --target-env vulkan1.1 %s", path);
  int rc = system(cmd);
  unlink(path);
  cr_assert_eq(rc, 0, "spirv-val rejected the module");
}

Test(spirv, push_layout) {
  te_expr *f = OKP(ir_var_new(ctx, "f", TE_F32, IR_VAR_PARAM));
  te_expr *l = OKP(ir_var_new(ctx, "l", TE_I64, IR_VAR_PARAM));
  te_expr *b = OKP(ir_var_new(ctx, "b", TE_BOOL, IR_VAR_PARAM));
  te_expr *n = idx_var("n");
  lw_gpu_param ps[5] = {pbuf(buf("A", TE_F32, 0, TE_SCOPE_GLOBAL), true, false),
                        pvar(LW_GPU_PARAM_SCALAR, f), pvar(LW_GPU_PARAM_SCALAR, l),
                        pvar(LW_GPU_PARAM_SCALAR, b), pvar(LW_GPU_PARAM_SIZE, n)};
  lw_gpu_kernel k = {.name = "k", .nparams = 5, .params = ps};
  cg_spv_push p;
  cr_assert_eq(cg_spv_push_layout(ctx, &k, &p), TE_OK);
  cr_expect_eq(p.offset[0], -1);
  cr_expect_eq(p.offset[1], 0);  /* f32 */
  cr_expect_eq(p.offset[2], 8);  /* i64, aligned to 8 */
  cr_expect_eq(p.offset[3], 16); /* bool as u32 */
  cr_expect_eq(p.offset[4], 20); /* size as i32 */
  cr_expect_eq(p.bytes, 24);
  cr_expect(ir_dtype_eq(p.mtype[3], TE_U32) && ir_dtype_eq(p.mtype[4], TE_I32));
}

Test(spirv, non_constant_workgroup_size) {
  te_expr *n = idx_var("n");
  ir_buffer *a = buf("A", TE_F32, 0, TE_SCOPE_GLOBAL);
  lw_gpu_param ps[2] = {pbuf(a, false, true), pvar(LW_GPU_PARAM_SIZE, n)};
  lw_gpu_kernel k = {.name = "k0", .nparams = 2, .params = ps};
  set_launch(&k, 1, 1);
  k.block[0] = n;
  k.body = OKP(ir_store(a, ir_float(ctx, TE_F32, 1), I64(0)));
  cg_spv_kernel sk;
  cr_assert_eq(cg_spv_compile_kernel(ctx, &k, true, &sk), TE_ERR_TARGET);
  cr_expect(strstr(te_last_error(ctx), "kernel 'k0'") &&
                strstr(te_last_error(ctx), "constant thread extents") &&
                strstr(te_last_error(ctx), "axis x"),
            "%s", te_last_error(ctx));
}

Test(spirv, validator_reports_broken_modules) {
  ir_buffer *a = buf("A", TE_F32, 0, TE_SCOPE_GLOBAL);
  lw_gpu_param ps[1] = {pbuf(a, false, true)};
  lw_gpu_kernel k = {.name = "k1", .nparams = 1, .params = ps};
  set_launch(&k, 1, 1);
  k.body = OKP(ir_store(a, ir_float(ctx, TE_F32, 1), I64(0)));
  cg_spv_kernel sk;
  cr_assert_eq(cg_spv_compile_kernel(ctx, &k, true, &sk), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(cg_spv_validate(ctx, "k1", sk.words, sk.nwords), TE_OK);
  char *dis = OKP(cg_spv_disassemble(sk.words, sk.nwords));
  cr_expect(strstr(dis, "OpEntryPoint GLCompute %k1 \"k1\"") != NULL, "%s", dis);
  free(dis);
  sk.words[sk.nwords - 1] = 0xFFFFu << 16; /* OpFunctionEnd -> garbage */
  cr_assert_eq(cg_spv_validate(ctx, "k1", sk.words, sk.nwords), TE_ERR_CODEGEN);
  cr_expect(strstr(te_last_error(ctx), "kernel 'k1': the SPIR-V module is invalid"), "%s",
            te_last_error(ctx));
  free(sk.words);
}

/* The kernel of one thread t = blockIdx.x * 8 + threadIdx.x, for t < n:
     L[j] = A[4t + j] * 2  (j < 4, a Function-storage array)
     B[t] = L[0] + L[1] + L[2] + L[3] + (f32)k
     F[t] = B[t] > 0                               (bool: one byte)
     I[t] = J[t] * 3000000000 + floordiv(t - 5, 3) (64-bit data, narrow index arithmetic) */
static ir_stmt *mixed_body(te_expr *const idx[6], ir_buffer *const b[6], te_expr *k, te_expr *n) {
  te_expr *t = idx_var("t"), *j = idx_var("j");
  ir_buffer *A = b[0], *B = b[1], *F = b[2], *J = b[3], *I = b[4], *L = b[5];
  ir_stmt *fill =
      ir_for(j, I64(0), I64(4), IR_FOR_SERIAL, 0,
             ir_store(L,
                      ir_binary(IR_MUL, ir_load(A, TE_F32, ir_add(ir_mul(t, I64(4)), j)),
                                ir_float(ctx, TE_F32, 2)),
                      j));
  te_expr *sum = ir_load(L, TE_F32, I64(0));
  for (int q = 1; q < 4; q++)
    sum = ir_binary(IR_ADD, sum, ir_load(L, TE_F32, I64(q)));
  sum = ir_binary(IR_ADD, sum, ir_cast(TE_F32, k));
  ir_stmt *sb = ir_store(B, sum, t);
  ir_stmt *sf = ir_store(F, ir_binary(IR_GT, ir_load(B, TE_F32, t), ir_float(ctx, TE_F32, 0)), t);
  te_expr *wide = ir_binary(IR_MUL, ir_load(J, TE_I64, t), I64(3000000000LL));
  ir_stmt *si = ir_store(I, ir_add(wide, ir_floordiv(ir_sub(t, I64(5)), I64(3))), t);
  ir_stmt *body = ir_if(ir_lt(t, n), ir_seq(ctx, 4, (ir_stmt *const[]){fill, sb, sf, si}), NULL);
  te_expr *tv = ir_add(ir_mul(idx[TE_BLOCK_X], I64(8)), idx[TE_THREAD_X]);
  return OKP(ir_let_stmt(t, tv, body));
}

Test(spirv, mixed_types_run) {
  enum { N = 16 };
  te_expr *idx[6] = {0};
  idx[TE_BLOCK_X] = idx_var("blockIdx.x");
  idx[TE_THREAD_X] = idx_var("threadIdx.x");
  te_expr *k = OKP(ir_var_new(ctx, "k", TE_I32, IR_VAR_PARAM)), *n = idx_var("n");
  ir_buffer *b[6] = {buf("A", TE_F32, 0, TE_SCOPE_GLOBAL),  buf("B", TE_F32, 1, TE_SCOPE_GLOBAL),
                     buf("F", TE_BOOL, 2, TE_SCOPE_GLOBAL), buf("J", TE_I64, 3, TE_SCOPE_GLOBAL),
                     buf("I", TE_I64, 4, TE_SCOPE_GLOBAL),  buf("L", TE_F32, -1, TE_SCOPE_LOCAL)};
  lw_gpu_param ps[7] = {pbuf(b[0], true, false),   pbuf(b[1], true, true),
                        pbuf(b[2], false, true),   pbuf(b[3], true, false),
                        pbuf(b[4], false, true),   pvar(LW_GPU_PARAM_SCALAR, k),
                        pvar(LW_GPU_PARAM_SIZE, n)};
  lw_gpu_alloc local = {b[5], 4};
  lw_gpu_kernel kern = {.name = "mixed", .nparams = 7, .params = ps, .nlocal = 1, .local = &local};
  memcpy(kern.idx, idx, sizeof idx);
  set_launch(&kern, 2, 8);
  kern.body = mixed_body(idx, b, k, n);
  cg_spv_kernel sk;
  cr_assert_eq(cg_spv_compile_kernel(ctx, &kern, true, &sk), TE_OK, "%s", te_last_error(ctx));
  cr_expect(sk.features & CG_SPV_INT64, "64-bit data needs Int64");
  cr_expect(sk.features & CG_SPV_STORAGE8, "a bool buffer needs 8-bit storage");
  spirv_val(&sk);

  const te_rt_vk_info *info = device_or_skip();
  if (!info->int64 || !info->storage8 || !info->int8) {
    free(sk.words);
    tt_skip("vulkan-int64", "device '%s' lacks Int64 or 8-bit storage", info->name);
  }
  float A[4 * N], B[N];
  int64_t J[N], I[N];
  uint8_t F[N];
  for (int i = 0; i < 4 * N; i++)
    A[i] = (float)((i * 7) % 11) - 5.0f;
  for (int i = 0; i < N; i++)
    J[i] = i * 1000003LL - 7;
  te_rt_vk_buffer *bufs[5] = {dev_buf(A, sizeof A), dev_buf(NULL, sizeof B),
                              dev_buf(NULL, sizeof F), dev_buf(J, sizeof J),
                              dev_buf(NULL, sizeof I)};
  uint8_t push[16] = {0};
  int32_t kv = -3, nv = N - 3; /* the last three threads do nothing */
  memcpy(push + sk.push.offset[5], &kv, 4);
  memcpy(push + sk.push.offset[6], &nv, 4);
  run(&kern, &sk, 5, bufs, push, 2);
  te_rt_vk_buffer_read(bufs[1], 0, B, sizeof B);
  te_rt_vk_buffer_read(bufs[2], 0, F, sizeof F);
  te_rt_vk_buffer_read(bufs[4], 0, I, sizeof I);
  for (int t = 0; t < nv; t++) {
    float want = (A[4 * t] + A[4 * t + 1] + A[4 * t + 2] + A[4 * t + 3]) * 2 + (float)kv;
    int64_t fd = t - 5 >= 0 ? (t - 5) / 3 : -((5 - t + 2) / 3);
    cr_expect_float_eq(B[t], want, 1e-6, "B[%d] = %g, want %g", t, (double)B[t], (double)want);
    cr_expect_eq(F[t], want > 0, "F[%d]", t);
    cr_expect_eq(I[t], J[t] * 3000000000LL + fd, "I[%d] = %lld", t, (long long)I[t]);
  }
  for (int t = nv; t < N; t++)
    cr_expect_eq(F[t], 0x5A, "thread %d is past n and must not write", t);
  for (int i = 0; i < 5; i++)
    te_rt_vk_buffer_free(bufs[i]);
  free(sk.words);
}

/* S[tx] = A[bx * 64 + tx]; barrier; B[bx * 64 + tx] = S[63 - tx]: each block reverses its 64
   elements through workgroup memory. */
Test(spirv, shared_memory_barrier_run) {
  enum { T = 64, G = 4 };
  te_expr *idx[6] = {0};
  idx[TE_BLOCK_X] = idx_var("blockIdx.x");
  idx[TE_THREAD_X] = idx_var("threadIdx.x");
  ir_buffer *A = buf("A", TE_F32, 0, TE_SCOPE_GLOBAL), *B = buf("B", TE_F32, 1, TE_SCOPE_GLOBAL);
  ir_buffer *S = buf("S", TE_F32, -1, TE_SCOPE_SHARED);
  te_expr *g = ir_add(ir_mul(idx[TE_BLOCK_X], I64(T)), idx[TE_THREAD_X]);
  ir_stmt *st[3] = {ir_store(S, ir_load(A, TE_F32, g), idx[TE_THREAD_X]), ir_barrier(ctx),
                    ir_store(B, ir_load(S, TE_F32, ir_sub(I64(T - 1), idx[TE_THREAD_X])), g)};
  lw_gpu_param ps[2] = {pbuf(A, true, false), pbuf(B, false, true)};
  lw_gpu_alloc shared = {S, T};
  lw_gpu_kernel k = {.name = "rev",
                     .nparams = 2,
                     .params = ps,
                     .nshared = 1,
                     .shared = &shared,
                     .shared_bytes = T * 4,
                     .uses_barrier = true};
  memcpy(k.idx, idx, sizeof idx);
  set_launch(&k, G, T);
  k.body = OKP(ir_seq(ctx, 3, st));
  cg_spv_kernel sk;
  cr_assert_eq(cg_spv_compile_kernel(ctx, &k, true, &sk), TE_OK, "%s", te_last_error(ctx));
  cr_expect_eq(sk.features, 0u, "no optional capability needed");
  char *dis = OKP(cg_spv_disassemble(sk.words, sk.nwords));
  cr_expect(strstr(dis, "OpControlBarrier %uint_2 %uint_2 %uint_264") != NULL, "%s", dis);
  cr_expect(strstr(dis, "Workgroup") != NULL, "%s", dis);
  free(dis);
  spirv_val(&sk);
  device_or_skip();
  float a[T * G], b[T * G];
  for (int i = 0; i < T * G; i++)
    a[i] = (float)i;
  te_rt_vk_buffer *bufs[2] = {dev_buf(a, sizeof a), dev_buf(NULL, sizeof b)};
  run(&k, &sk, 2, bufs, NULL, G);
  te_rt_vk_buffer_read(bufs[1], 0, b, sizeof b);
  for (int i = 0; i < T * G; i++)
    cr_expect_eq(b[i], a[(i / T) * T + T - 1 - i % T], "B[%d] = %g", i, (double)b[i]);
  te_rt_vk_buffer_free(bufs[0]);
  te_rt_vk_buffer_free(bufs[1]);
  free(sk.words);
}

/* Launch sizes as host programs: floor division of negatives, min/max, select, casts. */
Test(spirv, host_programs) {
  te_expr *n = idx_var("n");
  te_expr *s = OKP(ir_var_new(ctx, "s", TE_I32, IR_VAR_PARAM));
  cg_vk_slots slots = {.nsizes = 1, .nscalars = 1, .vars = (te_expr *[]){n, s}};
  te_expr *e =
      ir_add(ir_floordiv(ir_sub(n, I64(7)), I64(4)), ir_floormod(ir_sub(n, I64(7)), I64(4)));
  e = ir_add(e, ir_mul(ir_min(n, I64(3)), I64(100)));
  e = ir_add(e, ir_select(ir_lt(n, I64(5)), I64(1000), ir_cast(TE_I64, s)));
  cg_vk_prog p;
  cr_assert_eq(cg_vk_prog_make(ctx, "k", &slots, e, &p), TE_OK, "%s", te_last_error(ctx));
  static const int64_t ns[] = {1, 2, 7, 100};
  for (int i = 0; i < 4; i++) {
    int64_t v[2] = {ns[i], -42}, got = 0, d = ns[i] - 7;
    const char *err;
    cr_assert(cg_vk_prog_eval(&p, v, NULL, &got, &err), "%s", err);
    int64_t fd = d >= 0 ? d / 4 : -((-d + 3) / 4), fm = d - fd * 4;
    int64_t want = fd + fm + (ns[i] < 3 ? ns[i] : 3) * 100 + (ns[i] < 5 ? 1000 : -42);
    cr_expect_eq(got, want, "n = %lld: %lld, want %lld", (long long)ns[i], (long long)got,
                 (long long)want);
  }
  te_expr *f = OKP(ir_var_new(ctx, "f", TE_F32, IR_VAR_PARAM));
  cg_vk_slots fs = {.nsizes = 0, .nscalars = 1, .vars = (te_expr *[]){f}};
  cr_assert_eq(cg_vk_prog_make(ctx, "k", &fs, ir_cast(TE_I64, f), &p), TE_ERR_UNSUPPORTED);
}
