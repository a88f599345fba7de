/* llvm_jit.c — JIT compilation (ORC LLJIT), the symbols JIT'd code may call, asm text, disposal.
 *
 * Each te_module gets its own LLJIT, built from a target machine made for the module's target
 * (so the JIT compiles with -O3 codegen and exactly the target's CPU and features). The module's
 * LLVM context becomes the JIT's thread-safe context; the module keeps one reference to it
 * until it is freed, because the optimized clone used for asm (and objects) lives in it.
 *
 * Generated code calls libte_runtime (te_rt_*), libm (the calls LLVM lowers its math
 * intrinsics to: expf, powf, sincosf, ...) and the C library's memset/memcpy/memmove (which the
 * optimizer forms from loops). All of them are bound by absolute symbols, so the JIT needs
 * nothing exported by the process and works under any link flags (TOOLCHAIN.md).
 */
#define _GNU_SOURCE /* sincos, exp10 */
#include <dlfcn.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm_cg.h"
#include "te/runtime.h"

typedef void (*cg_fnptr)(void);
typedef struct cg_symbol {
  const char *name;
  cg_fnptr addr;
} cg_symbol;

#define CG_SYM(f)                                                                                  \
  { #f, (cg_fnptr)f }
static const cg_symbol cg_symbols[] = {
    CG_SYM(te_rt_error),
    CG_SYM(te_rt_arg_error),
    CG_SYM(te_rt_value_error),
    CG_SYM(te_rt_last_error),
    CG_SYM(te_rt_parallel_for),
    CG_SYM(te_rt_num_threads),
    CG_SYM(te_rt_alloc),
    CG_SYM(te_rt_free),
    CG_SYM(te_rt_cuda_launch),
    CG_SYM(te_rt_cuda_alloc),
    CG_SYM(te_rt_cuda_free),
    CG_SYM(expf),
    CG_SYM(exp),
    CG_SYM(exp2f),
    CG_SYM(exp2),
    CG_SYM(exp10f),
    CG_SYM(exp10),
    CG_SYM(logf),
    CG_SYM(log),
    CG_SYM(log2f),
    CG_SYM(log2),
    CG_SYM(log10f),
    CG_SYM(log10),
    CG_SYM(sinf),
    CG_SYM(sin),
    CG_SYM(cosf),
    CG_SYM(cos),
    CG_SYM(sincosf),
    CG_SYM(sincos),
    CG_SYM(tanf),
    CG_SYM(tan),
    CG_SYM(tanhf),
    CG_SYM(tanh),
    CG_SYM(erff),
    CG_SYM(erf),
    CG_SYM(powf),
    CG_SYM(pow),
    CG_SYM(fmaf),
    CG_SYM(fma),
    CG_SYM(sqrtf),
    CG_SYM(sqrt),
    CG_SYM(fabsf),
    CG_SYM(fabs),
    CG_SYM(floorf),
    CG_SYM(floor),
    CG_SYM(ceilf),
    CG_SYM(ceil),
    CG_SYM(roundf),
    CG_SYM(round),
    CG_SYM(truncf),
    CG_SYM(trunc),
    CG_SYM(rintf),
    CG_SYM(rint),
    CG_SYM(nearbyintf),
    CG_SYM(nearbyint),
    CG_SYM(fminf),
    CG_SYM(fmin),
    CG_SYM(fmaxf),
    CG_SYM(fmax),
    CG_SYM(fmodf),
    CG_SYM(fmod),
    CG_SYM(ldexpf),
    CG_SYM(ldexp),
    CG_SYM(memcpy),
    CG_SYM(memmove),
    CG_SYM(memset),
};
enum { CG_NSYMBOLS = sizeof cg_symbols / sizeof cg_symbols[0] };

bool cg_is_reserved_symbol(const char *name) {
  for (int i = 0; i < CG_NSYMBOLS; i++)
    if (strcmp(cg_symbols[i].name, name) == 0)
      return true;
  return strncmp(name, "te_rt_", 6) == 0;
}

static te_status cg_jit_error(te_module *m, const char *what, LLVMErrorRef err) {
  char *msg = LLVMGetErrorMessage(err);
  te_status st = ir_error(m->ctx, TE_ERR_CODEGEN, "te_build: kernel '%s': %s: %s",
                          m->kernels[0].name, what, msg ? msg : "");
  LLVMDisposeErrorMessage(msg);
  return st;
}

static LLVMErrorRef cg_define_symbols(LLVMOrcLLJITRef jit) {
  LLVMOrcCSymbolMapPair pairs[CG_NSYMBOLS];
  for (int i = 0; i < CG_NSYMBOLS; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, cg_symbols[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)cg_symbols[i].addr;
    pairs[i].Sym.Flags.GenericFlags =
        LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, CG_NSYMBOLS);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(jit), mu);
  if (err)
    LLVMOrcDisposeMaterializationUnit(mu);
  return err;
}

/* The extern stages' functions (te_extern) by the names the module calls them: the stage's
   function, else what dlsym finds for its symbol in this process. */
