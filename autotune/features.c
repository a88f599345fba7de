/* features.c — what the cost model sees of a candidate: features of its lowered loop nest.
 *
 * The schedule is lowered up to loop partitioning (before vectorization and unrolling, so each
 * loop still says how it will run) inside a scratch arena. For every store, with the loops
 * around it: arithmetic by kind, loads, the loop structure (trip count, vectorized, unrolled
 * and parallel extents, innermost extent), strides of the accesses in the innermost loop, bytes
 * touched and reuse for the innermost 1..4 loop levels, the size of the buffer written when it
 * is an allocation. The three heaviest stores (trip count x operations) fill fixed slots, plus
 * a few global counts. Every value is log2(1 + x) so that the trees see ratios.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"
#include "lower/lower.h"

enum { MAX_LOOPS = 48, MAX_STORES = 64, MAX_ACC = 32, LEVELS = 4 };

typedef struct loop_ent {
  te_expr *var;
  int64_t extent;
  ir_for_kind kind;
} loop_ent;

typedef struct access {
  ir_buffer *buf;
  te_expr *index;
} access;

typedef struct store_feat {
  double weight;
  float f[AT_FEAT_PER_STORE];
} store_feat;

typedef struct fx {
  ir_analyzer *an;
  loop_ent loops[MAX_LOOPS];
  int nloops;
  ir_map *alloc_bytes; /* ir_buffer -> (intptr) bytes + 1 */
  store_feat stores[MAX_STORES];
  int nstores;
  double total_alloc, nallocs, max_parallel, total_trip, nfor, nvec, total_ops;
} fx;

