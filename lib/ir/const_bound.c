/* const_bound.c — constant interval bounds of integer expressions.
 *
 * ir_const_bound_of(an, e) gives [min, max] (inclusive, INT64_MIN/MAX standing for -inf/+inf)
 * such that every value e takes under the analyzer's bindings lies inside. Interval arithmetic
 * with saturation: i64 index arithmetic is assumed not to overflow (as in TVM), so an end that
 * would overflow becomes infinite. For narrower types, a result outside the type's range means
 * the value may wrap, and the bound becomes the whole type. Variables: exact values, ranges
 * (symbolic min and extent bounded by recursion), positivity of sizes, reduce-axis domains.
 * Results are cached per node until the bindings change. The public entry also tries the
 * symbolic ranges of loop variables (sym_bound.c) for an end left infinite.
 */
#include "arith_internal.h"

#define NEG IR_NEG_INF
#define POS IR_POS_INF

typedef ir_const_bound bnd;

typedef struct bound_entry {
  uint32_t gen;
  bnd b;
} bound_entry;

/* ---------------------------------------------------------------- integer helpers */

int64_t ir_sat_add(int64_t a, int64_t b) {
  if (a == NEG || b == NEG)
    return NEG;
  if (a == POS || b == POS)
    return POS;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return a > 0 ? POS : NEG;
  return r == NEG ? NEG : r;
}

int64_t ir_sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  bool neg = (a < 0) != (b < 0);
  if (a == NEG || a == POS || b == NEG || b == POS)
    return neg ? NEG : POS;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return neg ? NEG : POS;
  return r;
}

int64_t ir_floordiv64(int64_t a, int64_t b) {
  if (b == -1)
    return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ir_floormod64(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

int64_t ir_gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)x;
}

