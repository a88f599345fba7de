/* scan.c — te_scan: a state computed in order along one axis from its earlier values.
 *
 *   S[t, i] = t < ninit ? init : update      update reads S at [t - c, ...], 1 <= c <= ninit
 *
 * A scan is a compute whose body reads its own output: the user writes update against a state
 * placeholder, and te_scan redirects those reads to the scan's tensor. The read's index along
 * the scan axis is clamped at 0 (max(t - c, 0)), so the update side of the select never reads
 * before the buffer when it is evaluated at an initial step (select evaluates both sides; a
 * lifted reduction of update is computed at every step). Lowered like any compute, the loop nest
 * is correct as long as every step runs after the steps it reads: the rules below, checked by
 * sch_check_scans when the schedule is lowered (and by te_parallel, te_vectorize and te_bind
 * at once for the scan axis):
 *   - every loop made from the scan axis is serial (or unrolled: still in order);
 *   - an axis along which update reads the state at another index than its own variable (a
 *     dependent axis: S[t - 1, i + 1], sum_j W[i, j] * S[t - 1, j]) has its loops inside every
 *     loop of the scan axis, and is never fused with it;
 *   - a stage in a cycle with the scan (a lifted reduction of update reading the state) is
 *     computed inside the scan's innermost scan-axis loop.
 * Bound inference computes a scan whole along the scan axis and its dependent axes, even at a
 * consumer's loop: a step needs all the steps before it.
 */
#include <string.h>

#include "sch.h"

/* ---------------------------------------------------------------- checking the definition */

typedef struct scan_reads {
  te_ctx *ctx;
  ir_analyzer *an;
  te_tensor *state;
  te_expr *const *vars;
  int axis, ninit;
  const char *name;
  bool dependent[TE_MAX_DIMS];
  int count;
  bool bad;
} scan_reads;

static int check_read(ir_visitor *v, te_expr *e) {
  scan_reads *r = v->data;
  if (e->u.tensor != r->state)
    return IR_CONTINUE;
  r->count++;
  te_expr *t = r->vars[r->axis];
  te_expr *back = ir_simplify(r->an, ir_sub(t, e->args[r->axis]));
  int64_t c;
  if (!back || !ir_is_const_int(back, &c) || c < 1 || c > r->ninit) {
    char *idx = te_expr_text(e->args[r->axis]);
    ir_error(r->ctx, TE_ERR_INVALID_ARG,
             "te_scan: tensor '%s': update reads state '%s' at %s along the scan axis '%s'; a "
             "step may read only the %d step%s before it (%s - 1%s)",
             r->name, r->state->name, idx ? idx : "?", t->u.var.name, r->ninit,
             r->ninit == 1 ? "" : "s", t->u.var.name, r->ninit == 1 ? "" : ", ...");
    te_free(idx);
    r->bad = true;
    return IR_ABORT;
  }
  for (int d = 0; d < r->state->ndim; d++)
    if (d != r->axis && e->args[d] != r->vars[d])
      r->dependent[d] = true;
  return IR_CONTINUE;
}

static bool reads_tensor(te_expr *e, te_tensor *t, scan_reads *r) {
  r->count = 0;
  te_tensor *saved = r->state;
  r->state = t;
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = check_read;
  v.data = r;
  ir_visit_expr(&v, e);
  r->state = saved;
  return r->count > 0;
}

static bool check_args(te_ctx *ctx, const char *name, te_tensor *state, int axis, int ninit,
                       te_expr *init, te_expr *update) {
  const char *fn = "te_scan";
  if (!state || !init || !update)
    return ir_error_null(ctx, "%s: tensor '%s': %s is NULL", fn, name ? name : "(null)",
                         !state  ? "state"
                         : !init ? "init"
                                 : "update"),
           false;
  if (state->ctx != ctx || init->ctx != ctx || update->ctx != ctx)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "%s: tensor '%s': an argument belongs to another context", fn,
                    name ? name : "(null)"),
           false;
  if (state->op->kind != SCH_OP_PLACEHOLDER)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "%s: tensor '%s': state '%s' is a compute; make the state with te_placeholder",
                    fn, name ? name : "(null)", state->name),
           false;
  if (axis < 0 || axis >= state->ndim)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "%s: tensor '%s': scan axis %d is outside [0, %d) (the state's rank)", fn,
                    name ? name : "(null)", axis, state->ndim),
           false;
  int64_t ext;
  if (ninit < 1 || (ir_is_const_int(state->shape[axis], &ext) && ext < ninit))
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "%s: tensor '%s': %d initial steps: needs at least 1 and at most the scan "
                    "axis' extent",
                    fn, name ? name : "(null)", ninit),
           false;
  for (int k = 0; k < 2; k++) {
    te_expr *b = k ? update : init;
    if (!ir_dtype_eq(b->dtype, state->dtype)) {
      char want[32], got[32];
      return ir_error(ctx, TE_ERR_TYPE, "%s: tensor '%s': %s is %s but the state '%s' is %s", fn,
                      name ? name : "(null)", k ? "update" : "init",
                      te_dtype_str(b->dtype, got, sizeof got), state->name,
                      te_dtype_str(state->dtype, want, sizeof want)),
             false;
    }
  }
  return true;
}

