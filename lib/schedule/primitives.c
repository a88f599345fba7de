/* primitives.c — the loop primitives: split, split_nparts, tile, fuse, reorder, and the loop
 * annotations (vectorize, unroll, parallel, bind, tail, pragma).
 *
 * Each one checks its arguments (stage and iterator not NULL, the iterator belongs to the stage
 * and is a current leaf, factors positive, ...) and then edits the stage's relations and leaf
 * order. Nothing is lowered here: the loop nest is made from these records by ops_to_loops.c.
 * A successful call appends one step to the schedule's trace (trace.c).
 */
#include <stdio.h>
#include <string.h>

#include "trace.h"

/* A stage and one of its current leaves. */
static bool check_leaf(const char *fn, te_stage *st, te_iter *it, const char *what) {
  if (!st)
    return false;
  if (sch_extern_refuse(st, fn, "loop primitives do not apply to it") != TE_OK)
    return false;
  te_ctx *ctx = st->sch->ctx;
  if (!it) {
    ir_error_null(ctx, "%s: stage '%s': %s is NULL", fn, st->name, what);
    return false;
  }
  if (it->stage != st) {
    ir_error(ctx, TE_ERR_SCHEDULE, "%s: iter '%s' belongs to stage '%s', not to stage '%s'", fn,
             it->name, it->stage->name, st->name);
    return false;
  }
  if (sch_leaf_pos(st, it) < 0) {
    ir_error(ctx, TE_ERR_SCHEDULE,
             "%s: stage '%s': iter '%s' is not a leaf loop (it was split or fused already)", fn,
             st->name, it->name);
    return false;
  }
  return true;
}

static te_status fail_status(te_stage *st) {
  return st ? te_last_status(st->sch->ctx) ? te_last_status(st->sch->ctx) : TE_ERR_INTERNAL
            : TE_ERR_INVALID_ARG;
}

/* Splits it by v: v is the inner extent (factor) or, with by_nparts, the outer extent. */
static te_status do_split(const char *fn, te_stage *st, te_iter *it, int64_t v, bool by_nparts,
                          te_iter **outer, te_iter **inner) {
  if (!check_leaf(fn, st, it, "iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  if (v <= 0) {
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': iter '%s': %s must be > 0 (got %lld)",
                    fn, st->name, it->name, by_nparts ? "nparts" : "factor", (long long)v);
  }
  char buf[160];
  snprintf(buf, sizeof buf, "%s.o", it->name);
  te_iter *o = sch_iter_new(st, buf, it->type, NULL);
  snprintf(buf, sizeof buf, "%s.i", it->name);
  te_iter *i = sch_iter_new(st, buf, it->type, NULL);
  sch_rel *r = o && i ? sch_rel_add(st) : NULL;
  if (!r)
    return fail_status(st);
  r->kind = SCH_REL_SPLIT;
  r->parent = it;
  r->outer = o;
  r->inner = i;
  r->factor = by_nparts ? 0 : v;
  r->nparts = by_nparts ? v : 0;
  te_iter *ins[2] = {o, i};
  if (!sch_leaf_replace(st, sch_leaf_pos(st, it), 1, 2, ins))
    return fail_status(st);
  if (outer)
    *outer = o;
  if (inner)
    *inner = i;
  return TE_OK;
}

static te_status split_impl(te_stage *st, te_iter *it, int64_t factor, te_iter **outer,
                            te_iter **inner) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  te_status s = do_split("te_split", st, it, factor, false, outer, inner);
  if (s != TE_OK)
    return s;
  return sch_trace_step(st->sch, SCH_STEP_split,
                        (sch_arg[]){{.stage = st}, {.iter = it}, {.i = factor}});
}

te_status te_split(te_stage *st, te_iter *it, int64_t factor, te_iter **outer, te_iter **inner) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_split", split_impl(st, it, factor, outer, inner));
}

static te_status split_nparts_impl(te_stage *st, te_iter *it, int64_t nparts, te_iter **outer,
                                   te_iter **inner) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  te_status s = do_split("te_split_nparts", st, it, nparts, true, outer, inner);
  if (s != TE_OK)
    return s;
  return sch_trace_step(st->sch, SCH_STEP_split_nparts,
                        (sch_arg[]){{.stage = st}, {.iter = it}, {.i = nparts}});
}

te_status te_split_nparts(te_stage *st, te_iter *it, int64_t nparts, te_iter **outer,
                          te_iter **inner) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_split_nparts", split_nparts_impl(st, it, nparts, outer, inner));
}

