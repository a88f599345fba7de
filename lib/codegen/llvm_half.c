/* llvm_half.c — conversions to and from f16 and bf16 in LLVM IR.
 *
 * The lowering (lower/widen_half.c) leaves f16 and bf16 only in loads, stores, selects and
 * casts, so the back end's part is the conversions; the values themselves are i16 (their bits,
 * llvm_types.c) and become LLVM's half/bfloat only around a conversion instruction. Where the
 * target has instructions for them LLVM's fpext/fptrunc select those (F16C's vcvtph2ps/vcvtps2ph,
 * AVX512-BF16's vcvtneps2bf16, AArch64's fcvt, PTX's cvt); elsewhere LLVM would call a
 * compiler-rt/libgcc routine
 * (__extendhfsf2, __truncsfbf2, ...) that a JIT'd kernel or a static library cannot count on,
 * so these are written inline as integer code, which vectorizes like the rest:
 *   bf16 -> f32   the 16 bits shifted into the top of an f32 (exact, always inline; a
 *                 signalling NaN stays one, as LLVM's own bfloat fpext leaves it);
 *   f16 -> f32    the exponent rebased by a multiplication by 2^112 (exact, subnormals too);
 *   f32 -> bf16   round to nearest even by adding 0x7fff plus the lowest kept bit; NaN quieted;
 *   f32 -> f16    normals rounded as bf16 (at bit 13), subnormals by an f32 addition of 0.5
 *                 (whose ulp is f16's subnormal step), overflow to inf, NaN quieted;
 *   f64 -> 16-bit through f32 rounded to odd, which makes the second rounding exact (f32 has
 *                 more than 2 bits beyond 16-bit floats' precision).
 * NaN keeps its sign and the top bits of its payload, quieted, as the hardware conversions do.
 */
#include <string.h>

#include "llvm_cg.h"

typedef struct half_support {
  bool f16;         /* fpext/fptrunc between half and float are instructions */
  bool bf16_narrow; /* fptrunc float -> bfloat is an instruction */
} half_support;

static bool has_feature(const te_target *t, const char *name) {
  size_t n = strlen(name);
  for (const char *f = t && t->features ? t->features : ""; (f = strstr(f, name)); f += n)
    if (f > t->features && f[-1] == '+' && (f[n] == ',' || f[n] == 0) &&
        (f - 1 == t->features || f[-2] == ','))
      return true;
  return false;
}

static half_support support_of(const cg_llvm *cg) {
  const te_target *t = cg->target;
  half_support s = {false, false};
  if (t && t->kind == TG_CUDA) { /* PTX: cvt for f16 everywhere; bf16 from sm_80 */
    s.f16 = true;
    s.bf16_narrow = t->gpu_arch >= 80;
    return s;
  }
  const char *triple = t && t->triple ? t->triple : "";
  if (strncmp(triple, "aarch64", 7) == 0 || strncmp(triple, "arm64", 5) == 0) {
    s.f16 = true;
    s.bf16_narrow = has_feature(t, "bf16");
  } else if (strncmp(triple, "x86_64", 6) == 0 || strncmp(triple, "i686", 4) == 0) {
    s.f16 = has_feature(t, "f16c") || has_feature(t, "avx512fp16");
    s.bf16_narrow = has_feature(t, "avx512bf16") || has_feature(t, "avxneconvert");
  }
  return s;
}

static te_dtype lanes_of(te_dtype base, te_dtype like) { return ir_with_lanes(base, like.lanes); }

static LLVMValueRef k32(cg_llvm *cg, te_dtype like, uint32_t v) {
  return cg_const_int(cg, lanes_of(TE_U32, like), (int64_t)v);
}

static LLVMValueRef bits_of(cg_llvm *cg, LLVMValueRef v, te_dtype int_t, te_dtype like) {
  return LLVMBuildBitCast(cg->b, v, cg_type(cg, lanes_of(int_t, like)), "");
}

/* LLVM's own type for a 16-bit float dtype (values are i16 elsewhere: llvm_types.c). */
static LLVMTypeRef llvm_half_type(cg_llvm *cg, te_dtype t) {
  LLVMTypeRef s =
      t.code == kDLBfloat ? LLVMBFloatTypeInContext(cg->lctx) : LLVMHalfTypeInContext(cg->lctx);
  return t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
}

