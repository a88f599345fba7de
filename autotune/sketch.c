/* sketch.c — from a computation to its search space: which stage is tiled, which are inlined,
 * and the sketches (schedule structures) whose knobs the search fills in.
 *
 * The rules are Ansor's, for CPUs:
 *   - an injective stage that is not an output is inlined into its readers (always);
 *   - the heaviest reduction "with data reuse" (some input is read by fewer than all of its space
 *     axes: matmul reads A[i, k] for every j) gets multi-level tiling, space axes on four levels
 *     and reduce axes on two, ordered S0 S1 R0 S2 R1 S3 (sketch "tile"); when it is an output it
 *     may accumulate in a local stage (te_cache_write) computed at its S1 tile (sketch
 *     "tile+cache"), and then also copy the inputs it reads with reuse into compact local blocks
 *     computed at its outer reduce loop (te_cache_read, sketch "tile+cache+read": a panel of B
 *     for matmul, whose rows are otherwise 4 n bytes apart and collide in L1 sets, the way a
 *     BLAS packs it; a padding stage read only by the tiled stage may then stay a stage, so
 *     that the copies, not the inner loop, pay for its bounds test; an input may also be copied
 *     whole at root, packed once a call, as weights are; and in sketches "tile+cache+read:A" the
 *     vector runs along space axis A (extent >= 16, a multiple of 8) instead of the last, the
 *     local block and the copies stored with that axis contiguous (te_reorder_storage): a
 *     convolution's output channels, as oneDNN's blocked layouts have them); the copies may
 *     be stored in the register tile's layout (te_reorder_storage of split axes: B in panels
 *     as wide as the local block, [j / W][k][j % W], A in row groups of the register tile,
 *     [i / MR][k][i % MR], as a BLAS and bench/sgemm_schedule.c pack them); a low-precision
 *     reduction (u8 x i8 -> i32, bf16 x bf16 -> f32) also gets sketch
 *     "tile+cache+read+dot:INSN", whose register tile is one dot-product instruction per
 *     vector (te_tensorize vpdpbusd or vdpbf16ps over a group of 4 or 2 k, 16-lane vectors,
 *     the copies stored with each group contiguous, as bench/dot_gemm.c does); when its only
 *     reader is an element-wise output of its shape, it may be
 *     computed at that reader's S1 tile (sketch "tile+fuse"); when its reduce axes are a
 *     small window (a depthwise convolution's 3 x 3), sketch "tile+cache+window" is tile+cache
 *     with the window's inner loops unrolled (a knob) and its padding stage inlined, kept at
 *     root or computed at the output's parallel loop (a knob);
 *   - every other stage is "simple": outer space axes fused and parallel, the last split for a
 *     vector; a reduction feeding an output row by row (softmax, layer norm) may be computed at
 *     that output's row loop. Without a tiled stage, sketch "simple+lanes" is "simple" whose
 *     reductions (one reduce axis of 32 or more) accumulate in 16, 32, 64 or 128 vector lanes
 *     (a knob each): the reduce axis split by the lanes and te_rfactor'ed, the partials' lane
 *     loop innermost and vectorized, computed at the reduction's innermost space loop, then
 *     the lanes reduced; scalar code would chain every addition (or max) of a row on the last
 *     one, as C does without -ffast-math, where the lanes are independent accumulators (what
 *     bench/rows_te.c writes into the algorithm by hand).
 * Knobs (see at.h) are tile factors and small choices (parallel depth, te_unroll of the
 * register tile's rows, vectorize). te_pragma unroll_max_step is not a knob: with it, te's unroll
 * pass takes minutes on some matmul tiles (16 steps already), which would stall a tuning run.
 * Every sketch is probed once (a sample applied and lowered); a sketch whose vectorized form
 * fails keeps vectorization off, one that fails anyway is dropped.
 */
#include <stdio.h>
#include <string.h>

#include "at.h"

/* ---------------------------------------------------------------- stage analysis */

typedef struct reuse_scan {
  int nspace;
  te_expr **axes;
  bool reuse;
} reuse_scan;

static int scan_access(ir_visitor *v, te_expr *e) {
  reuse_scan *r = v->data;
  for (int a = 0; a < r->nspace; a++) {
    bool used = false;
    for (int i = 0; i < e->nargs && !used; i++)
      used = ir_expr_uses(e->args[i], r->axes[a]);
    if (!used)
      r->reuse = true;
  }
  return IR_CONTINUE;
}

