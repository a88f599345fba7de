/* test_vulkan_math64.c — f64 math functions in Vulkan kernels (lib/codegen/spirv_math64*.c),
 * RUN on the machine's Vulkan device (lavapipe on CPU-only machines) and compared, in ulp, with
 * glibc's long double functions (correct to far below a double's ulp, so the error measured is
 * the kernel's own), on random inputs over each function's whole range and on special values
 * (0, -0, +-inf, NaN, subnormals, the edges of over- and underflow, near multiples of pi/2, huge
 * arguments of sin/cos/tan up to DBL_MAX, the pow table of C99 Annex F). Each kernel's SPIR-V is
 * validated in-process (TE_DEBUG builds) and by spirv-val. The max error of each function is
 * printed (stderr) and held to a bound.
 *
 * Without a Vulkan driver the test is skipped (TE_REQUIRE=vulkan makes that a failure).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "../common/te_test.h"

TestSuite(vulkan_math64, .init = tt_setup, .fini = tt_teardown);

enum { N = 4096 };

typedef struct m64_case {
  const char *fn;
  long double (*ref)(long double x, long double y);
  double max_ulp;
  /* input k of N (x, and y for pow) from a random u in [0, 1) and a second one v */
  void (*input)(int k, double u, double v, double *x, double *y);
} m64_case;

