/* gen_kernels.c — the generator of the kernel_library example: defines, schedules and saves
 * kernels with te's C API, at build time (te_add_kernel_library runs it).
 *
 *   gen_kernels <dir/name> "<target string>" <kernel>...
 *
 * builds each kernel named on the command line for the target and writes them all, with
 * te_modules_save, into dir/libname.a and dir/name.h (plus dir/name.s, to read). The kernels:
 *   kl_saxpy      Z[i] = alpha * X[i] + Y[i]           n symbolic; parallel, vectorized
 *   kl_matmul     C[i, j] = sum_k A[i, k] * B[k, j]    A: m x 64, B: 64 x 32; tiled, parallel
 *   kl_relu       Y[i] = max(X[i], 0)                  n symbolic
 *   kl_bias_relu  Y[i, j] = max(X[i, j] + b[j], 0)     X: m x 32
 * Exit status 0 on success, 1 with te's message on stderr otherwise.
 */
#include <te/te.h>

#include <stdio.h>
#include <string.h>

static te_ctx *ctx;

static int fail(const char *what) {
  fprintf(stderr, "gen_kernels: %s: %s (%s)\n", what, te_last_error(ctx),
          te_status_str(te_last_status(ctx)));
  return 1;
}

static te_status saxpy(te_target *t, te_module **out) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_expr *alpha = te_param(ctx, "alpha", TE_F32);
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 1, TE_EXPRS(n));
  te_tensor *y = te_placeholder(ctx, "Y", TE_F32, 1, TE_EXPRS(n));
  te_tensor *z = te_compute(ctx, "Z", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_add(te_mul(alpha, TE_AT(x, i)), TE_AT(y, i)));
  te_schedule *s = te_schedule_new(ctx, 1, &z);
  te_stage *st = te_stage_of(s, z);
  te_iter *o, *in;
  te_status r = te_split(st, te_axis(st, 0), 16, &o, &in);
  if (r == TE_OK)
    r = te_parallel(st, o);
  if (r == TE_OK)
    r = te_vectorize(st, in);
  if (r != TE_OK)
    return r;
  return te_build(s, "kl_saxpy", 3, (te_tensor *const[]){x, y, z}, 1, &alpha, t, out);
}

static te_status matmul(te_target *t, te_module **out) {
  te_expr *m = te_var(ctx, "m"), *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, 64));
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(m, te_int(ctx, 64)));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(te_int(ctx, 64), te_int(ctx, 32)));
  te_tensor *c = te_compute(ctx, "C", 2, TE_EXPRS(m, te_int(ctx, 32)), TE_EXPRS(i, j),
                            TE_SUM(te_mul(TE_AT(a, i, k), TE_AT(b, k, j)), k));
  te_schedule *s = te_schedule_new(ctx, 1, &c);
  te_stage *st = te_stage_of(s, c);
  te_iter *io, *jo, *ii, *ji;
  te_status r = te_tile(st, te_axis(st, 0), te_axis(st, 1), 8, 16, &io, &jo, &ii, &ji);
  if (r == TE_OK)
    r = te_reorder(st, 5, (te_iter *const[]){io, jo, te_reduce_iter(st, 0), ii, ji});
  if (r == TE_OK)
    r = te_parallel(st, io);
  if (r == TE_OK)
    r = te_vectorize(st, ji);
  if (r != TE_OK)
    return r;
  return te_build(s, "kl_matmul", 3, (te_tensor *const[]){a, b, c}, 0, NULL, t, out);
}

static te_status relu(te_target *t, te_module **out) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 1, TE_EXPRS(n));
  te_tensor *y = te_compute(ctx, "Y", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_max(TE_AT(x, i), te_float(ctx, TE_F32, 0.0)));
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *st = te_stage_of(s, y);
  te_iter *o, *in;
  te_status r = te_split(st, te_axis(st, 0), 8, &o, &in);
  if (r == TE_OK)
    r = te_vectorize(st, in);
  if (r != TE_OK)
    return r;
  return te_build(s, "kl_relu", 2, (te_tensor *const[]){x, y}, 0, NULL, t, out);
}

static te_status bias_relu(te_target *t, te_module **out) {
  te_expr *m = te_var(ctx, "m"), *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(m, te_int(ctx, 32)));
  te_tensor *b = te_placeholder(ctx, "bias", TE_F32, 1, TE_EXPRS(te_int(ctx, 32)));
  te_tensor *y =
      te_compute(ctx, "Y", 2, TE_EXPRS(m, te_int(ctx, 32)), TE_EXPRS(i, j),
                 te_max(te_add(TE_AT(x, i, j), TE_AT(b, j)), te_float(ctx, TE_F32, 0.0)));
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *st = te_stage_of(s, y);
  te_status r = te_vectorize(st, te_axis(st, 1));
  if (r != TE_OK)
    return r;
  return te_build(s, "kl_bias_relu", 3, (te_tensor *const[]){x, b, y}, 0, NULL, t, out);
}

typedef te_status (*kernel_fn)(te_target *, te_module **);
static const struct {
  const char *name;
  kernel_fn build;
} kernels[] = {
    {"kl_saxpy", saxpy}, {"kl_matmul", matmul}, {"kl_relu", relu}, {"kl_bias_relu", bias_relu}};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

int main(int argc, char **argv) {
  if (argc < 4 || argc - 3 > NKERNELS) {
    fprintf(stderr, "usage: gen_kernels <dir/name> <target> <kernel>...\n");
    return 2;
  }
  ctx = te_ctx_new();
  te_target *t = te_target_parse(ctx, argv[2]);
  if (!t)
    return fail("parsing the target");
  te_module *mods[NKERNELS];
  int n = 0;
  for (int a = 3; a < argc; a++) {
    int found = -1;
    for (int k = 0; k < NKERNELS; k++)
      if (!strcmp(argv[a], kernels[k].name))
        found = k;
    if (found < 0) {
      fprintf(stderr, "gen_kernels: unknown kernel '%s'\n", argv[a]);
      return 2;
    }
    if (kernels[found].build(t, &mods[n++]) != TE_OK)
      return fail(argv[a]);
  }
  if (te_modules_save(ctx, n, mods, argv[1], TE_SAVE_STATIC_LIB | TE_SAVE_HEADER | TE_SAVE_ASM) !=
      TE_OK)
    return fail("saving");
  te_ctx_free(ctx);
  return 0;
}