static bool has_reuse(const sch_op *op) {
  if (op->nreduce == 0 || op->ndim == 0)
    return false;
  reuse_scan r = {op->ndim, op->axes, false};
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = scan_access;
  v.data = &r;
  for (int k = 0; k < op->nbody; k++)
    ir_visit_expr(&v, op->body[k]);
  return r.reuse;
}

typedef struct axes_scan {
  te_tensor *t;
  const sch_op *op;
  unsigned mask, windows;
} axes_scan;

static int scan_axes(ir_visitor *v, te_expr *e) {
  axes_scan *r = v->data;
  if (e->u.tensor == r->t)
    for (int a = 0; a < r->op->ndim; a++)
      for (int i = 0; i < e->nargs; i++)
        if (ir_expr_uses(e->args[i], r->op->axes[a])) {
          r->mask |= 1u << a;
          if (ir_expr_uses_any(e->args[i], r->op->nreduce, r->op->reduce_axes))
            r->windows |= 1u << a;
        }
  return IR_CONTINUE;
}

/* The space axes of op that index input t (a bit each), and in *windows those that index it
   together with a reduce axis in one index (at_stage_info.input_windows). */
static unsigned input_axes(const sch_op *op, te_tensor *t, unsigned *windows) {
  axes_scan r = {t, op, 0, 0};
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = scan_axes;
  v.data = &r;
  for (int k = 0; k < op->nbody; k++)
    ir_visit_expr(&v, op->body[k]);
  *windows = r.windows;
  return r.mask;
}

static bool reads(sch_op *consumer, const sch_op *producer) {
  te_tensor **in;
  int n = sch_op_inputs(consumer, &in);
  for (int i = 0; i < n; i++)
    if (in[i]->op == producer)
      return true;
  return false;
}

static double stage_points(const at_stage_info *s) {
  double p = 1;
  for (int i = 0; i < s->nspace; i++)
    p *= (double)s->space_ext[i];
  for (int i = 0; i < s->nreduce; i++)
    p *= (double)s->reduce_ext[i];
  return p;
}

static te_status fill_stage(te_ctx *ctx, te_schedule *s, int idx, at_stage_info *si) {
  te_stage *st = s->stages[idx];
  const sch_op *op = st->op;
  memset(si, 0, sizeof *si);
  snprintf(si->name, sizeof si->name, "%s", st->name);
  si->placeholder = op->kind == SCH_OP_PLACEHOLDER;
  si->output = st->is_output;
  si->injective = sch_op_is_injective(op);
  if (op->ndim > AT_MAX_AXES || op->nreduce > AT_MAX_AXES)
    return ir_error(ctx, TE_ERR_UNSUPPORTED, "te_tune: stage '%s' has too many axes", st->name);
  si->nspace = op->ndim;
  si->nreduce = op->nreduce;
  for (int i = 0; i < op->ndim; i++)
    ir_is_const_int(op->shape[i], &si->space_ext[i]);
  for (int i = 0; i < op->nreduce; i++)
    if (!ir_is_const_int(op->reduce_axes[i]->u.var.dom_extent, &si->reduce_ext[i]))
      return ir_error(ctx, TE_ERR_UNSUPPORTED, "te_tune: stage '%s': symbolic reduction extent",
                      st->name);
  si->reuse = !si->placeholder && has_reuse(op);
  if (!si->placeholder) {
    te_tensor **in;
    si->ninputs = sch_op_inputs((sch_op *)op, &in);
    for (int i = 0; i < si->ninputs && i < AT_MAX_CACHE_READS; i++)
      si->input_axes[i] = input_axes(op, in[i], &si->input_windows[i]);
  }
  si->consumer = -1;
  for (int c = 0; c < s->nstage; c++)
    if (c != idx && !si->placeholder && reads(s->stages[c]->op, op)) {
      si->nconsumers++;
      si->consumer = si->nconsumers == 1 ? c : -1;
    }
  return TE_OK;
}

static bool same_shape(const at_stage_info *a, const at_stage_info *b) {
  if (a->nspace != b->nspace)
    return false;
  for (int i = 0; i < a->nspace; i++)
    if (a->space_ext[i] != b->space_ext[i])
      return false;
  return true;
}

