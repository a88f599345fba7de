/* gpu_print.c — the printed form of a GPU module (gpu.h), what te_lower_text shows for
 * a cuda or vulkan target:
 *
 *     func NAME(A: f32[n], B: f32[n], C: f32[n]) {
 *       launch NAME_kernel0 grid((n + 63)//64, 1, 1) block(64, 1, 1)
 *     }
 *     kernel NAME_kernel0(A: f32[n] read, B: f32[n] read, C: f32[n] write, n: i64) {
 *       shared A_shared[f32 * 256]
 *       <the body of one thread>
 *     }
 *
 * Host temporaries appear as `alloc T[f32 * count]` / `free T` steps around the launches.
 */
#include <stdlib.h>

#include "gpu.h"

static void print_param(ir_str *s, const lw_gpu_param *p) {
  char dt[32];
  if (p->kind != LW_GPU_PARAM_BUFFER) {
    ir_str_printf(s, "%s: %s%s", p->var->u.var.name, ir_dtype_name(p->var->dtype, dt, sizeof dt),
                  p->kind == LW_GPU_PARAM_SIZE ? " size" : "");
    return;
  }
  const ir_buffer *b = p->buffer;
  ir_str_printf(s, "%s: %s[", b->name, ir_dtype_name(b->dtype, dt, sizeof dt));
  for (int d = 0; d < b->ndim; d++) {
    if (d)
      ir_str_puts(s, ", ");
    ir_print_expr(s, b->shape[d]);
  }
  ir_str_printf(s, "]%s%s", p->read ? " read" : "", p->written ? " write" : "");
}

static void print_dims(ir_str *s, const char *what, te_expr *const d[3]) {
  ir_str_printf(s, " %s(", what);
  for (int i = 0; i < 3; i++) {
    if (i)
      ir_str_puts(s, ", ");
    ir_print_expr(s, d[i]);
  }
  ir_str_puts(s, ")");
}

static void print_allocs(ir_str *s, const char *scope, int n, const lw_gpu_alloc *a) {
  char dt[32];
  for (int i = 0; i < n; i++)
    ir_str_printf(s, "  %s %s[%s * %lld]\n", scope, a[i].buffer->name,
                  ir_dtype_name(a[i].buffer->dtype, dt, sizeof dt), (long long)a[i].count);
}

static void print_kernel(ir_str *s, const lw_gpu_kernel *k) {
  ir_str_printf(s, "kernel %s(", k->name);
  for (int i = 0; i < k->nparams; i++) {
    if (i)
      ir_str_puts(s, ", ");
    print_param(s, &k->params[i]);
  }
  ir_str_puts(s, ")");
  print_dims(s, "grid", k->grid);
  print_dims(s, "block", k->block);
  ir_str_puts(s, " {\n");
  print_allocs(s, "shared", k->nshared, k->shared);
  print_allocs(s, "local", k->nlocal, k->local);
  if (k->body)
    ir_print_stmt(s, k->body, 1);
  ir_str_puts(s, "}\n");
}

static void print_host(ir_str *s, const lw_func *f, const lw_gpu_module *m) {
  char dt[32];
  ir_str_printf(s, "func %s(", f->name);
  for (int i = 0; i < f->nargs; i++) {
    if (i)
      ir_str_puts(s, ", ");
    lw_gpu_param p = {f->args[i].is_buffer ? LW_GPU_PARAM_BUFFER : LW_GPU_PARAM_SCALAR,
                      f->args[i].buffer, f->args[i].var, false, false};
    print_param(s, &p);
  }
  ir_str_puts(s, ") {\n");
  for (int i = 0; i < m->nsteps; i++) {
    const lw_gpu_step *st = &m->steps[i];
    if (st->kind == LW_GPU_STEP_ALLOC) {
      ir_str_printf(s, "  alloc %s[%s * ", st->buffer->name,
                    ir_dtype_name(st->buffer->dtype, dt, sizeof dt));
      ir_print_expr(s, st->count);
      ir_str_puts(s, "]\n");
    } else if (st->kind == LW_GPU_STEP_FREE) {
      ir_str_printf(s, "  free %s\n", st->buffer->name);
    } else {
      const lw_gpu_kernel *k = &m->kernels[st->kernel];
      ir_str_printf(s, "  launch %s", k->name);
      print_dims(s, "grid", k->grid);
      print_dims(s, "block", k->block);
      ir_str_puts(s, "\n");
    }
  }
  ir_str_puts(s, "}\n");
}

char *lw_gpu_module_to_string(te_ctx *ctx, const lw_func *f, const lw_gpu_module *m) {
  if (!f || !m)
    return NULL;
  ir_str s = {.ctx = ctx};
  print_host(&s, f, m);
  for (int i = 0; i < m->nkernels; i++)
    print_kernel(&s, &m->kernels[i]);
  if (s.oom) {
    ir_str_free(&s);
    return NULL;
  }
  return ir_str_take(&s);
}
