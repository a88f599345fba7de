/* test_ptx_vector.c — vectorized loops inside CUDA kernels (lib/codegen/ptx_vector.c), without a
 * GPU:
 *   - the PTX for sm_80 and sm_90, assembled by ptxas (a failure without ptxas under
 *     TE_REQUIRE=ptxas, as CI runs it), holds 128-bit accesses (ld.global.nc.v4 for a read-only
 *     argument, st.global.v4, ld/st.shared.v4; v2 for f64) where the alignment is proven, none
 *     where it is not (a read offset by one element, a row length not a multiple of 4, a gather),
 *     the entry's check of the arguments' alignment and the element-wise copy behind it, the
 *     pieces of 8- and 16-lane vectors, 8 lanes of f16/bf16, the unmasked copy of a masked tail,
 *     vector math calls (inline and libdevice);
 *   - numerics by emulation: the lowered kernel (lw_lower for "cuda") is run for every block and
 *     thread, each vector statement lane by lane (a masked region's dead lanes touch nothing),
 *     the threads of a block one after the other between barriers, the last first, shared memory
 *     poisoned at each block's start, every access checked against its buffer's bounds; against
 *     plain C on random non-zero inputs, the output poisoned; shapes that the lanes and the
 *     threads do not divide.
 * What the emulation cannot show, the PTX's alignment facts, the text checks above do.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cases.h"
#include "ir_eval.h"
#include "lower/gpu_lower.h"
#include "te/te.h"
#include "te_test.h"

/* ---------------------------------------------------------------- the PTX */

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
    n++;
  return n;
}

/* Lines holding both a and b. */
static int count_lines(const char *text, const char *a, const char *b) {
  int n = 0;
  for (const char *p = text; p && *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *x = strstr(p, a), *y = strstr(p, b);
    n += x && y && x < p + len && y < p + len;
    p = end ? end + 1 : NULL;
  }
  return n;
}

typedef struct ptx_counts {
  int ld_v4, st_v4; /* ld.global.nc.v4 / st.global.v4 (or .v2 for 64-bit elements) */
  int ld_scalar;    /* element loads of A (ld.global.nc.b32 / .b64, or ld.global for a gather) */
  int checks;       /* the entry's test of the arguments' pointers: and.b64 ..., 15 */
} ptx_counts;

static ptx_counts ptx_of(const gpu_vec_spec *v, const char *target, const char *arch) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(gpu_case_vector(ctx, &c, v), "%s: %s", v->name, te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(
      te_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL, te_target_parse(ctx, target), &m),
      TE_OK, "%s: %s", v->name, te_last_error(ctx));
  const char *ptx = te_module_source(m, "ptx");
  cr_assert_not_null(ptx);
  bool wide = v->dt.bits == 64;
  ptx_counts n = {.ld_v4 = count(ptx, wide ? "ld.global.nc.v2.b64" : "ld.global.nc.v4.b32"),
                  .st_v4 = count(ptx, wide ? "st.global.v2.b64" : "st.global.v4.b32"),
                  .ld_scalar = count(ptx, wide ? "ld.global.nc.b64" : "ld.global.nc.b32") +
                               count(ptx, wide ? "ld.global.b64" : "ld.global.b32"),
                  .checks = count_lines(ptx, "and.b64", ", 15;")};
  if (v->shared) {
    cr_expect(strstr(ptx, wide ? "ld.shared.v2.b64" : "ld.shared.v4.b32"),
              "%s: no 128-bit shared load in\n%s", v->name, ptx);
    cr_expect(strstr(ptx, wide ? "st.shared.v2.b64" : "st.shared.v4.b32"),
              "%s: no 128-bit shared store in\n%s", v->name, ptx);
  }
  char what[160];
  snprintf(what, sizeof what, "%s (%s)", v->name, arch);
  tt_ptxas_assemble(what, ptx, arch);
  te_ctx_free(ctx);
  return n;
}

/* The same counts for sm_80 and sm_90 (both assembled). */
static ptx_counts ptx_both(const gpu_vec_spec *v) {
  ptx_counts a = ptx_of(v, "cuda", "sm_80");
  ptx_counts b = ptx_of(v, "cuda -arch=sm_90", "sm_90");
  cr_expect(a.ld_v4 == b.ld_v4 && a.st_v4 == b.st_v4, "%s: sm_80 and sm_90 differ", v->name);
  return a;
}

