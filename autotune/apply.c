/* apply.c — a candidate (sketch + knob values) applied as te_* primitives to a fresh schedule.
 *
 * Going through the public primitives (not writing trace text) means te itself checks every
 * step and writes the trace, so what the log stores is exactly what te_schedule_replay expects.
 * The structures are described in sketch.c; loop levels are named S0..S3 (space) and R0, R1
 * (reduction), outermost first.
 */
#include <string.h>

#include "at.h"

typedef struct applier {
  const at_task *t;
  const at_sketch *sk;
  const at_cand *c;
  te_schedule *s;
  te_iter *row[AT_MAX_STAGES]; /* a simple stage's parallel row loop (compute_at target) */
  te_stage *par_st;            /* the stage tile_outer made parallel, and its parallel loop */
  te_iter *par;
} applier;

static const int64_t *knob_vals(const applier *a, at_knob_role role, int stage, int axis) {
  for (int k = 0; k < a->sk->nknob; k++) {
    const at_knob *kn = &a->sk->knob[k];
    if (kn->role == role && (stage < 0 || kn->stage == stage) && kn->axis == axis)
      return a->c->v + kn->offset;
  }
  return NULL;
}

/* The value of the choice knob of role, stage and axis; dflt when the sketch has none. */
static int64_t choice_axis(const applier *a, at_knob_role role, int stage, int axis, int64_t dflt) {
  const int64_t *v = knob_vals(a, role, stage, axis);
  return v ? v[0] : dflt;
}

static int64_t choice(const applier *a, at_knob_role role, int stage, int64_t dflt) {
  return choice_axis(a, role, stage, 0, dflt);
}

/* A dot sketch is always vectorized (it has no vectorize knob). */
static bool vec_on(const applier *a) {
  return a->sk->dot.insn || choice(a, AT_ROLE_VECTORIZE, -1, 0) != 0;
}

te_stage *at_stage_named(te_schedule *s, const at_task *t, int idx) {
  te_stage *st = sch_stage_by_name(s, t->stage[idx].name);
  if (!st)
    ir_error(s->ctx, TE_ERR_NOT_FOUND, "te_tune: no stage '%s'", t->stage[idx].name);
  return st;
}

static te_stage *stage_named(const applier *a, int idx) { return at_stage_named(a->s, a->t, idx); }

te_status at_fuse_all(te_stage *st, int n, te_iter *const its[], te_iter **out) {
  te_iter *f = its[0];
  for (int i = 1; i < n; i++)
    AT_TRY(te_fuse(st, f, its[i], &f));
  *out = f;
  return TE_OK;
}

/* ---------------------------------------------------------------- the tiled stage */

/* Multi-level tiling at root: S0 S1 R0 S2 R1 S3. */
static te_status tile_root(applier *a, te_stage *st) {
  const at_stage_info *si = &a->t->stage[a->t->tiled];
  int n = si->nspace, m = si->nreduce;
  te_iter *S[4][AT_MAX_AXES], *R[2][AT_MAX_AXES], *x, *y;
  for (int i = 0; i < n; i++) {
    const int64_t *f = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, i);
    AT_TRY(te_split(st, te_axis(st, i), f[3], &x, &S[3][i]));
    AT_TRY(te_split(st, x, f[2], &y, &S[2][i]));
    AT_TRY(te_split(st, y, f[1], &S[0][i], &S[1][i]));
  }
  for (int i = 0; i < m; i++) {
    const int64_t *g = knob_vals(a, AT_ROLE_REDUCE_TILE, a->t->tiled, i);
    AT_TRY(te_split(st, te_reduce_iter(st, i), g[1], &R[0][i], &R[1][i]));
  }
  te_iter *order[6 * AT_MAX_AXES];
  int no = 0;
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < n; i++)
      order[no++] = S[l][i];
  for (int i = 0; i < m; i++)
    order[no++] = R[0][i];
  for (int i = 0; i < n; i++)
    order[no++] = S[2][i];
  for (int i = 0; i < m; i++)
    order[no++] = R[1][i];
  for (int i = 0; i < n; i++)
    order[no++] = S[3][i];
  AT_TRY(te_reorder(st, no, order));
  te_iter *f;
  int depth = (int)choice(a, AT_ROLE_PARALLEL_DEPTH, a->t->tiled, 0);
  AT_TRY(at_fuse_all(st, depth ? 2 * n : n, order, &f));
  AT_TRY(te_parallel(st, f));
  const int64_t *last = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, n - 1);
  if (vec_on(a) && last[3] > 1)
    AT_TRY(te_vectorize(st, S[3][n - 1]));
  if (choice(a, AT_ROLE_UNROLL, a->t->tiled, 0))
    for (int i = 0; i < n - 1; i++) {
      const int64_t *fi = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, i);
      if (fi[3] > 1 && fi[3] <= 16)
        AT_TRY(te_unroll(st, S[3][i]));
    }
  return TE_OK;
}

