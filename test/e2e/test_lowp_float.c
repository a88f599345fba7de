/* test_lowp_float.c — f16 and bf16 end to end on the CPU.
 *
 * Conversions, checked bit for bit against the reference conversions of te_test_half.c (which
 * share no code with te's): every one of the 65536 patterns of f16 and bf16 to f32 and to each
 * other; f32 to f16/bf16 over every exponent and significand prefix with the low bits that make
 * ties, near-ties and sticky bits; f64 and integers to f16/bf16 (the cases where rounding through
 * f32 first would round twice). Each runs scalar and vectorized, on the host target (F16C and,
 * where the host has it, AVX512-BF16 instructions) and on plain x86-64 (te's inline code).
 * Arithmetic, reductions with an f32 accumulator, matmul on bf16 inputs, f16 scalar parameters:
 * against an f64 reference within the dtype's tolerance (tt_rtol), under several schedules with
 * tails.
 */
#include "../common/te_test.h"
#include "../common/te_test_half.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

TestSuite(lowp_float, .init = tt_setup, .fini = tt_teardown);

/* The targets every conversion runs on: the host, and the host without F16C or AVX512-BF16
   (LLVM then turns off what needs them, AVX-512 included). */
#define PLAIN_HOST "llvm -mattr=-f16c,-avx512bf16,-avxneconvert,-avx512fp16"
static const char *const targets[] = {"llvm", PLAIN_HOST};

/* out[i] = cast(to, in[i]) for n elements, vectorized by 16 when vec, built for target. */
static te_module *cast_kernel(te_dtype from, te_dtype to, int64_t n, const char *target, bool vec,
                              te_tensor **in_out) {
  te_tensor *A = tt_placeholder("A", from, 1, TT_SHAPE(n));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(
      te_compute(tt_ctx, "C", 1, (te_expr *[]){te_int(tt_ctx, n)}, &i, te_cast(to, tt_at1(A, i))));
  te_schedule *s = tt_schedule1(C);
  if (vec) {
    te_iter *o, *in;
    te_stage *st = tt_stage(s, C);
    TT_OK(te_split(st, te_axis(st, 0), 16, &o, &in));
    TT_OK(te_vectorize(st, in));
  }
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  TT_OK(te_build(s, "cast", 2, TT_TENSORS(A, C), 0, NULL, t, &m));
  in_out[0] = A;
  in_out[1] = C;
  return m;
}

static void run_cast(te_module *m, tt_buf *in, tt_buf *out) {
  tt_poison(out);
  DLTensor *dl[2] = {&in->dl, &out->dl};
  te_status st = te_module_call(m, "cast", 2, dl, 0, NULL);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static const char *name_of(te_dtype t) { return t.code == kDLBfloat ? "bf16" : "f16"; }

/* every 16-bit pattern to f32: exact, NaN quieted (f16) with its sign and payload kept */
Test(lowp_float, half_to_f32_every_pattern) {
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++)
    for (int tg = 0; tg < 2; tg++)
      for (int vec = 0; vec < 2; vec++) {
        te_dtype t = types[ti];
        te_tensor *io[2];
        te_module *m = cast_kernel(t, TE_F32, 65536, targets[tg], vec, io);
        tt_buf *in = TT_ALLOC(t, 65536), *out = TT_ALLOC(TE_F32, 65536);
        for (int h = 0; h < 65536; h++)
          ((uint16_t *)in->dl.data)[h] = (uint16_t)h;
        run_cast(m, in, out);
        int mant = t.code == kDLBfloat ? 7 : 10;
        for (int h = 0; h < 65536; h++) {
          double ref = tt_half_decode(t, (uint16_t)h);
          uint32_t got = f32_bits(((float *)out->dl.data)[h]);
          if (isnan(ref)) {
            uint32_t payload = (uint32_t)(h & ((1 << mant) - 1)) << (23 - mant);
            bool ok = isnan(f32_of(got)) && (got >> 31) == (uint32_t)(h >> 15) &&
                      (got & 0x7fffff & ~0x400000u) == (payload & ~0x400000u) &&
                      (t.code == kDLBfloat || (got & 0x400000));
            cr_assert(ok, "%s -> f32 of NaN 0x%04x on '%s'%s: got 0x%08x", name_of(t), h,
                      targets[tg], vec ? " vectorized" : "", got);
          } else {
            cr_assert_eq(got, f32_bits((float)ref),
                         "%s -> f32 of 0x%04x on '%s'%s: got 0x%08x, want 0x%08x (%g)", name_of(t),
                         h, targets[tg], vec ? " vectorized" : "", got, f32_bits((float)ref), ref);
          }
        }
      }
}

