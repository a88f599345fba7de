/* cases.c — the schedules of the golden IR tests, written with the public API only.
 *
 * One builder a case; a .golden file names its builder in `# case:`. Each builder checks once at
 * the end (te's errors are sticky: a failed call makes every later one fail too).
 */
#include "golden.h"

#define E(...) TE_EXPRS(__VA_ARGS__)

static bool done(golden_kernel *k, const char *name, te_schedule *sch) {
  k->name = name;
  k->sch = sch;
  if (!sch)
    return false;
  for (int i = 0; i < k->ntensors; i++)
    if (!k->tensors[i])
      return false;
  for (int i = 0; i < k->nscalars; i++)
    if (!k->scalars[i])
      return false;
  return true;
}

static te_schedule *schedule1(te_ctx *ctx, te_tensor *out) {
  return out ? te_schedule_new(ctx, 1, (te_tensor *const[]){out}) : NULL;
}

static void args(golden_kernel *k, int n, te_tensor *const ts[]) {
  k->ntensors = n;
  for (int i = 0; i < n; i++)
    k->tensors[i] = ts[i];
}

/* C[i, j] = A[i, j] + B[i, j], 16 x 8, default schedule. */
static bool elementwise_add(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *m = te_int(ctx, 16), *n = te_int(ctx, 8);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(m, n));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(m, n));
  te_tensor *c = te_compute(ctx, "C", 2, E(m, n), E(i, j), te_add(TE_AT(a, i, j), TE_AT(b, i, j)));
  args(k, 3, (te_tensor *const[]){a, b, c});
  return done(k, "add", schedule1(ctx, c));
}

/* C[i, j] = sum_k A[i, k] * B[k, j] of m x l by l x n; the arguments are A, B, C. */
static te_tensor *matmul(te_ctx *ctx, golden_kernel *k, int64_t m, int64_t n, int64_t l) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *em = te_int(ctx, m), *en = te_int(ctx, n), *el = te_int(ctx, l);
  te_expr *r = te_reduce_axis(ctx, "k", te_int(ctx, 0), el);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(em, el));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(el, en));
  te_tensor *c = te_compute(ctx, "C", 2, E(em, en), E(i, j),
                            TE_SUM(te_mul(TE_AT(a, i, r), TE_AT(b, r, j)), r));
  args(k, 3, (te_tensor *const[]){a, b, c});
  return c;
}

/* 100 x 100 x 100 matmul, default schedule. */
static bool matmul_default(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 100, 100, 100);
  return done(k, "matmul", schedule1(ctx, c));
}

/* 100 x 100 x 100 matmul, i and j tiled by 32 (not dividing), k split by 4, loops ordered
   i.o, j.o, k.o, i.i, k.i, j.i: the steady-state body must have no condition. */
static bool matmul_tiled(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 100, 100, 100);
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  if (te_tile(st, te_axis(st, 0), te_axis(st, 1), 32, 32, &io, &jo, &ii, &ji) != TE_OK ||
      te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki) != TE_OK ||
      te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}) != TE_OK)
    return false;
  return done(k, "matmul_tiled", s);
}

/* B[i, j] = A[j, i], A 37 x 53. */
static bool transpose(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(te_int(ctx, 37), te_int(ctx, 53)));
  te_tensor *b =
      te_compute(ctx, "B", 2, E(te_int(ctx, 53), te_int(ctx, 37)), E(i, j), TE_AT(a, j, i));
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "transpose", schedule1(ctx, b));
}

/* B[i] = sum_{j, l} A[i, j, l], A 8 x 16 x 4. */
static bool sum_two_axes(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i");
  te_expr *j = te_reduce_axis(ctx, "j", te_int(ctx, 0), te_int(ctx, 16));
  te_expr *l = te_reduce_axis(ctx, "l", te_int(ctx, 0), te_int(ctx, 4));
  te_tensor *a =
      te_placeholder(ctx, "A", TE_F32, 3, E(te_int(ctx, 8), te_int(ctx, 16), te_int(ctx, 4)));
  te_tensor *b = te_compute(ctx, "B", 1, E(te_int(ctx, 8)), E(i), TE_SUM(TE_AT(a, i, j, l), j, l));
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "sum2", schedule1(ctx, b));
}