/* Whether a copy of tile+cache+read is a block at the row-block loop (cache-read knob 5). */
static bool row_block_copies(const applier *a) {
  if (a->sk->kind != AT_SK_TILE_CACHE_READ || a->sk->dot.insn)
    return false;
  for (int i = 0; i < AT_MAX_CACHE_READS; i++)
    if (choice_axis(a, AT_ROLE_CACHE_READ, a->t->tiled, i, 0) == 5)
      return true;
  return false;
}

static int vec_axis(const applier *a);

/* The outer part of a two-stage tiling (the cache_write copy or the fused consumer):
   S0 S1 (S2*S3), the last axis' rest split for the vector. *attach: where the inner stage goes.
   With a row-block copy (knob 5) the vector axis' S0 runs inside the other axes' S0, which
   alone are parallel (the parallel depth knob does not apply): one row block of A is packed,
   then read by every column tile, as bench/sgemm_schedule.c orders them. */
static te_status tile_outer(applier *a, te_stage *st, te_iter **attach) {
  const at_stage_info *si = &a->t->stage[a->t->tiled];
  int n = si->nspace, v = vec_axis(a);
  bool rows_first = row_block_copies(a) && n > 1;
  te_iter *S0[AT_MAX_AXES] = {0}, *S1[AT_MAX_AXES], *rest[AT_MAX_AXES], *x, *vi = NULL;
  for (int i = 0; i < n; i++) {
    const int64_t *f = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, i);
    AT_TRY(te_split(st, te_axis(st, i), f[2] * f[3], &x, &rest[i]));
    AT_TRY(te_split(st, x, f[1], &S0[i], &S1[i]));
  }
  te_iter *order[3 * AT_MAX_AXES + 1];
  int no = 0;
  for (int i = 0; i < n; i++)
    if (!rows_first || i != v)
      order[no++] = S0[i];
  if (rows_first)
    order[no++] = S0[v];
  for (int i = 0; i < n; i++)
    order[no++] = S1[i];
  for (int i = 0; i < n; i++)
    order[no++] = rest[i];
  AT_TRY(te_reorder(st, no, order));
  const int64_t *last = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, n - 1);
  if (vec_on(a) && last[3] > 1) {
    if (last[2] > 1)
      AT_TRY(te_split(st, rest[n - 1], last[3], &x, &vi));
    else
      vi = rest[n - 1];
    AT_TRY(te_vectorize(st, vi));
  }
  te_iter *f;
  int depth = rows_first ? 0 : (int)choice(a, AT_ROLE_PARALLEL_DEPTH, a->t->tiled, 0);
  AT_TRY(at_fuse_all(st, rows_first ? n - 1 : depth ? 2 * n : n, order, &f));
  AT_TRY(te_parallel(st, f));
  *attach = depth ? f : S1[n - 1];
  a->par_st = st;
  a->par = f;
  return TE_OK;
}