/* Picks the tiled stage and the element-wise consumer it may be fused into. */
static void pick_tiled(at_task *t) {
  t->tiled = t->fuse_consumer = -1;
  double best = 0;
  for (int i = 0; i < t->nstage; i++)
    if (t->stage[i].reuse && stage_points(&t->stage[i]) > best) {
      best = stage_points(&t->stage[i]);
      t->tiled = i;
    }
  if (t->tiled < 0)
    return;
  const at_stage_info *ts = &t->stage[t->tiled];
  int c = ts->consumer;
  if (!ts->output && c >= 0 && t->stage[c].injective && t->stage[c].output &&
      same_shape(ts, &t->stage[c]))
    t->fuse_consumer = c;
}

/* ---------------------------------------------------------------- knobs */

static void add_knob(at_sketch *sk, at_knob_kind kind, at_knob_role role, int stage, int axis,
                     int nlevels, int64_t extent, int nchoices) {
  if (sk->nknob >= AT_MAX_KNOBS)
    return;
  at_knob *k = &sk->knob[sk->nknob++];
  k->kind = kind;
  k->role = role;
  k->stage = stage;
  k->axis = axis;
  k->nlevels = kind == AT_KNOB_TILE ? nlevels : 1;
  k->extent = extent;
  k->nchoices = nchoices;
  k->offset = sk->nvals;
  sk->nvals += k->nlevels;
}

/* Whether a simple stage may be computed at its output reader's row loop: it is a reduction
   (not an output) whose shape is the reader's without the last axis. Returns the reader. */
int at_task_row_consumer(const at_task *t, int i) {
  const at_stage_info *s = &t->stage[i];
  if (s->output || s->nreduce == 0 || s->nspace == 0)
    return -1;
  int found = -1;
  for (int o = 0; o < t->nstage; o++) {
    const at_stage_info *os = &t->stage[o];
    if (!os->output || os->nspace != s->nspace + 1)
      continue;
    bool prefix = true;
    for (int a = 0; a < s->nspace; a++)
      prefix &= os->space_ext[a] == s->space_ext[a];
    if (prefix) {
      if (found >= 0)
        return -1;
      found = o;
    }
  }
  return found;
}

/* Whether sketch simple+lanes may accumulate stage i's reduction in vector lanes: one reduce
   axis, long enough for two vectors of 16, and space axes to compute the partials at. */
static bool lanes_stage(const at_task *t, int i) {
  const at_stage_info *s = &t->stage[i];
  return !s->placeholder && s->nspace > 0 && s->nreduce == 1 && s->reduce_ext[0] >= 32;
}

static void simple_knobs(const at_task *t, at_sketch *sk, int i) {
  const at_stage_info *s = &t->stage[i];
  if (s->nspace == 0)
    return;
  if (sk->lanes && lanes_stage(t, i))
    add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_REDUCE_LANES, i, 0, 1, 0, 4);
  if (s->nreduce == 0)
    add_knob(sk, AT_KNOB_TILE, AT_ROLE_SIMPLE_VEC, i, s->nspace - 1, 2, s->space_ext[s->nspace - 1],
             0);
  bool have = false; /* one knob for every row reduction: they read each other (softmax) */
  for (int k = 0; k < sk->nknob; k++)
    have |= sk->knob[k].role == AT_ROLE_AT_CONSUMER;
  if (!have && at_task_row_consumer(t, i) >= 0)
    add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_AT_CONSUMER, -1, 0, 1, 0, 2);
}

static void tile_knobs(const at_task *t, at_sketch *sk) {
  const at_stage_info *s = &t->stage[t->tiled];
  for (int a = 0; a < s->nspace; a++)
    add_knob(sk, AT_KNOB_TILE, AT_ROLE_SPACE_TILE, t->tiled, a, 4, s->space_ext[a], 0);
  for (int a = 0; a < s->nreduce; a++)
    add_knob(sk, AT_KNOB_TILE, AT_ROLE_REDUCE_TILE, t->tiled, a, 2, s->reduce_ext[a], 0);
  add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_PARALLEL_DEPTH, t->tiled, 0, 1, 0, 2);
  add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_UNROLL, t->tiled, 0, 1, 0, 2);
}

bool at_task_keepable(const at_task *t, int i) {
  const at_stage_info *s = &t->stage[i];
  return t->tiled >= 0 && !s->placeholder && s->injective && !s->output && s->nspace > 0 &&
         s->nconsumers == 1 && s->consumer == t->tiled;
}

