/* lower.c — lw_lower: checks the arguments, makes the lowered function's signature, runs the
 * pipeline (pipeline.c) from the schedule to loop IR ready for code generation.
 *
 * Everything made here lives in the caller's scratch arena (ir_scratch_begin): a tuner that
 * lowers thousands of candidates in one context releases each build's nodes when it ends.
 * A schedule that an earlier call left half changed (sch_check_usable) is refused; an error of an
 * earlier, unrelated call is not this build's business (core.h).
 */
#include "lower.h"
#include "schedule/sch.h"

/* A GPU target copies compact buffers (Vulkan) or indexes device memory as compact (CUDA): a
   strided placeholder is for CPU kernels only. */
static te_status refuse_strided_on_gpu(const lw_func *f, const char *api,
                                       const struct te_target *target) {
  if (!target || !tg_is_gpu(target))
    return TE_OK;
  for (int i = 0; i < f->nargs; i++)
    if (f->args[i].is_buffer && f->args[i].buffer->strides)
      return ir_error(f->args[i].buffer->tensor->ctx, TE_ERR_UNSUPPORTED,
                      "%s: tensor '%s' is strided (te_placeholder_strided); strided tensors are "
                      "supported by CPU targets only",
                      api, f->args[i].buffer->name);
  return TE_OK;
}

/* A GPU kernel cannot call a host function from device code, and te does not split a kernel
   around one: extern stages are for CPU kernels only. */
static te_status refuse_extern_on_gpu(te_schedule *sch, const char *api,
                                      const struct te_target *target) {
  if (!target || !tg_is_gpu(target))
    return TE_OK;
  for (int i = 0; i < sch->nstage; i++)
    if (sch->stages[i]->op->ext)
      return ir_error(sch->ctx, TE_ERR_UNSUPPORTED,
                      "%s: stage '%s' is an extern stage (te_extern); extern stages are supported "
                      "by CPU targets only, not by '%s'",
                      api, sch->stages[i]->name, te_target_short_str((te_target *)target));
  return TE_OK;
}

te_status lw_lower_until(te_schedule *sch, const char *api, const char *name, int ntensors,
                         te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                         const struct te_target *target, const char *stop_after, lw_func **out) {
  if (out)
    *out = NULL;
  if (!sch)
    return TE_ERR_INVALID_ARG; /* no context to hold a message */
  te_ctx *ctx = sch->ctx;
  te_status st = sch_check_usable(sch, api);
  if (st != TE_OK)
    return st;
  if (!out)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: out is NULL", api);
  lw_func *f = NULL;
  ir_map *tb = NULL;
  st = lw_make_signature(sch, api, name, ntensors, tensors, nscalars, scalars, &f, &tb);
  if (st != TE_OK)
    return st;
  if ((st = refuse_strided_on_gpu(f, api, target)) != TE_OK ||
      (st = refuse_extern_on_gpu(sch, api, target)) != TE_OK)
    return st;
  lw_pass_ctx p = {
      .ctx = ctx, .func = f, .tensor_buffers = tb, .target = target, .sch = sch, .api = api};
  p.an = lw_analyzer_new(&p);
  if (!p.an)
    return te_last_status(ctx);
  st = sch->nspecial ? lw_run_specialized(&p, stop_after) : lw_run_pipeline(&p, stop_after);
  if (st != TE_OK)
    return st;
  *out = f;
  return TE_OK;
}

te_status lw_lower(te_schedule *sch, const char *name, int ntensors, te_tensor *const tensors[],
                   int nscalars, te_expr *const scalars[], const struct te_target *target,
                   lw_func **out) {
  return lw_lower_until(sch, "te_build", name, ntensors, tensors, nscalars, scalars, target, NULL,
                        out);
}
