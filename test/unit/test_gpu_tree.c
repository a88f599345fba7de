/* test_gpu_tree.c — cross-thread reductions as warp shuffles on cuda (lib/lower/gpu_tree_warp.c,
 * lib/codegen/ptx_shuffle.c), without a GPU:
 *   - the PTX of each kernel holds shfl.sync.bfly and is assembled by ptxas for sm_80 and sm_90
 *     (a failure without ptxas under TE_REQUIRE=ptxas, as CI runs it);
 *   - numerics by emulation: the lowered kernel body is run for every block, the threads of a
 *     warp in lock step (a shuffle reads the partner lane's value and checks that every thread
 *     of the warp that exists is there: the convergence shfl.sync needs), the warps of a block
 *     one after the other between barriers, the LAST warp first (so a warp that read shared
 *     memory another warp overwrites before a barrier would read the wrong value), shared
 *     memory poisoned at each block's start; against a plain C reduction on random non-zero
 *     inputs, the output poisoned. Thread counts 20, 48, 256 and 100 (a partial last warp), a
 *     reduce extent that no thread count divides; sum, max, min, product; f32, f64, i32, i64.
 *   - two- and three-dimensional blocks: the partials along threadIdx.y (and z) while
 *     threadIdx.x indexes output elements (each x a group with its own tree: shuffles by
 *     multiples of the x extent, two rounds), along x while y indexes outputs, along every index
 *     of the block (linearized), and a layout whose warps do not line up with the groups (the
 *     shared-memory tree on cuda, emulated too). The emulator numbers threads as the hardware
 *     does (x + X * (y + Y * z)) and makes warps of 32 consecutive numbers.
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

enum { MAXT = 256, MAXV = 48, MAXB = 6 };

/* ---- memory: the kernel's global and shared buffers, and each thread's local ones ---- */

typedef struct buf {
  ir_buffer *b;
  ir_eval_val *data;
  int64_t count;
  bool local; /* one copy a thread */
} buf;

typedef struct simt {
  lw_gpu_kernel *k;
  int nbufs;
  buf bufs[MAXB];
  int64_t block;    /* threads a block */
  int64_t dims[3];  /* its x, y, z extents */
  int64_t blockidx; /* the block being run */
  int nv[MAXT];     /* per thread: bound variables */
  te_expr *vars[MAXT][MAXV];
  ir_eval_val vals[MAXT][MAXV];
  int cur; /* the thread evaluating (for loads of local buffers) */
  int shuffles;
} simt;

