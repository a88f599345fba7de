/* ir_eval.c — the reference interpreter of IR expressions (see ir_eval.h). */
#include "ir_eval.h"

#include <math.h>

typedef struct scope {
  te_expr *var;
  ir_eval_val val;
  const struct scope *next;
} scope;

typedef struct ev {
  ir_eval_env *env;
  const scope *sc;
} ev;

static bool eval(ev *v, te_expr *e, int lane, ir_eval_val *out);

static int64_t norm(te_dtype t, uint64_t u) {
  if (t.bits >= 64)
    return (int64_t)u;
  uint64_t mask = ((uint64_t)1 << t.bits) - 1;
  u &= mask;
  if (t.code == kDLInt && ((u >> (t.bits - 1)) & 1))
    u |= ~mask;
  return (int64_t)u;
}

static bool is_f32(te_dtype t) { return t.code == kDLFloat && t.bits == 32; }

static int cmp3(te_dtype t, ir_eval_val a, ir_eval_val b) {
  if (t.code == kDLFloat)
    return a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
  if (t.code == kDLUInt)
    return (uint64_t)a.i < (uint64_t)b.i ? -1 : (uint64_t)a.i > (uint64_t)b.i;
  return a.i < b.i ? -1 : a.i > b.i;
}

static bool compare(ir_expr_kind k, te_dtype t, ir_eval_val a, ir_eval_val b) {
  if (t.code == kDLFloat && (isnan(a.f) || isnan(b.f)))
    return k == IR_NE;
  int c = cmp3(t, a, b);
  switch (k) {
  case IR_EQ:
    return c == 0;
  case IR_NE:
    return c != 0;
  case IR_LT:
    return c < 0;
  case IR_LE:
    return c <= 0;
  case IR_GT:
    return c > 0;
  default:
    return c >= 0;
  }
}

static bool float_op(ir_expr_kind k, te_dtype t, double x, double y, double *r) {
  bool f = is_f32(t);
  float fx = (float)x, fy = (float)y;
  switch (k) {
  case IR_ADD:
    *r = f ? (double)(fx + fy) : x + y;
    return true;
  case IR_SUB:
    *r = f ? (double)(fx - fy) : x - y;
    return true;
  case IR_MUL:
    *r = f ? (double)(fx * fy) : x * y;
    return true;
  case IR_DIV:
    *r = f ? (double)(fx / fy) : x / y;
    return true;
  case IR_MIN:
    *r = x < y ? x : y;
    return true;
  case IR_MAX:
    *r = x > y ? x : y;
    return true;
  default:
    return false;
  }
}

static void flag(ev *v, bool overflowed) {
  if (overflowed)
    v->env->overflow = true;
}

static bool int_op(ev *v, ir_expr_kind k, te_dtype t, int64_t x, int64_t y, int64_t *r) {
  bool u = t.code == kDLUInt, wide = t.bits == 64 && !u;
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  int64_t tmp;
  switch (k) {
  case IR_ADD:
    if (wide)
      flag(v, __builtin_add_overflow(x, y, &tmp));
    *r = norm(t, ux + uy);
    return true;
  case IR_SUB:
    if (wide)
      flag(v, __builtin_sub_overflow(x, y, &tmp));
    *r = norm(t, ux - uy);
    return true;
  case IR_MUL:
    if (wide)
      flag(v, __builtin_mul_overflow(x, y, &tmp));
    *r = norm(t, ux * uy);
    return true;
  case IR_MIN:
    *r = cmp3(t, (ir_eval_val){.i = x}, (ir_eval_val){.i = y}) <= 0 ? x : y;
    return true;
  case IR_MAX:
    *r = cmp3(t, (ir_eval_val){.i = x}, (ir_eval_val){.i = y}) >= 0 ? x : y;
    return true;
  case IR_AND:
    *r = x && y;
    return true;
  case IR_OR:
    *r = x || y;
    return true;
  default:
    break;
  }
  if (y == 0)
    return false; /* every division by zero is undefined */
  bool div = k == IR_FLOORDIV || k == IR_TRUNCDIV;
  if (u) {
    *r = norm(t, div ? ux / uy : ux % uy);
    return true;
  }
  if (y == -1) { /* INT_MIN / -1 wraps */
    *r = div ? norm(t, 0 - ux) : 0;
    return true;
  }
  int64_t q = x / y, m = x % y;
  if ((k == IR_FLOORDIV || k == IR_FLOORMOD) && m != 0 && ((m < 0) != (y < 0))) {
    q -= 1;
    m += y;
  }
  *r = norm(t, (uint64_t)(div ? q : m));
  return true;
}

