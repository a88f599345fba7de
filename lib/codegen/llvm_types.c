/* llvm_types.c — te dtypes as LLVM types and constants, and the attributes every function gets.
 *
 * Registers hold bools as i1 (what comparisons give and branches take); memory holds them as
 * one byte (i8), as DLPack and numpy store them. Vector dtypes (lanes > 1) map to LLVM fixed
 * vectors of the same element type. Index arithmetic is i64; narrower index values are widened
 * with a sign extension where a 64-bit value is needed (GEP offsets, extents). f16 and bf16
 * values are their 16 bits in an i16, in registers and in memory: code generation only moves
 * them and converts them (llvm_half.c, where they become LLVM's half/bfloat for the one
 * instruction), so LLVM never legalizes a half/bfloat operation on a CPU without them, which it
 * does by calling compiler-rt/libgcc routines (a masked store of <15 x bfloat> became 15 calls of
 * __truncsfbf2 on x86-64).
 */
#include <stdio.h>
#include <string.h>

#include "llvm_cg.h"

static LLVMTypeRef cg_scalar_type(cg_llvm *cg, te_dtype t, bool mem) {
  switch (t.code) {
  case kDLInt:
  case kDLUInt:
    if (t.bits == 1)
      return mem ? cg->t_i8 : cg->t_i1;
    return LLVMIntTypeInContext(cg->lctx, t.bits);
  case kDLFloat:
    if (t.bits == 32)
      return cg->t_f32;
    if (t.bits == 64)
      return cg->t_f64;
    if (t.bits == 16)
      return cg->t_i16; /* the 16 bits (below) */
    break;
  case kDLBfloat:
    if (t.bits == 16)
      return cg->t_i16;
    break;
  case kDLOpaqueHandle: /* the calling convention's pointers */
    return cg->t_ptr;
  default:
    break;
  }
  return NULL;
}

static LLVMTypeRef cg_type_of(cg_llvm *cg, te_dtype t, bool mem) {
  LLVMTypeRef s = cg_scalar_type(cg, t, mem);
  if (!s) {
    char buf[32];
    ir_error(cg->ctx, TE_ERR_UNSUPPORTED, "te_build: kernel '%s': dtype %s has no CPU code yet",
             cg->kernel, ir_dtype_name(t, buf, sizeof buf));
    return NULL;
  }
  return t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
}

LLVMTypeRef cg_type(cg_llvm *cg, te_dtype t) { return cg_type_of(cg, t, false); }
LLVMTypeRef cg_mem_type(cg_llvm *cg, te_dtype t) { return cg_type_of(cg, t, true); }

LLVMValueRef cg_splat(cg_llvm *cg, LLVMValueRef scalar, int lanes) {
  if (lanes <= 1)
    return scalar;
  if (LLVMIsConstant(scalar)) {
    /* on the stack: code building LLVM IR passes values on without NULL checks, so a splat
       must not fail (vectors have at most CG_MAX_LANES lanes: vectorize.c refuses more) */
    LLVMValueRef elems[CG_MAX_LANES];
    if (!ir_check(cg->ctx, lanes <= CG_MAX_LANES, "cg_splat: too many lanes"))
      return NULL;
    for (int i = 0; i < lanes; i++)
      elems[i] = scalar;
    return LLVMConstVector(elems, (unsigned)lanes);
  }
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(scalar), (unsigned)lanes);
  LLVMValueRef v =
      LLVMBuildInsertElement(cg->b, LLVMGetPoison(vt), scalar, LLVMConstInt(cg->t_i32, 0, 0), "");
  LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(cg->t_i32, (unsigned)lanes));
  return LLVMBuildShuffleVector(cg->b, v, LLVMGetPoison(vt), zeros, "splat");
}

LLVMValueRef cg_const_int(cg_llvm *cg, te_dtype t, int64_t v) {
  LLVMTypeRef s = cg_scalar_type(cg, ir_elem(t), false);
  if (!s)
    return NULL;
  LLVMValueRef c = LLVMConstInt(s, (unsigned long long)v, t.code == kDLInt);
  return cg_splat(cg, c, t.lanes);
}

LLVMValueRef cg_const_float(cg_llvm *cg, te_dtype t, double v) {
  if (ir_is_half(t))
    return cg_splat(cg, LLVMConstInt(cg->t_i16, ir_half_bits(t, v), 0), t.lanes);
  LLVMTypeRef s = cg_scalar_type(cg, ir_elem(t), false);
  if (!s)
    return NULL;
  return cg_splat(cg, LLVMConstReal(s, v), t.lanes);
}

LLVMValueRef cg_to_i64(cg_llvm *cg, LLVMValueRef v, te_dtype t) {
  if (LLVMTypeOf(v) == cg->t_i64)
    return v;
  if (t.bits < 64) {
    return t.code == kDLInt ? LLVMBuildSExt(cg->b, v, cg->t_i64, "")
                            : LLVMBuildZExt(cg->b, v, cg->t_i64, "");
  }
  return v;
}

void cg_add_enum_attr(cg_llvm *cg, LLVMValueRef fn, unsigned index, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(cg->lctx, kind, 0));
}

static void cg_add_string_attr(cg_llvm *cg, LLVMValueRef fn, const char *k, const char *v) {
  LLVMAddAttributeAtIndex(
      fn, LLVMAttributeFunctionIndex,
      LLVMCreateStringAttribute(cg->lctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

/* The target's CPU and features on every function (the JIT's and the object writer's target
   machines then agree with the optimizer), and the preferred vector width set explicitly: LLVM
   prefers 256-bit vectors on Intel AVX-512 CPUs unless told (TOOLCHAIN.md). */
void cg_fn_attrs(cg_llvm *cg, LLVMValueRef fn) {
  const te_target *t = cg->target;
  if (t->cpu && *t->cpu)
    cg_add_string_attr(cg, fn, "target-cpu", t->cpu);
  if (t->features && *t->features)
    cg_add_string_attr(cg, fn, "target-features", t->features);
  char width[16];
  snprintf(width, sizeof width, "%d", t->vector_bits > 0 ? t->vector_bits : 128);
  cg_add_string_attr(cg, fn, "prefer-vector-width", width);
  cg_add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind");
}
