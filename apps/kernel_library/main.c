/* main.c — the kernel_library example: calls kernels that te compiled ahead of time.
 *
 * This program links only the generated static libraries (libkl_linalg.a, libkl_act.a, made by
 * te_add_kernel_library at build time) and libte_runtime: no libte and no LLVM (the test
 * apps.kernel_library_deps checks that with ldd and nm). It runs each kernel on sizes that do
 * not divide the schedules' tiles, with outputs poisoned (NaN) first, compares with plain C,
 * and checks that a wrong argument is refused with a message. Exit status 0 when all is well.
 */
#include "kl_act.h"
#include "kl_linalg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

static void check(const char *what, int ok) {
  printf("%-40s %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

static float *buffer(int64_t n, unsigned seed) {
  float *p = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; p && i < n; i++) { /* non-zero values in [-2, -0.1] U [0.1, 2] */
    seed = seed * 1664525u + 1013904223u;
    float u = (float)(seed >> 8) / 16777216.0f;
    p[i] = (u < 0.5f ? -1.0f : 1.0f) * (0.1f + 3.8f * fabsf(u - 0.5f));
  }
  return p;
}

static DLTensor tensor(float *data, int ndim, int64_t *shape) {
  DLTensor t = {data, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
  return t;
}

static int close_enough(const float *got, const float *want, int64_t n, float tol) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])))) {
      printf("  [%lld]: got %g, want %g\n", (long long)i, got[i], want[i]);
      return 0;
    }
  return 1;
}

static void poison(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = NAN;
}

static void run_saxpy(void) {
  int64_t n = 1000, shape[1] = {n};
  float *x = buffer(n, 1), *y = buffer(n, 2), *z = buffer(n, 3), *want = buffer(n, 4);
  for (int64_t i = 0; i < n; i++)
    want[i] = 1.5f * x[i] + y[i];
  poison(z, n);
  DLTensor tx = tensor(x, 1, shape), ty = tensor(y, 1, shape), tz = tensor(z, 1, shape);
  int rc = kl_saxpy(&tx, &ty, &tz, 1.5f);
  check("kl_saxpy (n = 1000)", rc == 0 && close_enough(z, want, n, 1e-6f));
  free(x), free(y), free(z), free(want);
}

static void run_matmul(void) {
  int64_t m = 100, sa[2] = {m, 64}, sb[2] = {64, 32}, sc[2] = {m, 32};
  float *a = buffer(m * 64, 5), *b = buffer(64 * 32, 6), *c = buffer(m * 32, 7);
  float *want = buffer(m * 32, 8);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < 32; j++) {
      double s = 0;
      for (int64_t k = 0; k < 64; k++)
        s += (double)a[i * 64 + k] * b[k * 32 + j];
      want[i * 32 + j] = (float)s;
    }
  poison(c, m * 32);
  DLTensor ta = tensor(a, 2, sa), tb = tensor(b, 2, sb), tc = tensor(c, 2, sc);
  int rc = kl_matmul(&ta, &tb, &tc);
  check("kl_matmul (100 x 64 x 32)", rc == 0 && close_enough(c, want, m * 32, 1e-4f));

  /* a wrong argument: B given as the output */
  rc = kl_matmul(&ta, &tb, &tb);
  printf("  refused: %s\n", te_rt_last_error());
  check("kl_matmul refuses a wrong shape", rc != 0 && te_rt_last_error()[0] != '\0');
  free(a), free(b), free(c), free(want);
}

static void run_act(void) {
  int64_t n = 77, s1[1] = {n};
  float *x = buffer(n, 9), *y = buffer(n, 10), *want = buffer(n, 11);
  for (int64_t i = 0; i < n; i++)
    want[i] = x[i] > 0 ? x[i] : 0;
  poison(y, n);
  DLTensor tx = tensor(x, 1, s1), ty = tensor(y, 1, s1);
  check("kl_relu (n = 77)", kl_relu(&tx, &ty) == 0 && close_enough(y, want, n, 0));
  free(x), free(y), free(want);

  int64_t m = 13, sx[2] = {m, 32}, sb[1] = {32};
  float *x2 = buffer(m * 32, 12), *bias = buffer(32, 13), *y2 = buffer(m * 32, 14);
  float *want2 = buffer(m * 32, 15);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < 32; j++) {
      float v = x2[i * 32 + j] + bias[j];
      want2[i * 32 + j] = v > 0 ? v : 0;
    }
  poison(y2, m * 32);
  DLTensor tx2 = tensor(x2, 2, sx), tb = tensor(bias, 1, sb), ty2 = tensor(y2, 2, sx);
  check("kl_bias_relu (13 x 32)",
        kl_bias_relu(&tx2, &tb, &ty2) == 0 && close_enough(y2, want2, m * 32, 1e-6f));
  free(x2), free(bias), free(y2), free(want2);
}

int main(void) {
  run_saxpy();
  run_matmul();
  run_act();
  printf("%s\n", failures ? "kernel_library: FAILED" : "kernel_library: all kernels match C");
  return failures ? 1 : 0;
}
