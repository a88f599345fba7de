/* threads.c — te_set_num_threads / te_num_threads: the thread count of parallel loops.
 *
 * Parallel loops run through te_rt_parallel_for (lib/runtime/parallel.c), which reads the count
 * the runtime keeps (TE_NUM_THREADS or OpenMP's default until set). libte forwards to it, so JIT
 * kernels and kernels linked from static libraries share one setting in a process.
 */
#include "te/build.h"
#include "te/runtime.h"

void te_set_num_threads(int n) { te_rt_set_num_threads(n); }

int te_num_threads(void) { return te_rt_num_threads(); }