/* Stages the sketch schedules with the simple rules. */
static bool is_simple(const at_task *t, const at_sketch *sk, int i) {
  const at_stage_info *s = &t->stage[i];
  if (s->placeholder || (s->injective && !s->output))
    return false; /* placeholders have no loops; injective intermediates are inlined */
  if (sk->kind != AT_SK_SIMPLE && i == t->tiled)
    return false;
  if (sk->kind == AT_SK_TILE_FUSE && i == t->fuse_consumer)
    return false;
  return true;
}

/* A dot sketch has its dot set before its knobs are made (they depend on it). */
static at_sketch *make_sketch_dot(at_task *t, at_sketch_kind kind, const char *name,
                                  const at_dot *dot, bool lanes) {
  if (t->nsketch >= AT_MAX_SKETCHES)
    return NULL;
  at_sketch *sk = &t->sketch[t->nsketch++];
  memset(sk, 0, sizeof *sk);
  sk->kind = kind;
  sk->vec_axis = -1;
  sk->lanes = lanes;
  if (dot)
    sk->dot = *dot;
  snprintf(sk->name, sizeof sk->name, "%s", name);
  if (!dot) /* a dot sketch is always vectorized: the instruction takes vectors */
    add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_VECTORIZE, -1, 0, 1, 0, 2);
  if (kind != AT_SK_SIMPLE)
    tile_knobs(t, sk);
  if (kind == AT_SK_TILE_CACHE_READ) {
    /* a dot sketch's copies are always in the instruction's layout: 0, 1, 2 say where */
    for (int i = 0; i < t->stage[t->tiled].ninputs && i < AT_MAX_CACHE_READS; i++)
      add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_CACHE_READ, t->tiled, i, 1, 0, dot ? 3 : 6);
    for (int i = 0; i < t->nstage; i++)
      if (at_task_keepable(t, i)) {
        add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_KEEP_STAGE, i, 0, 1, 0, 2);
        simple_knobs(t, sk, i);
      }
  }
  for (int i = 0; i < t->nstage; i++)
    if (is_simple(t, sk, i))
      simple_knobs(t, sk, i);
  return sk;
}

typedef struct offset_scan {
  const sch_op *op;
  te_expr *r;
  bool found;
} offset_scan;

/* Whether an index of the access uses reduce axis r together with a space axis (y + ry). */
static int scan_offset(ir_visitor *v, te_expr *e) {
  offset_scan *o = v->data;
  for (int i = 0; i < e->nargs && !o->found; i++)
    if (ir_expr_uses(e->args[i], o->r))
      for (int a = 0; a < o->op->ndim && !o->found; a++)
        o->found = ir_expr_uses(e->args[i], o->op->axes[a]);
  return IR_CONTINUE;
}

/* Whether the tiled stage's reduction is a small window: an output whose every reduce axis is
   at most AT_MAX_WINDOW long and offsets a space axis in some input index (depthwise's
   pad[n, c, y + ry, x + rx]), the stencils sketch tile+cache+window is for. A convolution's
   channel sum (data[n, rc, ..]) and a matmul's k (A[i, k]) index a dim of their own. */
static bool window_stage(te_schedule *sch, const at_task *t) {
  const at_stage_info *s = &t->stage[t->tiled];
  const sch_op *op = sch->stages[t->tiled]->op;
  if (!s->output || s->nreduce == 0 || s->nspace == 0)
    return false;
  for (int r = 0; r < s->nreduce; r++) {
    offset_scan o = {op, op->reduce_axes[r], false};
    ir_visitor v = {0};
    v.expr[IR_ACCESS] = scan_offset;
    v.data = &o;
    for (int k = 0; k < op->nbody; k++)
      ir_visit_expr(&v, op->body[k]);
    if (s->reduce_ext[r] > AT_MAX_WINDOW || !o.found)
      return false;
  }
  return true;
}

/* tile+cache+window: tile+cache's knobs, the window unrolled or not, and each padding stage the
   tiled stage reads inlined (0), at root (1: the simple rules, its knobs) or computed at the
   output's parallel loop (2). The padded input of a depthwise convolution, inlined, is a
   select of clamped reads in the inner loop (gathers, once vectorized); computed whole at
   root it is a pass over memory as long as the convolution itself; one tile's rows computed
   in the parallel loop stay in L1 and the inner loop reads them with affine indices. */
