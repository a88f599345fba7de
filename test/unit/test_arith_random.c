/* test_arith_random.c — property tests of ir_simplify on random expressions (seeded, so every
 * run checks the same cases; a failure prints the expression, its simplification and the point).
 *
 * Integers: random trees over + - * // % min max select (conditions: comparisons, and/or/not)
 * with small constants and four i64 variables, three of them bound to small ranges that include
 * negative values. Each expression is simplified, simplified again (must be the same pointer),
 * and both are evaluated by the reference interpreter at random points inside the ranges: where
 * the original is defined (no division by zero, no i64 overflow) the simplified expression must
 * be defined, equal, and inside ir_const_bound_of(e). Floats: trees over + - * / min max select
 * on f32/f64 variables; the values must agree bit for bit (folding computes in the same
 * precision) or both be NaN.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arith_util.h"
#include "ir_eval.h"

ARITH_FIXTURE(arith_random);

/* ---------------------------------------------------------------- generator */

static uint64_t rng;
static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static int64_t ir_floordiv64_test(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}
static int64_t range(int64_t lo, int64_t hi) {
  return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1));
}
static bool chance(int percent) { return (int)(next() % 100) < percent; }

#define NVARS 4
static te_expr *vars[NVARS];
static const int64_t lo[NVARS] = {-5, 0, -3, -6}, hi[NVARS] = {4, 7, 3, 6}; /* inclusive */

static te_expr *gen_int(int depth);

static te_expr *gen_bool(int depth) {
  if (depth > 0 && chance(25)) {
    int k = (int)range(0, 2);
    if (k == 0)
      return ir_not(gen_bool(depth - 1));
    return ir_binary(k == 1 ? IR_AND : IR_OR, gen_bool(depth - 1), gen_bool(depth - 1));
  }
  static const ir_expr_kind cmps[] = {IR_LT, IR_LE, IR_GT, IR_GE, IR_EQ, IR_NE};
  te_expr *a = gen_int(depth - 1);
  if (chance(30)) /* scaled forms: common factors divide out */
    a = ADD(MUL(a, I(range(2, 6))), MUL(gen_int(depth - 2), I(range(2, 6) * 2)));
  return ir_binary(cmps[range(0, 5)], a, chance(50) ? gen_int(depth - 1) : I(range(-20, 20)));
}

static te_expr *gen_divisor(int depth) {
  if (chance(75)) {
    int64_t c = range(1, 9);
    if (chance(15))
      c = -c;
    if (chance(30))
      c = (int64_t)1 << range(1, 5);
    return I(c);
  }
  return gen_int(depth - 1);
}

static te_expr *gen_int(int depth) {
  if (depth <= 0 || chance(20)) {
    if (chance(60))
      return vars[range(0, NVARS - 1)];
    return I(range(-8, 8));
  }
  switch (range(0, 9)) {
  case 0:
  case 1:
    return ADD(gen_int(depth - 1), gen_int(depth - 1));
  case 2:
    return SUB(gen_int(depth - 1), gen_int(depth - 1));
  case 3:
    return MUL(gen_int(depth - 1), chance(70) ? I(range(-4, 8)) : gen_int(depth - 2));
  case 4:
    return DIV(gen_int(depth - 1), gen_divisor(depth));
  case 5:
    return MOD(gen_int(depth - 1), gen_divisor(depth));
  case 6:
    return MIN(gen_int(depth - 1), gen_int(depth - 1));
  case 7:
    return MAX(gen_int(depth - 1), gen_int(depth - 1));
  case 8:
    return ir_select(gen_bool(depth - 1), gen_int(depth - 1), gen_int(depth - 1));
  default: { /* split/fuse shapes: (a*c + b) // c, (a*c + b) % c, (a // c)*c + a % c,
                a - (a // c)*c, with a often a sum with a constant */
    te_expr *a = gen_int(depth - 1), *c = I(range(2, 8));
    if (chance(50))
      a = ADD(a, I(range(-9, 9)));
    switch (range(0, 3)) {
    case 0:
      return DIV(ADD(MUL(a, c), gen_int(depth - 1)), c);
    case 1:
      return MOD(ADD(MUL(a, c), gen_int(depth - 1)), c);
    case 2:
      return ADD(MUL(DIV(a, c), MUL(c, I(range(1, 3)))), MUL(MOD(a, c), I(range(1, 3))));
    default:
      return ADD(SUB(a, MUL(DIV(a, c), c)), I(range(-3, 3)));
    }
  }
  }
}

