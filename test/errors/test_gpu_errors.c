/* test_gpu_errors.c — misuse of the GPU targets through the public API: each case checks the
 * status and the words of the message. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <te/device.h>
#include <te/te.h>

#include "gpu_cases.h"
#include "te_test.h"

TestSuite(err_gpu, .init = tt_setup, .fini = tt_teardown);

#define E(...) TE_EXPRS(__VA_ARGS__)

/* B[i] = A[i] * 2 over n elements; the stage is returned for scheduling. */
static te_schedule *scale(int64_t n, te_tensor **a, te_tensor **b, te_stage **st) {
  te_expr *i = te_var(tt_ctx, "i");
  *a = te_placeholder(tt_ctx, "A", TE_F32, 1, E(te_int(tt_ctx, n)));
  *b = te_compute(tt_ctx, "B", 1, E(te_int(tt_ctx, n)), E(i),
                  te_mul(TE_AT(*a, i), te_float(tt_ctx, TE_F32, 2.0)));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){*b});
  *st = te_stage_of(s, *b);
  cr_assert_not_null(*st, "%s", te_last_error(tt_ctx));
  return s;
}

static te_status build(te_schedule *s, const char *target, int n, te_tensor *const t[]) {
  te_module *m = NULL;
  return te_build(s, "k", n, t, 0, NULL, te_target_parse(tt_ctx, target), &m);
}

Test(err_gpu, bind_same_thread_axis_twice) {
  te_tensor *a, *b;
  te_stage *st;
  scale(1024, &a, &b, &st);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 64, &o, &in), TE_OK);
  cr_assert_eq(te_bind(st, in, TE_THREAD_X), TE_OK);
  cr_expect_eq(te_bind(st, o, TE_THREAD_X), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_bind", "threadIdx.x", "already bound");
}

Test(err_gpu, threads_over_the_limit) {
  te_tensor *a, *b;
  te_stage *st;
  te_schedule *s = scale(4096, &a, &b, &st);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 2048, &o, &in), TE_OK);
  te_bind(st, o, TE_BLOCK_X);
  te_bind(st, in, TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_build", "kernel 'k_kernel0'",
                "threadIdx.x extent 2048", "limit of 1024");
}

Test(err_gpu, threads_a_block_over_the_limit) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j"), *n = te_int(tt_ctx, 256);
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F32, 2, E(n, n));
  te_tensor *b = te_compute(tt_ctx, "B", 2, E(n, n), E(i, j), TE_AT(a, j, i));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){b});
  te_stage *st = te_stage_of(s, b);
  te_iter *io, *jo, *ii, *ji;
  cr_assert_eq(te_tile(st, te_axis(st, 0), te_axis(st, 1), 32, 64, &io, &jo, &ii, &ji), TE_OK);
  te_bind(st, io, TE_BLOCK_Y), te_bind(st, jo, TE_BLOCK_X);
  te_bind(st, ii, TE_THREAD_Y), te_bind(st, ji, TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "2048 threads a block", "limit of 1024");
  te_clear_error(tt_ctx);
  /* vulkan allows 256 by default, or what the target string says */
  char *text = te_lower_text_for(s, te_target_parse(tt_ctx, "vulkan -max_threads_per_block=128"), 2,
                                 (te_tensor *const[]){a, b}, 0, NULL);
  cr_expect_null(text);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_lower_text", "2048 threads a block", "limit of 128");
}

Test(err_gpu, store_outside_bound_loops) {
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, 1024);
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F32, 1, E(n));
  te_tensor *b = te_compute(tt_ctx, "B", 1, E(n), E(i), te_add(TE_AT(a, i), TE_AT(a, i)));
  te_tensor *c = te_compute(tt_ctx, "C", 1, E(n), E(i), te_mul(TE_AT(b, i), TE_AT(b, i)));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){c});
  te_stage *sc = te_stage_of(s, c);
  te_iter *o, *in;
  cr_assert_eq(te_split(sc, te_axis(sc, 0), 64, &o, &in), TE_OK);
  te_bind(sc, o, TE_BLOCK_X), te_bind(sc, in, TE_THREAD_X);
  /* B stays at root with its loop unbound: its stores would run on the host */
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, c}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'B'", "outside every loop bound to a GPU block",
                "te_bind");
}

Test(err_gpu, nothing_bound) {
  te_tensor *a, *b;
  te_stage *st;
  te_schedule *s = scale(64, &a, &b, &st);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "outside every loop bound to a GPU block or thread");
}