static ir_eval_val *cell(simt *s, ir_buffer *b, int64_t index) {
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

static ir_eval_val eval(simt *s, int t, te_expr *e) {
  s->cur = t;
  ir_eval_env env = {
      .n = s->nv[t], .vars = s->vars[t], .vals = s->vals[t], .load = load_cb, .user = s};
  ir_eval_val v;
  cr_assert(ir_eval(&env, e, 0, &v), "thread %d cannot evaluate an expression", t);
  return v;
}

static void bind(simt *s, int t, te_expr *var, ir_eval_val v) {
  cr_assert(s->nv[t] < MAXV);
  s->vars[t][s->nv[t]] = var;
  s->vals[t][s->nv[t]++] = v;
}

static ir_eval_val *lookup(simt *s, int t, te_expr *var) {
  for (int i = s->nv[t] - 1; i >= 0; i--)
    if (s->vars[t][i] == var)
      return &s->vals[t][i];
  cr_assert_fail("thread %d has no value for %s", t, var->u.var.name);
  return NULL;
}

/* ---- statements over the active threads (mask) in lock step ---- */

static void run(simt *s, ir_stmt *st, const bool *mask);

static void run_let(simt *s, ir_stmt *st, const bool *mask) {
  te_expr *v = st->exprs[1];
  ir_eval_val got[MAXT];
  if (v->kind == IR_CALL && v->u.call == IR_INTRIN_WARP_SHUFFLE_XOR) {
    int64_t off = 0;
    cr_assert(v->args[0]->kind == IR_VAR && ir_is_const_int(v->args[1], &off));
    for (int t = 0; t < s->block; t++) {
      if (!mask[t])
        continue;
      int64_t base = t / 32 * 32;
      for (int64_t l = base; l < base + 32 && l < s->block; l++)
        cr_assert(mask[l], "shuffle: thread %d is there but %lld of its warp is not", t,
                  (long long)l);
      /* a partner past the block's last thread (a partial last warp) gives an undefined
         value (PTX: the source lane is not in the membermask): poison, which must not be used */
      int64_t partner = t ^ off;
      if (partner >= s->block)
        got[t] = ir_is_float(v->dtype) ? (ir_eval_val){.f = NAN} : (ir_eval_val){.i = 0x7eadbeef};
      else
        got[t] = *lookup(s, (int)partner, v->args[0]);
    }
    s->shuffles++;
  } else {
    for (int t = 0; t < s->block; t++)
      if (mask[t])
        got[t] = eval(s, t, v);
  }
  for (int t = 0; t < s->block; t++)
    if (mask[t])
      bind(s, t, st->exprs[0], got[t]);
  run(s, st->stmts[0], mask);
  for (int t = 0; t < s->block; t++)
    if (mask[t])
      s->nv[t]--;
}

static void run_loop(simt *s, ir_stmt *st, const bool *mask, int64_t lo, int64_t n) {
  for (int64_t i = lo; i < lo + n; i++) {
    for (int t = 0; t < s->block; t++)
      if (mask[t])
        bind(s, t, IR_FOR_VAR(st), (ir_eval_val){.i = i});
    run(s, IR_FOR_BODY(st), mask);
    for (int t = 0; t < s->block; t++)
      if (mask[t])
        s->nv[t]--;
  }
}

/* A loop: in lock step when every thread has the same bounds, else thread by thread (such a
   loop may hold no shuffle or barrier: the interpreter checks it there). */
static void run_for(simt *s, ir_stmt *st, const bool *mask) {
  int64_t lo[MAXT], n[MAXT];
  int first = -1;
  bool same = true;
  for (int t = 0; t < s->block; t++) {
    if (!mask[t])
      continue;
    lo[t] = eval(s, t, IR_FOR_MIN(st)).i, n[t] = eval(s, t, IR_FOR_EXTENT(st)).i;
    if (first < 0)
      first = t;
    same = same && lo[t] == lo[first] && n[t] == n[first];
  }
  if (first < 0)
    return;
  if (same) {
    run_loop(s, st, mask, lo[first], n[first]);
    return;
  }
  bool one[MAXT] = {0};
  for (int t = 0; t < s->block; t++)
    if (mask[t]) {
      one[t] = true;
      run_loop(s, st, one, lo[t], n[t]);
      one[t] = false;
    }
}

static void run(simt *s, ir_stmt *st, const bool *mask) {
  if (!st)
    return;
  switch (st->kind) {
  case IR_S_SEQ:
    for (uint32_t i = 0; i < st->nstmts; i++)
      run(s, st->stmts[i], mask);
    return;
  case IR_S_FOR:
    run_for(s, st, mask);
    return;
  case IR_S_LET_STMT:
    run_let(s, st, mask);
    return;
  case IR_S_IF: {
    bool yes[MAXT], no[MAXT];
    for (int t = 0; t < s->block; t++) {
      bool c = mask[t] && eval(s, t, st->exprs[0]).i != 0;
      yes[t] = c, no[t] = mask[t] && !c;
    }
    run(s, st->stmts[0], yes);
    if (st->nstmts > 1)
      run(s, st->stmts[1], no);
    return;
  }
  case IR_S_STORE: {
    cr_assert_eq(st->exprs[0]->dtype.lanes, 1);
    for (int t = 0; t < s->block; t++) {
      if (!mask[t])
        continue;
      ir_eval_val v = eval(s, t, st->exprs[0]);
      if (st->exprs[0]->dtype.code == kDLFloat && st->exprs[0]->dtype.bits == 32)
        v.f = (float)v.f;
      int64_t idx = eval(s, t, st->exprs[1]).i;
      s->cur = t;
      *cell(s, st->u.buffer, idx) = v;
    }
    return;
  }
  case IR_S_BARRIER:
    for (int t = 0; t < s->block; t++)
      cr_assert(mask[t], "a barrier not reached by thread %d", t);
    return;
  case IR_S_ATTR:
  case IR_S_EVALUATE:
    if (st->nstmts > 0)
      run(s, st->stmts[0], mask);
    return;
  default:
    cr_assert_fail("the interpreter has no %s", ir_stmt_kind_name[st->kind]);
  }
}

static bool has_barrier(ir_stmt *st) {
  if (!st)
    return false;
  if (st->kind == IR_S_BARRIER)
    return true;
  for (uint32_t i = 0; i < st->nstmts; i++)
    if (has_barrier(st->stmts[i]))
      return true;
  return false;
}

/* One block: the top-level statements between barriers warp by warp, the last warp first; a
   statement holding a barrier of its own runs the whole block in lock step. */
static void run_block(simt *s) {
  ir_stmt *body = s->k->body;
  uint32_t n = body->kind == IR_S_SEQ ? body->nstmts : 1;
  int64_t nwarps = (s->block + 31) / 32;
  bool all[MAXT], warp[MAXT];
  for (int t = 0; t < s->block; t++)
    all[t] = true;
  for (uint32_t i = 0; i < n;) {
    ir_stmt *st = body->kind == IR_S_SEQ ? body->stmts[i] : body;
    if (st->kind == IR_S_BARRIER || has_barrier(st)) {
      run(s, st, all);
      i++;
      continue;
    }
    uint32_t end = i;
    while (end < n && !has_barrier(body->kind == IR_S_SEQ ? body->stmts[end] : body))
      end++;
    for (int64_t w = nwarps - 1; w >= 0; w--) {
      for (int t = 0; t < s->block; t++)
        warp[t] = t / 32 == w;
      for (uint32_t j = i; j < end; j++)
        run(s, body->kind == IR_S_SEQ ? body->stmts[j] : body, warp);
    }
    i = end;
  }
}

/* ---- the cases ---- */

typedef te_expr *(*reduce_fn)(te_expr *, int, te_expr *const[]);

typedef struct tree_case {
  const char *name;
  reduce_fn red;
  int op; /* 0 sum, 1 max, 2 min, 3 product */
  te_dtype dt;
  int64_t rows, k, threads;
  gpu_partials layout;
  int64_t cols, inner, inner2;
  bool shared_tree; /* cuda keeps the shared-memory tree (the warps do not line up) */
} tree_case;

static te_schedule *tree_schedule(te_ctx *ctx, const tree_case *c, te_tensor **A, te_tensor **B) {
  te_expr *i = te_var(ctx, "i");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, c->k));
  *A = te_placeholder(ctx, "A", c->dt, 2, TE_EXPRS(te_int(ctx, c->rows), te_int(ctx, c->k)));
  *B = te_compute(ctx, "B", 1, TE_EXPRS(te_int(ctx, c->rows)), TE_EXPRS(i),
                  c->red(TE_AT(*A, i, k), 1, TE_EXPRS(k)));
  cr_assert_not_null(*B, "%s", te_last_error(ctx));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){*B});
  te_stage *sb = te_stage_of(s, *B);
  te_iter *ko = NULL, *ki = NULL, *io = NULL, *ii = NULL;
  te_tensor *rf = NULL;
  cr_assert_eq(te_split(sb, te_reduce_iter(sb, 0), c->threads, &ko, &ki), TE_OK);
  cr_assert_eq(te_rfactor(s, *B, ki, 0, &rf), TE_OK, "%s", te_last_error(ctx));
  te_stage *srf = te_stage_of(s, rf);
  if (c->cols > 1) { /* cols outputs a block, on the index the partials do not use */
    cr_assert_eq(te_split(sb, te_axis(sb, 0), c->cols, &io, &ii), TE_OK);
    cr_assert_eq(te_bind(sb, io, TE_BLOCK_X), TE_OK);
    cr_assert_eq(te_bind(sb, ii, c->layout == ALONG_X_COLS_Y ? TE_THREAD_Y : TE_THREAD_X), TE_OK);
  } else {
    io = te_axis(sb, 0);
    cr_assert_eq(te_bind(sb, io, TE_BLOCK_X), TE_OK);
  }
  cr_assert_eq(te_compute_at(srf, sb, io), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(gpu_bind_partials(srf, c->layout, c->inner, c->inner2), TE_OK);
  return s;
}

