/* gpu_barrier.c — barriers between threads that share a buffer (pass "gpu_barriers").
 *
 * Needs: lw_func::gpu from gpu_split. Guarantees: in each kernel, between a statement that
 * writes a shared buffer and a later one that reads (or writes) it — and between a read and a
 * later write — a barrier runs, unless both accesses are made by the same thread; loops whose
 * next iteration overwrites what this one read (a tile loaded each k.o step) get a barrier at
 * the end of their body too. Barriers are placed only in block-uniform control flow.
 *
 * The method is a scan of each sequence in order (as TVM's storage_sync, simplified): the
 * accesses since the last barrier are pending; a statement whose accesses conflict with them
 * gets a barrier before it. A compound statement (loop, uniform condition) is scanned inside
 * first; what it exposes is the accesses before its first barrier (to what precedes it) and
 * those after its last one (to what follows). Two accesses conflict when they touch the same
 * shared buffer, one writes, and they may come from different threads: not when both are in a
 * single-thread region (the `threadIdx.x == 0` guards of gpu_rewrite.c), and not when both use
 * the same index expression that is a one-to-one function of the thread indices alone
 * (`B_rf[threadIdx.x]`: each thread its own element).
 *
 * Regions that not every thread of the block runs (a condition on a thread index, a loop whose
 * trip count depends on one) cannot hold a barrier: they are scanned as one statement, and a
 * conflict inside one is an error.
 */
#include <string.h>

#include "gpu_lower.h"

typedef struct acc {
  ir_buffer *buf;
  te_expr *idx;
  bool write, single;
} acc;

typedef struct accs {
  int n, cap;
  acc *a;
} accs;

typedef struct gb {
  lw_pass_ctx *p;
  lw_gpu_kernel *k;
  ir_map *shared;  /* the kernel's shared buffers */
  ir_map *varying; /* variables whose value differs between the threads of a block */
  bool single;     /* inside a single-thread guard */
  int nbarriers;
} gb;

typedef struct res {
  accs entry, exit;
  bool barrier; /* a barrier inside */
} res;

static bool push(gb *g, accs *s, acc a) {
  for (int i = 0; i < s->n; i++)
    if (s->a[i].buf == a.buf && s->a[i].idx == a.idx && s->a[i].write == a.write &&
        s->a[i].single == a.single)
      return true;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 8;
    acc *n = ir_alloc(g->p->ctx, sizeof *n * (size_t)cap);
    if (!n)
      return false;
    if (s->n)
      memcpy(n, s->a, sizeof *n * (size_t)s->n);
    s->a = n, s->cap = cap;
  }
  s->a[s->n++] = a;
  return true;
}

static bool join(gb *g, accs *to, const accs *from) {
  for (int i = 0; i < from->n; i++)
    if (!push(g, to, from->a[i]))
      return false;
  return true;
}

/* ---------------------------------------------------------------- thread dependence */

static bool is_thread_idx(const lw_gpu_kernel *k, te_expr *v) {
  for (int t = TE_THREAD_X; t <= TE_THREAD_Z; t++)
    if (k->idx[t] == v)
      return true;
  return false;
}

static bool varies(gb *g, te_expr *e) {
  if (e->kind == IR_VAR)
    return is_thread_idx(g->k, e) || ir_map_has(g->varying, e);
  for (int i = 0; i < e->nargs; i++)
    if (varies(g, e->args[i]))
      return true;
  return false;
}

/* Linear coefficient of thread index v in e (0 when absent); false when e is not linear in
   the thread indices or uses a variable other than indices, sizes and parameters. */
static bool linear(gb *g, te_expr *e, te_expr *v, int64_t *coef) {
  int64_t c;
  switch (e->kind) {
  case IR_INT:
    *coef = 0;
    return true;
  case IR_VAR:
    *coef = e == v;
    return is_thread_idx(g->k, e) || !ir_map_has(g->varying, e);
  case IR_ADD:
  case IR_SUB: {
    int64_t a, b;
    if (!linear(g, e->args[0], v, &a) || !linear(g, e->args[1], v, &b))
      return false;
    *coef = e->kind == IR_ADD ? a + b : a - b;
    return true;
  }
  case IR_MUL:
    if (ir_is_const_int(e->args[1], &c) && linear(g, e->args[0], v, coef)) {
      *coef *= c;
      return true;
    }
    return false;
  default:
    return false;
  }
}

