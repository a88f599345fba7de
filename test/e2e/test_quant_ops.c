/* test_quant_ops.c — the integer operators of quantized kernels (te_bitwise_*, shifts,
 * te_rounding_shift_right, te_saturating_cast) against plain C, exactly, on every integer dtype:
 * random values with the extremes of each type mixed in (0, -1, MIN, MAX, 255, -128, 127), shift
 * amounts across the whole range (negative, 0, width - 1, width, past it) given as a tensor of
 * another type, of the same type and as immediates; scalar code and code vectorized by 16 over
 * 37 elements (a tail).
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

TestSuite(quant_ops, .init = tt_setup, .fini = tt_teardown);

enum { N = 37 };

typedef te_expr *(*op2_fn)(te_expr *, te_expr *);

static const te_dtype int_types[] = {TE_I8, TE_U8, TE_I16, TE_U16, TE_I32, TE_U32, TE_I64, TE_U64};

/* The value v wrapped into t (two's complement), as int64 bits; unsigned 64 as its bits. */
static int64_t wrap(te_dtype t, int64_t v) {
  if (t.bits == 64)
    return v;
  uint64_t m = ((uint64_t)1 << t.bits) - 1, u = (uint64_t)v & m;
  if (t.code == kDLInt && (u >> (t.bits - 1)))
    u |= ~m;
  return (int64_t)u;
}

static int64_t tmin(te_dtype t) {
  return t.code == kDLInt ? (int64_t)((uint64_t)-1 << (t.bits - 1)) : 0;
}
static int64_t tmax(te_dtype t) {
  if (t.code == kDLInt)
    return (int64_t)(((uint64_t)1 << (t.bits - 1)) - 1);
  return t.bits == 64 ? -1 : (int64_t)(((uint64_t)1 << t.bits) - 1);
}

