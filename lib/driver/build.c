/* build.c — te_build: schedule -> lowered function -> compiled module.
 *
 * The driver layer (lib/driver/): the one place that runs the lowering (lib/lower) and then a back
 * end (lib/codegen), as Halide's Pipeline and TVM's driver do, so that neither of the two calls
 * the other.
 *
 * The whole build runs inside one scratch arena (ir_scratch_begin/end): everything lowering and
 * code generation make is released when the build ends, so a tuner building thousands of
 * candidates in one context does not grow. What the module keeps (kernel names, dtypes, the
 * trace, the LLVM IR text) is copied out by cg_llvm_compile before the arena ends.
 */
#include <string.h>

#include "codegen/codegen.h"
#include "driver.h"
#include "lower/lower.h"
#include "schedule/sch.h"

static bool is_identifier(const char *s) {
  if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

static te_status check_build(te_ctx *ctx, te_schedule *sch, const char *name, te_target *t,
                             te_module **out) {
  if (!sch)
    return ir_error_null(ctx, "te_build: schedule is NULL");
  if (!t)
    return ir_error_null(ctx, "te_build: target is NULL");
  if (!out)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_build: out is NULL");
  if (!name)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_build: kernel name is NULL");
  if (!is_identifier(name))
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_build: kernel name '%s' is not a C identifier",
                    name);
  if (cg_is_reserved_symbol(name))
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_build: kernel name '%s' is the name of a function kernels call (libm, "
                    "libc or te's runtime); choose another name",
                    name);
  if (strlen(name) > 200)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_build: kernel name '%.20s...' is too long "
                    "(at most 200 characters)",
                    name);
  if (t->ctx != ctx)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_build: kernel '%s': the target belongs to another context", name);
  if (t->kind != TG_LLVM && t->kind != TG_VULKAN && t->kind != TG_CUDA)
    return ir_error(ctx, TE_ERR_TARGET,
                    "te_build: kernel '%s': target '%s' cannot be built by "
                    "this version",
                    name, t->str);
  return TE_OK;
}

static te_status build_impl(te_schedule *sch, const char *name, int ntensors,
                            te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                            te_target *target, const dr_size_limit *limit, te_module **out) {
  if (out)
    *out = NULL;
  te_ctx *ctx = sch ? sch->ctx : target ? target->ctx : NULL;
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  te_status st = check_build(ctx, sch, name, target, out);
  if (st != TE_OK)
    return st;
  te_module *m = cg_module_new(ctx, target);
  if (!m)
    return TE_ERR_NOMEM;

  ir_scratch_begin(ctx);
  double t0 = cg_now();
  lw_func *f = NULL;
  st = lw_lower(sch, name, ntensors, tensors, nscalars, scalars, target, &f);
  m->times.lower_s = cg_now() - t0;
  int64_t size = st == TE_OK && limit ? lw_code_size(f->body) : 0;
  if (st == TE_OK && limit && size > limit->max)
    st = ir_error(ctx, TE_ERR_SCHEDULE,
                  "%s: kernel '%s': %lld statements after unrolling, over %s %lld (%s; a "
                  "vector store counts one per 256 bits)",
                  limit->api, name, (long long)size, limit->whose, (long long)limit->max,
                  limit->hint);
  if (st == TE_OK)
    st = target->kind == TG_VULKAN ? cg_vulkan_compile(m, f)
         : target->kind == TG_CUDA ? cg_cuda_compile(m, f)
                                   : cg_llvm_compile(m, f);
  if (m->kernels)
    m->kernels[0].func = NULL; /* it lived in the scratch arena */
  ir_scratch_end(ctx);

  if (st == TE_OK)
    *out = m;
  return st;
}

te_status te_build(te_schedule *sch, const char *name, int ntensors, te_tensor *const tensors[],
                   int nscalars, te_expr *const scalars[], te_target *target, te_module **out) {
  te_ctx *ctx = sch ? sch->ctx : target ? target->ctx : NULL;
  return IR_PUBLIC_CALL(
      ctx, build_impl(sch, name, ntensors, tensors, nscalars, scalars, target, NULL, out));
}

te_status dr_build_bounded(te_schedule *sch, const char *name, int ntensors,
                           te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                           te_target *target, const dr_size_limit *limit, te_module **out) {
  te_ctx *ctx = sch ? sch->ctx : target ? target->ctx : NULL;
  return IR_PUBLIC_CALL(
      ctx, build_impl(sch, name, ntensors, tensors, nscalars, scalars, target, limit, out));
}