static bool binary(ev *v, te_expr *e, int lane, ir_eval_val *out) {
  ir_eval_val a, b;
  if (!eval(v, e->args[0], lane, &a) || !eval(v, e->args[1], lane, &b))
    return false;
  ir_expr_kind k = (ir_expr_kind)e->kind;
  te_dtype t = e->args[0]->dtype;
  if (k >= IR_EQ && k <= IR_GE) {
    out->i = compare(k, t, a, b);
    return true;
  }
  if (t.code == kDLFloat)
    return float_op(k, t, a.f, b.f, &out->f);
  return int_op(v, k, t, a.i, b.i, &out->i);
}

static bool cast(ev *v, te_expr *e, int lane, ir_eval_val *out) {
  ir_eval_val a;
  if (!eval(v, e->args[0], lane, &a))
    return false;
  te_dtype from = e->args[0]->dtype, to = e->dtype;
  if (to.code == kDLFloat) {
    double d = from.code == kDLFloat  ? a.f
               : from.code == kDLUInt ? (double)(uint64_t)a.i
                                      : (double)a.i;
    if (from.code != kDLFloat && is_f32(to))
      d = from.code == kDLUInt ? (double)(float)(uint64_t)a.i : (double)(float)a.i;
    out->f = is_f32(to) ? (double)(float)d : d;
    return true;
  }
  if (to.code == kDLUInt && to.bits == 1) {
    out->i = from.code == kDLFloat ? a.f != 0 : a.i != 0;
    return true;
  }
  if (from.code != kDLFloat) {
    out->i = norm(to, (uint64_t)a.i);
    return true;
  }
  double tr = trunc(a.f);
  if (isnan(tr))
    return false;
  if (to.code == kDLUInt) {
    if (tr < 0 || tr >= ldexp(1.0, to.bits))
      return false;
    out->i = norm(to, (uint64_t)tr);
  } else {
    if (tr < -ldexp(1.0, to.bits - 1) || tr >= ldexp(1.0, to.bits - 1))
      return false;
    out->i = (int64_t)tr;
  }
  return true;
}

static double math1(ir_intrin id, double x, bool f) {
  switch (id) {
  case IR_INTRIN_EXP:
    return f ? expf((float)x) : exp(x);
  case IR_INTRIN_EXP2:
    return f ? exp2f((float)x) : exp2(x);
  case IR_INTRIN_LOG:
    return f ? logf((float)x) : log(x);
  case IR_INTRIN_LOG2:
    return f ? log2f((float)x) : log2(x);
  case IR_INTRIN_LOG10:
    return f ? log10f((float)x) : log10(x);
  case IR_INTRIN_SQRT:
    return f ? sqrtf((float)x) : sqrt(x);
  case IR_INTRIN_RSQRT:
    return f ? 1.0f / sqrtf((float)x) : 1.0 / sqrt(x);
  case IR_INTRIN_SIN:
    return f ? sinf((float)x) : sin(x);
  case IR_INTRIN_COS:
    return f ? cosf((float)x) : cos(x);
  case IR_INTRIN_TAN:
    return f ? tanf((float)x) : tan(x);
  case IR_INTRIN_TANH:
    return f ? tanhf((float)x) : tanh(x);
  case IR_INTRIN_SIGMOID:
    return f ? 1.0f / (1.0f + expf(-(float)x)) : 1.0 / (1.0 + exp(-x));
  case IR_INTRIN_ERF:
    return f ? erff((float)x) : erf(x);
  case IR_INTRIN_FLOOR:
    return floor(x);
  case IR_INTRIN_CEIL:
    return ceil(x);
  case IR_INTRIN_ROUND:
    return round(x);
  case IR_INTRIN_TRUNC:
    return trunc(x);
  default:
    return fabs(x); /* ABS */
  }
}

