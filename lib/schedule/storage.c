/* storage.c — how a stage's buffer is laid out: te_reorder_storage.
 *
 * The schedule records a permutation of the stage's data axes, where an axis split by a factor
 * may stand as its two parts (a blocked layout: B[k, j] stored as [j / 64][k][j % 64]);
 * ops_to_loops.c puts it on the stage's REALIZE and storage_flatten.c lays the buffer out in that
 * order. Loops are untouched: only which elements are neighbours in memory changes, which is what
 * makes a vector along a non-last axis contiguous (a local accumulator vectorized over channels, a
 * weight block copied by te_cache_read so that its channel axis is the contiguous one).
 */
#include <string.h>

#include "trace.h"

/* The split of data axis d's own iter when it is split by a factor (its outer and inner parts
   may then stand for it in a storage order); NULL when none. */
static const sch_rel *axis_split(const te_stage *st, int d) {
  for (int r = 0; r < st->nrel; r++)
    if (st->rels[r].kind == SCH_REL_SPLIT && st->rels[r].parent == st->root[d])
      return &st->rels[r];
  return NULL;
}

/* Which storage dim dims[k] is (ir_realize_info.order's encoding): a data axis d, or the outer
   (d) or inner (IR_STORAGE_INNER + d) part of data axis d's own split; -1 when none. */
static int storage_dim(const te_stage *st, const te_iter *it) {
  for (int d = 0; d < st->op->ndim; d++) {
    if (st->root[d] == it)
      return d;
    const sch_rel *r = axis_split(st, d);
    if (r && (r->outer == it || r->inner == it))
      return r->inner == it ? IR_STORAGE_INNER + d : d;
  }
  return -1;
}

static te_status reorder_storage_impl(te_stage *st, int n, te_iter *const dims[]) {
  const char *fn = "te_reorder_storage";
  if (!st)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = st->sch->ctx;
  const sch_op *op = st->op;
  if (!dims)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: stage '%s': dims is NULL", fn, st->name);
  te_status ext = sch_extern_refuse(st, fn, "its function is passed compact row-major storage");
  if (ext != TE_OK)
    return ext;
  if (op->kind == SCH_OP_PLACEHOLDER || st->is_output)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is %s: its layout is the caller's buffer's (only stages te "
                    "allocates can be reordered)",
                    fn, st->name, st->is_output ? "an output" : "a placeholder");
  if (n < op->ndim || n > 2 * op->ndim)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': %d dims given but the stage has %d data axes (list each "
                    "once, or both parts of its split)",
                    fn, st->name, n, op->ndim);
  int8_t order[2 * TE_MAX_DIMS];
  int64_t split[TE_MAX_DIMS] = {0};
  int seen[TE_MAX_DIMS] = {0}; /* bit 1: whole or outer part, bit 2: inner part */
  for (int k = 0; k < n; k++) {
    if (!dims[k])
      return ir_error_null(ctx, "%s: stage '%s': dims[%d] is NULL", fn, st->name, k);
    int o = storage_dim(st, dims[k]);
    if (o < 0)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s': '%s' is neither one of its data axes nor a part of a data "
                      "axis' own split (give te_axis(stage, i), or the outer and inner iters of "
                      "te_split of it; not a fused, reduce or twice-split iter)",
                      fn, st->name, dims[k]->name);
    int d = o % IR_STORAGE_INNER, bit = o >= IR_STORAGE_INNER ? 2 : 1;
    const sch_rel *r = dims[k] == st->root[d] ? NULL : axis_split(st, d);
    if (r && r->factor <= 0)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s': '%s' comes from a split by a number of parts: storage is "
                      "split by a factor (te_split)",
                      fn, st->name, dims[k]->name);
    if ((seen[d] & bit) || (r ? seen[d] == 4 : seen[d] != 0))
      return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': axis '%s' is given twice", fn,
                      st->name, st->root[d]->name);
    seen[d] |= r ? bit : 4;
    split[d] = r ? r->factor : 0;
    order[k] = (int8_t)o;
  }
  for (int d = 0; d < op->ndim; d++)
    if (seen[d] != 4 && seen[d] != 3)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s': data axis '%s' is %s (list each data axis once, or both "
                      "parts of its split)",
                      fn, st->name, st->root[d]->name,
                      seen[d] == 0 ? "missing" : "given by one part of its split only");
  memcpy(st->storage, order, (size_t)n);
  memcpy(st->storage_split, split, sizeof split);
  st->nstorage = n;
  return sch_trace_step(st->sch, SCH_STEP_reorder_storage,
                        (sch_arg[]){{.stage = st}, {.iters = {n, dims}}});
}

te_status te_reorder_storage(te_stage *st, int n, te_iter *const dims[]) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_reorder_storage", reorder_storage_impl(st, n, dims));
}