/* 16-bit float (register bits) -> f32, exact. */
static LLVMValueRef half_to_f32(cg_llvm *cg, LLVMValueRef v, te_dtype from) {
  LLVMBuilderRef B = cg->b;
  LLVMTypeRef f32 = cg_type(cg, lanes_of(TE_F32, from)), u32 = cg_type(cg, lanes_of(TE_U32, from));
  if (from.code == kDLFloat && support_of(cg).f16)
    return LLVMBuildFPExt(B, LLVMBuildBitCast(B, v, llvm_half_type(cg, from), ""), f32, "");
  LLVMValueRef h = LLVMBuildZExt(B, bits_of(cg, v, TE_U16, from), u32, "");
  if (from.code == kDLBfloat)
    return LLVMBuildBitCast(B, LLVMBuildShl(B, h, k32(cg, from, 16), ""), f32, "bf16.f32");
  LLVMValueRef sign =
      LLVMBuildShl(B, LLVMBuildAnd(B, h, k32(cg, from, 0x8000), ""), k32(cg, from, 16), "");
  LLVMValueRef mag = LLVMBuildAnd(B, h, k32(cg, from, 0x7fff), "");
  /* finite: the exponent and significand moved into f32's fields, scaled by 2^(127-15) */
  LLVMValueRef moved = LLVMBuildBitCast(B, LLVMBuildShl(B, mag, k32(cg, from, 13), ""), f32, "");
  LLVMValueRef scaled = LLVMBuildBitCast(
      B, LLVMBuildFMul(B, moved, cg_const_float(cg, lanes_of(TE_F32, from), 0x1p112), ""), u32, "");
  /* inf and NaN: f32's all-ones exponent, the significand moved; a NaN quieted */
  LLVMValueRef special =
      LLVMBuildOr(B, LLVMBuildShl(B, mag, k32(cg, from, 13), ""), k32(cg, from, 0x7f800000), "");
  LLVMValueRef is_nan = LLVMBuildICmp(B, LLVMIntUGT, mag, k32(cg, from, 0x7c00), "");
  special = LLVMBuildOr(
      B, special, LLVMBuildSelect(B, is_nan, k32(cg, from, 0x400000), k32(cg, from, 0), ""), "");
  LLVMValueRef is_special = LLVMBuildICmp(B, LLVMIntUGE, mag, k32(cg, from, 0x7c00), "");
  LLVMValueRef r = LLVMBuildSelect(B, is_special, special, scaled, "");
  return LLVMBuildBitCast(B, LLVMBuildOr(B, r, sign, ""), f32, "f16.f32");
}

/* f32 -> bf16 bits (u32 lanes holding the 16 bits). */
static LLVMValueRef f32_to_bf16_bits(cg_llvm *cg, LLVMValueRef v, te_dtype like) {
  LLVMBuilderRef B = cg->b;
  LLVMValueRef u = bits_of(cg, v, TE_U32, like);
  LLVMValueRef lsb =
      LLVMBuildAnd(B, LLVMBuildLShr(B, u, k32(cg, like, 16), ""), k32(cg, like, 1), "");
  LLVMValueRef rounded =
      LLVMBuildLShr(B, LLVMBuildAdd(B, u, LLVMBuildAdd(B, lsb, k32(cg, like, 0x7fff), ""), ""),
                    k32(cg, like, 16), "");
  LLVMValueRef quiet =
      LLVMBuildOr(B, LLVMBuildLShr(B, u, k32(cg, like, 16), ""), k32(cg, like, 0x40), "");
  LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, v, v, "");
  return LLVMBuildSelect(B, nan, quiet, rounded, "");
}

/* f32 -> f16 bits (u32 lanes holding the 16 bits). */
static LLVMValueRef f32_to_f16_bits(cg_llvm *cg, LLVMValueRef v, te_dtype like) {
  LLVMBuilderRef B = cg->b;
  te_dtype f32t = lanes_of(TE_F32, like);
  LLVMValueRef u = bits_of(cg, v, TE_U32, like);
  LLVMValueRef sign = LLVMBuildAnd(B, u, k32(cg, like, 0x80000000u), "");
  LLVMValueRef a = LLVMBuildXor(B, u, sign, "");
  /* normal results: rebias the exponent (-112 << 23, wrapping), round at bit 13 to even */
  LLVMValueRef odd =
      LLVMBuildAnd(B, LLVMBuildLShr(B, a, k32(cg, like, 13), ""), k32(cg, like, 1), "");
  LLVMValueRef biased = LLVMBuildAdd(B, a, k32(cg, like, 0xc8000fffu), "");
  LLVMValueRef normal = LLVMBuildLShr(B, LLVMBuildAdd(B, biased, odd, ""), k32(cg, like, 13), "");
  /* subnormal results (|x| < 2^-14): 0.5 + |x| rounds |x| to a multiple of 2^-24 */
  LLVMValueRef half = cg_const_float(cg, f32t, 0.5);
  LLVMValueRef sum = LLVMBuildFAdd(B, LLVMBuildBitCast(B, a, cg_type(cg, f32t), ""), half, "");
  LLVMValueRef sub = LLVMBuildSub(B, bits_of(cg, sum, TE_U32, like), k32(cg, like, 0x3f000000), "");
  /* |x| >= 65536 (and so >= 65520, the first value rounding to inf, via the normal path), inf,
     NaN (quieted, the payload's top bits kept) */
  LLVMValueRef nan = LLVMBuildOr(
      B, LLVMBuildAnd(B, LLVMBuildLShr(B, a, k32(cg, like, 13), ""), k32(cg, like, 0x3ff), ""),
      k32(cg, like, 0x7e00), "");
  LLVMValueRef r = LLVMBuildSelect(
      B, LLVMBuildICmp(B, LLVMIntULT, a, k32(cg, like, 0x38800000), ""), sub, normal, "");
  r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGE, a, k32(cg, like, 0x47800000), ""),
                      k32(cg, like, 0x7c00), r, "");
  r = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntUGT, a, k32(cg, like, 0x7f800000), ""), nan, r,
                      "");
  return LLVMBuildOr(B, r, LLVMBuildLShr(B, sign, k32(cg, like, 16), ""), "");
}

