/* gpu_ref.h — plain C references of the GPU cases (gpu_cases.h), computed in double on tt_bufs,
 * so that the CUDA and Vulkan tests compare a device's results with C, never with te's own CPU
 * code (a bug shared by both back ends would otherwise pass).
 */
#ifndef TE_GPU_REF_H
#define TE_GPU_REF_H

#include <stdbool.h>

#include "te_test.h"

/* C[i] = A[i] * 2 + B[i] (gpu_case_elementwise), in f32 as the kernel computes it. */
void gpu_ref_elementwise(const tt_buf *a, const tt_buf *b, tt_buf *c);
/* B[i] = sum over k of A[i, k] (gpu_case_reduce): A rows x len. */
void gpu_ref_rowsum(const tt_buf *a, tt_buf *b);
/* softmax over the last axis of x (gpu_case_softmax): rows x len. */
void gpu_ref_softmax(const tt_buf *x, tt_buf *out);

/* The reference of the case whose kernel is named kernel (gpu_case.name): the output, the last
   of nbufs buffers, from the inputs before it. False for a kernel name it does not know. */
bool gpu_ref_case(const char *kernel, int nbufs, tt_buf *const bufs[]);

#endif
