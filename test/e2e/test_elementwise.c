/* test_elementwise.c — element-wise float kernels (arithmetic, math calls, select, min/max) on
 * f32 and f64, each under every generic schedule and at shapes 7x13, 37 and 1x1, against a
 * plain C reference computed in double.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(elementwise, .init = tt_setup, .fini = tt_teardown);

static te_expr *cst(te_expr *like, double v) { return te_const(tt_ctx, te_expr_dtype(like), v); }
static te_expr *call1(const char *fn, te_expr *a) { return te_call(tt_ctx, fn, 1, TE_EXPRS(a)); }

/* Runs the map with every input f32, then with every input f64. */
static void run_f32_f64(tt_map m) {
  for (int k = 0; k < m.nin; k++)
    m.in_dtype[k] = TE_F32;
  m.out_dtype = TE_F32;
  tt_run_map_all(&m);
  for (int k = 0; k < m.nin; k++)
    m.in_dtype[k] = TE_F64;
  m.out_dtype = TE_F64;
  tt_run_map_all(&m);
}

#define IN(k) tt_get(in[k], i)
#define REF(fn, expr)                                                                              \
  static void fn(tt_buf *const in[], tt_buf *out, int64_t i) { tt_set(out, i, (expr)); }

/* a + b - a * 0.5 */
static te_expr *b_add(te_expr *const v[]) {
  return te_sub(te_add(v[0], v[1]), te_mul(v[0], cst(v[0], 0.5)));
}
REF(r_add, IN(0) + IN(1) - IN(0) * 0.5)
Test(elementwise, add_sub_mul) {
  run_f32_f64((tt_map){"add", 2, {{0}}, {0}, {0}, b_add, r_add, TE_F32});
}

/* a * b / (b + 3) */
static te_expr *b_div(te_expr *const v[]) {
  return te_div(te_mul(v[0], v[1]), te_add(v[1], cst(v[1], 3.0)));
}
REF(r_div, IN(0) * IN(1) / (IN(1) + 3.0))
Test(elementwise, div) { run_f32_f64((tt_map){"div", 2, {{0}}, {0}, {0}, b_div, r_div, TE_F32}); }

static te_expr *b_fma(te_expr *const v[]) { return te_call(tt_ctx, "fma", 3, v); }
REF(r_fma, fma(IN(0), IN(1), IN(2)))
Test(elementwise, fma_call) {
  run_f32_f64((tt_map){"fma", 3, {{0}}, {0}, {0}, b_fma, r_fma, TE_F32});
}

static te_expr *b_exp(te_expr *const v[]) { return call1("exp", v[0]); }
REF(r_exp, exp(IN(0)))
Test(elementwise, exp) { run_f32_f64((tt_map){"exp", 1, {{0}}, {0}, {0}, b_exp, r_exp, TE_F32}); }

static te_expr *b_log(te_expr *const v[]) { return call1("log", v[0]); }
REF(r_log, log(IN(0)))
Test(elementwise, log) {
  run_f32_f64((tt_map){"log", 1, {{0}}, {0.1}, {4.0}, b_log, r_log, TE_F32});
}

static te_expr *b_sqrt(te_expr *const v[]) { return call1("sqrt", v[0]); }
REF(r_sqrt, sqrt(IN(0)))
Test(elementwise, sqrt) {
  run_f32_f64((tt_map){"sqrt", 1, {{0}}, {0.1}, {4.0}, b_sqrt, r_sqrt, TE_F32});
}

static te_expr *b_tanh(te_expr *const v[]) { return call1("tanh", te_mul(v[0], cst(v[0], 2.0))); }
REF(r_tanh, tanh(IN(0) * 2.0))
Test(elementwise, tanh) {
  run_f32_f64((tt_map){"tanh", 1, {{0}}, {0}, {0}, b_tanh, r_tanh, TE_F32});
}

static te_expr *b_pow(te_expr *const v[]) { return te_call(tt_ctx, "pow", 2, v); }
REF(r_pow, pow(IN(0), IN(1)))
Test(elementwise, pow) {
  run_f32_f64((tt_map){"pow", 2, {{0}}, {0.1, -2.0}, {3.0, 2.0}, b_pow, r_pow, TE_F32});
}

static te_expr *b_abs(te_expr *const v[]) { return call1("abs", v[0]); }
REF(r_abs, fabs(IN(0)))
Test(elementwise, abs) { run_f32_f64((tt_map){"abs", 1, {{0}}, {0}, {0}, b_abs, r_abs, TE_F32}); }

