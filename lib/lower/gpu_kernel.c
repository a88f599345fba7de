/* gpu_kernel.c — one kernel of the host/device split: launch extents, limits, parameters.
 *
 * The launch extent of a block or thread index is the largest extent of the loops bound to it
 * in the kernel (several stages may bind threadIdx.x: the copy loops of a cooperative load and
 * the compute loop; a stage with fewer iterations than the launch is guarded in the body). The
 * checks, each an error naming the kernel and the stages:
 *   - a loop bound inside another loop bound to the same index may not have more iterations
 *     than it (the enclosing loop's body would run for threads it does not cover);
 *   - extents must be comparable: constants, or symbolic extents where one provably covers the
 *     other; and computable before the launch (sizes and scalar parameters only);
 *   - threads a block (all axes together) and on each axis, blocks on each axis, shared memory
 *     of a block: within the target's limits (target_gpu.c) when they are constants.
 * Parameters are the buffers, scalars and sizes the body uses, in gpu.h's order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_lower.h"

typedef struct kbind {
  ir_stmt *loop;
  const char *stage;
  te_expr *outer[LW_GPU_NIDX]; /* the enclosing loop bound to each index (its extent) */
  const char *outer_stage[LW_GPU_NIDX];
} kbind;

typedef struct kstate {
  lw_gpu_host *h;
  lw_gpu_kernel *k;
  ir_analyzer *an;
  te_expr *ext[LW_GPU_NIDX];
  const char *ext_stage[LW_GPU_NIDX];
} kstate;

static te_status kerr(kstate *s, te_status st, const char *fmt, const char *a, const char *b,
                      const char *c, const char *d) {
  lw_pass_ctx *p = s->h->p;
  char msg[600];
  snprintf(msg, sizeof msg, fmt, a, b, c, d);
  return ir_error(p->ctx, st, "%s: kernel '%s': %s (target '%s')", p->api, s->k->name, msg,
                  p->target->str);
}

/* Free variables an extent may use: the function's sizes and scalar parameters. */
static bool host_computable(lw_func *f, te_expr *e) {
  if (e->kind == IR_VAR) {
    for (int i = 0; i < f->nsizes; i++)
      if (f->size_vars[i] == e)
        return true;
    for (int i = 0; i < f->nargs; i++)
      if (!f->args[i].is_buffer && f->args[i].var == e)
        return true;
    return false;
  }
  if (e->kind == IR_LOAD)
    return false;
  for (int i = 0; i < e->nargs; i++)
    if (!host_computable(f, e->args[i]))
      return false;
  return true;
}

static char *str_of(te_expr *e) { return ir_expr_to_string(e); }

/* Merges one loop's extent into the launch extent of its index. */
static te_status merge_extent(kstate *s, te_thread_tag tag, te_expr *e, const char *stage) {
  if (!s->ext[tag]) {
    s->ext[tag] = e, s->ext_stage[tag] = stage;
    return TE_OK;
  }
  te_expr *cur = s->ext[tag];
  if (cur == e || ir_can_prove(s->an, ir_le(e, cur)))
    return TE_OK;
  if (ir_can_prove(s->an, ir_le(cur, e))) {
    s->ext[tag] = e, s->ext_stage[tag] = stage;
    return TE_OK;
  }
  char *a = str_of(cur), *b = str_of(e);
  te_status st = kerr(s, TE_ERR_SCHEDULE,
                      "%s has extent '%s' in stage '%s' and '%s' in another: the extents of the "
                      "loops bound to one index must be constants or provably ordered",
                      te_thread_tag_name(tag), a ? a : "?", s->ext_stage[tag], b ? b : "?");
  free(a), free(b);
  return st;
}

static te_status check_nested(kstate *s, kbind *b, te_thread_tag tag, te_expr *e) {
  te_expr *outer = b->outer[tag];
  if (!outer || outer == e || ir_can_prove(s->an, ir_le(e, outer)))
    return TE_OK;
  char *a = str_of(e), *o = str_of(outer);
  char what[200];
  snprintf(what, sizeof what, "%s (extent %s)", te_thread_tag_name(tag), a ? a : "?");
  te_status st = kerr(s, TE_ERR_SCHEDULE,
                      "inconsistent thread extents: stage '%s' binds %s inside a loop of stage "
                      "'%s' bound to the same index with extent %s; an inner binding may not have "
                      "more iterations than the enclosing one",
                      b->stage, what, b->outer_stage[tag], o ? o : "?");
  free(a), free(o);
  return st;
}

