/* build.c — te_parse: the syntax tree -> placeholders, reduce axes, reducers and computes.
 *
 * Order: every declared name is entered first (so declarations may come in any order), then
 * scalar parameters and sizes are made, then reducers, then placeholders, reduce axes and
 * declared shapes (unknown names there are new symbolic sizes), then the statements in order
 * (a statement reads placeholders and the tensors of earlier statements), then the outputs.
 *
 * A statement's shape is its declaration (`C: [M, N]`) or, when there is none, inferred: the
 * extent of dimension d is that of the first tensor read (in textual order) indexed by the d-th
 * index variable alone at some position.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "schedule/sch.h"

enum { MAX_OUTPUTS = 64 };

/* ---------------------------------------------------------------- symbols */

const char *ps_sym_kind_name(ps_sym_kind k) {
  static const char *const names[] = {"a tensor",          "a statement with several outputs",
                                      "a reduce axis",     "a scalar parameter",
                                      "a symbolic size",   "a reducer",
                                      "an index variable", "a reducer variable"};
  return names[k];
}

static bool is_local(ps_sym_kind k) { return k == PS_S_INDEX || k == PS_S_RVAR; }
static bool is_var(ps_sym_kind k) {
  return is_local(k) || k == PS_S_AXIS || k == PS_S_PARAM || k == PS_S_SIZE;
}

ps_sym *ps_lookup(ps_builder *b, const char *name) {
  for (int i = b->nsym - 1; i >= 0; i--)
    if (!strcmp(b->syms[i].name, name))
      return &b->syms[i];
  return NULL;
}

ps_sym *ps_lookup_global(ps_builder *b, const char *name) {
  for (int i = b->nsym - 1; i >= 0; i--)
    if (!is_local(b->syms[i].kind) && !strcmp(b->syms[i].name, name))
      return &b->syms[i];
  return NULL;
}

ps_sym *ps_add_sym(ps_builder *b, const char *name, ps_sym_kind k, const ps_node *at) {
  if (b->nsym == b->cap) {
    int cap = b->cap ? 2 * b->cap : 32;
    ps_sym *s = ir_realloc(b->p->ctx, b->syms, sizeof *s * (size_t)cap);
    if (!s) {
      ps_error(b->p, 0, 0, TE_ERR_NOMEM, "out of memory");
      return NULL;
    }
    b->syms = s;
    b->cap = cap;
  }
  ps_sym *s = &b->syms[b->nsym++];
  memset(s, 0, sizeof *s);
  s->name = name;
  s->kind = k;
  s->at = at;
  s->stmt = -1;
  s->owner = -1;
  return s;
}

/* A new name: not a keyword, not taken. Global names are unique; a local (an index or reducer
   variable) may share its name with a tensor or reducer, not with another variable. */
static ps_sym *declare(ps_builder *b, const ps_node *at, const char *name, ps_sym_kind k) {
  if (ps_is_keyword(name)) {
    ps_error(b->p, at->line, at->col, TE_ERR_PARSE, "'%s' is a keyword, not a name", name);
    return NULL;
  }
  ps_sym *old = is_local(k) ? ps_lookup(b, name) : ps_lookup_global(b, name);
  if (old && (!is_local(k) || is_var(old->kind))) {
    ps_error(b->p, at->line, at->col, TE_ERR_PARSE, "'%s' is already declared as %s at %d:%d", name,
             ps_sym_kind_name(old->kind), old->at->line, old->at->col);
    return NULL;
  }
  return ps_add_sym(b, name, k, at);
}

/* ---------------------------------------------------------------- declarations */

static bool same_tree(const ps_node *a, const ps_node *b) {
  if (!a || !b)
    return a == b;
  if (a->kind != b->kind || a->op != b->op || a->mag != b->mag || a->neg != b->neg ||
      a->typed != b->typed || !te_dtype_eq(a->dtype, b->dtype) || a->nargs != b->nargs ||
      a->naxes != b->naxes || (a->name && strcmp(a->name, b->name)) ||
      memcmp(&a->f, &b->f, sizeof a->f) || !same_tree(a->cond, b->cond))
    return false;
  for (int i = 0; i < a->nargs; i++)
    if (!same_tree(a->args[i], b->args[i]))
      return false;
  for (int i = 0; i < a->naxes; i++)
    if (!same_tree(a->axes[i], b->axes[i]))
      return false;
  return true;
}

