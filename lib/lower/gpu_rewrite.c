/* gpu_rewrite.c — the body of one GPU thread, from a kernel's loop nest (for gpu_kernel.c).
 *
 *   - A loop bound to an index becomes that index: its variable is replaced by min + blockIdx.x
 *     (or threadIdx.y, ...); when the loop has fewer iterations than the launch extent, its body
 *     is guarded: `if (threadIdx.x < extent)`. Loops of different stages bound to the same index
 *     share it (cooperative loading: the copy loops of a shared cache bound to threadIdx.x
 *     inside the consumer's threadIdx.x loop run on the same threads).
 *   - Allocations are hoisted into the kernel: scope shared (one buffer a block) and local (one
 *     a thread) as the schedule says; a global-scope intermediate computed inside a kernel gets
 *     scope shared when loops bound to threadIdx run inside its allocation (the threads fill it
 *     together) and local otherwise (each thread computes its own). Sizes must be constants.
 *   - A statement outside every loop bound to threadIdx.* of the kernel (when the kernel has
 *     threads) would run on every thread of the block: when it stores to a shared or global
 *     buffer it is guarded to run on one thread, `if (threadIdx.x == 0 && ...)` (the final
 *     reduction of an rfactor'd sum, a row's max in softmax). Stores to local buffers stay
 *     unguarded: every thread computes its own copy.
 *   - Parallel loops have no meaning inside a kernel: an error (bind the loop instead).
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_lower.h"

typedef struct rw {
  lw_gpu_host *h;
  lw_gpu_kernel *k;
  te_expr *const *ext;
  ir_analyzer *an;
  unsigned enclosing; /* bit t: inside a loop bound to index t (or inside a guard: all bits) */
  unsigned threads;   /* bits of the threadIdx.* indices the launch has (extent not 1) */
  int cap_shared, cap_local;
  const char *stage;
} rw;

static te_expr *idx_var(rw *r, te_thread_tag t) {
  if (!r->k->idx[t])
    r->k->idx[t] = ir_var_new(r->h->p->ctx, te_thread_tag_name(t), TE_I64, IR_VAR_INDEX);
  return r->k->idx[t];
}

bool lw_gpu_is_single_guard(const lw_gpu_kernel *k, te_expr *c) {
  if (c->kind == IR_AND)
    return lw_gpu_is_single_guard(k, c->args[0]) && lw_gpu_is_single_guard(k, c->args[1]);
  int64_t z;
  if (c->kind != IR_EQ || !ir_is_const_int(c->args[1], &z) || z != 0)
    return false;
  for (int t = TE_THREAD_X; t <= TE_THREAD_Z; t++)
    if (k->idx[t] && c->args[0] == k->idx[t])
      return true;
  return false;
}

typedef struct scan {
  bool thread_loop, block_loop, nonlocal_store;
} scan;

static int scan_for(ir_visitor *v, ir_stmt *s) {
  scan *sc = v->data;
  if (s->u.loop.kind == IR_FOR_THREAD) {
    if (s->u.loop.tag >= TE_THREAD_X)
      sc->thread_loop = true;
    else
      sc->block_loop = true;
  }
  return IR_CONTINUE;
}

static int scan_store(ir_visitor *v, ir_stmt *s) {
  scan *sc = v->data;
  if (s->u.buffer->scope != TE_SCOPE_LOCAL)
    sc->nonlocal_store = true;
  return IR_CONTINUE;
}

static scan scan_of(ir_stmt *s) {
  scan sc = {0};
  ir_visitor v = {.data = &sc};
  v.stmt[IR_S_FOR] = scan_for;
  v.stmt[IR_S_STORE] = scan_store;
  ir_visit_stmt(&v, s);
  return sc;
}

static ir_stmt *rw_stmt(rw *r, ir_stmt *s);

static ir_stmt *rw_children(rw *r, ir_stmt *s) {
  ir_stmt **kids = ir_alloc(r->h->p->ctx, sizeof *kids * (s->nstmts + 1));
  if (!kids)
    return NULL;
  bool changed = false;
  for (uint32_t i = 0; i < s->nstmts; i++) {
    kids[i] = s->stmts[i] ? rw_stmt(r, s->stmts[i]) : NULL;
    if (s->stmts[i] && !kids[i] && ir_failed(r->h->p->ctx))
      return NULL;
    changed |= kids[i] != s->stmts[i];
  }
  if (!changed)
    return s;
  if (s->kind == IR_S_SEQ)
    return ir_seq(r->h->p->ctx, (int)s->nstmts, kids);
  if (s->kind != IR_S_IF && s->nstmts > 0 && !kids[0])
    return NULL; /* an allocation's or a loop's body that is gone */
  return ir_stmt_with_children(r->h->p->ctx, s, s->exprs, kids);
}

static ir_stmt *rw_thread_for(rw *r, ir_stmt *s) {
  te_ctx *ctx = r->h->p->ctx;
  te_thread_tag t = s->u.loop.tag;
  unsigned saved = r->enclosing;
  r->enclosing |= 1u << t;
  ir_stmt *body = rw_stmt(r, IR_FOR_BODY(s));
  r->enclosing = saved;
  if (!body)
    return NULL;
  te_expr *idx = idx_var(r, t), *min = IR_FOR_MIN(s), *ext = IR_FOR_EXTENT(s);
  int64_t m;
  te_expr *value = ir_is_const_int(min, &m) && m == 0 ? idx : ir_add(min, idx);
  te_expr *var = IR_FOR_VAR(s);
  body = ir_substitute_stmt(ctx, body, 1, &var, &value);
  if (body && ext != r->ext[t] && !ir_can_prove(r->an, ir_le(r->ext[t], ext)))
    body = ir_if(ir_lt(idx, ext), body, NULL);
  return body;
}