/* True when f32 -> bf16 on target is AVX512-BF16's vcvtneps2bf16, which reads f32 subnormals
   as zero (docs/low-precision.md). */
static int host_bf16 = -1; /* whether the host has AVX512-BF16; -1: not asked yet */
static bool bf16_daz(te_dtype t, const char *target) {
  if (host_bf16 < 0)
    host_bf16 = strstr(te_target_str(tt_target()), "+avx512bf16") != NULL;
  return t.code == kDLBfloat && !strcmp(target, "llvm") && host_bf16;
}

/* The 16-bit result of rounding v (NaN: quiet, same sign, the payload's top bits). */
static void check_round(te_dtype t, double v, uint16_t got, uint64_t in_payload_top,
                        const char *what, const char *target, int vec) {
  uint16_t want = tt_half_encode(t, v);
  if (bf16_daz(t, target) && fabs(v) < 0x1p-126 && strcmp(what, "i32") != 0)
    want = signbit(v) ? 0x8000 : 0; /* below f32's normals: read as a signed zero */
  if (isnan(v)) {
    int mant = t.code == kDLBfloat ? 7 : 10;
    uint16_t exp_mask = (uint16_t)(0x7fff & ~((1 << mant) - 1));
    uint16_t quiet = (uint16_t)(1 << (mant - 1));
    bool ok = (got & exp_mask) == exp_mask && (got & quiet) && (got & 0x8000) == (want & 0x8000) &&
              (uint64_t)(got & (quiet - 1)) == (in_payload_top & (quiet - 1));
    cr_assert(ok, "%s -> %s of a NaN on '%s'%s: got 0x%04x", what, name_of(t), target,
              vec ? " vectorized" : "", got);
    return;
  }
  cr_assert_eq(got, want, "%s -> %s of %.17g (%a) on '%s'%s: got 0x%04x (%g), want 0x%04x (%g)",
               what, name_of(t), v, v, target, vec ? " vectorized" : "", got,
               tt_half_decode(t, got), want, tt_half_decode(t, want));
}

/* f32 -> f16/bf16: every sign, exponent and kept significand, with low bits 0, 1, just below
   the tie, the tie, just above it and all ones: ties to even, sticky bits, carries into the
   exponent, overflow to inf, subnormal results, NaN payloads. */
Test(lowp_float, f32_to_half_rounding) {
  static const uint32_t low_bf16[] = {0, 1, 0x4000, 0x7fff, 0x8000, 0x8001, 0xffff};
  static const uint32_t low_f16[] = {0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff};
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++) {
    te_dtype t = types[ti];
    bool bf = t.code == kDLBfloat;
    int shift = bf ? 16 : 13, nlow = bf ? 7 : 6;
    int64_t nprefix = (int64_t)1 << (32 - shift), n = nprefix * nlow;
    tt_buf *in = TT_ALLOC(TE_F32, n), *out = TT_ALLOC(t, n);
    for (int64_t p = 0; p < nprefix; p++)
      for (int l = 0; l < nlow; l++)
        ((uint32_t *)in->dl.data)[p * nlow + l] =
            (uint32_t)(p << shift) | (bf ? low_bf16[l] : low_f16[l]);
    for (int tg = 0; tg < 2; tg++)
      for (int vec = 0; vec < 2; vec++) {
        te_tensor *io[2];
        te_module *m = cast_kernel(TE_F32, t, n, targets[tg], vec, io);
        run_cast(m, in, out);
        for (int64_t i = 0; i < n; i++) {
          uint32_t u = ((uint32_t *)in->dl.data)[i];
          check_round(t, (double)f32_of(u), ((uint16_t *)out->dl.data)[i],
                      (u & 0x7fffff) >> (23 - (bf ? 7 : 10)), "f32", targets[tg], vec);
        }
      }
  }
}