/* The space axis that carries the vector: the sketch's (tile+cache+read:A), else the last. */
static int vec_axis(const applier *a) {
  int n = a->t->stage[a->t->tiled].nspace, v = a->sk->vec_axis;
  return v >= 0 && v < n ? v : n - 1;
}

/* st's nd data axes in their order but with axis v last, into out. */
static void axes_v_last(te_stage *st, int nd, int v, te_iter *out[]) {
  int k = 0;
  for (int i = 0; i < nd; i++)
    if (i != v)
      out[k++] = te_axis(st, i);
  out[k] = te_axis(st, v);
}

/* Stores st's axes in their order but with axis v last (contiguous). */
static te_status store_last(te_stage *st, int nd, int v) {
  te_iter *dims[TE_MAX_DIMS];
  axes_v_last(st, nd, v, dims);
  return te_reorder_storage(st, nd, dims);
}

/* A dot sketch's register tile (tile_inner's order R0 S2 R1 S3 made into the instruction's):
   the grouped reduce axis' R1 split into R1.o and its group R1.g, the vector's S3 into
   S3.o (unrolled: one instruction per vector) and the instruction's lanes S3.i, in the order
   R0 S2 R1 (other axes) R1.o S3 (other axes) S3.o R1.g S3.i, and R1.g tensorized:
   bench/dot_gemm.c's k.c i.m k.g i.i j.v k.i j for a matmul. */
static te_status dot_order(applier *a, te_stage *st, te_iter *const R0[], te_iter *const S2[],
                           te_iter *const R1[], te_iter *const S3[]) {
  const at_stage_info *si = &a->t->stage[a->t->tiled];
  const at_dot *d = &a->sk->dot;
  int n = si->nspace, m = si->nreduce, v = n - 1, g = d->reduce_axis;
  te_iter *kg_o, *kg_i, *vo, *vi;
  AT_TRY(te_split(st, R1[g], d->group, &kg_o, &kg_i));
  AT_TRY(te_split(st, S3[v], d->lanes, &vo, &vi));
  te_iter *order[4 * AT_MAX_AXES + 4] = {0};
  int no = 0;
  for (int i = 0; i < m; i++)
    order[no++] = R0[i];
  for (int i = 0; i < n; i++)
    order[no++] = S2[i];
  for (int i = 0; i < m; i++)
    if (i != g)
      order[no++] = R1[i];
  order[no++] = kg_o;
  for (int i = 0; i < v; i++)
    order[no++] = S3[i];
  order[no++] = vo;
  order[no++] = kg_i;
  order[no++] = vi;
  AT_TRY(te_reorder(st, no, order));
  AT_TRY(te_vectorize(st, vi));
  const int64_t *vf = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, v);
  if (vf[3] > d->lanes)
    AT_TRY(te_unroll(st, vo));
  return te_tensorize(st, kg_i, d->insn);
}

/* The unroll knob: the register tile's rows (S3 of every space axis but the vector's v). */
static te_status unroll_rows(applier *a, te_stage *st, te_iter *const S3[], int v) {
  if (!choice(a, AT_ROLE_UNROLL, a->t->tiled, 0))
    return TE_OK;
  for (int i = 0; i < a->t->stage[a->t->tiled].nspace; i++) {
    if (i == v)
      continue;
    const int64_t *fi = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, i);
    if (fi[3] > 1 && fi[3] <= 16)
      AT_TRY(te_unroll(st, S3[i]));
  }
  return TE_OK;
}

/* tile+cache+window's unroll knob: the inner reduce loops (R1) of the window, so that the
   taps, the register tile's rows and its vectors are one straight-line block (the rows'
   shared input vectors loaded once). */
