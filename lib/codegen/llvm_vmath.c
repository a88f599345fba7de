/* llvm_vmath.c — exp, log, tanh and sigmoid as inline polynomial code, for scalars and vectors.
 *
 * LLVM has no vector libm of its own: llvm.exp.v16f32 becomes sixteen calls to expf, which
 * makes a vectorized softmax slower than a scalar one. These functions write the math in LLVM
 * IR instead, lane-wise, so a vector stays a vector (and scalar code in loops can be vectorized
 * by LLVM too). The same code serves scalars, so a kernel gives the same numbers whatever the
 * schedule. No runtime dependency: it works the same for JIT and static libraries.
 *
 * Methods (classic ones: Cody-Waite range reduction and short polynomials as in Cephes and
 * fdlibm), accurate to about 1-2 ulp (checked against long-double libm in test_vector_math.c):
 *   exp(x)    x = n*ln2 + r, |r| <= ln2/2 (ln2 in two parts, so n*ln2_hi is exact); exp(r) by
 *             a degree-6 (f32, Cephes expf) or degree-13 (f64, Taylor) polynomial; the result
 *             scaled by 2^n as two factors 2^(n/2) * 2^(n - n/2) built from exponent bits, so
 *             results near overflow and denormal results come out right. x is clamped first
 *             (overflow gives inf, underflow 0), NaN passes through.
 *   log(x)    x = 2^k * m with m in [sqrt(1/2), sqrt(2)) from the bits (denormals scaled
 *             first); log(m) = f - f^2/2 + s*(f^2/2 + R(s^2)), s = f/(2+f), f = m - 1 (fdlibm's
 *             polynomials); plus k*ln2 in two parts. log(0) = -inf, log(x<0) = NaN, log(inf)
 *             = inf, NaN passes through.
 *   tanh(x)   |x| < 0.625: odd polynomial (f32) / rational function (f64) from Cephes;
 *             otherwise sign(x) * (1 - 2 / (exp(2|x|) + 1)).
 *   sigmoid   e = exp(-|x|); 1/(1+e) for x >= 0, e/(1+e) below (never overflows, keeps the
 *             tiny results of very negative x).
 * Polynomials use llvm.fmuladd (fused where the target has FMA). Both paths of a select are
 * computed (branch-free, as vector code must be).
 */
#include <string.h>

#include "llvm_cg.h"

typedef struct vm {
  cg_llvm *cg;
  te_dtype t;  /* the float dtype, lanes included */
  te_dtype it; /* the integer dtype of the same width and lanes */
  bool f64;
  LLVMBuilderRef b;
} vm;

static vm vm_make(cg_llvm *cg, te_dtype t) {
  vm m = {.cg = cg, .t = t, .f64 = t.bits == 64, .b = cg->b};
  m.it = t;
  m.it.code = kDLInt;
  return m;
}

static LLVMValueRef K(vm *m, double c) { return cg_const_float(m->cg, m->t, c); }
static LLVMValueRef KI(vm *m, int64_t c) { return cg_const_int(m->cg, m->it, c); }
static LLVMValueRef add(vm *m, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFAdd(m->b, a, b, "");
}
static LLVMValueRef sub(vm *m, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFSub(m->b, a, b, "");
}
static LLVMValueRef mul(vm *m, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFMul(m->b, a, b, "");
}
static LLVMValueRef fdiv(vm *m, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFDiv(m->b, a, b, "");
}
static LLVMValueRef sel(vm *m, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(m->b, c, a, b, "");
}
static LLVMValueRef cmp(vm *m, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(m->b, p, a, b, "");
}
static LLVMValueRef to_int(vm *m, LLVMValueRef v) {
  return LLVMBuildBitCast(m->b, v, cg_type(m->cg, m->it), "");
}
static LLVMValueRef to_float(vm *m, LLVMValueRef v) {
  return LLVMBuildBitCast(m->b, v, cg_type(m->cg, m->t), "");
}

static LLVMValueRef intrinsic(vm *m, const char *name, int n, LLVMValueRef *args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(m->cg->mod, id, &t, 1);
  return LLVMBuildCall2(m->b, LLVMIntrinsicGetType(m->cg->lctx, id, &t, 1), fn, args, (unsigned)n,
                        "");
}

/* a * b + c, fused where the target has FMA. */
static LLVMValueRef mla(vm *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return intrinsic(m, "llvm.fmuladd", 3, args);
}

/* c[0]*x^(n-1) + ... + c[n-1] (Horner). */
static LLVMValueRef poly(vm *m, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef r = K(m, c[0]);
  for (int i = 1; i < n; i++)
    r = mla(m, r, x, K(m, c[i]));
  return r;
}

