/* bench.h — the workloads of te-bench, each in its own file, run by main.c.
 *
 * A workload allocates its inputs, computes a plain C reference in double, builds te's kernel
 * (te_util.h) and the anchors, then runs every variant through bench_run_variant (harness.h) at
 * 1 and cfg->max_threads threads where threads apply, and records compile times. Rows go to the
 * report (report.h).
 */
#ifndef TE_BENCH_BENCH_H
#define TE_BENCH_BENCH_H

#include <stdint.h>

#include "harness.h"

void wl_sgemm(const bench_cfg *);
void wl_conv2d(const bench_cfg *);
void wl_blur(const bench_cfg *);
void wl_softmax(const bench_cfg *);
void wl_layernorm(const bench_cfg *);

void wl_int8gemm(const bench_cfg *);
/* The largest u8 activation the int8 rows feed oneDNN and te: 255 where the CPU has a VNNI
   (AVX512-VNNI or AVX-VNNI), else 127, since oneDNN's path without one (vpmaddubsw) saturates the
   sum of two u8 x s8 products to 16 bits, which 7-bit activations cannot reach: oneDNN's own
   advice for those machines ("Nuances of int8 Computations"). te is exact on the whole range
   either way (test/e2e/test_tensorize.c). */
uint8_t dnnl_i8_u8_max(void);
/* The oneDNN anchor of wl_int8gemm (int8gemm_dnnl.c): C = A x B, n x n, u8 x s8 -> s32,
   row-major user buffers (the weights reordered into oneDNN's format once, outside the timed
   call). NULL with a message in err on failure. */
typedef struct dnnl_i8mm dnnl_i8mm;
dnnl_i8mm *dnnl_i8mm_new(int n, const uint8_t *a, const int8_t *b, int32_t *c, char *err,
                         int err_size);
int dnnl_i8mm_run(void *mm); /* the timed part */
void dnnl_i8mm_free(dnnl_i8mm *);

void wl_bf16gemm(const bench_cfg *);
/* The oneDNN anchor of wl_bf16gemm (bf16gemm_dnnl.c): C = A x B, n x n, bf16 x bf16 -> f32
   (a and b: bf16 bit patterns), row-major user buffers (the weights reordered into oneDNN's
   format once, outside the timed call). NULL with a message in err on failure. */
typedef struct dnnl_bf16mm dnnl_bf16mm;
dnnl_bf16mm *dnnl_bf16mm_new(int n, const uint16_t *a, const uint16_t *b, float *c, char *err,
                             int err_size);
int dnnl_bf16mm_run(void *mm); /* the timed part */
void dnnl_bf16mm_free(dnnl_bf16mm *);

void wl_int8conv(const bench_cfg *);
/* The oneDNN anchor of wl_int8conv (int8conv_dnnl.c): 3x3, stride 1, pad 1, u8 x s8 -> s32,
   src and dst NHWC, weights given HWIO (reordered into oneDNN's format once, outside the timed
   call). NULL with a message in err on failure. */
typedef struct dnnl_i8conv dnnl_i8conv;
dnnl_i8conv *dnnl_i8conv_new(int n, int c, int h, int w, int k, const uint8_t *in,
                             const int8_t *wei_hwio, int32_t *out, char *err, int err_size);
int dnnl_i8conv_run(void *conv); /* the timed part */
void dnnl_i8conv_free(dnnl_i8conv *);

void wl_bf16conv(const bench_cfg *);
/* The oneDNN anchor of wl_bf16conv (bf16conv_dnnl.c): wl_int8conv's with bf16 in and weights (bit
   patterns) and an f32 out. NULL with a message in err on failure. */
typedef struct dnnl_bf16conv dnnl_bf16conv;
dnnl_bf16conv *dnnl_bf16conv_new(int n, int c, int h, int w, int k, const uint16_t *in,
                                 const uint16_t *wei_hwio, float *out, char *err, int err_size);
int dnnl_bf16conv_run(void *conv); /* the timed part */
void dnnl_bf16conv_free(dnnl_bf16conv *);

/* The oneDNN anchor of wl_conv2d (conv2d_dnnl.c). */
typedef struct dnnl_conv dnnl_conv;
/* NCHW user buffers; the primitive picks its own layouts (format any) and the reorders into and
   out of them happen outside the timed call. NULL with a message in err on failure. */
dnnl_conv *dnnl_conv_new(int batch, int chans, int height, int width, int kout, const float *in,
                         const float *w, char *err, int err_size);
int dnnl_conv_run(void *conv);                 /* the timed part: the convolution only */
int dnnl_conv_output(dnnl_conv *, float *out); /* reorder the result back to NCHW */
void dnnl_conv_free(dnnl_conv *);
/* "oneDNN 2.6.x (cpu runtime N)" into buf. */
void dnnl_version_str(char *buf, int size);

#endif