static te_status fuse_impl(te_stage *st, te_iter *outer, te_iter *inner, te_iter **fused) {
  const char *fn = "te_fuse";
  if (!st)
    return TE_ERR_INVALID_ARG;
  if (!check_leaf(fn, st, outer, "outer iter") || !check_leaf(fn, st, inner, "inner iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  int po = sch_leaf_pos(st, outer), pi = sch_leaf_pos(st, inner);
  if (pi != po + 1)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': iters '%s' and '%s' are not adjacent leaves with '%s' "
                    "immediately outside '%s' (reorder them first)",
                    fn, st->name, outer->name, inner->name, outer->name, inner->name);
  if (outer->type != inner->type)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': cannot fuse data-parallel and reduction iters ('%s', '%s')",
                    fn, st->name, outer->name, inner->name);
  char buf[260];
  snprintf(buf, sizeof buf, "%s.%s.f", outer->name, inner->name);
  te_iter *f = sch_iter_new(st, buf, outer->type, NULL);
  sch_rel *r = f ? sch_rel_add(st) : NULL;
  if (!r)
    return fail_status(st);
  r->kind = SCH_REL_FUSE;
  r->fuse_outer = outer;
  r->fuse_inner = inner;
  r->fused = f;
  if (!sch_leaf_replace(st, po, 2, 1, &f))
    return fail_status(st);
  if (fused)
    *fused = f;
  return sch_trace_step(st->sch, SCH_STEP_fuse,
                        (sch_arg[]){{.stage = st}, {.iter = outer}, {.iter = inner}});
}

te_status te_fuse(te_stage *st, te_iter *outer, te_iter *inner, te_iter **fused) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_fuse", fuse_impl(st, outer, inner, fused));
}

static te_status do_reorder(const char *fn, te_stage *st, int n, te_iter *const order[]) {
  te_ctx *ctx = st->sch->ctx;
  te_status ext = sch_extern_refuse(st, fn, "loop primitives do not apply to it");
  if (ext != TE_OK)
    return ext;
  if (n < 1 || !order)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: stage '%s': needs at least one iter (got %d)", fn,
                    st->name, n);
  if (n > st->nleaf)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': %d iters given but the stage has %d leaves", fn, st->name, n,
                    st->nleaf);
  int pos[64];
  if (n > 64)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: too many iters (%d)", fn, n);
  for (int i = 0; i < n; i++) {
    if (!check_leaf(fn, st, order[i], "iter"))
      return fail_status(st);
    for (int j = 0; j < i; j++)
      if (order[j] == order[i])
        return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': iter '%s' is given twice", fn,
                        st->name, order[i]->name);
    pos[i] = sch_leaf_pos(st, order[i]);
  }
  /* the positions the given leaves occupy, ascending, receive them in the given order */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
      int t = pos[j];
      pos[j] = pos[j - 1];
      pos[j - 1] = t;
    }
  te_iter **l = ir_alloc_persistent(ctx, sizeof(te_iter *) * (size_t)st->nleaf);
  if (!l)
    return fail_status(st);
  memcpy(l, st->leaf, sizeof(te_iter *) * (size_t)st->nleaf);
  for (int i = 0; i < n; i++)
    l[pos[i]] = order[i];
  st->leaf = l;
  return TE_OK;
}

static te_status reorder_impl(te_stage *st, int n, te_iter *const order[]) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  te_status s = do_reorder("te_reorder", st, n, order);
  if (s != TE_OK)
    return s;
  return sch_trace_step(st->sch, SCH_STEP_reorder,
                        (sch_arg[]){{.stage = st}, {.iters = {n, order}}});
}

te_status te_reorder(te_stage *st, int n, te_iter *const order[]) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_reorder", reorder_impl(st, n, order));
}

static te_status tile_impl(te_stage *st, te_iter *x, te_iter *y, int64_t fx, int64_t fy,
                           te_iter **xo, te_iter **yo, te_iter **xi, te_iter **yi) {
  const char *fn = "te_tile";
  if (!st)
    return TE_ERR_INVALID_ARG;
  if (!check_leaf(fn, st, x, "x iter") || !check_leaf(fn, st, y, "y iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  if (x == y)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': x and y are the same iter '%s'", fn,
                    st->name, x->name);
  if (sch_leaf_pos(st, x) > sch_leaf_pos(st, y))
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': x '%s' must be outside y '%s'", fn,
                    st->name, x->name, y->name);
  if (fx <= 0 || fy <= 0)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': factors must be > 0 (got %lld, %lld)",
                    fn, st->name, (long long)fx, (long long)fy);
  te_iter *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  te_status s = do_split(fn, st, x, fx, false, &a, &c);
  if (s == TE_OK)
    s = do_split(fn, st, y, fy, false, &b, &d);
  te_iter *order[4] = {a, b, c, d};
  if (s == TE_OK)
    s = do_reorder(fn, st, 4, order);
  if (s != TE_OK)
    return s;
  if (xo)
    *xo = a;
  if (yo)
    *yo = b;
  if (xi)
    *xi = c;
  if (yi)
    *yi = d;
  return sch_trace_step(st->sch, SCH_STEP_tile,
                        (sch_arg[]){{.stage = st}, {.iter = x}, {.iter = y}, {.i = fx}, {.i = fy}});
}

