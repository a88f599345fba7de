/* fake_libcuda.h — what the fake CUDA driver (fake_libcuda.c, built as libte_fake_cuda.so)
 * records, for test/e2e/test_cuda.c on machines without an NVIDIA GPU. The test loads te with
 * TE_CUDA_DRIVER naming the fake, then reads the records through dlsym on the same library.
 */
#ifndef TE_FAKE_LIBCUDA_H
#define TE_FAKE_LIBCUDA_H

#include <stdbool.h>
#include <stdint.h>

enum { FAKE_CUDA_MAX_PARAMS = 32 };

typedef struct fake_cuda_launch {
  char name[128];
  unsigned grid[3], block[3];
  int nparams;                          /* from the kernel's .entry signature in the PTX */
  uint64_t value[FAKE_CUDA_MAX_PARAMS]; /* each parameter, zero-extended */
  bool pointer[FAKE_CUDA_MAX_PARAMS];   /* a .ptr parameter (a buffer) */
} fake_cuda_launch;

/* Launches since the library was loaded (every one passed the fake's checks: non-zero grid and
   block, at most 1024 threads, every pointer parameter inside a live allocation), and launch i
   (NULL out of range). Looked up with dlsym as "fake_cuda_nlaunches", "fake_cuda_launch_at". */
int fake_cuda_nlaunches(void);
const fake_cuda_launch *fake_cuda_launch_at(int i);
typedef int (*fake_cuda_nlaunches_fn)(void);
typedef const fake_cuda_launch *(*fake_cuda_launch_fn)(int i);
/* Why the last refused call was refused ("" when none was): "fake_cuda_refusal". */
const char *fake_cuda_refusal(void);

#endif
