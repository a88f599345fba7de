/* specialize.c — lowering a schedule with te_specialize branches, and the pass "specialize".
 *
 * lw_run_specialized replaces lw_run_pipeline when the schedule has specializations. Each
 * branch, and the general schedule, runs through the computation's passes (schedule_to_loops
 * .. nontemporal) as a whole schedule of its own, knowing the condition it runs under (its
 * own joined by && with those of the branches around it); the loop nests are then joined,
 *     if (c1) { branch 1 } else if (c2) { branch 2 } else { general }
 * in the order te_specialize made them, and the calling-convention passes run once on the
 * whole. A condition the schedule layer simplified to false drops its branch; one that is true
 * makes its branch the whole kernel (what follows it is never lowered).
 *
 * What a branch knows (lw_facts): from each atom of its condition's && chain,
 *   v == c          v -> c                  (a size, a stride variable, an integer parameter)
 *   v % c == 0      v -> v_divc*c, with let v_divc = v // c around the branch and v_divc >= 1
 *   v < c, v <= c   v in [1, c - 1] or [1, c] (a stride variable: from 0)
 * Substitutions are made by the pass "specialize", after storage_flatten so that the flat
 * indices, made from the buffers' shapes and strides, are rewritten too: the simplifier then
 * sees n_div16*16 where it saw n and proves a split by 16 has no tail, and a stride 1 makes
 * contiguous ramps for the vectorizer. Ranges are bound in every analyzer the passes make
 * (lw_analyzer_new). An atom of another form teaches nothing: the branch is still correct.
 *
 * GPU targets refuse a branch whose condition is not constant: the host/device split
 * (gpu_split) makes one launch plan per schedule, not one per branch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "schedule/sch.h"

ir_stmt *lw_specialize(lw_pass_ctx *p, ir_stmt *s) {
  const lw_facts *f = p->facts;
  if (!f || f->nsubst == 0)
    return s;
  return ir_substitute_stmt(p->ctx, s, f->nsubst, f->from, f->to);
}

/* ---------------------------------------------------------------- facts */

static int count_atoms(te_expr *c) {
  return c->kind == IR_AND ? count_atoms(c->args[0]) + count_atoms(c->args[1]) : 1;
}

static int size_index(const lw_func *fn, te_expr *v) {
  for (int k = 0; k < fn->nsizes; k++)
    if (fn->size_vars[k] == v)
      return k;
  return -1;
}

static bool substituted(const lw_facts *f, te_expr *v) {
  for (int k = 0; k < f->nsubst; k++)
    if (f->from[k] == v)
      return true;
  return false;
}

static bool is_int_var(te_expr *e) {
  return ir_is_var(e) && e->dtype.lanes == 1 &&
         (e->dtype.code == kDLInt || (e->dtype.code == kDLUInt && e->dtype.bits > 1)) &&
         (e->u.var.kind == IR_VAR_INDEX || e->u.var.kind == IR_VAR_PARAM);
}

/* n % c == 0: n -> n_divc * c, n_divc let to n // c. */
static bool add_multiple(lw_pass_ctx *p, lw_facts *f, te_expr *v, int64_t c) {
  char name[160];
  snprintf(name, sizeof name, "%s_div%lld", v->u.var.name, (long long)c);
  te_expr *q = ir_var_new(p->ctx, name, v->dtype, IR_VAR_INDEX);
  te_expr *cc = ir_int(p->ctx, v->dtype, c);
  te_expr *to = q && cc ? ir_mul(q, cc) : NULL, *value = cc ? ir_floordiv(v, cc) : NULL;
  if (!to || !value)
    return false;
  f->from[f->nsubst] = v;
  f->to[f->nsubst++] = to;
  f->let_var[f->nlets] = q;
  f->let_value[f->nlets++] = value;
  return true;
}