/* The index is one-to-one in (threadIdx.x, .y, .z): each thread touches its own element. */
static bool thread_private(gb *g, te_expr *idx) {
  if (!idx || !ir_is_intlike(idx->dtype) || idx->dtype.lanes != 1)
    return false;
  int64_t coef[3], ext[3];
  int n = 0;
  for (int t = TE_THREAD_X; t <= TE_THREAD_Z; t++) {
    int64_t e = 1;
    if (!ir_is_const_int(g->k->block[t - TE_THREAD_X], &e))
      return false;
    int64_t c = 0;
    if (g->k->idx[t] && !linear(g, idx, g->k->idx[t], &c))
      return false;
    if (e > 1 && c == 0)
      return false; /* threads differing in this index share the element */
    if (e > 1)
      coef[n] = c < 0 ? -c : c, ext[n++] = e;
  }
  for (int i = 0; i < n; i++) /* sort by coefficient */
    for (int j = i + 1; j < n; j++)
      if (coef[j] < coef[i]) {
        int64_t tc = coef[i], te = ext[i];
        coef[i] = coef[j], ext[i] = ext[j], coef[j] = tc, ext[j] = te;
      }
  int64_t span = 0; /* the largest offset the smaller terms reach */
  for (int i = 0; i < n; i++) {
    if (coef[i] <= span)
      return false;
    span += coef[i] * (ext[i] - 1);
  }
  return true;
}

static bool conflict(gb *g, const accs *a, const accs *b) {
  for (int i = 0; i < a->n; i++)
    for (int j = 0; j < b->n; j++) {
      const acc *x = &a->a[i], *y = &b->a[j];
      if (x->buf != y->buf || (!x->write && !y->write) || (x->single && y->single))
        continue;
      if (x->idx && x->idx == y->idx && thread_private(g, x->idx))
        continue;
      return true;
    }
  return false;
}

/* ---------------------------------------------------------------- accesses of a region */

typedef struct collect_st {
  gb *g;
  accs *out;
  bool ok;
} collect_st;

static int c_load(ir_visitor *v, te_expr *e) {
  collect_st *c = v->data;
  if (ir_map_has(c->g->shared, e->u.buffer))
    c->ok &= push(c->g, c->out, (acc){e->u.buffer, e->args[0], false, c->g->single});
  return IR_CONTINUE;
}

static int c_store(ir_visitor *v, ir_stmt *s) {
  collect_st *c = v->data;
  if (ir_map_has(c->g->shared, s->u.buffer))
    c->ok &= push(c->g, c->out, (acc){s->u.buffer, s->exprs[1], true, c->g->single});
  return IR_CONTINUE;
}

static bool collect(gb *g, ir_stmt *s, accs *out) {
  collect_st c = {g, out, true};
  ir_visitor v = {.data = &c};
  v.expr[IR_LOAD] = c_load;
  v.stmt[IR_S_STORE] = c_store;
  ir_visit_stmt(&v, s);
  return c.ok;
}

/* ---------------------------------------------------------------- the scan */

static ir_stmt *sync_stmt(gb *g, ir_stmt *s, bool uniform, res *out);

static te_status no_barrier_here(gb *g, ir_stmt *s) {
  (void)s;
  return ir_error(g->p->ctx, TE_ERR_SCHEDULE,
                  "%s: kernel '%s': threads of a block share a buffer inside a region that not "
                  "every thread runs (a condition or loop that depends on a thread index): no "
                  "barrier can be placed there (make the splits of the thread-bound loops divide "
                  "their extents, so no guard is needed)",
                  g->p->api, g->k->name);
}

static ir_stmt *sync_seq(gb *g, ir_stmt *s, bool uniform, res *out) {
  te_ctx *ctx = g->p->ctx;
  ir_stmt **kids = ir_alloc(ctx, sizeof *kids * (2 * s->nstmts + 1));
  if (!kids)
    return NULL;
  int n = 0;
  accs pending = {0};
  bool seen_barrier = false;
  for (uint32_t i = 0; i < s->nstmts; i++) {
    res r = {0};
    ir_stmt *c = sync_stmt(g, s->stmts[i], uniform, &r);
    if (!c)
      return NULL;
    if (conflict(g, &pending, &r.entry)) {
      if (!uniform)
        return no_barrier_here(g, s), NULL;
      kids[n++] = ir_barrier(ctx);
      g->nbarriers++;
      pending = (accs){0};
      seen_barrier = true;
    }
    if (!seen_barrier && !join(g, &out->entry, &r.entry))
      return NULL;
    if (r.barrier) {
      seen_barrier = true;
      pending = (accs){0};
      if (!join(g, &pending, &r.exit))
        return NULL;
    } else if (!join(g, &pending, &r.entry)) {
      return NULL;
    }
    kids[n++] = c;
  }
  out->exit = pending;
  out->barrier = seen_barrier;
  return ir_seq(ctx, n, kids);
}