/* An extent that simplifies to a constant must be > 0 (te_placeholder and te_reduce_axis check
   the constants they are given, not what an expression such as `1 - 12` folds to). */
static bool check_extent(ps_builder *b, const ps_node *at, te_expr *e, const char *what) {
  if (!e || !ir_is_intlike(e->dtype) || ir_is_bool(e->dtype))
    return true; /* te_* will say */
  if (!b->an && !(b->an = ir_analyzer_new(b->ctx)))
    return false;
  te_expr *s = ir_simplify(b->an, ir_cast(TE_I64, e));
  int64_t v;
  if (s && ir_is_const_int(s, &v) && v <= 0) {
    ps_error(b->p, at->line, at->col, TE_ERR_SHAPE, "%s must be > 0 (got %lld)", what,
             (long long)v);
    return false;
  }
  return s != NULL;
}

/* k: [lo, hi): the extent is hi itself when lo is 0, X when hi is written `lo + X` (as the
   printer writes every range that does not start at 0), else hi - lo simplified. */
static bool build_range(ps_builder *b, const ps_decl *d, int si) {
  const ps_node *lo = d->shape[0], *hi = d->shape[1];
  b->shape_scope = true;
  te_expr *min = ps_build_expr(b, lo), *ext = NULL;
  if (min && lo->kind == PS_N_INT && lo->mag == 0 && !lo->typed) {
    ext = ps_build_expr(b, hi);
  } else if (min && hi->kind == PS_N_BINARY && hi->op == PS_PLUS && !hi->paren &&
             same_tree(hi->args[0], lo)) {
    ext = ps_build_expr(b, hi->args[1]);
  } else if (min) {
    te_expr *h = ps_build_expr(b, hi);
    te_expr *diff = h ? ps_chk(b, hi, te_sub(h, min)) : NULL;
    if (diff && !b->an && !(b->an = ir_analyzer_new(b->ctx)))
      return false;
    ext = diff ? ir_simplify(b->an, diff) : NULL;
  }
  b->shape_scope = false;
  char what[160];
  snprintf(what, sizeof what, "reduce axis '%.100s': extent", d->name->name);
  if (!ext || !check_extent(b, hi, ext, what))
    return false;
  b->syms[si].var = ps_chk(b, d->name, te_reduce_axis(b->ctx, d->name->name, min, ext));
  return b->syms[si].var != NULL;
}

static bool build_shape(ps_builder *b, const ps_decl *d, te_expr ***out) {
  te_expr **shape = ps_alloc(b->p, sizeof *shape * (size_t)(d->nshape ? d->nshape : 1));
  if (!shape)
    return false;
  b->shape_scope = true;
  for (int i = 0; i < d->nshape; i++) {
    char what[160];
    snprintf(what, sizeof what, "tensor '%.100s': extent %d", d->name->name, i);
    shape[i] = ps_build_expr(b, d->shape[i]);
    if (!shape[i] || !check_extent(b, d->shape[i], shape[i], what))
      return b->shape_scope = false;
  }
  b->shape_scope = false;
  *out = shape;
  return true;
}

/* Records where a te_* call that made no te_expr failed. */
static bool mark_fail(ps_builder *b, const ps_node *at) {
  ps_chk(b, at, NULL);
  return false;
}

/* R: reducer (a: t, ...) (b: t, ...) = (results) identity (values); si is R's symbol. */
static bool build_reducer(ps_builder *b, const ps_decl *d, int si) {
  int n = d->nvals, mark = b->nsym;
  te_expr *lhs[16], *rhs[16], *res[16], *id[16];
  if (n > 16) {
    ps_error(b->p, d->name->line, d->name->col, TE_ERR_PARSE, "reducer '%s': at most 16 values",
             d->name->name);
    return false;
  }
  for (int i = 0; i < 2 * n; i++) {
    const ps_node *v = i < n ? d->lhs[i] : d->rhs[i - n];
    ps_sym *r = declare(b, v, v->name, PS_S_RVAR);
    if (!r || !(r->var = ps_chk(b, v, te_param(b->ctx, v->name, v->dtype))))
      return false;
    (i < n ? lhs : rhs)[i % n] = r->var;
  }
  for (int i = 0; i < n; i++)
    if (!(res[i] = ps_build_expr(b, d->results[i])) || !(id[i] = ps_build_expr(b, d->identity[i])))
      return false;
  b->nsym = mark;
  b->syms[si].nvals = n;
  b->syms[si].red = te_reducer_new(b->ctx, n, lhs, rhs, res, id);
  return b->syms[si].red ? true : mark_fail(b, d->name);
}