static bool is_int(te_dtype t) { return t.code == kDLInt; }

/* A random non-zero input: max of negative values and min of positive ones, so that a partial
   read past the real ones (a zero, or garbage) shows; small integers for products. */
static ir_eval_val input(const tree_case *c, unsigned *seed) {
  double u = (rand_r(seed) % 10000) / 10000.0;
  ir_eval_val v;
  if (is_int(c->dt)) {
    v.i = c->op == 3 ? (rand_r(seed) % 2 ? 1 : -1) : (int64_t)(rand_r(seed) % 2001) - 1000;
    if (v.i == 0)
      v.i = 7;
    if (c->op == 1)
      v.i = -1 - (rand_r(seed) % 1000);
    if (c->op == 2)
      v.i = 1 + (rand_r(seed) % 1000);
    return v;
  }
  v.f = c->op == 0   ? u * 2 - 1 + 0.001
        : c->op == 1 ? -2 + 1.9 * u
        : c->op == 2 ? 0.1 + 1.9 * u
                     : 0.999 + 0.002 * u;
  if (c->dt.bits == 32)
    v.f = (float)v.f;
  return v;
}

static void check_emulated(const tree_case *c) {
  te_ctx *ctx = te_ctx_new();
  te_tensor *A = NULL, *B = NULL;
  te_schedule *sch = tree_schedule(ctx, c, &A, &B);
  te_target *tgt = te_target_parse(ctx, "cuda");
  ir_scratch_begin(ctx);
  lw_func *f = NULL;
  cr_assert_eq(lw_lower(sch, c->name, 2, (te_tensor *const[]){A, B}, 0, NULL, tgt, &f), TE_OK, "%s",
               te_last_error(ctx));
  cr_assert(f->gpu && f->gpu->nkernels == 1);
  lw_gpu_kernel *k = &f->gpu->kernels[0];
  int64_t grid = 0, block = 1;
  cr_assert(ir_is_const_int(k->grid[0], &grid));
  simt *s = calloc(1, sizeof *s);
  for (int d = 0; d < 3; d++) {
    cr_assert(ir_is_const_int(k->block[d], &s->dims[d]));
    block *= s->dims[d];
  }
  cr_assert_eq(block, c->threads * (c->cols > 1 ? c->cols : 1));
  cr_assert_leq(block, MAXT);
  s->k = k, s->block = block;
  unsigned seed = 1234u + (unsigned)c->threads;
  ir_eval_val *a = malloc(sizeof *a * (size_t)(c->rows * c->k));
  ir_eval_val *out = malloc(sizeof *out * (size_t)c->rows);
  for (int64_t i = 0; i < c->rows * c->k; i++)
    a[i] = input(c, &seed);
  for (int64_t i = 0; i < c->rows; i++)
    out[i] = is_int(c->dt) ? (ir_eval_val){.i = 0x5a5a5a5a} : (ir_eval_val){.f = NAN};
  for (int i = 0; i < k->nparams; i++) {
    ir_buffer *b = k->params[i].buffer;
    cr_assert(k->params[i].kind == LW_GPU_PARAM_BUFFER && b->arg_index >= 0);
    s->bufs[s->nbufs++] =
        (buf){b, b->arg_index == 0 ? a : out, b->arg_index == 0 ? c->rows * c->k : c->rows, false};
  }
  ir_eval_val *scratch[MAXB] = {0};
  for (int i = 0; i < k->nshared + k->nlocal; i++) {
    lw_gpu_alloc *al = i < k->nshared ? &k->shared[i] : &k->local[i - k->nshared];
    bool local = i >= k->nshared;
    scratch[i] = malloc(sizeof(ir_eval_val) * (size_t)(al->count * (local ? block : 1)));
    s->bufs[s->nbufs++] = (buf){al->buffer, scratch[i], al->count, local};
  }
  for (int64_t bx = 0; bx < grid; bx++) {
    for (int i = 0; i < k->nshared + k->nlocal; i++) { /* poisoned at each block's start */
      lw_gpu_alloc *al = i < k->nshared ? &k->shared[i] : &k->local[i - k->nshared];
      int64_t n = al->count * (i >= k->nshared ? block : 1);
      for (int64_t j = 0; j < n; j++)
        scratch[i][j] = is_int(c->dt) ? (ir_eval_val){.i = 0x7eadbeef} : (ir_eval_val){.f = NAN};
    }
    for (int t = 0; t < block; t++) {
      s->nv[t] = 0;
      /* the hardware's numbering: t = x + X * (y + Y * z) */
      int64_t x = t % s->dims[0], y = t / s->dims[0] % s->dims[1], z = t / s->dims[0] / s->dims[1];
      ir_eval_val idx[LW_GPU_NIDX] = {{.i = bx}, {.i = 0}, {.i = 0}, {.i = x}, {.i = y}, {.i = z}};
      for (int d = 0; d < LW_GPU_NIDX; d++)
        if (k->idx[d])
          bind(s, t, k->idx[d], idx[d]);
    }
    run_block(s);
  }
  if (c->shared_tree)
    cr_expect_eq(s->shuffles, 0, "%s: warp shuffles where the warps do not line up", c->name);
  else
    cr_expect_gt(s->shuffles, 0, "%s: no warp shuffle was run", c->name);
  int bad = 0;
  for (int64_t r = 0; r < c->rows; r++) {
    double ref = c->op == 3 ? 1 : 0, mag = 0;
    int64_t iref = c->op == 3 ? 1 : 0;
    for (int64_t j = 0; j < c->k; j++) {
      ir_eval_val x = a[r * c->k + j];
      if (is_int(c->dt)) {
        iref = c->op == 0   ? iref + x.i
               : c->op == 1 ? (j == 0 || x.i > iref ? x.i : iref)
               : c->op == 2 ? (j == 0 || x.i < iref ? x.i : iref)
                            : iref * x.i;
      } else {
        ref = c->op == 0   ? ref + x.f
              : c->op == 1 ? (j == 0 ? x.f : fmax(ref, x.f))
              : c->op == 2 ? (j == 0 ? x.f : fmin(ref, x.f))
                           : ref * x.f;
        mag += fabs(x.f);
      }
    }
    if (is_int(c->dt)) {
      if (c->dt.bits == 32)
        iref = (int32_t)iref;
      if (out[r].i != iref && bad++ < 5)
        cr_expect_fail("%s: B[%lld] = %lld, expected %lld", c->name, (long long)r,
                       (long long)out[r].i, (long long)iref);
    } else {
      double eps = c->dt.bits == 32 ? 1e-6 : 1e-14;
      double tol = c->op == 0 ? eps * 4 * mag : c->op == 3 ? eps * 4 * (double)c->k * fabs(ref) : 0;
      if (!(fabs(out[r].f - ref) <= tol) && bad++ < 5)
        cr_expect_fail("%s: B[%lld] = %.17g, expected %.17g", c->name, (long long)r, out[r].f, ref);
    }
  }
  cr_expect_eq(bad, 0, "%s: %d of %lld rows differ", c->name, bad, (long long)c->rows);
  for (int i = 0; i < MAXB; i++)
    free(scratch[i]);
  free(a), free(out), free(s);
  ir_scratch_end(ctx);
  te_ctx_free(ctx);
}