static uint64_t e_amount(te_dtype t, int64_t s) { /* the amount as te reads it: unsigned */
  return t.bits >= 64 ? (uint64_t)s : (uint64_t)s & (((uint64_t)1 << t.bits) - 1);
}

/* The integer operators (include/te/expr.h's definitions, written from them): x and the amount s
   of type t, s read unsigned; every amount defined. */
static uint64_t ubits(te_dtype t, int64_t x) {
  return t.bits >= 64 ? (uint64_t)x : (uint64_t)x & (((uint64_t)1 << t.bits) - 1);
}

static int64_t shr_floor(te_dtype t, int64_t x, uint64_t s) { /* floor(x / 2^s) */
  if (t.code == kDLInt)
    return s >= (uint64_t)t.bits ? (x < 0 ? -1 : 0) : x >> s;
  return s >= (uint64_t)t.bits ? 0 : (int64_t)(ubits(t, x) >> s);
}

static bool int_call(ir_intrin id, te_dtype t, const ir_eval_val a[], ir_eval_val *out) {
  uint64_t s = e_amount(t, a[1].i);
  switch (id) {
  case IR_INTRIN_BITWISE_AND:
    out->i = norm(t, (uint64_t)a[0].i & (uint64_t)a[1].i);
    return true;
  case IR_INTRIN_BITWISE_OR:
    out->i = norm(t, (uint64_t)a[0].i | (uint64_t)a[1].i);
    return true;
  case IR_INTRIN_BITWISE_XOR:
    out->i = norm(t, (uint64_t)a[0].i ^ (uint64_t)a[1].i);
    return true;
  case IR_INTRIN_BITWISE_NOT:
    out->i = norm(t, ~(uint64_t)a[0].i);
    return true;
  case IR_INTRIN_SHIFT_LEFT:
    out->i = s >= (uint64_t)t.bits ? 0 : norm(t, ubits(t, a[0].i) << s);
    return true;
  case IR_INTRIN_SHIFT_RIGHT:
    out->i = norm(t, (uint64_t)shr_floor(t, a[0].i, s));
    return true;
  case IR_INTRIN_SHIFT_RIGHT_LOGICAL:
    out->i = s >= (uint64_t)t.bits ? 0 : norm(t, ubits(t, a[0].i) >> s);
    return true;
  case IR_INTRIN_ROUNDING_SHIFT_RIGHT: /* floor(x / 2^s) + bit s - 1, by the definition */
    if (s == 0)
      out->i = a[0].i;
    else
      out->i =
          norm(t, (uint64_t)shr_floor(t, a[0].i, s) + ((uint64_t)shr_floor(t, a[0].i, s - 1) & 1));
    return true;
  default:
    return false;
  }
}

static bool call(ev *v, te_expr *e, int lane, ir_eval_val *out) {
  ir_eval_val a[3];
  if (e->u.call == IR_INTRIN_IF_THEN_ELSE) { /* only the side taken is evaluated */
    int cl = e->args[0]->dtype.lanes == 1 ? 0 : lane;
    return eval(v, e->args[0], cl, &a[0]) && eval(v, e->args[a[0].i ? 1 : 2], lane, out);
  }
  for (int i = 0; i < e->nargs && i < 3; i++)
    if (!eval(v, e->args[i], lane, &a[i]))
      return false;
  te_dtype t = e->dtype;
  bool f = is_f32(t);
  if (e->u.call == IR_INTRIN_LIKELY) {
    *out = a[0];
  } else if (t.code != kDLFloat && e->u.call != IR_INTRIN_ABS) {
    return int_call(e->u.call, t, a, out);
  } else if (t.code != kDLFloat) { /* abs of an int */
    out->i = (t.code == kDLUInt || a[0].i >= 0) ? a[0].i : norm(t, 0 - (uint64_t)a[0].i);
  } else if (e->u.call == IR_INTRIN_POW) {
    out->f = f ? (double)powf((float)a[0].f, (float)a[1].f) : pow(a[0].f, a[1].f);
  } else if (e->u.call == IR_INTRIN_FMA) {
    out->f =
        f ? (double)fmaf((float)a[0].f, (float)a[1].f, (float)a[2].f) : fma(a[0].f, a[1].f, a[2].f);
  } else {
    double r = math1(e->u.call, a[0].f, f);
    out->f = f ? (double)(float)r : r;
  }
  return true;
}

