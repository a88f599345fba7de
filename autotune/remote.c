/* remote.c — the measuring side of a distributed tuning run (at.h, "measuring elsewhere").
 *
 * A measurer is what te_tune's own measuring is, without the search: the workload in its
 * context, the buffers filled from the same seed (so every measurer times the same values), the
 * default schedule's outputs as the reference, the measurement options. It builds each trace it
 * is given in a context of its own, freed after the measurement, so memory does not grow with
 * the number of candidates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/vulkan.h"
#include "target/target.h"
#include "te/runtime.h"
#include "tune_session.h"

struct at_measurer {
  at_workload wl;
  const char *target;
  at_bench *bench;
  at_measure_opts mo;
  int max_statements; /* te_tune_options.max_statements */
};

te_status at_measurer_new(te_ctx *ctx, int nout, te_tensor *const outs[], te_target *target,
                          const te_tune_options *opts, at_measurer **out) {
  *out = NULL;
  te_tune_options o;
  te_status st = at_tune_options_check(ctx, opts, &o);
  if (st != TE_OK)
    return st;
  at_measurer *m = ir_calloc(ctx, 1, sizeof *m);
  if (!m)
    return ir_error(ctx, TE_ERR_NOMEM, "te_tune: out of memory (measurer)");
  m->target = te_target_str(target);
  m->mo = at_tune_measure_opts(&o);
  m->max_statements = o.max_statements;
  st = at_workload_make(ctx, nout, outs, "te_tune", &m->wl);
  if (st == TE_OK && !(m->bench = at_bench_new(&m->wl, o.seed)))
    st = ir_error(ctx, TE_ERR_NOMEM, "te_tune: out of memory (buffers)");
  bool gpu = tg_is_gpu(target); /* as te_tune: the device must be here, the reference on the host */
  char message[512];
  if (st == TE_OK && gpu && (target->kind == TG_CUDA ? te_rt_cuda_started() : te_rt_vk_started()))
    st = ir_error(ctx, TE_ERR_UNSUPPORTED,
                  "te_tune: this measurer's process has already started the GPU driver, which "
                  "its forked children cannot use");
  if (st == TE_OK && gpu && at_device_probe(target, message) != TE_OK)
    st = ir_error(ctx, TE_ERR_RUNTIME, "te_tune: no %s device to measure '%s' candidates on: %s",
                  target->kind == TG_CUDA ? "CUDA" : "Vulkan", m->target, message);
  if (st == TE_OK && gpu)
    at_bench_set_device(m->bench, target->kind == TG_CUDA ? kDLCUDA : kDLVulkan);
  if (st == TE_OK) {
    at_result r;
    st = at_reference_set(&m->wl, gpu ? "llvm" : m->target, m->bench, at_reference_timeout_s(&o),
                          message, &r);
    if (st != TE_OK)
      ir_error(ctx, st, "te_tune: the default schedule does not build: %s", message);
  }
  if (st != TE_OK) {
    at_measurer_free(m);
    return st;
  }
  *out = m;
  return TE_OK;
}

void at_measurer_run(at_measurer *m, at_remote_job *rj) {
  memset(&rj->result, 0, sizeof rj->result);
  memset(&rj->job, 0, sizeof rj->job);
  rj->job.trace = rj->trace;
  at_compiled *c = at_compile_batch(&m->wl, m->target, 1, &rj->job, 1, m->max_statements);
  if (!c) {
    rj->job.status = TE_ERR_NOMEM;
    snprintf(rj->job.message, sizeof rj->job.message, "out of memory");
    return;
  }
  if (rj->job.status == TE_OK)
    at_bench_run(m->bench, rj->job.entry, rj->check && at_bench_has_reference(m->bench), &m->mo,
                 &rj->result);
  at_compiled_free(c);
  rj->job.mod = NULL;
  rj->job.entry = NULL;
}

void at_measurer_free(at_measurer *m) {
  if (!m)
    return;
  at_bench_free(m->bench);
  free(m);
}
