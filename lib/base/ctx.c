/* ctx.c — contexts: arenas, scratch arenas, sticky errors, status names.
 *
 * Every node lives in an arena: the context's, or the innermost open scratch arena of a build.
 * Arenas are chunked bump allocators (zeroed, 16-byte aligned). Errors are sticky: the first
 * status and message since te_clear_error are kept, later ones are dropped (boundary.c decides what
 * a public call leaves). Allocation failure records TE_ERR_NOMEM and returns NULL; it never
 * aborts. Every allocation goes through te's hook (runtime/mem_hook.h), charged to the context,
 * so tests can make the n-th one fail and drive every out-of-memory path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_internal.h"
#include "runtime/mem_hook.h"

#define IR_CHUNK_MIN ((size_t)64 * 1024)
#define IR_ALIGN ((size_t)16)
#define IR_HDR ((sizeof(ir_chunk) + IR_ALIGN - 1) & ~(IR_ALIGN - 1))

static const char *const status_names[] = {"TE_OK",
                                           "TE_ERR_INVALID_ARG",
                                           "TE_ERR_TYPE",
                                           "TE_ERR_SHAPE",
                                           "TE_ERR_SCHEDULE",
                                           "TE_ERR_BOUNDS",
                                           "TE_ERR_TARGET",
                                           "TE_ERR_CODEGEN",
                                           "TE_ERR_RUNTIME",
                                           "TE_ERR_IO",
                                           "TE_ERR_PARSE",
                                           "TE_ERR_NOMEM",
                                           "TE_ERR_UNSUPPORTED",
                                           "TE_ERR_NOT_FOUND",
                                           "TE_ERR_INTERNAL"};

const char *te_status_str(te_status s) {
  if ((unsigned)s < sizeof status_names / sizeof status_names[0])
    return status_names[s];
  return "TE_ERR_UNKNOWN";
}

te_ctx *te_ctx_new(void) {
  /* the context record belongs to no context yet: the process's counter (mem_hook.h) */
  te_ctx *ctx = te_rt_mem_alloc(NULL, sizeof *ctx + sizeof *ctx->mem, true, __FILE__, __LINE__);
  if (!ctx)
    return NULL;
  ctx->mem = (te_rt_mem_counter *)(ctx + 1);
  ctx->mem->fail_after = te_rt_mem_env_fail_after();
  return ctx;
}

void ir_arena_release(ir_arena *a) {
  ir_chunk *c = a->head;
  while (c) {
    ir_chunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
}

void ir_cons_free(ir_cons_table *t) {
  free(t->slots);
  t->slots = NULL;
  t->cap = t->count = 0;
}

void te_ctx_free(te_ctx *ctx) {
  if (!ctx)
    return;
  for (ir_on_free *f = ctx->on_free; f; f = f->next)
    f->fn(f->arg);
  ctx->scratch_phantom = 0;
  while (ctx->scratch)
    ir_scratch_end(ctx);
  ir_cons_free(&ctx->cons);
  ir_arena_release(&ctx->arena);
  free(ctx);
}

void te_free(void *p) { free(p); }

/* ---------------------------------------------------------------- errors */

te_status ir_verror(te_ctx *ctx, te_status st, const char *fmt, va_list ap) {
  if (!ctx || st == TE_OK)
    return st;
  if (ctx->status != TE_OK)
    return st; /* first error wins */
  ctx->status = st;
  vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
  return st;
}

te_status ir_error(te_ctx *ctx, te_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ir_verror(ctx, st, fmt, ap);
  va_end(ap);
  return st;
}

bool ir_failed(const te_ctx *ctx) { return ctx && ctx->status != TE_OK; }
te_status te_last_status(const te_ctx *ctx) { return ctx ? ctx->status : TE_ERR_INVALID_ARG; }
const char *te_last_error(const te_ctx *ctx) {
  if (!ctx)
    return "te_last_error: NULL context";
  return ctx->errmsg;
}
void te_clear_error(te_ctx *ctx) {
  if (!ctx)
    return;
  ctx->status = TE_OK;
  ctx->errmsg[0] = '\0';
}

/* ---------------------------------------------------------------- memory */

void ir_debug_fail_alloc_after(te_ctx *ctx, long n) {
  if (ctx)
    ctx->mem->fail_after = n;
}

long ir_debug_alloc_count(const te_ctx *ctx) { return ctx ? ctx->mem->count : 0; }

static void *nomem(te_ctx *ctx, size_t size) {
  ir_error(ctx, TE_ERR_NOMEM, "out of memory (allocating %zu bytes)", size);
  return NULL;
}

/* Each arena allocation is one allocation for the hook: a bump in the current chunk is only
   its decision, a new chunk is its malloc. */
void *ir_arena_alloc(te_ctx *ctx, ir_arena *a, size_t size, const char *file, int line) {
  if (!ctx)
    return NULL;
  size = (size + IR_ALIGN - 1) & ~(IR_ALIGN - 1);
  if (size == 0)
    size = IR_ALIGN;
  ir_chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > IR_CHUNK_MIN ? size : IR_CHUNK_MIN;
    c = te_rt_mem_alloc(ctx->mem, IR_HDR + cap, true, file, line);
    if (!c)
      return nomem(ctx, size);
    c->size = cap;
    if (a->head && size > IR_CHUNK_MIN) {
      /* a big block: keep the current chunk in front for later small allocations */
      c->next = a->head->next;
      a->head->next = c;
      c->used = size;
      return (char *)c + IR_HDR;
    }
    c->next = a->head;
    a->head = c;
  } else if (te_rt_mem_fails(ctx->mem, file, line)) {
    return nomem(ctx, size);
  }
  void *p = (char *)c + IR_HDR + c->used;
  c->used += size;
  return p;
}