/* ---------------------------------------------------------------- the state's reads */

typedef struct redirect_state {
  te_tensor *state, *to;
  int axis;
} redirect_state;

static te_expr *redirect_read(ir_mutator *m, te_expr *e) {
  redirect_state *r = m->data;
  te_expr *x = ir_mutate_expr_children(m, e);
  if (!x || x->u.tensor != r->state)
    return x;
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < x->nargs; d++)
    idx[d] = x->args[d];
  idx[r->axis] = ir_max(idx[r->axis], ir_i64(m->ctx, 0)); /* evaluated at initial steps too */
  return idx[r->axis] ? ir_access(r->to, x->nargs, idx) : NULL;
}

static te_expr *redirect(te_ctx *ctx, redirect_state *r, te_expr *e) {
  ir_mutator m = {0};
  m.ctx = ctx;
  m.expr[IR_ACCESS] = redirect_read;
  m.data = r;
  m.memo = true;
  return ir_mutate_expr(&m, e);
}

static te_tensor *scan_impl(te_ctx *ctx, const char *name, te_tensor *state, int axis, int ninit,
                            te_expr *const vars[], te_expr *init, te_expr *update) {
  if (!check_args(ctx, name, state, axis, ninit, init, update))
    return NULL;
  int ndim = state->ndim;
  if (!vars || !vars[axis] || vars[axis]->kind != IR_VAR)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_scan: tensor '%s': vars must hold one te_var per "
                    "dimension",
                    name ? name : "(null)"),
           NULL;
  ir_analyzer *an = ir_analyzer_new(ctx);
  if (!an)
    return NULL;
  scan_reads r = {ctx, an, state, vars, axis, ninit, name ? name : "(null)", {0}, 0, false};
  if (reads_tensor(init, state, &r) || r.bad) {
    if (!r.bad)
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "te_scan: tensor '%s': init reads state '%s'; only update may read earlier steps",
               r.name, state->name);
    return NULL;
  }
  if (!reads_tensor(update, state, &r) && !r.bad)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_scan: tensor '%s': update never reads state '%s' (use te_compute)", r.name,
                    state->name),
           NULL;
  if (r.bad)
    return NULL;
  te_expr *t = vars[axis];
  te_expr *body = ir_select(ir_lt(t, ir_i64(ctx, ninit)), init, update);
  sch_op *op =
      body ? sch_make_compute(ctx, "te_scan", name, ndim, state->shape, vars, 1, &body) : NULL;
  if (!op)
    return NULL;
  /* the state's reads become reads of the scan itself, in its body and its lifted reductions */
  op->scan_source = sch_op_source_body(op, 0);
  redirect_state rs = {state, op->outputs[0], axis};
  if (!(op->body[0] = redirect(ctx, &rs, op->body[0])))
    return NULL;
  for (int i = 0; i < op->nlifted; i++)
    if (!(op->lifted[i]->body[0] = redirect(ctx, &rs, op->lifted[i]->body[0])))
      return NULL;
  op->is_scan = true;
  op->scan_axis = axis;
  op->scan_ninit = ninit;
  op->scan_state = state;
  for (int d = 0; d < ndim; d++)
    op->scan_dependent[d] = r.dependent[d];
  return op->outputs[0];
}

te_tensor *te_scan(te_ctx *ctx, const char *name, te_tensor *state, int scan_axis, int ninit,
                   te_expr *const vars[], te_expr *init, te_expr *update) {
  if (!ctx)
    return NULL;
  return IR_PUBLIC_CALL_PTR(ctx, scan_impl(ctx, name, state, scan_axis, ninit, vars, init, update));
}

