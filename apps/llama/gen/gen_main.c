/* gen_main.c — te-llama's kernel generator (te_add_kernel_library runs it at build time):
 *
 *   tl_gen <dir/name> "<target string>" [<kernel>...]
 *
 * builds the named kernels (all of them when none is named) for the target and writes them
 * into dir/libname.a and dir/name.h (and dir/name.s, to read) with te_modules_save. Exit status
 * 0 on success, 1 with te's message on stderr, 2 for a wrong command line. */
#include "gen.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  tl_gen_fn build;
} kernels[] = {
    {"tl_matvec", tl_gen_matvec},
    {"tl_matvec_add", tl_gen_matvec_add},
    {"tl_matvec_swiglu", tl_gen_matvec_swiglu},
    {"tl_matmul", tl_gen_matmul},
    {"tl_matmul_add", tl_gen_matmul_add},
    {"tl_matmul_swiglu", tl_gen_matmul_swiglu},
    {"tl_bf16_matvec", tl_gen_bf16_matvec},
    {"tl_bf16_matvec_add", tl_gen_bf16_matvec_add},
    {"tl_bf16_matvec_swiglu", tl_gen_bf16_matvec_swiglu},
    {"tl_bf16_matmul", tl_gen_bf16_matmul},
    {"tl_bf16_matmul_add", tl_gen_bf16_matmul_add},
    {"tl_bf16_matmul_swiglu", tl_gen_bf16_matmul_swiglu},
    {"tl_rmsnorm", tl_gen_rmsnorm},
    {"tl_rope", tl_gen_rope},
    {"tl_attention", tl_gen_attention},
    {"tl_quantize_g64", tl_gen_quantize_g64},
    {"tl_quantize_g32", tl_gen_quantize_g32},
    {"tl_quantize_g16", tl_gen_quantize_g16},
    {"tl_quantize_g8", tl_gen_quantize_g8},
    {"tl_q8_matmul_g64", tl_gen_q8_matmul_g64},
    {"tl_q8_matmul_g32", tl_gen_q8_matmul_g32},
    {"tl_q8_matmul_g16", tl_gen_q8_matmul_g16},
    {"tl_q8_matmul_g8", tl_gen_q8_matmul_g8},
    {"tl_q8_matvec_g64", tl_gen_q8_matvec_g64},
    {"tl_q8_matvec_g32", tl_gen_q8_matvec_g32},
    {"tl_q8_matvec_g16", tl_gen_q8_matvec_g16},
    {"tl_q8_matvec_g8", tl_gen_q8_matvec_g8},
    {"tl_q8_matmul_add_g64", tl_gen_q8_matmul_add_g64},
    {"tl_q8_matmul_add_g32", tl_gen_q8_matmul_add_g32},
    {"tl_q8_matmul_add_g16", tl_gen_q8_matmul_add_g16},
    {"tl_q8_matmul_add_g8", tl_gen_q8_matmul_add_g8},
    {"tl_q8_matvec_add_g64", tl_gen_q8_matvec_add_g64},
    {"tl_q8_matvec_add_g32", tl_gen_q8_matvec_add_g32},
    {"tl_q8_matvec_add_g16", tl_gen_q8_matvec_add_g16},
    {"tl_q8_matvec_add_g8", tl_gen_q8_matvec_add_g8},
    {"tl_swiglu", tl_gen_swiglu},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

static int find(const char *name) {
  for (int k = 0; k < NKERNELS; k++)
    if (!strcmp(name, kernels[k].name))
      return k;
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tl_gen <dir/name> <target> [<kernel>...]\n");
    return 2;
  }
  te_ctx *ctx = te_ctx_new();
  te_target *t = te_target_parse(ctx, argv[2]);
  te_module *mods[NKERNELS];
  int n = 0, rc = 0;
  if (!t) {
    fprintf(stderr, "tl_gen: target '%s': %s\n", argv[2], te_last_error(ctx));
    te_ctx_free(ctx);
    return 1;
  }
  int nwanted = argc > 3 ? argc - 3 : NKERNELS;
  for (int a = 0; a < nwanted && rc == 0; a++) {
    int k = argc > 3 ? find(argv[3 + a]) : a;
    if (k < 0) {
      fprintf(stderr, "tl_gen: unknown kernel '%s'\n", argv[3 + a]);
      rc = 2;
    } else if (kernels[k].build(ctx, t, &mods[n]) != TE_OK) {
      fprintf(stderr, "tl_gen: %s: %s (%s)\n", kernels[k].name, te_last_error(ctx),
              te_status_str(te_last_status(ctx)));
      rc = 1;
    } else {
      n++;
    }
  }
  if (rc == 0 && te_modules_save(ctx, n, mods, argv[1],
                                 TE_SAVE_STATIC_LIB | TE_SAVE_HEADER | TE_SAVE_ASM) != TE_OK) {
    fprintf(stderr, "tl_gen: saving %s: %s\n", argv[1], te_last_error(ctx));
    rc = 1;
  }
  te_ctx_free(ctx);
  return rc;
}
