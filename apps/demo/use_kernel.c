/* use_kernel.c — a program that uses a te kernel without te: it includes the header te wrote
 * (matmul_f32.h) and links the static library (libmatmul_f32.a) with libte_runtime and libm
 * only; no libte, no LLVM. te-demo compiles and runs it after saving the kernel:
 *     cc -DN=1024 use_kernel.c -I<dir> <dir>/libmatmul_f32.a -lte_runtime -lm
 * It computes C = A * B on N x N f32 inputs, checks 3 rows against a plain loop, times the
 * kernel, and shows that a wrong argument is refused with a message, not a crash.
 */
#define _POSIX_C_SOURCE 200809L
#include "matmul_f32.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static DLTensor tensor(float *data, int64_t *shape) {
  DLTensor t = {0};
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

int main(void) {
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N);
  float *c = malloc(sizeof(float) * N * N);
  if (!a || !b || !c)
    return 1;
  for (long x = 0; x < (long)N * N; x++) {
    a[x] = (float)(x % 7 + 1) / 8.0f;
    b[x] = (float)(x % 5 + 1) / -4.0f;
    c[x] = NAN;
  }
  int64_t shape[2] = {N, N}, bad_shape[2] = {N, N / 2};
  DLTensor ta = tensor(a, shape), tb = tensor(b, shape), tc = tensor(c, shape);
  if (matmul_f32(&ta, &tb, &tc) != 0) {
    printf("matmul_f32 failed: %s\n", te_rt_last_error());
    return 1;
  }
  int rows[3] = {0, N / 2, N - 1};
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < N; j++) {
      int i = rows[r];
      double sum = 0, abs_sum = 0;
      for (int k = 0; k < N; k++) {
        sum += (double)a[(long)i * N + k] * b[(long)k * N + j];
        abs_sum += fabs((double)a[(long)i * N + k] * b[(long)k * N + j]);
      }
      if (!(fabs(c[(long)i * N + j] - sum) <= 5e-7 * sqrt((double)N) * abs_sum)) { /* as te-demo */
        printf("wrong result at C[%d, %d]: %g, expected %g\n", i, j, c[(long)i * N + j], sum);
        return 1;
      }
    }
  double best = INFINITY;
  for (int rep = 0; rep < 10; rep++) {
    double t0 = now_s();
    matmul_f32(&ta, &tb, &tc);
    double dt = now_s() - t0;
    best = dt < best ? dt : best;
  }
  printf("matmul_f32(A, B, C) on %d x %d: rows 0, %d, %d right; %.2f ms (best of 10), "
         "%.1f GFLOP/s\n",
         N, N, N / 2, N - 1, best * 1e3, 2.0 * N * N * N / best * 1e-9);
  DLTensor bad = tensor(b, bad_shape);
  int32_t st = matmul_f32(&ta, &bad, &tc);
  printf("a %d x %d B is refused, status %d:\n  %s\n", N, N / 2, (int)st, te_rt_last_error());
  free(a), free(b), free(c);
  return st != 0 ? 0 : 1;
}