void *ir_alloc_at(te_ctx *ctx, size_t size, const char *file, int line) {
  if (!ctx)
    return NULL;
  return ir_arena_alloc(ctx, ctx->scratch ? &ctx->scratch->arena : &ctx->arena, size, file, line);
}

void *ir_alloc_persistent_at(te_ctx *ctx, size_t size, const char *file, int line) {
  if (!ctx)
    return NULL;
  return ir_arena_alloc(ctx, &ctx->arena, size, file, line);
}

static char *dup_in(char *p, const char *s, size_t n) {
  if (p)
    memcpy(p, s, n);
  return p;
}
char *ir_strdup_at(te_ctx *ctx, const char *s, const char *file, int line) {
  if (!s)
    return NULL;
  size_t n = strlen(s) + 1;
  return dup_in(ir_alloc_at(ctx, n, file, line), s, n);
}
char *ir_strdup_persistent_at(te_ctx *ctx, const char *s, const char *file, int line) {
  if (!s)
    return NULL;
  size_t n = strlen(s) + 1;
  return dup_in(ir_alloc_persistent_at(ctx, n, file, line), s, n);
}

/* ---------------------------------------------------------------- malloc'd memory */

static te_rt_mem_counter *counter(te_ctx *ctx) { return ctx ? ctx->mem : NULL; }

void *ir_malloc_at(te_ctx *ctx, size_t size, bool zero, const char *file, int line) {
  if (!ctx)
    ctx = ir_call_ctx();
  void *p = te_rt_mem_alloc(counter(ctx), size, zero, file, line);
  return p ? p : nomem(ctx, size);
}

void *ir_aligned_at(te_ctx *ctx, size_t align, size_t size, const char *file, int line) {
  if (!ctx)
    ctx = ir_call_ctx();
  void *p = te_rt_mem_aligned(counter(ctx), align, size, file, line);
  return p ? p : nomem(ctx, size);
}

bool ir_may_allocate_at(te_ctx *ctx, const char *file, int line) {
  if (!ctx)
    ctx = ir_call_ctx();
  if (!te_rt_mem_fails(counter(ctx), file, line))
    return true;
  nomem(ctx, 0);
  return false;
}

void *ir_calloc_at(te_ctx *ctx, size_t n, size_t size, const char *file, int line) {
  if (size && n > SIZE_MAX / size)
    return nomem(ctx, SIZE_MAX);
  return ir_malloc_at(ctx, n * size, true, file, line);
}

void *ir_realloc_at(te_ctx *ctx, void *p, size_t size, const char *file, int line) {
  if (!ctx)
    ctx = ir_call_ctx();
  void *q = te_rt_mem_realloc(counter(ctx), p, size, file, line);
  return q ? q : nomem(ctx, size);
}

char *ir_strndup_malloc_at(te_ctx *ctx, const char *s, size_t n, const char *file, int line) {
  if (!s)
    return NULL;
  const char *end = memchr(s, '\0', n);
  size_t len = end ? (size_t)(end - s) : n;
  char *p = ir_malloc_at(ctx, len + 1, false, file, line);
  if (!p)
    return NULL;
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

/* ---------------------------------------------------------------- scratch arenas */

void ir_scratch_begin(te_ctx *ctx) {
  if (!ctx)
    return;
  /* begin/end must pair even when memory is short: a level that could not be opened is
     counted, and the matching end closes nothing (its allocations went to the outer arena). */
  ir_scratch *s = te_rt_mem_alloc(ctx->mem, sizeof *s, true, __FILE__, __LINE__);
  if (!s) {
    ir_error(ctx, TE_ERR_NOMEM, "out of memory (opening a scratch arena)");
    ctx->scratch_phantom++;
    return;
  }
  s->prev = ctx->scratch;
  ctx->scratch = s;
}

void ir_scratch_end(te_ctx *ctx) {
  if (!ctx)
    return;
  if (ctx->scratch_phantom > 0) {
    ctx->scratch_phantom--;
    return;
  }
  if (!ctx->scratch)
    return;
  ir_scratch *s = ctx->scratch;
  ctx->scratch = s->prev;
  ir_cons_free(&s->cons);
  ir_arena_release(&s->arena);
  free(s);
}

bool ir_in_scratch(const te_ctx *ctx) { return ctx && ctx->scratch; }

bool ir_ctx_on_free(te_ctx *ctx, void (*fn)(void *), void *arg) {
  if (!ctx || !fn)
    return false;
  ir_on_free *f = ir_alloc_persistent(ctx, sizeof *f);
  if (!f)
    return false;
  f->fn = fn;
  f->arg = arg;
  f->next = ctx->on_free;
  ctx->on_free = f;
  return true;
}