/* Enters every declared name; a tensor declaration of a statement's name gives its shape. */
static bool enter_decls(ps_builder *b) {
  const ps_workload *w = b->w;
  for (int i = 0; i < w->nstmt; i++) {
    ps_sym *s = declare(b, w->stmts[i].lhs, w->stmts[i].lhs->name, PS_S_TENSOR);
    if (!s)
      return false;
    s->stmt = i;
  }
  static const ps_sym_kind kinds[] = {[PS_D_TENSOR] = PS_S_TENSOR,
                                      [PS_D_RANGE] = PS_S_AXIS,
                                      [PS_D_PARAM] = PS_S_PARAM,
                                      [PS_D_SIZE] = PS_S_SIZE,
                                      [PS_D_REDUCER] = PS_S_REDUCER};
  for (int i = 0; i < w->ndecl; i++) {
    const ps_decl *d = &w->decls[i];
    const char *name = d->name->name;
    ps_sym *s = ps_lookup_global(b, name);
    if (d->kind == PS_D_TENSOR && s && s->kind == PS_S_TENSOR && s->stmt >= 0 && !s->decl) {
      s->decl = d; /* the shape (and dtype) of a statement's tensor */
      continue;
    }
    if (d->kind == PS_D_TENSOR && !d->has_dtype && !s) {
      ps_error(b->p, d->name->line, d->name->col, TE_ERR_PARSE,
               "'%s' has a shape but no dtype, and no statement defines it", name);
      return false;
    }
    if (d->kind == PS_D_REDUCER && ps_is_builtin_fn(name)) {
      ps_error(b->p, d->name->line, d->name->col, TE_ERR_PARSE,
               "reducer '%s' has the name of a built-in function", name);
      return false;
    }
    if (!(s = declare(b, d->name, name, kinds[d->kind])))
      return false;
    s->decl = d;
  }
  return true;
}

/* Parameters and sizes, then reducers, then placeholders, axes and declared shapes. Symbols
   are addressed by index: building may add sizes (and grow the table). */
static bool build_decl(ps_builder *b, int pass, int i) {
  const ps_decl *d = b->syms[i].decl;
  const char *name = d->name->name;
  if (pass == 0 && (d->kind == PS_D_PARAM || d->kind == PS_D_SIZE)) {
    te_expr *v = d->kind == PS_D_PARAM ? te_param(b->ctx, name, d->dtype) : te_var(b->ctx, name);
    return (b->syms[i].var = ps_chk(b, d->name, v)) != NULL;
  }
  if (pass == 1 && d->kind == PS_D_REDUCER)
    return build_reducer(b, d, i);
  if (pass == 2 && d->kind == PS_D_RANGE)
    return build_range(b, d, i);
  if (pass == 2 && d->kind == PS_D_TENSOR) {
    te_expr **shape = NULL;
    if (!build_shape(b, d, &shape))
      return false;
    b->syms[i].shape = shape;
    if (b->syms[i].stmt >= 0)
      return true;
    te_tensor *t = te_placeholder(b->ctx, name, d->dtype, d->nshape, shape);
    b->syms[i].tensor = t;
    return t ? true : mark_fail(b, d->name);
  }
  return true;
}

static bool build_decls(ps_builder *b) {
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < b->nsym; i++)
      if (b->syms[i].decl && !build_decl(b, pass, i))
        return false;
  return true;
}

/* ---------------------------------------------------------------- statements */

typedef struct find_dim {
  te_expr *var;
  te_expr *extent;
} find_dim;

static int find_dim_access(ir_visitor *v, te_expr *e) {
  find_dim *f = v->data;
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i] == f->var) {
      f->extent = e->u.tensor->shape[i];
      return IR_ABORT;
    }
  return IR_CONTINUE;
}

/* The extent of the dimension indexed by var: from the first read T[..., var, ...]. */
static te_expr *infer_extent(int nbody, te_expr *const bodies[], te_expr *var) {
  find_dim f = {var, NULL};
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = find_dim_access;
  v.data = &f;
  for (int k = 0; k < nbody && !f.extent; k++)
    ir_visit_expr(&v, bodies[k]);
  return f.extent;
}