static uint64_t rng_state;
static double rng_unit(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

/* |x| = 2^e for e uniform in [lo, hi], a random sign when both_signs */
static double log_uniform(double u, double v, double lo, double hi, bool both_signs) {
  double x = exp2(lo + (hi - lo) * u);
  return both_signs && v < 0.5 ? -x : x;
}

static const double m64_specials[] = {
    0.0,  -0.0, INFINITY, -INFINITY, NAN,        1.0,     -1.0,     0.5,    -0.5,   2.0,
    -2.0, 3.0,  DBL_MIN,  0x1p-1074, -0x1p-1074, DBL_MAX, -DBL_MAX, 1e-300, -1e-300};
enum { NSPECIAL = sizeof m64_specials / sizeof m64_specials[0] };

static long double r_exp(long double x, long double y) { return (void)y, expl(x); }
static long double r_exp2(long double x, long double y) { return (void)y, exp2l(x); }
static long double r_log(long double x, long double y) { return (void)y, logl(x); }
static long double r_log2(long double x, long double y) { return (void)y, log2l(x); }
static long double r_log10(long double x, long double y) { return (void)y, log10l(x); }
static long double r_sin(long double x, long double y) { return (void)y, sinl(x); }
static long double r_cos(long double x, long double y) { return (void)y, cosl(x); }
static long double r_tan(long double x, long double y) { return (void)y, tanl(x); }
static long double r_tanh(long double x, long double y) { return (void)y, tanhl(x); }
static long double r_erf(long double x, long double y) { return (void)y, erfl(x); }
static long double r_pow(long double x, long double y) { return powl(x, y); }
static long double r_sigmoid(long double x, long double y) {
  (void)y;
  return x < 0 ? expl(x) / (1 + expl(x)) : 1 / (1 + expl(-x));
}

static void in_exp(int k, double u, double v, double *x, double *y) {
  (void)y;
  *x = k % 3 == 0   ? -745.2 + 1455.0 * u
       : k % 3 == 1 ? log_uniform(u, v, -60, 3, true)
                    : -745.2 + 40 * u; /* subnormal results */
}
static void in_exp2(int k, double u, double v, double *x, double *y) {
  (void)y;
  *x = k % 3 == 0   ? -1076 + 2101.0 * u
       : k % 3 == 1 ? log_uniform(u, v, -60, 4, true)
                    : -1076 + 54 * u;
}
static void in_log(int k, double u, double v, double *x, double *y) {
  (void)y;
  /* every exponent, and around 1 (where log is smallest) */
  *x = k % 2 ? log_uniform(u, v, -1074, 1023.9, false) : 1 + log_uniform(u, v, -50, -1, true);
}
static void in_trig(int k, double u, double v, double *x, double *y) {
  (void)y;
  if (k == NSPECIAL) /* the double closest to a multiple of pi/2 (|x - k pi/2| ~ 2^-61) */
    *x = 0x1.6ac5b262ca1ffp+849;
  else if (k % 5 == 0)
    *x = -10 + 20 * u;
  else if (k % 5 == 1)
    *x = log_uniform(u, v, -30, 27, true);
  else if (k % 5 == 2) /* the doubles nearest to multiples of pi/2 */
    *x = (double)((long double)floor(u * 1e6) * 1.5707963267948966192313216916397514L);
  else if (k % 5 == 3) /* both sides of 2^27, where the reduction changes */
    *x = (v < 0.5 ? -1 : 1) * (0x1p27 * 0.999 + 0x1p27 * 0.002 * u);
  else /* huge: Payne-Hanek */
    *x = log_uniform(u, v, 27, 1023.99, true);
}
static void in_tanh(int k, double u, double v, double *x, double *y) {
  (void)y;
  *x = k % 2 ? -25 + 50 * u : log_uniform(u, v, -40, 2, true);
}
static void in_sigmoid(int k, double u, double v, double *x, double *y) {
  (void)y;
  *x = k % 2 ? -800 + 1600 * u : log_uniform(u, v, -40, 6, true);
}
static void in_erf(int k, double u, double v, double *x, double *y) {
  (void)y;
  *x = k % 3 == 0 ? -7 + 14 * u : k % 3 == 1 ? log_uniform(u, v, -40, 1.6, true) : 2.9 + 0.2 * u;
}
/* pow: the special table (x, y each of the specials), then random x with y bringing x^y near
   every magnitude, integer y of both parities for negative x */
static void in_pow(int k, double u, double v, double *x, double *y) {
  static const double ys[] = {0.0, -0.0, 1, -1, 2, -2, 3, -3, 0.5, -0.5, INFINITY, -INFINITY, NAN};
  enum { NY = sizeof ys / sizeof ys[0] };
  if (k < NSPECIAL * NY) {
    *x = m64_specials[k / NY], *y = ys[k % NY];
    return;
  }
  double w = rng_unit();
  *x = log_uniform(u, v, -20, 20, false);
  if (k % 3 == 0) { /* x^y anywhere in [2^-1070, 2^1020] */
    *y = (-1070 + 2090 * w) / log2(*x);
  } else if (k % 3 == 1) {
    *x = -*x, *y = floor(-60 + 120 * w);
  } else {
    *y = -40 + 80 * w;
  }
}

/* The distance of got from the exact want in units of want's last place (subnormals: 2^-1074). */
static double ulp_error(double got, long double want) {
  if (isnan(want) || isinf((double)want)) /* NaN, inf, and what overflows in f64 */
    return (isnan(want) ? isnan(got) : got == (double)want) ? 0 : INFINITY;
  if (isnan(got) || isinf(got))
    return INFINITY;
  int e;
  frexpl(want, &e);
  long double ulp = ldexpl(1, (e - 1 < -1022 ? -1022 : e - 1) - 52);
  return (double)(fabsl((long double)got - want) / ulp);
}

static te_module *m64_build(const m64_case *c, char *kname, te_tensor **A, te_tensor **B,
                            te_tensor **C) {
  te_expr *n = te_int(tt_ctx, N), *i = te_var(tt_ctx, "i");
  *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F64, 1, TE_EXPRS(n)));
  *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F64, 1, TE_EXPRS(n)));
  te_expr *a = tt_at1(*A, i), *b = tt_at1(*B, i);
  te_expr *body = !strcmp(c->fn, "pow") ? te_call(tt_ctx, "pow", 2, TE_EXPRS(a, b))
                                        : te_add(te_call(tt_ctx, c->fn, 1, TE_EXPRS(a)),
                                                 te_mul(b, te_float(tt_ctx, TE_F64, 0)));
  *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), body));
  te_schedule *s = tt_schedule1(*C);
  te_stage *st = tt_stage(s, *C);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), 64, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_module *m = NULL;
  snprintf(kname, 40, "m64_%s", c->fn);
  TT_OK(te_build(s, kname, 3, TT_TENSORS(*A, *B, *C), 0, NULL,
                 TT_NN(te_target_parse(tt_ctx, "vulkan")), &m));
  return m;
}

/* spirv-val on the module's SPIR-V (TE_SAVE_SPIRV), when the tool is installed. */
static void m64_spirv_val(te_module *m, const char *fn) {
  if (system("command -v spirv-val >/dev/null 2>&1") != 0) {
    tt_skip_part("spirv-val", "spirv-val not installed: %s not validated by it", fn);
    return;
  }
  char dir[] = "/tmp/te_m64_XXXXXX", prefix[64], cmd[160];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(prefix, sizeof prefix, "%s/%s", dir, fn);
  TT_OK(te_module_save(m, prefix, TE_SAVE_SPIRV));
  snprintf(cmd, sizeof cmd, "spirv-val --target-env vulkan1.1 %s.spv", prefix);
  int rc = system(cmd);
  snprintf(cmd, sizeof cmd, "%s.spv", prefix);
  remove(cmd);
  rmdir(dir);
  cr_assert_eq(rc, 0, "spirv-val rejected %s's module", fn);
}

