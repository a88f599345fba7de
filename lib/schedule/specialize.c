/* specialize.c — te_specialize: a branch of the schedule taken when a runtime condition holds.
 *
 * A specialization is a condition and a branch schedule. The branch starts as a copy of the
 * schedule (its steps replayed on a fresh schedule of the same computation, so its stages and
 * iterators are its own and further primitives on either side stay apart) and is lowered as a
 * whole schedule of its own; lowering (lib/lower/specialize.c) tests the conditions in order
 * around the branches' loop nests. Nothing else in the schedule layer looks at them.
 *
 * The condition is tested once per call, before any loop, so it may use only what the kernel is
 * given: the computation's symbolic sizes and stride variables and the scalar parameters its
 * bodies use. It must also read back from the trace (cond_text.c) to the same expression, which
 * this file checks once, so a recorded specialization always replays.
 */
#include <stdlib.h>
#include <string.h>

#include "sch.h"

/* The variables a condition may use: sizes and strides of every tensor the stages compute or
   read, parameters of the stages' bodies. sizes marks the ones that are extents (>= 1). */
typedef struct cond_vars {
  te_ctx *ctx;
  ir_map *allowed; /* var -> var */
  ir_map *sizes;   /* var -> var: an extent somewhere (assumed >= 1) */
  int n, cap;
  te_expr **list; /* allowed, in first-seen order (name look-up) */
  ir_map *seen;   /* expressions walked */
} cond_vars;

static bool add_var(cond_vars *cv, te_expr *v) {
  if (ir_map_has(cv->allowed, v))
    return true;
  if (!ir_map_put(cv->allowed, v, v) ||
      !sch_grow(cv->ctx, (void ***)&cv->list, &cv->cap, cv->n, cv->n + 1))
    return false;
  cv->list[cv->n++] = v;
  return true;
}

static int collect_param(ir_visitor *v, te_expr *e) {
  cond_vars *cv = v->data;
  if (ir_map_has(cv->seen, e))
    return IR_PRUNE;
  if (!ir_map_put(cv->seen, e, e))
    return IR_ABORT;
  if (e->kind == IR_VAR && e->u.var.kind == IR_VAR_PARAM && !add_var(cv, e))
    return IR_ABORT;
  return IR_CONTINUE;
}

/* The bare variables among a tensor's extents and strides. */
static bool collect_tensor(cond_vars *cv, te_tensor *t) {
  for (int d = 0; d < t->ndim; d++) {
    te_expr *e = t->shape[d];
    if (ir_is_var(e) && e->u.var.kind == IR_VAR_INDEX &&
        (!add_var(cv, e) || !ir_map_put(cv->sizes, e, e)))
      return false;
    te_expr *st = t->strides ? t->strides[d] : NULL;
    if (ir_is_var(st) && st->u.var.kind == IR_VAR_INDEX && !add_var(cv, st))
      return false;
  }
  return true;
}

static bool collect(te_schedule *s, cond_vars *cv) {
  cv->ctx = s->ctx;
  cv->allowed = ir_map_new(s->ctx);
  cv->sizes = ir_map_new(s->ctx);
  cv->seen = ir_map_new(s->ctx);
  if (!cv->allowed || !cv->sizes || !cv->seen)
    return false;
  ir_visitor v = {0};
  for (int k = 0; k < IR_EXPR_COUNT; k++)
    v.expr[k] = collect_param;
  v.data = cv;
  for (int i = 0; i < s->nstage; i++) {
    sch_op *op = s->stages[i]->op;
    for (int k = 0; k < op->nout; k++)
      if (!collect_tensor(cv, op->outputs[k]))
        return false;
    te_tensor **in;
    int n = sch_op_inputs(op, &in);
    for (int k = 0; k < n; k++)
      if (!collect_tensor(cv, in[k]))
        return false;
    for (int k = 0; k < op->nbody; k++)
      if (ir_visit_expr(&v, op->body[k]) == IR_ABORT)
        return false;
  }
  return true;
}

