/* ctx.c — contexts: arenas, scratch arenas, sticky errors, status names.
 *
 * Every node lives in an arena: the context's, or the innermost open scratch arena of a build.
 * Arenas are chunked bump allocators (zeroed, 16-byte aligned). Errors are sticky: the first
 * status and message since te_clear_error are kept, later ones are dropped. Allocation failure
 * records TE_ERR_NOMEM and returns NULL; it never aborts. A debug hook makes the n-th allocation
 * fail so tests can drive every constructor's out-of-memory path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_internal.h"

#define IR_CHUNK_MIN ((size_t)64 * 1024)
#define IR_ALIGN ((size_t)16)
#define IR_HDR ((sizeof(ir_chunk) + IR_ALIGN - 1) & ~(IR_ALIGN - 1))

static const char *const status_names[] = {
    "TE_OK",          "TE_ERR_INVALID_ARG", "TE_ERR_TYPE",     "TE_ERR_SHAPE",
    "TE_ERR_SCHEDULE", "TE_ERR_BOUNDS",     "TE_ERR_TARGET",   "TE_ERR_CODEGEN",
    "TE_ERR_RUNTIME", "TE_ERR_IO",          "TE_ERR_PARSE",    "TE_ERR_NOMEM",
    "TE_ERR_UNSUPPORTED", "TE_ERR_NOT_FOUND", "TE_ERR_INTERNAL"};

const char *te_status_str(te_status s) {
  if ((unsigned)s < sizeof status_names / sizeof status_names[0]) return status_names[s];
  return "TE_ERR_UNKNOWN";
}

te_ctx *te_ctx_new(void) {
  te_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return NULL;
  ctx->fail_after = -1;
  const char *env = getenv("TE_DEBUG_FAIL_ALLOC_AFTER");
  if (env && *env) ctx->fail_after = strtol(env, NULL, 10);
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
  if (!ctx) return;
  for (ir_on_free *f = ctx->on_free; f; f = f->next) f->fn(f->arg);
  ctx->scratch_phantom = 0;
  while (ctx->scratch) ir_scratch_end(ctx);
  ir_cons_free(&ctx->cons);
  ir_arena_release(&ctx->arena);
  free(ctx);
}

void te_free(void *p) { free(p); }

/* ---------------------------------------------------------------- errors */

te_status ir_verror(te_ctx *ctx, te_status st, const char *fmt, va_list ap) {
  if (!ctx || st == TE_OK) return st;
  if (ctx->status != TE_OK) return st; /* first error wins */
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
  if (!ctx) return "te_last_error: NULL context";
  return ctx->errmsg;
}
void te_clear_error(te_ctx *ctx) {
  if (!ctx) return;
  ctx->status = TE_OK;
  ctx->errmsg[0] = '\0';
}

/* ---------------------------------------------------------------- memory */

void ir_debug_fail_alloc_after(te_ctx *ctx, long n) {
  if (ctx) ctx->fail_after = n;
}

/* Counts down the debug hook; true when this allocation must fail. */
static bool hook_fails(te_ctx *ctx) {
  if (ctx->fail_after < 0) return false;
  if (ctx->fail_after <= 1) {
    ctx->fail_after = 0;
    return true;
  }
  ctx->fail_after--;
  return false;
}

static void *nomem(te_ctx *ctx, size_t size) {
  ir_error(ctx, TE_ERR_NOMEM, "out of memory (allocating %zu bytes)", size);
  return NULL;
}

void *ir_ctx_malloc(te_ctx *ctx, size_t size) {
  if (hook_fails(ctx)) return nomem(ctx, size);
  void *p = calloc(1, size ? size : 1);
  return p ? p : nomem(ctx, size);
}

void *ir_arena_alloc(te_ctx *ctx, ir_arena *a, size_t size) {
  if (!ctx) return NULL;
  if (hook_fails(ctx)) return nomem(ctx, size);
  size = (size + IR_ALIGN - 1) & ~(IR_ALIGN - 1);
  if (size == 0) size = IR_ALIGN;
  ir_chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > IR_CHUNK_MIN ? size : IR_CHUNK_MIN;
    c = calloc(1, IR_HDR + cap);
    if (!c) return nomem(ctx, size);
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
  }
  void *p = (char *)c + IR_HDR + c->used;
  c->used += size;
  return p;
}

void *ir_alloc(te_ctx *ctx, size_t size) {
  if (!ctx) return NULL;
  return ir_arena_alloc(ctx, ctx->scratch ? &ctx->scratch->arena : &ctx->arena, size);
}

void *ir_alloc_persistent(te_ctx *ctx, size_t size) {
  if (!ctx) return NULL;
  return ir_arena_alloc(ctx, &ctx->arena, size);
}

static char *dup_in(char *p, const char *s, size_t n) {
  if (p) memcpy(p, s, n);
  return p;
}
char *ir_strdup(te_ctx *ctx, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  return dup_in(ir_alloc(ctx, n), s, n);
}
char *ir_strdup_persistent(te_ctx *ctx, const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  return dup_in(ir_alloc_persistent(ctx, n), s, n);
}

/* ---------------------------------------------------------------- scratch arenas */

void ir_scratch_begin(te_ctx *ctx) {
  if (!ctx) return;
  /* begin/end must pair even when memory is short: a level that could not be opened is
     counted, and the matching end closes nothing (its allocations went to the outer arena). */
  ir_scratch *s = calloc(1, sizeof *s);
  if (!s) {
    ir_error(ctx, TE_ERR_NOMEM, "out of memory (opening a scratch arena)");
    ctx->scratch_phantom++;
    return;
  }
  s->prev = ctx->scratch;
  ctx->scratch = s;
}

void ir_scratch_end(te_ctx *ctx) {
  if (!ctx) return;
  if (ctx->scratch_phantom > 0) {
    ctx->scratch_phantom--;
    return;
  }
  if (!ctx->scratch) return;
  ir_scratch *s = ctx->scratch;
  ctx->scratch = s->prev;
  ir_cons_free(&s->cons);
  ir_arena_release(&s->arena);
  free(s);
}

bool ir_in_scratch(const te_ctx *ctx) { return ctx && ctx->scratch; }

void ir_ctx_on_free(te_ctx *ctx, void (*fn)(void *), void *arg) {
  if (!ctx || !fn) return;
  ir_on_free *f = ir_alloc_persistent(ctx, sizeof *f);
  if (!f) return;
  f->fn = fn;
  f->arg = arg;
  f->next = ctx->on_free;
  ctx->on_free = f;
}