static bool learn_atom(lw_pass_ctx *p, lw_facts *f, te_expr *a) {
  int64_t c;
  te_expr *l = a->nargs == 2 ? a->args[0] : NULL, *r = a->nargs == 2 ? a->args[1] : NULL;
  if (a->kind == IR_EQ && is_int_var(r) && ir_is_const_int(l, &c)) { /* 4 == n */
    te_expr *t = l;
    l = r, r = t;
  }
  if (a->kind == IR_EQ && is_int_var(l) && ir_is_const_int(r, &c) && !substituted(f, l)) {
    f->from[f->nsubst] = l;
    f->to[f->nsubst++] = r;
    return true;
  }
  if (a->kind == IR_EQ && l && l->kind == IR_FLOORMOD && ir_is_const_int(r, &c) && c == 0) {
    te_expr *v = l->args[0];
    int64_t m;
    if (ir_is_var(v) && v->u.var.kind == IR_VAR_INDEX && ir_is_const_int(l->args[1], &m) && m > 1 &&
        size_index(p->func, v) >= 0 && !lw_size_is_stride(p->func, size_index(p->func, v)) &&
        !substituted(f, v))
      return add_multiple(p, f, v, m);
    return true;
  }
  if ((a->kind == IR_LT || a->kind == IR_LE) && ir_is_var(l) && ir_is_const_int(r, &c)) {
    int k = size_index(p->func, l);
    if (k < 0)
      return true;
    int64_t lo = lw_size_is_stride(p->func, k) ? 0 : 1, hi = a->kind == IR_LT ? c - 1 : c;
    if (hi >= lo && hi < INT64_MAX / 2) {
      f->range_var[f->nranges] = l;
      f->range_lo[f->nranges] = lo;
      f->range_hi[f->nranges++] = hi;
    }
  }
  return true;
}

static bool learn(lw_pass_ctx *p, lw_facts *f, te_expr *c) {
  if (c->kind == IR_AND)
    return learn(p, f, c->args[0]) && learn(p, f, c->args[1]);
  return learn_atom(p, f, c);
}

static bool make_facts(lw_pass_ctx *p, te_expr *cond, lw_facts *f) {
  memset(f, 0, sizeof *f);
  f->cond = cond;
  int n = count_atoms(cond);
  size_t ptrs = (size_t)n * sizeof(te_expr *);
  f->from = ir_alloc(p->ctx, ptrs);
  f->to = ir_alloc(p->ctx, ptrs);
  f->let_var = ir_alloc(p->ctx, ptrs);
  f->let_value = ir_alloc(p->ctx, ptrs);
  f->range_var = ir_alloc(p->ctx, ptrs);
  f->range_lo = ir_alloc(p->ctx, (size_t)n * sizeof(int64_t));
  f->range_hi = ir_alloc(p->ctx, (size_t)n * sizeof(int64_t));
  if (!f->from || !f->to || !f->let_var || !f->let_value || !f->range_var || !f->range_lo ||
      !f->range_hi)
    return false;
  return learn(p, f, cond);
}

/* ---------------------------------------------------------------- lowering the branches */

/* Every variable of a condition must be one the kernel binds or is given. */
typedef struct arg_check {
  lw_pass_ctx *p;
  te_expr *cond;
  te_status st;
} arg_check;

static int check_var(ir_visitor *v, te_expr *e) {
  arg_check *ac = v->data;
  if (e->kind != IR_VAR || size_index(ac->p->func, e) >= 0)
    return IR_CONTINUE;
  for (int i = 0; i < ac->p->func->nargs; i++)
    if (!ac->p->func->args[i].is_buffer && ac->p->func->args[i].var == e)
      return IR_CONTINUE;
  char *text = ir_expr_to_string(ac->cond);
  ac->st = ir_error(ac->p->ctx, TE_ERR_SCHEDULE,
                    "%s: the specialization '%s' (te_specialize) uses '%s', which is not among "
                    "the kernel's scalars",
                    ac->p->api, text ? text : "?", e->u.var.name);
  free(text);
  return IR_ABORT;
}

static te_status check_args(lw_pass_ctx *p, te_expr *cond) {
  arg_check ac = {p, cond, TE_OK};
  ir_visitor v = {0};
  v.expr[IR_VAR] = check_var;
  v.data = &ac;
  ir_visit_expr(&v, cond);
  return ac.st;
}

