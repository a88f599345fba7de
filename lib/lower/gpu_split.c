/* gpu_split.c — the host/device split (pass "gpu_split"; GPU targets only).
 *
 * Needs: the flattened, simplified loop nest (the end of the CPU pipeline).
 * Guarantees: lw_func::gpu holds the split (gpu.h): one kernel per outermost loop bound
 * to a block or thread index, in the order the stages compute, and the host steps around them;
 * the returned statement is the host part, each kernel replaced by `attr gpu_launch = K`, for
 * TE_DUMP and the verifier (te_lower_text prints lw_func::gpu instead).
 *
 * What may stay on the host, outside every kernel: `produce` attributes, sequences, lets of
 * sizes (substituted into what follows), and allocations of global scope, which become device
 * temporaries allocated before the first launch that uses them and freed after the last. Anything
 * else outside a kernel is an error naming the stage: a store (the stage's loops are not bound),
 * a loop or a condition around a kernel, a shared or local buffer outside every kernel.
 */
#include <string.h>

#include "gpu_lower.h"

bool lw_gpu_target(const lw_pass_ctx *p) { return tg_is_gpu(p->target); }

static int find_thread_loop(ir_visitor *v, ir_stmt *s) {
  (void)v;
  return s->u.loop.kind == IR_FOR_THREAD ? IR_ABORT : IR_CONTINUE;
}

bool lw_gpu_has_thread_loop(ir_stmt *s) {
  ir_visitor v = {0};
  v.stmt[IR_S_FOR] = find_thread_loop;
  return s && ir_visit_stmt(&v, s) == IR_ABORT;
}

static int find_store(ir_visitor *v, ir_stmt *s) {
  (void)v;
  (void)s;
  return IR_ABORT;
}

static bool has_store(ir_stmt *s) {
  ir_visitor v = {0};
  v.stmt[IR_S_STORE] = find_store;
  return s && ir_visit_stmt(&v, s) == IR_ABORT;
}

static te_status host_error(lw_gpu_host *h, const char *what, const char *name) {
  lw_pass_ctx *p = h->p;
  return ir_error(p->ctx, TE_ERR_SCHEDULE,
                  "%s: stage '%s': %s '%s' is outside every loop bound to a GPU block or thread "
                  "(target '%s'): on a GPU target each stage runs in a kernel; bind its outer "
                  "loops with te_bind (blockIdx.x, threadIdx.x, ...)",
                  p->api, h->stage ? h->stage : "?", what, name, p->target->str);
}

static bool add_step(lw_gpu_host *h, lw_gpu_step step) {
  lw_gpu_module *m = h->mod;
  if (m->nsteps == h->cap_steps) {
    int cap = h->cap_steps ? 2 * h->cap_steps : 8;
    lw_gpu_step *s = ir_alloc(h->p->ctx, sizeof *s * (size_t)cap);
    if (!s)
      return false;
    if (m->nsteps)
      memcpy(s, m->steps, sizeof *s * (size_t)m->nsteps);
    m->steps = s, h->cap_steps = cap;
  }
  m->steps[m->nsteps++] = step;
  return true;
}

static ir_stmt *launch(lw_gpu_host *h, ir_stmt *root) {
  te_ctx *ctx = h->p->ctx;
  lw_gpu_module *m = h->mod;
  if (m->nkernels == h->cap_kernels) {
    int cap = h->cap_kernels ? 2 * h->cap_kernels : 4;
    lw_gpu_kernel *k = ir_alloc(ctx, sizeof *k * (size_t)cap);
    if (!k)
      return NULL;
    if (m->nkernels)
      memcpy(k, m->kernels, sizeof *k * (size_t)m->nkernels);
    m->kernels = k, h->cap_kernels = cap;
  }
  lw_gpu_kernel *k = &m->kernels[m->nkernels];
  memset(k, 0, sizeof *k);
  k->index = m->nkernels;
  if (lw_gpu_make_kernel(h, root, k) != TE_OK)
    return NULL;
  m->nkernels++;
  if (!add_step(h, (lw_gpu_step){.kind = LW_GPU_STEP_LAUNCH, .kernel = k->index}))
    return NULL;
  return ir_attr(ctx, "gpu_launch", k, ir_i64(ctx, k->index), ir_evaluate(ir_i64(ctx, 0)));
}

static ir_stmt *host_stmt(lw_gpu_host *h, ir_stmt *s);

