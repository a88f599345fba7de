/* gpu_cases.c — the GPU schedules of the test suite (see gpu_cases.h), public API only. */
#include "gpu_cases.h"

#include <te/ops.h>

#define E(...) TE_EXPRS(__VA_ARGS__)

static bool ok_all(te_status const st[], int n) {
  for (int i = 0; i < n; i++)
    if (st[i] != TE_OK)
      return false;
  return true;
}

static bool finish(gpu_case *c, const char *name, te_schedule *s, int n, te_tensor *const t[]) {
  c->name = name;
  c->sch = s;
  c->ntensors = n;
  c->nscalars = 0;
  for (int i = 0; i < n; i++) {
    c->tensors[i] = t[i];
    if (!t[i])
      return false;
  }
  return s != NULL;
}

bool gpu_case_elementwise(te_ctx *ctx, gpu_case *c) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 1, E(n));
  te_tensor *out = te_compute(ctx, "C", 1, E(n), E(i),
                              te_add(te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2.0)), TE_AT(b, i)));
  te_schedule *s = out ? te_schedule_new(ctx, 1, (te_tensor *const[]){out}) : NULL;
  te_stage *st = s ? te_stage_of(s, out) : NULL;
  te_iter *bx = NULL, *tx = NULL;
  te_status r[3] = {te_split(st, te_axis(st, 0), 64, &bx, &tx), te_bind(st, bx, TE_BLOCK_X),
                    te_bind(st, tx, TE_THREAD_X)};
  return ok_all(r, 3) && finish(c, "gpu_add", s, 3, (te_tensor *const[]){a, b, out});
}

bool gpu_case_reduce(te_ctx *ctx, gpu_case *c) {
  te_expr *i = te_var(ctx, "i");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, 1024));
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(te_int(ctx, 64), te_int(ctx, 1024)));
  te_tensor *b = te_compute(ctx, "B", 1, E(te_int(ctx, 64)), E(i), TE_SUM(TE_AT(a, i, k), k));
  te_schedule *s = b ? te_schedule_new(ctx, 1, (te_tensor *const[]){b}) : NULL;
  te_stage *sb = s ? te_stage_of(s, b) : NULL;
  te_iter *ko = NULL, *ki = NULL;
  te_tensor *rf = NULL;
  te_status r[2] = {te_split(sb, te_reduce_iter(sb, 0), 64, &ko, &ki),
                    te_rfactor(s, b, ki, 0, &rf)};
  if (!ok_all(r, 2))
    return false;
  te_stage *srf = te_stage_of(s, rf);
  te_status r2[3] = {te_bind(sb, te_axis(sb, 0), TE_BLOCK_X),
                     te_compute_at(srf, sb, te_axis(sb, 0)),
                     te_bind(srf, te_axis(srf, 0), TE_THREAD_X)};
  return ok_all(r2, 3) && finish(c, "gpu_rowsum", s, 2, (te_tensor *const[]){a, b});
}

/* A cooperative load: the cache stage's two axes fused and split over ty x tx threads. */
static bool coop_load(te_stage *st, int64_t tx) {
  te_iter *f = NULL, *o = NULL, *in = NULL;
  te_status r[4] = {te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f), te_split(st, f, tx, &o, &in),
                    te_bind(st, o, TE_THREAD_Y), te_bind(st, in, TE_THREAD_X)};
  return ok_all(r, 4);
}