static te_status cg_define_externs(te_module *m, LLVMOrcLLJITRef jit) {
  const cg_kernel *k = &m->kernels[0];
  if (k->nexterns == 0)
    return TE_OK;
  LLVMOrcCSymbolMapPair pairs[64];
  if (k->nexterns > 64)
    return ir_error(m->ctx, TE_ERR_UNSUPPORTED,
                    "te_build: kernel '%s' calls %d extern stages; this version binds at most 64",
                    k->name, k->nexterns);
  for (int i = 0; i < k->nexterns; i++) {
    const cg_extern_meta *e = &k->externs[i];
    char name[300];
    void *addr = e->fn ? (void *)e->fn : dlsym(RTLD_DEFAULT, e->symbol);
    if (!addr) {
      for (int j = 0; j < i; j++)
        LLVMOrcReleaseSymbolStringPoolEntry(pairs[j].Name);
      return ir_error(m->ctx, TE_ERR_NOT_FOUND,
                      "te_build: kernel '%s': extern stage '%s': symbol '%s' is not defined in "
                      "this process (dlsym); give te_extern the function, or export the symbol "
                      "from the program (-rdynamic) or a loaded library",
                      k->name, e->stage, e->symbol);
    }
    if (e->symbol)
      snprintf(name, sizeof name, "%s", e->symbol);
    else
      cg_extern_private_name(k->name, e->stage, name, sizeof name);
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addr;
    pairs[i].Sym.Flags.GenericFlags =
        LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(pairs, (size_t)k->nexterns);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(jit), mu);
  if (err) {
    LLVMOrcDisposeMaterializationUnit(mu);
    return cg_jit_error(m, "cannot bind the extern stages' functions", err);
  }
  return TE_OK;
}

static LLVMErrorRef cg_make_jit(te_module *m, LLVMOrcLLJITRef *jit) {
  LLVMTargetMachineRef jtm = tg_llvm_machine(m->ctx, m->target, true);
  if (!jtm)
    return LLVMCreateStringError("no target machine");
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jtm));
  return LLVMOrcCreateLLJIT(jit, builder);
}

te_status cg_jit_add(te_module *m, cg_llvm_module *lm, LLVMModuleRef mod) {
  LLVMOrcLLJITRef jit = NULL;
  LLVMErrorRef err = cg_make_jit(m, &jit);
  if (err) {
    LLVMDisposeModule(mod);
    return cg_jit_error(m, "cannot create the JIT", err);
  }
  lm->jit = jit;
  if ((err = cg_define_symbols(jit))) {
    LLVMDisposeModule(mod);
    return cg_jit_error(m, "cannot bind the runtime's symbols", err);
  }
  te_status xs = cg_define_externs(m, jit);
  if (xs != TE_OK) {
    LLVMDisposeModule(mod);
    return xs;
  }
  LLVMOrcThreadSafeContextRef tsctx = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(lm->lctx);
  lm->tsctx = tsctx;
  lm->lctx = NULL; /* owned by the thread-safe context now */
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsctx);
  /* the JIT owns tsm from here on, even when it refuses it: never dispose of it */
  if ((err = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit), tsm)))
    return cg_jit_error(m, "the JIT refused the module", err);
  for (int i = 0; i < m->nkernels; i++) {
    LLVMOrcExecutorAddress addr = 0;
    if ((err = LLVMOrcLLJITLookup(jit, &addr, m->kernels[i].name)))
      return cg_jit_error(m, "JIT compilation failed", err);
    m->kernels[i].entry = (void *)(uintptr_t)addr;
  }
  return TE_OK;
}

char *cg_emit_asm(te_module *m) {
  cg_llvm_module *lm = m->llvm;
  if (!lm || !lm->opt || !lm->tm) {
    ir_error(m->ctx, TE_ERR_NOT_FOUND, "te_module_source: the module has no compiled code");
    return NULL;
  }
  /* code generation changes the module it runs on: emit from a copy */
  LLVMModuleRef tmp = LLVMCloneModule(lm->opt);
  LLVMMemoryBufferRef buf = NULL;
  char *err = NULL;
  char *text = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(lm->tm, tmp, LLVMAssemblyFile, &err, &buf)) {
    ir_error(m->ctx, TE_ERR_CODEGEN, "te_module_source: LLVM could not write asm: %s",
             err ? err : "");
    LLVMDisposeMessage(err);
  } else {
    size_t n = LLVMGetBufferSize(buf);
    text = ir_malloc(m->ctx, n + 1);
    if (text) {
      memcpy(text, LLVMGetBufferStart(buf), n);
      text[n] = '\0';
    } else {
      ir_error(m->ctx, TE_ERR_NOMEM, "te_module_source: out of memory");
    }
    LLVMDisposeMemoryBuffer(buf);
  }
  LLVMDisposeModule(tmp);
  return text;
}

void cg_llvm_module_free(cg_llvm_module *lm) {
  if (!lm)
    return;
  if (lm->opt)
    LLVMDisposeModule(lm->opt);
  if (lm->mod)
    LLVMDisposeModule(lm->mod);
  if (lm->jit)
    LLVMConsumeError(LLVMOrcDisposeLLJIT(lm->jit));
  if (lm->tsctx)
    LLVMOrcDisposeThreadSafeContext(lm->tsctx);
  if (lm->lctx)
    LLVMContextDispose(lm->lctx);
  if (lm->tm)
    LLVMDisposeTargetMachine(lm->tm);
  free(lm);
}