static bool stmt_shape(ps_builder *b, const ps_stmt *st, ps_sym *s, te_expr *const vars[],
                       int nbody, te_expr *const bodies[], te_expr **shape) {
  const ps_node *lhs = st->lhs;
  if (s->decl) {
    if (s->decl->nshape != lhs->nargs) {
      ps_error(b->p, lhs->line, lhs->col, TE_ERR_SHAPE,
               "tensor '%s' is declared with %d extents but defined with %d indices", lhs->name,
               s->decl->nshape, lhs->nargs);
      return false;
    }
    memcpy(shape, s->shape, sizeof *shape * (size_t)lhs->nargs);
    return true;
  }
  for (int d = 0; d < lhs->nargs; d++)
    if (!(shape[d] = infer_extent(nbody, bodies, vars[d]))) {
      ps_error(b->p, lhs->args[d]->line, lhs->args[d]->col, TE_ERR_SHAPE,
               "cannot infer the extent of '%s' in '%s' (no tensor is read at [..., %s, ...]): "
               "declare the shape, e.g. '%s: [N, ...]'",
               lhs->args[d]->name, lhs->name, lhs->args[d]->name, lhs->name);
      return false;
    }
  return true;
}

/* Registers the outputs of a statement with several (NAME_v0, ...). */
static bool enter_outputs(ps_builder *b, int si, int n, te_tensor *const outs[]) {
  const ps_node *at = b->w->stmts[b->syms[si].stmt].lhs;
  b->syms[si].kind = PS_S_MULTI;
  b->syms[si].nvals = n;
  b->syms[si].tensor = outs[0];
  for (int k = 0; k < n; k++) {
    char name[300];
    snprintf(name, sizeof name, "%s_v%d", at->name, k);
    char *copy = ps_strndup(b->p, name, strlen(name));
    ps_sym *s = copy ? declare(b, at, copy, PS_S_TENSOR) : NULL;
    if (!s)
      return false;
    s->tensor = outs[k];
    s->stmt = b->syms[si].stmt;
    s->owner = si;
  }
  return true;
}

/* C[t, i] = scan(t, init, update[, n]): a scan along the axis named t (te_scan) whose update
   reads C itself at earlier steps. The shape comes from the declaration or from init (update
   cannot give it: it reads C); C stands for the state while update is built. */
static bool is_scan_stmt(ps_builder *b, const ps_node *body) {
  ps_sym *s = body->kind == PS_N_CALL ? ps_lookup_global(b, body->name) : NULL;
  return body->kind == PS_N_CALL && !strcmp(body->name, "scan") && !s;
}

static bool build_scan(ps_builder *b, const ps_stmt *st, int si, te_expr *const vars[]) {
  const ps_node *lhs = st->lhs, *n = st->body;
  int nd = lhs->nargs, axis = -1;
  if (n->nargs != 3 && n->nargs != 4)
    return ps_error(b->p, n->line, n->col, TE_ERR_PARSE,
                    "scan takes (axis, init, update) or (axis, init, update, initial steps)"),
           false;
  for (int d = 0; n->args[0]->kind == PS_N_NAME && d < nd; d++)
    if (!strcmp(n->args[0]->name, lhs->args[d]->name))
      axis = d;
  if (axis < 0)
    return ps_error(b->p, n->args[0]->line, n->args[0]->col, TE_ERR_PARSE,
                    "the first argument of scan names the scan axis: one of '%s''s indices",
                    lhs->name),
           false;
  int64_t ninit = 1;
  if (n->nargs == 4) {
    const ps_node *k = n->args[3];
    if (k->kind != PS_N_INT || k->neg || k->mag < 1 || k->mag > 1000000)
      return ps_error(b->p, k->line, k->col, TE_ERR_PARSE,
                      "the initial steps of scan are a positive integer literal"),
             false;
    ninit = (int64_t)k->mag;
  }
  te_expr *init = ps_build_expr(b, n->args[1]), *shape[TE_MAX_DIMS];
  if (!init || !stmt_shape(b, st, &b->syms[si], vars, 1, &init, shape))
    return false;
  te_tensor *state = te_placeholder(b->ctx, lhs->name, te_expr_dtype(init), nd, shape);
  if (!state)
    return mark_fail(b, lhs);
  ps_sym *self = &b->syms[si];
  bool was_read = self->read;
  self->tensor = state; /* C inside update: the earlier steps */
  te_expr *update = ps_build_expr(b, n->args[2]);
  self->read = was_read;
  self->tensor = NULL;
  if (!update)
    return false;
  te_tensor *t = te_scan(b->ctx, lhs->name, state, axis, (int)ninit, vars, init, update);
  if (!t)
    return mark_fail(b, lhs);
  self->tensor = t;
  return true;
}