static int64_t neg_end(int64_t v) { return v == NEG ? POS : v == POS ? NEG : -v; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static bnd full(void) { return (bnd){NEG, POS}; }
static bnd point(int64_t v) { return (bnd){v, v}; }
static bnd neg_bnd(bnd a) { return (bnd){neg_end(a.max), neg_end(a.min)}; }
static bnd join(bnd a, bnd b) { return (bnd){min64(a.min, b.min), max64(a.max, b.max)}; }

ir_const_bound ir_dtype_bound(te_dtype t) {
  if (t.code == kDLUInt && t.bits == 1)
    return (bnd){0, 1};
  if (t.code == kDLInt && t.bits < 64) {
    int64_t h = ((int64_t)1 << (t.bits - 1)) - 1;
    return (bnd){-h - 1, h};
  }
  if (t.code == kDLUInt && t.bits < 64)
    return (bnd){0, (int64_t)(((uint64_t)1 << t.bits) - 1)};
  return full();
}

/* ---------------------------------------------------------------- interval operations */

static bnd add_bnd(bnd a, bnd b) {
  return (bnd){ir_sat_add(a.min, b.min), ir_sat_add(a.max, b.max)};
}
static bnd sub_bnd(bnd a, bnd b) { return add_bnd(a, neg_bnd(b)); }

static bnd mul_bnd(bnd a, bnd b) {
  int64_t p[4] = {ir_sat_mul(a.min, b.min), ir_sat_mul(a.min, b.max), ir_sat_mul(a.max, b.min),
                  ir_sat_mul(a.max, b.max)};
  bnd r = {p[0], p[0]};
  for (int i = 1; i < 4; i++)
    r = join(r, point(p[i]));
  return r;
}

/* floor(x / y) for finite x and 0 < y <= +inf. */
static int64_t fdiv_end(int64_t x, int64_t y) {
  if (y == POS)
    return x >= 0 ? 0 : -1;
  return ir_floordiv64(x, y);
}

/* a // b for b >= 1 (b.max may be +inf). */
static bnd div_pos(bnd a, bnd b) {
  bnd r;
  r.min = a.min == NEG ? NEG : min64(fdiv_end(a.min, b.min), fdiv_end(a.min, b.max));
  r.max = a.max == POS ? POS : max64(fdiv_end(a.max, b.min), fdiv_end(a.max, b.max));
  return r;
}

static bnd floordiv_bnd(bnd a, bnd b) {
  if (b.min == 0)
    b.min = 1; /* division by zero is undefined: ignore that divisor */
  if (b.max == 0)
    b.max = -1;
  if (b.min > b.max)
    return full();
  if (b.min > 0)
    return div_pos(a, b);
  if (b.max < 0)
    return div_pos(neg_bnd(a), neg_bnd(b)); /* a // b == (-a) // (-b) */
  return join(div_pos(a, (bnd){1, b.max}), div_pos(neg_bnd(a), (bnd){1, neg_end(b.min)}));
}

static bnd floormod_bnd(bnd a, bnd b) {
  if (b.min == 0)
    b.min = 1;
  if (b.max == 0)
    b.max = -1;
  if (b.min > b.max)
    return full();
  if (b.min == b.max && b.min != NEG && b.min != POS && a.min != NEG && a.max != POS &&
      ir_floordiv64(a.min, b.min) == ir_floordiv64(a.max, b.min))
    return (bnd){ir_floormod64(a.min, b.min), ir_floormod64(a.max, b.min)};
  if (b.min > 0) {
    bnd r = {0, b.max == POS ? POS : b.max - 1};
    if (a.min >= 0)
      r.max = min64(r.max, a.max);
    return r;
  }
  if (b.max < 0) {
    bnd r = {b.min == NEG ? NEG : b.min + 1, 0};
    if (a.max <= 0)
      r.min = max64(r.min, a.min);
    return r;
  }
  return (bnd){b.min == NEG ? NEG : b.min + 1, b.max == POS ? POS : b.max - 1};
}

static int64_t max_abs(bnd a) { return max64(neg_end(a.min), a.max); }

static bnd truncdiv_bnd(bnd a, bnd b) {
  if (a.min >= 0 && b.min >= 0)
    return floordiv_bnd(a, b);
  int64_t m = max_abs(a);
  return (bnd){neg_end(m), m};
}

static bnd truncmod_bnd(bnd a, bnd b) {
  if (a.min >= 0 && b.min > 0)
    return floormod_bnd(a, b);
  int64_t m = max_abs(b);
  m = m == POS ? POS : m - 1;
  if (a.min >= 0)
    return (bnd){0, min64(m, a.max)};
  if (a.max <= 0)
    return (bnd){max64(neg_end(m), a.min), 0};
  return (bnd){neg_end(m), m};
}

/* ---------------------------------------------------------------- the recursion */

static bnd bound_of(ir_analyzer *an, te_expr *e);

static bnd var_bound(ir_analyzer *an, te_expr *v) {
  const ir_binding *b = ir_map_get(an->vars, v);
  if (b && b->value)
    return bound_of(an, b->value);
  bnd r = full();
  te_expr *min = b ? b->min : NULL, *ext = b ? b->extent : NULL;
  if (!min && v->u.var.kind == IR_VAR_REDUCE) {
    min = v->u.var.dom_min;
    ext = v->u.var.dom_extent;
  }
  if (min && ext) {
    bnd lo = bound_of(an, min), ex = bound_of(an, ext);
    r.min = lo.min;
    r.max = ir_sat_add(lo.max, ir_sat_add(ex.max, -1));
  }
  if (b && b->positive)
    r.min = max64(r.min, 1);
  if (r.min > r.max)
    r = full(); /* an empty range: nothing is known */
  return r;
}

static bnd let_bound(ir_analyzer *an, te_expr *e) {
  te_expr *var = e->args[0];
  const ir_binding *saved = ir_analyzer_lookup(an, var);
  ir_analyzer_bind_value(an, var, e->args[1]);
  bnd r = bound_of(an, e->args[2]);
  ir_analyzer_restore(an, var, saved);
  return r;
}

static bnd call_bound(ir_analyzer *an, te_expr *e) {
  if (e->u.call == IR_INTRIN_ABS && e->nargs == 1) {
    bnd a = bound_of(an, e->args[0]);
    if (a.min >= 0)
      return a;
    if (a.max <= 0)
      return neg_bnd(a);
    return (bnd){0, max_abs(a)};
  }
  return ir_dtype_bound(e->dtype);
}

static bnd ramp_bound(ir_analyzer *an, te_expr *e) {
  bnd base = bound_of(an, e->args[0]), stride = bound_of(an, e->args[1]);
  bnd last = add_bnd(base, mul_bnd(stride, point(e->dtype.lanes - 1)));
  return join(base, last);
}

static bnd cast_bound(ir_analyzer *an, te_expr *e) {
  te_dtype from = e->args[0]->dtype;
  bnd to = ir_dtype_bound(e->dtype);
  if (!ir_is_intlike(from) || (from.code == kDLUInt && from.bits == 64))
    return to;
  bnd a = bound_of(an, e->args[0]);
  return (a.min >= to.min && a.max <= to.max) ? a : to;
}

/* (a + c)//d - a//d with d > 0 is floor(c/d) or ceil(c/d), whatever a is: a split's
   ceil(n/d) - floor(n/d) (its count of tail iterations) is 0 or 1. full() when the operands
   are not of that form. */
static bnd sub_floordiv_bnd(te_expr *x, te_expr *y) {
  int64_t d, d2, c = 0;
  if (x->kind != IR_FLOORDIV || y->kind != IR_FLOORDIV || !ir_is_const_int(x->args[1], &d) ||
      !ir_is_const_int(y->args[1], &d2) || d != d2 || d <= 0)
    return full();
  te_expr *a = y->args[0], *ac = x->args[0];
  if (ac != a && !(ac->kind == IR_ADD && ac->args[0] == a && ir_is_const_int(ac->args[1], &c)))
    return full();
  int64_t lo = fdiv_end(c, d);
  return (bnd){lo, lo + (c % d != 0)};
}

static bnd compute(ir_analyzer *an, te_expr *e) {
  te_expr **x = e->args;
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    return point(e->u.i);
  case IR_VAR:
    return var_bound(an, e);
  case IR_ADD:
    return add_bnd(bound_of(an, x[0]), bound_of(an, x[1]));
  case IR_SUB: {
    bnd r = sub_bnd(bound_of(an, x[0]), bound_of(an, x[1])), q = sub_floordiv_bnd(x[0], x[1]);
    return (bnd){max64(r.min, q.min), min64(r.max, q.max)};
  }
  case IR_MUL:
    return mul_bnd(bound_of(an, x[0]), bound_of(an, x[1]));
  case IR_FLOORDIV:
    return floordiv_bnd(bound_of(an, x[0]), bound_of(an, x[1]));
  case IR_FLOORMOD:
    return floormod_bnd(bound_of(an, x[0]), bound_of(an, x[1]));
  case IR_TRUNCDIV:
    return truncdiv_bnd(bound_of(an, x[0]), bound_of(an, x[1]));
  case IR_TRUNCMOD:
    return truncmod_bnd(bound_of(an, x[0]), bound_of(an, x[1]));
  case IR_MIN: {
    bnd a = bound_of(an, x[0]), b = bound_of(an, x[1]);
    return (bnd){min64(a.min, b.min), min64(a.max, b.max)};
  }
  case IR_MAX: {
    bnd a = bound_of(an, x[0]), b = bound_of(an, x[1]);
    return (bnd){max64(a.min, b.min), max64(a.max, b.max)};
  }
  case IR_SELECT:
    return join(bound_of(an, x[1]), bound_of(an, x[2]));
  case IR_CAST:
    return cast_bound(an, e);
  case IR_LET:
    return let_bound(an, e);
  case IR_CALL:
    return call_bound(an, e);
  case IR_BROADCAST:
    return bound_of(an, x[0]);
  case IR_RAMP:
    return ramp_bound(an, e);
  default:
    return ir_dtype_bound(e->dtype); /* loads, accesses, reductions, booleans */
  }
}

