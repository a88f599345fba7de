/* alloc.c — aligned allocation for the intermediate buffers of generated kernels.
 *
 * 64 bytes is the cache-line size and the widest vector (AVX-512) te emits, so a buffer from
 * here can be loaded with aligned vector instructions from its start. Sizes are rounded up to a
 * multiple of the alignment, and a zero-byte request gets a valid (64-byte) block so that code
 * can treat NULL as "out of memory" only. Allocation goes through te's hook (mem_hook.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "mem_hook.h"
#include "te/runtime.h"

enum { RT_ALIGN = 64 };

void *te_rt_alloc(int64_t bytes) {
  if (bytes < 0 || (uint64_t)bytes > SIZE_MAX - RT_ALIGN)
    return NULL;
  size_t size = ((size_t)bytes + RT_ALIGN - 1) & ~(size_t)(RT_ALIGN - 1);
  if (size == 0)
    size = RT_ALIGN;
  /* a running kernel's buffer belongs to no context: the process's counter of the hook */
  return te_rt_mem_aligned(NULL, RT_ALIGN, size, __FILE__, __LINE__);
}

void te_rt_free(void *p) { free(p); }