static te_status unroll_window(applier *a, te_stage *st, te_iter *const R1[]) {
  if (!a->sk->window || !choice(a, AT_ROLE_UNROLL_WINDOW, a->t->tiled, 0))
    return TE_OK;
  for (int i = 0; i < a->t->stage[a->t->tiled].nreduce; i++) {
    const int64_t *g = knob_vals(a, AT_ROLE_REDUCE_TILE, a->t->tiled, i);
    if (g[1] > 1 && g[1] <= AT_MAX_WINDOW)
      AT_TRY(te_unroll(st, R1[i]));
  }
  return TE_OK;
}

/* The inner part, computed at a tile: R0 S2 R1 S3, the vector axis' S3 innermost, tails
   rounded up (a dot sketch's: dot_order).
   *r0: its outermost reduce loop. */
static te_status tile_inner(applier *a, te_stage *st, te_iter **r0) {
  const at_stage_info *si = &a->t->stage[a->t->tiled];
  int n = si->nspace, m = si->nreduce;
  te_iter *S2[AT_MAX_AXES], *S3[AT_MAX_AXES], *R0[AT_MAX_AXES], *R1[AT_MAX_AXES];
  for (int i = 0; i < n; i++) {
    const int64_t *f = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, i);
    /* a register tile that does not divide the axis: the last block's tiles are computed
       whole (st is an intermediate: a local block or a fused producer), so the tile's loops
       need no guard and its vectors no mask; only the copy out of the block is guarded */
    if (si->space_ext[i] % f[3] != 0)
      AT_TRY(te_set_tail(st, te_axis(st, i), TE_TAIL_ROUND_UP));
    AT_TRY(te_split(st, te_axis(st, i), f[3], &S2[i], &S3[i]));
  }
  for (int i = 0; i < m; i++) {
    const int64_t *g = knob_vals(a, AT_ROLE_REDUCE_TILE, a->t->tiled, i);
    AT_TRY(te_split(st, te_reduce_iter(st, i), g[1], &R0[i], &R1[i]));
  }
  *r0 = m > 0 ? R0[0] : NULL;
  if (a->sk->dot.insn) {
    AT_TRY(dot_order(a, st, R0, S2, R1, S3));
    return unroll_rows(a, st, S3, n - 1);
  }
  te_iter *order[4 * AT_MAX_AXES] = {0};
  int no = 0;
  for (int i = 0; i < m; i++)
    order[no++] = R0[i];
  for (int i = 0; i < n; i++)
    order[no++] = S2[i];
  for (int i = 0; i < m; i++)
    order[no++] = R1[i];
  int v = vec_axis(a);
  for (int i = 0; i < n; i++)
    if (i != v)
      order[no++] = S3[i];
  order[no++] = S3[v];
  AT_TRY(te_reorder(st, no, order));
  const int64_t *vf = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, v);
  if (vec_on(a) && vf[3] > 1)
    AT_TRY(te_vectorize(st, S3[v]));
  if (v != n - 1)
    AT_TRY(store_last(st, n, v));
  AT_TRY(unroll_window(a, st, R1));
  return unroll_rows(a, st, S3, v);
}

typedef struct dim_scan {
  te_tensor *t;
  te_expr *axis;
  int dim; /* the first dim of t whose index uses axis, -1 */
} dim_scan;

static int scan_dim(ir_visitor *v, te_expr *e) {
  dim_scan *d = v->data;
  if (e->u.tensor == d->t)
    for (int i = 0; i < e->nargs && d->dim < 0; i++)
      if (ir_expr_uses(e->args[i], d->axis))
        d->dim = i;
  return IR_CONTINUE;
}

/* The dim of input t that stage ls indexes with the axis variable var (W[o, c, ky, kx] and o:
   0); -1 when none does (the input is the same for every value of it: a broadcast). */
static int dim_using(te_stage *ls, te_tensor *t, te_expr *var) {
  dim_scan d = {t, var, -1};
  ir_visitor vis = {0};
  vis.expr[IR_ACCESS] = scan_dim;
  vis.data = &d;
  for (int k = 0; k < ls->op->nbody; k++)
    ir_visit_expr(&vis, ls->op->body[k]);
  return d.dim;
}