/* One schedule through passes 0 .. last under cond (NULL: nothing known). */
static te_status lower_plain(lw_pass_ctx *p, te_schedule *sch, te_expr *cond, int last,
                             ir_stmt **out) {
  lw_facts f;
  if (cond && !make_facts(p, cond, &f))
    return te_last_status(p->ctx);
  p->sch = sch;
  p->facts = cond ? &f : NULL;
  te_status st = lw_run_passes(p, 0, last);
  p->facts = NULL;
  if (st != TE_OK)
    return st;
  ir_stmt *body = p->func->body;
  for (int k = cond ? f.nlets - 1 : -1; k >= 0 && body; k--)
    body = ir_let_stmt(f.let_var[k], f.let_value[k], body);
  *out = body;
  return body ? TE_OK : te_last_status(p->ctx);
}

static bool is_const_bool(te_expr *c, bool value) {
  int64_t v;
  return ir_is_const_int(c, &v) && (v != 0) == value;
}

/* sch's specializations, tried in order, then sch itself, under outer (NULL: none). */
static te_status lower_tree(lw_pass_ctx *p, te_schedule *sch, te_expr *outer, int last,
                            ir_stmt **out) {
  int n = sch->nspecial, nlive = 0;
  te_expr **conds = ir_alloc(p->ctx, (size_t)(n ? n : 1) * sizeof *conds);
  ir_stmt **bodies = ir_alloc(p->ctx, (size_t)(n ? n : 1) * sizeof *bodies);
  if (!conds || !bodies)
    return te_last_status(p->ctx);
  ir_stmt *rest = NULL; /* what runs when no live condition holds */
  for (int k = 0; k < n && !rest; k++) {
    te_expr *c = sch->special[k].cond;
    if (is_const_bool(c, false))
      continue;
    bool always = is_const_bool(c, true);
    te_status st = check_args(p, c);
    if (st != TE_OK)
      return st;
    if (!always && p->target && tg_is_gpu(p->target))
      return ir_error(p->ctx, TE_ERR_UNSUPPORTED,
                      "%s: the schedule has a specialization (te_specialize) whose condition is "
                      "not constant; GPU targets do not support those (build it for a CPU "
                      "target, or build one kernel a branch)",
                      p->api);
    te_expr *under = always ? outer : outer ? ir_and(outer, c) : c;
    ir_stmt *b = NULL;
    if ((always || under) && (st = lower_tree(p, sch->special[k].branch, under, last, &b)) != TE_OK)
      return st;
    if (!under && !always)
      return te_last_status(p->ctx);
    if (always) {
      rest = b;
    } else {
      conds[nlive] = c;
      bodies[nlive++] = b;
    }
  }
  if (!rest) {
    te_status st = lower_plain(p, sch, outer, last, &rest);
    if (st != TE_OK)
      return st;
  }
  for (int k = nlive - 1; k >= 0 && rest; k--)
    rest = ir_if(conds[k], bodies[k], rest);
  *out = rest;
  return rest ? TE_OK : te_last_status(p->ctx);
}

te_status lw_run_specialized(lw_pass_ctx *p, const char *stop_after) {
  int stop = lw_pipeline_count - 1;
  if (stop_after && (stop = lw_pass_index(stop_after)) < 0)
    return ir_error(p->ctx, TE_ERR_INVALID_ARG, "%s: stop after '%s': no pass has that name",
                    p->api, stop_after);
  int compute_last = lw_pass_index(lw_last_compute_pass());
  int mid = stop < compute_last ? stop : compute_last;
  te_schedule *top = p->sch;
  ir_stmt *body = NULL;
  te_status st = lower_tree(p, top, NULL, mid, &body);
  p->sch = top;
  if (st != TE_OK)
    return st;
  p->func->body = body;
  return stop > mid ? lw_run_passes(p, mid + 1, stop) : TE_OK;
}
