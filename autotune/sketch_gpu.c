/* sketch_gpu.c — the search space of a GPU target (cuda, vulkan): the sketches and how a
 * candidate of one becomes te_* primitives.
 *
 * Ansor's GPU rules, in te's primitives:
 *   - injective stages that are not outputs are inlined (as on CPUs);
 *   - "gpu-tile": the heavy reduction with reuse (matmul, convolution) accumulates in a local
 *     stage (te_cache_write, TE_SCOPE_LOCAL: registers). Its output stage's space axes are split
 *     on three levels, B T I (block, thread, the thread's own tile of at most AT_GPU_MAX_INNER
 *     points an axis; the factors need not divide: the last tiles are guarded), ordered
 *     B.. T.. I..; the B loops fused and bound to blockIdx.x, the T loops fused and bound to
 *     threadIdx.x. The local stage is computed at the thread loop: its reduce axes split R0 R1
 *     (R1 need not divide either) and ordered R0.. R1.. then its I axes (optionally unrolled:
 *     the thread's tile in registers). Each placeholder input may be copied into shared memory
 *     at the last R0 loop (te_cache_read, TE_SCOPE_SHARED) by the block's threads together: the
 *     copy's axes fused and split over threadIdx.x, optionally with a 4-lane vectorized inner
 *     loop (128-bit loads) where the target's code generator has vector loads (probed: off
 *     where it refuses);
 *   - "gpu-simple": every stage's space axes fused, split by 32 << v threads (capped by the
 *     target) and bound to blockIdx.x / threadIdx.x; a reduction runs inside each thread. Always
 *     offered, so that a workload with no tile still gets a bound schedule.
 * Candidates over the target's threads a block or (an estimate of) its shared memory, or whose
 * thread tile has over 64 points, are refused by at_gpu_apply, so the search drops them before
 * they are built; tiles of more than 32 points are not unrolled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"
#include "target/target.h"

/* GPU_TILE_POINTS bounds a thread's tile (its accumulators live in registers); GPU_UNROLL_POINTS
   the tiles that are unrolled (lavapipe takes seconds to compile a shader with a 128-point
   unrolled tile, which a tuning run's timeout counts). */
enum { GPU_VECTOR = 4, GPU_TILE_POINTS = 64, GPU_UNROLL_POINTS = 32 };

/* ---------------------------------------------------------------- knobs */

static void knob(at_sketch *sk, at_knob_kind kind, at_knob_role role, int stage, int axis,
                 int nlevels, int64_t extent, int nchoices) {
  if (sk->nknob >= AT_MAX_KNOBS)
    return;
  at_knob *k = &sk->knob[sk->nknob++];
  *k = (at_knob){kind,   role,     stage,    axis, kind == AT_KNOB_TILE ? nlevels : 1,
                 extent, nchoices, sk->nvals};
  sk->nvals += k->nlevels;
}

/* A stage the gpu sketches bind on their own: not a placeholder, not inlined, with loops. */
static bool gpu_simple_stage(const at_task *t, const at_sketch *sk, int i) {
  const at_stage_info *s = &t->stage[i];
  if (s->placeholder || (s->injective && !s->output))
    return false;
  return sk->kind == AT_SK_GPU_SIMPLE || i != t->tiled;
}

/* The tiled stage's inputs that are placeholders (only those are copied to shared memory: an
   inlined producer has no tensor left to copy). */
static bool cacheable_input(const te_schedule *s, const at_task *t, int i) {
  te_tensor **in;
  const te_stage *st = sch_stage_by_name((te_schedule *)s, t->stage[t->tiled].name);
  int n = st ? sch_op_inputs(st->op, &in) : 0;
  return i < n && in[i]->op->kind == SCH_OP_PLACEHOLDER;
}

static at_sketch *gpu_sketch(at_task *t, at_sketch_kind kind, const char *name) {
  if (t->nsketch >= AT_MAX_SKETCHES)
    return NULL;
  at_sketch *sk = &t->sketch[t->nsketch++];
  memset(sk, 0, sizeof *sk);
  sk->kind = kind;
  sk->vec_axis = -1;
  snprintf(sk->name, sizeof sk->name, "%s", name);
  for (int i = 0; i < t->nstage; i++)
    if (gpu_simple_stage(t, sk, i) && t->stage[i].nspace > 0)
      knob(sk, AT_KNOB_CHOICE, AT_ROLE_GPU_THREADS, i, 0, 1, 0, 4);
  return sk;
}

