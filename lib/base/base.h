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
   NULL after recording TE_ERR_NOMEM. */
void *ir_alloc(te_ctx *, size_t size);
void *ir_alloc_persistent(te_ctx *, size_t size);
char *ir_strdup(te_ctx *, const char *s);
char *ir_strdup_persistent(te_ctx *, const char *s);

/* A scratch arena for one build. Expressions made while it is open go into a cons table layered
   over the context's (look-ups fall through, new nodes go to scratch). Nests: begin/end pair. */
void ir_scratch_begin(te_ctx *);
void ir_scratch_end(te_ctx *);
bool ir_in_scratch(const te_ctx *);

/* Functions run by te_ctx_free (for objects holding non-arena resources: JITs, modules). */
void ir_ctx_on_free(te_ctx *, void (*fn)(void *), void *arg);

/* Records a failure (the first one since te_clear_error wins) and returns status.
   fmt names the API function and the culprit: "te_split: stage 'C': factor must be > 0". */
te_status ir_error(te_ctx *, te_status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
te_status ir_verror(te_ctx *, te_status, const char *fmt, va_list);
/* True when the context holds a failure. */
bool ir_failed(const te_ctx *);

/* Internal invariant: records TE_ERR_INTERNAL with file:line and returns false when cond is
   false (never aborts). Use as: if (!ir_check(ctx, cond, "what")) return NULL; */
#define ir_check(ctx, cond, what) \
  ((cond) ? true : (ir_error((ctx), TE_ERR_INTERNAL, "internal: %s (%s:%d)", (what), __FILE__, __LINE__), false))

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

/* A growable malloc'd string. */
typedef struct ir_str {
  char *buf;
  size_t len, cap;
  bool oom;
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