static void make_sketch_window(at_task *t) {
  if (t->nsketch >= AT_MAX_SKETCHES)
    return;
  at_sketch *sk = &t->sketch[t->nsketch++];
  memset(sk, 0, sizeof *sk);
  sk->kind = AT_SK_TILE_CACHE;
  sk->vec_axis = -1;
  sk->window = true;
  snprintf(sk->name, sizeof sk->name, "tile+cache+window");
  add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_VECTORIZE, -1, 0, 1, 0, 2);
  tile_knobs(t, sk);
  add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_UNROLL_WINDOW, t->tiled, 0, 1, 0, 2);
  for (int i = 0; i < t->nstage; i++)
    if (at_task_keepable(t, i)) {
      add_knob(sk, AT_KNOB_CHOICE, AT_ROLE_KEEP_STAGE, i, 0, 1, 0, 3);
      simple_knobs(t, sk, i);
    }
  for (int i = 0; i < t->nstage; i++)
    if (is_simple(t, sk, i))
      simple_knobs(t, sk, i);
}

static at_sketch *make_sketch(at_task *t, at_sketch_kind kind, const char *name) {
  return make_sketch_dot(t, kind, name, NULL, false);
}

/* The dot-product instruction for the tiled stage of s, when it multiplies u8 by i8 into i32
   (vpdpbusd) or bf16 by bf16 into f32 (vdpbf16ps), its last space axis is wide enough for a
   16-lane vector and a reduce axis divides into the instruction's groups (the widest such is
   grouped). False otherwise. Whether the loop nest matches and the CPU has the instruction is
   the probe's (te_tensorize refuses what it cannot map). */
static bool find_dot(te_schedule *s, const at_task *t, at_dot *out) {
  const sch_op *op = s->stages[t->tiled]->op;
  const at_stage_info *si = &t->stage[t->tiled];
  te_tensor **in;
  int nin = sch_op_inputs((sch_op *)op, &in);
  te_dtype acc = op->outputs[0]->dtype;
  int nu8 = 0, ni8 = 0, nbf = 0;
  for (int i = 0; i < nin; i++) {
    nu8 += ir_dtype_eq(in[i]->dtype, TE_U8);
    ni8 += ir_dtype_eq(in[i]->dtype, TE_I8);
    nbf += ir_dtype_eq(in[i]->dtype, TE_BF16);
  }
  memset(out, 0, sizeof *out);
  if (nin == 2 && nu8 == 1 && ni8 == 1 && ir_dtype_eq(acc, TE_I32))
    *out = (at_dot){"vpdpbusd", 4, 16, -1};
  else if (nin == 2 && nbf == 2 && ir_dtype_eq(acc, TE_F32))
    *out = (at_dot){"vdpbf16ps", 2, 16, -1};
  else
    return false;
  if (si->nspace == 0 || si->space_ext[si->nspace - 1] < out->lanes)
    return false;
  for (int r = 0; r < si->nreduce; r++)
    if (si->reduce_ext[r] % out->group == 0 &&
        (out->reduce_axis < 0 || si->reduce_ext[r] > si->reduce_ext[out->reduce_axis]))
      out->reduce_axis = r;
  return out->reduce_axis >= 0;
}

/* ---------------------------------------------------------------- probing */

/* Applies a sample of the sketch (vectorize knob forced to vec) and lowers it. */
static bool probe(const at_workload *wl, const at_task *t, int sk, int vec) {
  at_rng rng;
  at_rng_seed(&rng, 12345);
  at_cand c;
  at_cand_sample(t, sk, &rng, &c);
  const at_sketch *s = &t->sketch[sk];
  for (int k = 0; k < s->nknob; k++)
    if (s->knob[k].role == AT_ROLE_VECTORIZE)
      c.v[s->knob[k].offset] = vec;
  te_schedule *sch = te_schedule_new(wl->ctx, wl->nout, wl->outs);
  bool ok = sch && at_cand_apply(t, &c, sch) == TE_OK;
  if (ok) {
    char *ir = te_lower_text(sch, wl->nargs, wl->args, 0, NULL);
    ok = ir != NULL;
    te_free(ir);
  }
  te_clear_error(wl->ctx);
  return ok;
}