Test(err_gpu, shared_memory_over_the_limit) {
  te_tensor *a, *b;
  te_stage *st;
  te_schedule *s = scale(65536, &a, &b, &st);
  te_iter *bo, *bi, *to, *ti;
  cr_assert_eq(te_split(st, te_axis(st, 0), 16384, &bo, &bi), TE_OK);
  cr_assert_eq(te_split(st, bi, 1024, &to, &ti), TE_OK);
  te_bind(st, bo, TE_BLOCK_X), te_bind(st, ti, TE_THREAD_X);
  te_tensor *as;
  cr_assert_eq(te_cache_read(s, a, TE_SCOPE_SHARED, 1, (te_stage *const[]){st}, &as), TE_OK);
  te_stage *sa = te_stage_of(s, as);
  cr_assert_eq(te_compute_at(sa, st, bo), TE_OK);
  te_iter *ao, *ai;
  cr_assert_eq(te_split(sa, te_axis(sa, 0), 1024, &ao, &ai), TE_OK);
  te_bind(sa, ai, TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "shared memory of 65536 bytes", "A_shared 65536",
                "limit of 49152");
  te_clear_error(tt_ctx);
  /* a target that says its device has more shared memory accepts it */
  cr_expect_eq(build(s, "cuda -max_shared_memory_per_block=65536", 2, (te_tensor *const[]){a, b}),
               TE_OK, "%s", te_last_error(tt_ctx));
}

Test(err_gpu, inconsistent_thread_extents) {
  gpu_case c;
  /* matmul's cooperative load split by 32 where the consumer has 16 threads on x */
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j"), *N = te_int(tt_ctx, 64);
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), N);
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F32, 2, E(N, N));
  te_tensor *b = te_placeholder(tt_ctx, "B", TE_F32, 2, E(N, N));
  te_tensor *out = te_compute(tt_ctx, "C", 2, E(N, N), E(i, j),
                              TE_SUM(te_mul(TE_AT(a, i, k), TE_AT(b, k, j)), k));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){out});
  te_stage *sc = te_stage_of(s, out);
  te_iter *io, *jo, *ii, *ji, *ko, *ki, *f, *fo, *fi;
  te_tensor *as;
  cr_assert_eq(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 16, 16, &io, &jo, &ii, &ji), TE_OK);
  cr_assert_eq(te_split(sc, te_reduce_iter(sc, 0), 16, &ko, &ki), TE_OK);
  cr_assert_eq(te_reorder(sc, 6, (te_iter *const[]){io, jo, ii, ji, ko, ki}), TE_OK);
  te_bind(sc, io, TE_BLOCK_Y), te_bind(sc, jo, TE_BLOCK_X);
  te_bind(sc, ii, TE_THREAD_Y), te_bind(sc, ji, TE_THREAD_X);
  cr_assert_eq(te_cache_read(s, a, TE_SCOPE_SHARED, 1, (te_stage *const[]){sc}, &as), TE_OK);
  te_stage *sa = te_stage_of(s, as);
  cr_assert_eq(te_compute_at(sa, sc, ko), TE_OK);
  cr_assert_eq(te_fuse(sa, te_axis(sa, 0), te_axis(sa, 1), &f), TE_OK);
  cr_assert_eq(te_split(sa, f, 32, &fo, &fi), TE_OK);
  te_bind(sa, fo, TE_THREAD_Y), te_bind(sa, fi, TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 3, (te_tensor *const[]){a, b, out}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "inconsistent thread extents", "stage 'A_shared'",
                "threadIdx.x (extent 32)", "stage 'C'", "extent 16");
  (void)c;
}

Test(err_gpu, parallel_loop_inside_a_kernel) {
  te_tensor *a, *b;
  te_stage *st;
  te_schedule *s = scale(4096, &a, &b, &st);
  te_iter *o, *in, *io, *ii;
  cr_assert_eq(te_split(st, te_axis(st, 0), 256, &o, &in), TE_OK);
  cr_assert_eq(te_split(st, in, 64, &io, &ii), TE_OK);
  te_bind(st, o, TE_BLOCK_X), te_parallel(st, io), te_bind(st, ii, TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "parallel inside a GPU kernel");
}

/* Without libdevice (TE_LIBDEVICE names a file that does not exist, set before this test's
   process first builds a CUDA kernel: the file is looked up once), sin is refused, naming it and
   where libdevice was looked for. */
Test(err_gpu, math_without_libdevice) {
  setenv("TE_LIBDEVICE", "/nonexistent/te_no_libdevice.bc", 1);
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, 64);
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F32, 1, E(n));
  te_tensor *b = te_compute(tt_ctx, "B", 1, E(n), E(i), te_call(tt_ctx, "sin", 1, E(TE_AT(a, i))));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){b});
  te_stage *st = te_stage_of(s, b);
  te_bind(st, te_axis(st, 0), TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "'sin'", "needs the CUDA toolkit's libdevice",
                "TE_LIBDEVICE");
}

/* TE_LIBDEVICE naming a file that is not bitcode: the build fails naming the file. */
Test(err_gpu, libdevice_not_bitcode) {
  char path[] = "/tmp/te_fake_libdevice_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, "not bitcode", 11), 11);
  close(fd);
  setenv("TE_LIBDEVICE", path, 1);
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, 64);
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F32, 1, E(n));
  te_tensor *b = te_compute(tt_ctx, "B", 1, E(n), E(i), te_call(tt_ctx, "cos", 1, E(TE_AT(a, i))));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){b});
  te_stage *st = te_stage_of(s, b);
  te_bind(st, te_axis(st, 0), TE_THREAD_X);
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, path, "not LLVM bitcode");
  unlink(path);
}

