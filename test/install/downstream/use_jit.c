/* use_jit.c — an installed libte: build the kernel at run time and call it. */
#include <stdio.h>

#include "kernel.h"

int main(void) {
  te_ctx *ctx = te_ctx_new();
  te_module *m = NULL;
  float x[5] = {1, 2, 3, 4, 5}, y[5] = {0}, s = 2.0f;
  int64_t shape[1] = {5};
  DLTensor tx = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0}, ty = tx;
  ty.data = y;
  if (d_build(ctx, "d_scale", "llvm", &m) != TE_OK ||
      te_module_call(m, "d_scale", 2, (DLTensor *const[]){&tx, &ty}, 1,
                     (const void *const[]){&s}) != TE_OK) {
    fprintf(stderr, "use_jit: %s\n", te_last_error(ctx));
    return 1;
  }
  for (int i = 0; i < 5; i++)
    if (y[i] != x[i] * 2 + 1)
      return 1;
  printf("te %s JIT ok (y[4] = %g)\n", TE_VERSION_STRING, y[4]);
  te_ctx_free(ctx);
  return 0;
}
