/* dot_time.h — te against its anchor by CPU time, beside the table's wall-clock rows: the
 * low-precision rows (int8gemm.c, bf16gemm.c, int8conv.c, bf16conv.c) and the memory-bound ones
 * (blur.c against Halide, softmax.c and layernorm.c against their vectorized C), at 1 and N
 * threads.
 */
#ifndef TE_BENCH_DOT_TIME_H
#define TE_BENCH_DOT_TIME_H

#include "harness.h"

/* TE_BENCH_CPU=R in the environment: a and b (te and its anchor) called alternately R times,
   each call timed by the process's CPU time (on a machine shared with other jobs a thread's
   CPU time is far steadier than the wall clock, which counts the time it waited for a core), and
   the quartiles and b's median over a's printed to stderr as "CPU <label> ..." lines. On 2
   threads the CPU time also counts a thread waiting for the other at a barrier, so the median
   of the wall times' best quarter is printed beside it. Nothing when the variable is unset or a
   call fails. */
void dot_cpu_versus(const char *label, const char *a_name, bench_fn a, void *a_arg,
                    const char *b_name, bench_fn b, void *b_arg);

#endif