#define SPEC(...) (&(gpu_vec_spec){__VA_ARGS__})

/* 4 x f32 per thread, rows of 1024 (16-byte multiples): one 128-bit load and store in the body
   for 16-byte aligned arguments, four element accesses in the body for any others. */
Test(ptx_vector, dense_f32x4) {
  ptx_counts n = ptx_both(SPEC("vec_dense", TE_F32, 3, 1024, 4, 64, 0, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 1);
  cr_expect_eq(n.st_v4, 1);
  cr_expect_eq(n.ld_scalar, 4, "the element-aligned copy for arguments not 16-byte aligned");
  cr_expect_eq(n.checks, 1, "the entry's check of the arguments' alignment");
}

/* 8 and 16 lanes: 128-bit pieces. */
Test(ptx_vector, wide_vectors_in_pieces) {
  ptx_counts n = ptx_both(SPEC("vec_8", TE_F32, 2, 1024, 8, 32, 0, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 2);
  cr_expect_eq(n.st_v4, 2);
  n = ptx_both(SPEC("vec_16", TE_F32, 2, 1024, 16, 32, 0, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 4);
  cr_expect_eq(n.st_v4, 4);
}

/* 8 lanes of f16 or bf16 (arithmetic in f32, widen_half.c): 16 bytes, one v4.b32 access. */
Test(ptx_vector, half_8_lanes) {
  te_dtype dts[2] = {TE_F16, TE_BF16};
  for (int i = 0; i < 2; i++) {
    ptx_counts n =
        ptx_both(SPEC(i ? "vec_bf16" : "vec_f16", dts[i], 3, 1024, 8, 64, 0, 1, true, NULL));
    cr_expect_eq(n.ld_v4, 1);
    cr_expect_eq(n.st_v4, 1);
  }
}

/* 2 x f64: ld.global.nc.v2.b64. */
Test(ptx_vector, dense_f64x2) {
  ptx_counts n = ptx_both(SPEC("vec_f64", TE_F64, 3, 512, 2, 64, 0, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 1);
  cr_expect_eq(n.st_v4, 1);
}

/* A[r, j + 1]: the read is one element off every 16-byte boundary: no 128-bit load (the store
   to B, aligned, still is one). */
Test(ptx_vector, offset_by_one_element) {
  ptx_counts n = ptx_both(SPEC("vec_off1", TE_F32, 3, 1024, 4, 64, 1, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 0);
  cr_expect_eq(n.st_v4, 1);
}

/* Rows of 1001 elements: row r starts at 1001 r, not a multiple of 4: no 128-bit access, and
   no check of the arguments (one body, whatever their alignment: 4 element loads unmasked, 4
   masked for the last thread's tail). */
Test(ptx_vector, row_length_not_a_multiple_of_4) {
  ptx_counts n = ptx_both(SPEC("vec_1001", TE_F32, 3, 1001, 4, 64, 0, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 0);
  cr_expect_eq(n.st_v4, 0);
  cr_expect_eq(n.checks, 0);
  cr_expect_eq(n.ld_scalar, 8);
}

/* 8 lanes over rows of 1004: the last thread's vector is a masked tail of 4 lanes. Its masked
   copy is element by element; the unmasked one (every lane live) and only it is 2 x 128 bits. */
Test(ptx_vector, split_tail) {
  ptx_counts n = ptx_both(SPEC("vec_tail", TE_F32, 3, 1004, 8, 32, 0, 1, false, NULL));
  cr_expect_eq(n.ld_v4, 2);
  cr_expect_eq(n.st_v4, 2);
}

/* A[r, 2 j]: a gather, one load a lane. */
Test(ptx_vector, gather_per_lane) {
  ptx_counts n = ptx_both(SPEC("vec_gather", TE_F32, 3, 512, 4, 64, 0, 2, false, NULL));
  cr_expect_eq(n.ld_v4, 0);
  cr_expect_eq(n.st_v4, 1);
  cr_expect_geq(n.ld_scalar, 4);
}

/* The block's part of A copied into shared memory 4 elements a thread: ld.global.nc.v4 into
   st.shared.v4, then ld.shared.v4 (checked in ptx_of). */
Test(ptx_vector, shared_copy) {
  ptx_counts n = ptx_both(SPEC("vec_shared", TE_F32, 3, 1024, 4, 64, 0, 1, true, NULL));
  cr_expect_eq(n.ld_v4, 1);
  ptx_both(SPEC("vec_shared64", TE_F64, 3, 512, 2, 64, 0, 1, true, NULL));
}

/* Math calls of vectors: exp (inline polynomial) and sin, tanh, erf (libdevice, a call a lane;
   without libdevice sin is refused as for scalars). */
Test(ptx_vector, math_calls) {
  ptx_counts n = ptx_both(SPEC("vec_exp", TE_F32, 2, 1024, 4, 64, 0, 1, false, "exp"));
  cr_expect_eq(n.ld_v4, 1);
  const char *fns[] = {"sin", "tanh", "erf", "log2"};
  for (int i = 0; i < 4; i++) {
    te_ctx *ctx = te_ctx_new();
    gpu_case c;
    cr_assert(gpu_case_vector(ctx, &c, SPEC("vec_fn", TE_F32, 2, 256, 4, 32, 0, 1, false, fns[i])));
    te_module *m = NULL;
    te_status st = te_build(c.sch, c.name, 2, c.tensors, 0, NULL, te_target_parse(ctx, "cuda"), &m);
    if (st == TE_ERR_UNSUPPORTED && strstr(te_last_error(ctx), "libdevice")) {
      printf("ptx_vector: %s refused without libdevice, as for scalars\n", fns[i]);
    } else {
      cr_assert_eq(st, TE_OK, "%s: %s", fns[i], te_last_error(ctx));
      tt_ptxas_assemble(fns[i], te_module_source(m, "ptx"), "sm_80");
    }
    te_ctx_free(ctx);
  }
}

/* ---------------------------------------------------------------- emulation */

enum { MAXT = 256, MAXL = 16, MAXV = 24, MAXB = 4 };

typedef struct mem {
  ir_buffer *b;
  ir_eval_val *data;
  int64_t count;
  bool local; /* a copy a thread */
} mem;

/* Threads and lanes: which are live where a statement runs. */
typedef struct live {
  bool lane[MAXT][MAXL];
} live;

typedef struct emu {
  int64_t block; /* threads a block */
  int nbufs;
  mem bufs[MAXB];
  int cur; /* the thread evaluating (for its local buffers) */
  int nv[MAXT];
  te_expr *vars[MAXT][MAXV];
  ir_eval_val vals[MAXT][MAXL][MAXV]; /* per lane (a scalar's value in every lane) */
} emu;

static ir_eval_val *cell(emu *s, ir_buffer *b, int64_t index) {
  for (int i = 0; i < s->nbufs; i++)
    if (s->bufs[i].b == b) {
      cr_assert(index >= 0 && index < s->bufs[i].count, "%s[%lld] is out of bounds", b->name,
                (long long)index);
      return &s->bufs[i].data[(s->bufs[i].local ? s->cur * s->bufs[i].count : 0) + index];
    }
  cr_assert_fail("buffer %s is not bound", b->name);
  return NULL;
}

static bool load_cb(void *user, ir_buffer *b, int64_t index, ir_eval_val *out) {
  *out = *cell(user, b, index);
  return true;
}

static ir_eval_val eval(emu *s, int t, te_expr *e, int lane) {
  s->cur = t;
  ir_eval_env env = {
      .n = s->nv[t], .vars = s->vars[t], .vals = s->vals[t][lane], .load = load_cb, .user = s};
  ir_eval_val v;
  cr_assert(ir_eval(&env, e, e->dtype.lanes == 1 ? 0 : lane, &v), "cannot evaluate a lane");
  return v;
}

/* Binds var in thread t: lane l's value v[l] (v[0] in every lane for a scalar). */
static void push(emu *s, int t, te_expr *var, const ir_eval_val *v, bool vector) {
  cr_assert(s->nv[t] < MAXV);
  s->vars[t][s->nv[t]] = var;
  for (int l = 0; l < MAXL; l++)
    s->vals[t][l][s->nv[t]] = v[vector ? l : 0];
  s->nv[t]++;
}

static bool any_lane(const live *lv, int t) {
  for (int l = 0; l < MAXL; l++)
    if (lv->lane[t][l])
      return true;
  return false;
}

static void run(emu *s, ir_stmt *st, const live *lv);

/* A store: lane by lane where live (a scalar store: lane 0). */
static void run_store(emu *s, ir_stmt *st, const live *lv) {
  int lanes = (int)st->exprs[0]->dtype.lanes;
  cr_assert(lanes <= MAXL);
  for (int t = (int)s->block - 1; t >= 0; t--)
    for (int l = 0; l < lanes; l++) {
      if (!lv->lane[t][l])
        continue;
      ir_eval_val v = eval(s, t, st->exprs[0], l);
      if (st->exprs[0]->dtype.code == kDLFloat && st->exprs[0]->dtype.bits == 32)
        v.f = (float)v.f;
      int64_t at = eval(s, t, st->exprs[1], l).i;
      s->cur = t;
      *cell(s, st->u.buffer, at) = v;
    }
}

/* attr vector_mask = m: the live lanes AND m. */
static void run_mask(emu *s, ir_stmt *st, const live *lv) {
  live *m = malloc(sizeof *m);
  int lanes = (int)st->exprs[0]->dtype.lanes;
  for (int t = 0; t < s->block; t++)
    for (int l = 0; l < MAXL; l++)
      m->lane[t][l] = lv->lane[t][l] && (l >= lanes || eval(s, t, st->exprs[0], l).i != 0);
  run(s, st->stmts[0], m);
  free(m);
}

/* A loop: in lock step when every live thread has the same bounds (a loop holding a barrier
   must), else thread by thread. */
static void run_for(emu *s, ir_stmt *st, const live *lv) {
  int64_t lo[MAXT], n[MAXT];
  int first = -1;
  bool same = true;
  for (int t = 0; t < s->block; t++) {
    if (!any_lane(lv, t))
      continue;
    lo[t] = eval(s, t, IR_FOR_MIN(st), 0).i, n[t] = eval(s, t, IR_FOR_EXTENT(st), 0).i;
    first = first < 0 ? t : first;
    same = same && lo[t] == lo[first] && n[t] == n[first];
  }
  live *one = calloc(1, sizeof *one);
  for (int t = 0; t < s->block && first >= 0; t++) {
    if (!any_lane(lv, t) || (same && t != first))
      continue;
    for (int u = 0; u < s->block; u++)
      for (int l = 0; l < MAXL; l++)
        one->lane[u][l] = lv->lane[u][l] && (same || u == t);
    for (int64_t i = lo[t]; i < lo[t] + n[t]; i++) {
      ir_eval_val iv = {.i = i};
      for (int u = 0; u < s->block; u++)
        if (any_lane(one, u))
          push(s, u, IR_FOR_VAR(st), &iv, false);
      run(s, IR_FOR_BODY(st), one);
      for (int u = 0; u < s->block; u++)
        if (any_lane(one, u))
          s->nv[u]--;
    }
  }
  free(one);
}

static void run_let(emu *s, ir_stmt *st, const live *lv) {
  te_expr *e = st->exprs[1];
  for (int t = 0; t < s->block; t++) {
    if (!any_lane(lv, t))
      continue;
    ir_eval_val v[MAXL];
    for (int l = 0; l < (int)e->dtype.lanes; l++)
      v[l] = eval(s, t, e, l);
    push(s, t, st->exprs[0], v, e->dtype.lanes > 1);
  }
  run(s, st->stmts[0], lv);
  for (int t = 0; t < s->block; t++)
    if (any_lane(lv, t))
      s->nv[t]--;
}

static void run_if(emu *s, ir_stmt *st, const live *lv) {
  cr_assert_eq(st->exprs[0]->dtype.lanes, 1, "a vector if: vectorize.c makes masks");
  live *yes = calloc(1, sizeof *yes), *no = calloc(1, sizeof *no);
  for (int t = 0; t < s->block; t++) {
    bool c = any_lane(lv, t) && eval(s, t, st->exprs[0], 0).i != 0;
    for (int l = 0; l < MAXL; l++)
      yes->lane[t][l] = lv->lane[t][l] && c, no->lane[t][l] = lv->lane[t][l] && !c;
  }
  run(s, st->stmts[0], yes);
  if (st->nstmts > 1)
    run(s, st->stmts[1], no);
  free(yes), free(no);
}

static void run(emu *s, ir_stmt *st, const live *lv) {
  if (!st)
    return;
  switch (st->kind) {
  case IR_S_SEQ:
    for (uint32_t i = 0; i < st->nstmts; i++)
      run(s, st->stmts[i], lv);
    return;
  case IR_S_FOR:
    run_for(s, st, lv);
    return;
  case IR_S_LET_STMT:
    run_let(s, st, lv);
    return;
  case IR_S_IF:
    run_if(s, st, lv);
    return;
  case IR_S_STORE:
    run_store(s, st, lv);
    return;
  case IR_S_ATTR:
    if (strcmp(st->u.attr.key, "vector_mask") == 0)
      run_mask(s, st, lv);
    else
      run(s, st->stmts[0], lv);
    return;
  case IR_S_BARRIER:
    for (int t = 0; t < s->block; t++)
      cr_assert(any_lane(lv, t), "a barrier not reached by thread %d", t);
    return;
  case IR_S_EVALUATE:
    return;
  default:
    cr_assert_fail("the emulator has no %s", ir_stmt_kind_name[st->kind]);
  }
}

static bool has_barrier(ir_stmt *st) {
  if (!st || st->kind == IR_S_BARRIER)
    return st != NULL;
  for (uint32_t i = 0; i < st->nstmts; i++)
    if (has_barrier(st->stmts[i]))
      return true;
  return false;
}

typedef struct kernel_run {
  lw_gpu_kernel *k;
  int64_t grid[2], block;
} kernel_run;

/* One block: each top-level statement without a barrier thread by thread, the last thread
   first (the threads of a block are not in step: a read of what another thread writes before
   the next barrier would show); one holding a barrier in lock step. */
static void run_block(emu *s, const kernel_run *kr, int64_t bx, int64_t by) {
  ir_stmt *body = kr->k->body;
  uint32_t n = body->kind == IR_S_SEQ ? body->nstmts : 1;
  live *lv = calloc(1, sizeof *lv);
  for (int t = 0; t < s->block; t++) {
    s->nv[t] = 0;
    ir_eval_val idx[LW_GPU_NIDX] = {{.i = bx}, {.i = by}, {.i = 0}, {.i = t}, {.i = 0}, {.i = 0}};
    for (int d = 0; d < LW_GPU_NIDX; d++)
      if (kr->k->idx[d])
        push(s, t, kr->k->idx[d], &idx[d], false);
  }
  for (uint32_t i = 0; i < n; i++) {
    ir_stmt *st = body->kind == IR_S_SEQ ? body->stmts[i] : body;
    bool step = has_barrier(st);
    for (int64_t t = s->block - 1; t >= 0; t--) {
      for (int u = 0; u < s->block; u++)
        for (int l = 0; l < MAXL; l++)
          lv->lane[u][l] = step || u == t;
      run(s, st, lv);
      if (step)
        break;
    }
  }
  free(lv);
}

static double ref_value(const gpu_vec_spec *v, double x) {
  bool f32 = v->dt.bits == 32;
  double f = x;
  if (v->fn && !strcmp(v->fn, "exp"))
    f = f32 ? (double)expf((float)x) : exp(x);
  double pos = x > 0 ? f : (f32 ? (double)((float)x * 0.5f) : x * 0.5);
  double q = f32 ? (double)(int32_t)((float)x * 4.0f) : (double)(int32_t)(x * 4.0);
  return f32 ? (double)((float)pos + (float)q) : pos + q;
}

static void check_emulated(const gpu_vec_spec *v) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(gpu_case_vector(ctx, &c, v), "%s: %s", v->name, te_last_error(ctx));
  ir_scratch_begin(ctx);
  lw_func *f = NULL;
  cr_assert_eq(lw_lower(c.sch, c.name, 2, c.tensors, 0, NULL, te_target_parse(ctx, "cuda"), &f),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert(f->gpu && f->gpu->nkernels == 1);
  kernel_run kr = {.k = &f->gpu->kernels[0]};
  lw_gpu_kernel *k = kr.k;
  int64_t gz = 0, bz = 0;
  cr_assert(ir_is_const_int(k->grid[0], &kr.grid[0]) && ir_is_const_int(k->grid[1], &kr.grid[1]) &&
            ir_is_const_int(k->grid[2], &gz) && ir_is_const_int(k->block[0], &kr.block) &&
            ir_is_const_int(k->block[2], &bz) && gz == 1 && bz == 1 && kr.block <= MAXT);
  int64_t acols = v->cols * v->stride + v->offset;
  int64_t na = v->rows * acols, nb = v->rows * v->cols;
  ir_eval_val *a = malloc(sizeof *a * (size_t)na), *b = malloc(sizeof *b * (size_t)nb);
  unsigned seed = 99u + (unsigned)v->cols;
  for (int64_t i = 0; i < na; i++) {
    double u = (rand_r(&seed) % 20000) / 10000.0 - 1.0; /* [-1, 1), never 0 */
    a[i].f = u == 0 ? 0.37 : u;
    if (v->dt.bits == 32)
      a[i].f = (float)a[i].f;
  }
  for (int64_t i = 0; i < nb; i++)
    b[i].f = NAN;
  emu *s = calloc(1, sizeof *s);
  s->block = kr.block;
  for (int i = 0; i < k->nparams; i++) {
    ir_buffer *bf = k->params[i].buffer;
    cr_assert(k->params[i].kind == LW_GPU_PARAM_BUFFER && bf->arg_index >= 0);
    s->bufs[s->nbufs++] = (mem){bf, bf->arg_index == 0 ? a : b, bf->arg_index == 0 ? na : nb, 0};
  }
  ir_eval_val *scratch[MAXB] = {0};
  int first = s->nbufs;
  for (int i = 0; i < k->nshared + k->nlocal; i++) {
    lw_gpu_alloc *al = i < k->nshared ? &k->shared[i] : &k->local[i - k->nshared];
    bool local = i >= k->nshared;
    cr_assert(s->nbufs < MAXB);
    scratch[i] = malloc(sizeof(ir_eval_val) * (size_t)(al->count * (local ? kr.block : 1)));
    s->bufs[s->nbufs++] = (mem){al->buffer, scratch[i], al->count, local};
  }
  for (int64_t by = 0; by < kr.grid[1]; by++)
    for (int64_t bx = 0; bx < kr.grid[0]; bx++) {
      for (int i = first; i < s->nbufs; i++) /* poisoned at each block's start */
        for (int64_t j = 0; j < s->bufs[i].count * (s->bufs[i].local ? kr.block : 1); j++)
          s->bufs[i].data[j].f = NAN;
      run_block(s, &kr, bx, by);
    }
  int bad = 0;
  double tol = v->dt.bits == 32 ? 4e-6 : 1e-14;
  for (int64_t r = 0; r < v->rows; r++)
    for (int64_t j = 0; j < v->cols; j++) {
      double want = ref_value(v, a[r * acols + j * v->stride + v->offset].f);
      double got = b[r * v->cols + j].f;
      if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))) && bad++ < 5)
        cr_expect_fail("%s: B[%lld, %lld] = %.9g, expected %.9g", v->name, (long long)r,
                       (long long)j, got, want);
    }
  cr_expect_eq(bad, 0, "%s: %d elements differ", v->name, bad);
  printf("ptx_vector.%s: the emulated kernel (%lld x %lld blocks of %lld) matches C\n", v->name,
         (long long)kr.grid[0], (long long)kr.grid[1], (long long)kr.block);
  for (int i = 0; i < MAXB; i++)
    free(scratch[i]);
  free(a), free(b), free(s);
  ir_scratch_end(ctx);
  te_ctx_free(ctx);
}

/* Shapes the threads do not divide (the last block's guard), tails the lanes do not divide
   (masked vectors), offsets and gathers, a shared-memory copy, f64. */
Test(ptx_vector, emulated_dense) {
  check_emulated(SPEC("vec_dense", TE_F32, 3, 1000, 4, 64, 0, 1, false, NULL));
}
Test(ptx_vector, emulated_masked_tail) {
  check_emulated(SPEC("vec_tail", TE_F32, 3, 1001, 8, 32, 0, 1, false, NULL));
}
Test(ptx_vector, emulated_offset_gather) {
  check_emulated(SPEC("vec_off", TE_F32, 2, 301, 4, 32, 3, 1, false, NULL));
  check_emulated(SPEC("vec_gather", TE_F32, 2, 301, 4, 32, 1, 2, false, NULL));
}
Test(ptx_vector, emulated_shared) {
  check_emulated(SPEC("vec_shared", TE_F32, 3, 1024, 4, 64, 0, 1, true, NULL));
  check_emulated(SPEC("vec_shared_tail", TE_F32, 2, 500, 4, 64, 0, 1, true, NULL));
}
Test(ptx_vector, emulated_f64_exp) {
  check_emulated(SPEC("vec_f64", TE_F64, 2, 333, 2, 64, 0, 1, false, "exp"));
  check_emulated(SPEC("vec_exp16", TE_F32, 2, 999, 16, 16, 0, 1, false, "exp"));
}
