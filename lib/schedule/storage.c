/* storage.c — how a stage's buffer is laid out: te_reorder_storage.
 *
 * The schedule records a permutation of the stage's data axes; ops_to_loops.c puts it on the
 * stage's REALIZE and storage_flatten.c lays the buffer out in that order. Loops are untouched:
 * only which elements are neighbours in memory changes, which is what makes a vector along a
 * non-last axis contiguous (a local accumulator vectorized over channels, a weight block copied
 * by te_cache_read so that its channel axis is the contiguous one).
 */
#include <string.h>

#include "trace.h"

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
  if (n != op->ndim)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': %d dims given but the stage has %d data axes (list each "
                    "once)",
                    fn, st->name, n, op->ndim);
  int8_t order[TE_MAX_DIMS];
  bool seen[TE_MAX_DIMS] = {false};
  for (int k = 0; k < n; k++) {
    if (!dims[k])
      return ir_error_null(ctx, "%s: stage '%s': dims[%d] is NULL", fn, st->name, k);
    int d = -1;
    for (int a = 0; a < op->ndim && d < 0; a++)
      if (st->root[a] == dims[k])
        d = a;
    if (d < 0)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s': '%s' is not one of its data axes (give te_axis(stage, i), "
                      "not a split, fused or reduce iter)",
                      fn, st->name, dims[k]->name);
    if (seen[d])
      return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': axis '%s' is given twice", fn,
                      st->name, dims[k]->name);
    seen[d] = true;
    order[k] = (int8_t)d;
  }
  memcpy(st->storage, order, (size_t)n);
  st->nstorage = n;
  return sch_trace_step(st->sch, SCH_STEP_reorder_storage,
                        (sch_arg[]){{.stage = st}, {.iters = {n, dims}}});
}

te_status te_reorder_storage(te_stage *st, int n, te_iter *const dims[]) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_reorder_storage", reorder_storage_impl(st, n, dims));
}
