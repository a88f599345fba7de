/* widen_half.c — arithmetic on f16 and bf16 computed in f32.
 *
 * Needs: vectorization and unrolling are done (their nodes keep their lanes here).
 * Guarantees: no ADD, SUB, MUL, DIV, MIN, MAX, comparison or math call has an f16 or bf16
 * operand; each becomes the f32 operation on widened operands, and a value result is rounded
 * back: a + b on f16 is f16(f32(a) + f32(b)). Loads, stores, selects, lets and casts keep their
 * 16-bit types: the back ends only convert (codegen/llvm_half.c, the PTX and SPIR-V casts).
 *
 * Why in the IR and not left to each back end: the value of every operation is then the same on
 * every target, and the f32 form is exact for + - * / and sqrt (f32 has more than twice the 11
 * significant bits of f16, and of bf16's 8, so rounding the f32 result to 16 bits rounds the exact
 * result once). Back ends with native 16-bit arithmetic get it back: LLVM narrows fptrunc(fadd
 * (fpext a, fpext b)) to a native half add where the target has one (sm_80's add.f16). This is
 * Halide's choice too. Other math calls (exp, tanh, ...) are f32's results rounded once.
 */
#include "lower.h"

static te_expr *to_f32(te_expr *e) {
  return ir_is_half(e->dtype) ? ir_cast(ir_with_lanes(TE_F32, e->dtype.lanes), e) : e;
}

static bool any_half_arg(const te_expr *e) {
  for (int i = 0; i < e->nargs; i++)
    if (ir_is_half(e->args[i]->dtype))
      return true;
  return false;
}

/* e (its children already widened) with its half operands widened and its half result rounded
   back to e's dtype. */
static te_expr *widen(te_expr *e) {
  te_expr *args[4];
  if (!ir_check(e->ctx, e->nargs <= 4, "widen_half: too many operands"))
    return NULL;
  for (int i = 0; i < e->nargs; i++)
    args[i] = to_f32(e->args[i]);
  te_expr *wide;
  if (e->kind == IR_CALL)
    wide = ir_call(e->ctx, (ir_intrin)e->u.call,
                   ir_is_half(e->dtype) ? ir_with_lanes(TE_F32, e->dtype.lanes) : e->dtype,
                   e->nargs, args);
  else
    wide = ir_expr_with_args(e, e->nargs, args); /* the binary constructors' dtypes follow */
  if (!wide)
    return NULL;
  return ir_is_half(e->dtype) ? ir_cast(e->dtype, wide) : wide;
}

static te_expr *widen_binary(ir_mutator *m, te_expr *e) {
  te_expr *r = ir_mutate_expr_children(m, e);
  return r && any_half_arg(r) ? widen(r) : r;
}

static te_expr *widen_call(ir_mutator *m, te_expr *e) {
  te_expr *r = ir_mutate_expr_children(m, e);
  if (!r || !(ir_intrin_table[r->u.call].flags & (IR_INTRIN_FLOAT | IR_INTRIN_NUMBER)))
    return r; /* if_then_else, likely, prefetch, the calling convention's reads */
  return any_half_arg(r) ? widen(r) : r;
}

ir_stmt *lw_widen_half(lw_pass_ctx *p, ir_stmt *s) {
  ir_mutator m = {.ctx = p->ctx, .memo = true};
  static const ir_expr_kind binary[] = {IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MIN, IR_MAX,
                                        IR_EQ,  IR_NE,  IR_LT,  IR_LE,  IR_GT,  IR_GE};
  for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
    m.expr[binary[i]] = widen_binary;
  m.expr[IR_CALL] = widen_call;
  return ir_mutate_stmt(&m, s);
}