/* ---------------------------------------------------------------- schedule rules */

/* The relation that made it (NULL for a root iterator). */
static const sch_rel *made_by(const te_stage *st, const te_iter *it) {
  for (int i = 0; i < st->nrel; i++) {
    const sch_rel *r = &st->rels[i];
    if (r->kind == SCH_REL_SPLIT ? r->outer == it || r->inner == it : r->fused == it)
      return r;
  }
  return NULL;
}

bool sch_iter_from_root(const te_stage *st, const te_iter *it, int root) {
  for (int depth = 0; it && depth < 10000; depth++) {
    if (it == st->root[root])
      return true;
    const sch_rel *r = made_by(st, it);
    if (!r)
      return false;
    if (r->kind == SCH_REL_FUSE)
      return sch_iter_from_root(st, r->fuse_outer, root) ||
             sch_iter_from_root(st, r->fuse_inner, root);
    it = r->parent;
  }
  return false;
}

static const char *kind_word(ir_for_kind k) {
  return k == IR_FOR_PARALLEL     ? "parallel"
         : k == IR_FOR_VECTORIZED ? "vectorized"
                                  : "bound to a GPU index";
}

te_status sch_scan_check_annotation(te_stage *st, te_iter *it, ir_for_kind kind, const char *fn) {
  const sch_op *op = st->op;
  if (!op->is_scan || kind == IR_FOR_SERIAL || kind == IR_FOR_UNROLLED ||
      !sch_iter_from_root(st, it, op->scan_axis))
    return TE_OK;
  return ir_error(st->sch->ctx, TE_ERR_SCHEDULE,
                  "%s: stage '%s': loop '%s' of scan axis '%s' cannot be %s: the steps of a scan "
                  "run in order, each after the steps it reads",
                  fn, st->name, it->name, st->root[op->scan_axis]->name, kind_word(kind));
}

/* The position of st's innermost leaf made from the scan axis. */
static int last_scan_leaf(const te_stage *st) {
  int last = -1;
  for (int j = 0; j < st->nleaf; j++)
    if (sch_iter_from_root(st, st->leaf[j], st->op->scan_axis))
      last = j;
  return last;
}

/* Where it lies in the split tree of root `root`: from the root down, '0' for the outer loop of
   a split and '1' for its inner loop (through a fuse, the part made from the root; both made
   from it: the outer part). Loops of the root run in the root's order exactly when their paths
   increase in loop order. false when the tree is too deep to compare (never in practice). */
static bool split_path(const te_stage *st, const te_iter *it, int root, char path[static 256]) {
  char up[256];
  int n = 0;
  while (it && it != st->root[root]) {
    const sch_rel *r = made_by(st, it);
    if (!r || n >= 255)
      return false;
    if (r->kind == SCH_REL_FUSE) {
      it = sch_iter_from_root(st, r->fuse_outer, root) ? r->fuse_outer : r->fuse_inner;
      continue;
    }
    up[n++] = r->outer == it ? '0' : '1';
    it = r->parent;
  }
  for (int i = 0; i < n; i++)
    path[i] = up[n - 1 - i];
  path[n] = '\0';
  return it != NULL;
}

/* The scan axis's loops run its steps in order: each split's outer loop outside its inner one,
   a fuse of two of them with the earlier one outer. */
static te_status check_scan_order(te_stage *st) {
  int axis = st->op->scan_axis;
  char prev[256] = "", cur[256], a[256], b[256];
  const te_iter *prev_leaf = NULL;
  for (int i = 0; i < st->nrel; i++) {
    const sch_rel *r = &st->rels[i];
    if (r->kind == SCH_REL_FUSE && sch_iter_from_root(st, r->fuse_outer, axis) &&
        sch_iter_from_root(st, r->fuse_inner, axis) && split_path(st, r->fuse_outer, axis, a) &&
        split_path(st, r->fuse_inner, axis, b) && strcmp(a, b) > 0)
      return ir_error(st->sch->ctx, TE_ERR_SCHEDULE,
                      "te_build: stage '%s': loop '%s' fuses '%s' outside '%s', which runs the "
                      "steps of scan axis '%s' out of order: each step must run after the steps "
                      "it reads",
                      st->name, r->fused->name, r->fuse_outer->name, r->fuse_inner->name,
                      st->root[axis]->name);
  }
  for (int j = 0; j < st->nleaf; j++) {
    te_iter *l = st->leaf[j];
    if (!sch_iter_from_root(st, l, axis) || !split_path(st, l, axis, cur))
      continue;
    if (prev_leaf && strcmp(prev, cur) > 0)
      return ir_error(st->sch->ctx, TE_ERR_SCHEDULE,
                      "te_build: stage '%s': loop '%s' runs outside loop '%s', which runs the "
                      "steps of scan axis '%s' out of order: keep the loops of '%s' in the order "
                      "its splits made them (each step must run after the steps it reads)",
                      st->name, prev_leaf->name, l->name, st->root[axis]->name,
                      st->root[axis]->name);
    strcpy(prev, cur);
    prev_leaf = l;
  }
  return TE_OK;
}

