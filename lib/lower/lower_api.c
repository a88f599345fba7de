/* lower_api.c — te_lower_text and the printed form of a lowered function.
 *
 *     func NAME(A: f32[M, 64], B: f32[64, N], alpha: f32) {
 *       <body, as the IR printer writes statements>
 *     }
 *
 * te_lower_text lowers in a scratch arena of its own and returns malloc'd text (te_free), so
 * printing the IR of a schedule leaves nothing behind in the context. The function it prints is
 * called "main". It shows the computation: the pipeline up to simplify_final, before the
 * calling-convention passes (make_closures, make_entry: the entry's checks and closures, which
 * only te_build needs). TE_STOP_AFTER=<pass> stops its pipeline at any pass (make_entry shows
 * the whole entry); te_build ignores it (code generation needs the whole pipeline).
 */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "lower.h"
#include "schedule/sch.h"

static void print_arg(ir_str *s, const lw_arg *a) {
  char dt[32];
  if (!a->is_buffer) {
    ir_str_printf(s, "%s: %s", a->var->u.var.name, ir_dtype_name(a->var->dtype, dt, sizeof dt));
    return;
  }
  const ir_buffer *b = a->buffer;
  ir_str_printf(s, "%s: %s[", b->name, ir_dtype_name(b->dtype, dt, sizeof dt));
  for (int d = 0; d < b->ndim; d++) {
    if (d)
      ir_str_puts(s, ", ");
    ir_print_expr(s, b->shape[d]);
  }
  ir_str_puts(s, "]");
  for (int d = 0; b->strides && d < b->ndim; d++) { /* a strided tensor's declared layout */
    ir_str_puts(s, d ? ", " : " strides [");
    ir_print_expr(s, b->strides[d]);
    ir_str_puts(s, d == b->ndim - 1 ? "]" : "");
  }
}

char *lw_func_to_string(te_ctx *ctx, const lw_func *f) {
  if (!f)
    return NULL;
  if (f->gpu) /* a GPU target: the host steps and the kernels */
    return lw_gpu_module_to_string(ctx, f, f->gpu);
  ir_str s = {.ctx = ctx};
  ir_str_printf(&s, "func %s(", f->name);
  for (int i = 0; i < f->nargs; i++) {
    if (i)
      ir_str_puts(&s, ", ");
    print_arg(&s, &f->args[i]);
  }
  ir_str_puts(&s, ") {\n");
  if (f->body)
    ir_print_stmt(&s, f->body, 1);
  ir_str_puts(&s, "}\n");
  if (s.oom) {
    ir_str_free(&s);
    return NULL;
  }
  return ir_str_take(&s);
}

char *lw_lower_text(te_schedule *sch, const char *api, const char *name, int ntensors,
                    te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                    const char *stop_after) {
  return lw_lower_text_for(sch, NULL, api, name, ntensors, tensors, nscalars, scalars, stop_after);
}

char *lw_lower_text_for(te_schedule *sch, const struct te_target *target, const char *api,
                        const char *name, int ntensors, te_tensor *const tensors[], int nscalars,
                        te_expr *const scalars[], const char *stop_after) {
  if (!sch)
    return NULL;
  te_ctx *ctx = sch->ctx;
  if (!stop_after) /* the computation, without the entry's checks (TE_STOP_AFTER shows them) */
    stop_after = lw_last_compute_pass();
  ir_call_begin(ctx);
  ir_scratch_begin(ctx);
  lw_func *f = NULL;
  char *text = NULL;
  if (lw_lower_until(sch, api, name, ntensors, tensors, nscalars, scalars, target, stop_after,
                     &f) == TE_OK) {
    text = lw_func_to_string(ctx, f);
    if (!text)
      ir_error(ctx, TE_ERR_NOMEM, "%s: out of memory printing the IR", api);
  }
  ir_scratch_end(ctx);
  return ir_call_end_ptr(ctx, text);
}

char *te_lower_text(te_schedule *sch, int ntensors, te_tensor *const tensors[], int nscalars,
                    te_expr *const scalars[]) {
  const char *stop = getenv("TE_STOP_AFTER");
  if (stop && !*stop)
    stop = NULL;
  return lw_lower_text(sch, "te_lower_text", "main", ntensors, tensors, nscalars, scalars, stop);
}

char *te_lower_text_for(te_schedule *sch, te_target *target, int ntensors,
                        te_tensor *const tensors[], int nscalars, te_expr *const scalars[]) {
  if (sch && target && target->ctx != sch->ctx) {
    ir_error(sch->ctx, TE_ERR_INVALID_ARG,
             "te_lower_text_for: the target belongs to another context");
    return NULL;
  }
  const char *stop = getenv("TE_STOP_AFTER");
  if (stop && !*stop)
    stop = NULL;
  return lw_lower_text_for(sch, target, "te_lower_text", "main", ntensors, tensors, nscalars,
                           scalars, stop);
}