/* 2^n for integer n in the normal exponent range. */
static LLVMValueRef pow2i(vm *m, LLVMValueRef n) {
  LLVMValueRef e = LLVMBuildAdd(m->b, n, KI(m, m->f64 ? 1023 : 127), "");
  return to_float(m, LLVMBuildShl(m->b, e, KI(m, m->f64 ? 52 : 23), ""));
}

/* ---------------------------------------------------------------- exp */

static const double exp_p32[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                                 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
/* 1/13!, 1/12!, ..., 1/2! */
static const double exp_p64[] = {
    1.6059043836821613e-10,  2.08767569878680990e-09, 2.50521083854417188e-08,
    2.75573192239858907e-07, 2.75573192239858907e-06, 2.48015873015873016e-05,
    1.98412698412698413e-04, 1.38888888888888889e-03, 8.33333333333333333e-03,
    4.16666666666666667e-02, 1.66666666666666667e-01, 5.0e-01};

LLVMValueRef cg_vm_exp(cg_llvm *cg, te_dtype t, LLVMValueRef x) {
  vm m = vm_make(cg, t);
  double hi = m.f64 ? 710.0 : 89.0, lo = m.f64 ? -746.0 : -104.0;
  double c1 = m.f64 ? 0.693145751953125 : 0.693359375;
  double c2 = m.f64 ? 1.42860682030941723212e-6 : -2.12194440e-4;
  double magic = m.f64 ? 6755399441055744.0 : 12582912.0; /* 1.5 * 2^mantissa bits */
  LLVMValueRef nan = cmp(&m, LLVMRealUNO, x, x);
  LLVMValueRef xc = sel(&m, nan, K(&m, 0), x);
  xc = sel(&m, cmp(&m, LLVMRealOGT, xc, K(&m, hi)), K(&m, hi), xc);
  xc = sel(&m, cmp(&m, LLVMRealOLT, xc, K(&m, lo)), K(&m, lo), xc);
  /* n = round(x / ln2), by adding and removing 1.5 * 2^mbits */
  LLVMValueRef nf =
      sub(&m, add(&m, mul(&m, xc, K(&m, 1.4426950408889634)), K(&m, magic)), K(&m, magic));
  LLVMValueRef r = sub(&m, sub(&m, xc, mul(&m, nf, K(&m, c1))), mul(&m, nf, K(&m, c2)));
  LLVMValueRef q = m.f64 ? poly(&m, r, exp_p64, 12) : poly(&m, r, exp_p32, 6);
  LLVMValueRef p = add(&m, mla(&m, q, mul(&m, r, r), r), K(&m, 1));
  LLVMValueRef n = LLVMBuildFPToSI(m.b, nf, cg_type(cg, m.it), "");
  LLVMValueRef n1 = LLVMBuildAShr(m.b, n, KI(&m, 1), "");
  LLVMValueRef n2 = LLVMBuildSub(m.b, n, n1, "");
  LLVMValueRef res = mul(&m, mul(&m, p, pow2i(&m, n1)), pow2i(&m, n2));
  return sel(&m, nan, x, res);
}

/* ---------------------------------------------------------------- log */

static const double log_odd32[] = {0.24279078841, 0.40000972152};  /* Lg4, Lg2 (w) */
static const double log_even32[] = {0.28498786688, 0.66666662693}; /* Lg3, Lg1 (w) */
static const double log_odd64[] = {1.531383769920937332e-01, 2.222219843214978396e-01,
                                   3.999999999940941908e-01}; /* Lg6, Lg4, Lg2 */
static const double log_even64[] = {1.479819860511658591e-01, 1.818357216161805012e-01,
                                    2.857142874366239149e-01,
                                    6.666666666666735130e-01}; /* Lg7, Lg5, Lg3, Lg1 */

/* x = 2^k * mant with mant in [sqrt(1/2), sqrt(2)); x > 0 finite (denormals included). */
static void log_split(vm *m, LLVMValueRef x, LLVMValueRef *k, LLVMValueRef *mant) {
  int mbits = m->f64 ? 52 : 23, bias = m->f64 ? 1023 : 127;
  int64_t sqrt_half = m->f64 ? 0x3fe6a09e667f3bcdLL : 0x3f3504f3LL;
  int64_t one = m->f64 ? 0x3ff0000000000000LL : 0x3f800000LL;
  int64_t mant_mask = m->f64 ? 0x000fffffffffffffLL : 0x007fffffLL;
  double min_normal = m->f64 ? 2.2250738585072014e-308 : 1.17549435e-38;
  int scale = m->f64 ? 54 : 25;
  LLVMValueRef tiny = cmp(m, LLVMRealOLT, x, K(m, min_normal));
  LLVMValueRef xs = sel(m, tiny, mul(m, x, K(m, (double)(1ULL << scale))), x);
  LLVMValueRef kadj = sel(m, tiny, KI(m, -scale), KI(m, 0));
  LLVMValueRef ix = LLVMBuildAdd(m->b, to_int(m, xs), KI(m, one - sqrt_half), "");
  LLVMValueRef e = LLVMBuildLShr(m->b, ix, KI(m, mbits), "");
  *k = LLVMBuildAdd(m->b, LLVMBuildSub(m->b, e, KI(m, bias), ""), kadj, "");
  LLVMValueRef mb =
      LLVMBuildAdd(m->b, LLVMBuildAnd(m->b, ix, KI(m, mant_mask), ""), KI(m, sqrt_half), "");
  *mant = to_float(m, mb);
}

LLVMValueRef cg_vm_log(cg_llvm *cg, te_dtype t, LLVMValueRef x) {
  vm m = vm_make(cg, t);
  LLVMValueRef k, mant;
  log_split(&m, x, &k, &mant);
  LLVMValueRef f = sub(&m, mant, K(&m, 1));
  LLVMValueRef s = fdiv(&m, f, add(&m, K(&m, 2), f));
  LLVMValueRef z = mul(&m, s, s), w = mul(&m, z, z);
  LLVMValueRef t1 = mul(&m, w, m.f64 ? poly(&m, w, log_odd64, 3) : poly(&m, w, log_odd32, 2));
  LLVMValueRef t2 = mul(&m, z, m.f64 ? poly(&m, w, log_even64, 4) : poly(&m, w, log_even32, 2));
  LLVMValueRef R = add(&m, t2, t1);
  LLVMValueRef hfsq = mul(&m, K(&m, 0.5), mul(&m, f, f));
  LLVMValueRef dk = LLVMBuildSIToFP(m.b, k, cg_type(cg, t), "");
  double ln2_hi = m.f64 ? 6.93147180369123816490e-01 : 6.9313812256e-01;
  double ln2_lo = m.f64 ? 1.90821492927058770002e-10 : 9.0580006145e-06;
  LLVMValueRef r = add(&m, mul(&m, s, add(&m, hfsq, R)), mul(&m, dk, K(&m, ln2_lo)));
  r = add(&m, add(&m, sub(&m, r, hfsq), f), mul(&m, dk, K(&m, ln2_hi)));
  LLVMValueRef inf = K(&m, __builtin_inf());
  r = sel(&m, cmp(&m, LLVMRealOLT, x, K(&m, 0)), K(&m, __builtin_nan("")), r);
  r = sel(&m, cmp(&m, LLVMRealOEQ, x, K(&m, 0)), K(&m, -__builtin_inf()), r);
  r = sel(&m, cmp(&m, LLVMRealOEQ, x, inf), inf, r);
  return sel(&m, cmp(&m, LLVMRealUNO, x, x), x, r);
}

/* ---------------------------------------------------------------- tanh, sigmoid */

static const double tanh_p32[] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                                  1.33314422036E-1, -3.33332819422E-1};
static const double tanh_p64[] = {-9.64399179425052238628E-1, -9.92877231001918586564E1,
                                  -1.61468768441708447952E3};