bool gpu_case_matmul(te_ctx *ctx, gpu_case *c) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *N = te_int(ctx, 128);
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), N);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(N, N));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(N, N));
  te_tensor *out =
      te_compute(ctx, "C", 2, E(N, N), E(i, j), TE_SUM(te_mul(TE_AT(a, i, k), TE_AT(b, k, j)), k));
  te_schedule *s = out ? te_schedule_new(ctx, 1, (te_tensor *const[]){out}) : NULL;
  te_stage *sc = s ? te_stage_of(s, out) : NULL;
  te_iter *io = NULL, *jo = NULL, *ii = NULL, *ji = NULL, *ko = NULL, *ki = NULL;
  te_tensor *as = NULL, *bs = NULL;
  te_status r[10] = {te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 16, 16, &io, &jo, &ii, &ji),
                     te_split(sc, te_reduce_iter(sc, 0), 16, &ko, &ki),
                     te_reorder(sc, 6, (te_iter *const[]){io, jo, ii, ji, ko, ki}),
                     te_bind(sc, io, TE_BLOCK_Y),
                     te_bind(sc, jo, TE_BLOCK_X),
                     te_bind(sc, ii, TE_THREAD_Y),
                     te_bind(sc, ji, TE_THREAD_X),
                     te_cache_read(s, a, TE_SCOPE_SHARED, 1, (te_stage *const[]){sc}, &as),
                     te_cache_read(s, b, TE_SCOPE_SHARED, 1, (te_stage *const[]){sc}, &bs),
                     TE_OK};
  if (!ok_all(r, 10))
    return false;
  te_stage *sa = te_stage_of(s, as), *sbs = te_stage_of(s, bs);
  te_status r2[2] = {te_compute_at(sa, sc, ko), te_compute_at(sbs, sc, ko)};
  if (!ok_all(r2, 2) || !coop_load(sa, 16) || !coop_load(sbs, 16))
    return false;
  return finish(c, "gpu_matmul", s, 3, (te_tensor *const[]){a, b, out});
}

bool gpu_case_vector(te_ctx *ctx, gpu_case *c, const gpu_vec_spec *v) {
  te_expr *r = te_var(ctx, "r"), *j = te_var(ctx, "j");
  te_expr *R = te_int(ctx, v->rows), *N = te_int(ctx, v->cols);
  te_tensor *a =
      te_placeholder(ctx, "A", v->dt, 2, E(R, te_int(ctx, v->cols * v->stride + v->offset)));
  te_expr *x = TE_AT(a, r, te_add(te_mul(j, te_int(ctx, v->stride)), te_int(ctx, v->offset)));
  te_expr *f = v->fn ? te_call(ctx, v->fn, 1, E(x)) : x;
  te_expr *pos =
      te_select(te_gt(x, te_float(ctx, v->dt, 0.0)), f, te_mul(x, te_float(ctx, v->dt, 0.5)));
  te_expr *q = te_cast(v->dt, te_cast(TE_I32, te_mul(x, te_float(ctx, v->dt, 4.0))));
  te_tensor *out = te_compute(ctx, "B", 2, E(R, N), E(r, j), te_add(pos, q));
  te_schedule *s = out ? te_schedule_new(ctx, 1, (te_tensor *const[]){out}) : NULL;
  te_stage *sb = s ? te_stage_of(s, out) : NULL;
  te_iter *jo = NULL, *ji = NULL, *jb = NULL, *jt = NULL;
  te_status st[7] = {te_split(sb, te_axis(sb, 1), v->lanes, &jo, &ji),
                     te_split(sb, jo, v->threads, &jb, &jt),
                     te_bind(sb, te_axis(sb, 0), TE_BLOCK_Y),
                     te_bind(sb, jb, TE_BLOCK_X),
                     te_bind(sb, jt, TE_THREAD_X),
                     te_vectorize(sb, ji),
                     TE_OK};
  if (!ok_all(st, 6))
    return false;
  if (v->shared) {
    te_tensor *as = NULL;
    if (te_cache_read(s, a, TE_SCOPE_SHARED, 1, (te_stage *const[]){sb}, &as) != TE_OK)
      return false;
    te_stage *sa = te_stage_of(s, as);
    te_iter *f2 = NULL, *co = NULL, *ci = NULL, *to = NULL, *ti = NULL;
    te_status s2[6] = {te_compute_at(sa, sb, jb),
                       te_split(sa, te_axis(sa, 1), v->lanes, &co, &ci),
                       te_fuse(sa, te_axis(sa, 0), co, &f2),
                       te_split(sa, f2, v->threads, &to, &ti),
                       te_bind(sa, ti, TE_THREAD_X),
                       te_vectorize(sa, ci)};
    if (!ok_all(s2, 6))
      return false;
  }
  return finish(c, v->name, s, 2, (te_tensor *const[]){a, out});
}

