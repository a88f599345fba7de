/* verify.c — structural checks of a statement, run after every lowering pass in debug builds.
 *
 * Checks: every variable used is bound (FOR, LET, LET_STMT, a REDUCE's axes inside it) or free
 * (IR_VAR_INDEX symbolic sizes, parameters and handles may be free; a reduce axis may not); no
 * loop rebinds a variable of an enclosing loop; operand dtypes agree; conditions are bool; vector
 * lanes agree between index and value; after flattening no ACCESS, PROVIDE, REALIZE or REDUCE
 * remains. A failure is TE_ERR_INTERNAL: "internal: IR invalid after pass 'NAME': <what>".
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

typedef struct vstate {
  te_ctx *ctx;
  const char *pass;
  bool flattened;
  bool failed;
  int n, cap;
  te_expr **bound; /* malloc'd stack of bound variables */
} vstate;

static bool fail(vstate *v, const char *what, te_expr *e) {
  if (v->failed)
    return false;
  v->failed = true;
  char *text = e ? ir_expr_to_string(e) : NULL;
  if (text && strlen(text) > 200)
    strcpy(text + 197, "...");
  ir_error(v->ctx, TE_ERR_INTERNAL, "internal: IR invalid after pass '%s': %s%s%s", v->pass, what,
           text ? " in " : "", text ? text : "");
  free(text);
  return false;
}

static bool push(vstate *v, te_expr *var) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 32;
    te_expr **b = ir_realloc(v->ctx, v->bound, (size_t)cap * sizeof *b);
    if (!b) {
      ir_error(v->ctx, TE_ERR_NOMEM, "out of memory (verifying after pass '%s')", v->pass);
      v->failed = true;
      return false;
    }
    v->bound = b;
    v->cap = cap;
  }
  v->bound[v->n++] = var;
  return true;
}

static bool is_bound(const vstate *v, const te_expr *var) {
  for (int i = v->n - 1; i >= 0; i--)
    if (v->bound[i] == var)
      return true;
  return false;
}

static bool check_expr(vstate *v, te_expr *e);

static bool check_children(vstate *v, te_expr *e) {
  for (int i = 0; i < e->nargs; i++)
    if (!check_expr(v, e->args[i]))
      return false;
  return true;
}

/* Binds the variable (LET) or the axes (REDUCE) while checking what they scope over. */
static bool check_scoped(vstate *v, te_expr *e) {
  int mark = v->n;
  bool ok;
  if (e->kind == IR_LET) {
    ok = check_expr(v, e->args[1]) && push(v, e->args[0]) && check_expr(v, e->args[2]);
  } else {
    const ir_reduce *r = e->u.reduce;
    if (v->flattened)
      return fail(v, "REDUCE after flattening", e);
    ok = true;
    for (int i = 0; ok && i < r->naxes; i++)
      ok = push(v, r->axes[i]);
    ok = ok && check_children(v, e) && (!r->cond || check_expr(v, r->cond));
  }
  v->n = mark;
  return ok;
}

static bool check_types(vstate *v, te_expr *e) {
  te_expr *const *a = e->args;
  switch ((ir_expr_kind)e->kind) {
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
    if (!ir_is_bool(e->dtype))
      return fail(v, "comparison not of type bool", e);
    /* fall through */
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_DIV:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
  case IR_MIN:
  case IR_MAX:
    if (!ir_dtype_eq(a[0]->dtype, a[1]->dtype))
      return fail(v, "binary operands of different dtypes", e);
    return true;
  case IR_AND:
  case IR_OR:
    if (!ir_is_bool(a[0]->dtype) || !ir_is_bool(a[1]->dtype))
      return fail(v, "logic on non-bool", e);
    return true;
  case IR_NOT:
    return ir_is_bool(a[0]->dtype) || fail(v, "logic on non-bool", e);
  case IR_SELECT:
    if (!ir_is_bool(a[0]->dtype))
      return fail(v, "select condition not bool", e);
    return ir_dtype_eq(a[1]->dtype, a[2]->dtype) ||
           fail(v, "select branches of different dtypes", e);
  case IR_LOAD:
    return a[0]->dtype.lanes == e->dtype.lanes ||
           fail(v, "load index lanes differ from the value's", e);
  case IR_ACCESS:
    return !v->flattened || fail(v, "ACCESS after flattening", e);
  default:
    return true;
  }
}

