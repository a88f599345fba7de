/* placement.c — where a stage is computed: inline, at root, or at a consumer's loop; and the
 * dataflow rewrites live in dataflow.c and rfactor.c.
 *
 * compute_at records the attachment only; bound inference (bound.c) later computes the region
 * of the producer the consumer needs inside that loop, and ops_to_loops.c emits the producer's
 * loop nest there.
 */
#include <string.h>

#include "trace.h"

/* True when consumer reads an output of producer directly or through inlined stages. */
static bool reads_through_inline(te_schedule *s, sch_op *consumer, te_stage *producer, int depth) {
  if (depth > 1000)
    return false;
  te_tensor **in;
  int n = sch_op_inputs(consumer, &in);
  for (int i = 0; i < n; i++) {
    te_stage *st = sch_stage_of_tensor(s, in[i]);
    if (st == producer)
      return true;
    if (st && st->attach == SCH_ATTACH_INLINE &&
        reads_through_inline(s, st->op, producer, depth + 1))
      return true;
  }
  return false;
}

bool sch_stage_reads(te_stage *consumer, te_stage *producer) {
  return reads_through_inline(consumer->sch, consumer->op, producer, 0);
}

/* True when consumer depends on producer through any chain of stages. A scan reads itself,
   and its lifted reductions read it back: the stages seen are marked, so cycles end. */
static bool depends_on(te_schedule *s, te_stage *consumer, te_stage *producer, ir_map *seen) {
  te_tensor **in;
  int n = sch_op_inputs(consumer->op, &in);
  for (int i = 0; i < n; i++) {
    te_stage *st = sch_stage_of_tensor(s, in[i]);
    if (st == producer)
      return true;
    if (!st || ir_map_has(seen, st) || !ir_map_put(seen, st, st))
      continue;
    if (depends_on(s, st, producer, seen))
      return true;
  }
  return false;
}

bool sch_stage_depends_on(te_stage *a, te_stage *b) {
  ir_map *seen = ir_map_new(a->sch->ctx);
  return seen && depends_on(a->sch, a, b, seen);
}

static te_status compute_inline_impl(te_stage *st) {
  const char *fn = "te_compute_inline";
  if (!st)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = st->sch->ctx;
  if (st->is_output)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is an output of the schedule; outputs cannot be inlined", fn,
                    st->name);
  te_status ext = sch_extern_refuse(st, fn, "it cannot be inlined into its readers");
  if (ext != TE_OK)
    return ext;
  te_stage *er = sch_extern_reader(st);
  if (er)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is read by extern stage '%s', whose function is passed whole "
                    "tensors: its inputs are realized, never inlined",
                    fn, st->name, er->name);
  if (!sch_op_is_injective(st->op))
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is a %s; only injective stages can be inlined", fn, st->name,
                    st->op->is_scan ? "scan (it reads its own earlier steps)" : "reduction");
  for (int i = 0; i < st->sch->nstage; i++) {
    te_stage *o = st->sch->stages[i];
    if (o->attach == SCH_ATTACH_AT && o->attach_stage == st)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s' has stage '%s' computed at one of its loops", fn, st->name,
                      o->name);
  }
  st->attach = SCH_ATTACH_INLINE;
  st->fused_default = false;
  st->attach_stage = NULL;
  st->attach_iter = NULL;
  return sch_trace_step(st->sch, SCH_STEP_compute_inline, (sch_arg[]){{.stage = st}});
}

te_status te_compute_inline(te_stage *st) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_compute_inline", compute_inline_impl(st));
}

static te_status compute_root_impl(te_stage *st) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  st->attach = SCH_ATTACH_ROOT;
  st->fused_default = false;
  st->attach_stage = NULL;
  st->attach_iter = NULL;
  return sch_trace_step(st->sch, SCH_STEP_compute_root, (sch_arg[]){{.stage = st}});
}

te_status te_compute_root(te_stage *st) {
  if (!st)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(st->sch, "te_compute_root", compute_root_impl(st));
}

/* True when st is computed inside a loop of target (directly or through its attachments). */
static bool attached_within(te_stage *st, te_stage *target) {
  for (int depth = 0; st && depth < 1000; depth++) {
    if (st == target)
      return true;
    st = st->attach == SCH_ATTACH_AT ? st->attach_stage : NULL;
  }
  return false;
}