/* ---------------------------------------------------------------- checking */

static void report(const char *what, te_expr *e, te_expr *s, const int64_t *pt) {
  char *es = ir_expr_to_string(e), *ss = s ? ir_expr_to_string(s) : NULL;
  cr_log_error("%s\n  expr: %s\n  simp: %s\n  at x=%lld y=%lld z=%lld w=%lld", what, es,
               ss ? ss : "(null)", (long long)pt[0], (long long)pt[1], (long long)pt[2],
               (long long)pt[3]);
  free(es);
  free(ss);
}

/* How a random point is drawn (inside the ranges bound in the analyzer). */
static bool symbolic_ranges;
static void draw_point(int64_t pt[NVARS]) {
  for (int i = 0; i < NVARS; i++)
    pt[i] = range(lo[i], hi[i]);
  if (symbolic_ranges) { /* z in [x//2, x//2 + 3), w in [y - 2, y - 2 + x%3 + 1) */
    pt[2] = ir_floordiv64_test(pt[0], 2) + range(0, 2);
    pt[3] = pt[1] - 2 + range(0, ((pt[0] % 3) + 3) % 3);
  }
}

/* Checks e against its simplification at npoints random points; returns the failures. */
static int check_int(te_expr *e, int npoints, long *evaluated) {
  te_expr *s = ir_simplify(an, e);
  int64_t pt[NVARS] = {0};
  if (!s) {
    report(te_last_error(ctx), e, NULL, pt);
    return 1;
  }
  if (ir_simplify(an, s) != s) {
    report("not idempotent", e, s, pt);
    return 1;
  }
  ir_const_bound b = ir_const_bound_of(an, e); /* must hold at every point too */
  for (int p = 0; p < npoints; p++) {
    ir_eval_val vals[NVARS];
    draw_point(pt);
    for (int i = 0; i < NVARS; i++)
      vals[i].i = pt[i];
    ir_eval_env env = {.n = NVARS, .vars = vars, .vals = vals};
    int64_t want, got;
    if (!ir_eval_i64(&env, e, &want) || env.overflow)
      continue;
    (*evaluated)++;
    if (!ir_eval_i64(&env, s, &got)) {
      report("simplified expression undefined where the original is defined", e, s, pt);
      return 1;
    }
    if (want < b.min || want > b.max) {
      char msg[96];
      snprintf(msg, sizeof msg, "value %lld outside the constant bound [%lld, %lld]",
               (long long)want, (long long)b.min, (long long)b.max);
      report(msg, e, s, pt);
      return 1;
    }
    if (got != want) {
      char msg[96];
      snprintf(msg, sizeof msg, "value changed: %lld, want %lld", (long long)got, (long long)want);
      report(msg, e, s, pt);
      return 1;
    }
  }
  return 0;
}

static void make_vars(bool bind) {
  static const char *names[NVARS] = {"x", "y", "z", "w"};
  for (int i = 0; i < NVARS; i++)
    vars[i] = V(names[i]);
  if (!bind)
    return;
  for (int i = 0; i < NVARS - 1; i++)
    BIND(vars[i], lo[i], hi[i] - lo[i] + 1); /* w stays free */
  if (symbolic_ranges) {                     /* y free: w's range is known only relative to y */
    te_expr *x = vars[0], *y = vars[1];
    ir_analyzer_unbind(an, y);
    ir_analyzer_bind(an, vars[2], DIV(x, I(2)), I(3));
    ir_analyzer_bind(an, vars[3], SUB(y, I(2)), ADD(MOD(x, I(3)), I(1)));
  }
}