/* f64 -> f16/bf16 at every tie of the 16-bit format, just beside it (by one f64 ulp and by
   2^-40 relative, where rounding to f32 first would land on the tie and then go to even). */
Test(lowp_float, f64_to_half_rounds_once) {
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++) {
    te_dtype t = types[ti];
    int64_t n = 0, cap = 32768 * 10;
    tt_buf *in = TT_ALLOC(TE_F64, cap), *out = TT_ALLOC(t, cap);
    double *v = in->dl.data;
    int nfinite = t.code == kDLBfloat ? 0x7f80 : 0x7c00;
    for (int h = 0; h + 1 < nfinite && n + 10 <= cap; h++) {
      double a = tt_half_decode(t, (uint16_t)h), b = tt_half_decode(t, (uint16_t)(h + 1));
      double mid = (a + b) / 2;
      double near[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY), mid * (1 + 0x1p-40),
                       mid * (1 - 0x1p-40)};
      for (int k = 0; k < 5; k++) {
        v[n++] = near[k];
        v[n++] = -near[k];
      }
    }
    for (int tg = 0; tg < 2; tg++)
      for (int vec = 0; vec < 2; vec++) {
        te_tensor *io[2];
        te_module *m = cast_kernel(TE_F64, t, cap, targets[tg], vec, io);
        run_cast(m, in, out);
        for (int64_t i = 0; i < n; i++)
          check_round(t, v[i], ((uint16_t *)out->dl.data)[i], 0, "f64", targets[tg], vec);
      }
  }
}

/* integers -> f16/bf16 (i32 beyond f32's 24 bits: rounded once), and f16 <-> bf16 for every
   pattern (one rounding of the exact value). */
Test(lowp_float, ints_and_half_to_half) {
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++) {
    te_dtype t = types[ti], other = ti ? TE_F16 : TE_BF16;
    int64_t n = 65536;
    tt_buf *ii = TT_ALLOC(TE_I32, n), *out = TT_ALLOC(t, n), *hh = TT_ALLOC(other, n);
    for (int64_t k = 0; k < n; k++) {
      int32_t x = (int32_t)(k * 2654435761u);
      ((int32_t *)ii->dl.data)[k] = k < 40000 ? (int32_t)(k - 20000) * 3 : x;
      ((uint16_t *)hh->dl.data)[k] = (uint16_t)k;
    }
    for (int tg = 0; tg < 2; tg++)
      for (int vec = 0; vec < 2; vec++) {
        te_tensor *io[2];
        run_cast(cast_kernel(TE_I32, t, n, targets[tg], vec, io), ii, out);
        for (int64_t k = 0; k < n; k++)
          check_round(t, (double)((int32_t *)ii->dl.data)[k], ((uint16_t *)out->dl.data)[k], 0,
                      "i32", targets[tg], vec);
        run_cast(cast_kernel(other, t, n, targets[tg], vec, io), hh, out);
        for (int64_t k = 0; k < n; k++)
          check_round(t, tt_half_decode(other, (uint16_t)k), ((uint16_t *)out->dl.data)[k],
                      ti ? (uint64_t)(k & 0x3ff) >> 3 : (uint64_t)(k & 0x7f) << 3, name_of(other),
                      targets[tg], vec);
      }
  }
}

/* ---------------------------------------------------------------- arithmetic */