static void tile_knobs(const te_schedule *s, at_task *t, at_sketch *sk) {
  const at_stage_info *si = &t->stage[t->tiled];
  knob(sk, AT_KNOB_CHOICE, AT_ROLE_VECTORIZE, -1, 0, 1, 0, 2);
  for (int a = 0; a < si->nspace; a++)
    knob(sk, AT_KNOB_TILE, AT_ROLE_GPU_TILE, t->tiled, a, 3, si->space_ext[a], 0);
  for (int a = 0; a < si->nreduce; a++)
    knob(sk, AT_KNOB_TILE, AT_ROLE_REDUCE_TILE, t->tiled, a, 2, si->reduce_ext[a], 0);
  knob(sk, AT_KNOB_CHOICE, AT_ROLE_UNROLL, t->tiled, 0, 1, 0, 2);
  for (int i = 0; i < si->ninputs && i < AT_MAX_CACHE_READS; i++)
    if (cacheable_input(s, t, i))
      knob(sk, AT_KNOB_CHOICE, AT_ROLE_CACHE_READ, t->tiled, i, 1, 0, 2);
}

/* ---------------------------------------------------------------- applying */

typedef struct gpu_applier {
  const at_task *t;
  const at_sketch *sk;
  const at_cand *c;
  te_schedule *s;
} gpu_applier;

static const int64_t *vals(const gpu_applier *a, at_knob_role role, int stage, int axis) {
  for (int k = 0; k < a->sk->nknob; k++) {
    const at_knob *kn = &a->sk->knob[k];
    if (kn->role == role && (stage < 0 || kn->stage == stage) && kn->axis == axis)
      return a->c->v + kn->offset;
  }
  return NULL;
}

static int64_t choice(const gpu_applier *a, at_knob_role role, int stage, int axis) {
  const int64_t *v = vals(a, role, stage, axis);
  return v ? v[0] : 0;
}

static te_stage *stage_at(const gpu_applier *a, int i) { return at_stage_named(a->s, a->t, i); }

/* A simple stage: its space axes fused and split over blocks of threads. */
static te_status apply_simple(const gpu_applier *a, int i) {
  te_stage *st = stage_at(a, i);
  if (!st)
    return te_last_status(a->s->ctx);
  const at_stage_info *si = &a->t->stage[i];
  if (si->nspace == 0)
    return ir_error(a->s->ctx, TE_ERR_UNSUPPORTED,
                    "te_tune: stage '%s' has no data axes to bind to GPU threads", si->name);
  te_iter *axes[AT_MAX_AXES] = {0}, *f, *bo, *ti;
  int64_t points = 1;
  for (int k = 0; k < si->nspace; k++)
    axes[k] = te_axis(st, k), points *= si->space_ext[k];
  AT_TRY(at_fuse_all(st, si->nspace, axes, &f));
  int64_t threads = (int64_t)32 << choice(a, AT_ROLE_GPU_THREADS, i, 0);
  if (threads > a->t->gpu_max_threads)
    threads = a->t->gpu_max_threads;
  if (threads > points)
    threads = points;
  AT_TRY(te_split(st, f, threads, &bo, &ti));
  AT_TRY(te_bind(st, bo, TE_BLOCK_X));
  return te_bind(st, ti, TE_THREAD_X);
}

/* Spans of the tiled stage's axes inside one block: space T * I, reduce R1 (by axis var). */
typedef struct span_scan {
  const sch_op *op;
  int64_t span_space[AT_MAX_AXES], span_reduce[AT_MAX_AXES];
  te_tensor *input;
  int64_t worst; /* elements of the largest block of input one access reads */
  int64_t last;  /* that block's extent along input's last dimension */
} span_scan;

static int64_t index_span(const span_scan *sc, te_expr *e) {
  int64_t span = 1;
  for (int a = 0; a < sc->op->ndim; a++)
    if (ir_expr_uses(e, sc->op->axes[a]))
      span += sc->span_space[a] - 1;
  for (int r = 0; r < sc->op->nreduce; r++)
    if (ir_expr_uses(e, sc->op->reduce_axes[r]))
      span += sc->span_reduce[r] - 1;
  return span;
}