/* The PTX for sm_80 and sm_90: shfl.sync.bfly, assembled by ptxas. */
static void check_ptx(const tree_case *c) {
  const char *archs[2][2] = {{"cuda", "sm_80"}, {"cuda -arch=sm_90", "sm_90"}};
  for (int a = 0; a < 2; a++) {
    te_ctx *ctx = te_ctx_new();
    te_tensor *A = NULL, *B = NULL;
    te_schedule *sch = tree_schedule(ctx, c, &A, &B);
    te_module *m = NULL;
    cr_assert_eq(te_build(sch, c->name, 2, (te_tensor *const[]){A, B}, 0, NULL,
                          te_target_parse(ctx, archs[a][0]), &m),
                 TE_OK, "%s: %s", c->name, te_last_error(ctx));
    const char *ptx = te_module_source(m, "ptx");
    cr_assert_not_null(ptx);
    if (c->shared_tree) {
      cr_expect(!strstr(ptx, "shfl.sync"), "%s: shfl.sync in\n%s", c->name, ptx);
    } else {
      cr_expect(strstr(ptx, "shfl.sync.bfly.b32"), "%s: no shfl.sync.bfly in\n%s", c->name, ptx);
      /* a partial last warp: its mask names only the threads that exist */
      int64_t threads = c->threads * (c->cols > 1 ? c->cols : 1);
      char partial[40];
      snprintf(partial, sizeof partial, "%u", (unsigned)((1ull << (threads % 32)) - 1));
      cr_expect(threads % 32 == 0 || strstr(ptx, partial), "%s: no mask %s for the last warp:\n%s",
                c->name, partial, ptx);
    }
    char what[100];
    snprintf(what, sizeof what, "%s (%s)", c->name, archs[a][1]);
    tt_ptxas_assemble(what, ptx, archs[a][1]);
    te_ctx_free(ctx);
  }
}