/* max(min(a, b), -c) */
static te_expr *b_minmax(te_expr *const v[]) { return te_max(te_min(v[0], v[1]), te_neg(v[2])); }
REF(r_minmax, fmax(fmin(IN(0), IN(1)), -IN(2)))
Test(elementwise, min_max_neg) {
  run_f32_f64((tt_map){"minmax", 3, {{0}}, {0}, {0}, b_minmax, r_minmax, TE_F32});
}

/* a < b ? a : b * 2 */
static te_expr *b_select(te_expr *const v[]) {
  return te_select(te_lt(v[0], v[1]), v[0], te_mul(v[1], cst(v[1], 2.0)));
}
REF(r_select, IN(0) < IN(1) ? IN(0) : IN(1) * 2.0)
Test(elementwise, select) {
  run_f32_f64((tt_map){"select", 2, {{0}}, {0}, {0}, b_select, r_select, TE_F32});
}

/* (a >= 0 && b <= 1) || !(a != b) ? a : -b, exercising every comparison and logic op */
static te_expr *b_logic(te_expr *const v[]) {
  te_expr *c1 = te_and(te_ge(v[0], cst(v[0], 0)), te_le(v[1], cst(v[1], 1)));
  te_expr *c2 = te_or(c1, te_not(te_ne(v[0], v[1])));
  te_expr *c3 = te_or(c2, te_and(te_gt(v[0], v[1]), te_eq(v[0], v[0])));
  return te_select(c3, v[0], te_neg(v[1]));
}
REF(r_logic, ((IN(0) >= 0 && IN(1) <= 1) || IN(0) == IN(1) || IN(0) > IN(1)) ? IN(0) : -IN(1))
Test(elementwise, comparisons_and_logic) {
  run_f32_f64((tt_map){"logic", 2, {{0}}, {0}, {0}, b_logic, r_logic, TE_F32});
}

/* The rest of the float-only calls, each under two schedules at 7x13. */
static const char *fn_name;
static double (*fn_ref)(double);
static te_expr *b_fn(te_expr *const v[]) { return call1(fn_name, v[0]); }
static void r_fn(tt_buf *const in[], tt_buf *out, int64_t i) { tt_set(out, i, fn_ref(IN(0))); }
static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double rsqrt(double x) { return 1.0 / sqrt(x); }

Test(elementwise, more_math_calls) {
  static const struct {
    const char *name;
    double (*ref)(double);
    double lo, hi;
  } fns[] = {{"exp2", exp2, 0, 0},     {"log2", log2, 0.1, 4},     {"log10", log10, 0.1, 4},
             {"rsqrt", rsqrt, 0.1, 4}, {"sin", sin, 0, 0},         {"cos", cos, 0, 0},
             {"tan", tan, -1.2, 1.2},  {"sigmoid", sigmoid, 0, 0}, {"erf", erf, 0, 0},
             {"floor", floor, -5, 5},  {"ceil", ceil, -5, 5},      {"trunc", trunc, -5, 5},
             {"round", round, -5, 5}};
  for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
    fn_name = fns[f].name;
    fn_ref = fns[f].ref;
    for (int dt = 0; dt < 2; dt++) {
      tt_map m = {fn_name, 1,    {dt ? TE_F64 : TE_F32}, {fns[f].lo}, {fns[f].hi},
                  b_fn,    r_fn, dt ? TE_F64 : TE_F32};
      tt_run_map(&m, 2, TT_SHAPE(7, 13), TT_S_DEFAULT);
      tt_run_map(&m, 2, TT_SHAPE(7, 13), TT_S_FUSE);
    }
  }
}

/* A float immediate takes the type of the other operand; mixed f32/f64 widens to f64. */
static te_expr *b_mixed(te_expr *const v[]) {
  return te_add(te_mul(v[0], te_float(tt_ctx, TE_F64, 0.25)), v[1]);
}
static void r_mixed(tt_buf *const in[], tt_buf *out, int64_t i) {
  tt_set(out, i, (double)((float)IN(0) * 0.25f) + IN(1));
}
Test(elementwise, promotion_f32_f64) {
  tt_map m = {"mixed", 2, {TE_F32, TE_F64}, {0}, {0}, b_mixed, r_mixed, TE_F64};
  for (int kind = 0; kind < TT_S_COUNT; kind++)
    tt_run_map(&m, 2, TT_SHAPE(7, 13), kind);
}
