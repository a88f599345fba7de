/* schedule.c — making a schedule: stages in topological order, their iteration variables, and
 * the small list operations the primitives share (iterator creation, leaf replacement). */
#include <stdio.h>
#include <string.h>

#include "sch.h"

/* Grows an arena array of pointers to hold at least need entries. */
bool sch_grow(te_ctx *ctx, void ***arr, int *cap, int n, int need) {
  if (need <= *cap)
    return true;
  int c = *cap ? *cap : 4;
  while (c < need)
    c *= 2;
  void **a = ir_alloc_persistent(ctx, sizeof(void *) * (size_t)c);
  if (!a)
    return false;
  if (n)
    memcpy(a, *arr, sizeof(void *) * (size_t)n);
  *arr = a;
  *cap = c;
  return true;
}

te_iter *sch_stage_find_iter(te_stage *st, const char *name) {
  for (int i = 0; i < st->nall; i++)
    if (strcmp(st->all[i]->name, name) == 0)
      return st->all[i];
  return NULL;
}

te_iter *sch_iter_new(te_stage *st, const char *base, sch_iter_type type, te_expr *var) {
  te_ctx *ctx = st->sch->ctx;
  char name[128];
  snprintf(name, sizeof name, "%s", base);
  for (int k = 1; sch_stage_find_iter(st, name); k++)
    snprintf(name, sizeof name, "%s_%d", base, k);
  te_iter *it = ir_alloc_persistent(ctx, sizeof *it);
  if (!it)
    return NULL;
  it->name = ir_strdup_persistent(ctx, name);
  if (!it->name)
    return NULL;
  it->var = var ? var : ir_var_new(ctx, it->name, TE_I64, IR_VAR_INDEX);
  if (!it->var)
    return NULL;
  it->type = type;
  it->stage = st;
  if (!sch_grow(ctx, (void ***)&st->all, &st->cap_all, st->nall, st->nall + 1))
    return NULL;
  st->all[st->nall++] = it;
  return it;
}

int sch_leaf_pos(const te_stage *st, const te_iter *it) {
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i] == it)
      return i;
  return -1;
}

/* Replaces nremove leaves starting at pos by the given ones. */
bool sch_leaf_replace(te_stage *st, int pos, int nremove, int nins, te_iter *const ins[]) {
  te_ctx *ctx = st->sch->ctx;
  int n = st->nleaf - nremove + nins;
  te_iter **l = ir_alloc_persistent(ctx, sizeof(te_iter *) * (size_t)(n ? n : 1));
  if (!l)
    return false;
  int k = 0;
  for (int i = 0; i < pos; i++)
    l[k++] = st->leaf[i];
  for (int i = 0; i < nins; i++)
    l[k++] = ins[i];
  for (int i = pos + nremove; i < st->nleaf; i++)
    l[k++] = st->leaf[i];
  st->leaf = l;
  st->nleaf = n;
  st->cap_leaf = n;
  return true;
}

sch_rel *sch_rel_add(te_stage *st) {
  te_ctx *ctx = st->sch->ctx;
  if (st->nrel == st->cap_rel) {
    int c = st->cap_rel ? st->cap_rel * 2 : 4;
    sch_rel *r = ir_alloc_persistent(ctx, sizeof(sch_rel) * (size_t)c);
    if (!r)
      return NULL;
    if (st->nrel)
      memcpy(r, st->rels, sizeof(sch_rel) * (size_t)st->nrel);
    st->rels = r;
    st->cap_rel = c;
  }
  sch_rel *r = &st->rels[st->nrel++];
  memset(r, 0, sizeof *r);
  return r;
}

/* (Re)initializes a stage for op: root iterators, leaves in definition order, no relations,
   computed at root. The stage keeps its name. */