static bool boundable(te_dtype t) { return t.code == kDLInt || (t.code == kDLUInt && t.bits < 64); }

static bnd bound_of(ir_analyzer *an, te_expr *e) {
  if (!e || !boundable(e->dtype))
    return full();
  if (e->kind == IR_INT)
    return point(e->u.i);
  bnd type = ir_dtype_bound(e->dtype);
  if (an->depth > 48)
    return type;
  bound_entry *ent = e->nargs ? ir_map_get(an->bound_cache, e) : NULL;
  if (ent && ent->gen == an->gen)
    return ent->b;
  an->depth++;
  bnd r = compute(an, e);
  an->depth--;
  if (r.min < type.min || r.max > type.max || r.min > r.max)
    r = type;
  if (e->nargs) {
    if (!ent && (ent = ir_alloc(an->ctx, sizeof *ent)) && !ir_map_put(an->bound_cache, e, ent))
      ent = NULL;
    if (ent) {
      ent->gen = an->gen;
      ent->b = r;
    }
  }
  return r;
}

ir_const_bound ir_const_bound_raw(ir_analyzer *an, te_expr *e) {
  if (!an || !e)
    return full();
  return bound_of(an, e);
}

ir_const_bound ir_const_bound_of(ir_analyzer *an, te_expr *e) {
  if (!an || !e)
    return full();
  bnd b = bound_of(an, e);
  if (b.min == NEG || b.max == POS)
    b = ir_sym_tighten(an, e, b);
  return b;
}