static ir_stmt *sync_for(gb *g, ir_stmt *s, bool uniform, res *out) {
  te_ctx *ctx = g->p->ctx;
  bool u = uniform && !varies(g, IR_FOR_MIN(s)) && !varies(g, IR_FOR_EXTENT(s));
  if (!u)
    ir_map_put(g->varying, IR_FOR_VAR(s), IR_FOR_VAR(s));
  res r = {0};
  ir_stmt *body = sync_stmt(g, IR_FOR_BODY(s), u, &r);
  if (!body)
    return NULL;
  /* the next iteration's first accesses against this one's last */
  const accs *last = r.barrier ? &r.exit : &r.entry;
  if (conflict(g, last, &r.entry)) {
    if (!u)
      return no_barrier_here(g, s), NULL;
    body = ir_seq2(ctx, body, ir_barrier(ctx));
    g->nbarriers++;
    r.exit = (accs){0};
    r.barrier = true;
  }
  *out = r;
  return ir_stmt_with_children(ctx, s, s->exprs, &body);
}

static ir_stmt *sync_if(gb *g, ir_stmt *s, bool uniform, res *out) {
  te_ctx *ctx = g->p->ctx;
  bool single = lw_gpu_is_single_guard(g->k, s->exprs[0]);
  bool u = uniform && !varies(g, s->exprs[0]);
  if (single) { /* one thread: no conflict inside, and nothing to synchronize */
    bool saved = g->single;
    g->single = true;
    bool ok = collect(g, s, &out->entry);
    g->single = saved;
    return ok && join(g, &out->exit, &out->entry) ? s : NULL;
  }
  ir_stmt *kids[2] = {NULL, NULL};
  for (uint32_t i = 0; i < s->nstmts; i++) {
    res r = {0};
    if (!(kids[i] = sync_stmt(g, s->stmts[i], u, &r)))
      return NULL;
    if (!join(g, &out->entry, &r.entry) || !join(g, &out->exit, r.barrier ? &r.exit : &r.entry))
      return NULL;
    out->barrier |= r.barrier;
  }
  return ir_stmt_with_children(ctx, s, s->exprs, kids);
}

static ir_stmt *sync_stmt(gb *g, ir_stmt *s, bool uniform, res *out) {
  te_ctx *ctx = g->p->ctx;
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_SEQ:
    return sync_seq(g, s, uniform, out);
  case IR_S_FOR:
    return sync_for(g, s, uniform, out);
  case IR_S_IF:
    return sync_if(g, s, uniform, out);
  case IR_S_LET_STMT:
  case IR_S_ATTR: {
    if (s->kind == IR_S_LET_STMT && varies(g, s->exprs[1]))
      ir_map_put(g->varying, s->exprs[0], s->exprs[0]);
    if (s->nstmts == 0 || !s->stmts[0])
      return collect(g, s, &out->entry) && join(g, &out->exit, &out->entry) ? s : NULL;
    ir_stmt *body = sync_stmt(g, s->stmts[0], uniform, out);
    if (!body)
      return NULL;
    return ir_stmt_with_children(ctx, s, s->exprs, &body);
  }
  default:
    return collect(g, s, &out->entry) && join(g, &out->exit, &out->entry) ? s : NULL;
  }
}

ir_stmt *lw_gpu_barriers(lw_pass_ctx *p, ir_stmt *s) {
  if (!lw_gpu_target(p) || !p->func->gpu)
    return s;
  lw_gpu_module *m = p->func->gpu;
  for (int i = 0; i < m->nkernels; i++) {
    lw_gpu_kernel *k = &m->kernels[i];
    gb g = {.p = p, .k = k, .shared = ir_map_new(p->ctx), .varying = ir_map_new(p->ctx)};
    if (!g.shared || !g.varying)
      return NULL;
    for (int j = 0; j < k->nshared; j++)
      ir_map_put(g.shared, k->shared[j].buffer, k->shared[j].buffer);
    if (k->nshared == 0)
      continue;
    res r = {0};
    ir_stmt *body = sync_stmt(&g, k->body, true, &r);
    if (!body)
      return NULL;
    k->uses_barrier = g.nbarriers > 0;
    if (!(k->body = lw_gpu_tree_reductions(p, k, body))) /* gpu_tree.c */
      return NULL;
  }
  return s;
}