/* Random values of t with its extremes at fixed places. */
static void fill_extremes(tt_buf *b, te_dtype t, uint64_t seed) {
  srand((unsigned)seed);
  const int64_t special[] = {0, -1, 1, tmin(t), tmax(t), 255, -128, 127, 128, tmax(t) - 1};
  for (int64_t i = 0; i < b->numel; i++) {
    int64_t v = (int64_t)(((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand());
    if (i % 3 == 0)
      v = special[(i / 3) % (int64_t)(sizeof special / sizeof special[0])];
    tt_seti(b, i, wrap(t, v));
  }
}

/* Element i as int64 bits of its own type (u64 as its bits, unlike tt_geti's conversion). */
static int64_t get(const tt_buf *b, int64_t i) {
  const char *p = (const char *)b->dl.data + i * (int64_t)b->elem_bytes;
  switch (b->dl.dtype.bits * (b->dl.dtype.code == kDLInt ? 1 : -1)) {
  case 8:
    return *(const int8_t *)p;
  case -8:
    return *(const uint8_t *)p;
  case 16:
    return *(const int16_t *)p;
  case -16:
    return *(const uint16_t *)p;
  case 32:
    return *(const int32_t *)p;
  case -32:
    return *(const uint32_t *)p;
  default:
    return *(const int64_t *)p;
  }
}

/* ---------------------------------------------------------------- reference semantics */

static uint64_t ubits(te_dtype t, int64_t v) {
  return t.bits == 64 ? (uint64_t)v : (uint64_t)v & (((uint64_t)1 << t.bits) - 1);
}

/* The amount as te reads it: unsigned in its own type. */
static uint64_t amount(te_dtype at, int64_t s) { return ubits(at, s); }

static int64_t ref_shl(te_dtype t, int64_t x, uint64_t s) {
  return s >= t.bits ? 0 : wrap(t, (int64_t)(ubits(t, x) << s));
}
static int64_t ref_shr_logical(te_dtype t, int64_t x, uint64_t s) {
  return s >= t.bits ? 0 : wrap(t, (int64_t)(ubits(t, x) >> s));
}
static int64_t ref_shr(te_dtype t, int64_t x, uint64_t s) {
  if (t.code != kDLInt)
    return ref_shr_logical(t, x, s);
  if (s >= t.bits)
    return x < 0 ? -1 : 0;
  return x >> s; /* arithmetic on gcc and clang */
}
/* floor(x / 2^s + 1/2), by exact wide arithmetic. */
static int64_t ref_rshr(te_dtype t, int64_t x, uint64_t s) {
  if (s == 0)
    return x;
  if (s > 64)
    s = 65;
  __int128 v = t.code == kDLInt ? (__int128)x : (__int128)ubits(t, x);
  __int128 half = (__int128)1 << (s - 1);
  __int128 num = v + half, den = (__int128)1 << s;
  __int128 q = num / den;
  if ((num % den != 0) && (num < 0))
    q -= 1; /* floor */
  return wrap(t, (int64_t)q);
}

typedef struct shift_case {
  const char *name;
  op2_fn build;
  int64_t (*ref)(te_dtype, int64_t, uint64_t);
} shift_case;

static const shift_case shifts[] = {
    {"shift_left", te_shift_left, ref_shl},
    {"shift_right", te_shift_right, ref_shr},
    {"shift_right_logical", te_shift_right_logical, ref_shr_logical},
    {"rounding_shift_right", te_rounding_shift_right, ref_rshr},
};

/* Builds out[i] = body(X[i], S[i]) (S absent when nin == 1), scalar or vectorized by 16. */
static te_module *build_map(te_tensor *X, te_tensor *S, te_expr *body_of_i, te_expr *i, bool vec,
                            te_tensor **out) {
  te_tensor *O = TT_NN(te_compute(tt_ctx, "O", 1, TE_EXPRS(te_int(tt_ctx, N)), &i, body_of_i));
  te_schedule *s = tt_schedule1(O);
  if (vec) {
    te_stage *st = tt_stage(s, O);
    te_iter *o, *in;
    TT_OK(te_split(st, te_axis(st, 0), 16, &o, &in));
    TT_OK(te_vectorize(st, in));
  }
  *out = O;
  if (S)
    return tt_build(s, "f", 3, TT_TENSORS(X, S, O), 0, NULL);
  return tt_build(s, "f", 2, TT_TENSORS(X, O), 0, NULL);
}

/* Each shift of each type by amounts of type at (tensor) and by immediates. */
static void check_shifts(te_dtype t, te_dtype at) {
  char tn[16], an[16];
  te_dtype_str(t, tn, sizeof tn);
  te_dtype_str(at, an, sizeof an);
  tt_buf *x = TT_ALLOC(t, N), *sa = TT_ALLOC(at, N), *got = TT_ALLOC(t, N);
  fill_extremes(x, t, 7 + t.bits);
  for (int64_t i = 0; i < N; i++) /* -3 .. width + 3, and a large one */
    tt_seti(sa, i, i == N - 1 ? 200 : (i % (t.bits + 7)) - 3);
  for (size_t c = 0; c < sizeof shifts / sizeof shifts[0]; c++)
    for (int vec = 0; vec < 2; vec++) {
      te_tensor *X = tt_placeholder("X", t, 1, TT_SHAPE(N));
      te_tensor *S = tt_placeholder("S", at, 1, TT_SHAPE(N));
      te_expr *i = te_var(tt_ctx, "i");
      te_expr *body = TT_NN(shifts[c].build(tt_at1(X, i), tt_at1(S, i)));
      cr_assert(te_dtype_eq(te_expr_dtype(body), t), "%s: result dtype is not x's", shifts[c].name);
      te_tensor *O;
      te_module *m = build_map(X, S, body, i, vec, &O);
      tt_poison(got);
      tt_call(m, "f", 3, TT_BUFS(x, sa, got), 0, NULL);
      for (int64_t k = 0; k < N; k++) {
        int64_t want = shifts[c].ref(t, get(x, k), amount(at, get(sa, k)));
        cr_assert(get(got, k) == want, "%s(%s %lld, %s %lld)%s: got %lld, want %lld",
                  shifts[c].name, tn, (long long)get(x, k), an, (long long)get(sa, k),
                  vec ? " vectorized" : "", (long long)get(got, k), (long long)want);
      }
    }
  /* immediate amounts, including ones past the width and negative ones */
  const int64_t imms[] = {0, 1, t.bits - 1, t.bits, t.bits + 5, -1};
  for (size_t c = 0; c < sizeof shifts / sizeof shifts[0]; c++)
    for (size_t q = 0; q < sizeof imms / sizeof imms[0]; q++) {
      te_tensor *X = tt_placeholder("X", t, 1, TT_SHAPE(N));
      te_expr *i = te_var(tt_ctx, "i");
      te_expr *body = TT_NN(shifts[c].build(tt_at1(X, i), te_int(tt_ctx, imms[q])));
      te_tensor *O;
      te_module *m = build_map(X, NULL, body, i, q % 2, &O);
      tt_poison(got);
      tt_call(m, "f", 2, TT_BUFS(x, got), 0, NULL);
      for (int64_t k = 0; k < N; k++) {
        int64_t want = shifts[c].ref(t, get(x, k), amount(TE_I64, imms[q]));
        cr_assert(get(got, k) == want, "%s(%s %lld, %lld): got %lld, want %lld", shifts[c].name, tn,
                  (long long)get(x, k), (long long)imms[q], (long long)get(got, k),
                  (long long)want);
      }
    }
}

Test(quant_ops, shifts_every_type_amount_in_another_type) {
  for (size_t k = 0; k < sizeof int_types / sizeof int_types[0]; k++)
    check_shifts(int_types[k], TE_I32);
}

Test(quant_ops, shifts_amount_of_the_same_type) {
  for (size_t k = 0; k < sizeof int_types / sizeof int_types[0]; k++)
    check_shifts(int_types[k], int_types[k]);
}

Test(quant_ops, shifts_amount_narrower_unsigned) {
  check_shifts(TE_I64, TE_U8);
  check_shifts(TE_I32, TE_I8);
}

/* ---------------------------------------------------------------- bitwise */

Test(quant_ops, bitwise_every_type) {
  for (size_t k = 0; k < sizeof int_types / sizeof int_types[0]; k++)
    for (int vec = 0; vec < 2; vec++) {
      te_dtype t = int_types[k];
      te_tensor *A = tt_placeholder("A", t, 1, TT_SHAPE(N));
      te_tensor *B = tt_placeholder("B", t, 1, TT_SHAPE(N));
      te_expr *i = te_var(tt_ctx, "i");
      te_expr *a = tt_at1(A, i), *b = tt_at1(B, i);
      /* ((a & b) ^ ~a) | (b & 0x5a), with an immediate taking the other operand's type */
      te_expr *body = TT_NN(te_bitwise_or(te_bitwise_xor(te_bitwise_and(a, b), te_bitwise_not(a)),
                                          te_bitwise_and(b, te_int(tt_ctx, 0x5a))));
      cr_assert(te_dtype_eq(te_expr_dtype(body), t));
      te_tensor *O;
      te_module *m = build_map(A, B, body, i, vec, &O);
      tt_buf *x = TT_ALLOC(t, N), *y = TT_ALLOC(t, N), *got = TT_ALLOC(t, N);
      fill_extremes(x, t, 3);
      fill_extremes(y, t, 4);
      tt_poison(got);
      tt_call(m, "f", 3, TT_BUFS(x, y, got), 0, NULL);
      for (int64_t q = 0; q < N; q++) {
        int64_t xa = get(x, q), yb = get(y, q);
        int64_t want = wrap(t, ((xa & yb) ^ ~xa) | (yb & 0x5a));
        cr_assert(get(got, q) == want, "bitwise on %d-bit code %d: got %lld, want %lld", t.bits,
                  t.code, (long long)get(got, q), (long long)want);
      }
    }
}

/* ---------------------------------------------------------------- saturating casts */

static int64_t ref_sat_int(te_dtype to, __int128 v) {
  __int128 lo = to.code == kDLInt ? (__int128)tmin(to) : 0;
  __int128 hi = to.code == kDLInt || to.bits < 64 ? (__int128)tmax(to) : (__int128)UINT64_MAX;
  return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

static void check_sat(te_dtype from, te_dtype to) {
  char fn[16], tn[16];
  te_dtype_str(from, fn, sizeof fn);
  te_dtype_str(to, tn, sizeof tn);
  tt_buf *x = TT_ALLOC(from, N), *got = TT_ALLOC(to, N);
  bool fl = from.code == kDLFloat;
  if (fl) {
    const double special[] = {NAN,          INFINITY,     -INFINITY,     1e30,  -1e30,
                              127.5,        -128.7,       255.9,         256.0, -0.9,
                              2147483520.0, 2147483648.0, -2147483904.0, 4.5e9};
    for (int64_t i = 0; i < N; i++)
      tt_set(x, i, i < 14 ? special[i] : (double)((rand() % 2000) - 1000) * 0.37);
  } else {
    fill_extremes(x, from, 11);
  }
  for (int vec = 0; vec < 2; vec++) {
    te_tensor *X = tt_placeholder("X", from, 1, TT_SHAPE(N));
    te_expr *i = te_var(tt_ctx, "i");
    te_expr *body = TT_NN(te_saturating_cast(to, tt_at1(X, i)));
    te_tensor *O;
    te_module *m = build_map(X, NULL, body, i, vec, &O);
    tt_poison(got);
    tt_call(m, "f", 2, TT_BUFS(x, got), 0, NULL);
    for (int64_t k = 0; k < N; k++) {
      int64_t want;
      if (fl) {
        double v = tt_get(x, k);
        double hi = to.code == kDLInt ? ldexp(1, to.bits - 1) : ldexp(1, to.bits);
        double lo = to.code == kDLInt ? -ldexp(1, to.bits - 1) : 0;
        want = isnan(v) ? 0 : v >= hi ? tmax(to) : v <= lo ? tmin(to) : (int64_t)trunc(v);
        if (from.bits == 32 && !isnan(v) && v < hi && v > lo) /* as the kernel sees it */
          want = (int64_t)truncf((float)v);
      } else {
        int64_t b = get(x, k);
        __int128 v = from.code == kDLInt ? (__int128)b : (__int128)ubits(from, b);
        want = ref_sat_int(to, v);
      }
      cr_assert(get(got, k) == wrap(to, want),
                "saturating_cast(%s, %s %.17g)%s: got %lld, want %lld", tn, fn,
                fl ? tt_get(x, k) : (double)get(x, k), vec ? " vectorized" : "",
                (long long)get(got, k), (long long)wrap(to, want));
    }
  }
}

Test(quant_ops, saturating_cast_ints) {
  for (size_t a = 0; a < sizeof int_types / sizeof int_types[0]; a++)
    for (size_t b = 0; b < sizeof int_types / sizeof int_types[0]; b++)
      check_sat(int_types[a], int_types[b]);
}

Test(quant_ops, saturating_cast_floats) {
  const te_dtype to[] = {TE_I8, TE_U8, TE_I16, TE_I32, TE_U32, TE_I64};
  for (size_t b = 0; b < sizeof to / sizeof to[0]; b++) {
    check_sat(TE_F32, to[b]);
    check_sat(TE_F64, to[b]);
  }
}

/* The text form: the operators print as calls and parse back (te_call by name). */
Test(quant_ops, printed_by_name) {
  te_tensor *X = tt_placeholder("X", TE_I32, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *e = TT_NN(
      te_rounding_shift_right(te_bitwise_xor(tt_at1(X, i), te_int(tt_ctx, 3)), te_int(tt_ctx, 2)));
  char *txt = te_expr_text(e);
  cr_assert(strstr(txt, "rounding_shift_right(") && strstr(txt, "bitwise_xor("), "%s", txt);
  te_free(txt);
}
