/* ptx_math.c — which math calls a CUDA kernel may make, checked before code is written.
 *
 * LLVM's NVPTX back end has instructions for sqrt, floor, ceil, round, trunc, fma, fabs, min and
 * max, but lowers llvm.exp, llvm.log, llvm.sin, llvm.pow, ... only to libcalls, which do not
 * exist on the device — and LLVM aborts the process on them. With the CUDA toolkit's libdevice
 * found (ptx_libdevice.c) every math function te has works, f32 and f64: exp, exp2, log, log2,
 * log10, sin, cos, tan, tanh, pow and erf call libdevice; sigmoid is llvm_vmath.c's inline code.
 * Without libdevice (a machine without the toolkit):
 *   supported: exp, log, tanh, sigmoid (the inline polynomials of llvm_vmath.c, f32 and f64),
 *              exp2(x) = exp(x * ln 2), log2(x) = log(x) / ln 2, log10(x) = log(x) / ln 10,
 *              sqrt, rsqrt, floor, ceil, round, trunc, fma, abs (and likely), and the integer
 *              operators (bitwise_*, shifts, rounding_shift_right: llvm_bits.c);
 *   refused with TE_ERR_UNSUPPORTED naming the function: sin, cos, tan, pow, erf.
 * Vector code is checked the same way, lane by lane (its PTX: ptx_vector.c).
 */
#include "ptx.h"

static const double pm_ln2 = 0.693147180559945309417232121458176568;
static const double pm_ln10 = 2.302585092994045684017991454684364208;

typedef struct pm {
  const char *kernel;
  bool libdevice; /* found: every math call has device code */
  bool failed;
} pm;

/* Records the first refusal: a function that needs libdevice. */
static te_expr *pm_refuse(ir_mutator *m, const char *name) {
  pm *st = m->data;
  if (!st->failed)
    ir_error(m->ctx, TE_ERR_UNSUPPORTED,
             "te_build: kernel '%s': the function '%s' needs the CUDA toolkit's libdevice, which "
             "is not installed (looked for nvvm/libdevice/libdevice.10.bc in $TE_LIBDEVICE, "
             "$CUDA_HOME, $CUDA_PATH and /usr/local/cuda; without it: exp, exp2, log, log2, "
             "log10, tanh, sigmoid, sqrt, rsqrt, floor, ceil, round, trunc, fma, abs)",
             st->kernel, name);
  st->failed = true;
  return NULL;
}

/* The constant k of c's type (a broadcast for vectors). */
static te_expr *pm_const(ir_mutator *m, te_dtype t, double k) {
  te_expr *c = ir_float(m->ctx, ir_elem(t), k);
  return c && t.lanes > 1 ? ir_broadcast(c, t.lanes) : c;
}

static bool st_libdevice(ir_mutator *m) { return ((pm *)m->data)->libdevice; }

static te_expr *pm_call(ir_mutator *m, te_expr *e) {
  te_expr *c = ir_mutate_expr_children(m, e);
  if (!c)
    return NULL;
  te_dtype t = c->dtype;
  if (st_libdevice(m))
    return c; /* ptx_libdevice.c writes them all */
  switch (c->u.call) {
  case IR_INTRIN_SIN:
  case IR_INTRIN_COS:
  case IR_INTRIN_TAN:
  case IR_INTRIN_POW:
  case IR_INTRIN_ERF:
    return pm_refuse(m, ir_intrin_table[c->u.call].name);
  case IR_INTRIN_EXP2: {
    te_expr *k = pm_const(m, t, pm_ln2);
    te_expr *x = k ? ir_binary(IR_MUL, c->args[0], k) : NULL;
    if (!x)
      return NULL;
    return ir_call(m->ctx, IR_INTRIN_EXP, t, 1, &x);
  }
  case IR_INTRIN_LOG2:
  case IR_INTRIN_LOG10: {
    te_expr *l = ir_call(m->ctx, IR_INTRIN_LOG, t, 1, c->args);
    double k = c->u.call == IR_INTRIN_LOG2 ? 1.0 / pm_ln2 : 1.0 / pm_ln10;
    te_expr *kc = l ? pm_const(m, t, k) : NULL;
    return kc ? ir_binary(IR_MUL, l, kc) : NULL;
  }
  default:
    return c;
  }
}

ir_stmt *cg_ptx_legalize(te_ctx *ctx, const char *kernel, ir_stmt *body) {
  pm st = {kernel, cg_libdevice_path() != NULL, false};
  ir_mutator m = {.ctx = ctx, .data = &st};
  m.expr[IR_CALL] = pm_call;
  ir_stmt *r = ir_mutate_stmt(&m, body);
  return st.failed ? NULL : r;
}
