/* peak_dot.c — the measured peaks of the dot-product instructions vpdpbusd (AVX512-VNNI) and
 * vdpbf16ps (AVX512-BF16): peak.h's peak_vnni_gops and peak_bf16_gflops.
 *
 * Each trial runs 16 independent accumulator chains of the instruction on zmm registers, the
 * best of many short trials (as the FMA peak). The chains are written in inline assembly, one
 * instruction per chain, so the loop is exactly 16 instructions, a decrement and a branch.
 * Why not intrinsics, as peak.c has: GCC (12) compiles a loop of 16 `acc[c] =
 * _mm512_dpbusd_epi32(acc[c], a, b)` into a copy of each accumulator to another register, the
 * instruction, and a store of the result to the stack every iteration (the instruction
 * overwrites its accumulator operand, and GCC's allocator keeps the array in memory): the loop
 * then measured the moves and stores, about half the instruction's rate, and int8 kernels
 * showed 150-180% of that "peak". Measured on this machine (Zen 5) with the assembly loop,
 * instructions per ns: 4 chains 4.2, 8 chains 7.7, 12 and 16 chains 8.4, the same as the FMA
 * peak's zmm rate: two instructions a cycle, a latency of about 4 cycles, so 16 chains (twice
 * latency x throughput) leave slack.
 *
 * Operations counted per instruction, 16 lanes each:
 *   vpdpbusd:  4 u8 x s8 products and their 4 adds a lane = 128 integer operations (as an int8
 *              GEMM counts 2 n^3);
 *   vdpbf16ps: 2 bf16 x bf16 products and their 2 adds a lane = 64 floating-point operations
 *              (as a bf16 GEMM counts 2 n^3).
 * Each is run only where the CPU has the instruction (0 elsewhere); the assembler needs no
 * -m flag for inline assembly.
 */
#define _POSIX_C_SOURCE 200809L

#include "peak.h"

#include "harness.h"

#include <omp.h>

#if defined(__x86_64__)
/* iters iterations of 16 chains of `insn a, b, acc` on zmm0..15 (a in zmm16, b in zmm17). The
   accumulators start at zero; each chain is a dependency through its own register. */
#define CHAINS_ASM(insn)                                                                           \
  "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"                                                              \
  "vmovdqa64 %%zmm0, %%zmm1\n\tvmovdqa64 %%zmm0, %%zmm2\n\tvmovdqa64 %%zmm0, %%zmm3\n\t"           \
  "vmovdqa64 %%zmm0, %%zmm4\n\tvmovdqa64 %%zmm0, %%zmm5\n\tvmovdqa64 %%zmm0, %%zmm6\n\t"           \
  "vmovdqa64 %%zmm0, %%zmm7\n\tvmovdqa64 %%zmm0, %%zmm8\n\tvmovdqa64 %%zmm0, %%zmm9\n\t"           \
  "vmovdqa64 %%zmm0, %%zmm10\n\tvmovdqa64 %%zmm0, %%zmm11\n\tvmovdqa64 %%zmm0, %%zmm12\n\t"        \
  "vmovdqa64 %%zmm0, %%zmm13\n\tvmovdqa64 %%zmm0, %%zmm14\n\tvmovdqa64 %%zmm0, %%zmm15\n\t"        \
  "vpbroadcastd %k[va], %%zmm16\n\t"                                                               \
  "vpbroadcastd %k[vb], %%zmm17\n\t"                                                               \
  "1:\n\t" insn " %%zmm17, %%zmm16, %%zmm0\n\t" insn " %%zmm17, %%zmm16, %%zmm1\n\t" insn          \
  " %%zmm17, %%zmm16, %%zmm2\n\t" insn " %%zmm17, %%zmm16, %%zmm3\n\t" insn                        \
  " %%zmm17, %%zmm16, %%zmm4\n\t" insn " %%zmm17, %%zmm16, %%zmm5\n\t" insn                        \
  " %%zmm17, %%zmm16, %%zmm6\n\t" insn " %%zmm17, %%zmm16, %%zmm7\n\t" insn                        \
  " %%zmm17, %%zmm16, %%zmm8\n\t" insn " %%zmm17, %%zmm16, %%zmm9\n\t" insn                        \
  " %%zmm17, %%zmm16, %%zmm10\n\t" insn " %%zmm17, %%zmm16, %%zmm11\n\t" insn                      \
  " %%zmm17, %%zmm16, %%zmm12\n\t" insn " %%zmm17, %%zmm16, %%zmm13\n\t" insn                      \
  " %%zmm17, %%zmm16, %%zmm14\n\t" insn " %%zmm17, %%zmm16, %%zmm15\n\t"                           \
  "dec %[n]\n\t"                                                                                   \
  "jnz 1b\n\t"                                                                                     \
  "vmovd %%xmm0, %k[out]\n\t"                                                                      \
  "vzeroupper\n\t"

/* xmm16/17 exist for the compiler only when it targets AVX-512 (-march=native on an AVX2 CPU
   refuses to name them); without AVX-512 the compiled code never uses them, so the asm may
   overwrite them unannounced (and never runs there: the CPU checks below return 0 first). */
#ifdef __AVX512F__
#define CHAIN_CLOBBERS_HIGH "xmm16", "xmm17",
#else
#define CHAIN_CLOBBERS_HIGH
#endif
#define CHAIN_CLOBBERS                                                                             \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",         \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", CHAIN_CLOBBERS_HIGH "cc"

/* Returns lane 0 of the first chain so the work is not dead. iters > 0. */
static unsigned vnni_chains(long iters) {
  unsigned out;
  long n = iters;
  __asm__ volatile(CHAINS_ASM("vpdpbusd")
                   : [n] "+r"(n), [out] "=r"(out)
                   : [va] "r"(0x03030303u), [vb] "r"(0xfefefefeu) /* u8 3, s8 -2 */
                   : CHAIN_CLOBBERS);
  return out;
}

static unsigned bf16_chains(long iters) {
  unsigned out;
  long n = iters;
  __asm__ volatile(CHAINS_ASM("vdpbf16ps")
                   : [n] "+r"(n), [out] "=r"(out)
                   : [va] "r"(0x3f803f80u), [vb] "r"(0x33803380u) /* bf16 1.0, 2^-24 */
                   : CHAIN_CLOBBERS);
  return out;
}

/* The best rate of many trials of chains at threads threads, ops_per_insn per instruction. */
static double best_rate(unsigned (*chains)(long), double ops_per_insn, int threads, int quick) {
  long iters = 1000 * 1000L; /* 16 M instructions: a few ms a trial */
  double best = 0;
  volatile unsigned sink = 0;
  for (int rep = 0; rep < (quick ? 10 : 40); rep++) {
    double t0 = 0, t1 = 0;
    unsigned local = 0;
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
    double rate = ops_per_insn * 16 * (double)iters * threads / (t1 - t0) * 1e-9;
    if (rate > best)
      best = rate;
  }
  (void)sink;
  return best;
}

double peak_vnni_gops(int threads, int quick) {
  if (!__builtin_cpu_supports("avx512vnni"))
    return 0;
  return best_rate(vnni_chains, 128, threads, quick);
}

double peak_bf16_gflops(int threads, int quick) {
  if (!__builtin_cpu_supports("avx512bf16"))
    return 0;
  return best_rate(bf16_chains, 64, threads, quick);
}
#else
double peak_vnni_gops(int threads, int quick) {
  (void)threads, (void)quick;
  return 0;
}

double peak_bf16_gflops(int threads, int quick) {
  (void)threads, (void)quick;
  return 0;
}
#endif