#define IN(k) tt_get(in[k], i)
static te_dtype ht;
static te_expr *b_arith(te_expr *const v[]) {
  return te_sub(te_add(te_mul(v[0], v[1]), v[0]), te_div(v[1], v[0]));
}
static void r_arith(tt_buf *const in[], tt_buf *out, int64_t i) {
  tt_set(out, i, IN(0) * IN(1) + IN(0) - IN(1) / IN(0));
}
static te_expr *b_math(te_expr *const v[]) {
  te_ctx *c = te_expr_ctx(v[0]);
  te_expr *e = te_call(c, "exp", 1, &v[0]);
  te_expr *ab = te_call(c, "abs", 1, &v[1]);
  te_expr *sq = te_call(c, "sqrt", 1, &ab);
  return te_add(te_mul(e, sq), te_select(te_lt(v[0], v[1]), te_max(v[0], v[1]), v[1]));
}
static void r_math(tt_buf *const in[], tt_buf *out, int64_t i) {
  double a = IN(0), b = IN(1);
  tt_set(out, i, exp(a) * sqrt(fabs(b)) + (a < b ? fmax(a, b) : b));
}

Test(lowp_float, elementwise_arithmetic_and_math) {
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++) {
    ht = types[ti];
    tt_map a = {"arith", 2, {ht, ht}, {0}, {0}, b_arith, r_arith, ht};
    tt_map m = {"math", 2, {ht, ht}, {0}, {0}, b_math, r_math, ht};
    tt_run_map_all(&a);
    tt_run_map_all(&m);
  }
}

/* f16 meets f32: the f32 (the f16 value exactly); f16 meets bf16: f32. */
static te_expr *b_mixed(te_expr *const v[]) { return te_add(te_mul(v[0], v[1]), v[2]); }
static void r_mixed(tt_buf *const in[], tt_buf *out, int64_t i) {
  tt_set(out, i, IN(0) * IN(1) + IN(2));
}
Test(lowp_float, mixed_dtypes_promote_to_f32) {
  tt_map m = {"mixed", 3, {TE_F16, TE_F32, TE_BF16}, {0}, {0}, b_mixed, r_mixed, TE_F32};
  tt_run_map_all(&m);
}

/* ---------------------------------------------------------------- reductions */

/* C[i, j] = sum(f32(A[i, k]) * f32(B[k, j])): inputs of dtype t, accumulated in f32. */
static te_tensor *widening_matmul(te_tensor *A, te_tensor *B, int64_t m, int64_t n, int64_t kk) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, kk));
  te_expr *body =
      te_sum(te_mul(te_cast(TE_F32, tt_at2(A, i, k)), te_cast(TE_F32, tt_at2(B, k, j))), 1, &k);
  return TT_NN(te_compute(tt_ctx, "C", 2, (te_expr *[]){te_int(tt_ctx, m), te_int(tt_ctx, n)},
                          (te_expr *[]){i, j}, body));
}

Test(lowp_float, matmul_half_inputs_f32_accumulator) {
  const te_dtype types[] = {TE_BF16, TE_F16};
  const int64_t m = 37, n = 45, kk = 67;
  for (int ti = 0; ti < 2; ti++) {
    te_tensor *A = tt_placeholder("A", types[ti], 2, TT_SHAPE(m, kk));
    te_tensor *B = tt_placeholder("B", types[ti], 2, TT_SHAPE(kk, n));
    te_tensor *C = widening_matmul(A, B, m, n, kk);
    cr_assert(te_dtype_eq(te_tensor_dtype(C), TE_F32));
    tt_buf *a = TT_ALLOC(types[ti], m, kk), *b = TT_ALLOC(types[ti], kk, n);
    tt_buf *got = TT_ALLOC(TE_F32, m, n), *ref = TT_ALLOC(TE_F32, m, n);
    tt_fill(a, 11 + ti);
    tt_fill(b, 12 + ti);
    tt_ref_matmul(a, b, ref, m, n, kk); /* in double, from the 16-bit values themselves */
    tt_check_all(C, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), got, ref, kk);
    /* a register-tiled, vectorized schedule whose factors divide nothing */
    te_schedule *s = tt_schedule1(C);
    te_stage *st = tt_stage(s, C);
    te_iter *io, *jo, *ii, *ji, *ko, *ki;
    TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 5, 16, &io, &jo, &ii, &ji));
    TT_OK(te_split(st, te_reduce_iter(st, 0), 8, &ko, &ki));
    TT_OK(te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ki, ii, ji}));
    TT_OK(te_vectorize(st, ji));
    TT_OK(te_unroll(st, ii));
    tt_note("bf16/f16 matmul tiled 5x16, k split 8, j.i vectorized");
    tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, kk);
    tt_note("%s", "");
  }
}

