/* llvm_call.c — math calls (IR_CALL) as LLVM intrinsics or libm calls.
 *
 * exp, log, tanh and sigmoid of f32/f64 are inline polynomial code (llvm_vmath.c): vectors stay
 * vectors, where LLVM would call expf once a lane. Most other calls map to LLVM's overloaded
 * intrinsics (llvm.sqrt.v16f32, ...), which the optimizer understands and which work on
 * vectors (those LLVM has no instruction for, such as llvm.sin, become libm calls per lane).
 * tan and erf call libm (tanf/tan, erff/erf), declared in the module and bound into the JIT by
 * absolute symbols (llvm_jit.c); on vectors lane by lane.
 * Derived calls: rsqrt(x) = 1 / sqrt(x). round rounds half away
 * from zero (C's round), abs is fabs on floats, llvm.abs on signed integers and the identity on
 * unsigned ones. likely(c) is a hint for loop partitioning and codegen reads through it.
 */
#include <string.h>

#include "llvm_cg.h"

LLVMValueRef cg_call_fn(cg_llvm *cg, const char *name, LLVMTypeRef ret, int n,
                        LLVMTypeRef const params[], LLVMValueRef const args[]) {
  LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
  if (!fn) {
    LLVMTypeRef fty = LLVMFunctionType(ret, (LLVMTypeRef *)params, (unsigned)n, 0);
    fn = LLVMAddFunction(cg->mod, name, fty);
    cg_add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind");
  }
  return LLVMBuildCall2(cg->b, LLVMGlobalGetValueType(fn), fn, (LLVMValueRef *)args, (unsigned)n,
                        "");
}

LLVMValueRef cg_intrinsic(cg_llvm *cg, const char *name, LLVMTypeRef overload, int n,
                          LLVMValueRef *args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (id == 0) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: no LLVM intrinsic '%s'", name);
    return NULL;
  }
  LLVMValueRef decl = LLVMGetIntrinsicDeclaration(cg->mod, id, &overload, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cg->lctx, id, &overload, 1);
  return LLVMBuildCall2(cg->b, fty, decl, args, (unsigned)n, "");
}

/* A libm function of one float argument; vectors lane by lane. */
static LLVMValueRef cg_libm1(cg_llvm *cg, const char *name32, const char *name64, te_dtype t,
                             LLVMValueRef x) {
  const char *name = t.bits == 32 ? name32 : name64;
  LLVMTypeRef st = t.bits == 32 ? cg->t_f32 : cg->t_f64;
  if (t.lanes == 1) {
    LLVMValueRef r = cg_call_fn(cg, name, st, 1, &st, &x);
    LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
    if (LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                    LLVMGetEnumAttributeKindForName("willreturn", 10)) == NULL) {
      cg_add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "willreturn");
      cg_add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "memory"); /* memory(none) */
    }
    return r;
  }
  LLVMValueRef v = LLVMGetPoison(LLVMTypeOf(x));
  for (unsigned i = 0; i < t.lanes; i++) {
    LLVMValueRef idx = LLVMConstInt(cg->t_i32, i, 0);
    LLVMValueRef lane =
        cg_libm1(cg, name32, name64, ir_elem(t), LLVMBuildExtractElement(cg->b, x, idx, ""));
    v = LLVMBuildInsertElement(cg->b, v, lane, idx, "");
  }
  return v;
}

static const char *cg_intrinsic_name(ir_intrin id) {
  switch (id) {
  case IR_INTRIN_EXP:
    return "llvm.exp";
  case IR_INTRIN_EXP2:
    return "llvm.exp2";
  case IR_INTRIN_LOG:
    return "llvm.log";
  case IR_INTRIN_LOG2:
    return "llvm.log2";
  case IR_INTRIN_LOG10:
    return "llvm.log10";
  case IR_INTRIN_SQRT:
    return "llvm.sqrt";
  case IR_INTRIN_SIN:
    return "llvm.sin";
  case IR_INTRIN_COS:
    return "llvm.cos";
  case IR_INTRIN_FLOOR:
    return "llvm.floor";
  case IR_INTRIN_CEIL:
    return "llvm.ceil";
  case IR_INTRIN_ROUND:
    return "llvm.round";
  case IR_INTRIN_TRUNC:
    return "llvm.trunc";
  case IR_INTRIN_POW:
    return "llvm.pow";
  case IR_INTRIN_FMA:
    return "llvm.fma";
  default:
    return NULL;
  }
}

static LLVMValueRef cg_abs(cg_llvm *cg, te_dtype t, LLVMValueRef x) {
  if (ir_is_float(t))
    return cg_intrinsic(cg, "llvm.fabs", LLVMTypeOf(x), 1, &x);
  if (!ir_is_int(t))
    return x; /* unsigned and bool */
  LLVMValueRef args[2] = {x, LLVMConstInt(cg->t_i1, 0, 0)};
  return cg_intrinsic(cg, "llvm.abs", LLVMTypeOf(x), 2, args);
}

LLVMValueRef cg_call(cg_llvm *cg, te_expr *e) {
  ir_intrin id = e->u.call;
  int n = e->nargs;
  LLVMValueRef args[3];
  if (id == IR_INTRIN_DOT4_U8S8 || id == IR_INTRIN_DOT2_BF16)
    return cg_dot(cg, e);
  if (n > 3 || (int)id < 0 || id >= IR_INTRIN_COUNT) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': malformed call",
             cg->kernel);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!(args[i] = cg_expr(cg, e->args[i])))
      return NULL;
  LLVMValueRef abi = cg_abi_call(cg, id, args); /* the entry's DLTensor reads (llvm_entry.c) */
  if (abi)
    return abi;
  LLVMValueRef own = NULL;
  if (cg->math && cg->math(cg, e, args, &own))
    return own; /* the device target's math library (ptx_libdevice.c) */
  te_dtype t = e->dtype;
  LLVMTypeRef ty = n > 0 ? LLVMTypeOf(args[0]) : NULL;
  LLVMValueRef bits = cg_int_op(cg, id, t, args);
  if (bits)
    return bits;
  if (ir_is_float(t) && (t.bits == 32 || t.bits == 64)) {
    switch (id) {
    case IR_INTRIN_EXP:
      return cg_vm_exp(cg, t, args[0]);
    case IR_INTRIN_LOG:
      return cg_vm_log(cg, t, args[0]);
    case IR_INTRIN_TANH:
      return cg_vm_tanh(cg, t, args[0]);
    case IR_INTRIN_SIGMOID:
      return cg_vm_sigmoid(cg, t, args[0]);
    default:
      break;
    }
  }
  const char *intr = cg_intrinsic_name(id);
  if (intr)
    return cg_intrinsic(cg, intr, ty, n, args);
  switch (id) {
  case IR_INTRIN_LIKELY:
    return args[0];
  case IR_INTRIN_ABS:
    return cg_abs(cg, t, args[0]);
  case IR_INTRIN_TAN:
    return cg_libm1(cg, "tanf", "tan", t, args[0]);
  case IR_INTRIN_ERF:
    return cg_libm1(cg, "erff", "erf", t, args[0]);
  case IR_INTRIN_RSQRT: {
    LLVMValueRef s = cg_intrinsic(cg, "llvm.sqrt", ty, 1, args);
    return s ? LLVMBuildFDiv(cg->b, cg_const_float(cg, t, 1.0), s, "rsqrt") : NULL;
  }
  default:
    break;
  }
  ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': call '%s' has no CPU code",
           cg->kernel, ir_intrin_table[id].name);
  return NULL;
}