static void m64_run(const m64_case *c) {
  te_tensor *A, *B, *C;
  char kname[40];
  te_module *m = m64_build(c, kname, &A, &B, &C);
  const char *dis = TT_NN((void *)te_module_source(m, "spirv-dis"));
  char fname[48];
  snprintf(fname, sizeof fname, "te_%s_f64", c->fn);
  cr_expect(strstr(dis, fname) && strstr(dis, "OpFunctionCall"), "%s: no call of %s:\n%.2000s",
            c->fn, fname, dis);
  m64_spirv_val(m, kname);

  tt_buf *a = TT_ALLOC(TE_F64, N), *b = TT_ALLOC(TE_F64, N), *got = TT_ALLOC(TE_F64, N);
  double *x = a->dl.data, *y = b->dl.data;
  rng_state = 0x5eed0000u + (uint64_t)strlen(c->fn) * 977u + (uint64_t)c->fn[0];
  bool is_pow = !strcmp(c->fn, "pow");
  for (int k = 0; k < N; k++) {
    double u = rng_unit(), v = rng_unit();
    y[k] = 1;
    if (!is_pow && k < NSPECIAL)
      x[k] = m64_specials[k];
    else
      c->input(k, u, v, &x[k], &y[k]);
  }
  tt_poison(got);
  DLTensor *dl[3];
  tt_dl(3, TT_BUFS(a, b, got), dl);
  te_status st = te_module_call(m, kname, 3, dl, 0, NULL);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
    tt_skip("vulkan", "%s: %s", c->fn, te_last_error(tt_ctx));
  if (st == TE_ERR_UNSUPPORTED && strstr(te_last_error(tt_ctx), "Float64"))
    tt_skip("vulkan-float64", "%s: %s", c->fn, te_last_error(tt_ctx));
  TT_OK(st);
  const double *r = got->dl.data;
  double worst = 0;
  int worst_k = 0, bad = 0;
  for (int k = 0; k < N; k++) {
    long double want = c->ref(x[k], y[k]);
    double err = ulp_error(r[k], want);
    /* zeros: the sign too */
    if (want == 0 && r[k] == 0 && signbit(r[k]) != signbit((double)want))
      err = INFINITY;
    if (err > worst)
      worst = err, worst_k = k;
    if (err > c->max_ulp && bad++ < 8)
      cr_expect(false, "%s(%a, y = %a) = %a, want %a (%.3g ulp)", c->fn, x[k], y[k], r[k],
                (double)want, err);
  }
  char at[80];
  if (is_pow)
    snprintf(at, sizeof at, "%a, %a", x[worst_k], y[worst_k]);
  else
    snprintf(at, sizeof at, "%a", x[worst_k]);
  fprintf(stderr, "vulkan_math64: %s f64: max error %.3f ulp (at %s(%s)) over %d inputs\n", c->fn,
          worst, c->fn, at, N);
  cr_expect_eq(bad, 0, "%s: %d of %d results beyond %.1f ulp (max %.3g)", c->fn, bad, N, c->max_ulp,
               worst);
}

#define M64_TEST(name, ref, ulps, input)                                                           \
  Test(vulkan_math64, name) {                                                                      \
    static const m64_case c = {#name, ref, ulps, input};                                           \
    m64_run(&c);                                                                                   \
  }

M64_TEST(exp, r_exp, 2, in_exp)
M64_TEST(exp2, r_exp2, 2, in_exp2)
M64_TEST(log, r_log, 2, in_log)
M64_TEST(log2, r_log2, 2, in_log)
M64_TEST(log10, r_log10, 2, in_log)
M64_TEST(sin, r_sin, 2, in_trig)
M64_TEST(cos, r_cos, 2, in_trig)
M64_TEST(tan, r_tan, 3, in_trig)
M64_TEST(tanh, r_tanh, 3, in_tanh)
M64_TEST(sigmoid, r_sigmoid, 3, in_sigmoid)
M64_TEST(erf, r_erf, 6, in_erf)
M64_TEST(pow, r_pow, 3, in_pow)