static ir_stmt *host_alloc(lw_gpu_host *h, ir_stmt *s) {
  ir_buffer *b = s->u.buffer;
  if (b->scope != TE_SCOPE_GLOBAL) {
    host_error(h, b->scope == TE_SCOPE_SHARED ? "shared buffer" : "local buffer", b->name);
    return NULL;
  }
  if (h->ntemps == h->cap_temps) {
    int cap = h->cap_temps ? 2 * h->cap_temps : 4;
    ir_buffer **t = ir_alloc(h->p->ctx, sizeof *t * (size_t)cap);
    if (!t)
      return NULL;
    if (h->ntemps)
      memcpy(t, h->temps, sizeof *t * (size_t)h->ntemps);
    h->temps = t, h->cap_temps = cap;
  }
  h->temps[h->ntemps++] = b;
  if (!add_step(h, (lw_gpu_step){.kind = LW_GPU_STEP_ALLOC, .buffer = b, .count = s->exprs[0]}))
    return NULL;
  ir_stmt *body = host_stmt(h, s->stmts[0]);
  if (!body || !add_step(h, (lw_gpu_step){.kind = LW_GPU_STEP_FREE, .buffer = b}))
    return NULL;
  return ir_stmt_with_children(h->p->ctx, s, s->exprs, &body);
}

static ir_stmt *host_seq(lw_gpu_host *h, ir_stmt *s) {
  ir_stmt **out = ir_alloc(h->p->ctx, sizeof *out * (s->nstmts + 1));
  if (!out)
    return NULL;
  for (uint32_t i = 0; i < s->nstmts; i++)
    if (!(out[i] = host_stmt(h, s->stmts[i])))
      return NULL;
  return ir_seq(h->p->ctx, (int)s->nstmts, out);
}

static ir_stmt *host_attr(lw_gpu_host *h, ir_stmt *s) {
  const char *saved = h->stage;
  if (!strcmp(s->u.attr.key, "produce") && s->u.attr.node)
    h->stage = ((te_tensor *)s->u.attr.node)->name;
  ir_stmt *body = s->nstmts ? host_stmt(h, s->stmts[0]) : NULL;
  h->stage = saved;
  if (s->nstmts && !body)
    return NULL;
  return ir_stmt_with_children(h->p->ctx, s, s->exprs, &body);
}

static ir_stmt *host_for(lw_gpu_host *h, ir_stmt *s) {
  if (s->u.loop.kind == IR_FOR_THREAD)
    return launch(h, s);
  if (lw_gpu_has_thread_loop(s)) {
    lw_pass_ctx *p = h->p;
    ir_error(p->ctx, TE_ERR_SCHEDULE,
             "%s: stage '%s': loop '%s' runs on the host around loops bound to GPU blocks or "
             "threads (target '%s'): bind it too (blockIdx.y, blockIdx.z) or fuse it into a "
             "bound loop",
             p->api, h->stage ? h->stage : "?", IR_FOR_VAR(s)->u.var.name, p->target->str);
    return NULL;
  }
  host_error(h, "loop", IR_FOR_VAR(s)->u.var.name);
  return NULL;
}

static ir_stmt *host_stmt(lw_gpu_host *h, ir_stmt *s) {
  te_ctx *ctx = h->p->ctx;
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_SEQ:
    return host_seq(h, s);
  case IR_S_ATTR:
    return host_attr(h, s);
  case IR_S_ALLOCATE:
    return host_alloc(h, s);
  case IR_S_FOR:
    return host_for(h, s);
  case IR_S_LET_STMT: /* a size computed on the host: every use gets the value itself */
    return host_stmt(h, ir_substitute_stmt(ctx, s->stmts[0], 1, &s->exprs[0], &s->exprs[1]));
  case IR_S_EVALUATE:
    return s;
  case IR_S_STORE:
    host_error(h, "the store to", s->u.buffer->name);
    return NULL;
  default:
    break;
  }
  if (lw_gpu_has_thread_loop(s)) {
    ir_error(ctx, TE_ERR_UNSUPPORTED,
             "%s: stage '%s': a '%s' statement around loops bound to GPU blocks or threads runs "
             "on the host; this version launches kernels only in sequence",
             h->p->api, h->stage ? h->stage : "?", ir_stmt_kind_name[s->kind]);
    return NULL;
  }
  if (has_store(s)) {
    host_error(h, "a", ir_stmt_kind_name[s->kind]);
    return NULL;
  }
  return s;
}

ir_stmt *lw_gpu_split(lw_pass_ctx *p, ir_stmt *s) {
  if (!lw_gpu_target(p))
    return s;
  lw_gpu_module *m = ir_alloc(p->ctx, sizeof *m);
  if (!m)
    return NULL;
  lw_gpu_host h = {.p = p, .mod = m};
  ir_stmt *host = host_stmt(&h, s);
  if (!host)
    return NULL;
  if (m->nkernels == 0) {
    ir_error(p->ctx, TE_ERR_SCHEDULE,
             "%s: function '%s': no loop is bound to a GPU block or thread (target '%s'): bind "
             "the outer loops of each stage with te_bind (blockIdx.x, threadIdx.x, ...)",
             p->api, p->func->name, p->target->str);
    return NULL;
  }
  p->func->gpu = m;
  return host;
}