static int scan_block(ir_visitor *v, te_expr *e) {
  span_scan *sc = v->data;
  if (e->u.tensor != sc->input)
    return IR_CONTINUE;
  int64_t n = 1, span = 1;
  for (int d = 0; d < e->nargs; d++) {
    int64_t ext;
    span = index_span(sc, e->args[d]);
    if (d < sc->input->ndim && ir_is_const_int(sc->input->shape[d], &ext) && span > ext)
      span = ext;
    n *= span;
  }
  if (n > sc->worst)
    sc->worst = n, sc->last = span;
  return IR_CONTINUE;
}

/* Elements of the block of input that one block of the tiled stage reads (an affine index
   spans the sum of its axes' spans: a conservative estimate), and in *last its extent along
   input's last dimension. */
static int64_t input_block(const gpu_applier *a, const sch_op *op, te_tensor *input,
                           int64_t *last) {
  span_scan sc = {.op = op, .input = input};
  for (int k = 0; k < op->ndim; k++) {
    const int64_t *f = vals(a, AT_ROLE_GPU_TILE, a->t->tiled, k);
    sc.span_space[k] = f ? f[1] * f[2] : 1;
  }
  for (int r = 0; r < op->nreduce; r++) {
    const int64_t *g = vals(a, AT_ROLE_REDUCE_TILE, a->t->tiled, r);
    sc.span_reduce[r] = g ? g[1] : 1;
  }
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = scan_block;
  v.data = &sc;
  for (int b = 0; b < op->nbody; b++)
    ir_visit_expr(&v, op->body[b]);
  *last = sc.last;
  return sc.worst;
}

/* Bytes of shared memory the chosen copies take. */
static int64_t shared_bytes(const gpu_applier *a, const sch_op *op) {
  te_tensor **in;
  int n = sch_op_inputs((sch_op *)op, &in);
  int64_t bytes = 0, last;
  for (int i = 0; i < n && i < AT_MAX_CACHE_READS; i++)
    if (choice(a, AT_ROLE_CACHE_READ, a->t->tiled, i))
      bytes += input_block(a, op, in[i], &last) * ir_dtype_bytes(in[i]->dtype);
  return bytes;
}

/* Threads of one block (the product of the T levels, level 1) or points of a thread's tile
   (the I levels, level 2). */
static int64_t level_product(const gpu_applier *a, int n, int level) {
  int64_t p = 1;
  for (int k = 0; k < n; k++)
    p *= vals(a, AT_ROLE_GPU_TILE, a->t->tiled, k)[level];
  return p;
}

/* Whether the copy of input may load GPU_VECTOR elements at a time: its rows (the block's and
   the tensor's) hold whole vectors, so every vector starts aligned. */
static bool copy_vectorizable(const gpu_applier *a, const sch_op *op, te_tensor *input) {
  int64_t last, ext;
  input_block(a, op, input, &last);
  return choice(a, AT_ROLE_VECTORIZE, -1, 0) && last % GPU_VECTOR == 0 && input->ndim > 0 &&
         ir_is_const_int(input->shape[input->ndim - 1], &ext) && ext % GPU_VECTOR == 0;
}

/* The copy of input i into shared memory at the local stage's loop r0, loaded by the block's
   threads together. */
static te_status shared_copy(const gpu_applier *a, const sch_op *op, te_stage *ls, te_iter *r0,
                             te_tensor *input, int64_t threads) {
  te_tensor *cache;
  AT_TRY(te_cache_read(a->s, input, TE_SCOPE_SHARED, 1, (te_stage *const[]){ls}, &cache));
  te_stage *cs = te_stage_of(a->s, cache);
  AT_TRY(te_compute_at(cs, ls, r0));
  te_iter *axes[AT_MAX_AXES], *f, *o, *tx, *v = NULL;
  for (int d = 0; d < input->ndim; d++)
    axes[d] = te_axis(cs, d);
  AT_TRY(at_fuse_all(cs, input->ndim, axes, &f));
  if (copy_vectorizable(a, op, input))
    AT_TRY(te_split(cs, f, GPU_VECTOR, &f, &v));
  AT_TRY(te_split(cs, f, threads, &o, &tx));
  AT_TRY(te_bind(cs, tx, TE_THREAD_X));
  return v ? te_vectorize(cs, v) : TE_OK;
}