te_expr *sch_condition_var(te_schedule *s, const char *name, const char *fn) {
  cond_vars cv = {0};
  if (!collect(s, &cv))
    return NULL;
  te_expr *found = NULL;
  for (int i = 0; i < cv.n; i++) {
    if (strcmp(cv.list[i]->u.var.name, name) != 0)
      continue;
    if (found) {
      if (fn)
        ir_error(s->ctx, TE_ERR_NOT_FOUND,
                 "%s: the computation has two variables named '%s' (a condition names one)", fn,
                 name);
      return NULL;
    }
    found = cv.list[i];
  }
  if (!found && fn)
    ir_error(s->ctx, TE_ERR_NOT_FOUND,
             "%s: the computation has no size, stride or parameter named '%s'", fn, name);
  return found;
}

/* What a variable that no condition may use is, for the message. */
static const char *stage_owning(te_schedule *s, te_expr *var) {
  for (int i = 0; i < s->nstage; i++) {
    te_stage *st = s->stages[i];
    for (int k = 0; k < st->nall; k++)
      if (st->all[k]->var == var)
        return st->name;
  }
  return NULL;
}

typedef struct cond_check {
  te_schedule *s;
  cond_vars *cv;
  te_status st;
} cond_check;

static int check_node(ir_visitor *v, te_expr *e) {
  cond_check *cc = v->data;
  te_ctx *ctx = cc->s->ctx;
  const char *rule = "a condition is tested once per call, before any loop: it may use the "
                     "computation's sizes, strides and scalar parameters";
  if (e->kind == IR_ACCESS || e->kind == IR_LOAD) {
    const char *t = e->kind == IR_ACCESS ? e->u.tensor->name : e->u.buffer->name;
    cc->st = ir_error(ctx, TE_ERR_SCHEDULE, "te_specialize: the condition reads tensor '%s'; %s", t,
                      rule);
    return IR_ABORT;
  }
  if (e->kind == IR_REDUCE) {
    cc->st =
        ir_error(ctx, TE_ERR_SCHEDULE, "te_specialize: the condition holds a reduction; %s", rule);
    return IR_ABORT;
  }
  if (e->kind != IR_VAR || ir_map_has(cc->cv->allowed, e))
    return IR_CONTINUE;
  const char *name = e->u.var.name;
  const char *stage = stage_owning(cc->s, e);
  if (stage)
    cc->st = ir_error(ctx, TE_ERR_SCHEDULE,
                      "te_specialize: the condition uses '%s', an iteration variable of stage "
                      "'%s'; %s",
                      name, stage, rule);
  else if (e->u.var.kind == IR_VAR_PARAM)
    cc->st = ir_error(ctx, TE_ERR_SCHEDULE,
                      "te_specialize: the condition uses parameter '%s', which the computation "
                      "does not use; %s",
                      name, rule);
  else
    cc->st = ir_error(ctx, TE_ERR_SCHEDULE,
                      "te_specialize: the condition uses '%s', which is no size, stride or "
                      "parameter of the computation (a loop or reduce variable?); %s",
                      name, rule);
  return IR_ABORT;
}

static te_status check_condition(te_schedule *s, cond_vars *cv, te_expr *cond) {
  if (cond->ctx != s->ctx)
    return ir_error(s->ctx, TE_ERR_INVALID_ARG, "te_specialize: cond belongs to another context");
  if (!ir_is_bool(cond->dtype) || cond->dtype.lanes != 1) {
    char name[24];
    return ir_error(s->ctx, TE_ERR_TYPE, "te_specialize: cond must be a scalar bool (got %s)",
                    te_dtype_str(cond->dtype, name, sizeof name));
  }
  cond_check cc = {s, cv, TE_OK};
  ir_visitor v = {0};
  for (int k = 0; k < IR_EXPR_COUNT; k++)
    v.expr[k] = check_node;
  v.data = &cc;
  ir_visit_expr(&v, cond);
  return cc.st;
}