/* Walks the kernel's loops bound to indices: merges extents, checks nesting. */
static te_status collect(kstate *s, ir_stmt *st, kbind b) {
  if (!st)
    return TE_OK;
  if (st->kind == IR_S_ATTR && !strcmp(st->u.attr.key, "produce") && st->u.attr.node)
    b.stage = ((te_tensor *)st->u.attr.node)->name;
  if (st->kind == IR_S_FOR && st->u.loop.kind == IR_FOR_THREAD) {
    te_thread_tag tag = st->u.loop.tag;
    te_expr *e = ir_simplify(s->an, IR_FOR_EXTENT(st));
    if (!e)
      return te_last_status(s->h->p->ctx);
    if (!host_computable(s->h->p->func, e)) {
      char *t = str_of(e);
      te_status r = kerr(s, TE_ERR_SCHEDULE,
                         "stage '%s': loop '%s' bound to %s has extent '%s', which depends on an "
                         "enclosing loop: launch extents must be known before the launch",
                         b.stage ? b.stage : "?", IR_FOR_VAR(st)->u.var.name,
                         te_thread_tag_name(tag), t ? t : "?");
      free(t);
      return r;
    }
    te_status r = check_nested(s, &b, tag, e);
    if (r == TE_OK)
      r = merge_extent(s, tag, e, b.stage ? b.stage : "?");
    if (r != TE_OK)
      return r;
    b.outer[tag] = e;
    b.outer_stage[tag] = b.stage ? b.stage : "?";
  }
  for (uint32_t i = 0; i < st->nstmts; i++) {
    te_status r = collect(s, st->stmts[i], b);
    if (r != TE_OK)
      return r;
  }
  return TE_OK;
}

static te_status check_limits(kstate *s) {
  const te_target *t = s->h->p->target;
  char a[64], b[64], c[400] = "";
  int64_t threads = 1;
  bool all_const = true;
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (!s->ext[TE_THREAD_X + d])
      continue;
    if (!ir_is_const_int(s->ext[TE_THREAD_X + d], &v)) {
      all_const = false;
      continue;
    }
    size_t n = strlen(c);
    snprintf(c + n, sizeof c - n, "%s%s %" PRId64, n ? " x " : "",
             te_thread_tag_name(TE_THREAD_X + d), v);
    threads *= v;
    if (v > t->max_block_dim[d]) {
      snprintf(a, sizeof a, "%" PRId64, v), snprintf(b, sizeof b, "%d", t->max_block_dim[d]);
      return kerr(s, TE_ERR_SCHEDULE, "%s extent %s (stage '%s') is over the target's limit of %s",
                  te_thread_tag_name(TE_THREAD_X + d), a, s->ext_stage[TE_THREAD_X + d], b);
    }
  }
  if (all_const && threads > t->max_threads_per_block) {
    snprintf(a, sizeof a, "%" PRId64, threads),
        snprintf(b, sizeof b, "%d", t->max_threads_per_block);
    return kerr(s, TE_ERR_SCHEDULE, "%s threads a block (%s) is over the target's limit of %s%s", a,
                c, b, "");
  }
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (s->ext[d] && ir_is_const_int(s->ext[d], &v) && v > t->max_grid_dim[d]) {
      snprintf(a, sizeof a, "%" PRId64, v), snprintf(b, sizeof b, "%" PRId64, t->max_grid_dim[d]);
      return kerr(s, TE_ERR_SCHEDULE, "%s extent %s (stage '%s') is over the target's limit of %s",
                  te_thread_tag_name((te_thread_tag)d), a, s->ext_stage[d], b);
    }
  }
  return TE_OK;
}

static te_status check_shared(kstate *s) {
  lw_gpu_kernel *k = s->k;
  const te_target *t = s->h->p->target;
  char list[300] = "", a[32], b[32];
  for (int i = 0; i < k->nshared; i++) {
    size_t n = strlen(list);
    int64_t bytes = k->shared[i].count * ir_dtype_bytes(k->shared[i].buffer->dtype);
    snprintf(list + n, sizeof list - n, "%s%s %" PRId64, i ? ", " : "", k->shared[i].buffer->name,
             bytes);
    k->shared_bytes += bytes;
  }
  if (k->shared_bytes <= t->max_shared_bytes)
    return TE_OK;
  snprintf(a, sizeof a, "%" PRId64, k->shared_bytes);
  snprintf(b, sizeof b, "%" PRId64, t->max_shared_bytes);
  return kerr(s, TE_ERR_SCHEDULE,
              "shared memory of %s bytes a block (%s) is over the target's limit of %s bytes%s", a,
              list, b, "");
}

/* ---------------------------------------------------------------- parameters */

typedef struct pwalk {
  lw_gpu_host *h;
  ir_map *read, *written, *vars;
} pwalk;

static int p_load(ir_visitor *v, te_expr *e) {
  pwalk *w = v->data;
  if (e->kind == IR_LOAD)
    ir_map_put(w->read, e->u.buffer, e->u.buffer);
  else if (e->kind == IR_VAR)
    ir_map_put(w->vars, e, e);
  return IR_CONTINUE;
}

