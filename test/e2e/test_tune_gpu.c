/* test_tune_gpu.c — te_tune for GPU targets (autotune/sketch_gpu.c, measure.c):
 *   - vulkan (lavapipe on CPU machines): a short run on a 40 x 24 x 36 matmul (gpu-simple's blocks
 *     of 128 or 256 threads leave a tail); every candidate is checked against the host's default
 *     schedule, and the log's best,
 *     applied to a fresh schedule, is bound to blocks and threads and gives plain C's numbers,
 *     and built for cuda it is PTX that ptxas assembles for sm_80 and sm_90;
 *   - vulkan on a 37 x 29 x 31 matmul (every extent prime): the gpu-tile candidates split the
 *     axes by factors that do not divide them (guarded tails), and every one of them gives the
 *     host's numbers;
 *   - cuda without a device: refused before anything is measured, with a message naming the
 *     target and the driver's reason, and no log written;
 *   - cuda on the fake driver (test/fake_cuda, which launches nothing): candidates go through
 *     device memory and back, and the checks see outputs no kernel computed as wrong.
 * Without a Vulkan driver the first prints a SKIP line (TE_REQUIRE=vulkan makes it fail).
 */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <te/tune.h>

#include "te_test.h"

static char dir[256], logpath[300];

static void setup(void) {
  tt_setup();
  const char *base = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/te_tune_gpu_XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(logpath, sizeof logpath, "%s/log.jsonl", dir);
}

static void teardown(void) {
  unlink(logpath);
  rmdir(dir);
  tt_teardown();
}

TestSuite(tune_gpu, .init = setup, .fini = teardown, .timeout = 300);

enum { M = 40, N = 24, K = 36 };

static te_tensor *matmul(te_tensor **a, te_tensor **b) {
  *a = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  *b = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  return tt_matmul(*a, *b, M, N, K);
}

static te_tune_options quick(int trials) {
  te_tune_options o = {0};
  o.trials = trials;
  o.log_path = logpath;
  o.seed = 5;
  o.batch = 4;
  o.population = 16;
  o.generations = 1;
  o.min_repeat_s = 0.001;
  o.max_repeats = 3;
  o.timeout_s = 120; /* only a hang reaches it, however loaded the machine */
  o.check = 1000;    /* every candidate compared with the host's default schedule */
  o.confirm = -1;
  return o;
}

Test(tune_gpu, vulkan_matmul_best_is_bound_and_right) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B));
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_tune_summary sum;
  te_tune_options o = quick(8);
  o.summary = &sum;
  te_status st = te_tune(tt_ctx, 1, &C, vk, &o);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan device"))
    tt_skip("vulkan", "%s", te_last_error(tt_ctx));
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_eq(sum.measured, 8);
  cr_assert_eq(sum.errors, 0, "every candidate ran on the device and matched the reference");
  cr_assert_gt(sum.best_gflops, 0);

  te_schedule *s = tt_schedule1(C);
  TT_OK(te_apply_best(s, logpath, vk));
  char *trace = te_schedule_trace(s);
  cr_assert(strstr(trace, "blockIdx.x") && strstr(trace, "threadIdx.x"),
            "the best schedule is bound to blocks and threads:\n%s", trace);
  te_free(trace);
  te_module *mod = NULL;
  TT_OK(te_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL, vk, &mod));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *c = TT_ALLOC(TE_F32, M, N);
  tt_buf *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_ref_matmul(a, b, ref, M, N, K);
  tt_call(mod, "mm", 3, TT_BUFS(a, b, c), 0, NULL); /* c poisoned by tt_alloc */
  tt_assert_close(c, ref, K);

  /* the same schedule is a valid CUDA kernel: built for sm_80 and sm_90, assembled by ptxas */
  const char *archs[] = {"sm_80", "sm_90"};
  for (int i = 0; i < 2; i++) {
    char spec[32];
    snprintf(spec, sizeof spec, "cuda -arch=%s", archs[i]);
    te_module *cm = NULL;
    TT_OK(te_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL, TT_NN(te_target_parse(tt_ctx, spec)),
                   &cm));
    const char *ptx = te_module_source(cm, "ptx");
    cr_assert_not_null(ptx, "%s", te_last_error(tt_ctx));
    tt_ptxas_assemble("tuned matmul", ptx, archs[i]);
  }
}

/* The gpu-tile sketch is what makes a matmul fast on a GPU: it must survive the probe on vulkan
   (shared-memory copies, the local accumulator), and its candidates must be sampled. */
Test(tune_gpu, vulkan_offers_gpu_tile) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B));
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_tune_options o = quick(8);
  te_status st = te_tune(tt_ctx, 1, &C, vk, &o);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan device"))
    tt_skip("vulkan", "%s", te_last_error(tt_ctx));
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  FILE *f = fopen(logpath, "r");
  cr_assert_not_null(f);
  char line[1 << 14];
  int tile = 0, shared = 0;
  while (fgets(line, sizeof line, f)) {
    tile += strstr(line, "\"sketch\":\"gpu-tile\"") != NULL;
    shared += strstr(line, "cache_read") != NULL && strstr(line, "shared") != NULL;
  }
  fclose(f);
  cr_assert_gt(tile, 0, "no gpu-tile candidate was measured");
  cr_assert_gt(shared, 0, "no candidate copied its inputs into shared memory");
}

/* Whether the trace at line splits axis (of extent ext) of stage with a tail: its inner factor
   ("split STAGE AXIS F") or the one of the loop outside it ("split STAGE AXIS.o G") does not
   divide what it splits. */