/* Loops: scan-axis loops in order, dependent axes inside them and never fused with them. */
static te_status check_loops(te_stage *st) {
  const sch_op *op = st->op;
  int axis = op->scan_axis;
  const char *tname = st->root[axis]->name;
  for (int j = 0; j < st->nleaf; j++) {
    te_status r = sch_scan_check_annotation(st, st->leaf[j], st->leaf[j]->kind, "te_build");
    if (r != TE_OK)
      return r;
  }
  te_status order = check_scan_order(st);
  if (order != TE_OK)
    return order;
  int last = last_scan_leaf(st);
  for (int d = 0; d < op->ndim; d++) {
    if (!op->scan_dependent[d])
      continue;
    for (int j = 0; j < st->nleaf; j++) {
      te_iter *l = st->leaf[j];
      if (!sch_iter_from_root(st, l, d))
        continue;
      if (sch_iter_from_root(st, l, axis))
        return ir_error(st->sch->ctx, TE_ERR_SCHEDULE,
                        "te_build: stage '%s': loop '%s' fuses scan axis '%s' with axis '%s', "
                        "along which a step reads other elements of earlier steps; keep '%s' "
                        "inside the loops of '%s'",
                        st->name, l->name, tname, st->root[d]->name, st->root[d]->name, tname);
      if (j < last)
        return ir_error(st->sch->ctx, TE_ERR_SCHEDULE,
                        "te_build: stage '%s': loop '%s' of axis '%s' runs outside loop '%s' of "
                        "scan axis '%s', but a step reads other elements of earlier steps along "
                        "'%s': keep its loops inside those of '%s'",
                        st->name, l->name, st->root[d]->name, st->leaf[last]->name, tname,
                        st->root[d]->name, tname);
    }
  }
  return TE_OK;
}

/* Stages in a cycle with the scan (a lifted reduction of update reading earlier steps) run
   inside the scan's innermost scan-axis loop, after the steps they read. */
static te_status check_cycle(te_stage *st) {
  te_schedule *s = st->sch;
  int last = last_scan_leaf(st);
  for (int i = 0; i < s->nstage; i++) {
    te_stage *q = s->stages[i];
    if (q == st || q->attach == SCH_ATTACH_INLINE || !sch_stage_depends_on(st, q) ||
        !sch_stage_depends_on(q, st))
      continue;
    te_stage *a = q;
    for (int depth = 0; a && a->attach == SCH_ATTACH_AT && a->attach_stage != st && depth < 1000;
         depth++)
      a = a->attach_stage;
    bool ok = a && a->attach == SCH_ATTACH_AT && a->attach_stage == st &&
              sch_leaf_pos(st, a->attach_iter) >= last;
    if (!ok)
      return ir_error(s->ctx, TE_ERR_SCHEDULE,
                      "te_build: stage '%s' reads earlier steps of scan '%s' and is read by it: it "
                      "must be computed inside the scan's loop '%s' (te_compute_at of '%s' at a "
                      "loop of '%s' at or inside '%s')",
                      q->name, st->name, st->leaf[last]->name, q->name, st->name,
                      st->leaf[last]->name);
  }
  return TE_OK;
}

te_status sch_check_scans(te_schedule *s) {
  for (int i = 0; i < s->nstage; i++) {
    te_stage *st = s->stages[i];
    if (!st->op->is_scan)
      continue;
    te_status r = check_loops(st);
    if (r == TE_OK)
      r = check_cycle(st);
    if (r != TE_OK)
      return r;
  }
  return TE_OK;
}
