/* llvm_module.c — the compile driver: a lowered function -> optimized LLVM module -> JIT.
 *
 * cg_llvm_compile sets up one LLVM context and module for the te_module (triple and data layout
 * from the target machine, so the optimizer sees the real target), writes the entry point and
 * the loops (llvm_entry.c), verifies the module, runs the new pass manager's default<O3>, keeps
 * the optimized IR as text and an optimized clone (for asm, and for the objects, libraries and
 * headers of save*.c), and hands the module to the JIT when the target is the host.
 *
 * LLVMVerifyModule runs in every build type, not only debug ones: it costs a small fraction of
 * O3 and turns a te bug that produced bad IR into TE_ERR_CODEGEN instead of a crash inside LLVM.
 *
 * What the module keeps is copied to the context (names, dtypes, the trace) before the build's
 * scratch arena ends; the LLVM objects live in a cg_llvm_module freed with the context.
 */
#define _POSIX_C_SOURCE 200809L
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llvm_cg.h"

double cg_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A fresh LLVM context, module and builder for f, the common types, and the module's triple and
   data layout from tm. Shared by the CPU and NVPTX back ends. */
void cg_llvm_setup(cg_llvm *cg, te_module *m, lw_func *f, LLVMTargetMachineRef tm,
                   const char *triple) {
  cg->ctx = m->ctx;
  cg->target = m->target;
  cg->kernel = f->name;
  cg->tm = tm;
  cg->lctx = LLVMContextCreate();
  cg->mod = LLVMModuleCreateWithNameInContext(f->name, cg->lctx);
  cg->b = LLVMCreateBuilderInContext(cg->lctx);
  cg->t_void = LLVMVoidTypeInContext(cg->lctx);
  cg->t_i1 = LLVMInt1TypeInContext(cg->lctx);
  cg->t_i8 = LLVMInt8TypeInContext(cg->lctx);
  cg->t_i16 = LLVMInt16TypeInContext(cg->lctx);
  cg->t_i32 = LLVMInt32TypeInContext(cg->lctx);
  cg->t_i64 = LLVMInt64TypeInContext(cg->lctx);
  cg->t_f32 = LLVMFloatTypeInContext(cg->lctx);
  cg->t_f64 = LLVMDoubleTypeInContext(cg->lctx);
  cg->t_ptr = LLVMPointerTypeInContext(cg->lctx, 0);
  /* DLPack v0.6: data, device {type, id}, ndim, dtype {code, bits, lanes}, shape, strides,
     byte_offset */
  LLVMTypeRef dev[2] = {cg->t_i32, cg->t_i32};
  LLVMTypeRef dt[3] = {cg->t_i8, cg->t_i8, cg->t_i16};
  LLVMTypeRef fields[7] = {cg->t_ptr, LLVMStructTypeInContext(cg->lctx, dev, 2, 0),
                           cg->t_i32, LLVMStructTypeInContext(cg->lctx, dt, 3, 0),
                           cg->t_ptr, cg->t_ptr,
                           cg->t_i64};
  cg->t_dltensor = LLVMStructTypeInContext(cg->lctx, fields, 7, 0);
  LLVMSetTarget(cg->mod, triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(cg->mod, dl);
  LLVMDisposeTargetData(dl);
}

/* The kernel's record in the module, in the context's memory (every back end). */
te_status cg_kernel_record(te_module *m, lw_func *f) {
  te_ctx *ctx = m->ctx;
  cg_kernel *k = ir_alloc_persistent(ctx, sizeof *k);
  if (!k)
    return TE_ERR_NOMEM;
  k->name = ir_strdup_persistent(ctx, f->name);
  k->trace = f->trace ? ir_strdup_persistent(ctx, f->trace) : NULL;
  k->scalar_dtypes = ir_alloc_persistent(ctx, sizeof(te_dtype) * (size_t)(f->nargs + 1));
  k->tensor_ndim = ir_alloc_persistent(ctx, sizeof(int) * (size_t)(f->nargs + 1));
  if (!k->name || !k->scalar_dtypes || !k->tensor_ndim)
    return TE_ERR_NOMEM;
  for (int i = 0; i < f->nargs; i++) {
    if (f->args[i].is_buffer)
      k->tensor_ndim[k->ntensors++] = f->args[i].buffer->ndim;
    else
      k->scalar_dtypes[k->nscalars++] = f->args[i].var->dtype;
  }
  k->func = f;
  m->kernels = k;
  m->nkernels = 1;
  return cg_kernel_meta(ctx, k, f);
}

static te_status cg_llvm_error(te_ctx *ctx, const char *kernel, const char *what, char *msg) {
  te_status st = ir_error(ctx, TE_ERR_CODEGEN, "te_build: kernel '%s': %s (a bug in te): %s",
                          kernel, what, msg ? msg : "");
  return st;
}

/* Verify, optimize, print. Returns TE_OK or TE_ERR_CODEGEN. */
static te_status cg_optimize(cg_llvm *cg, te_module *m) {
  char *msg = NULL;
  if (LLVMVerifyModule(cg->mod, LLVMReturnStatusAction, &msg)) {
    te_status st = cg_llvm_error(cg->ctx, cg->kernel, "LLVM rejected the generated IR", msg);
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMDisposeMessage(msg);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(cg->mod, "default<O3>", cg->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    char *e = LLVMGetErrorMessage(err);
    te_status st = cg_llvm_error(cg->ctx, cg->kernel, "the LLVM optimizer failed", e);
    LLVMDisposeErrorMessage(e);
    return st;
  }
  char *text = LLVMPrintModuleToString(cg->mod);
  m->ll_text = text ? ir_strdup_malloc(cg->ctx, text) : NULL;
  LLVMDisposeMessage(text);
  if (!m->ll_text)
    return ir_error(cg->ctx, TE_ERR_NOMEM, "te_build: out of memory");
  return TE_OK;
}

static te_status cg_check_module(te_module *m, lw_func *f) {
  if (!m || !f)
    return m ? ir_error(m->ctx, TE_ERR_INVALID_ARG, "cg_llvm_compile: NULL function")
             : TE_ERR_INVALID_ARG;
  if (m->nkernels > 0 || m->llvm)
    return ir_error(m->ctx, TE_ERR_UNSUPPORTED,
                    "te_build: kernel '%s': the module already holds kernel '%s' (build one "
                    "module a kernel)",
                    f->name, m->kernels ? m->kernels[0].name : "?");
  if (!m->target || m->target->kind != TG_LLVM)
    return ir_error(m->ctx, TE_ERR_TARGET, "te_build: kernel '%s': not an LLVM target", f->name);
  return TE_OK;
}

static te_status cg_compile(te_module *m, lw_func *f, const cg_host_hooks *host);

te_status cg_llvm_compile(te_module *m, lw_func *f) { return cg_compile(m, f, NULL); }

te_status cg_llvm_compile_host(te_module *m, lw_func *f, te_target *host,
                               const cg_host_hooks *hooks) {
  /* the host code is compiled (and JIT'd) for the CPU: the module holds that target meanwhile */
  te_target *gpu = m->target;
  m->target = host;
  te_status st = cg_compile(m, f, hooks);
  m->target = gpu;
  return st;
}

static te_status cg_compile(te_module *m, lw_func *f, const cg_host_hooks *host) {
  te_status st = cg_check_module(m, f);
  if (st != TE_OK)
    return st;
  te_status before = te_last_status(m->ctx);
  double t0 = cg_now();
  LLVMTargetMachineRef tm = tg_llvm_machine(m->ctx, m->target, false);
  if (!tm)
    return TE_ERR_TARGET;
  cg_llvm_module *lm = ir_calloc(m->ctx, 1, sizeof *lm);
  if (!lm) {
    LLVMDisposeTargetMachine(tm);
    return ir_error(m->ctx, TE_ERR_NOMEM, "te_build: out of memory");
  }
  cg_llvm cg = {0};
  cg_llvm_setup(&cg, m, f, tm, m->target->triple);
  cg.host = host;
  lm->lctx = cg.lctx;
  lm->tm = tm;
  lm->mod = cg.mod;
  m->llvm = lm; /* freed with the module (module.c) */

  st = cg_kernel_record(m, f);
  if (st == TE_OK && !cg_entry(&cg, f))
    st = TE_ERR_CODEGEN;
  LLVMDisposeBuilder(cg.b);
  if (st == TE_OK)
    st = cg_optimize(&cg, m);
  if (st != TE_OK) {
    if (m->kernels)
      m->kernels[0].entry = NULL;
    /* the recorded status is more precise (TE_ERR_TARGET, TE_ERR_UNSUPPORTED, ...) */
    return before == TE_OK && te_last_status(m->ctx) != TE_OK ? te_last_status(m->ctx) : st;
  }
  lm->opt = LLVMCloneModule(cg.mod);
  double t1 = cg_now();
  m->times.llvm_s = t1 - t0;
  if (m->target->is_host) {
    lm->mod = NULL; /* the JIT takes it */
    st = cg_jit_add(m, lm, cg.mod);
  }
  m->times.jit_s = cg_now() - t1;
  return st;
}
