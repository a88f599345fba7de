/* ptx_libdevice.c — math calls in CUDA kernels through NVIDIA's libdevice.
 *
 * LLVM's NVPTX back end lowers llvm.sin, llvm.pow, ... only to libcalls that do not exist on the
 * device. The CUDA toolkit ships the device's math library as LLVM bitcode
 * (nvvm/libdevice/libdevice.10.bc: __nv_sinf, __nv_pow, ...). A kernel's math call becomes a call
 * of the libdevice function (cg_ptx_libdevice_math, the cg_llvm.math hook); once every kernel is
 * written, cg_ptx_link_libdevice links the bitcode into the NVPTX module with LLVM's linker and
 * makes every function that is not a kernel internal, so O3 inlines what is used and drops the
 * rest (the PTX holds only the functions the kernels call). libdevice's __nvvm_reflect queries
 * (__CUDA_FTZ, __CUDA_ARCH) are answered by the NVPTX pipeline's NVVMReflect pass: no flush to
 * zero, the target's SM.
 *
 * The file is $TE_LIBDEVICE when that is set (the path of the file; nothing else is tried then),
 * else the first of $CUDA_HOME, $CUDA_PATH and /usr/local/cuda + /nvvm/libdevice/libdevice.10.bc
 * that exists. Its bytes are read once per process.
 */
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptx.h"

enum { CG_PTX_KERNEL_CC = 71 };

static pthread_once_t ld_once = PTHREAD_ONCE_INIT;
static char ld_path[1024]; /* "" when not found */
static char *ld_bytes;     /* the file, read once; kept to exit */
static size_t ld_size;

static bool ld_try(const char *dir, const char *tail) {
  if (!dir || !*dir)
    return false;
  snprintf(ld_path, sizeof ld_path, "%s%s", dir, tail);
  if (access(ld_path, R_OK) == 0)
    return true;
  ld_path[0] = '\0';
  return false;
}

/* The file's bytes into ld_bytes; an empty or unreadable file reads as one of no bytes, which
   the bitcode reader then refuses with a message naming the file. */
static void ld_read(void) {
  FILE *f = fopen(ld_path, "rb");
  if (!f)
    return;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (ld_bytes = malloc((size_t)n)) &&
        fread(ld_bytes, 1, (size_t)n, f) == (size_t)n)
      ld_size = (size_t)n;
  }
  fclose(f);
  if (!ld_size) {
    free(ld_bytes);
    ld_bytes = NULL;
  }
}

static void ld_find(void) {
  static const char tail[] = "/nvvm/libdevice/libdevice.10.bc";
  const char *own = getenv("TE_LIBDEVICE");
  if (own && *own) { /* the user's choice: no other place is tried */
    if (ld_try(own, ""))
      ld_read();
    return;
  }
  if (!ld_try(getenv("CUDA_HOME"), tail) && !ld_try(getenv("CUDA_PATH"), tail) &&
      !ld_try("/usr/local/cuda", tail))
    return;
  ld_read();
}

const char *cg_libdevice_path(void) {
  pthread_once(&ld_once, ld_find);
  return ld_path[0] ? ld_path : NULL;
}

/* libdevice's name for a call: __nv_NAME for f64, __nv_NAMEf for f32; NULL for calls the NVPTX
   back end has instructions for (sqrt, floor, fma, ...) and for sigmoid (llvm_vmath.c's code). */
static const char *ld_base_name(ir_intrin id) {
  switch (id) {
  case IR_INTRIN_EXP:
    return "exp";
  case IR_INTRIN_EXP2:
    return "exp2";
  case IR_INTRIN_LOG:
    return "log";
  case IR_INTRIN_LOG2:
    return "log2";
  case IR_INTRIN_LOG10:
    return "log10";
  case IR_INTRIN_SIN:
    return "sin";
  case IR_INTRIN_COS:
    return "cos";
  case IR_INTRIN_TAN:
    return "tan";
  case IR_INTRIN_TANH:
    return "tanh";
  case IR_INTRIN_POW:
    return "pow";
  case IR_INTRIN_ERF:
    return "erf";
  default:
    return NULL;
  }
}

