/* test_quant_gpu.c — the integer operators on the GPU targets: a kernel of bitwise operations,
 * shifts by amounts across the whole range (negative, past the width) and rounding shifts, on
 * i32 and u8, bound to blocks and threads. Vulkan: built to SPIR-V and RUN on the machine's
 * Vulkan device (lavapipe on CPU-only machines), compared exactly with plain C; skipped visibly
 * without a driver. CUDA: the PTX has the kernel and ptxas assembles it for sm_80 (where ptxas is
 * installed). The CUDA kernel is not run here (no GPU in this suite's CI; test_cuda.c runs the
 * shared GPU cases where one is).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/te_test.h"

TestSuite(quant_gpu, .init = tt_setup, .fini = tt_teardown);

enum { N = 300 };

static uint64_t ubits(te_dtype t, int64_t x) {
  return t.bits >= 64 ? (uint64_t)x : (uint64_t)x & (((uint64_t)1 << t.bits) - 1);
}
static int64_t wrap(te_dtype t, uint64_t u) {
  if (t.bits >= 64)
    return (int64_t)u;
  u &= ((uint64_t)1 << t.bits) - 1;
  if (t.code == kDLInt && (u >> (t.bits - 1)))
    u |= ~(((uint64_t)1 << t.bits) - 1);
  return (int64_t)u;
}
static int64_t floor_shr(te_dtype t, int64_t x, uint64_t s) {
  if (t.code == kDLInt)
    return s >= t.bits ? (x < 0 ? -1 : 0) : x >> s;
  return s >= t.bits ? 0 : (int64_t)(ubits(t, x) >> s);
}

/* out = (rshr(x, s) ^ shl(x, 3)) + (lshr(x, s) | ~x), s read unsigned in x's type. */
static int64_t ref(te_dtype t, int64_t x, int64_t s_raw) {
  uint64_t s = ubits(t, s_raw);
  int64_t rshr =
      s == 0 ? x : wrap(t, (uint64_t)floor_shr(t, x, s) + ((uint64_t)floor_shr(t, x, s - 1) & 1));
  int64_t shl = wrap(t, ubits(t, x) << 3);
  int64_t lshr = s >= t.bits ? 0 : wrap(t, ubits(t, x) >> s);
  return wrap(t, (uint64_t)(rshr ^ shl) + (uint64_t)(lshr | wrap(t, ~(uint64_t)x)));
}

static te_schedule *define(te_dtype t, te_tensor **X, te_tensor **S, te_tensor **O) {
  *X = tt_placeholder("X", t, 1, TT_SHAPE(N));
  *S = tt_placeholder("S", t, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *x = tt_at1(*X, i), *s = tt_at1(*S, i);
  te_expr *body =
      te_add(te_bitwise_xor(te_rounding_shift_right(x, s), te_shift_left(x, te_int(tt_ctx, 3))),
             te_bitwise_or(te_shift_right_logical(x, s), te_bitwise_not(x)));
  *O = TT_NN(te_compute(tt_ctx, "O", 1, TE_EXPRS(te_int(tt_ctx, N)), &i, body));
  te_schedule *sch = tt_schedule1(*O);
  te_stage *st = tt_stage(sch, *O);
  te_iter *bo, *ti;
  TT_OK(te_split(st, TT_NN(te_axis(st, 0)), 64, &bo, &ti));
  TT_OK(te_bind(st, bo, TE_BLOCK_X));
  TT_OK(te_bind(st, ti, TE_THREAD_X));
  return sch;
}

static void fill(tt_buf *x, tt_buf *s, te_dtype t) {
  srand(5);
  for (int64_t i = 0; i < N; i++) {
    int64_t v = wrap(t, ((uint64_t)rand() << 20) ^ (uint64_t)rand());
    if (i % 4 == 0)
      v = wrap(t, i % 8 ? (uint64_t)1 << (t.bits - 1) : ~(uint64_t)0);
    tt_seti(x, i, v);
    tt_seti(s, i, wrap(t, (uint64_t)((i % (t.bits + 6)) - 3))); /* -3 .. width + 2 */
  }
}

static void check(te_dtype t, tt_buf *x, tt_buf *s, tt_buf *got, const char *where) {
  for (int64_t i = 0; i < N; i++) {
    int64_t want = ref(t, tt_geti(x, i), tt_geti(s, i));
    cr_assert(tt_geti(got, i) == want, "%s %d-bit: x %lld s %lld: got %lld, want %lld", where,
              t.bits, (long long)tt_geti(x, i), (long long)tt_geti(s, i),
              (long long)tt_geti(got, i), (long long)want);
  }
}

static void run_on(const char *target, te_dtype t, const char *skip_feature) {
  te_tensor *X, *S, *O;
  te_schedule *sch = define(t, &X, &S, &O);
  te_module *m = NULL;
  TT_OK(te_build(sch, "q", 3, TT_TENSORS(X, S, O), 0, NULL, TT_NN(te_target_parse(tt_ctx, target)),
                 &m));
  tt_buf *x = TT_ALLOC(t, N), *s = TT_ALLOC(t, N), *got = TT_ALLOC(t, N);
  fill(x, s, t);
  tt_poison(got);
  DLTensor *dl[3];
  tt_dl(3, TT_BUFS(x, s, got), dl);
  te_status st = te_module_call(m, "q", 3, dl, 0, NULL);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver")) {
    tt_skip(skip_feature, "%s: %s", target, te_last_error(tt_ctx));
    return;
  }
  TT_OK(st);
  check(t, x, s, got, target);
}

Test(quant_gpu, vulkan_i32) { run_on("vulkan", TE_I32, "vulkan"); }
Test(quant_gpu, vulkan_u8) { run_on("vulkan", TE_U8, "vulkan"); }

Test(quant_gpu, cuda_ptx_assembles) {
  te_tensor *X, *S, *O;
  te_schedule *sch = define(TE_I32, &X, &S, &O);
  te_module *m = NULL;
  TT_OK(te_build(sch, "q", 3, TT_TENSORS(X, S, O), 0, NULL, TT_NN(te_target_parse(tt_ctx, "cuda")),
                 &m));
  const char *ptx = TT_NN((void *)te_module_source(m, "ptx"));
  cr_assert(strstr(ptx, "shl.b32") && strstr(ptx, "shr.s32") && strstr(ptx, "xor.b32"), "%s", ptx);
  const char *ptxas =
      access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
  if (!ptxas) {
    tt_skip("ptxas", "ptxas not installed: the PTX is checked as text only");
    return;
  }
  char dir[] = "/tmp/te_qptx_XXXXXX", cmd[600], src[100], out[100];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(src, sizeof src, "%s/k.ptx", dir);
  snprintf(out, sizeof out, "%s/k.cubin", dir);
  FILE *f = fopen(src, "w");
  cr_assert_not_null(f);
  fputs(ptx, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_80 '%s' -o '%s'", ptxas, src, out);
  cr_assert_eq(system(cmd), 0, "ptxas -arch=sm_80 failed on:\n%s", ptx);
  unlink(src), unlink(out), rmdir(dir);
}