te_status te_tile(te_stage *st, te_iter *x, te_iter *y, int64_t fx, int64_t fy, te_iter **xo,
                  te_iter **yo, te_iter **xi, te_iter **yi) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_tile", tile_impl(st, x, y, fx, fy, xo, yo, xi, yi));
}

/* ---------------------------------------------------------------- annotations */

static te_status annotate(const char *fn, sch_step_id step, te_stage *st, te_iter *it,
                          ir_for_kind kind) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  if (!check_leaf(fn, st, it, "iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  if (it->kind != IR_FOR_SERIAL && it->kind != kind)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': iter '%s' is already %s", fn, st->name,
                    it->name, ir_for_kind_name[it->kind]);
  if (it->type == SCH_ITER_REDUCE && (kind == IR_FOR_PARALLEL || kind == IR_FOR_VECTORIZED))
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': iter '%s' is a reduction axis: its iterations update the same "
                    "element (use te_rfactor first)",
                    fn, st->name, it->name);
  te_status scan = sch_scan_check_annotation(st, it, kind, fn);
  if (scan != TE_OK)
    return scan;
  it->kind = kind;
  return sch_trace_step(st->sch, step, (sch_arg[]){{.stage = st}, {.iter = it}});
}

te_status te_vectorize(te_stage *st, te_iter *it) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_vectorize",
                  annotate("te_vectorize", SCH_STEP_vectorize, st, it, IR_FOR_VECTORIZED));
}
te_status te_unroll(te_stage *st, te_iter *it) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_unroll",
                  annotate("te_unroll", SCH_STEP_unroll, st, it, IR_FOR_UNROLLED));
}
te_status te_parallel(te_stage *st, te_iter *it) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_parallel",
                  annotate("te_parallel", SCH_STEP_parallel, st, it, IR_FOR_PARALLEL));
}

static te_status bind_impl(te_stage *st, te_iter *it, te_thread_tag tag) {
  const char *fn = "te_bind";
  if (!st)
    return TE_ERR_INVALID_ARG;
  if (!check_leaf(fn, st, it, "iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  if ((unsigned)tag > TE_THREAD_Z)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: stage '%s': unknown thread tag %d", fn, st->name,
                    (int)tag);
  if (it->type == SCH_ITER_REDUCE)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': iter '%s' is a reduction axis (cross-thread reductions need "
                    "te_rfactor first)",
                    fn, st->name, it->name);
  for (int i = 0; i < st->nleaf; i++) {
    te_iter *o = st->leaf[i];
    if (o != it && o->kind == IR_FOR_THREAD && o->tag == tag)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s': thread tag %s is already bound to iter '%s'", fn, st->name,
                      te_thread_tag_name(tag), o->name);
  }
  if (it->kind != IR_FOR_SERIAL && !(it->kind == IR_FOR_THREAD && it->tag == tag))
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': iter '%s' is already %s", fn, st->name,
                    it->name, ir_for_kind_name[it->kind]);
  te_status scan = sch_scan_check_annotation(st, it, IR_FOR_THREAD, fn);
  if (scan != TE_OK)
    return scan;
  it->kind = IR_FOR_THREAD;
  it->tag = tag;
  return sch_trace_step(st->sch, SCH_STEP_bind,
                        (sch_arg[]){{.stage = st}, {.iter = it}, {.e = (int)tag}});
}

te_status te_bind(te_stage *st, te_iter *it, te_thread_tag tag) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_bind", bind_impl(st, it, tag));
}