/* ---------------------------------------------------------------- upper bounds without clamps */

enum { MAX_RELAXED_CLAMPS = 4 };

/* e with its clamps taken off on the side that can only make it larger: a min(a, b) where e
   grows with it is replaced by a (bit k of pick clear) or b (set), a max(a, b) where e shrinks
   as it grows likewise; k counts such clamps in walk order (*k returns their number). The
   result is >= e. Nodes whose direction is not known keep their clamps. */
static te_expr *drop_clamps(te_expr *e, bool grows, unsigned pick, int *k) {
  if (!e)
    return NULL;
  int64_t c;
  switch (e->kind) {
  case IR_MIN:
  case IR_MAX:
    if ((e->kind == IR_MIN) == grows) {
      int me = (*k)++;
      return drop_clamps(e->args[(pick >> me) & 1], grows, pick, k);
    }
    return e;
  case IR_ADD:
  case IR_SUB: {
    te_expr *a = drop_clamps(e->args[0], grows, pick, k);
    te_expr *b = drop_clamps(e->args[1], e->kind == IR_ADD ? grows : !grows, pick, k);
    return a && b ? ir_binary(e->kind, a, b) : NULL;
  }
  case IR_MUL:
  case IR_FLOORDIV:
    if (ir_is_const_int(e->args[1], &c) && c > 0) {
      te_expr *a = drop_clamps(e->args[0], grows, pick, k);
      return a ? ir_binary(e->kind, a, e->args[1]) : NULL;
    }
    return e;
  default:
    return e;
  }
}

int64_t ir_const_upper_bound(ir_analyzer *an, te_expr *e) {
  int64_t best = ir_const_bound_of(an, e).max;
  int nclamps = 0;
  if (!e || !drop_clamps(e, true, 0, &nclamps) || nclamps == 0)
    return best;
  if (nclamps > MAX_RELAXED_CLAMPS)
    nclamps = MAX_RELAXED_CLAMPS;
  for (unsigned pick = 0; pick < 1u << nclamps; pick++) {
    int k = 0;
    te_expr *r = drop_clamps(e, true, pick, &k);
    te_expr *sr = r ? ir_simplify(an, r) : NULL;
    int64_t b = sr ? ir_const_bound_of(an, sr).max : INT64_MAX;
    if (b < best)
      best = b;
  }
  return best;
}