static void check(const tree_case *c) {
  if (c->layout == ALONG_X)
    cr_assert(c->cols <= 1);
  check_emulated(c);
  check_ptx(c);
}

Test(gpu_tree, sum_f32_48_threads) {
  check(&(tree_case){"tsum48", te_sum, 0, TE_F32, 7, 1000, 48, .layout = ALONG_X});
}
Test(gpu_tree, sum_f32_256_threads) {
  check(&(tree_case){"tsum256", te_sum, 0, TE_F32, 3, 3001, 256, .layout = ALONG_X});
}
Test(gpu_tree, sum_f32_one_warp_20_threads) {
  check(&(tree_case){"tsum20", te_sum, 0, TE_F32, 5, 333, 20, .layout = ALONG_X});
}
Test(gpu_tree, max_f32_100_threads_partial_warp) {
  check(&(tree_case){"tmax100", te_max_r, 1, TE_F32, 4, 1777, 100, .layout = ALONG_X});
}
Test(gpu_tree, min_f64_48_threads) {
  check(&(tree_case){"tmin48", te_min_r, 2, TE_F64, 5, 999, 48, .layout = ALONG_X});
}
Test(gpu_tree, product_f32_64_threads) {
  check(&(tree_case){"tprod64", te_prod, 3, TE_F32, 3, 500, 64, .layout = ALONG_X});
}
Test(gpu_tree, sum_i32_48_threads) {
  check(&(tree_case){"tisum48", te_sum, 0, TE_I32, 6, 1000, 48, .layout = ALONG_X});
}
Test(gpu_tree, max_i64_96_threads) {
  check(&(tree_case){"timax96", te_max_r, 1, TE_I64, 4, 1000, 96, .layout = ALONG_X});
}