/* C = sum acc(A) * acc(B) in tiles of 16 x 8 x k_split, tensorized as insn. */
static bool mma_gemm(te_ctx *ctx, gpu_case *c, te_dtype a_t, te_dtype b_t, te_dtype acc,
                     const char *insn, int64_t m, int64_t n, int64_t kk, int64_t k_split,
                     int64_t tiles_per_warp) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *M = te_int(ctx, m), *N = te_int(ctx, n), *K = te_int(ctx, kk);
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), K);
  te_tensor *a = te_placeholder(ctx, "A", a_t, 2, E(M, K));
  te_tensor *b = te_placeholder(ctx, "B", b_t, 2, E(K, N));
  te_expr *prod = te_mul(te_cast(acc, TE_AT(a, i, k)), te_cast(acc, TE_AT(b, k, j)));
  te_tensor *out = te_compute(ctx, "C", 2, E(M, N), E(i, j), TE_SUM(prod, k));
  te_schedule *s = out ? te_schedule_new(ctx, 1, (te_tensor *const[]){out}) : NULL;
  te_stage *sc = s ? te_stage_of(s, out) : NULL;
  te_iter *io = NULL, *jo = NULL, *ii = NULL, *ji = NULL, *ko = NULL, *ki = NULL, *jb = NULL,
          *jw = NULL, *jwo = NULL, *jt = NULL;
  te_status r[5] = {te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 16, 8, &io, &jo, &ii, &ji),
                    te_split(sc, te_reduce_iter(sc, 0), k_split, &ko, &ki),
                    te_split(sc, jo, 4 * tiles_per_warp, &jb, &jw), TE_OK, TE_OK};
  if (!ok_all(r, 3))
    return false;
  if (tiles_per_warp > 1) { /* each warp tiles_per_warp tiles side by side, a loop inside k.o */
    r[3] = te_split(sc, jw, tiles_per_warp, &jwo, &jt);
    r[4] = te_reorder(sc, 8, (te_iter *const[]){io, jb, jwo, ko, jt, ii, ji, ki});
  } else {
    jwo = jw;
    r[4] = te_reorder(sc, 7, (te_iter *const[]){io, jb, jwo, ko, ii, ji, ki});
  }
  te_status r2[4] = {te_bind(sc, io, TE_BLOCK_Y), te_bind(sc, jb, TE_BLOCK_X),
                     te_bind(sc, jwo, TE_THREAD_X), te_tensorize(sc, ii, insn)};
  if (!ok_all(r, 5) || !ok_all(r2, 4))
    return false;
  return finish(c, "gpu_mma", s, 3, (te_tensor *const[]){a, b, out});
}

bool gpu_case_mma_gemm(te_ctx *ctx, gpu_case *c, te_dtype in, int64_t m, int64_t n, int64_t kk,
                       int64_t k_split, int64_t tiles_per_warp) {
  return mma_gemm(ctx, c, in, in, TE_F32, "mma_m16n8k16", m, n, kk, k_split, tiles_per_warp);
}

bool gpu_case_mma_int8(te_ctx *ctx, gpu_case *c, te_dtype a, te_dtype b, int64_t m, int64_t n,
                       int64_t kk, int64_t k_split, int64_t tiles_per_warp) {
  return mma_gemm(ctx, c, a, b, TE_I32, "mma_m16n8k32", m, n, kk, k_split, tiles_per_warp);
}

bool gpu_case_mma_f16(te_ctx *ctx, gpu_case *c) {
  return gpu_case_mma_gemm(ctx, c, TE_F16, 64, 64, 64, 16, 1);
}