static te_status compute_at_impl(te_stage *producer, te_stage *consumer, te_iter *at) {
  const char *fn = "te_compute_at";
  te_ctx *ctx = producer->sch->ctx;
  if (producer->sch != consumer->sch)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stages '%s' and '%s' belong to different schedules",
                    fn, producer->name, consumer->name);
  if (!at)
    return ir_error_null(ctx, "%s: stage '%s': iter is NULL", fn, consumer->name);
  if (at->stage != consumer)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: iter '%s' belongs to stage '%s', not to consumer '%s'", fn, at->name,
                    at->stage->name, consumer->name);
  if (sch_leaf_pos(consumer, at) < 0)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': iter '%s' is not a leaf loop", fn,
                    consumer->name, at->name);
  if (producer == consumer)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s' cannot be computed at itself", fn,
                    producer->name);
  if (consumer->op->ext)
    return sch_extern_refuse(consumer, fn,
                             "no stage can be computed at its loops (compute its inputs at root "
                             "or at a loop of a stage around it)");
  if (producer->is_output)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is an output of the schedule; outputs are computed at root", fn,
                    producer->name);
  if (consumer->attach == SCH_ATTACH_INLINE)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: consumer '%s' is inlined and has no loops", fn,
                    consumer->name);
  if (!sch_stage_depends_on(consumer, producer))
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' does not read stage '%s' (directly or through other stages)",
                    fn, consumer->name, producer->name);
  te_stage *outside = sch_reader_outside(producer, consumer, sch_leaf_pos(consumer, at));
  if (outside)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' also reads '%s' and runs outside loop '%s' of '%s' (compute "
                    "'%s' inside that loop first, or inline it)",
                    fn, outside->name, producer->name, at->name, consumer->name, outside->name);
  if (attached_within(consumer, producer))
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s' is itself computed inside '%s'", fn,
                    consumer->name, producer->name);
  producer->attach = SCH_ATTACH_AT;
  producer->fused_default = false;
  producer->attach_stage = consumer;
  producer->attach_iter = at;
  return sch_trace_step(producer->sch, SCH_STEP_compute_at,
                        (sch_arg[]){{.stage = producer}, {.stage = consumer}, {.iter = at}});
}

te_status te_compute_at(te_stage *producer, te_stage *consumer, te_iter *at) {
  if (!producer || !consumer) {
    te_stage *some = producer ? producer : consumer;
    if (some)
      return ir_error_null(some->sch->ctx, "te_compute_at: %s stage is NULL",
                           producer ? "the consumer" : "the producer");
    return TE_ERR_INVALID_ARG;
  }
  return SCH_CALL(producer->sch, "te_compute_at", compute_at_impl(producer, consumer, at));
}

/* ---------------------------------------------------------------- lifted reductions */

te_stage *sch_only_reader(te_stage *st) {
  te_stage *found = NULL;
  for (int i = 0; i < st->sch->nstage; i++) {
    te_stage *r = st->sch->stages[i];
    if (r == st || r->attach == SCH_ATTACH_INLINE || !sch_stage_reads(r, st))
      continue;
    if (found)
      return NULL;
    found = r;
  }
  return found;
}

/* A lifted reduction is computed where its value is used: inside the innermost loop of its
   reader that is not vectorized (a vector loop's lanes need the whole tile of the reduction,
   so it is computed just outside). A reader with no such loop, or several readers (after
   te_cache_read of the reduction, say), leave it at root. Readers are taken in topological
   order from the outputs, so a nested reduction is placed in the lifted stage reading it, once
   that is placed itself. */
void sch_place_lifted(te_schedule *s) {
  for (int i = s->nstage - 1; i >= 0; i--) {
    te_stage *st = s->stages[i];
    if (!st->fused_default || st->attach != SCH_ATTACH_ROOT || st->is_output)
      continue;
    te_stage *r = sch_only_reader(st);
    int at = r ? r->nleaf - 1 : -1;
    while (at >= 0 && r->leaf[at]->kind == IR_FOR_VECTORIZED)
      at--;
    if (at < 0)
      continue;
    st->attach = SCH_ATTACH_AT;
    st->attach_stage = r;
    st->attach_iter = r->leaf[at];
  }
}

void sch_unplace_lifted(te_schedule *s) {
  for (int i = 0; i < s->nstage; i++) {
    te_stage *st = s->stages[i];
    if (!st->fused_default)
      continue;
    st->attach = SCH_ATTACH_ROOT;
    st->attach_stage = NULL;
    st->attach_iter = NULL;
  }
}