static void fix_vectorize_off(at_sketch *s) {
  for (int k = 0; k < s->nknob; k++)
    if (s->knob[k].role == AT_ROLE_VECTORIZE)
      s->knob[k].nchoices = 1;
}

static void probe_sketches(const at_workload *wl, at_task *t) {
  int kept = 0;
  for (int i = 0; i < t->nsketch; i++) {
    bool ok = probe(wl, t, i, 1);
    if (!ok && !t->sketch[i].dot.insn && probe(wl, t, i, 0)) {
      fix_vectorize_off(&t->sketch[i]);
      t->vectorize_ok = false;
      ok = true;
    }
    if (ok)
      t->sketch[kept++] = t->sketch[i];
  }
  t->nsketch = kept;
}

te_status at_task_stages(const at_workload *wl, at_task *t, te_schedule **sched) {
  te_ctx *ctx = wl->ctx;
  memset(t, 0, sizeof *t);
  te_schedule *s = te_schedule_new(ctx, wl->nout, wl->outs);
  if (!s)
    return te_last_status(ctx);
  if (s->nstage > AT_MAX_STAGES)
    return ir_error(ctx, TE_ERR_UNSUPPORTED, "te_tune: more than %d stages", AT_MAX_STAGES);
  t->nstage = s->nstage;
  for (int i = 0; i < s->nstage; i++) {
    te_status st = fill_stage(ctx, s, i, &t->stage[i]);
    if (st != TE_OK)
      return st;
  }
  pick_tiled(t);
  if (sched)
    *sched = s;
  return TE_OK;
}

te_status at_task_analyze(const at_workload *wl, at_task *t) {
  te_schedule *s = NULL; /* the default schedule the stages were read from (find_dot reads it) */
  te_status st = at_task_stages(wl, t, &s);
  if (st != TE_OK)
    return st;
  t->vectorize_ok = true;
  if (t->tiled >= 0) {
    make_sketch(t, AT_SK_TILE, "tile");
    if (t->stage[t->tiled].output) {
      make_sketch(t, AT_SK_TILE_CACHE, "tile+cache");
      make_sketch(t, AT_SK_TILE_CACHE_READ, "tile+cache+read");
      /* the vector along another space axis wide enough for one: a sketch each, so that the
         search samples (and keeps an elite of) each layout, not only the best one found first */
      const at_stage_info *ts = &t->stage[t->tiled];
      for (int v = 0; v + 1 < ts->nspace; v++)
        if (ts->space_ext[v] >= 16 && ts->space_ext[v] % 8 == 0) {
          char name[40];
          snprintf(name, sizeof name, "tile+cache+read:%d", v);
          at_sketch *sk = make_sketch(t, AT_SK_TILE_CACHE_READ, name);
          if (sk)
            sk->vec_axis = v;
        }
    }
    if (window_stage(s, t))
      make_sketch_window(t);
    at_dot dot;
    if (t->stage[t->tiled].output && find_dot(s, t, &dot)) {
      char name[40];
      snprintf(name, sizeof name, "tile+cache+read+dot:%s", dot.insn);
      make_sketch_dot(t, AT_SK_TILE_CACHE_READ, name, &dot, false);
    }
    if (t->fuse_consumer >= 0)
      make_sketch(t, AT_SK_TILE_FUSE, "tile+fuse");
  } else {
    make_sketch(t, AT_SK_SIMPLE, "simple");
    bool any = false; /* a reduction scalar code would make one long dependent chain of */
    for (int i = 0; i < t->nstage; i++)
      any |= lanes_stage(t, i);
    if (any)
      make_sketch_dot(t, AT_SK_SIMPLE, "simple+lanes", NULL, true);
  }
  probe_sketches(wl, t);
  if (t->nsketch == 0) { /* nothing applies: the default schedule is the only candidate */
    t->nsketch = 1;
    memset(&t->sketch[0], 0, sizeof t->sketch[0]);
    t->sketch[0].kind = AT_SK_DEFAULT;
    t->sketch[0].vec_axis = -1;
    snprintf(t->sketch[0].name, sizeof t->sketch[0].name, "default");
  }
  return TE_OK;
}

int at_task_sketch_index(const at_task *t, const char *name) {
  for (int i = 0; i < t->nsketch; i++)
    if (name && strcmp(t->sketch[i].name, name) == 0)
      return i;
  return -1;
}
