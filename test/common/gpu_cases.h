/* gpu_cases.h — the GPU schedules the test suite compiles (public API only), shared by the
 * lowering golden tests, the PTX tests and the SPIR-V tests, so every back end is tested on the
 * same kernels:
 *
 *   elementwise  C[i] = A[i] * 2 + B[i], n symbolic; i split by 64, blockIdx.x / threadIdx.x
 *   reduce       B[i] = sum_k A[i, k], A 64 x 1024; k split by 64 and rfactored: 64 threads a
 *                row each sum 16 values into a shared buffer, then the 64 partial sums are
 *                added as a tree after a barrier (gpu_tree.c; blockIdx.x = i)
 *   matmul       C = A x B, 128 x 128 x 128; 16 x 16 tiles of C a block (blockIdx.y/x), one
 *                element a thread (threadIdx.y/x); k split by 16; A and B tiles cached in shared
 *                memory at k.o, loaded cooperatively (each copy loop fused and split over the
 *                16 x 16 threads), barriers around the use
 *   softmax      te_op_softmax over x[32, 256]: a row a block; max and sum by one thread, exp
 *                and the division by 256 threads (threadIdx.x), intermediates in shared memory
 *   mma_f16, mma_bf16  (not in gpu_cases[]: CUDA only) C = A x B, 64 x 64 x 64, A and B f16 or
 *                bf16, C f32: 16 x 8 tiles, te_tensorize(C, i.inner, "mma_m16n8k16"); a block
 *                of 4 warps (threadIdx.x), one tile each (f16) or 2 side by side (bf16)
 *
 * Each builder fills a gpu_case and returns false when a call failed (the message is on the
 * context).
 */
#ifndef TE_GPU_CASES_H
#define TE_GPU_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include <te/te.h>

typedef struct gpu_case {
  const char *name; /* the kernel's name */
  te_schedule *sch;
  int ntensors;
  te_tensor *tensors[8]; /* inputs first, the output last */
  int nscalars;
  te_expr *scalars[4];
} gpu_case;

typedef bool (*gpu_case_builder)(te_ctx *, gpu_case *);

bool gpu_case_elementwise(te_ctx *, gpu_case *);
bool gpu_case_reduce(te_ctx *, gpu_case *);
bool gpu_case_matmul(te_ctx *, gpu_case *);
bool gpu_case_softmax(te_ctx *, gpu_case *);
bool gpu_case_mma_f16(te_ctx *, gpu_case *);
bool gpu_case_mma_bf16(te_ctx *, gpu_case *);
/* The tensor-core GEMM of any size and input dtype; k is split by k_split (16 matches the
   instruction; anything else is a schedule the tensorize refuses); each of the 4 warps of a
   block computes tiles_per_warp tiles side by side (a serial loop inside k.o; bench_gpu.c's
   schedule with 4). */
bool gpu_case_mma_gemm(te_ctx *, gpu_case *, te_dtype in, int64_t m, int64_t n, int64_t k,
                       int64_t k_split, int64_t tiles_per_warp);
/* The same nest as an 8-bit integer GEMM accumulating in i32, A of dtype a and B of b (each s8
   or u8 for the instruction), te_tensorize(C, i.inner, "mma_m16n8k32"); k_split 32 matches. */
bool gpu_case_mma_int8(te_ctx *, gpu_case *, te_dtype a, te_dtype b, int64_t m, int64_t n,
                       int64_t k, int64_t k_split, int64_t tiles_per_warp);

/* Vector code inside a CUDA kernel (not in gpu_cases[]: CUDA only): B[r, j] =
   select(a > 0, fn(a), a * 0.5) + f(i32(a * 4)), a = A[r, j * stride + offset], A of
   rows x (cols * stride + offset); r on blockIdx.y, j split by lanes (vectorized) and the rest
   by threads (threadIdx.x, blockIdx.x). With shared the block's part of A is first copied into
   shared memory by its threads, lanes elements at a time (vectorized), and read from there. */
typedef struct gpu_vec_spec {
  const char *name; /* the kernel's */
  te_dtype dt;
  int64_t rows, cols;
  int64_t lanes, threads;
  int64_t offset, stride;
  bool shared;
  const char *fn; /* a math function of a (NULL: a itself) */
} gpu_vec_spec;
bool gpu_case_vector(te_ctx *, gpu_case *, const gpu_vec_spec *);

/* Where a cross-thread reduction's partials lie, for the tree tests (unit.gpu_tree,
   unit.spirv_subgroup): the thread indices that the rfactor'd stage's axis 0 (the partials)
   and, in the *_COLS_* layouts, its axis 1 (the outputs) are bound to. inner is the extent of
   the lowest thread index the partials are split over, inner2 that of the two lowest. */
typedef enum gpu_partials {
  ALONG_X,         /* threadIdx.x; one output a block (a one-dimensional block) */
  ALONG_Y,         /* threadIdx.y; threadIdx.x indexes the outputs */
  ALONG_X_COLS_Y,  /* threadIdx.x; threadIdx.y indexes the outputs */
  ALONG_XY,        /* threadIdx.y * inner + threadIdx.x; one output a block */
  ALONG_YZ_COLS_X, /* threadIdx.z * inner + threadIdx.y; threadIdx.x indexes the outputs */
  ALONG_XYZ,       /* threadIdx.z * inner2 + threadIdx.y * inner + threadIdx.x; one output */
} gpu_partials;
/* Binds the rfactor'd stage srf's loops for layout; the first failing call's status. */
te_status gpu_bind_partials(te_stage *srf, gpu_partials layout, int64_t inner, int64_t inner2);

/* All of them, by name. */
typedef struct gpu_case_entry {
  const char *name;
  gpu_case_builder build;
} gpu_case_entry;
extern const gpu_case_entry gpu_cases[];
extern const int gpu_ncases;

#endif