/* Two- and three-dimensional blocks (the row counts are multiples of cols: a stage bound to
   threads needs a launch extent that does not depend on the block). */
Test(gpu_tree, sum_f32_along_y_cols_x) { /* 8 groups of 12, shuffles by 8, 16: two rounds */
  check(&(tree_case){"tsum_y", te_sum, 0, TE_F32, 32, 1000, 12, .layout = ALONG_Y, .cols = 8});
}
Test(gpu_tree, max_f64_along_y_cols_x_one_round) { /* 4 groups of 8 in a warp */
  check(&(tree_case){"tmax_y", te_max_r, 1, TE_F64, 12, 777, 8, .layout = ALONG_Y, .cols = 4});
}
Test(gpu_tree, sum_i32_along_x_cols_y) { /* 3 groups of 64: two warps each */
  check(&(tree_case){"tisum_x_cols_y", te_sum, 0, TE_I32, 9, 1000, 64, .layout = ALONG_X_COLS_Y,
                     .cols = 3});
}
Test(gpu_tree, min_f32_along_x_cols_y_shared_tree) { /* groups of 20: warps straddle them */
  check(&(tree_case){"tmin_x20_cols_y", te_min_r, 2, TE_F32, 9, 1000, 20, .layout = ALONG_X_COLS_Y,
                     .cols = 3, .shared_tree = true});
}
Test(gpu_tree, sum_f32_along_xy_partial_warp) { /* 4 x 3 threads: one partial warp */
  check(&(tree_case){"tsum_xy", te_sum, 0, TE_F32, 5, 1000, 12, .layout = ALONG_XY, .cols = 1,
                     .inner = 4});
}
Test(gpu_tree, product_f64_along_xy_two_rounds) { /* 16 x 5 threads, partial last warp */
  check(&(tree_case){"tprod_xy", te_prod, 3, TE_F64, 3, 400, 80, .layout = ALONG_XY, .cols = 1,
                     .inner = 16});
}
Test(gpu_tree, sum_f32_along_yz_cols_x) { /* 4 groups of 5 x 3, 60 threads (partial warp) */
  check(&(tree_case){"tsum_yz", te_sum, 0, TE_F32, 8, 1000, 15, .layout = ALONG_YZ_COLS_X,
                     .cols = 4, .inner = 5});
}
Test(gpu_tree, max_i64_along_xyz) { /* 4 x 4 x 6 threads */
  check(&(tree_case){"timax_xyz", te_max_r, 1, TE_I64, 3, 1000, 96, .layout = ALONG_XYZ, .cols = 1,
                     .inner = 4, .inner2 = 16});
}

