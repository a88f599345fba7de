/* base.h — what every layer of te uses: contexts, arenas, errors, strings and maps (internal).
 *
 * The bottom layer (lib/base/): it sees only the public headers (include/te/). Every te object
 * belongs to a te_ctx; its memory comes from the context's arena or from the build's scratch
 * arena, and its failures are recorded on the context (the first one wins). The names keep the
 * ir_ prefix they had when this code was part of lib/ir.
 */
#ifndef TE_BASE_H
#define TE_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "te/te.h"

/* ---------------------------------------------------------------- memory and errors */

/* Memory. ir_alloc returns zeroed memory in the current arena: the build's scratch arena while
   one is open, else the context's. ir_alloc_persistent always uses the context's arena (for what
   must outlive a build: modules, schedules). Allocation failure longjmps nowhere: it returns
   NULL after recording TE_ERR_NOMEM. Every allocation goes through te's hook
   (runtime/mem_hook.h), charged to the context; the macros pass the caller's file and line, the
   call site the hook records for the fault-injection tests. */
#define ir_alloc(ctx, size) ir_alloc_at((ctx), (size), __FILE__, __LINE__)
#define ir_alloc_persistent(ctx, size) ir_alloc_persistent_at((ctx), (size), __FILE__, __LINE__)
#define ir_strdup(ctx, s) ir_strdup_at((ctx), (s), __FILE__, __LINE__)
#define ir_strdup_persistent(ctx, s) ir_strdup_persistent_at((ctx), (s), __FILE__, __LINE__)
void *ir_alloc_at(te_ctx *, size_t size, const char *file, int line);
void *ir_alloc_persistent_at(te_ctx *, size_t size, const char *file, int line);
char *ir_strdup_at(te_ctx *, const char *s, const char *file, int line);
char *ir_strdup_persistent_at(te_ctx *, const char *s, const char *file, int line);

/* malloc'd memory (free it with free), through the same hook: malloc, calloc (zeroed; n * size
   checked), realloc (p is kept on failure) and strndup. NULL with TE_ERR_NOMEM recorded on ctx
   when the allocation fails. With ctx NULL the allocation is charged to (and the failure
   recorded on) the context of the te call in progress on this thread (ir_call_ctx); with no
   call in progress, to the process's counter, and nothing is recorded. */
#define ir_malloc(ctx, size) ir_malloc_at((ctx), (size), false, __FILE__, __LINE__)
#define ir_calloc(ctx, n, size) ir_calloc_at((ctx), (n), (size), __FILE__, __LINE__)
#define ir_realloc(ctx, p, size) ir_realloc_at((ctx), (p), (size), __FILE__, __LINE__)
#define ir_strdup_malloc(ctx, s) ir_strndup_malloc_at((ctx), (s), SIZE_MAX, __FILE__, __LINE__)
#define ir_strndup_malloc(ctx, s, n) ir_strndup_malloc_at((ctx), (s), (n), __FILE__, __LINE__)
/* align-byte aligned memory (align a power of two >= sizeof(void *)). */
#define ir_aligned_malloc(ctx, align, size)                                                        \
  ir_aligned_at((ctx), (align), (size), __FILE__, __LINE__)
/* The hook's decision alone, for memory that does not come from malloc (mmap): false (with
   TE_ERR_NOMEM recorded) when this allocation must fail. */
#define ir_may_allocate(ctx) ir_may_allocate_at((ctx), __FILE__, __LINE__)
void *ir_malloc_at(te_ctx *, size_t size, bool zero, const char *file, int line);
void *ir_aligned_at(te_ctx *, size_t align, size_t size, const char *file, int line);
bool ir_may_allocate_at(te_ctx *, const char *file, int line);
void *ir_calloc_at(te_ctx *, size_t n, size_t size, const char *file, int line);
void *ir_realloc_at(te_ctx *, void *p, size_t size, const char *file, int line);
char *ir_strndup_malloc_at(te_ctx *, const char *s, size_t n, const char *file, int line);

/* A scratch arena for one build. Expressions made while it is open go into a cons table layered
   over the context's (look-ups fall through, new nodes go to scratch). Nests: begin/end pair. */
void ir_scratch_begin(te_ctx *);
void ir_scratch_end(te_ctx *);
bool ir_in_scratch(const te_ctx *);

