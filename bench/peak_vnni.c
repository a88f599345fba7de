/* peak_vnni.c — the measured peak of vpdpbusd (AVX512-VNNI), peak.h's peak_vnni_gops.
 *
 * As the FMA peak: 16 independent accumulator chains of _mm512_dpbusd_epi32 in registers, the
 * best of many short trials. One instruction is 16 lanes x 4 u8 x s8 products summed into s32:
 * 64 multiplies and 64 adds, counted as 128 integer operations (as int8 GEMMs count 2 n^3).
 * Built with -mavx512f -mavx512vnni (CMakeLists.txt) and run only where the CPU has the
 * instruction (0 elsewhere).
 */
#define _POSIX_C_SOURCE 200809L

#include "peak.h"

#include "harness.h"

#include <immintrin.h>
#include <omp.h>

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
static int vnni_chains(long iters) {
  __m512i acc[16];
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int c = 0; c < 16; c++)
    acc[c] = _mm512_set1_epi32(c);
  for (long i = 0; i < iters; i++) {
#define STEP(c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b)
    /* clang-format off */
    STEP(0); STEP(1); STEP(2); STEP(3); STEP(4); STEP(5); STEP(6); STEP(7);
    STEP(8); STEP(9); STEP(10); STEP(11); STEP(12); STEP(13); STEP(14); STEP(15);
    /* clang-format on */
#undef STEP
  }
  __m512i s = acc[0];
  for (int c = 1; c < 16; c++)
    s = _mm512_add_epi32(s, acc[c]);
  return _mm512_reduce_add_epi32(s);
}

double peak_vnni_gops(int threads, int quick) {
  if (!__builtin_cpu_supports("avx512vnni"))
    return 0;
  long iters = 2 * 1000 * 1000L;
  double best = 0;
  volatile int sink = 0;
  for (int rep = 0; rep < (quick ? 10 : 40); rep++) {
    double t0 = 0, t1 = 0;
    int local = 0;
#pragma omp parallel num_threads(threads) reduction(+ : local)
    {
#pragma omp barrier
#pragma omp master
      t0 = bench_now();
      local += vnni_chains(iters);
#pragma omp barrier
#pragma omp master
      t1 = bench_now();
    }
    sink += local;
    double gops = 128.0 * 16 * (double)iters * threads / (t1 - t0) * 1e-9;
    if (gops > best)
      best = gops;
  }
  (void)sink;
  return best;
}
#else
double peak_vnni_gops(int threads, int quick) {
  (void)threads, (void)quick;
  return 0;
}
#endif