/* cond simplified knowing every extent is >= 1. */
static te_expr *simplify_condition(te_schedule *s, cond_vars *cv, te_expr *cond) {
  ir_analyzer *an = ir_analyzer_new(s->ctx);
  if (!an)
    return NULL;
  for (int i = 0; i < cv->n; i++)
    if (ir_map_has(cv->sizes, cv->list[i]))
      ir_analyzer_assume_positive(an, cv->list[i]);
  return ir_simplify(an, cond);
}

/* The trace writes the condition as the IR printer does; it must read back the same. */
static te_status check_round_trip(te_schedule *s, te_expr *cond) {
  char *text = ir_expr_to_string(cond);
  if (!text)
    return te_last_status(s->ctx) ? te_last_status(s->ctx) : TE_ERR_NOMEM;
  te_status st = TE_OK;
  te_expr *back = sch_condition_parse(s, text, NULL);
  if (back != cond) {
    if (ir_failed(s->ctx))
      st = te_last_status(s->ctx); /* out of memory: the quiet parse records nothing else */
    else
      st = ir_error(s->ctx, TE_ERR_UNSUPPORTED,
                    "te_specialize: the condition '%s' has a form the trace cannot write "
                    "(use sizes, strides, parameters and constants with + - * // %% min max, "
                    "comparisons and && || !)",
                    text);
  }
  free(text);
  return st;
}

/* A copy of s: the same computation with s's steps replayed. */
static te_schedule *copy_schedule(te_schedule *s) {
  te_schedule *b = sch_schedule_new(s->ctx, s->nout, s->outs);
  if (!b)
    return NULL;
  ir_str text = {.ctx = s->ctx};
  for (int i = 0; i < s->nsteps; i++)
    ir_str_printf(&text, "%s\n", s->steps[i]);
  if (text.oom) {
    ir_str_free(&text);
    return NULL;
  }
  char *t = text.buf ? ir_str_take(&text) : NULL;
  te_status st = t ? sch_replay(b, t, 1) : TE_OK;
  free(t);
  if (st != TE_OK) {
    ir_check(s->ctx, st == TE_ERR_NOMEM,
             "te_specialize: replaying the schedule's own steps failed");
    return NULL;
  }
  b->nprefix = b->nsteps;
  return b;
}

te_status sch_specialize(te_schedule *s, te_expr *cond, te_schedule **branch) {
  cond_vars cv = {0};
  if (!collect(s, &cv))
    return TE_ERR_NOMEM;
  te_status st = check_condition(s, &cv, cond);
  if (st != TE_OK)
    return st;
  te_expr *c = simplify_condition(s, &cv, cond);
  if (!c)
    return te_last_status(s->ctx);
  if ((st = check_round_trip(s, c)) != TE_OK)
    return st;
  te_schedule *b = copy_schedule(s);
  if (!b)
    return te_last_status(s->ctx) ? te_last_status(s->ctx) : TE_ERR_NOMEM;
  if (s->nspecial == s->cap_special) {
    int cap = s->cap_special ? 2 * s->cap_special : 4;
    sch_special *l = ir_alloc_persistent(s->ctx, (size_t)cap * sizeof *l);
    if (!l)
      return TE_ERR_NOMEM;
    if (s->nspecial)
      memcpy(l, s->special, (size_t)s->nspecial * sizeof *l);
    s->special = l;
    s->cap_special = cap;
  }
  s->special[s->nspecial++] = (sch_special){.cond = c, .branch = b, .at_step = s->nsteps};
  *branch = b;
  return TE_OK;
}

static te_status specialize_impl(te_schedule *s, te_expr *cond, te_schedule **branch) {
  if (!branch)
    return ir_error(s->ctx, TE_ERR_INVALID_ARG, "te_specialize: branch is NULL");
  *branch = NULL;
  if (!cond)
    return ir_error_null(s->ctx, "te_specialize: cond is NULL");
  return sch_specialize(s, cond, branch);
}

te_status te_specialize(te_schedule *s, te_expr *cond, te_schedule **branch) {
  if (!s) {
    if (branch)
      *branch = NULL;
    return TE_ERR_INVALID_ARG;
  }
  return SCH_CALL(s, "te_specialize", specialize_impl(s, cond, branch));
}