static void run_int(uint64_t seed, bool bind, int count) {
  rng = seed;
  make_vars(bind);
  int failures = 0;
  long evaluated = 0;
  for (int n = 0; n < count && failures < 10; n++) {
    te_expr *e = chance(80) ? gen_int((int)range(2, 5)) : gen_bool((int)range(2, 4));
    cr_assert_not_null(e, "generator: %s", te_last_error(ctx));
    failures += check_int(e, 24, &evaluated);
  }
  cr_expect_eq(failures, 0, "%d of %d expressions failed", failures, count);
  cr_expect_gt(evaluated, (long)count * 10, "too few points were defined (%ld)", evaluated);
  cr_log_info("%d random expressions, %ld evaluations checked", count, evaluated);
}

Test(arith_random, ints_with_bounds) { run_int(12345, true, 4000); }
Test(arith_random, ints_without_bounds) { run_int(777, false, 2000); }
Test(arith_random, ints_with_symbolic_ranges) {
  symbolic_ranges = true;
  run_int(31337, true, 3000);
}

/* ---------------------------------------------------------------- floats */

static te_expr *fvars[3];

static te_expr *gen_float(te_dtype t, int depth) {
  te_expr *v = ir_is_float(t) && t.bits == 32 ? fvars[range(0, 1)] : fvars[2];
  if (depth <= 0 || chance(20)) {
    static const double consts[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.25, 1e-3, 1e30};
    return chance(60) ? v : ir_float(ctx, t, consts[range(0, 8)]);
  }
  static const ir_expr_kind ops[] = {IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MIN, IR_MAX};
  if (chance(12)) {
    static const ir_expr_kind cmps[] = {IR_LT, IR_LE, IR_EQ, IR_NE};
    te_expr *c = ir_binary(cmps[range(0, 3)], gen_float(t, depth - 1), gen_float(t, depth - 1));
    return ir_select(c, gen_float(t, depth - 1), gen_float(t, depth - 1));
  }
  return ir_binary(ops[range(0, 5)], gen_float(t, depth - 1), gen_float(t, depth - 1));
}

static bool same_float(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof a) == 0;
}

Test(arith_random, floats) {
  rng = 4242;
  fvars[0] = ir_var_new(ctx, "a", TE_F32, IR_VAR_PARAM);
  fvars[1] = ir_var_new(ctx, "b", TE_F32, IR_VAR_PARAM);
  fvars[2] = ir_var_new(ctx, "d", TE_F64, IR_VAR_PARAM);
  int failures = 0, count = 1500;
  static const double pts[] = {0.0, -0.0, 1.0, -2.5, 0.1, 1e20, -1e-20, INFINITY, NAN, 3.0};
  for (int n = 0; n < count && failures < 10; n++) {
    te_dtype t = chance(60) ? TE_F32 : TE_F64;
    te_expr *e = gen_float(t, (int)range(1, 4)), *s = ir_simplify(an, e);
    cr_assert_not_null(s, "%s", te_last_error(ctx));
    cr_expect_eq(ir_simplify(an, s), s, "not idempotent");
    for (int p = 0; p < 12; p++) {
      ir_eval_val vals[3];
      for (int i = 0; i < 3; i++)
        vals[i].f = i < 2 ? (double)(float)pts[range(0, 9)] : pts[range(0, 9)];
      ir_eval_env env = {.n = 3, .vars = fvars, .vals = vals};
      double want, got;
      cr_assert(ir_eval_f64(&env, e, &want));
      cr_assert(ir_eval_f64(&env, s, &got));
      if (!same_float(want, got)) {
        char *es = ir_expr_to_string(e), *ss = ir_expr_to_string(s);
        cr_log_error("float value changed: %g, want %g\n  expr: %s\n  simp: %s", got, want, es, ss);
        free(es);
        free(ss);
        failures++;
        break;
      }
    }
  }
  cr_expect_eq(failures, 0);
}