/* A vectorized loop inside a thread-bound loop builds for cuda (its PTX: unit.ptx_vector); one
   around a thread-bound loop is refused, naming both loops (its lanes would be threads). */
Test(err_gpu, vector_loop_around_threads) {
  te_tensor *a, *b;
  te_stage *st;
  te_schedule *s = scale(1024, &a, &b, &st);
  te_iter *o, *in, *bo, *bi;
  cr_assert_eq(te_split(st, te_axis(st, 0), 4, &o, &in), TE_OK);
  cr_assert_eq(te_split(st, o, 64, &bo, &bi), TE_OK);
  te_bind(st, bo, TE_BLOCK_X), te_bind(st, bi, TE_THREAD_X);
  cr_assert_eq(te_vectorize(st, in), TE_OK, "%s", te_last_error(tt_ctx));
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_OK, "%s", te_last_error(tt_ctx));
  s = scale(1024, &a, &b, &st);
  cr_assert_eq(te_split(st, te_axis(st, 0), 4, &o, &in), TE_OK);
  cr_assert_eq(te_split(st, o, 64, &bo, &bi), TE_OK);
  cr_assert_eq(te_reorder(st, 3, (te_iter *const[]){bo, in, bi}), TE_OK);
  te_bind(st, bo, TE_BLOCK_X), te_bind(st, bi, TE_THREAD_X);
  cr_assert_eq(te_vectorize(st, in), TE_OK, "%s", te_last_error(tt_ctx));
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize: loop 'i.i'",
                "contains the GPU-thread-bound loop 'i.o.i'");
}

/* Without libdevice a vectorized sin is refused as a scalar one is (the libdevice file is looked
   up once a process: this test's own). */
Test(err_gpu, vector_math_without_libdevice) {
  setenv("TE_LIBDEVICE", "/nonexistent/te_no_libdevice.bc", 1);
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, 256);
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F32, 1, E(n));
  te_tensor *b = te_compute(tt_ctx, "B", 1, E(n), E(i), te_call(tt_ctx, "sin", 1, E(TE_AT(a, i))));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){b});
  te_stage *st = te_stage_of(s, b);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 4, &o, &in), TE_OK);
  te_bind(st, o, TE_THREAD_X);
  cr_assert_eq(te_vectorize(st, in), TE_OK, "%s", te_last_error(tt_ctx));
  cr_expect_eq(build(s, "cuda", 2, (te_tensor *const[]){a, b}), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "'sin'", "needs the CUDA toolkit's libdevice");
}

/* Building needs no GPU; calling does. Without a driver the call fails cleanly. The driver is
   made absent on every machine, GPU or not: TE_CUDA_DRIVER names a library that does not exist,
   set before this test's process first touches CUDA (Criterion runs each test in a process of
   its own, and the runtime loads the driver once, on first use). */
Test(err_gpu, cuda_call_without_a_driver) {
  setenv("TE_CUDA_DRIVER", "/nonexistent/te_no_libcuda.so.1", 1);
  cr_assert(!te_device_available(kDLCUDA), "TE_CUDA_DRIVER was ignored");
  cr_expect(strstr(te_device_last_error(), "no CUDA driver"), "%s", te_device_last_error());
  cr_expect(strstr(te_device_last_error(), "te_no_libcuda"), "%s", te_device_last_error());
  gpu_case c;
  cr_assert(gpu_case_elementwise(tt_ctx, &c), "%s", te_last_error(tt_ctx));
  te_module *m = NULL;
  cr_assert_eq(
      te_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL, te_target_parse(tt_ctx, "cuda"), &m),
      TE_OK, "%s", te_last_error(tt_ctx));
  static float mem[3][100]; /* stand-ins for device pointers: never dereferenced */
  int64_t shape[1] = {100};
  DLTensor t[3];
  DLTensor *ts[3];
  for (int k = 0; k < 3; k++) {
    t[k] = (DLTensor){mem[k], {kDLCUDA, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
    ts[k] = &t[k];
  }
  cr_expect_eq(te_module_call(m, c.name, 3, ts, 0, NULL), TE_ERR_RUNTIME);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_RUNTIME, "te_module_call", "no CUDA driver");
  te_clear_error(tt_ctx);
  void *p = &p;
  cr_expect_eq(te_device_alloc((DLDevice){kDLCUDA, 0}, 64, &p), TE_ERR_RUNTIME);
  cr_expect_null(p);
  cr_expect(strstr(te_device_last_error(), "no CUDA driver"));
  /* host tensors are refused before anything is launched */
  t[0].device.device_type = kDLCPU;
  cr_expect_eq(te_module_call(m, c.name, 3, ts, 0, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "argument 'A'", "device_type", "kDLCUDA");
}
