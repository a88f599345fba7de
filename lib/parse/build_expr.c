/* build_expr.c — syntax-tree expressions -> te_expr, through the public constructors.
 *
 * Every node is made by the te_* function a C user would call (te_add, te_at, te_sum, te_call,
 * te_cast, ...), so types are checked and promoted exactly as in the C API, and a refusal keeps
 * that function's message (te_parse puts the line:column in front). Only a built-in reduction
 * with a `where` condition has no public constructor: it is te_sum & co. with the condition
 * added (the IR's reduction node carries one for every reducer).
 *
 * Names: a statement's index variables, reduce axes, scalar parameters, symbolic sizes and (in
 * a reducer) its variables. In a shape or a range an unknown name is a new symbolic size.
 * Calls: a dtype name is a cast; select, min, max (two operands: element-wise; otherwise, or
 * when the second operand is a bare reduce-axis name, a reduction), sum, prod, a declared
 * reducer, or a math function of te_call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "build.h"

enum { MAX_VALUES = 64 };

te_expr *ps_chk(ps_builder *b, const ps_node *at, te_expr *e) {
  if (!e && b->p->err_line == 0) {
    b->p->err_line = at->line;
    b->p->err_col = at->col;
  }
  return e;
}

static te_expr *fail(ps_builder *b, const ps_node *at, te_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static te_expr *fail(ps_builder *b, const ps_node *at, te_status st, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ps_error(b->p, at->line, at->col, st, "%s", msg);
  return NULL;
}

/* ---------------------------------------------------------------- leaves */

/* An integer literal; allow_u64: a value past INT64_MAX is fine (it is cast to u64). */
static te_expr *build_int(ps_builder *b, const ps_node *n, bool allow_u64) {
  uint64_t m = n->mag;
  bool fits = n->neg ? m <= (uint64_t)INT64_MAX + 1 : m <= (uint64_t)INT64_MAX;
  bool u64 = n->typed && n->dtype.code == kDLUInt && n->dtype.bits == 64;
  if (!fits && !(!n->neg && (allow_u64 || u64))) {
    ps_error(b->p, n->line, n->col, TE_ERR_PARSE,
             "integer %s%llu does not fit in i64 (write u64(%llu) for a u64)", n->neg ? "-" : "",
             (unsigned long long)m, (unsigned long long)m);
    return NULL;
  }
  int64_t v = (int64_t)(n->neg ? 0 - m : m);
  te_expr *e = te_int(b->ctx, v);
  if (n->typed)
    e = te_cast(n->dtype, e);
  return ps_chk(b, n, e);
}

static te_expr *build_name(ps_builder *b, const ps_node *n) {
  ps_sym *s = ps_lookup(b, n->name);
  if (!s && b->shape_scope) {
    s = ps_add_sym(b, n->name, PS_S_SIZE, n);
    if (s && !(s->var = ps_chk(b, n, te_var(b->ctx, n->name))))
      return NULL;
  }
  if (!s)
    return fail(b, n, TE_ERR_NOT_FOUND, "unknown name '%s'", n->name);
  switch (s->kind) {
  case PS_S_AXIS:
    if (b->shape_scope)
      return fail(b, n, TE_ERR_PARSE, "reduce axis '%s' cannot be used in a shape or range",
                  n->name);
    return s->var;
  case PS_S_PARAM:
  case PS_S_SIZE:
  case PS_S_INDEX:
  case PS_S_RVAR:
    return s->var;
  default:
    return fail(b, n, TE_ERR_PARSE, "'%s' is %s, not a value", n->name, ps_sym_kind_name(s->kind));
  }
}