static bool splits_with_tail(const char *line, const char *stage, const char *axis, int64_t ext) {
  char inner[64], outer[64];
  snprintf(inner, sizeof inner, "split %s %s ", stage, axis);
  snprintf(outer, sizeof outer, "split %s %s.o ", stage, axis);
  const char *p = strstr(line, inner), *q = strstr(line, outer);
  int64_t f = p ? atoll(p + strlen(inner)) : 1, g = q ? atoll(q + strlen(outer)) : 1;
  return f < 1 || g < 1 || ext % f != 0 || ((ext + f - 1) / f) % g != 0;
}

/* Prime extents: the gpu-tile sketch's tiles (space and reduce) may leave guarded tails, so its
   candidates are not stuck with tiles of 1 or the whole axis; each is checked against the host. */
Test(tune_gpu, vulkan_prime_matmul_tiles_leave_tails) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(37, 31));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(31, 29));
  te_tensor *C = TT_NN(tt_matmul(A, B, 37, 29, 31));
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_tune_summary sum;
  te_tune_options o = quick(12);
  o.summary = &sum;
  te_status st = te_tune(tt_ctx, 1, &C, vk, &o);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan device"))
    tt_skip("vulkan", "%s", te_last_error(tt_ctx));
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_eq(sum.measured, 12);
  cr_assert_eq(sum.errors, 0, "every candidate ran on the device and matched the reference");
  FILE *f = fopen(logpath, "r");
  cr_assert_not_null(f);
  static char line[1 << 20]; /* a record: its trace first, its sketch after every cost */
  int tails = 0, reduce_tails = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "\"sketch\":\"gpu-tile\""))
      continue;
    tails += splits_with_tail(line, "C", "i", 37) || splits_with_tail(line, "C", "j", 29);
    reduce_tails += splits_with_tail(line, "C_local", "k", 31);
  }
  fclose(f);
  cr_assert_gt(tails, 0, "no gpu-tile candidate split a space axis with a tail");
  cr_assert_gt(reduce_tails, 0, "no gpu-tile candidate split the reduction with a tail");
}

Test(tune_gpu, cuda_without_device_is_refused) {
  setenv("TE_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1); /* no driver, even on a GPU host */
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B));
  te_target *cuda = TT_NN(te_target_parse(tt_ctx, "cuda"));
  te_tune_options o = quick(4);
  te_status st = te_tune(tt_ctx, 1, &C, cuda, &o);
  unsetenv("TE_CUDA_DRIVER");
  cr_assert_eq(st, TE_ERR_RUNTIME, "got %s: %s", te_status_str(st), te_last_error(tt_ctx));
  const char *msg = te_last_error(tt_ctx);
  cr_assert(strstr(msg, "no CUDA device") && strstr(msg, "cuda -arch=sm_80") &&
                strstr(msg, "no CUDA driver"),
            "%s", msg);
  cr_assert_neq(access(logpath, F_OK), 0, "nothing was logged");
}

Test(tune_gpu, cuda_fake_driver_goes_through_device_memory) {
  setenv("TE_CUDA_DRIVER", TE_FAKE_LIBCUDA, 1);
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B));
  te_target *cuda = TT_NN(te_target_parse(tt_ctx, "cuda"));
  te_tune_summary sum;
  te_tune_options o = quick(2);
  o.summary = &sum;
  o.batch = 2;
  te_status st = te_tune(tt_ctx, 1, &C, cuda, &o);
  unsetenv("TE_CUDA_DRIVER");
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_eq(sum.measured, 2);
  /* the fake launches nothing: the outputs copied back are the poison, which the check sees */
  cr_assert_eq(sum.errors, 2, "outputs no kernel wrote passed the check");
  FILE *f = fopen(logpath, "r");
  cr_assert_not_null(f);
  char line[1 << 14];
  int wrong = 0, wall = 0;
  while (fgets(line, sizeof line, f)) {
    wrong += strstr(line, "\"wrong\"") != NULL;
    /* a device's time is not the host threads': GPU candidates are timed on the wall clock */
    wall += strstr(line, "\"clock\":\"wall\"") != NULL;
  }
  fclose(f);
  cr_assert_eq(wrong, 2);
  cr_assert_eq(wall, 2, "GPU records on the wall clock");
}

/* A process that already runs vulkan kernels cannot tune for vulkan (its forked measuring
   children would share a driver that does not survive fork): refused, naming the rule. */
Test(tune_gpu, vulkan_after_a_vulkan_kernel_is_refused) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B));
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = te_stage_of(s, C);
  te_iter *f, *bo, *ti;
  TT_OK(te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f));
  TT_OK(te_split(st, f, 64, &bo, &ti));
  TT_OK(te_bind(st, bo, TE_BLOCK_X));
  TT_OK(te_bind(st, ti, TE_THREAD_X));
  te_module *mod = NULL;
  TT_OK(te_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL, vk, &mod));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *c = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  DLTensor *args[3] = {&a->dl, &b->dl, &c->dl};
  te_status st0 = te_module_call(mod, "mm", 3, args, 0, NULL);
  if (st0 == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
    tt_skip("vulkan", "%s", te_last_error(tt_ctx));
  TT_OK(st0);
  te_tune_options o = quick(2);
  cr_assert_eq(te_tune(tt_ctx, 1, &C, vk, &o), TE_ERR_UNSUPPORTED);
  const char *msg = te_last_error(tt_ctx);
  cr_assert(strstr(msg, "already started the Vulkan driver") && strstr(msg, "forked"), "%s", msg);
  cr_assert_neq(access(logpath, F_OK), 0, "nothing was logged");
}