static te_status apply_tile(const gpu_applier *a) {
  te_stage *st = stage_at(a, a->t->tiled);
  if (!st)
    return te_last_status(a->s->ctx);
  const at_stage_info *si = &a->t->stage[a->t->tiled];
  int n = si->nspace, m = si->nreduce;
  if (n == 0)
    return ir_error(a->s->ctx, TE_ERR_UNSUPPORTED, "te_tune: stage '%s' has no data axes",
                    si->name);
  const sch_op *op = st->op;
  int64_t threads = level_product(a, n, 1), points = level_product(a, n, 2);
  if (threads > a->t->gpu_max_threads || points > GPU_TILE_POINTS ||
      shared_bytes(a, op) > a->t->gpu_max_shared)
    return TE_ERR_UNSUPPORTED; /* over the target's limits: the search skips it */
  te_tensor *local, *input[AT_MAX_CACHE_READS] = {0};
  te_tensor **in;
  int nin = sch_op_inputs((sch_op *)op, &in);
  for (int i = 0; i < nin && i < AT_MAX_CACHE_READS; i++)
    input[i] = in[i];
  AT_TRY(te_cache_write(a->s, op->outputs[0], TE_SCOPE_LOCAL, &local));
  te_stage *ls = te_stage_of(a->s, local);
  te_iter *B[AT_MAX_AXES], *T[AT_MAX_AXES], *I[AT_MAX_AXES], *x, *order[3 * AT_MAX_AXES], *bf, *tf;
  for (int k = 0; k < n; k++) {
    const int64_t *f = vals(a, AT_ROLE_GPU_TILE, a->t->tiled, k);
    AT_TRY(te_split(st, te_axis(st, k), f[2], &x, &I[k]));
    AT_TRY(te_split(st, x, f[1], &B[k], &T[k]));
  }
  for (int k = 0; k < n; k++)
    order[k] = B[k], order[n + k] = T[k], order[2 * n + k] = I[k];
  AT_TRY(te_reorder(st, 3 * n, order));
  AT_TRY(at_fuse_all(st, n, B, &bf));
  AT_TRY(at_fuse_all(st, n, T, &tf));
  AT_TRY(te_bind(st, bf, TE_BLOCK_X));
  AT_TRY(te_bind(st, tf, TE_THREAD_X));
  AT_TRY(te_compute_at(ls, st, tf));
  /* the local stage: R0.. R1.. then the thread's tile */
  te_iter *R0[AT_MAX_AXES], *R1[AT_MAX_AXES], *lorder[2 * AT_MAX_AXES + AT_MAX_AXES];
  int no = 0;
  for (int r = 0; r < m; r++) {
    const int64_t *g = vals(a, AT_ROLE_REDUCE_TILE, a->t->tiled, r);
    AT_TRY(te_split(ls, te_reduce_iter(ls, r), g[1], &R0[r], &R1[r]));
  }
  for (int r = 0; r < m; r++)
    lorder[no++] = R0[r];
  for (int r = 0; r < m; r++)
    lorder[no++] = R1[r];
  for (int k = 0; k < n; k++)
    lorder[no++] = te_axis(ls, k);
  AT_TRY(te_reorder(ls, no, lorder));
  if (choice(a, AT_ROLE_UNROLL, a->t->tiled, 0) && points <= GPU_UNROLL_POINTS)
    for (int k = 0; k < n; k++)
      if (vals(a, AT_ROLE_GPU_TILE, a->t->tiled, k)[2] > 1)
        AT_TRY(te_unroll(ls, te_axis(ls, k)));
  for (int i = 0; m > 0 && i < nin && i < AT_MAX_CACHE_READS; i++)
    if (choice(a, AT_ROLE_CACHE_READ, a->t->tiled, i))
      AT_TRY(shared_copy(a, op, ls, R0[m - 1], input[i], threads));
  return TE_OK;
}

te_status at_gpu_apply(const at_task *t, const at_cand *c, te_schedule *s) {
  gpu_applier a = {t, &t->sketch[c->sketch], c, s};
  for (int i = 0; i < t->nstage; i++) { /* inline the injective intermediates */
    const at_stage_info *si = &t->stage[i];
    if (!si->placeholder && si->injective && !si->output) {
      te_stage *st = stage_at(&a, i);
      AT_TRY(st ? te_compute_inline(st) : te_last_status(s->ctx));
    }
  }
  if (a.sk->kind == AT_SK_GPU_TILE)
    AT_TRY(apply_tile(&a));
  for (int i = 0; i < t->nstage; i++)
    if (gpu_simple_stage(t, a.sk, i))
      AT_TRY(apply_simple(&a, i));
  return TE_OK;
}

