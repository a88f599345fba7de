/* peak.c — measured FMA peak and memory bandwidth (peak.h).
 *
 * The FMA loop keeps independent accumulator chains of vector FMAs in registers: with a 4-cycle
 * latency and two FMA units, 8 chains are the minimum to saturate a core. On AVX-512, 16 chains
 * of _mm512_fmadd_ps (zmm; slack beyond the 8); on AVX2, 12 chains of _mm256_fmadd_ps (ymm: 12
 * accumulators and the two constants fit the 16 registers). Each is compiled with its own target
 * attribute and chosen at run time, so the file builds with -march=native on either CPU.
 * The bandwidth loops are plain C over 64-byte aligned arrays of 3 x 128 MB (3 x 32 MB with
 * --quick), split across threads with OpenMP static scheduling (first-touch by the same threads).
 * Both are the best of many short trials: on a shared machine the best trial is the one least
 * disturbed by others, which is what a peak means.
 */
#define _POSIX_C_SOURCE 200809L

#include "peak.h"

#include "harness.h"

#include <immintrin.h>
#include <omp.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__x86_64__)
/* iters iterations of 16 chains x 16 lanes (32 flops a lane-FMA pair); returns a value so the
   work is not dead. */
__attribute__((target("avx512f,fma"))) static float fma_chains_avx512(long iters) {
  __m512 acc[16];
  __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < 16; c++)
    acc[c] = _mm512_set1_ps((float)c);
  for (long i = 0; i < iters; i++) {
#define STEP(c) acc[c] = _mm512_fmadd_ps(acc[c], mul, add)
    /* clang-format off */
    STEP(0); STEP(1); STEP(2); STEP(3); STEP(4); STEP(5); STEP(6); STEP(7);
    STEP(8); STEP(9); STEP(10); STEP(11); STEP(12); STEP(13); STEP(14); STEP(15);
    /* clang-format on */
#undef STEP
  }
  __m512 s = acc[0];
  for (int c = 1; c < 16; c++)
    s = _mm512_add_ps(s, acc[c]);
  return _mm512_reduce_add_ps(s);
}

/* iters iterations of 12 chains x 8 lanes. */
__attribute__((target("avx2,fma"))) static float fma_chains_avx2(long iters) {
  __m256 acc[12];
  __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  for (int c = 0; c < 12; c++)
    acc[c] = _mm256_set1_ps((float)c);
  for (long i = 0; i < iters; i++) {
#define STEP(c) acc[c] = _mm256_fmadd_ps(acc[c], mul, add)
    /* clang-format off */
    STEP(0); STEP(1); STEP(2); STEP(3); STEP(4); STEP(5);
    STEP(6); STEP(7); STEP(8); STEP(9); STEP(10); STEP(11);
    /* clang-format on */
#undef STEP
  }
  __m256 s = acc[0];
  for (int c = 1; c < 12; c++)
    s = _mm256_add_ps(s, acc[c]);
  float lane[8];
  _mm256_storeu_ps(lane, s);
  return lane[0] + lane[1] + lane[2] + lane[3] + lane[4] + lane[5] + lane[6] + lane[7];
}

const char *peak_fma_kind(void) {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"))
    return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "avx2";
  return NULL;
}

double peak_fma_gflops(int threads, int quick) {
  const char *kind = peak_fma_kind();
  if (!kind)
    return 0;
  bool wide = kind[3] == '5'; /* "avx512" */
  float (*chains)(long) = wide ? fma_chains_avx512 : fma_chains_avx2;
  double flops_per_iter = wide ? 2.0 * 16 * 16 : 2.0 * 12 * 8;
  long iters = 2 * 1000 * 1000L; /* about 10 ms a trial */
  double best = 0;
  volatile float sink = 0;
  for (int rep = 0; rep < (quick ? 10 : 40); rep++) {
    double t0 = 0, t1 = 0;
    float local = 0;
#pragma omp parallel num_threads(threads) reduction(+ : local)
    {
#pragma omp barrier
#pragma omp master
      t0 = bench_now();
      local += chains(iters);
#pragma omp barrier
#pragma omp master
      t1 = bench_now();
    }
    sink += local;
    double gflops = flops_per_iter * (double)iters * threads / (t1 - t0) * 1e-9;
    if (gflops > best)
      best = gflops;
  }
  (void)sink;
  return best;
}
#else
const char *peak_fma_kind(void) { return NULL; }

double peak_fma_gflops(int threads, int quick) {
  (void)threads, (void)quick;
  return 0;
}
#endif

void peak_bandwidth_gbs(int threads, int quick, double *copy_gbs, double *triad_gbs) {
  size_t n = quick ? (size_t)8 << 20 : (size_t)32 << 20; /* floats per array */
  float *a = bench_alloc_f32(n), *b = bench_alloc_f32(n), *c = bench_alloc_f32(n);
  *copy_gbs = *triad_gbs = 0;
  if (!a || !b || !c)
    goto done;
  long nn = (long)n;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < nn; i++) {
    a[i] = 0;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  for (int rep = 0; rep < (quick ? 4 : 6); rep++) {
    double t0 = bench_now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < nn; i++)
      a[i] = b[i];
    double t1 = bench_now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < nn; i++)
      a[i] = b[i] + 0.5f * c[i];
    double t2 = bench_now();
    double copy = 8.0 * (double)n / (t1 - t0) * 1e-9, triad = 12.0 * (double)n / (t2 - t1) * 1e-9;
    if (copy > *copy_gbs)
      *copy_gbs = copy;
    if (triad > *triad_gbs)
      *triad_gbs = triad;
  }
done:
  bench_free(a);
  bench_free(b);
  bench_free(c);
}
