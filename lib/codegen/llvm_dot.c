/* llvm_dot.c — te_tensorize's dot-product instructions (intrinsics.def: dot4_u8s8, dot2_bf16,
 * interleave4, interleave2) on x86.
 *
 * dot4_u8s8(acc, a, b) is llvm.x86.avx512.vpdpbusd.{512,256,128} (the 256/128-bit forms are the
 * VEX AVX-VNNI instruction when the target has it, the EVEX one with AVX512-VNNI+VL): for each
 * i32 lane, acc + the 4 products of its u8 bytes of a and s8 bytes of b. dot2_bf16(acc, a, b) is
 * llvm.x86.avx512bf16.dpbf16ps.{512,256,128} (AVX512-BF16, +VL for the narrower forms): for each
 * f32 lane, acc + the 2 products of its bf16 pairs. The operands arrive as G x N elements (G = 4
 * bytes or 2 bf16 a lane), or as G elements repeated (32 bits: a vpbroadcastd), or as the
 * interleave of G N-lane vectors (a shuffle). The intrinsic's own parameter types are asked from
 * LLVM and the operands bitcast to them (LLVMs differ: i32 or i8 vectors for vpdpbusd, i32 or
 * bfloat vectors for dpbf16ps; te keeps bf16 values as i16 lanes).
 */
#include <string.h>

#include "llvm_cg.h"

/* The G x N elements of lane order G l + q from interleave<G>(v0, .., v(G-1)), each of N lanes. */
static LLVMValueRef interleave(cg_llvm *cg, te_expr *e) {
  int g = e->nargs;
  LLVMValueRef v[4];
  for (int q = 0; q < g; q++)
    if (!(v[q] = cg_expr(cg, e->args[q])))
      return NULL;
  unsigned n = e->args[0]->dtype.lanes;
  LLVMValueRef m2[64], m4[64];
  for (unsigned i = 0; i < 2 * n; i++)
    m2[i] = LLVMConstInt(cg->t_i32, i, 0);
  LLVMValueRef lo = LLVMBuildShuffleVector(cg->b, v[0], v[1], LLVMConstVector(m2, 2 * n), "");
  if (g == 2) { /* lo holds v0, v1 one after the other */
    for (unsigned l = 0; l < n; l++)
      for (unsigned q = 0; q < 2; q++)
        m4[2 * l + q] = LLVMConstInt(cg->t_i32, q * n + l, 0);
    return LLVMBuildShuffleVector(cg->b, lo, lo, LLVMConstVector(m4, 2 * n), "il2");
  }
  LLVMValueRef hi = LLVMBuildShuffleVector(cg->b, v[2], v[3], LLVMConstVector(m2, 2 * n), "");
  for (unsigned l = 0; l < n; l++) /* lo|hi holds v0, v1, v2, v3 one after the other */
    for (unsigned q = 0; q < 4; q++)
      m4[4 * l + q] = LLVMConstInt(cg->t_i32, q * n + l, 0);
  return LLVMBuildShuffleVector(cg->b, lo, hi, LLVMConstVector(m4, 4 * n), "il4");
}

/* One operand of the instruction as a value of type want (n 32-bit lanes' worth of elements). */
static LLVMValueRef operand(cg_llvm *cg, te_expr *e, unsigned n, LLVMTypeRef want) {
  LLVMValueRef v;
  te_dtype t = e->dtype;
  if (e->kind == IR_CALL &&
      (e->u.call == IR_INTRIN_INTERLEAVE4 || e->u.call == IR_INTRIN_INTERLEAVE2)) {
    v = interleave(cg, e);
  } else if (t.lanes * t.bits == 32 && n > 1) { /* one lane's elements repeated: a broadcast */
    if (!(v = cg_expr(cg, e)))
      return NULL;
    v = cg_splat(cg, LLVMBuildBitCast(cg->b, v, cg->t_i32, ""), (int)n);
  } else {
    v = cg_expr(cg, e);
  }
  return v ? LLVMBuildBitCast(cg->b, v, want, "") : NULL;
}

LLVMValueRef cg_dot(cg_llvm *cg, te_expr *e) {
  unsigned n = e->dtype.lanes;
  bool bf16 = e->u.call == IR_INTRIN_DOT2_BF16;
  const char *name = bf16 ? (n == 16  ? "llvm.x86.avx512bf16.dpbf16ps.512"
                             : n == 8 ? "llvm.x86.avx512bf16.dpbf16ps.256"
                                      : "llvm.x86.avx512bf16.dpbf16ps.128")
                          : (n == 16  ? "llvm.x86.avx512.vpdpbusd.512"
                             : n == 8 ? "llvm.x86.avx512.vpdpbusd.256"
                                      : "llvm.x86.avx512.vpdpbusd.128");
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id || (n != 16 && n != 8 && n != 4)) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': no LLVM intrinsic '%s'",
             cg->kernel, name);
    return NULL;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, NULL, 0);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cg->lctx, id, NULL, 0);
  LLVMTypeRef params[3];
  LLVMGetParamTypes(fty, params);
  LLVMValueRef acc = cg_expr(cg, e->args[0]);
  if (!acc)
    return NULL;
  LLVMValueRef args[3] = {LLVMBuildBitCast(cg->b, acc, params[0], ""),
                          operand(cg, e->args[1], n, params[1]),
                          operand(cg, e->args[2], n, params[2])};
  if (!args[1] || !args[2])
    return NULL;
  LLVMValueRef r = LLVMBuildCall2(cg->b, fty, fn, args, 3, bf16 ? "vdpbf16ps" : "vpdpbusd");
  return LLVMBuildBitCast(cg->b, r, LLVMTypeOf(acc), "");
}
