/* lower_util.h — a lowering pass context over argument buffers, for the unit tests that run
 * passes on hand-built statements (test_lower.c, test_vectorize.c). */
#ifndef TE_TEST_LOWER_UTIL_H
#define TE_TEST_LOWER_UTIL_H

#include "lower/lower.h"

/* A pass context whose function takes one buffer per tensor (in order) and the given sizes. */
static inline lw_pass_ctx lu_make_pass(te_ctx *ctx, int nt, te_tensor *const ts[], int nsizes,
                                       te_expr *const sizes[]) {
  lw_func *f = ir_alloc(ctx, sizeof *f);
  f->name = "k";
  f->nargs = nt;
  f->args = ir_alloc(ctx, sizeof(lw_arg) * (size_t)(nt + 1));
  f->nsizes = nsizes;
  f->size_vars = (te_expr **)sizes;
  lw_pass_ctx p = {.ctx = ctx, .func = f, .tensor_buffers = ir_map_new(ctx), .api = "test"};
  for (int i = 0; i < nt; i++) {
    ir_buffer *b = ir_buffer_new(ctx, ts[i]->name, ts[i]->dtype, ts[i]->ndim, ts[i]->shape,
                                 TE_SCOPE_GLOBAL, ts[i], i);
    f->args[i].is_buffer = true;
    f->args[i].buffer = b;
    ir_map_put(p.tensor_buffers, ts[i], b);
  }
  p.an = lw_analyzer_new(&p);
  return p;
}

#endif
