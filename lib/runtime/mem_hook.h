/* mem_hook.h — the one allocation hook of te (internal to te; exported from libte_runtime so
 * that libte goes through the same functions).
 *
 * Every allocation libte and libte_runtime make — arenas, tables, strings, buffers (those that
 * LLVM, libffi, jansson, XGBoost or libc make inside their own calls aside) — goes through
 * these functions, so a test can make any one of them fail and watch the failure travel up as
 * TE_ERR_NOMEM (the failing allocators of Lua's and SQLite's test suites).
 *
 * Each allocation is charged to a counter:
 *   - a context's (te_ctx), for everything done in a context: building, lowering, compiling,
 *     saving, tuning (the tuner's bookkeeping is charged to te_tune's context; each compile
 *     thread has a context of its own). Code with no context at hand (printers, string
 *     builders, containers) charges the context of the te call in progress on its thread
 *     (ir_call_ctx in lib/ir/ir.h);
 *   - with NULL, the process's, for what belongs to no context: libte_runtime's allocations
 *     (intermediate buffers of running kernels, CUDA module records, Vulkan buffers and
 *     kernels), the context record itself (te_ctx_new), and what libte allocates with no call
 *     in progress.
 * A counter's fail_after is how many allocations may still succeed: the n-th allocation
 * charged to it from now on (n >= 1) fails, and every one after it; < 0 never fails. The
 * environment variable TE_DEBUG_FAIL_ALLOC_AFTER=N sets it to N for every new context and, at
 * the first context-free allocation, for the process. The process's counter is atomic (kernels
 * allocate from several threads); a context's is used by one thread at a time, like the
 * context.
 *
 * For the tests' report, the hook can record every call site (file and line of the code that
 * asked) that allocated, and those where an allocation was made to fail.
 */
#ifndef TE_RUNTIME_MEM_HOOK_H
#define TE_RUNTIME_MEM_HOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "te/runtime.h"

typedef struct te_rt_mem_counter {
  long fail_after; /* allocations left before one fails; < 0: never */
  long count;      /* allocations charged so far (context counters only) */
} te_rt_mem_counter;

/* malloc (zero: calloc), realloc (p unchanged on failure) and posix_memalign through the hook.
   NULL when the allocation fails (injected or real); nothing is recorded anywhere else. */
TE_RT_API void *te_rt_mem_alloc(te_rt_mem_counter *, size_t size, bool zero, const char *file,
                                int line);
TE_RT_API void *te_rt_mem_realloc(te_rt_mem_counter *, void *p, size_t size, const char *file,
                                  int line);
TE_RT_API void *te_rt_mem_aligned(te_rt_mem_counter *, size_t align, size_t size, const char *file,
                                  int line);
/* The decision alone, for an allocation that takes no memory from the system this time (an
   arena's bump allocation): true when it must fail. */
TE_RT_API bool te_rt_mem_fails(te_rt_mem_counter *, const char *file, int line);

/* The process's counter: sets fail_after (tests); < 0 turns it off. The count of allocations
   charged to it so far. */
TE_RT_API void te_rt_mem_process_fail_after(long n);
TE_RT_API long te_rt_mem_process_count(void);
/* fail_after from TE_DEBUG_FAIL_ALLOC_AFTER (-1 when unset or empty). */
TE_RT_API long te_rt_mem_env_fail_after(void);

/* Call sites, recorded while recording is on (off by default; turning it on clears them). */
typedef struct te_rt_mem_site {
  const char *file;
  int line;
  long allocations, failures; /* failures: allocations made to fail here */
  long first;                 /* the counter's count at the site's first allocation (< 0: the
                                 process's, negated): fail_after = |first| fails it */
} te_rt_mem_site;
TE_RT_API void te_rt_mem_record_sites(bool on);
/* The sites recorded so far (at most max into out, sorted by file and line); the number of
   distinct sites. */
TE_RT_API int te_rt_mem_sites(te_rt_mem_site *out, int max);

#endif