/* A sum accumulated in the 16-bit dtype itself: rounded after each addition, within the
   tolerance of a short sum. */
Test(lowp_float, sum_in_half_accumulator) {
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++) {
    const int64_t n = 23, kk = 9;
    te_tensor *A = tt_placeholder("A", types[ti], 2, TT_SHAPE(n, kk));
    te_expr *i = te_var(tt_ctx, "i");
    te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, kk));
    te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, (te_expr *[]){te_int(tt_ctx, n)}, &i,
                                    te_sum(tt_at2(A, i, k), 1, &k)));
    cr_assert(te_dtype_eq(te_tensor_dtype(C), types[ti]));
    tt_buf *a = TT_ALLOC(types[ti], n, kk), *got = TT_ALLOC(types[ti], n),
           *ref = TT_ALLOC(types[ti], n);
    tt_fill_range(a, 5 + ti, 0.1, 2.0); /* one sign: no cancellation to magnify the rounding */
    for (int64_t r = 0; r < n; r++) {
      double acc = 0;
      for (int64_t c = 0; c < kk; c++)
        acc += tt_get(a, r * kk + c);
      tt_set(ref, r, acc);
    }
    tt_check_all(C, 2, TT_TENSORS(A, C), TT_BUFS(a, got), got, ref, kk);
  }
}

/* An f16 scalar parameter, passed as its 16 bits (uint16_t). */
Test(lowp_float, half_scalar_parameter) {
  const int64_t n = 29;
  te_tensor *A = tt_placeholder("A", TE_F16, 1, TT_SHAPE(n));
  te_expr *p = TT_NN(te_param(tt_ctx, "p", TE_F16));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(
      te_compute(tt_ctx, "C", 1, (te_expr *[]){te_int(tt_ctx, n)}, &i, te_mul(tt_at1(A, i), p)));
  tt_buf *a = TT_ALLOC(TE_F16, n), *got = TT_ALLOC(TE_F16, n), *ref = TT_ALLOC(TE_F16, n);
  tt_fill(a, 3);
  uint16_t pbits = tt_half_encode(TE_F16, -1.75);
  for (int64_t k = 0; k < n; k++)
    tt_set(ref, k, tt_get(a, k) * -1.75);
  tt_check(tt_schedule1(C), 2, TT_TENSORS(A, C), TT_BUFS(a, got), 1, &p,
           (const void *const[]){&pbits}, got, ref, 1);
}

/* ---------------------------------------------------------------- instructions */

static const char *cast_asm(te_dtype from, te_dtype to, const char *target) {
  te_tensor *io[2];
  te_module *m = cast_kernel(from, to, 1000, target, true, io); /* a masked tail too */
  return TT_NN((void *)te_module_source(m, "asm"));
}