/* A tensor read T[i, j]. */
static te_expr *build_index(ps_builder *b, const ps_node *n) {
  if (b->shape_scope)
    return fail(b, n, TE_ERR_PARSE, "a shape or range cannot read tensor '%s'", n->name);
  ps_sym *s = ps_lookup_global(b, n->name);
  if (!s)
    return fail(b, n, TE_ERR_NOT_FOUND, "unknown tensor '%s'", n->name);
  if (s->kind == PS_S_MULTI)
    return fail(b, n, TE_ERR_PARSE, "'%s' has several outputs: read them as %s_v0, %s_v1, ...",
                n->name, n->name, n->name);
  if (s->kind != PS_S_TENSOR)
    return fail(b, n, TE_ERR_PARSE, "'%s' is %s, not a tensor", n->name, ps_sym_kind_name(s->kind));
  if (!s->tensor)
    return fail(b, n, TE_ERR_PARSE, "tensor '%s' is read before the statement that defines it",
                n->name);
  te_expr *idx[TE_MAX_DIMS];
  if (n->nargs > TE_MAX_DIMS)
    return fail(b, n, TE_ERR_SHAPE, "tensor '%s' is read with too many indices", n->name);
  for (int i = 0; i < n->nargs; i++)
    if (!(idx[i] = ps_build_expr(b, n->args[i])))
      return NULL;
  s->read = true;
  if (s->owner >= 0)
    b->syms[s->owner].read = true;
  return ps_chk(b, n, te_at(s->tensor, n->nargs, idx));
}

/* ---------------------------------------------------------------- reductions */

/* Is call n (min or max) a reduction rather than the element-wise function? */
static bool is_reduction_form(ps_builder *b, const ps_node *n) {
  if (n->naxes >= 0 || n->cond || n->nargs != 2)
    return true;
  const ps_node *a = n->args[1];
  if (a->kind != PS_N_NAME || a->paren)
    return false;
  ps_sym *s = ps_lookup(b, a->name);
  return s && s->kind == PS_S_AXIS;
}

/* The axes of reduction n: its arguments after the first, then axes=[...]. */
static int reduce_axes(ps_builder *b, const ps_node *n, te_expr **axes) {
  int k = 0;
  for (int i = 1; i < n->nargs + (n->naxes > 0 ? n->naxes : 0); i++) {
    const ps_node *a = i < n->nargs ? n->args[i] : n->axes[i - n->nargs];
    ps_sym *s = a->kind == PS_N_NAME && !a->paren ? ps_lookup(b, a->name) : NULL;
    if (!s || s->kind != PS_S_AXIS) {
      ps_error(b->p, a->line, a->col, s || a->kind != PS_N_NAME ? TE_ERR_PARSE : TE_ERR_NOT_FOUND,
               "'%s' takes reduce axes after its first operand (declare them as 'k: [0, K)')",
               n->name);
      return -1;
    }
    if (k == MAX_VALUES) {
      ps_error(b->p, a->line, a->col, TE_ERR_PARSE, "too many reduce axes");
      return -1;
    }
    axes[k++] = s->var;
  }
  if (k == 0) {
    ps_error(b->p, n->line, n->col, TE_ERR_PARSE, "'%s' needs at least one reduce axis", n->name);
    return -1;
  }
  return k;
}

/* sum, prod, min, max over axes, with an optional condition. */
static te_expr *build_builtin_reduce(ps_builder *b, const ps_node *n) {
  te_expr *axes[MAX_VALUES];
  if (n->nargs < 1)
    return fail(b, n, TE_ERR_PARSE, "'%s' needs an operand", n->name);
  te_expr *body = ps_build_expr(b, n->args[0]);
  int nk = body ? reduce_axes(b, n, axes) : -1;
  te_expr *cond = nk > 0 && n->cond ? ps_build_expr(b, n->cond) : NULL;
  if (nk < 0 || (n->cond && !cond))
    return NULL;
  te_expr *(*fn)(te_expr *, int, te_expr *const *) = !strcmp(n->name, "sum")    ? te_sum
                                                     : !strcmp(n->name, "prod") ? te_prod
                                                     : !strcmp(n->name, "max")  ? te_max_r
                                                                                : te_min_r;
  te_expr *r = ps_chk(b, n, fn(body, nk, axes));
  if (!r || !cond)
    return r;
  if (!ir_is_bool(cond->dtype) || cond->dtype.lanes != 1) {
    char t[32];
    return fail(b, n->cond, TE_ERR_TYPE, "the where condition of '%s' must be bool (got %s)",
                n->name, te_dtype_str(cond->dtype, t, sizeof t));
  }
  ir_reduce red = *r->u.reduce;
  red.cond = cond;
  return ps_chk(b, n, ir_reduce_make(b->ctx, r->dtype, &red, 1, &body));
}