static bool var(ev *v, te_expr *e, ir_eval_val *out) {
  for (const scope *s = v->sc; s; s = s->next)
    if (s->var == e) {
      *out = s->val;
      return true;
    }
  for (int i = 0; i < v->env->n; i++)
    if (v->env->vars[i] == e) {
      *out = v->env->vals[i];
      if (e->dtype.code != kDLFloat)
        out->i = norm(e->dtype, (uint64_t)out->i);
      return true;
    }
  return false;
}

static bool access(ev *v, te_expr *e, int lane, ir_eval_val *out) {
  int64_t idx[TE_MAX_DIMS];
  if (!v->env->access || e->nargs > TE_MAX_DIMS)
    return false;
  for (int i = 0; i < e->nargs; i++) {
    ir_eval_val x;
    if (!eval(v, e->args[i], lane, &x))
      return false;
    idx[i] = x.i;
  }
  return v->env->access(v->env->user, e->u.tensor, e->nargs, idx, out);
}

/* The start of a built-in reduction: 0, 1, the type's highest or lowest value. */
static ir_eval_val identity(ir_reducer_kind k, te_dtype t) {
  ir_eval_val r = {.i = 0};
  bool f = t.code == kDLFloat, u = t.code == kDLUInt;
  uint64_t top = t.bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << t.bits) - 1; /* unsigned max */
  switch (k) {
  case IR_REDUCER_PROD:
    return f ? (ir_eval_val){.f = 1} : (ir_eval_val){.i = 1};
  case IR_REDUCER_MIN: /* the highest value */
    return f ? (ir_eval_val){.f = INFINITY} : (ir_eval_val){.i = norm(t, u ? top : top >> 1)};
  case IR_REDUCER_MAX: /* the lowest value */
    return f ? (ir_eval_val){.f = -INFINITY} : (ir_eval_val){.i = u ? 0 : norm(t, ~(top >> 1))};
  default:
    return f ? (ir_eval_val){.f = 0} : r;
  }
}

typedef struct reduction {
  te_expr *e;
  ir_reduce *r;
  int nvalues;
  ir_eval_val acc[16];
} reduction;

/* Folds the values at the current point of the axes into the accumulators. */
static bool reduce_point(ev *v, reduction *rd) {
  ir_eval_val c, x[16];
  if (rd->r->cond) {
    if (!eval(v, rd->r->cond, 0, &c))
      return false;
    if (!c.i)
      return true; /* a point the condition leaves out */
  }
  for (int i = 0; i < rd->nvalues; i++)
    if (!eval(v, rd->e->args[i], 0, &x[i]))
      return false;
  if (rd->r->kind != IR_REDUCER_CUSTOM) {
    static const ir_expr_kind op[] = {IR_ADD, IR_MUL, IR_MIN, IR_MAX};
    te_dtype t = rd->e->args[0]->dtype;
    ir_expr_kind k = op[rd->r->kind];
    if (t.code == kDLFloat)
      return float_op(k, t, rd->acc[0].f, x[0].f, &rd->acc[0].f);
    return int_op(v, k, t, rd->acc[0].i, x[0].i, &rd->acc[0].i);
  }
  ir_custom_reducer *cr = rd->r->custom;
  scope s[32];
  const scope *saved = v->sc;
  for (int i = 0; i < rd->nvalues; i++) { /* lhs: accumulated, rhs: incoming */
    s[2 * i] = (scope){cr->lhs[i], rd->acc[i], i ? &s[2 * i - 1] : saved};
    s[2 * i + 1] = (scope){cr->rhs[i], x[i], &s[2 * i]};
  }
  v->sc = &s[2 * rd->nvalues - 1];
  ir_eval_val next[16];
  bool ok = true;
  for (int i = 0; i < rd->nvalues && ok; i++)
    ok = eval(v, cr->results[i], 0, &next[i]);
  v->sc = saved;
  for (int i = 0; i < rd->nvalues && ok; i++)
    rd->acc[i] = next[i];
  return ok;
}

