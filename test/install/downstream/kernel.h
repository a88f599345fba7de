/* kernel.h — the downstream test's kernel, defined once for the JIT program and the generator:
 * Y[i] = X[i] * s + 1 over f32 with n symbolic. */
#include <te/te.h>

static te_status d_build(te_ctx *ctx, const char *name, const char *target, te_module **out) {
  te_target *t = te_target_parse(ctx, target);
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i"), *s = te_param(ctx, "s", TE_F32);
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 1, TE_EXPRS(n));
  te_tensor *y = te_compute(ctx, "Y", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_add(te_mul(TE_AT(x, i), s), te_float(ctx, TE_F32, 1.0)));
  te_schedule *sch = te_schedule_new(ctx, 1, &y);
  return te_build(sch, name, 2, (te_tensor *const[]){x, y}, 1, &s, t, out);
}