/* libdevice has scalar functions only: a vector call is one call a lane. */
bool cg_ptx_libdevice_math(cg_llvm *cg, const te_expr *call, LLVMValueRef *args,
                           LLVMValueRef *out) {
  te_dtype t = call->dtype;
  const char *base = ld_base_name(call->u.call);
  if (!base || !ir_is_float(t) || call->nargs > 2 || (t.bits != 32 && t.bits != 64))
    return false;
  char name[32];
  snprintf(name, sizeof name, "__nv_%s%s", base, t.bits == 32 ? "f" : "");
  LLVMTypeRef ft = t.bits == 32 ? cg->t_f32 : cg->t_f64;
  LLVMTypeRef params[2] = {ft, ft};
  if (t.lanes == 1) {
    *out = cg_call_fn(cg, name, ft, call->nargs, params, args);
    return true;
  }
  LLVMValueRef v = LLVMGetPoison(cg_type(cg, t));
  for (unsigned l = 0; l < t.lanes; l++) {
    LLVMValueRef at = LLVMConstInt(cg->t_i32, l, 0), lane[2];
    for (int a = 0; a < call->nargs; a++)
      lane[a] = LLVMBuildExtractElement(cg->b, args[a], at, "");
    v = LLVMBuildInsertElement(cg->b, v, cg_call_fn(cg, name, ft, call->nargs, params, lane), at,
                               "");
  }
  *out = v;
  return true;
}

/* Every defined function but the kernels, and every global variable, internal: only what the
   kernels use survives O3's global dead code elimination. */
static void ld_internalize(LLVMModuleRef mod) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && LLVMGetFunctionCallConv(f) != CG_PTX_KERNEL_CC)
      LLVMSetLinkage(f, LLVMInternalLinkage);
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsDeclaration(g))
      LLVMSetLinkage(g, LLVMInternalLinkage);
}

static bool ld_used(LLVMModuleRef mod) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    if (LLVMIsDeclaration(f) && n > 5 && !strncmp(name, "__nv_", 5))
      return true;
  }
  return false;
}

/* LLVM reports bitcode and link errors through the context's diagnostic handler, whose default
   exits the process on an error: this one keeps the first message instead. */
static void ld_diagnostic(LLVMDiagnosticInfoRef d, void *data) {
  char *msg = data;
  if (LLVMGetDiagInfoSeverity(d) != LLVMDSError || msg[0])
    return;
  char *text = LLVMGetDiagInfoDescription(d);
  snprintf(msg, 256, "%s", text ? text : "");
  LLVMDisposeMessage(text);
}

te_status cg_ptx_link_libdevice(cg_llvm *cg) {
  if (!ld_used(cg->mod))
    return TE_OK;
  if (!cg_libdevice_path())
    return ir_error(cg->ctx, TE_ERR_INTERNAL,
                    "internal: te_build: a libdevice call without libdevice");
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRange(ld_bytes ? ld_bytes : "", ld_size, "libdevice", 0);
  LLVMModuleRef lib = NULL;
  char why[256] = "";
  LLVMDiagnosticHandler old = LLVMContextGetDiagnosticHandler(cg->lctx);
  void *old_data = LLVMContextGetDiagnosticContext(cg->lctx);
  LLVMContextSetDiagnosticHandler(cg->lctx, ld_diagnostic, why);
  bool bad = !buf || !ld_size || LLVMParseBitcodeInContext2(cg->lctx, buf, &lib);
  if (buf)
    LLVMDisposeMemoryBuffer(buf);
  if (bad) {
    LLVMContextSetDiagnosticHandler(cg->lctx, old, old_data);
    return ir_error(cg->ctx, TE_ERR_TARGET,
                    "te_build: %s is not LLVM bitcode this LLVM can read (%s; the CUDA toolkit's "
                    "libdevice expected: TE_LIBDEVICE names the file)",
                    ld_path, why[0] ? why : "empty or unreadable");
  }
  /* libdevice says "nvptx64-nvidia-gpulibs" and a data layout of its own: take the module's, so
     the linker has nothing to warn about */
  LLVMSetTarget(lib, LLVMGetTarget(cg->mod));
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(cg->mod));
  bool unlinked = LLVMLinkModules2(cg->mod, lib); /* lib is consumed either way */
  LLVMContextSetDiagnosticHandler(cg->lctx, old, old_data);
  if (unlinked)
    return ir_error(cg->ctx, TE_ERR_CODEGEN,
                    "te_build: LLVM could not link %s into the kernels' module: %s", ld_path, why);
  ld_internalize(cg->mod);
  /* drop the ~350 unused functions now, so O3 does not optimize them first */
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(cg->mod, "globaldce", cg->tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    char *e = LLVMGetErrorMessage(err);
    te_status st = ir_error(cg->ctx, TE_ERR_CODEGEN, "te_build: LLVM's globaldce failed: %s", e);
    LLVMDisposeErrorMessage(e);
    return st;
  }
  return TE_OK;
}