/* Registers fn(arg) to run at te_ctx_free (for objects holding non-arena resources: JITs,
   modules). False (TE_ERR_NOMEM recorded) when it could not be registered: the caller still
   owns arg then. */
bool ir_ctx_on_free(te_ctx *, void (*fn)(void *), void *arg);

/* Records a failure (the first one since te_clear_error wins) and returns status.
   fmt names the API function and the culprit: "te_split: stage 'C': factor must be > 0". */
te_status ir_error(te_ctx *, te_status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
te_status ir_verror(te_ctx *, te_status, const char *fmt, va_list);
/* True when the context holds a failure. */
bool ir_failed(const te_ctx *);

/* The error contract of include/te/core.h, kept at the public boundary (boundary.c). A public
   function that does work opens a call with ir_call_begin and returns through ir_call_end
   (te_status functions) or ir_call_end_ptr (constructors). While the outermost call runs, the
   error recorded before it is set aside: ir_failed and te_last_status see only this call's
   failures, so a valid call works whatever failed earlier. At its end a status call's failure
   replaces the earlier error (a success leaves it as it was); a constructor keeps the earlier
   error when there was one (the first message wins). Nested calls (te_* functions that te
   itself calls) change nothing. */
void ir_call_begin(te_ctx *);
te_status ir_call_end(te_ctx *, te_status);
void *ir_call_end_ptr(te_ctx *, void *);
/* One call between the two: return IR_PUBLIC_CALL(ctx, build_impl(...)). */
#define IR_PUBLIC_CALL(ctx, call) ir_call_end((ctx), (ir_call_begin(ctx), (call)))
#define IR_PUBLIC_CALL_PTR(ctx, call) ir_call_end_ptr((ctx), (ir_call_begin(ctx), (void *)(call)))
/* A NULL operand where an object is needed (a te_* result, most likely NULL because an earlier
   call failed): when an error is recorded (in this call, or set aside before it) the call takes
   that error as its own and returns its status; otherwise records TE_ERR_INVALID_ARG with the
   message fmt names ("te_add: left operand is NULL"). ctx may be NULL (returns
   TE_ERR_INVALID_ARG). */
te_status ir_error_null(te_ctx *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when the call in progress failed with an error ir_error_null took back from before it
   (the call itself did nothing). */
bool ir_call_took_earlier_error(const te_ctx *);
/* The context of the outermost public call in progress on this thread, NULL when none: what
   code without a context at hand (printers, string builders) charges its memory to. */
te_ctx *ir_call_ctx(void);

/* Internal invariant: records TE_ERR_INTERNAL with file:line and returns false when cond is
   false (never aborts). Use as: if (!ir_check(ctx, cond, "what")) return NULL; */
#define ir_check(ctx, cond, what)                                                                  \
  ((cond) ? true                                                                                   \
          : (ir_error((ctx), TE_ERR_INTERNAL, "internal: %s (%s:%d)", (what), __FILE__, __LINE__), \
             false))

/* ---------------------------------------------------------------- maps
 * Pointer -> pointer hash map in the current arena (grows by doubling; old tables stay in the
 * arena until it is released). Keys must be non-NULL. */
typedef struct ir_map {
  te_ctx *ctx;
  size_t count, cap;
  const void **keys;
  void **vals;
} ir_map;
ir_map *ir_map_new(te_ctx *);
void *ir_map_get(const ir_map *, const void *key); /* NULL when absent */
bool ir_map_has(const ir_map *, const void *key);
bool ir_map_put(ir_map *, const void *key, void *val); /* false on NOMEM */

/* ---------------------------------------------------------------- text */

/* A growable malloc'd string. Its memory is charged to ctx (set it: ir_str s = {.ctx = ctx};
   NULL: to the call in progress, see ir_malloc); out of memory records TE_ERR_NOMEM there, sets
   oom and drops further text. */
typedef struct ir_str {
  char *buf;
  size_t len, cap;
  bool oom;
  te_ctx *ctx;
} ir_str;
void ir_str_printf(ir_str *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ir_str_puts(ir_str *, const char *);
char *ir_str_take(ir_str *); /* the malloc'd text (free with te_free/free); resets */
void ir_str_free(ir_str *);
/* The 64-bit FNV-1a hash of s's bytes up to its NUL (NULL hashes as ""): workload keys
   (te_workload_hash) and the autotuner's hashes of traces. Stable across versions and machines:
   tuning logs store it. */
uint64_t ir_str_hash(const char *s);

#endif