bool sch_stage_reset(te_stage *st, sch_op *op) {
  te_ctx *ctx = st->sch->ctx;
  st->op = op;
  st->nrel = st->nleaf = st->nall = 0;
  st->cap_rel = st->cap_leaf = st->cap_all = 0;
  st->rels = NULL;
  st->leaf = st->all = NULL;
  st->attach = SCH_ATTACH_ROOT;
  st->attach_stage = NULL;
  st->attach_iter = NULL;
  st->nstorage = 0;
  memset(st->storage_split, 0, sizeof st->storage_split);
  st->nroot = op->ndim + op->nreduce;
  st->root = ir_alloc_persistent(ctx, sizeof(te_iter *) * (size_t)(st->nroot ? st->nroot : 1));
  if (!st->root)
    return false;
  for (int i = 0; i < st->nroot; i++) {
    bool red = i >= op->ndim;
    te_expr *v = red ? op->reduce_axes[i - op->ndim] : op->axes[i];
    /* root iters are the operation's own variables */
    te_iter *it = sch_iter_new(st, v->u.var.name, red ? SCH_ITER_REDUCE : SCH_ITER_DATA, v);
    if (!it)
      return false;
    st->root[i] = it;
  }
  return sch_leaf_replace(st, 0, 0, st->nroot, st->root);
}

static te_stage *stage_new(te_schedule *s, sch_op *op) {
  te_ctx *ctx = s->ctx;
  te_stage *st = ir_alloc_persistent(ctx, sizeof *st);
  if (!st)
    return NULL;
  st->sch = s;
  /* Stage names are unique in a schedule (traces name stages): a second 'T' is 'T_1'. */
  char name[128];
  snprintf(name, sizeof name, "%s", op->name);
  for (int k = 1; sch_stage_by_name(s, name); k++)
    snprintf(name, sizeof name, "%s_%d", op->name, k);
  st->name = ir_strdup_persistent(ctx, name);
  if (!st->name || !sch_stage_reset(st, op))
    return NULL;
  return st;
}

/* A new stage for op at position pos of the schedule's topological list. */
te_stage *sch_stage_insert(te_schedule *s, int pos, sch_op *op) {
  te_stage **l = ir_alloc_persistent(s->ctx, sizeof(te_stage *) * (size_t)(s->nstage + 1));
  te_stage *st = l ? stage_new(s, op) : NULL;
  if (!st)
    return NULL;
  for (int i = 0, k = 0; i <= s->nstage; i++)
    l[i] = i == pos ? st : s->stages[k++];
  s->stages = l;
  s->nstage++;
  return st;
}

int sch_stage_index(const te_schedule *s, const te_stage *st) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i] == st)
      return i;
  return -1;
}

te_stage *sch_stage_by_name(te_schedule *s, const char *name) {
  for (int i = 0; i < s->nstage; i++)
    if (strcmp(s->stages[i]->name, name) == 0)
      return s->stages[i];
  return NULL;
}

te_stage *sch_stage_of_op(te_schedule *s, const sch_op *op) {
  for (int i = 0; i < s->nstage; i++)
    if (s->stages[i]->op == op)
      return s->stages[i];
  return NULL;
}

/* The stage computing t. Cache and rfactor rewrites give stages new operations that keep the
   user's tensors as outputs, so stages are found by tensor, never through t->op. */
te_stage *sch_stage_of_tensor(te_schedule *s, const te_tensor *t) {
  for (int i = 0; i < s->nstage; i++) {
    sch_op *op = s->stages[i]->op;
    for (int k = 0; k < op->nout; k++)
      if (op->outputs[k] == t)
        return s->stages[i];
  }
  return NULL;
}

/* Depth-first, producers first. */
static bool add_op(te_schedule *s, ir_map *seen, sch_op *op, int *cap, int depth) {
  if (ir_map_has(seen, op))
    return true;
  if (!ir_map_put(seen, op, op))
    return false;
  if (depth > 10000) {
    ir_error(s->ctx, TE_ERR_INVALID_ARG, "te_schedule_new: the computation is too deep");
    return false;
  }
  te_tensor **in;
  int n = sch_op_inputs(op, &in);
  for (int i = 0; i < n; i++)
    if (!add_op(s, seen, in[i]->op, cap, depth + 1))
      return false;
  if (op->kind != SCH_OP_COMPUTE)
    return true;
  if (!sch_grow(s->ctx, (void ***)&s->stages, cap, s->nstage, s->nstage + 1))
    return false;
  te_stage *st = stage_new(s, op);
  if (!st)
    return false;
  st->fused_default = op->lifted_from != NULL; /* placed at its reader's loop: placement.c */
  s->stages[s->nstage++] = st;
  return true;
}