/* Runs axis `axis` and the ones inside it over their domains (the first axis outermost). */
static bool reduce_axes(ev *v, reduction *rd, int axis) {
  if (axis == rd->r->naxes)
    return reduce_point(v, rd);
  te_expr *x = rd->r->axes[axis];
  ir_eval_val lo, n;
  if (!eval(v, x->u.var.dom_min, 0, &lo) || !eval(v, x->u.var.dom_extent, 0, &n))
    return false;
  const scope *saved = v->sc;
  bool ok = true;
  for (int64_t k = 0; k < n.i && ok; k++) {
    scope s = {x, {.i = lo.i + k}, saved};
    v->sc = &s;
    ok = reduce_axes(v, rd, axis + 1);
  }
  v->sc = saved;
  return ok;
}

static bool reduce(ev *v, te_expr *e, ir_eval_val *out) {
  reduction rd = {e, e->u.reduce, e->nargs, {{0}}};
  if (rd.nvalues < 1 || rd.nvalues > 16)
    return false;
  for (int i = 0; i < rd.nvalues; i++) {
    if (rd.r->kind != IR_REDUCER_CUSTOM) {
      rd.acc[i] = identity(rd.r->kind, e->args[i]->dtype);
    } else if (!eval(v, rd.r->custom->identity[i], 0, &rd.acc[i])) {
      return false;
    }
  }
  if (!reduce_axes(v, &rd, 0))
    return false;
  *out = rd.acc[rd.r->value_index];
  return true;
}

static bool eval(ev *v, te_expr *e, int lane, ir_eval_val *out) {
  ir_eval_val a, b, c;
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    out->i = e->u.i;
    return true;
  case IR_FLOAT:
    out->f = e->u.f;
    return true;
  case IR_VAR:
    return var(v, e, out);
  case IR_NOT:
    if (!eval(v, e->args[0], lane, &a))
      return false;
    out->i = !a.i;
    return true;
  case IR_SELECT: {
    int cl = e->args[0]->dtype.lanes == 1 ? 0 : lane;
    if (!eval(v, e->args[0], cl, &c) || !eval(v, e->args[1], lane, &a) ||
        !eval(v, e->args[2], lane, &b))
      return false;
    *out = c.i ? a : b;
    return true;
  }
  case IR_CAST:
    return cast(v, e, lane, out);
  case IR_CALL:
    return call(v, e, lane, out);
  case IR_RAMP:
    if (!eval(v, e->args[0], 0, &a) || !eval(v, e->args[1], 0, &b))
      return false;
    out->i = norm(e->dtype, (uint64_t)a.i + (uint64_t)lane * (uint64_t)b.i);
    return true;
  case IR_BROADCAST:
    return eval(v, e->args[0], 0, out);
  case IR_LOAD:
    if (!v->env->load || !eval(v, e->args[0], lane, &a))
      return false;
    return v->env->load(v->env->user, e->u.buffer, a.i, out);
  case IR_LET: {
    if (!eval(v, e->args[1], lane, &a))
      return false;
    scope s = {e->args[0], a, v->sc};
    const scope *saved = v->sc;
    v->sc = &s;
    bool ok = eval(v, e->args[2], lane, out);
    v->sc = saved;
    return ok;
  }
  case IR_ACCESS:
    return access(v, e, lane, out);
  case IR_REDUCE:
    return reduce(v, e, out);
  default:
    return binary(v, e, lane, out);
  }
}

bool ir_eval(ir_eval_env *env, te_expr *e, int lane, ir_eval_val *out) {
  if (!env || !e || !out)
    return false;
  ev v = {env, NULL};
  return eval(&v, e, lane, out);
}

bool ir_eval_i64(ir_eval_env *env, te_expr *e, int64_t *out) {
  ir_eval_val r;
  if (!ir_eval(env, e, 0, &r))
    return false;
  *out = r.i;
  return true;
}

bool ir_eval_f64(ir_eval_env *env, te_expr *e, double *out) {
  ir_eval_val r;
  if (!ir_eval(env, e, 0, &r))
    return false;
  *out = r.f;
  return true;
}