/* The dims of input t a packed copy follows (pack.c), read off ls's body before te_cache_read
   changes what ls reads: the vector axis v's, the register tile's innermost rows (the last
   other space axis with more than one row), a dot sketch's grouped reduce axis. */
static void pack_dims(const applier *a, te_stage *ls, te_tensor *t, int v, at_pack_dims *pd) {
  const at_stage_info *si = &a->t->stage[a->t->tiled];
  const int64_t *fv = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, v);
  *pd = (at_pack_dims){dim_using(ls, t, ls->op->axes[v]), fv[2] * fv[3], -1, 0, -1, 0};
  for (int u = si->nspace - 1; u >= 0 && pd->rows_dim < 0; u--) {
    const int64_t *fu = knob_vals(a, AT_ROLE_SPACE_TILE, a->t->tiled, u);
    if (u != v && fu[3] > 1 && (pd->rows_dim = dim_using(ls, t, ls->op->axes[u])) >= 0)
      pd->rows = fu[3];
  }
  const at_dot *d = &a->sk->dot;
  if (d->insn) {
    pd->group_dim = dim_using(ls, t, ls->op->reduce_axes[d->reduce_axis]);
    pd->group = d->group;
  }
}

/* The inputs of the local stage ls whose knob says so, copied (te_cache_read) into local
   blocks computed at its outer reduce loop r0 (knob 1: the block is the region one r0 step
   reads, compact, so its rows are as long as the tile's, not the input's) or whole at root
   (knob 2: packed once a call, as weights are); knobs 3 and 4 (and every copy of a dot sketch)
   store the copy in the register tile's layout (pack.c); knob 5 is 3's layout for the block one
   row block reads (the whole reduction), computed at the parallel row-block loop (tile_outer). When
   the vector runs along an axis that indexes a dim of the input other than its last, the copy is
   stored with that dim contiguous and copied along it; the copy's innermost dim is vectorized in
   16-lane pieces (guarded where the region is narrower). */
static te_status cache_reads(applier *a, te_stage *ls, te_iter *r0) {
  te_tensor **in;
  int nin = sch_op_inputs(ls->op, &in);
  te_tensor *inputs[AT_MAX_CACHE_READS];
  int where[AT_MAX_CACHE_READS];
  at_pack_dims dims[AT_MAX_CACHE_READS];
  int n = 0, v = vec_axis(a);
  bool along_last = v != a->t->stage[a->t->tiled].nspace - 1;
  for (int i = 0; i < nin && i < AT_MAX_CACHE_READS; i++)
    if ((where[n] = (int)choice_axis(a, AT_ROLE_CACHE_READ, a->t->tiled, i, 0)) != 0) {
      pack_dims(a, ls, in[i], v, &dims[n]);
      inputs[n++] = in[i];
    }
  for (int i = 0; i < n; i++) {
    bool pack = where[i] >= 3 || a->sk->dot.insn, row_block = where[i] == 5 && !a->sk->dot.insn;
    bool whole = !row_block && where[i] % 2 == 0;
    te_tensor *cache;
    /* a row block (MC x the whole reduction) can be megabytes: not a local (stack) buffer */
    AT_TRY(te_cache_read(a->s, inputs[i], whole || row_block ? TE_SCOPE_GLOBAL : TE_SCOPE_LOCAL, 1,
                         &ls, &cache));
    te_stage *cs = te_stage_of(a->s, cache);
    if (row_block && (!a->par_st || !a->par))
      return ir_error(a->s->ctx, TE_ERR_INTERNAL, "te_tune: no row-block loop for a copy");
    if (row_block)
      AT_TRY(te_compute_at(cs, a->par_st, a->par));
    else if (!whole)
      AT_TRY(te_compute_at(cs, ls, r0));
    at_pack_plan plan;
    at_pack_plan_make(inputs[i], &dims[i], whole, &plan);
    if (!pack) { /* the plain copy: no split dims */
      memset(plan.split, 0, sizeof plan.split);
      plan.group_dim = -1;
    }
    AT_TRY(at_pack_copy(cs, &plan, along_last, vec_on(a), whole && pack));
  }
  return TE_OK;
}