static int p_store(ir_visitor *v, ir_stmt *s) {
  pwalk *w = v->data;
  ir_map_put(w->written, s->u.buffer, s->u.buffer);
  return IR_CONTINUE;
}

static te_status make_params(lw_gpu_host *h, lw_gpu_kernel *k) {
  te_ctx *ctx = h->p->ctx;
  lw_func *f = h->p->func;
  pwalk w = {h, ir_map_new(ctx), ir_map_new(ctx), ir_map_new(ctx)};
  if (!w.read || !w.written || !w.vars)
    return te_last_status(ctx);
  ir_visitor v = {.data = &w};
  v.expr[IR_LOAD] = p_load;
  v.expr[IR_VAR] = p_load;
  v.stmt[IR_S_STORE] = p_store;
  ir_visit_stmt(&v, k->body);
  int cap = f->nargs + f->nsizes + h->ntemps + 1;
  k->params = ir_alloc(ctx, sizeof *k->params * (size_t)cap);
  if (!k->params)
    return te_last_status(ctx);
  for (int pass = 0; pass < 2; pass++) /* argument buffers, then host temporaries */
    for (int i = 0; i < (pass ? h->ntemps : f->nargs); i++) {
      ir_buffer *b = pass ? h->temps[i] : f->args[i].is_buffer ? f->args[i].buffer : NULL;
      bool r = b && ir_map_has(w.read, b), wr = b && ir_map_has(w.written, b);
      if (r || wr)
        k->params[k->nparams++] =
            (lw_gpu_param){.kind = LW_GPU_PARAM_BUFFER, .buffer = b, .read = r, .written = wr};
    }
  for (int i = 0; i < f->nargs; i++)
    if (!f->args[i].is_buffer && ir_map_has(w.vars, f->args[i].var))
      k->params[k->nparams++] = (lw_gpu_param){.kind = LW_GPU_PARAM_SCALAR, .var = f->args[i].var};
  for (int i = 0; i < f->nsizes; i++)
    if (ir_map_has(w.vars, f->size_vars[i]))
      k->params[k->nparams++] = (lw_gpu_param){.kind = LW_GPU_PARAM_SIZE, .var = f->size_vars[i]};
  return TE_OK;
}

/* ---------------------------------------------------------------- the kernel */

static te_status finish_body(kstate *s, ir_stmt *root) {
  lw_gpu_kernel *k = s->k;
  lw_pass_ctx *p = s->h->p;
  ir_stmt *body = lw_gpu_rewrite_body(s->h, k, root, s->ext);
  if (!body)
    return ir_failed(p->ctx)
               ? te_last_status(p->ctx)
               : kerr(s, TE_ERR_SCHEDULE, "%s%s%s%s", "the kernel does nothing", "", "", "");
  ir_analyzer *an = lw_analyzer_new(p);
  if (!an)
    return te_last_status(p->ctx);
  for (int t = 0; t < LW_GPU_NIDX; t++)
    if (k->idx[t])
      ir_analyzer_bind(an, k->idx[t], ir_i64(p->ctx, 0), s->ext[t]);
  k->body = ir_simplify_stmt(an, body);
  if (!k->body)
    k->body = ir_failed(p->ctx) ? NULL : ir_evaluate(ir_i64(p->ctx, 0));
  if (!k->body)
    return te_last_status(p->ctx);
#ifdef TE_DEBUG
  te_status vs = ir_verify_stmt(p->ctx, k->body, "gpu_split", true);
  if (vs != TE_OK)
    return vs;
#endif
  return TE_OK;
}

te_status lw_gpu_make_kernel(lw_gpu_host *h, ir_stmt *root, lw_gpu_kernel *k) {
  lw_pass_ctx *p = h->p;
  te_ctx *ctx = p->ctx;
  char name[300];
  snprintf(name, sizeof name, "%s_kernel%d", p->func->name, k->index);
  k->name = ir_strdup(ctx, name);
  kstate s = {.h = h, .k = k, .an = lw_analyzer_new(p)};
  if (!k->name || !s.an)
    return te_last_status(ctx);
  kbind b = {.stage = h->stage};
  te_status st = collect(&s, root, b);
  if (st == TE_OK)
    st = check_limits(&s);
  if (st == TE_OK)
    st = finish_body(&s, root);
  if (st == TE_OK)
    st = check_shared(&s);
  if (st == TE_OK)
    st = make_params(h, k);
  if (st != TE_OK)
    return st;
  for (int d = 0; d < 3; d++) {
    k->grid[d] = s.ext[d] ? s.ext[d] : ir_i64(ctx, 1);
    k->block[d] = s.ext[TE_THREAD_X + d] ? s.ext[TE_THREAD_X + d] : ir_i64(ctx, 1);
  }
  return TE_OK;
}