static te_status set_tail_impl(te_stage *st, te_iter *it, te_tail tail) {
  const char *fn = "te_set_tail";
  if (!st)
    return TE_ERR_INVALID_ARG;
  if (!it)
    return ir_error_null(st->sch->ctx, "%s: stage '%s': iter is NULL", fn, st->name);
  te_ctx *ctx = st->sch->ctx;
  if (it->stage != st)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: iter '%s' belongs to stage '%s', not to stage '%s'",
                    fn, it->name, it->stage->name, st->name);
  if ((unsigned)tail > TE_TAIL_ROUND_UP)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: stage '%s': unknown tail strategy %d", fn,
                    st->name, (int)tail);
  if (tail != TE_TAIL_GUARD && it->type == SCH_ITER_REDUCE)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': iter '%s' is a reduction axis: %s its last tile would add "
                    "some terms %s",
                    fn, st->name, it->name, tail == TE_TAIL_ROUND_UP ? "rounding up" : "shifting",
                    tail == TE_TAIL_ROUND_UP ? "that are not in the domain" : "twice");
  if (tail == TE_TAIL_ROUND_UP && st->is_output)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is an output: rounding its loops up would write outside the "
                    "caller's buffer (round up an intermediate stage, e.g. a te_cache_write stage)",
                    fn, st->name);
  it->tail = tail;
  return sch_trace_step(st->sch, SCH_STEP_set_tail,
                        (sch_arg[]){{.stage = st}, {.iter = it}, {.e = (int)tail}});
}

te_status te_set_tail(te_stage *st, te_iter *it, te_tail tail) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_set_tail", set_tail_impl(st, it, tail));
}

static te_status pragma_impl(te_stage *st, te_iter *it, const char *key, int64_t value) {
  const char *fn = "te_pragma";
  if (!st)
    return TE_ERR_INVALID_ARG;
  if (!check_leaf(fn, st, it, "iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  if (!key || (strcmp(key, "unroll_max_step") != 0 && strcmp(key, "prefetch") != 0 &&
               strcmp(key, "nontemporal") != 0))
    return ir_error(ctx, TE_ERR_UNSUPPORTED,
                    "%s: stage '%s': unknown pragma '%s' (known: unroll_max_step, prefetch, "
                    "nontemporal)",
                    fn, st->name, key ? key : "(null)");
  int n = it->npragmas + 1;
  const char **keys = ir_alloc_persistent(ctx, sizeof(char *) * (size_t)n);
  int64_t *vals = ir_alloc_persistent(ctx, sizeof(int64_t) * (size_t)n);
  if (!keys || !vals)
    return fail_status(st);
  for (int i = 0; i < it->npragmas; i++) {
    keys[i] = it->pragma_keys[i];
    vals[i] = it->pragma_values[i];
  }
  keys[n - 1] = ir_strdup_persistent(ctx, key);
  vals[n - 1] = value;
  it->pragma_keys = keys;
  it->pragma_values = vals;
  it->npragmas = n;
  return sch_trace_step(st->sch, SCH_STEP_pragma,
                        (sch_arg[]){{.stage = st}, {.iter = it}, {.word = key}, {.i = value}});
}

te_status te_pragma(te_stage *st, te_iter *it, const char *key, int64_t value) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_pragma", pragma_impl(st, it, key, value));
}

static te_status tensorize_impl(te_stage *st, te_iter *it, const char *intrinsic) {
  const char *fn = "te_tensorize";
  if (!check_leaf(fn, st, it, "iter"))
    return fail_status(st);
  te_ctx *ctx = st->sch->ctx;
  ir_tensor_intrin id = ir_tensor_intrin_lookup(intrinsic);
  if (id == IR_TENSOR_INTRIN_NONE)
    return ir_error(ctx, TE_ERR_UNSUPPORTED,
                    "%s: stage '%s': unknown instruction '%s' (known: vpdpbusd, vdpbf16ps, "
                    "mma_m16n8k16, mma_m16n8k32)",
                    fn, st->name, intrinsic ? intrinsic : "(null)");
  /* an mma marks the outermost of its three tile loops, which may be a data loop */
  if (!ir_tensor_intrin_is_mma(id) && it->type != SCH_ITER_REDUCE)
    return ir_error(
        ctx, TE_ERR_SCHEDULE,
        "%s: stage '%s': loop '%s' is a data-parallel loop; %s sums over a reduce "
        "loop (give the inner loop of a split of a reduce axis, extent 4 for vpdpbusd, 2 for "
        "vdpbf16ps)",
        fn, st->name, it->name, intrinsic);
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i]->tensorize && st->leaf[i] != it)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s': loop '%s' is tensorized already; one loop a stage", fn,
                      st->name, st->leaf[i]->name);
  it->tensorize = (int)id;
  return sch_trace_step(st->sch, SCH_STEP_tensorize,
                        (sch_arg[]){{.stage = st}, {.iter = it}, {.word = intrinsic}});
}

te_status te_tensorize(te_stage *st, te_iter *it, const char *intrinsic) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_tensorize", tensorize_impl(st, it, intrinsic));
}
