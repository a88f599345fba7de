/* test_vector_math.c — exp, log, tanh and sigmoid (te's inline polynomial code, llvm_vmath.c)
 * against long-double libm, in f32 and f64, vectorized (16 / 8 lanes, masked tail) and scalar:
 * error within a few ulp over the whole range (overflow to inf, underflow to denormals and 0,
 * tiny and huge arguments), and the IEEE special values (NaN, +-inf, +-0, negative logs).
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <string.h>

TestSuite(vector_math, .init = tt_setup, .fini = tt_teardown, .timeout = 120);

typedef long double ld;

static ld ref_of(const char *fn, ld x) {
  if (strcmp(fn, "exp") == 0)
    return expl(x);
  if (strcmp(fn, "log") == 0)
    return logl(x);
  if (strcmp(fn, "tanh") == 0)
    return tanhl(x);
  return 1.0L / (1.0L + expl(-x));
}

/* The error of got in units of the last place of the correctly rounded result (f32 or f64). */
static double ulp_error(bool f64, double got, ld ref) {
  if (isnan(ref) || isnan(got))
    return isnan(ref) && isnan(got) ? 0 : INFINITY;
  double r = f64 ? (double)ref : (double)(float)ref;
  if (isinf(r) || isinf(got))
    return r == got ? 0 : INFINITY;
  double a = fabs(r);
  double ulp =
      f64 ? nextafter(a, INFINITY) - a : (double)(nextafterf((float)a, INFINITY) - (float)a);
  return (double)(fabsl((ld)got - ref) / ulp);
}

/* Inputs: a linear sweep of [lo, hi], a geometric sweep of both signs, and special values. */
static int inputs(double *x, int cap, double lo, double hi, bool f64) {
  int n = 0;
  for (int i = 0; i < 6000 && n < cap; i++)
    x[n++] = lo + (hi - lo) * i / 5999.0;
  double tiny = f64 ? 4.9e-324 : 1.4e-45, huge = f64 ? 1.7e308 : 3.4e38;
  for (int i = 0; i < 1000 && n + 2 < cap; i++) {
    double m = exp(log(tiny) + (log(huge) - log(tiny)) * i / 999.0);
    x[n++] = m;
    x[n++] = -m;
  }
  const double special[] = {0.0,
                            -0.0,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            1.0,
                            -1.0,
                            0.5,
                            0.625,
                            -0.625,
                            88.72283935546875,
                            88.7228394,
                            89.0,
                            -87.33654,
                            -103.9,
                            -104.5,
                            709.78,
                            709.79,
                            -708.4,
                            -745.1,
                            -746.0,
                            1e-30,
                            -1e-30,
                            1e-300,
                            2.2250738585072014e-308,
                            1.17549435e-38,
                            1e-40};
  for (size_t i = 0; i < sizeof special / sizeof special[0] && n < cap; i++)
    x[n++] = special[i];
  return n;
}

/* Runs fn over the inputs with the schedule (vectorized or not) and checks the error. */
static void check_fn(te_dtype dt, const char *fn, double lo, double hi, bool vectorized,
                     double max_ulp) {
  enum { CAP = 8200 };
  static double xs[CAP];
  bool f64 = dt.bits == 64;
  int n = inputs(xs, CAP, lo, hi, f64);
  te_tensor *A = tt_placeholder("A", dt, 1, TT_SHAPE(n));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, n)), TE_EXPRS(i),
                                  te_call(tt_ctx, fn, 1, TE_EXPRS(tt_at1(A, i)))));
  te_schedule *s = tt_schedule1(C);
  if (vectorized) {
    te_stage *st = tt_stage(s, C);
    te_iter *o, *in;
    TT_OK(te_split(st, te_axis(st, 0), f64 ? 8 : 16, &o, &in));
    TT_OK(te_vectorize(st, in));
  }
  tt_note("%s f%d %s", fn, dt.bits, vectorized ? "vectorized" : "scalar");
  te_module *m = tt_build(s, "f", 2, TT_TENSORS(A, C), 0, NULL);
  tt_buf *a = TT_ALLOC(dt, n), *c = TT_ALLOC(dt, n);
  for (int k = 0; k < n; k++)
    tt_set(a, k, xs[k]);
  /* Two runs, on two poisons, so that every element is checked against a poison it cannot be
     mistaken for: NaN for the elements with a finite (or infinite) reference, then a finite
     value for the NaN ones (log of a negative, NaN inputs). */
  tt_call(m, "f", 2, TT_BUFS(a, c), 0, NULL);
  double worst = 0, worst_x = 0, worst_got = 0;
  for (int k = 0; k < n; k++) {
    double x = tt_get(a, k), got = tt_get(c, k);
    ld want = ref_of(fn, (ld)x);
    if (isnan(want))
      continue;
    double e = ulp_error(f64, got, want);
    if (!(e <= worst)) {
      worst = e;
      worst_x = x;
      worst_got = got;
    }
  }
  for (int k = 0; k < n; k++)
    tt_set(c, k, 0.75);
  tt_call(m, "f", 2, TT_BUFS(a, c), 0, NULL);
  for (int k = 0; k < n; k++) {
    double x = tt_get(a, k), got = tt_get(c, k);
    if (isnan(ref_of(fn, (ld)x)) && !isnan(got) && !(INFINITY <= worst)) {
      worst = INFINITY;
      worst_x = x;
      worst_got = got;
    }
  }
  cr_log_info("%s f%d %s: max error %.3f ulp", fn, dt.bits, vectorized ? "vector" : "scalar",
              worst);
  cr_expect(worst <= max_ulp, "%s f%d (%s): %.3g ulp at x = %.17g (got %.17g, want %.17Lg)", fn,
            dt.bits, vectorized ? "vectorized" : "scalar", worst, worst_x, worst_got,
            ref_of(fn, (ld)worst_x));
}

static void check_both(const char *fn, double lo32, double hi32, double lo64, double hi64,
                       double max_ulp) {
  for (int v = 0; v < 2; v++) {
    check_fn(TE_F32, fn, lo32, hi32, v, max_ulp);
    check_fn(TE_F64, fn, lo64, hi64, v, max_ulp);
  }
}

Test(vector_math, exp) { check_both("exp", -110, 95, -760, 720, 2); }
Test(vector_math, log) { check_both("log", 1e-6, 1e4, 1e-6, 1e4, 2); }
Test(vector_math, tanh) { check_both("tanh", -25, 25, -40, 40, 3); }
Test(vector_math, sigmoid) { check_both("sigmoid", -120, 120, -800, 800, 3); }
