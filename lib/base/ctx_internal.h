/* ctx_internal.h — the layout of te_ctx, visible to lib/base and lib/ir only.
 *
 * Other modules use the functions of base.h; only lib/base (arenas, errors, the failing-allocator
 * hook) and the files of lib/ir that intern expressions (constructors, cons tables) look inside a
 * context. The context holds the IR's cons tables (one per arena, so that ir_scratch_end can drop
 * a build's expressions with its memory); what is in them is lib/ir's business (cons.c).
 */
#ifndef TE_IR_CTX_INTERNAL_H
#define TE_IR_CTX_INTERNAL_H

#include "base.h"

/* A chunked bump allocator. Chunks are malloc'd, zeroed, at least IR_CHUNK_MIN bytes. */
typedef struct ir_chunk {
  struct ir_chunk *next;
  size_t size, used; /* bytes of data after the header */
} ir_chunk;

typedef struct ir_arena {
  ir_chunk *head;
} ir_arena;

/* An open-addressing table of hash-consed expressions (malloc'd slots). */
typedef struct ir_cons_table {
  te_expr **slots;
  size_t cap, count;
} ir_cons_table;

typedef struct ir_scratch {
  struct ir_scratch *prev;
  ir_arena arena;
  ir_cons_table cons;
} ir_scratch;

typedef struct ir_on_free {
  struct ir_on_free *next;
  void (*fn)(void *);
  void *arg;
} ir_on_free;

#define IR_ERRMSG_MAX 1024

struct te_ctx {
  ir_arena arena;
  ir_cons_table cons;
  ir_scratch *scratch; /* innermost open scratch arena, NULL when none */
  int scratch_phantom; /* scratch levels that failed to open (NOMEM), see ir_scratch_begin */
  te_status status;
  char errmsg[IR_ERRMSG_MAX];
  uint32_t next_var_id;
  ir_on_free *on_free; /* most recent first: run in reverse order of registration */
  /* the allocation hook's counter (runtime/mem_hook.h; fail_after: the debug countdown), in
     the same block as the context, after it: only ctx.c looks inside */
  struct te_rt_mem_counter *mem;
  /* The error contract of public calls (boundary.c): the error recorded before the outermost
     call in progress began, set aside while it runs. */
  int call_depth;
  te_ctx *outer_call_ctx; /* this thread's ir_call_ctx before the outermost call began */
  bool outer_taken;       /* ir_error_null took it back as the call's own */
  te_status outer_status;
  char outer_msg[IR_ERRMSG_MAX];
};

void ir_arena_release(ir_arena *);
void *ir_arena_alloc(te_ctx *, ir_arena *, size_t size, const char *file, int line);

/* Test hook (Lua-style failing allocator, runtime/mem_hook.h): the n-th allocation charged to
   the context from now on (n >= 1) fails, and every one after it; n < 0 turns the hook off.
   The environment variable TE_DEBUG_FAIL_ALLOC_AFTER sets it for new contexts. */
void ir_debug_fail_alloc_after(te_ctx *, long n);
/* How many allocations have been charged to the context since it was made. */
long ir_debug_alloc_count(const te_ctx *);

/* Frees a cons table's slots (the expressions live in arenas). */
void ir_cons_free(ir_cons_table *);

#endif
