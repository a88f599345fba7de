/* gen.c — the downstream kernel library's generator: gen <dir/name> <target> d_scale */
#include <stdio.h>

#include "kernel.h"

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  te_ctx *ctx = te_ctx_new();
  te_module *m = NULL;
  if (d_build(ctx, argv[3], argv[2], &m) != TE_OK ||
      te_module_save(m, argv[1], TE_SAVE_STATIC_LIB | TE_SAVE_HEADER) != TE_OK) {
    fprintf(stderr, "gen: %s\n", te_last_error(ctx));
    return 1;
  }
  te_ctx_free(ctx);
  return 0;
}