/* E[i, j] = extern(SYMBOL, A, B, ...): an extern stage (te_extern) whose function is SYMBOL,
   reading the tensors named, whole. Its dtype and shape are its declaration's (E: f32[M, N]);
   te_build finds SYMBOL in the process (dlsym). */
static bool is_extern_stmt(ps_builder *b, const ps_node *body) {
  ps_sym *s = body->kind == PS_N_CALL ? ps_lookup_global(b, body->name) : NULL;
  return body->kind == PS_N_CALL && !strcmp(body->name, "extern") && !s;
}

static bool build_extern(ps_builder *b, const ps_stmt *st, int si) {
  const ps_node *lhs = st->lhs, *n = st->body;
  const ps_decl *decl = b->syms[si].decl;
  if (n->nargs < 1 || n->args[0]->kind != PS_N_NAME)
    return ps_error(b->p, n->line, n->col, TE_ERR_PARSE,
                    "extern takes the function's symbol, then the tensors it reads: "
                    "extern(SYMBOL, A, ...)"),
           false;
  if (!decl || !decl->has_dtype || decl->nshape != lhs->nargs)
    return ps_error(b->p, lhs->line, lhs->col, TE_ERR_SHAPE,
                    "extern stage '%s' needs its dtype and shape declared with %d extents "
                    "('%s: f32[...]')",
                    lhs->name, lhs->nargs, lhs->name),
           false;
  te_tensor *in[TE_EXTERN_MAX_INPUTS + 1];
  int nin = n->nargs - 1;
  for (int k = 0; k < nin && k <= TE_EXTERN_MAX_INPUTS; k++) {
    const ps_node *a = n->args[k + 1];
    ps_sym *s = a->kind == PS_N_NAME ? ps_lookup_global(b, a->name) : NULL;
    if (!s || s->kind != PS_S_TENSOR || !s->tensor)
      return ps_error(b->p, a->line, a->col, TE_ERR_PARSE,
                      "the inputs of extern are names of tensors defined before '%s'", lhs->name),
             false;
    s->read = true;
    in[k] = s->tensor;
  }
  te_tensor *t = te_extern(b->ctx, lhs->name, decl->dtype, lhs->nargs, b->syms[si].shape, nin, in,
                           NULL, n->args[0]->name);
  if (!t)
    return mark_fail(b, lhs);
  b->syms[si].tensor = t;
  return true;
}