static bool check_expr(vstate *v, te_expr *e) {
  if (!e)
    return fail(v, "NULL expression", NULL);
  if (e->kind == IR_VAR) {
    if (is_bound(v, e) || e->u.var.kind != IR_VAR_REDUCE)
      return true;
    return fail(v, "reduce axis used outside its reduction", e);
  }
  if (e->kind == IR_LET || e->kind == IR_REDUCE)
    return check_scoped(v, e);
  return check_types(v, e) && check_children(v, e);
}

static bool check_stmt(vstate *v, ir_stmt *s);

static bool check_cond(vstate *v, te_expr *c, const char *what) {
  if (!check_expr(v, c))
    return false;
  return (ir_is_bool(c->dtype) && c->dtype.lanes == 1) || fail(v, what, c);
}

static bool check_for(vstate *v, ir_stmt *s) {
  te_expr *var = IR_FOR_VAR(s);
  if (var->kind != IR_VAR)
    return fail(v, "loop variable is not a variable", var);
  if (is_bound(v, var))
    return fail(v, "loop variable bound twice", var);
  if (!check_expr(v, IR_FOR_MIN(s)) || !check_expr(v, IR_FOR_EXTENT(s)))
    return false;
  if (!ir_dtype_eq(IR_FOR_MIN(s)->dtype, IR_FOR_EXTENT(s)->dtype) ||
      !ir_is_intlike(IR_FOR_MIN(s)->dtype))
    return fail(v, "loop bounds not integers of one dtype", IR_FOR_EXTENT(s));
  int mark = v->n;
  bool ok = push(v, var) && check_stmt(v, IR_FOR_BODY(s));
  v->n = mark;
  return ok;
}

static bool check_stmt(vstate *v, ir_stmt *s) {
  if (!s)
    return fail(v, "NULL statement", NULL);
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_FOR:
    return check_for(v, s);
  case IR_S_LET_STMT: {
    if (!check_expr(v, s->exprs[1]))
      return false;
    int mark = v->n;
    bool ok = push(v, s->exprs[0]) && check_stmt(v, s->stmts[0]);
    v->n = mark;
    return ok;
  }
  case IR_S_IF:
    if (!check_cond(v, s->exprs[0], "if condition not a scalar bool"))
      return false;
    break;
  case IR_S_ASSERT:
    if (!check_cond(v, s->exprs[0], "assert condition not a scalar bool"))
      return false;
    break;
  case IR_S_STORE:
    if (s->exprs[0]->dtype.lanes != s->exprs[1]->dtype.lanes)
      return fail(v, "store index lanes differ from the value's", s->exprs[0]);
    break;
  case IR_S_PROVIDE:
    if (v->flattened)
      return fail(v, "PROVIDE after flattening", s->exprs[0]);
    break;
  case IR_S_REALIZE:
    if (v->flattened)
      return fail(v, "REALIZE after flattening", NULL);
    break;
  case IR_S_CALL_EXTERN:
    if (v->flattened && !s->u.ext->buffers)
      return fail(v, "call_extern of tensors after flattening", NULL);
    break;
  default:
    break;
  }
  for (int i = 0; i < s->nexprs; i++)
    if (!check_expr(v, s->exprs[i]))
      return false;
  for (uint32_t i = 0; i < s->nstmts; i++)
    if (s->stmts[i] && !check_stmt(v, s->stmts[i]))
      return false;
  return true;
}

te_status ir_verify_stmt(te_ctx *ctx, ir_stmt *s, const char *after_pass, bool flattened) {
  vstate v = {ctx, after_pass ? after_pass : "?", flattened, false, 0, 0, NULL};
  bool ok = check_stmt(&v, s);
  free(v.bound);
  return ok ? TE_OK : ir_failed(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
}