static float lg(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

/* ---------------------------------------------------------------- expression counts */

typedef struct counts {
  double add, mul, div, call, iops, cmp;
  int nacc;
  access acc[MAX_ACC];
} counts;

static int count_expr(ir_visitor *v, te_expr *e) {
  counts *c = v->data;
  bool fl = ir_is_float(e->dtype);
  switch (e->kind) {
  case IR_ADD:
  case IR_SUB:
    *(fl ? &c->add : &c->iops) += 1;
    break;
  case IR_MUL:
    *(fl ? &c->mul : &c->iops) += 1;
    break;
  case IR_DIV:
    c->div += 1;
    break;
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
    c->iops += 1;
    break;
  case IR_MIN:
  case IR_MAX:
    *(fl ? &c->add : &c->iops) += 1;
    break;
  case IR_CALL:
    c->call += 1;
    break;
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
  case IR_SELECT:
    c->cmp += 1;
    break;
  case IR_LOAD:
    if (c->nacc < MAX_ACC)
      c->acc[c->nacc++] = (access){e->u.buffer, e->args[0]};
    break;
  default:
    break;
  }
  return IR_CONTINUE;
}

/* The coefficient of var in the linear index e; false when e is not linear in var. */
static bool lin_coef(te_expr *e, te_expr *var, int64_t *out) {
  int64_t a, b, k;
  switch (e->kind) {
  case IR_VAR:
    *out = e == var;
    return true;
  case IR_INT:
    *out = 0;
    return true;
  case IR_CAST:
    return lin_coef(e->args[0], var, out);
  case IR_ADD:
  case IR_SUB:
    if (!lin_coef(e->args[0], var, &a) || !lin_coef(e->args[1], var, &b))
      return false;
    *out = e->kind == IR_ADD ? a + b : a - b;
    return true;
  case IR_MUL:
    if (ir_is_const_int(e->args[1], &k) && lin_coef(e->args[0], var, &a))
      return *out = a * k, true;
    if (ir_is_const_int(e->args[0], &k) && lin_coef(e->args[1], var, &a))
      return *out = a * k, true;
    break;
  default:
    break;
  }
  if (!ir_expr_uses(e, var))
    return *out = 0, true;
  return false;
}

/* Distinct elements of one access over the innermost `levels` loops. */
static double footprint(const fx *x, const access *a, int levels) {
  double span = 1, prod = 1;
  for (int l = 0; l < levels && l < x->nloops; l++) {
    const loop_ent *le = &x->loops[x->nloops - 1 - l];
    int64_t c;
    bool lin = lin_coef(a->index, le->var, &c);
    if (lin && c == 0)
      continue;
    prod *= (double)le->extent;
    span += lin ? fabs((double)c) * (double)(le->extent - 1) : 1e18;
  }
  return span < prod ? span : prod;
}

static double trip_inside(const fx *x, int levels) {
  double t = 1;
  for (int l = 0; l < levels && l < x->nloops; l++)
    t *= (double)x->loops[x->nloops - 1 - l].extent;
  return t;
}

/* ---------------------------------------------------------------- per store */

static void loop_features(const fx *x, float *f) {
  double trip = 1, vec = 1, unr = 1, par = 1;
  int par_depth = 0;
  for (int i = 0; i < x->nloops; i++) {
    const loop_ent *le = &x->loops[i];
    trip *= (double)le->extent;
    if (le->kind == IR_FOR_VECTORIZED)
      vec *= (double)le->extent;
    if (le->kind == IR_FOR_UNROLLED)
      unr *= (double)le->extent;
    if (le->kind == IR_FOR_PARALLEL) {
      par *= (double)le->extent;
      par_depth = i + 1;
    }
  }
  const loop_ent *in = x->nloops ? &x->loops[x->nloops - 1] : NULL;
  f[0] = lg(trip);
  f[8] = lg(in && in->kind == IR_FOR_VECTORIZED ? (double)in->extent : 1);
  f[9] = lg(unr);
  f[10] = lg(par);
  f[11] = (float)x->nloops;
  f[12] = lg(in ? (double)in->extent : 1);
  f[30] = lg(vec);
  f[31] = (float)par_depth;
}

static void stride_features(const fx *x, const counts *c, ir_stmt *s, float *f) {
  if (!x->nloops)
    return;
  te_expr *var = x->loops[x->nloops - 1].var;
  for (int i = 0; i < c->nacc; i++) {
    int64_t k;
    bool lin = lin_coef(c->acc[i].index, var, &k);
    f[!lin || llabs(k) > 1 ? 17 : k == 0 ? 15 : 16] += 1;
  }
  int64_t k;
  f[18] = lin_coef(s->exprs[1], var, &k) ? lg((double)llabs(k)) : 8;
}

static void reuse_features(const fx *x, const counts *c, const access *st, float *f) {
  for (int l = 1; l <= LEVELS; l++) {
    double bytes = 0, distinct = 0;
    for (int i = 0; i <= c->nacc; i++) {
      const access *a = i < c->nacc ? &c->acc[i] : st;
      double d = footprint(x, a, l);
      distinct += d;
      bytes += d * ir_dtype_bytes(a->buf->dtype);
    }
    f[19 + 2 * (l - 1)] = lg(bytes);
    f[20 + 2 * (l - 1)] = lg(trip_inside(x, l) * (c->nacc + 1) / (distinct > 0 ? distinct : 1));
  }
  double all = 0;
  for (int i = 0; i <= c->nacc; i++) {
    const access *a = i < c->nacc ? &c->acc[i] : st;
    all += footprint(x, a, x->nloops) * ir_dtype_bytes(a->buf->dtype);
  }
  f[28] = lg(all);
}

static void on_store(fx *x, ir_stmt *s) {
  if (x->nstores >= MAX_STORES)
    return;
  counts c = {0};
  ir_visitor v = {0};
  for (int k = 0; k < IR_EXPR_COUNT; k++)
    v.expr[k] = count_expr;
  v.data = &c;
  ir_visit_expr(&v, s->exprs[0]);
  int nval = c.nacc;
  ir_visit_expr(&v, s->exprs[1]); /* index arithmetic (and indirect loads) */
  c.nacc = nval;
  access st = {s->u.buffer, s->exprs[1]};
  store_feat *sf = &x->stores[x->nstores++];
  float *f = sf->f;
  memset(f, 0, sizeof sf->f);
  loop_features(x, f);
  double ops = c.add + c.mul + c.div + c.call;
  f[1] = lg(c.add);
  f[2] = lg(c.mul);
  f[3] = lg(c.div);
  f[4] = lg(c.call);
  f[5] = lg(c.iops);
  f[6] = lg(c.cmp);
  f[7] = lg(c.nacc);
  for (int i = 0; i < c.nacc; i++)
    if (c.acc[i].buf == st.buf && c.acc[i].index == st.index)
      f[13] = 1;
  f[14] = st.buf->arg_index < 0;
  stride_features(x, &c, s, f);
  reuse_features(x, &c, &st, f);
  intptr_t ab = (intptr_t)ir_map_get(x->alloc_bytes, st.buf);
  f[27] = lg(ab ? (double)(ab - 1) : 0);
  double trip = exp2(f[0]) - 1;
  sf->weight = trip * (1 + ops);
  f[29] = lg(sf->weight);
  x->total_trip += trip;
  x->total_ops += trip * ops;
}

/* ---------------------------------------------------------------- the walk */

static void walk(fx *x, ir_stmt *s);

static void walk_for(fx *x, ir_stmt *s) {
  te_expr *ext = IR_FOR_EXTENT(s);
  int64_t e;
  if (!ir_is_const_int(ext, &e)) {
    ir_const_bound b = ir_const_bound_of(x->an, ext);
    e = b.max < INT64_MAX && b.max > 0 ? b.max : 1;
  }
  if (e < 1)
    e = 1;
  x->nfor++;
  if (s->u.loop.kind == IR_FOR_VECTORIZED)
    x->nvec++;
  if (s->u.loop.kind == IR_FOR_PARALLEL && (double)e > x->max_parallel)
    x->max_parallel = (double)e;
  ir_analyzer_bind(x->an, IR_FOR_VAR(s), IR_FOR_MIN(s), ext);
  if (x->nloops < MAX_LOOPS) {
    x->loops[x->nloops++] = (loop_ent){IR_FOR_VAR(s), e, s->u.loop.kind};
    walk(x, IR_FOR_BODY(s));
    x->nloops--;
  }
  ir_analyzer_unbind(x->an, IR_FOR_VAR(s));
}

static void walk(fx *x, ir_stmt *s) {
  if (!s)
    return;
  switch (s->kind) {
  case IR_S_FOR:
    walk_for(x, s);
    return;
  case IR_S_STORE:
    on_store(x, s);
    return;
  case IR_S_ALLOCATE: {
    int64_t n = 1;
    if (!ir_is_const_int(s->exprs[0], &n)) {
      ir_const_bound b = ir_const_bound_of(x->an, s->exprs[0]);
      n = b.max < INT64_MAX ? b.max : 1;
    }
    double bytes = (double)n * ir_dtype_bytes(s->u.buffer->dtype);
    x->total_alloc += bytes;
    x->nallocs += 1;
    ir_map_put(x->alloc_bytes, s->u.buffer, (void *)(intptr_t)(bytes + 1));
    break;
  }
  case IR_S_LET_STMT:
    ir_analyzer_bind_value(x->an, s->exprs[0], s->exprs[1]);
    break;
  default:
    break;
  }
  for (uint32_t i = 0; i < s->nstmts; i++)
    walk(x, s->stmts[i]);
}

static int by_weight(const void *a, const void *b) {
  double x = ((const store_feat *)a)->weight, y = ((const store_feat *)b)->weight;
  return (x < y) - (x > y);
}

static void finish(fx *x, float *out) {
  memset(out, 0, sizeof(float) * AT_NFEAT);
  qsort(x->stores, (size_t)x->nstores, sizeof x->stores[0], by_weight);
  for (int i = 0; i < x->nstores && i < AT_FEAT_STORES; i++)
    memcpy(out + i * AT_FEAT_PER_STORE, x->stores[i].f, sizeof x->stores[i].f);
  float *g = out + AT_FEAT_STORES * AT_FEAT_PER_STORE;
  g[0] = lg(x->total_ops);
  g[1] = (float)x->nstores;
  g[2] = lg(x->total_alloc);
  g[3] = (float)x->nallocs;
  g[4] = lg(x->max_parallel);
  g[5] = lg(x->total_trip);
  g[6] = (float)x->nfor;
  g[7] = (float)x->nvec;
}

te_status at_features(const at_workload *wl, te_schedule *s, const te_target *target, float *out) {
  te_ctx *ctx = wl->ctx;
  ir_scratch_begin(ctx);
  lw_func *f = NULL;
  te_status st = lw_lower_until(s, "te_tune", "at_kernel", wl->nargs, wl->args, 0, NULL, target,
                                "loop_partition", &f);
  if (st == TE_OK) {
    fx *x = ir_calloc(ctx, 1, sizeof *x);
    if (!x) {
      st = ir_error(ctx, TE_ERR_NOMEM, "te_tune: out of memory");
    } else {
      x->an = ir_analyzer_new(ctx);
      x->alloc_bytes = ir_map_new(ctx);
      if (x->an && x->alloc_bytes)
        walk(x, f->body), finish(x, out);
      else
        st = te_last_status(ctx);
      free(x);
    }
  }
  ir_scratch_end(ctx);
  return st;
}
