/* ptx_shuffle.c — warp_shuffle_xor (intrinsics.def) as PTX shfl.sync.bfly.b32.
 *
 * shfl.sync moves 32 bits: a narrower value (bool, 8/16-bit ints and floats) travels
 * zero-extended in an i32, a 64-bit one (i64, u64, f64) as two shuffles of its halves. The
 * membermask names the warp's threads that exist: all 32 unless the block's B = X * Y * Z
 * threads are not a multiple of 32, when the last warp (the hardware numbers threads
 * x + X * (y + Y * z) and makes warps of 32 consecutive numbers) has B % 32 threads (a thread
 * named in the mask that does not exist would leave the result undefined). gpu_tree_warp.c makes
 * every thread of a warp reach the shuffle together. The clamp operand 0x1f: the whole warp is one
 * segment.
 */

#include "ptx.h"

static LLVMValueRef shfl_call(cg_llvm *cg, LLVMValueRef mask, LLVMValueRef v32, unsigned off) {
  LLVMValueRef args[4] = {mask, v32, LLVMConstInt(cg->t_i32, off, 0),
                          LLVMConstInt(cg->t_i32, 0x1f, 0)};
  return cg_ptx_intrinsic_call(cg, "llvm.nvvm.shfl.sync.bfly.i32", 4, args);
}

/* The thread's number in its block, x + X * (y + Y * z), as i32. */
static LLVMValueRef linear_tid(cg_llvm *cg) {
  static const char *const sreg[3] = {"llvm.nvvm.read.ptx.sreg.tid.x",
                                      "llvm.nvvm.read.ptx.sreg.tid.y",
                                      "llvm.nvvm.read.ptx.sreg.tid.z"};
  LLVMValueRef id = NULL;
  int64_t below = 1;
  for (int d = 0; d < 3; d++) {
    if (cg->block[d] == 1 && d > 0)
      continue;
    LLVMValueRef t = cg_ptx_intrinsic_call(cg, sreg[d], 0, NULL);
    if (!t)
      return NULL;
    if (id) {
      t = LLVMBuildMul(cg->b, t, LLVMConstInt(cg->t_i32, (unsigned long long)below, 0), "");
      id = LLVMBuildAdd(cg->b, id, t, "");
    } else
      id = t;
    below *= cg->block[d];
  }
  return id;
}

/* The threads of this thread's warp that exist, as a membermask. */
static LLVMValueRef warp_mask(cg_llvm *cg) {
  LLVMValueRef all = LLVMConstInt(cg->t_i32, 0xffffffffu, 0);
  int64_t threads = cg->block[0] * cg->block[1] * cg->block[2];
  if (threads <= 0) /* not reached: gpu_tree_warp.c needs a constant block */
    return all;
  if (threads % 32 == 0)
    return all;
  LLVMValueRef tid = linear_tid(cg);
  if (!tid)
    return NULL;
  /* the last warp starts at B - B % 32 and has B % 32 threads */
  int64_t last = threads - threads % 32;
  LLVMValueRef in_last = LLVMBuildICmp(cg->b, LLVMIntUGE, tid,
                                       LLVMConstInt(cg->t_i32, (unsigned long long)last, 0), "");
  uint32_t partial = (uint32_t)((1ull << (threads % 32)) - 1);
  return LLVMBuildSelect(cg->b, in_last, LLVMConstInt(cg->t_i32, partial, 0), all, "warpmask");
}

LLVMValueRef cg_ptx_warp_shuffle(cg_llvm *cg, te_expr *call) {
  int64_t off = 0;
  te_dtype t = call->dtype;
  if (!ir_is_const_int(call->args[1], &off) || off < 1 || off > 31 || t.lanes != 1) {
    ir_error(cg->ctx, TE_ERR_INTERNAL,
             "internal: codegen: kernel '%s': warp_shuffle_xor needs a scalar and a constant "
             "lane offset 1..31",
             cg->kernel);
    return NULL;
  }
  LLVMValueRef v = cg_expr(cg, call->args[0]);
  if (!v)
    return NULL;
  LLVMTypeRef ty = LLVMTypeOf(v);
  unsigned bits = ir_is_bool(t) ? 1 : (unsigned)t.bits;
  LLVMTypeRef ity = LLVMIntTypeInContext(cg->lctx, bits);
  LLVMValueRef x = ir_is_float(t) ? LLVMBuildBitCast(cg->b, v, ity, "") : v;
  LLVMValueRef mask = warp_mask(cg);
  if (!mask)
    return NULL;
  LLVMValueRef r;
  if (bits <= 32) {
    LLVMValueRef w = bits < 32 ? LLVMBuildZExt(cg->b, x, cg->t_i32, "") : x;
    LLVMValueRef s = shfl_call(cg, mask, w, (unsigned)off);
    if (!s)
      return NULL;
    r = bits < 32 ? LLVMBuildTrunc(cg->b, s, ity, "") : s;
  } else { /* 64 bits: the low and the high half */
    LLVMValueRef lo = LLVMBuildTrunc(cg->b, x, cg->t_i32, "");
    LLVMValueRef hi = LLVMBuildTrunc(
        cg->b, LLVMBuildLShr(cg->b, x, LLVMConstInt(cg->t_i64, 32, 0), ""), cg->t_i32, "");
    LLVMValueRef slo = shfl_call(cg, mask, lo, (unsigned)off);
    LLVMValueRef shi = slo ? shfl_call(cg, mask, hi, (unsigned)off) : NULL;
    if (!shi)
      return NULL;
    r = LLVMBuildOr(cg->b, LLVMBuildZExt(cg->b, slo, cg->t_i64, ""),
                    LLVMBuildShl(cg->b, LLVMBuildZExt(cg->b, shi, cg->t_i64, ""),
                                 LLVMConstInt(cg->t_i64, 32, 0), ""),
                    "");
  }
  return ir_is_float(t) ? LLVMBuildBitCast(cg->b, r, ty, "") : r;
}