/* R(values, axes... [where cond]) with a declared reducer: its nvals results in out. */
static int build_custom_reduce(ps_builder *b, const ps_node *n, ps_sym *s, te_expr **out) {
  if (n->nargs < 1)
    return fail(b, n, TE_ERR_PARSE, "'%s' needs its values", n->name), 0;
  const ps_node *v = n->args[0];
  te_expr *vals[MAX_VALUES], *axes[MAX_VALUES];
  int nv = v->kind == PS_N_TUPLE ? v->nargs : 1;
  if (nv != s->nvals) {
    ps_error(b->p, v->line, v->col, TE_ERR_PARSE, "reducer '%s' takes %d value%s (got %d)", n->name,
             s->nvals, s->nvals == 1 ? "" : "s", nv);
    return 0;
  }
  for (int i = 0; i < nv; i++)
    if (!(vals[i] = ps_build_expr(b, nv > 1 ? v->args[i] : v)))
      return 0;
  int nk = reduce_axes(b, n, axes);
  te_expr *cond = nk > 0 && n->cond ? ps_build_expr(b, n->cond) : NULL;
  if (nk < 0 || (n->cond && !cond))
    return 0;
  if (te_reduce(s->red, nv, vals, nk, axes, cond, out) != TE_OK)
    return ps_chk(b, n, NULL), 0;
  return nv;
}

/* ---------------------------------------------------------------- calls */

static te_expr *build_call(ps_builder *b, const ps_node *n) {
  te_dtype t;
  te_expr *a[4];
  bool plain = n->naxes < 0 && !n->cond;
  bool reduce = !strcmp(n->name, "sum") || !strcmp(n->name, "prod") ||
                ((!strcmp(n->name, "min") || !strcmp(n->name, "max")) && is_reduction_form(b, n));
  ps_sym *s = ps_lookup_global(b, n->name);
  if ((reduce || (s && s->kind == PS_S_REDUCER)) && b->shape_scope)
    return fail(b, n, TE_ERR_PARSE, "a shape or range cannot hold a reduction ('%s')", n->name);
  if (reduce)
    return build_builtin_reduce(b, n);
  if (s && s->kind == PS_S_REDUCER) {
    if (s->nvals > 1)
      return fail(b, n, TE_ERR_PARSE,
                  "reducer '%s' gives several values: it must be the whole body of a statement",
                  n->name);
    te_expr *out[1];
    return build_custom_reduce(b, n, s, out) ? out[0] : NULL;
  }
  bool cast = ps_dtype_named(n->name, strlen(n->name), &t);
  bool known =
      cast || !strcmp(n->name, "select") || !strcmp(n->name, "min") || !strcmp(n->name, "max");
  int id = ir_intrin_lookup(n->name);
  if (!known && (id < 0 || (ir_intrin_table[id].flags & IR_INTRIN_INTERNAL)))
    return fail(b, n, TE_ERR_NOT_FOUND, "unknown function '%s'", n->name);
  if (!plain)
    return fail(b, n, TE_ERR_PARSE, "'%s' takes no axes or where condition", n->name);
  int want = cast ? 1 : !strcmp(n->name, "select") ? 3 : known ? 2 : ir_intrin_table[id].nargs;
  if (n->nargs != want) {
    ps_error(b->p, n->line, n->col, cast || known ? TE_ERR_PARSE : TE_ERR_INVALID_ARG,
             "'%s' takes %d argument%s (got %d)", n->name, want, want == 1 ? "" : "s", n->nargs);
    return NULL;
  }
  for (int i = 0; i < n->nargs; i++) {
    const ps_node *x = n->args[i];
    bool big_u64 = cast && x->kind == PS_N_INT && !x->typed && t.code == kDLUInt && t.bits == 64;
    if (!(a[i] = big_u64 ? build_int(b, x, true) : ps_build_expr(b, x)))
      return NULL;
  }
  te_expr *r;
  if (cast)
    r = te_cast(t, a[0]);
  else if (!strcmp(n->name, "select"))
    r = te_select(a[0], a[1], a[2]);
  else if (!strcmp(n->name, "min"))
    r = te_min(a[0], a[1]);
  else if (!strcmp(n->name, "max"))
    r = te_max(a[0], a[1]);
  else
    r = te_call(b->ctx, n->name, n->nargs, a);
  return ps_chk(b, n, r);
}