static const double tanh_q64[] = {1.0, 1.12811678491632931402E2, 2.23548839060100448583E3,
                                  4.84406305325125486048E3};

LLVMValueRef cg_vm_tanh(cg_llvm *cg, te_dtype t, LLVMValueRef x) {
  vm m = vm_make(cg, t);
  LLVMValueRef a = intrinsic(&m, "llvm.fabs", 1, &x);
  LLVMValueRef z = mul(&m, x, x), small;
  if (m.f64) {
    LLVMValueRef pq = fdiv(&m, poly(&m, z, tanh_p64, 3), poly(&m, z, tanh_q64, 4));
    small = mla(&m, mul(&m, x, z), pq, x);
  } else {
    small = mla(&m, mul(&m, poly(&m, z, tanh_p32, 5), z), x, x);
  }
  LLVMValueRef e = cg_vm_exp(cg, t, add(&m, a, a));
  LLVMValueRef large = sub(&m, K(&m, 1), fdiv(&m, K(&m, 2), add(&m, e, K(&m, 1))));
  LLVMValueRef args[2] = {large, x};
  large = intrinsic(&m, "llvm.copysign", 2, args);
  return sel(&m, cmp(&m, LLVMRealOLT, a, K(&m, 0.625)), small, large);
}

LLVMValueRef cg_vm_sigmoid(cg_llvm *cg, te_dtype t, LLVMValueRef x) {
  vm m = vm_make(cg, t);
  LLVMValueRef a = intrinsic(&m, "llvm.fabs", 1, &x);
  LLVMValueRef e = cg_vm_exp(cg, t, LLVMBuildFNeg(m.b, a, ""));
  LLVMValueRef d = add(&m, K(&m, 1), e);
  LLVMValueRef pos = cmp(&m, LLVMRealOGE, x, K(&m, 0));
  return sel(&m, pos, fdiv(&m, K(&m, 1), d), fdiv(&m, e, d));
}
