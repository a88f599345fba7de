/* ptx_mma.c — the store C[c0] = mma_m16n8k16(...) or mma_m16n8k32(...) (tensorize_mma.c) as the
 * warp's mma.sync.
 *
 * In a warp kernel (gpu_warp.c) every lane computes its fragments' addresses from its lane
 * number (the layout in ptx_mma.h), loads its 8 elements of A and 4 of B as 16-bit values paired
 * into 32-bit registers and its 4 f32 of C, calls llvm.nvvm.mma.m16n8k16.row.col.f32.f32 (f16:
 * <2 x half> operands) or ...row.col.bf16 (bf16: i32 operands), which NVPTX writes as
 * mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32, and stores its 4 results
 * back to C. mma_m16n8k32 likewise: 16 bytes of A and 8 of B, four to a 32-bit register, and 4
 * s32 of C, through llvm.nvvm.mma.m16n8k32.row.col.{s8,u8}[.{s8,u8}] (the second type only when
 * B's differs from A's), which NVPTX writes as mma.sync.aligned.m16n8k32.row.col.s32.A.B.s32
 * (wrapping, not .satfinite: the loop's i32 sum). "row.col" only names how the fragments are held
 * in registers: te reads every element through its own strides, so any layout of A, B and C in
 * memory works (contiguous pairs become 32-bit loads where LLVM proves them so). A bar.warp.sync
 * before the loads makes lane 0's earlier stores (gpu_warp.c: the body's other stores run in lane
 * 0) visible to every lane, and one after the stores makes each lane's D visible to lane 0 for what
 * follows.
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "ptx.h"
#include "ptx_mma.h"

typedef struct mma_operand {
  LLVMValueRef base;      /* element 0 of the buffer (generic pointer) */
  LLVMValueRef origin;    /* i64 element index of the tile's (0, 0) */
  LLVMValueRef stride[2]; /* i64 strides of its row and column */
} mma_operand;

static LLVMValueRef i64_of(cg_llvm *cg, te_expr *e) {
  LLVMValueRef v = cg_expr(cg, e);
  return v ? cg_to_i64(cg, v, e->dtype) : NULL;
}

static bool operand(cg_llvm *cg, te_expr *const *args, mma_operand *o) {
  te_expr *load = args[0];
  o->base = ir_map_get(cg->bufs, load->u.buffer);
  if (!o->base) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': buffer '%s' is not bound",
             cg->kernel, load->u.buffer->name);
    return false;
  }
  return (o->origin = i64_of(cg, load->args[0])) && (o->stride[0] = i64_of(cg, args[1])) &&
         (o->stride[1] = i64_of(cg, args[2]));
}

/* Pointer to element (row, col) of the tile: origin + row*stride0 + col*stride1, with row and
   col i64 values computed from the lane. */
static LLVMValueRef elem_ptr(cg_llvm *cg, const mma_operand *o, LLVMTypeRef elem, LLVMValueRef row,
                             LLVMValueRef col) {
  LLVMValueRef i = LLVMBuildAdd(cg->b, o->origin,
                                LLVMBuildAdd(cg->b, LLVMBuildMul(cg->b, row, o->stride[0], ""),
                                             LLVMBuildMul(cg->b, col, o->stride[1], ""), ""),
                                "");
  return LLVMBuildInBoundsGEP2(cg->b, elem, o->base, &i, 1, "");
}

/* g + dr and 2t + dc as i64, from the lane's g and t (the layout's two forms of coordinate);
   which form a coordinate takes is read off ptx_mma.h's functions at lane 0 and lane 5. */
typedef struct lane_coords {
  LLVMValueRef g, t2; /* lane / 4 and 2 * (lane % 4), i64 */
} lane_coords;

/* The coordinate that pos(lane) gives for element i, as an LLVM value: pos is affine in g and t
   (ptx_mma.h), so its value at lanes 0, 4 (g + 1) and 1 (t + 1) gives the coefficients. */
static LLVMValueRef coord(cg_llvm *cg, const lane_coords *lc, void (*pos)(int, int, int *, int *),
                          int i, bool want_col) {
  int r0, c0, r4, c4, r1, c1;
  pos(0, i, &r0, &c0);
  pos(4, i, &r4, &c4);
  pos(1, i, &r1, &c1);
  int base = want_col ? c0 : r0, per_g = want_col ? c4 - c0 : r4 - r0,
      per_t2 = (want_col ? c1 - c0 : r1 - r0) / 2;
  LLVMValueRef v = LLVMConstInt(cg->t_i64, (unsigned long long)base, 0);
  if (per_g)
    v = LLVMBuildAdd(
        cg->b, v, LLVMBuildMul(cg->b, lc->g, LLVMConstInt(cg->t_i64, (unsigned)per_g, 0), ""), "");
  if (per_t2)
    v = LLVMBuildAdd(cg->b, v,
                     LLVMBuildMul(cg->b, lc->t2, LLVMConstInt(cg->t_i64, (unsigned)per_t2, 0), ""),
                     "");
  return v;
}

/* Register r of an operand of bits-wide elements (16: two a register, 8: four): elements
   per * r + h, h = 0 in the lowest bits, as an i32. */