/* ---------------------------------------------------------------- probing */

/* Whether the schedule has a vectorized loop (a probe of vectorized copies must build one). */
static bool has_vector(te_schedule *sch) {
  char *trace = te_schedule_trace(sch);
  bool v = trace && strstr(trace, "vectorize ");
  te_free(trace);
  return v;
}

/* Builds one sample of sketch sk for the target, with every input copied to shared memory and
   (vec) vectorized copies. A sample over the limits, or (vec) one whose copies cannot take
   vectors, is redrawn, up to 64 times. */
static bool probe(const at_workload *wl, const te_target *tgt, const at_task *t, int sk, int vec) {
  at_rng rng;
  at_rng_seed(&rng, 12345);
  const at_sketch *s = &t->sketch[sk];
  bool ok = false;
  te_target *here = te_target_parse(wl->ctx, tgt->str); /* te_build takes the schedule's own */
  for (int tries = 0; here && tries < 64 && !ok; tries++) {
    at_cand c;
    at_cand_sample(t, sk, &rng, &c);
    for (int k = 0; k < s->nknob; k++)
      if (s->knob[k].role == AT_ROLE_VECTORIZE || s->knob[k].role == AT_ROLE_CACHE_READ)
        c.v[s->knob[k].offset] = s->knob[k].role == AT_ROLE_VECTORIZE ? vec : 1;
    te_schedule *sch = te_schedule_new(wl->ctx, wl->nout, wl->outs);
    te_status st = sch ? at_cand_apply(t, &c, sch) : TE_ERR_NOMEM;
    if (st == TE_OK && vec && s->kind == AT_SK_GPU_TILE && !has_vector(sch))
      st = TE_ERR_UNSUPPORTED; /* no vector in this sample: draw another */
    te_module *mod = NULL;
    if (st == TE_OK)
      ok = te_build(sch, "at_probe", wl->nargs, wl->args, 0, NULL, here, &mod) == TE_OK;
    if (!ok && st != TE_ERR_UNSUPPORTED && getenv("TE_TUNE_DEBUG"))
      fprintf(stderr, "te_tune: sketch %s (vectorized copies %d) does not build: %s\n", s->name,
              vec, te_last_error(wl->ctx));
    te_clear_error(wl->ctx);
    if (st != TE_ERR_UNSUPPORTED)
      break; /* built, or the sketch does not apply */
  }
  return ok;
}

te_status at_task_analyze_gpu(const at_workload *wl, const te_target *tgt, at_task *t) {
  te_status st = at_task_stages(wl, t, NULL);
  if (st != TE_OK)
    return st;
  t->gpu = true;
  t->gpu_max_threads = tgt->max_threads_per_block > 0 ? tgt->max_threads_per_block : 256;
  t->gpu_max_shared = tgt->max_shared_bytes > 0 ? tgt->max_shared_bytes : 16384;
  te_schedule *s = te_schedule_new(wl->ctx, wl->nout, wl->outs);
  if (!s)
    return te_last_status(wl->ctx);
  t->vectorize_ok = true;
  if (t->tiled >= 0) {
    at_sketch *sk = gpu_sketch(t, AT_SK_GPU_TILE, "gpu-tile");
    if (sk)
      tile_knobs(s, t, sk);
  }
  gpu_sketch(t, AT_SK_GPU_SIMPLE, "gpu-simple");
  int kept = 0;
  for (int i = 0; i < t->nsketch; i++) {
    bool ok = probe(wl, tgt, t, i, 1);
    if (!ok && probe(wl, tgt, t, i, 0)) {
      for (int k = 0; k < t->sketch[i].nknob; k++)
        if (t->sketch[i].knob[k].role == AT_ROLE_VECTORIZE)
          t->sketch[i].knob[k].nchoices = 1;
      t->vectorize_ok = false;
      ok = true;
    }
    if (ok)
      t->sketch[kept++] = t->sketch[i];
  }
  t->nsketch = kept;
  if (kept == 0)
    return ir_error(wl->ctx, TE_ERR_UNSUPPORTED,
                    "te_tune: no GPU sketch applies to this computation for '%s' (gpu-tile and "
                    "gpu-simple bind every stage's data axes to blocks and threads)",
                    tgt->str);
  return TE_OK;
}
