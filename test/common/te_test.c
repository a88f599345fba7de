/* te_test.c — buffers, random fills, poisoning and comparison for the e2e and error tests.
 *
 * The kernel-building and error-checking helpers are in te_test_api.c. Everything allocated
 * here is remembered and released by tt_teardown, because a failing Criterion assertion leaves
 * the test function early.
 */
#include "te_test.h"
#include "te_test_half.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

te_ctx *tt_ctx;

#define TT_MAX_BUFS 256
static tt_buf *tt_bufs[TT_MAX_BUFS];
static int tt_nbufs;

void tt_setup(void) {
  tt_note("%s", "");
  tt_ctx = te_ctx_new();
  cr_assert(tt_ctx != NULL, "te_ctx_new failed");
}

void tt_teardown(void) {
  for (int i = 0; i < tt_nbufs; i++) {
    free(tt_bufs[i]->dl.data);
    free(tt_bufs[i]);
  }
  tt_nbufs = 0;
  te_ctx_free(tt_ctx);
  tt_ctx = NULL;
}

static bool is_float(te_dtype t) { return t.code == kDLFloat || t.code == kDLBfloat; }
static bool is_signed(te_dtype t) { return t.code == kDLInt; }

tt_buf *tt_alloc(te_dtype dtype, int ndim, const int64_t shape[]) {
  cr_assert(ndim >= 0 && ndim <= TE_MAX_DIMS, "tt_alloc: bad ndim %d", ndim);
  cr_assert(tt_nbufs < TT_MAX_BUFS, "tt_alloc: too many buffers in one test");
  tt_buf *b = calloc(1, sizeof *b);
  cr_assert(b != NULL, "tt_alloc: out of memory");
  b->numel = 1;
  for (int i = 0; i < ndim; i++) {
    b->shape[i] = shape[i];
    b->numel *= shape[i];
  }
  b->elem_bytes = dtype.bits < 8 ? 1 : (size_t)dtype.bits / 8 * dtype.lanes;
  size_t bytes = (size_t)b->numel * b->elem_bytes;
  bytes = (bytes + 63) / 64 * 64;
  if (bytes == 0)
    bytes = 64;
  void *data = aligned_alloc(64, bytes);
  cr_assert(data != NULL, "tt_alloc: out of memory");
  b->dl.data = data;
  b->dl.device = (DLDevice){kDLCPU, 0};
  b->dl.ndim = ndim;
  b->dl.dtype = dtype;
  b->dl.shape = b->shape;
  b->dl.strides = NULL;
  b->dl.byte_offset = 0;
  tt_bufs[tt_nbufs++] = b;
  tt_poison(b);
  return b;
}

/* splitmix64 */
static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

static double rand_float(uint64_t *s, double lo, double hi) {
  bool straddle = lo < 0 && hi > 0;
  for (int tries = 0; tries < 1000; tries++) {
    double v = lo + (hi - lo) * rng_unit(s);
    if (v != 0 && (!straddle || fabs(v) >= 0.1))
      return v;
  }
  return lo != 0 ? lo : hi;
}

static int64_t rand_int(uint64_t *s, int64_t lo, int64_t hi) {
  for (int tries = 0; tries < 1000; tries++) {
    int64_t v = lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
    if (v != 0)
      return v;
  }
  return lo != 0 ? lo : hi;
}

void tt_fill_range(tt_buf *b, uint64_t seed, double lo, double hi) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  te_dtype t = b->dl.dtype;
  for (int64_t i = 0; i < b->numel; i++) {
    if (is_float(t))
      tt_set(b, i, rand_float(&s, lo, hi));
    else if (t.bits == 1)
      tt_seti(b, i, (int64_t)(rng_next(&s) & 1));
    else
      tt_seti(b, i, rand_int(&s, (int64_t)lo, (int64_t)hi));
  }
}

void tt_fill(tt_buf *b, uint64_t seed) {
  te_dtype t = b->dl.dtype;
  if (is_float(t))
    tt_fill_range(b, seed, -2.0, 2.0);
  else if (is_signed(t))
    tt_fill_range(b, seed, -9, 9);
  else
    tt_fill_range(b, seed, 1, 9);
}