static bool build_stmt(ps_builder *b, int i) {
  const ps_stmt *st = &b->w->stmts[i];
  const ps_node *lhs = st->lhs;
  int si = (int)(ps_lookup_global(b, lhs->name) - b->syms), mark = b->nsym, nd = lhs->nargs;
  te_expr *vars[TE_MAX_DIMS], *shape[TE_MAX_DIMS], *bodies[MAX_OUTPUTS];
  if (nd > TE_MAX_DIMS) {
    ps_error(b->p, lhs->line, lhs->col, TE_ERR_SHAPE, "tensor '%s' has more than %d dimensions",
             lhs->name, TE_MAX_DIMS);
    return false;
  }
  for (int d = 0; d < nd; d++) {
    ps_sym *v = declare(b, lhs->args[d], lhs->args[d]->name, PS_S_INDEX);
    if (!v || !(v->var = ps_chk(b, lhs->args[d], te_var(b->ctx, v->name))))
      return false;
    vars[d] = v->var;
  }
  if (is_extern_stmt(b, st->body)) {
    bool ok = build_extern(b, st, si);
    b->nsym = mark;
    return ok;
  }
  if (is_scan_stmt(b, st->body)) {
    bool ok = build_scan(b, st, si, vars);
    b->nsym = mark;
    return ok;
  }
  int n = ps_build_body(b, st->body, bodies, MAX_OUTPUTS);
  b->nsym = mark;
  if (!n || !stmt_shape(b, st, &b->syms[si], vars, n, bodies, shape))
    return false;
  const ps_decl *decl = b->syms[si].decl;
  if (n == 1) {
    te_tensor *t = te_compute(b->ctx, lhs->name, nd, shape, vars, bodies[0]);
    if (!t)
      return mark_fail(b, lhs);
    if (decl && decl->has_dtype && !te_dtype_eq(decl->dtype, t->dtype)) {
      char x[32], y[32];
      ps_error(b->p, decl->name->line, decl->name->col, TE_ERR_TYPE,
               "tensor '%s' is declared %s but its body is %s", lhs->name,
               te_dtype_str(decl->dtype, x, sizeof x), te_dtype_str(t->dtype, y, sizeof y));
      return false;
    }
    b->syms[si].tensor = t;
    return true;
  }
  if (decl && decl->has_dtype) {
    ps_error(b->p, decl->name->line, decl->name->col, TE_ERR_TYPE,
             "'%s' has %d outputs: declare its shape without a dtype ('%s: [...]')", lhs->name, n,
             lhs->name);
    return false;
  }
  te_tensor *outs[MAX_OUTPUTS];
  if (te_compute_multi(b->ctx, lhs->name, nd, shape, vars, n, bodies, outs) != TE_OK)
    return mark_fail(b, lhs);
  return enter_outputs(b, si, n, outs);
}

/* ---------------------------------------------------------------- outputs */

static bool push_out(ps_builder *b, te_tensor ***outs, int *n, int *cap, te_tensor *t) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 8;
    te_tensor **v = ir_alloc_persistent(b->ctx, sizeof *v * (size_t)c);
    if (!v)
      return false;
    if (*n)
      memcpy(v, *outs, sizeof *v * (size_t)*n);
    *outs = v;
    *cap = c;
  }
  (*outs)[(*n)++] = t;
  return true;
}

/* All outputs of symbol s (one tensor, or every output of a statement with several). */
static bool push_sym(ps_builder *b, const ps_sym *s, te_tensor ***outs, int *n, int *cap) {
  if (s->kind == PS_S_TENSOR)
    return push_out(b, outs, n, cap, s->tensor);
  for (int k = 0; k < s->nvals; k++)
    if (!push_out(b, outs, n, cap, s->tensor->op->outputs[k]))
      return false;
  return true;
}

static bool build_outputs(ps_builder *b, int *nout, te_tensor ***outs) {
  const ps_workload *w = b->w;
  int n = 0, cap = 0;
  *outs = NULL;
  for (int i = 0; i < w->nout; i++) {
    const ps_node *o = w->outs[i];
    ps_sym *s = ps_lookup_global(b, o->name);
    if (!s || (s->kind != PS_S_TENSOR && s->kind != PS_S_MULTI)) {
      ps_error(b->p, o->line, o->col, s ? TE_ERR_PARSE : TE_ERR_NOT_FOUND,
               s ? "'%s' is not a tensor" : "unknown tensor '%s'", o->name);
      return false;
    }
    if (!push_sym(b, s, outs, &n, &cap))
      return false;
  }
  for (int i = 0; i < b->nsym && !w->nout; i++) {
    const ps_sym *s = &b->syms[i];
    if ((s->kind == PS_S_TENSOR || s->kind == PS_S_MULTI) && s->stmt >= 0 && s->owner < 0 &&
        !s->read && !push_sym(b, s, outs, &n, &cap))
      return false;
  }
  *nout = n;
  return true;
}

te_status ps_build(ps_parser *p, const ps_workload *w, int *nout, te_tensor ***outs) {
  ps_builder b = {0};
  b.p = p;
  b.ctx = p->ctx;
  b.w = w;
  bool ok = enter_decls(&b) && build_decls(&b);
  for (int i = 0; ok && i < w->nstmt; i++)
    ok = build_stmt(&b, i);
  ok = ok && build_outputs(&b, nout, outs);
  free(b.syms);
  if (ok)
    return TE_OK;
  if (p->status == TE_OK)
    p->status = te_last_status(p->ctx) ? te_last_status(p->ctx) : TE_ERR_INTERNAL;
  return p->status;
}