Test(lowp_float, host_conversions_use_the_cpu_instructions) {
  const char *host = te_target_str(tt_target());
  if (!strstr(host, "+f16c"))
    tt_skip_part("f16c", "the host has no F16C (%s)", host);
  else {
    cr_expect(strstr(cast_asm(TE_F16, TE_F32, "llvm"), "vcvtph2ps"),
              "f16 -> f32 without vcvtph2ps");
    cr_expect(strstr(cast_asm(TE_F32, TE_F16, "llvm"), "vcvtps2ph"),
              "f32 -> f16 without vcvtps2ph");
  }
  if (!strstr(host, "+avx512bf16"))
    tt_skip_part("avx512bf16", "the host has no AVX512-BF16 (%s)", host);
  else
    cr_expect(strstr(cast_asm(TE_F32, TE_BF16, "llvm"), "vcvtneps2bf16"),
              "f32 -> bf16 without vcvtneps2bf16");
}

/* Without the instructions the code is inline: no call to a compiler-rt/libgcc routine. */
Test(lowp_float, plain_x86_64_conversions_call_nothing) {
  const te_dtype types[] = {TE_F16, TE_BF16};
  for (int ti = 0; ti < 2; ti++) {
    const char *a[] = {cast_asm(types[ti], TE_F32, PLAIN_HOST),
                       cast_asm(TE_F32, types[ti], PLAIN_HOST),
                       cast_asm(TE_F64, types[ti], PLAIN_HOST)};
    for (int k = 0; k < 3; k++) {
      cr_expect(!strstr(a[k], "hf2") && !strstr(a[k], "bf2"), "%s conversion %d calls a routine",
                name_of(types[ti]), k);
      cr_expect(!strstr(a[k], "vcvtph2ps") && !strstr(a[k], "vcvtneps2bf16"));
    }
  }
}

/* The entry's argument check tells f16 from bf16 (same bits, another DLPack code). */
Test(lowp_float, f16_array_refused_where_bf16_is_expected) {
  te_tensor *io[2];
  te_module *m = cast_kernel(TE_BF16, TE_F32, 16, "llvm", false, io);
  tt_buf *in = TT_ALLOC(TE_F16, 16), *out = TT_ALLOC(TE_F32, 16);
  tt_fill(in, 1);
  DLTensor *dl[2] = {&in->dl, &out->dl};
  cr_assert_neq(te_module_call(m, "cast", 2, dl, 0, NULL), TE_OK);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "A", "dtype");
}

/* f16 -> bf16 -> f16 loses f16's low significand bits: the simplifier must not drop the pair
   (f16 and bf16 are both 16 bits, and neither holds the other's values). */
static te_expr *b_through_bf16(te_expr *const v[]) {
  return te_cast(TE_F16, te_cast(TE_BF16, v[0]));
}
static void r_through_bf16(tt_buf *const in[], tt_buf *out, int64_t i) {
  tt_set(out, i, tt_half_decode(TE_BF16, tt_half_encode(TE_BF16, IN(0))));
}
Test(lowp_float, f16_through_bf16_keeps_the_rounding) {
  tt_map m = {"through", 1, {TE_F16}, {0}, {0}, b_through_bf16, r_through_bf16, TE_F16};
  tt_run_map_all(&m);
  /* and exactly: the rounding to bf16 is one step of 2^-7 relative, far above f16's tolerance */
  te_tensor *A = tt_placeholder("A", TE_F16, 1, TT_SHAPE(64));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, (te_expr *[]){te_int(tt_ctx, 64)}, &i,
                                  b_through_bf16((te_expr *[]){tt_at1(A, i)})));
  tt_buf *a = TT_ALLOC(TE_F16, 64), *c = TT_ALLOC(TE_F16, 64);
  for (int k = 0; k < 64; k++)
    tt_set(a, k, 1.0 + k / 1024.0); /* 1 + k ulps of f16 */
  tt_call(tt_build(tt_schedule1(C), "through", 2, TT_TENSORS(A, C), 0, NULL), "through", 2,
          TT_BUFS(a, c), 0, NULL);
  for (int k = 0; k < 64; k++)
    cr_assert_eq(tt_get(c, k), tt_half_decode(TE_BF16, tt_half_encode(TE_BF16, tt_get(a, k))),
                 "element %d", k);
}