void tt_poison(tt_buf *b) {
  te_dtype t = b->dl.dtype;
  if (is_float(t)) {
    for (int64_t i = 0; i < b->numel; i++)
      tt_set(b, i, NAN);
  } else {
    memset(b->dl.data, 0x5A, (size_t)b->numel * b->elem_bytes);
  }
}

void tt_ref_matmul(const tt_buf *a, const tt_buf *b, tt_buf *c, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t r = 0; r < k; r++)
        acc += tt_get(a, i * k + r) * tt_get(b, r * n + j);
      tt_set(c, i * n + j, acc);
    }
}

double tt_get(const tt_buf *b, int64_t i) {
  te_dtype t = b->dl.dtype;
  if (tt_is_half(t))
    return tt_half_decode(t, ((const uint16_t *)b->dl.data)[i]);
  if (t.code == kDLFloat) {
    if (t.bits == 32)
      return ((const float *)b->dl.data)[i];
    if (t.bits == 64)
      return ((const double *)b->dl.data)[i];
  }
  if (t.code == kDLUInt && t.bits == 64)
    return (double)((const uint64_t *)b->dl.data)[i];
  return (double)tt_geti(b, i);
}

void tt_set(tt_buf *b, int64_t i, double v) {
  te_dtype t = b->dl.dtype;
  if (tt_is_half(t))
    ((uint16_t *)b->dl.data)[i] = tt_half_encode(t, v); /* rounded to nearest even */
  else if (t.code == kDLFloat && t.bits == 32)
    ((float *)b->dl.data)[i] = (float)v;
  else if (t.code == kDLFloat && t.bits == 64)
    ((double *)b->dl.data)[i] = v;
  else
    tt_seti(b, i, (int64_t)v);
}

int64_t tt_geti(const tt_buf *b, int64_t i) {
  te_dtype t = b->dl.dtype;
  const void *d = b->dl.data;
  if (t.code == kDLInt) {
    switch (t.bits) {
    case 8:
      return ((const int8_t *)d)[i];
    case 16:
      return ((const int16_t *)d)[i];
    case 32:
      return ((const int32_t *)d)[i];
    case 64:
      return ((const int64_t *)d)[i];
    }
  } else if (t.code == kDLUInt) {
    switch (t.bits) {
    case 1:
    case 8:
      return ((const uint8_t *)d)[i];
    case 16:
      return ((const uint16_t *)d)[i];
    case 32:
      return ((const uint32_t *)d)[i];
    case 64:
      return (int64_t)((const uint64_t *)d)[i];
    }
  } else if (is_float(t)) {
    return (int64_t)tt_get(b, i);
  }
  cr_assert_fail("tt_geti: unsupported dtype code %d bits %d", t.code, t.bits);
  return 0;
}

void tt_seti(tt_buf *b, int64_t i, int64_t v) {
  te_dtype t = b->dl.dtype;
  void *d = b->dl.data;
  if (is_float(t)) {
    tt_set(b, i, (double)v);
    return;
  }
  switch (t.bits) {
  case 1:
    ((uint8_t *)d)[i] = v != 0;
    return;
  case 8:
    ((uint8_t *)d)[i] = (uint8_t)v;
    return;
  case 16:
    ((uint16_t *)d)[i] = (uint16_t)v;
    return;
  case 32:
    ((uint32_t *)d)[i] = (uint32_t)v;
    return;
  case 64:
    ((uint64_t *)d)[i] = (uint64_t)v;
    return;
  }
  cr_assert_fail("tt_seti: unsupported dtype bits %d", t.bits);
}

static void index_str(const tt_buf *b, int64_t flat, char *buf, size_t size) {
  int64_t idx[TE_MAX_DIMS];
  for (int d = b->dl.ndim - 1; d >= 0; d--) {
    idx[d] = flat % b->shape[d];
    flat /= b->shape[d];
  }
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < b->dl.ndim && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? ", %lld" : "%lld", (long long)idx[d]);
  if (n < size)
    snprintf(buf + n, size - n, "]");
}

/* The mean magnitude of the reference's finite elements: the scale a float result is compared
   at, so that an element near zero (a cancelling sum, a small softmax entry) is judged against
   the size of the values around it, never against a constant. */