te_schedule *sch_schedule_new(te_ctx *ctx, int nout, te_tensor *const outs[]) {
  if (!ctx)
    return NULL;
  if (nout < 1 || !outs) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_schedule_new: needs at least one output (got %d)", nout);
    return NULL;
  }
  for (int i = 0; i < nout; i++) {
    if (!outs[i]) {
      ir_error_null(ctx, "te_schedule_new: output %d is NULL", i);
      return NULL;
    }
    if (outs[i]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "te_schedule_new: output %d '%s' belongs to another context", i, outs[i]->name);
      return NULL;
    }
    if (outs[i]->op->kind != SCH_OP_COMPUTE) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "te_schedule_new: output %d '%s' is a placeholder; outputs must be computes", i,
               outs[i]->name);
      return NULL;
    }
  }
  te_schedule *s = ir_alloc_persistent(ctx, sizeof *s);
  ir_map *seen = ir_map_new(ctx);
  if (!s || !seen)
    return NULL;
  s->ctx = ctx;
  /* every output of a multi-output compute is an output of the schedule */
  int total = 0;
  for (int i = 0; i < nout; i++)
    total += outs[i]->op->nout;
  s->outs = ir_alloc_persistent(ctx, sizeof(te_tensor *) * (size_t)total);
  if (!s->outs)
    return NULL;
  for (int i = 0; i < nout; i++)
    for (int k = 0; k < outs[i]->op->nout; k++) {
      te_tensor *t = outs[i]->op->outputs[k];
      bool dup = false;
      for (int j = 0; j < s->nout; j++)
        dup |= s->outs[j] == t;
      if (!dup)
        s->outs[s->nout++] = t;
    }
  int cap = 0;
  for (int i = 0; i < nout; i++)
    if (!add_op(s, seen, outs[i]->op, &cap, 0))
      return NULL;
  for (int i = 0; i < nout; i++)
    sch_stage_of_tensor(s, outs[i])->is_output = true;
  return s;
}

te_schedule *te_schedule_new(te_ctx *ctx, int nout, te_tensor *const outs[]) {
  if (!ctx)
    return NULL;
  return IR_PUBLIC_CALL_PTR(ctx, sch_schedule_new(ctx, nout, outs));
}

te_stage *te_stage_of(te_schedule *s, te_tensor *t) {
  if (!s)
    return NULL;
  if (!t) {
    ir_error_null(s->ctx, "te_stage_of: tensor is NULL");
    return NULL;
  }
  te_stage *st = sch_stage_of_tensor(s, t);
  if (!st) {
    ir_error(s->ctx, TE_ERR_NOT_FOUND, "te_stage_of: tensor '%s' is %s", t->name,
             t->op->kind == SCH_OP_PLACEHOLDER ? "a placeholder (it has no stage)"
                                               : "not part of this schedule");
    return NULL;
  }
  return st;
}

static te_iter *root_iter(te_stage *st, int i, bool reduce, const char *fn) {
  if (!st)
    return NULL;
  int n = reduce ? st->op->nreduce : st->op->ndim;
  if (i < 0 || i >= n) {
    ir_error(st->sch->ctx, TE_ERR_INVALID_ARG, "%s: stage '%s' has %d %s axes (asked for %d)", fn,
             st->name, n, reduce ? "reduce" : "data", i);
    return NULL;
  }
  return st->root[reduce ? st->op->ndim + i : i];
}

te_iter *te_axis(te_stage *st, int i) { return root_iter(st, i, false, "te_axis"); }
te_iter *te_reduce_iter(te_stage *st, int i) { return root_iter(st, i, true, "te_reduce_iter"); }

int te_leaf_count(te_stage *st) { return st ? st->nleaf : -1; }

te_iter *te_leaf(te_stage *st, int i) {
  if (!st)
    return NULL;
  if (i < 0 || i >= st->nleaf) {
    ir_error(st->sch->ctx, TE_ERR_INVALID_ARG, "te_leaf: stage '%s' has %d leaves (asked for %d)",
             st->name, st->nleaf, i);
    return NULL;
  }
  return st->leaf[i];
}

const char *te_iter_name(const te_iter *it) { return it ? it->name : NULL; }