/* ---------------------------------------------------------------- operators */

static te_expr *build_binary(ps_builder *b, const ps_node *n) {
  te_expr *l = ps_build_expr(b, n->args[0]);
  te_expr *r = l ? ps_build_expr(b, n->args[1]) : NULL;
  if (!r)
    return NULL;
  te_expr *e;
  switch (n->op) {
  case PS_PLUS:
    e = te_add(l, r);
    break;
  case PS_MINUS:
    e = te_sub(l, r);
    break;
  case PS_STAR:
    e = te_mul(l, r);
    break;
  case PS_SLASH:
    e = te_div(l, r);
    break;
  case PS_FLOORDIV:
    e = te_floordiv(l, r);
    break;
  case PS_PERCENT:
    e = te_floormod(l, r);
    break;
  case PS_EQ:
    e = te_eq(l, r);
    break;
  case PS_NE:
    e = te_ne(l, r);
    break;
  case PS_LT:
    e = te_lt(l, r);
    break;
  case PS_LE:
    e = te_le(l, r);
    break;
  case PS_GT:
    e = te_gt(l, r);
    break;
  case PS_GE:
    e = te_ge(l, r);
    break;
  case PS_AND:
    e = te_and(l, r);
    break;
  case PS_OR:
    e = te_or(l, r);
    break;
  default:
    e = NULL;
    break;
  }
  return ps_chk(b, n, e);
}

te_expr *ps_build_expr(ps_builder *b, const ps_node *n) {
  switch (n->kind) {
  case PS_N_INT:
    return build_int(b, n, false);
  case PS_N_FLOAT:
    return ps_chk(b, n, te_float(b->ctx, n->typed ? n->dtype : TE_F64, n->f));
  case PS_N_BOOL:
    return ps_chk(b, n, te_const(b->ctx, TE_BOOL, (double)n->mag));
  case PS_N_NAME:
    return build_name(b, n);
  case PS_N_INDEX:
    return build_index(b, n);
  case PS_N_CALL:
    return build_call(b, n);
  case PS_N_BINARY:
    return build_binary(b, n);
  case PS_N_UNARY: {
    te_expr *a = ps_build_expr(b, n->args[0]);
    if (!a)
      return NULL;
    return ps_chk(b, n, n->op == PS_MINUS ? te_neg(a) : te_not(a));
  }
  case PS_N_TUPLE:
    return fail(b, n, TE_ERR_PARSE,
                "a tuple is allowed only as the whole body of a statement or a reducer's values");
  }
  return NULL;
}

int ps_build_body(ps_builder *b, const ps_node *n, te_expr **out, int max) {
  if (n->kind == PS_N_TUPLE) {
    if (n->nargs > max) {
      ps_error(b->p, n->line, n->col, TE_ERR_PARSE, "a statement has at most %d outputs", max);
      return 0;
    }
    for (int i = 0; i < n->nargs; i++)
      if (!(out[i] = ps_build_expr(b, n->args[i])))
        return 0;
    return n->nargs;
  }
  if (n->kind == PS_N_CALL) {
    ps_sym *s = ps_lookup_global(b, n->name);
    if (s && s->kind == PS_S_REDUCER && s->nvals > 1)
      return build_custom_reduce(b, n, s, out);
  }
  return (out[0] = ps_build_expr(b, n)) ? 1 : 0;
}
