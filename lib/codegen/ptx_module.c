/* ptx_module.c — te_build for a "cuda" target: the GPU module (gpu.h) to PTX, and its host entry.
 *
 *   1. One NVPTX LLVM module (triple nvptx64-nvidia-cuda, CPU sm_XX of the target) holds every
 *      kernel (ptx_kernel.c) and the libdevice functions they call (ptx_libdevice.c); it is
 *      verified, optimized with default<O3> for the NVPTX target
 *      machine, kept as text ("ll") and written as PTX ("ptx", TE_SAVE_PTX).
 *   2. The PTX and the kernels' names go into a te_rt_cuda_module (libte_runtime), which the
 *      driver loads on the first launch.
 *   3. The host entry NAME(DLTensor *, ..., scalars) is compiled for this CPU and JIT'd
 *      (cg_llvm_compile_host with ptx_host.c's body): te_module_call and te_module_entry call it
 *      as they call a CPU kernel. Without a CUDA driver the build still succeeds (PTX needs no
 *      GPU); calling it returns TE_ERR_RUNTIME "no CUDA driver".
 * The device LLVM context is disposed once the texts are made.
 */
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "te/runtime.h"

static pthread_once_t ptx_once = PTHREAD_ONCE_INIT;

static void ptx_init_once(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

static LLVMTargetMachineRef ptx_target_machine(te_ctx *ctx, const te_target *t) {
  pthread_once(&ptx_once, ptx_init_once);
  LLVMTargetRef lt = NULL;
  char *err = NULL;
  if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &lt, &err)) {
    ir_error(ctx, TE_ERR_TARGET, "te_build: this LLVM has no NVPTX back end: %s", err ? err : "");
    LLVMDisposeMessage(err);
    return NULL;
  }
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(lt, "nvptx64-nvidia-cuda", t->cpu, "", LLVMCodeGenLevelAggressive,
                              LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm)
    ir_error(ctx, TE_ERR_TARGET, "te_build: LLVM cannot make an NVPTX target machine for %s",
             t->cpu);
  return tm;
}

static char *ptx_copy(const char *s, size_t n) {
  char *r = ir_malloc(NULL, n + 1);
  if (r) {
    memcpy(r, s, n);
    r[n] = '\0';
  }
  return r;
}

/* Verify, O3, then the IR text and the PTX. */
static te_status ptx_finish(cg_llvm *cg, char **ll, char **ptx) {
  char *msg = NULL;
  if (LLVMVerifyModule(cg->mod, LLVMReturnStatusAction, &msg)) {
    te_status st = ir_error(cg->ctx, TE_ERR_CODEGEN,
                            "te_build: kernel '%s': LLVM rejected the generated NVPTX IR (a bug "
                            "in te): %s",
                            cg->kernel, msg ? msg : "");
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMDisposeMessage(msg);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(cg->mod, "default<O3>", cg->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    char *e = LLVMGetErrorMessage(err);
    te_status st = ir_error(cg->ctx, TE_ERR_CODEGEN, "te_build: the LLVM optimizer failed: %s", e);
    LLVMDisposeErrorMessage(e);
    return st;
  }
  char *text = LLVMPrintModuleToString(cg->mod);
  *ll = text ? ptx_copy(text, strlen(text)) : NULL;
  LLVMDisposeMessage(text);
  LLVMMemoryBufferRef buf = NULL;
  char *emsg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(cg->tm, cg->mod, LLVMAssemblyFile, &emsg, &buf)) {
    te_status st = ir_error(cg->ctx, TE_ERR_CODEGEN, "te_build: LLVM could not write PTX: %s",
                            emsg ? emsg : "");
    LLVMDisposeMessage(emsg);
    return st;
  }
  *ptx = ptx_copy(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
  LLVMDisposeMemoryBuffer(buf);
  if (!*ll || !*ptx)
    return ir_error(cg->ctx, TE_ERR_NOMEM, "te_build: out of memory");
  return TE_OK;
}

/* The device half: every kernel into one NVPTX module; its texts into ll and ptx. */
static te_status ptx_device(te_module *m, lw_func *f, char **ll, char **ptx) {
  LLVMTargetMachineRef tm = ptx_target_machine(m->ctx, m->target);
  if (!tm)
    return TE_ERR_TARGET;
  cg_llvm cg = {0};
  cg_llvm_setup(&cg, m, f, tm, "nvptx64-nvidia-cuda");
  te_status st = TE_OK;
  for (int i = 0; st == TE_OK && i < f->gpu->nkernels; i++)
    if (!cg_ptx_kernel(&cg, &f->gpu->kernels[i]))
      st = ir_failed(m->ctx) ? te_last_status(m->ctx) : TE_ERR_CODEGEN;
  if (st == TE_OK)
    st = cg_ptx_link_libdevice(&cg);
  if (st == TE_OK)
    st = ptx_finish(&cg, ll, ptx);
  LLVMDisposeBuilder(cg.b);
  LLVMDisposeModule(cg.mod);
  LLVMContextDispose(cg.lctx);
  LLVMDisposeTargetMachine(tm);
  return st;
}

static void ptx_free_rt(void *p) { te_rt_cuda_module_free(p); }

te_status cg_cuda_compile(te_module *m, lw_func *f) {
  te_ctx *ctx = m->ctx;
  if (!f || !f->gpu)
    return ir_error(ctx, TE_ERR_INTERNAL, "internal: cg_cuda_compile: no host/device split");
  char *ll = NULL, *ptx = NULL;
  te_status st = ptx_device(m, f, &ll, &ptx);
  const char **names = ir_alloc(ctx, sizeof *names * (size_t)(f->gpu->nkernels + 1));
  if (st == TE_OK && !names)
    st = TE_ERR_NOMEM;
  for (int i = 0; st == TE_OK && i < f->gpu->nkernels; i++)
    names[i] = f->gpu->kernels[i].name;
  te_rt_cuda_module *rt = st == TE_OK ? te_rt_cuda_module_new(ptx, f->gpu->nkernels, names) : NULL;
  if (st == TE_OK && !rt)
    st = ir_error(ctx, TE_ERR_NOMEM, "te_build: out of memory");
  if (rt && !ir_ctx_on_free(ctx, ptx_free_rt, rt)) {
    te_rt_cuda_module_free(rt);
    rt = NULL;
    st = TE_ERR_NOMEM;
  }
  te_target *t = m->target;
  if (st == TE_OK && !t->host && !(t->host = te_target_parse(ctx, "llvm")))
    st = te_last_status(ctx);
  cg_host_hooks *hooks = ir_alloc(ctx, sizeof *hooks);
  if (st == TE_OK && !hooks)
    st = TE_ERR_NOMEM;
  if (st == TE_OK) {
    *hooks = (cg_host_hooks){cg_cuda_host_impl, rt};
    st = cg_llvm_compile_host(m, f, t->host, hooks);
  }
  if (st == TE_OK) {
    free(m->ll_text); /* the host entry's IR: the module shows the device code */
    m->ll_text = ll, ll = NULL;
    m->ptx_text = ptx, ptx = NULL;
  }
  free(ll);
  free(ptx);
  return st;
}