/* The IR: the one-thread loop is gone, shuffles of 16 .. 1, a barrier between the rounds. */
Test(gpu_tree, lowered_text) {
  te_ctx *ctx = te_ctx_new();
  te_tensor *A = NULL, *B = NULL;
  tree_case c = {"ttext", te_sum, 0, TE_F32, 7, 1000, 48, .layout = ALONG_X};
  te_schedule *sch = tree_schedule(ctx, &c, &A, &B);
  char *text =
      te_lower_text_for(sch, te_target_parse(ctx, "cuda"), 2, (te_tensor *const[]){A, B}, 0, NULL);
  cr_assert_not_null(text, "%s", te_last_error(ctx));
  cr_expect(strstr(text, "warp_shuffle_xor(warp_v") && strstr(text, "i32(16))") &&
                strstr(text, "i32(1))"),
            "no shuffles 16 .. 1:\n%s", text);
  cr_expect(strstr(text, "for (k.i") == NULL, "the one-thread loop is left:\n%s", text);
  te_free(text);
  /* vulkan keeps the shared-memory tree */
  text = te_lower_text_for(sch, te_target_parse(ctx, "vulkan"), 2, (te_tensor *const[]){A, B}, 0,
                           NULL);
  cr_assert_not_null(text, "%s", te_last_error(ctx));
  cr_expect(strstr(text, "warp_shuffle_xor") == NULL, "vulkan has warp shuffles:\n%s", text);
  te_free(text);
  te_ctx_free(ctx);
}