static te_status apply_tiled(applier *a) {
  te_stage *st = stage_named(a, a->t->tiled);
  if (!st)
    return te_last_status(a->s->ctx);
  te_iter *at, *r0 = NULL;
  switch (a->sk->kind) {
  case AT_SK_TILE:
    return tile_root(a, st);
  case AT_SK_TILE_CACHE:
  case AT_SK_TILE_CACHE_READ: {
    te_tensor *local;
    AT_TRY(te_cache_write(a->s, st->op->outputs[0], TE_SCOPE_LOCAL, &local));
    te_stage *ls = te_stage_of(a->s, local);
    AT_TRY(tile_outer(a, st, &at));
    AT_TRY(te_compute_at(ls, st, at));
    AT_TRY(tile_inner(a, ls, &r0));
    return a->sk->kind == AT_SK_TILE_CACHE_READ && r0 ? cache_reads(a, ls, r0) : TE_OK;
  }
  case AT_SK_TILE_FUSE: {
    te_stage *cs = stage_named(a, a->t->fuse_consumer);
    if (!cs)
      return te_last_status(a->s->ctx);
    AT_TRY(tile_outer(a, cs, &at));
    AT_TRY(te_compute_at(st, cs, at));
    return tile_inner(a, st, &r0);
  }
  default:
    return TE_OK;
  }
}

/* ---------------------------------------------------------------- simple stages */

static bool is_simple(const applier *a, int i) {
  const at_stage_info *s = &a->t->stage[i];
  if (s->placeholder || (s->injective && !s->output) || s->nspace == 0)
    return false;
  if (a->sk->kind != AT_SK_SIMPLE && i == a->t->tiled)
    return false;
  return !(a->sk->kind == AT_SK_TILE_FUSE && i == a->t->fuse_consumer);
}

/* simple+lanes: stage i's reduce axis split by its lanes knob's 16 << v lanes (halved down to
   the extent) and te_rfactor'ed into the partials' stage *rf, reduce loop outside the lane
   loop, which is vectorized; *st is then i's rebuilt stage. *rf is NULL without the knob. */
static te_status reduce_lanes(applier *a, int i, te_stage **st, te_stage **rf) {
  *rf = NULL;
  const int64_t *v = knob_vals(a, AT_ROLE_REDUCE_LANES, i, 0);
  if (!v)
    return TE_OK;
  const at_stage_info *si = &a->t->stage[i];
  int64_t lanes = (int64_t)16 << v[0];
  while (lanes > 16 && lanes > si->reduce_ext[0])
    lanes /= 2;
  te_iter *ko = NULL, *ki = NULL;
  te_tensor *part = NULL;
  AT_TRY(te_split(*st, te_reduce_iter(*st, 0), lanes, &ko, &ki));
  AT_TRY(te_rfactor(a->s, (*st)->op->outputs[0], ki, si->nspace, &part));
  te_stage *ps = te_stage_of(a->s, part);
  *st = stage_named(a, i);
  if (!ps || !*st)
    return te_last_status(a->s->ctx);
  te_iter *lane = te_axis(ps, si->nspace);
  AT_TRY(te_reorder(ps, 2, (te_iter *const[]){te_reduce_iter(ps, 0), lane}));
  if (vec_on(a))
    AT_TRY(te_vectorize(ps, lane));
  *rf = ps;
  return TE_OK;
}