bool gpu_case_mma_bf16(te_ctx *ctx, gpu_case *c) {
  return gpu_case_mma_gemm(ctx, c, TE_BF16, 64, 64, 64, 16, 2);
}

bool gpu_case_softmax(te_ctx *ctx, gpu_case *c) {
  te_tensor *x = te_placeholder(ctx, "x", TE_F32, 2, E(te_int(ctx, 32), te_int(ctx, 256)));
  te_tensor *sm = te_op_softmax(ctx, x, "softmax");
  te_schedule *s = sm ? te_schedule_new(ctx, 1, (te_tensor *const[]){sm}) : NULL;
  te_stage *so = s ? te_stage_of(s, sm) : NULL;
  if (!so)
    return false;
  static const char *const inner[] = {"sum", "exp", "max"}; /* readers first */
  for (int i = 0; i < 3; i++)
    if (te_compute_at(te_stage_of(s, te_op_stage(sm, inner[i])), so, te_axis(so, 0)) != TE_OK)
      return false;
  te_stage *se = te_stage_of(s, te_op_stage(sm, "exp"));
  te_status r[3] = {te_bind(so, te_axis(so, 0), TE_BLOCK_X),
                    te_bind(so, te_axis(so, 1), TE_THREAD_X),
                    te_bind(se, te_axis(se, 1), TE_THREAD_X)};
  return ok_all(r, 3) && finish(c, "gpu_softmax", s, 2, (te_tensor *const[]){x, sm});
}

const gpu_case_entry gpu_cases[] = {
    {"elementwise", gpu_case_elementwise},
    {"reduce", gpu_case_reduce},
    {"matmul", gpu_case_matmul},
    {"softmax", gpu_case_softmax},
};
const int gpu_ncases = (int)(sizeof gpu_cases / sizeof gpu_cases[0]);

#define BIND_TRY(call)                                                                             \
  do {                                                                                             \
    te_status bind_st_ = (call);                                                                   \
    if (bind_st_ != TE_OK)                                                                         \
      return bind_st_;                                                                             \
  } while (0)

te_status gpu_bind_partials(te_stage *srf, gpu_partials layout, int64_t inner, int64_t inner2) {
  te_iter *a = NULL, *b = NULL, *a2 = NULL, *b2 = NULL;
  switch (layout) {
  case ALONG_X:
    return te_bind(srf, te_axis(srf, 0), TE_THREAD_X);
  case ALONG_Y:
    BIND_TRY(te_bind(srf, te_axis(srf, 0), TE_THREAD_Y));
    return te_bind(srf, te_axis(srf, 1), TE_THREAD_X);
  case ALONG_X_COLS_Y:
    BIND_TRY(te_bind(srf, te_axis(srf, 0), TE_THREAD_X));
    return te_bind(srf, te_axis(srf, 1), TE_THREAD_Y);
  case ALONG_XY:
    BIND_TRY(te_split(srf, te_axis(srf, 0), inner, &a, &b));
    BIND_TRY(te_bind(srf, a, TE_THREAD_Y));
    return te_bind(srf, b, TE_THREAD_X);
  case ALONG_YZ_COLS_X:
    BIND_TRY(te_bind(srf, te_axis(srf, 1), TE_THREAD_X));
    BIND_TRY(te_split(srf, te_axis(srf, 0), inner, &a, &b));
    BIND_TRY(te_bind(srf, a, TE_THREAD_Z));
    return te_bind(srf, b, TE_THREAD_Y);
  case ALONG_XYZ:
    BIND_TRY(te_split(srf, te_axis(srf, 0), inner2, &a, &b));
    BIND_TRY(te_split(srf, b, inner, &a2, &b2));
    BIND_TRY(te_bind(srf, a, TE_THREAD_Z));
    BIND_TRY(te_bind(srf, a2, TE_THREAD_Y));
    return te_bind(srf, b2, TE_THREAD_X);
  }
  return TE_ERR_INVALID_ARG;
}