/* T[i] = A[i] * 2 inlined into C[i] = T[i] + 1, 64 elements. */
static bool inline_producer(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 64);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *t = te_compute(ctx, "T", 1, E(n), E(i), te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2)));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_add(TE_AT(t, i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = schedule1(ctx, c);
  if (!s || te_compute_inline(te_stage_of(s, t)) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "inline", s);
}

/* C[i, j] = alpha * A[i, j] + B[i, j] over symbolic n x m, default schedule. */
static bool symbolic_axpy(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *n = te_var(ctx, "n"), *m = te_var(ctx, "m");
  te_expr *alpha = te_param(ctx, "alpha", TE_F32);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(n, m));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(n, m));
  te_tensor *c = te_compute(ctx, "C", 2, E(n, m), E(i, j),
                            te_add(te_mul(alpha, TE_AT(a, i, j)), TE_AT(b, i, j)));
  args(k, 3, (te_tensor *const[]){a, b, c});
  k->nscalars = 1;
  k->scalars[0] = alpha;
  return done(k, "axpy", schedule1(ctx, c));
}

/* C[i] = A[i] + 1 over symbolic n, i split by 16: a guarded tail of symbolic length. */
static bool symbolic_split(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_add(TE_AT(a, i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split(st, te_axis(st, 0), 16, &o, &in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "split_n", s);
}

/* C[i] = A[i] * 2 over 100 elements, split into 3 parts (34 each: the last one guarded). */
static bool split_nparts(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 100);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2)));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split_nparts(st, te_axis(st, 0), 3, &o, &in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "split_nparts", s);
}

/* B[i, j] = A[i, j] * 2 over 20 x 30 with i and j fused into one loop. */
static bool fuse(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *m = te_int(ctx, 20), *n = te_int(ctx, 30);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(m, n));
  te_tensor *b =
      te_compute(ctx, "B", 2, E(m, n), E(i, j), te_mul(TE_AT(a, i, j), te_float(ctx, TE_F32, 2)));
  te_schedule *s = schedule1(ctx, b);
  te_stage *st = s ? te_stage_of(s, b) : NULL;
  te_iter *f;
  if (te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "fuse", s);
}

/* 100-element C[i] = A[i] + 1, i split by 8 and the inner loop unrolled (tail: 4 copies). */
static bool unroll_split(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 100);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_add(TE_AT(a, i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split(st, te_axis(st, 0), 8, &o, &in) != TE_OK || te_unroll(st, in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "unroll", s);
}

/* 16 x 16 x 100 matmul, k split by 8 (not dividing): the reduction's tail is peeled. */
static bool matmul_k_tail(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 16, 16, 100);
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *ko, *ki;
  if (te_split(st, te_reduce_iter(st, 0), 8, &ko, &ki) != TE_OK)
    return false;
  return done(k, "matmul_k_tail", s);
}

const golden_case golden_cases[] = {
    {"matmul_k_tail", matmul_k_tail},
    {"elementwise_add", elementwise_add},
    {"matmul_default", matmul_default},
    {"matmul_tiled", matmul_tiled},
    {"transpose", transpose},
    {"sum_two_axes", sum_two_axes},
    {"inline_producer", inline_producer},
    {"symbolic_axpy", symbolic_axpy},
    {"symbolic_split", symbolic_split},
    {"split_nparts", split_nparts},
    {"fuse", fuse},
    {"unroll_split", unroll_split},
};
const int golden_ncases = (int)(sizeof golden_cases / sizeof golden_cases[0]);