static te_status apply_simple(applier *a, int i) {
  const at_stage_info *si = &a->t->stage[i];
  te_stage *st = stage_named(a, i), *rf = NULL;
  if (!st)
    return te_last_status(a->s->ctx);
  AT_TRY(reduce_lanes(a, i, &st, &rf));
  int n = si->nspace;
  /* the partials of one point of the reduction at a time: their lanes stay in registers */
  te_iter *last = n > 0 ? te_axis(st, n - 1) : NULL;
  int o = at_task_row_consumer(a->t, i);
  if (choice(a, AT_ROLE_AT_CONSUMER, -1, 0) && o >= 0 && a->row[o]) {
    te_stage *os = stage_named(a, o);
    AT_TRY(os ? te_compute_at(st, os, a->row[o]) : te_last_status(a->s->ctx));
    return rf ? te_compute_at(rf, st, last) : TE_OK;
  }
  te_iter *axes[AT_MAX_AXES], *outer = NULL, *lo = NULL, *li = NULL;
  for (int k = 0; k < n; k++)
    axes[k] = te_axis(st, k);
  int64_t outer_ext = 1;
  for (int k = 0; k + 1 < n; k++)
    outer_ext *= si->space_ext[k];
  if (n >= 2)
    AT_TRY(at_fuse_all(st, n - 1, axes, &outer));
  const int64_t *v = knob_vals(a, AT_ROLE_SIMPLE_VEC, i, n - 1);
  if (v && v[1] > 1) {
    AT_TRY(te_split(st, axes[n - 1], v[1], &lo, &li));
    if (vec_on(a))
      AT_TRY(te_vectorize(st, li));
  }
  if (n == 1) {
    outer = lo ? lo : axes[0];
    outer_ext = lo ? v[0] : si->space_ext[0];
  }
  if (outer && outer_ext > 1)
    AT_TRY(te_parallel(st, outer));
  a->row[i] = outer;
  return rf ? te_compute_at(rf, st, last) : TE_OK;
}

te_status at_cand_apply(const at_task *t, const at_cand *c, te_schedule *s) {
  applier a = {t, &t->sketch[c->sketch], c, s, {0}, NULL, NULL};
  if (a.sk->kind == AT_SK_USER)
    return at_user_apply(t, c, s);
  if (a.sk->kind == AT_SK_DEFAULT)
    return TE_OK;
  if (a.sk->kind == AT_SK_GPU_TILE || a.sk->kind == AT_SK_GPU_SIMPLE)
    return at_gpu_apply(t, c, s);
  /* injective stages kept (tile+cache+read, tile+cache+window): 1 at root, 2 (window) at the
     tiled stage's parallel loop */
  int64_t keep[AT_MAX_STAGES] = {0};
  for (int i = 0; i < t->nstage; i++)
    if ((a.sk->kind == AT_SK_TILE_CACHE_READ || a.sk->window) && at_task_keepable(t, i))
      keep[i] = choice(&a, AT_ROLE_KEEP_STAGE, i, 0);
  for (int i = 0; i < t->nstage; i++) { /* inline the other injective intermediates */
    const at_stage_info *si = &t->stage[i];
    if (!si->placeholder && si->injective && !si->output && !keep[i]) {
      te_stage *st = stage_named(&a, i);
      AT_TRY(st ? te_compute_inline(st) : te_last_status(s->ctx));
    }
  }
  if (a.sk->kind != AT_SK_SIMPLE && t->tiled >= 0)
    AT_TRY(apply_tiled(&a));
  for (int i = 0; i < t->nstage; i++)
    if (keep[i] == 2) { /* one tile's rows at a time, scalar: vectorized, its clamped reads
                           would be gathers */
      te_stage *st = stage_named(&a, i);
      if (!st || !a.par)
        return st ? ir_error(s->ctx, TE_ERR_INTERNAL, "te_tune: no parallel loop for '%s'",
                             t->stage[i].name)
                  : te_last_status(s->ctx);
      AT_TRY(te_compute_at(st, a.par_st, a.par));
    }
  for (int i = t->nstage - 1; i >= 0; i--) /* consumers first: row loops exist for producers */
    if (is_simple(&a, i) || keep[i] == 1)
      AT_TRY(apply_simple(&a, i));
  return TE_OK;
}