static LLVMValueRef packed_reg(cg_llvm *cg, const lane_coords *lc, const mma_operand *o,
                               void (*pos)(int, int, int *, int *), int r, unsigned bits) {
  LLVMTypeRef et = bits == 8 ? cg->t_i8 : cg->t_i16;
  int per = 32 / (int)bits;
  LLVMValueRef reg = NULL;
  for (int h = 0; h < per; h++) {
    int i = per * r + h;
    LLVMValueRef p = elem_ptr(cg, o, et, coord(cg, lc, pos, i, false), coord(cg, lc, pos, i, true));
    LLVMValueRef ld = LLVMBuildLoad2(cg->b, et, p, "");
    LLVMSetAlignment(ld, bits / 8);
    LLVMValueRef part = LLVMBuildZExt(cg->b, ld, cg->t_i32, "");
    if (h)
      part = LLVMBuildShl(cg->b, part, LLVMConstInt(cg->t_i32, (unsigned)h * bits, 0), "");
    reg = reg ? LLVMBuildOr(cg->b, reg, part, "") : part;
  }
  return reg;
}

/* The LLVM intrinsic of the call's tile and dtypes, into name (of size n). */
static void intrinsic_name(const te_expr *call, char *name, size_t n) {
  te_dtype a = call->args[3]->dtype, b = call->args[6]->dtype;
  if (call->u.call == IR_INTRIN_MMA_M16N8K32) {
    const char *an = ir_is_int(a) ? "s8" : "u8", *bn = ir_is_int(b) ? "s8" : "u8";
    snprintf(name, n, "llvm.nvvm.mma.m16n8k32.row.col.%s%s%s", an, strcmp(an, bn) ? "." : "",
             strcmp(an, bn) ? bn : "");
  } else {
    snprintf(name, n, "%s",
             a.code == kDLBfloat ? "llvm.nvvm.mma.m16n8k16.row.col.bf16"
                                 : "llvm.nvvm.mma.m16n8k16.row.col.f32.f32");
  }
}

/* bar.warp.sync -1 as inline assembly that clobbers memory: LLVM's llvm.nvvm.bar.warp.sync
   is not a memory barrier to LLVM's optimizers (they forwarded a store across it), and the
   point of this one is that the loads after it see other lanes' stores before it. */
static bool warp_sync(cg_llvm *cg) {
  static const char text[] = "bar.warp.sync -1;", clobbers[] = "~{memory}";
  LLVMTypeRef fty = LLVMFunctionType(cg->t_void, NULL, 0, 0);
  LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, sizeof text - 1, (char *)clobbers,
                                    sizeof clobbers - 1, 1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMValueRef call = LLVMBuildCall2(cg->b, fty, a, NULL, 0, "");
  unsigned kind = LLVMGetEnumAttributeKindForName("convergent", 10); /* never made divergent */
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateEnumAttribute(cg->lctx, kind, 0));
  return true;
}

bool cg_ptx_mma_store(cg_llvm *cg, ir_stmt *s) {
  te_expr *call = s->exprs[0];
  bool int8 = call->u.call == IR_INTRIN_MMA_M16N8K32;
  char name[64];
  intrinsic_name(call, name, sizeof name);
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id || !cg->warp_lane) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': %s", cg->kernel,
             id ? "an mma outside a warp kernel" : "LLVM has no intrinsic for the mma");
    return false;
  }
  mma_operand c, a, b;
  if (!operand(cg, call->args, &c) || !operand(cg, call->args + 3, &a) ||
      !operand(cg, call->args + 6, &b))
    return false;
  LLVMValueRef lane = LLVMBuildZExt(cg->b, cg->warp_lane, cg->t_i64, "");
  lane_coords lc = {LLVMBuildLShr(cg->b, lane, LLVMConstInt(cg->t_i64, 2, 0), "g"),
                    LLVMBuildShl(cg->b,
                                 LLVMBuildAnd(cg->b, lane, LLVMConstInt(cg->t_i64, 3, 0), ""),
                                 LLVMConstInt(cg->t_i64, 1, 0), "t2")};
  if (!warp_sync(cg))
    return false;
  LLVMTypeRef fty = LLVMIntrinsicGetType(cg->lctx, id, NULL, 0);
  LLVMTypeRef params[10];
  LLVMGetParamTypes(fty, params);
  LLVMValueRef args[10];
  unsigned bits = int8 ? 8 : 16;
  void (*apos)(int, int, int *, int *) = int8 ? ptx_mma8_a_pos : ptx_mma_a_pos;
  void (*bpos)(int, int, int *, int *) = int8 ? ptx_mma8_b_pos : ptx_mma_b_pos;
  for (int r = 0; r < 4; r++) /* 4 registers of A, 2 of B, in both shapes */
    args[r] = LLVMBuildBitCast(cg->b, packed_reg(cg, &lc, &a, apos, r, bits), params[r], "");
  for (int r = 0; r < 2; r++)
    args[4 + r] =
        LLVMBuildBitCast(cg->b, packed_reg(cg, &lc, &b, bpos, r, bits), params[4 + r], "");
  LLVMTypeRef ct = int8 ? cg->t_i32 : cg->t_f32;
  LLVMValueRef cptr[4];
  for (int i = 0; i < 4; i++) {
    cptr[i] = elem_ptr(cg, &c, ct, coord(cg, &lc, ptx_mma_c_pos, i, false),
                       coord(cg, &lc, ptx_mma_c_pos, i, true));
    args[6 + i] = LLVMBuildLoad2(cg->b, ct, cptr[i], "");
    LLVMSetAlignment(args[6 + i], 4);
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, NULL, 0);
  LLVMValueRef d = LLVMBuildCall2(cg->b, fty, fn, args, 10, "mma");
  for (int i = 0; i < 4; i++)
    LLVMSetAlignment(
        LLVMBuildStore(cg->b, LLVMBuildExtractValue(cg->b, d, (unsigned)i, ""), cptr[i]), 4);
  return warp_sync(cg);
}