static bool add_alloc(rw *r, lw_gpu_alloc **list, int *n, int *cap, ir_buffer *b, int64_t count) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 4;
    lw_gpu_alloc *a = ir_alloc(r->h->p->ctx, sizeof *a * (size_t)*cap);
    if (!a)
      return false;
    if (*n)
      memcpy(a, *list, sizeof *a * (size_t)*n);
    *list = a;
  }
  (*list)[(*n)++] = (lw_gpu_alloc){b, count};
  return true;
}

static ir_stmt *rw_allocate(rw *r, ir_stmt *s) {
  lw_pass_ctx *p = r->h->p;
  ir_buffer *b = s->u.buffer;
  scan sc = scan_of(s->stmts[0]);
  if (b->scope == TE_SCOPE_GLOBAL) {
    if (sc.block_loop) {
      ir_error(p->ctx, TE_ERR_SCHEDULE,
               "%s: kernel '%s': stage '%s' is computed outside the loops bound to blockIdx that "
               "read it; compute it inside them (te_compute_at at the innermost blockIdx loop)",
               p->api, r->k->name, b->name);
      return NULL;
    }
    b->scope = sc.thread_loop ? TE_SCOPE_SHARED : TE_SCOPE_LOCAL;
  }
  int64_t count;
  te_expr *c = ir_simplify(r->an, s->exprs[0]);
  if (!c || !ir_is_const_int(c, &count) || count < 1) {
    char *t = c ? ir_expr_to_string(c) : NULL;
    ir_error(p->ctx, TE_ERR_SCHEDULE,
             "%s: kernel '%s': %s buffer '%s' has %s elements: buffers inside a kernel need a "
             "constant size (split the loops of the stages that compute it by constants)",
             p->api, r->k->name, te_scope_name(b->scope), b->name, t ? t : "?");
    free(t);
    return NULL;
  }
  bool ok = b->scope == TE_SCOPE_SHARED
                ? add_alloc(r, &r->k->shared, &r->k->nshared, &r->cap_shared, b, count)
                : add_alloc(r, &r->k->local, &r->k->nlocal, &r->cap_local, b, count);
  return ok ? rw_stmt(r, s->stmts[0]) : NULL;
}

/* if (threadIdx.* == 0 for every thread index not around s) s */
static ir_stmt *single_thread(rw *r, ir_stmt *s) {
  unsigned missing = r->threads & ~r->enclosing;
  unsigned saved = r->enclosing;
  r->enclosing = ~0u; /* no guard inside a guard */
  ir_stmt *body = rw_stmt(r, s);
  r->enclosing = saved;
  if (!body)
    return NULL;
  te_expr *cond = NULL;
  for (int t = TE_THREAD_X; t <= TE_THREAD_Z; t++) {
    if (!(missing & (1u << t)))
      continue;
    te_expr *eq = ir_binary(IR_EQ, idx_var(r, (te_thread_tag)t), ir_i64(r->h->p->ctx, 0));
    cond = cond ? ir_and(cond, eq) : eq;
  }
  return ir_if(cond, body, NULL);
}

static ir_stmt *rw_stmt(rw *r, ir_stmt *s) {
  lw_pass_ctx *p = r->h->p;
  if (r->threads & ~r->enclosing) {
    scan sc = scan_of(s);
    if (!sc.thread_loop && !sc.block_loop && sc.nonlocal_store)
      return single_thread(r, s);
  }
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_FOR:
    if (s->u.loop.kind == IR_FOR_THREAD)
      return rw_thread_for(r, s);
    if (s->u.loop.kind == IR_FOR_PARALLEL) {
      ir_error(p->ctx, TE_ERR_SCHEDULE,
               "%s: kernel '%s': loop '%s' is parallel inside a GPU kernel; bind it to a block or "
               "thread index instead",
               p->api, r->k->name, IR_FOR_VAR(s)->u.var.name);
      return NULL;
    }
    return rw_children(r, s);
  case IR_S_ALLOCATE:
    return rw_allocate(r, s);
  case IR_S_ATTR: {
    const char *saved = r->stage;
    if (!strcmp(s->u.attr.key, "produce") && s->u.attr.node)
      r->stage = ((te_tensor *)s->u.attr.node)->name;
    ir_stmt *out = rw_children(r, s);
    r->stage = saved;
    return out;
  }
  case IR_S_ASSERT:
    ir_error(p->ctx, TE_ERR_UNSUPPORTED, "%s: kernel '%s': a run-time check inside a GPU kernel",
             p->api, r->k->name);
    return NULL;
  default:
    return rw_children(r, s);
  }
}

ir_stmt *lw_gpu_rewrite_body(lw_gpu_host *h, lw_gpu_kernel *k, ir_stmt *root,
                             te_expr *const ext[LW_GPU_NIDX]) {
  rw r = {.h = h, .k = k, .ext = ext, .an = lw_analyzer_new(h->p), .stage = h->stage};
  if (!r.an)
    return NULL;
  for (int t = TE_THREAD_X; t <= TE_THREAD_Z; t++) {
    int64_t v;
    if (ext[t] && !(ir_is_const_int(ext[t], &v) && v == 1))
      r.threads |= 1u << t;
  }
  return rw_stmt(&r, root);
}