/* f32 -> 16-bit float, rounded to nearest even. */
static LLVMValueRef f32_to_half(cg_llvm *cg, LLVMValueRef v, te_dtype to) {
  LLVMBuilderRef B = cg->b;
  half_support s = support_of(cg);
  if (to.code == kDLFloat ? s.f16 : s.bf16_narrow)
    return LLVMBuildBitCast(B, LLVMBuildFPTrunc(B, v, llvm_half_type(cg, to), ""), cg_type(cg, to),
                            "");
  LLVMValueRef bits =
      to.code == kDLFloat ? f32_to_f16_bits(cg, v, to) : f32_to_bf16_bits(cg, v, to);
  LLVMValueRef h = LLVMBuildTrunc(B, bits, cg_type(cg, lanes_of(TE_U16, to)), "");
  return LLVMBuildBitCast(B, h, cg_type(cg, to), to.code == kDLFloat ? "f16" : "bf16");
}

/* f64 -> f32 rounded to odd: truncated toward zero, the lowest bit set when inexact. */
static LLVMValueRef f64_to_f32_odd(cg_llvm *cg, LLVMValueRef v, te_dtype like) {
  LLVMBuilderRef B = cg->b;
  te_dtype f32t = lanes_of(TE_F32, like), f64t = lanes_of(TE_F64, like);
  LLVMValueRef t = LLVMBuildFPTrunc(B, v, cg_type(cg, f32t), "");
  LLVMValueRef back = LLVMBuildFPExt(B, t, cg_type(cg, f64t), "");
  LLVMTypeRef f64 = cg_type(cg, f64t);
  LLVMValueRef ab = cg_intrinsic(cg, "llvm.fabs", f64, 1, &back);
  LLVMValueRef av = cg_intrinsic(cg, "llvm.fabs", f64, 1, &v);
  if (!ab || !av)
    return NULL;
  LLVMTypeRef u32 = cg_type(cg, lanes_of(TE_U32, like));
  LLVMValueRef away = LLVMBuildZExt(B, LLVMBuildFCmp(B, LLVMRealOGT, ab, av, ""), u32, "");
  LLVMValueRef inexact = LLVMBuildZExt(B, LLVMBuildFCmp(B, LLVMRealONE, back, v, ""), u32, "");
  LLVMValueRef bits = LLVMBuildSub(B, bits_of(cg, t, TE_U32, like), away, "");
  return LLVMBuildBitCast(B, LLVMBuildOr(B, bits, inexact, ""), cg_type(cg, f32t), "odd");
}

LLVMValueRef cg_half_cast(cg_llvm *cg, LLVMValueRef v, te_dtype from, te_dtype to) {
  LLVMBuilderRef B = cg->b;
  te_dtype f32t = lanes_of(TE_F32, from);
  if (ir_is_half(from)) {
    LLVMValueRef w = half_to_f32(cg, v, from);
    if (ir_is_half(to))
      return f32_to_half(cg, w, to); /* f16 <-> bf16: exact widening, one rounding */
    return cg_cast_value(cg, w, f32t, to);
  }
  /* to a 16-bit float */
  if (ir_is_float(from) && from.bits == 64)
    return f32_to_half(cg, f64_to_f32_odd(cg, v, from), to);
  if (ir_is_float(from))
    return f32_to_half(cg, v, to);
  if (ir_is_bool(from) || from.bits <= 16) /* exact in f32 */
    return f32_to_half(cg, cg_cast_value(cg, v, from, f32t), to);
  /* wider integers: exact or rounded once in f64, then as f64 */
  te_dtype f64t = lanes_of(TE_F64, from);
  (void)B;
  return cg_half_cast(cg, cg_cast_value(cg, v, from, f64t), f64t, to);
}