static double ref_scale(const tt_buf *ref) {
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < ref->numel; i++) {
    double r = tt_get(ref, i);
    if (isfinite(r)) {
      sum += fabs(r);
      n++;
    }
  }
  return n ? sum / (double)n : 0;
}

double tt_rtol(te_dtype t, int64_t reduce_len) {
  /* 16-bit floats: a few units of their rounding (f16 2^-11, bf16 2^-8), as results rounded
     after every operation carry several */
  double rtol = t.bits == 64                         ? 1e-10
                : t.code == kDLBfloat                ? 2e-2
                : t.code == kDLFloat && t.bits == 16 ? 3e-3
                                                     : 1e-4;
  /* a sum's rounding error grows like the square root of its length (a random walk): long sums
     get a little more room, still relative to the values */
  return reduce_len > 256 ? rtol * sqrt((double)reduce_len / 256.0) : rtol;
}

typedef enum { TT_MATCH, TT_DIFFER, TT_REF_NAN } tt_verdict;

static tt_verdict compare_elem(const tt_buf *got, const tt_buf *ref, int64_t i, double rtol,
                               double scale) {
  te_dtype t = ref->dl.dtype;
  if (!is_float(t))
    return tt_geti(got, i) == tt_geti(ref, i) ? TT_MATCH : TT_DIFFER;
  double g = tt_get(got, i), r = tt_get(ref, i);
  if (isnan(r)) /* the poison is NaN: a NaN result would match an element never written */
    return TT_REF_NAN;
  if (isnan(g))
    return TT_DIFFER;
  if (isinf(r))
    return g == r ? TT_MATCH : TT_DIFFER;
  return fabs(g - r) <= rtol * (fabs(r) + scale) ? TT_MATCH : TT_DIFFER;
}

void tt_assert_close_(const tt_buf *got, const tt_buf *ref, int64_t k, const char *file, int line) {
  char a[32], b[32];
  cr_assert(te_dtype_eq(got->dl.dtype, ref->dl.dtype), "%s:%d: dtype %s vs reference %s", file,
            line, te_dtype_str(got->dl.dtype, a, sizeof a),
            te_dtype_str(ref->dl.dtype, b, sizeof b));
  cr_assert(got->numel == ref->numel, "%s:%d: %lld elements vs %lld in the reference", file, line,
            (long long)got->numel, (long long)ref->numel);
  double rtol = tt_rtol(ref->dl.dtype, k), scale = is_float(ref->dl.dtype) ? ref_scale(ref) : 0;
  int64_t bad = 0, first = -1, ref_nan = -1;
  for (int64_t i = 0; i < ref->numel; i++) {
    tt_verdict v = compare_elem(got, ref, i, rtol, scale);
    if (v == TT_REF_NAN && ref_nan < 0)
      ref_nan = i;
    if (v != TT_MATCH) {
      if (first < 0)
        first = i;
      bad++;
    }
  }
  if (bad == 0)
    return;
  char idx[128];
  index_str(ref, first, idx, sizeof idx);
  if (ref_nan >= 0)
    cr_assert_fail("%s:%d: [%s] the reference is NaN at flat index %lld: a NaN result cannot be "
                   "told from the NaN poison of an element never written (check NaN results "
                   "with another poison)",
                   file, line, tt_note_text(), (long long)ref_nan);
  if (is_float(ref->dl.dtype))
    cr_assert_fail("%s:%d: [%s] %lld of %lld elements differ; first at %s (flat %lld): got "
                   "%.9g, expected %.9g (tolerance %.3g relative to |expected| + %.3g, the "
                   "reference's mean magnitude)",
                   file, line, tt_note_text(), (long long)bad, (long long)ref->numel, idx,
                   (long long)first, tt_get(got, first), tt_get(ref, first), rtol, scale);
  else
    cr_assert_fail("%s:%d: [%s] %lld of %lld elements differ; first at %s (flat %lld): got "
                   "%lld, expected %lld",
                   file, line, tt_note_text(), (long long)bad, (long long)ref->numel, idx,
                   (long long)first, (long long)tt_geti(got, first),
                   (long long)tt_geti(ref, first));
}

int64_t tt_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    q--;
  return q;
}

int64_t tt_floormod(int64_t a, int64_t b) { return a - tt_floordiv(a, b) * b; }
