/* peak.h — what this machine can do at best: vector FMA throughput and memory bandwidth,
 * measured (not taken from a data sheet), so every result can be given as a fraction of them. */
#ifndef TE_BENCH_PEAK_H
#define TE_BENCH_PEAK_H

/* The widest FMA this CPU has: "avx512" (zmm), "avx2" (ymm), or NULL (neither). */
const char *peak_fma_kind(void);
/* GFLOP/s of fused multiply-adds on the widest vectors (peak_fma_kind: 16 independent chains
   on zmm, 12 on ymm; 2 flops per lane per FMA) with the given number of threads running at
   once. 0 when the CPU has neither. */
double peak_fma_gflops(int threads, int quick);

/* Integer GOP/s of vpdpbusd on zmm registers (16 chains; 128 operations per instruction: 64
   u8 x s8 multiplies and 64 adds) with the given number of threads. 0 without AVX512-VNNI. */
double peak_vnni_gops(int threads, int quick);
/* GFLOP/s of vdpbf16ps on zmm registers (16 chains; 64 operations per instruction: 32 bf16
   products and 32 adds into f32) with the given number of threads. 0 without AVX512-BF16. */
double peak_bf16_gflops(int threads, int quick);
/* Memory bandwidth in GB/s over arrays far larger than the caches, with the given number of
   threads: copy (a = b, 8 bytes per element) and triad (a = b + s*c, 12 bytes per element),
   counted as STREAM does (no write-allocate traffic). Best of a few repetitions. */
void peak_bandwidth_gbs(int threads, int quick, double *copy_gbs, double *triad_gbs);

#endif
