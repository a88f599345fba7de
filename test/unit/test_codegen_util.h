/* test_codegen_util.h — helpers for the codegen unit tests: hand-built lowered functions
 * (lw_func) and DLTensors, without the schedule or the lowering pipeline. Included by the
 * test_codegen*.c files only; everything is static.
 */
#ifndef TE_TEST_CODEGEN_UTIL_H
#define TE_TEST_CODEGEN_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"

static te_ctx *ctx;
static te_target *host;

static inline void cg_setup(void) {
  ctx = te_ctx_new();
  host = te_target_parse(ctx, "llvm");
  cr_assert_not_null(host, "%s", te_last_error(ctx));
}
static inline void cg_teardown(void) { te_ctx_free(ctx); }

#define I64(v) ir_i64(ctx, (v))
#define F32(v) ir_float(ctx, TE_F32, (v))

static inline ir_buffer *arg_buf(const char *name, te_dtype t, int ndim, te_expr *const shape[],
                                 int i) {
  ir_buffer *b = ir_buffer_new(ctx, name, t, ndim, shape, TE_SCOPE_GLOBAL, NULL, i);
  cr_assert_not_null(b, "%s", te_last_error(ctx));
  return b;
}

static inline lw_arg buf_arg(ir_buffer *b) { return (lw_arg){.is_buffer = true, .buffer = b}; }
static inline lw_arg scalar_arg(te_expr *v) { return (lw_arg){.is_buffer = false, .var = v}; }

static inline lw_func *make_func(const char *name, int nargs, const lw_arg *args, ir_stmt *body) {
  cr_assert_not_null(body, "body: %s", te_last_error(ctx));
  lw_func *f = ir_alloc(ctx, sizeof *f);
  f->name = name;
  f->nargs = nargs;
  f->args = ir_alloc(ctx, sizeof *f->args * (size_t)nargs);
  memcpy(f->args, args, sizeof *args * (size_t)nargs);
  f->body = body;
  f->trace = "";
  return f;
}

/* Adds symbolic size var, read from argument arg, dimension dim. */
static inline void add_size(lw_func *f, te_expr *var, int arg, int dim) {
  int n = f->nsizes + 1;
  te_expr **vars = ir_alloc(ctx, sizeof *vars * (size_t)n);
  int *a = ir_alloc(ctx, sizeof(int) * (size_t)n), *d = ir_alloc(ctx, sizeof(int) * (size_t)n);
  for (int i = 0; i < f->nsizes; i++)
    vars[i] = f->size_vars[i], a[i] = f->size_arg[i], d[i] = f->size_dim[i];
  vars[n - 1] = var, a[n - 1] = arg, d[n - 1] = dim;
  f->size_vars = vars, f->size_arg = a, f->size_dim = d, f->nsizes = n;
}

/* f with its calling convention (make_closures, make_entry), as lowering ends: what code
   generation translates. */
static inline lw_func *entered(te_target *t, lw_func *f) {
  te_status st = lw_run_abi_passes(ctx, f, t);
  cr_assert_eq(st, TE_OK, "entry: %s: %s", te_status_str(st), te_last_error(ctx));
  return f;
}

static inline te_module *compile_for(te_target *t, lw_func *f) {
  te_module *m = cg_module_new(ctx, t);
  cr_assert_not_null(m);
  te_status st = cg_llvm_compile(m, entered(t, f));
  cr_assert_eq(st, TE_OK, "compile: %s: %s", te_status_str(st), te_last_error(ctx));
  return m;
}
static inline te_module *compile(lw_func *f) { return compile_for(host, f); }

/* A DLTensor over data (CPU, compact). */
typedef struct tens {
  DLTensor t;
  int64_t shape[4];
} tens;

static inline void tens_init(tens *x, void *data, te_dtype dt, int ndim, const int64_t *shape) {
  memset(x, 0, sizeof *x);
  for (int i = 0; i < ndim; i++)
    x->shape[i] = shape[i];
  x->t.data = data;
  x->t.device = (DLDevice){kDLCPU, 0};
  x->t.ndim = ndim;
  x->t.dtype = dt;
  x->t.shape = x->shape;
  x->t.strides = NULL;
  x->t.byte_offset = 0;
}

/* Expects the call to fail with st and a message containing sub. */
static inline void expect_call_error(te_module *m, const char *name, int nt, DLTensor *const ts[],
                                     int ns, const void *const ss[], te_status st,
                                     const char *sub) {
  te_clear_error(ctx);
  te_status got = te_module_call(m, name, nt, ts, ns, ss);
  cr_expect_eq(got, st, "expected %s, got %s: %s", te_status_str(st), te_status_str(got),
               te_last_error(ctx));
  cr_expect(strstr(te_last_error(ctx), sub) != NULL, "message '%s' lacks '%s'", te_last_error(ctx),
            sub);
  te_clear_error(ctx);
}

#endif
