/* save_object.c — the code of one or more modules as one LLVM module, an object, asm or IR.
 *
 * Every te_module keeps an optimized clone of its LLVM module (llvm_module.c), in that module's
 * own LLVM context. To write several modules' kernels into one object, each clone is written
 * as bitcode and read back into one fresh LLVM context, and the modules are linked there
 * (LLVMLinkModules2). Nothing is optimized again: each kernel was optimized for the target when
 * it was built. The kernels' helpers (NAME_impl, NAME_parK, NAME_parK_body) and message
 * strings have internal or private linkage, so the object's only global symbols are the kernels
 * themselves, and libraries made by separate calls link into one program without clashes.
 *
 * Objects are ELF, position independent (the target machine is made with LLVMRelocPIC), for
 * any triple and CPU te can target (x86_64, aarch64): a target for another platform (Mach-O,
 * COFF) or without an object writer is TE_ERR_TARGET, checked before anything is written.
 *
 * LLVM reports link and code-generation errors through the context's diagnostic handler, whose
 * default exits the process on an error; the fresh context gets a handler that keeps the first
 * error's text for te's message instead.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup */
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Linker.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llvm_cg.h"
#include "save.h"

/* ---------------------------------------------------------------- targets */

static bool cg_has(const char *s, const char *part) { return strstr(s, part) != NULL; }

/* The object format LLVM picks for a triple (the parts te's triples can have). */
static const char *cg_object_format(const char *triple) {
  size_t n = strlen(triple);
  if (n > 4 && !strcmp(triple + n - 4, "-elf"))
    return "ELF";
  if (cg_has(triple, "-apple") || cg_has(triple, "darwin") || cg_has(triple, "macos") ||
      cg_has(triple, "-ios"))
    return "Mach-O";
  if (cg_has(triple, "windows") || cg_has(triple, "win32") || cg_has(triple, "mingw") ||
      cg_has(triple, "cygwin"))
    return "COFF";
  return "ELF";
}

const char *cg_target_brief(const te_target *t, char *buf, size_t size) {
  if (t->kind == TG_LLVM && t->triple && t->cpu)
    snprintf(buf, size, "llvm -mtriple=%s -mcpu=%s%s", t->triple, t->cpu,
             t->features && *t->features ? " -mattr=..." : "");
  else
    snprintf(buf, size, "%s", t->str ? t->str : "?");
  return buf;
}

te_status cg_check_object_target(te_ctx *ctx, const te_target *t, const char *fn) {
  char tb[256];
  if (t->kind != TG_LLVM)
    return ir_error(ctx, TE_ERR_TARGET,
                    "%s: target '%s' cannot write objects or static libraries (a GPU target: "
                    "save its code with TE_SAVE_PTX or TE_SAVE_SPIRV)",
                    fn, cg_target_brief(t, tb, sizeof tb));
  tg_llvm_init();
  LLVMTargetRef lt = NULL;
  char *err = NULL;
  bool ok = !LLVMGetTargetFromTriple(t->triple, &lt, &err) && LLVMTargetHasAsmBackend(lt);
  LLVMDisposeMessage(err);
  if (!ok)
    return ir_error(ctx, TE_ERR_TARGET, "%s: target '%s': LLVM has no object writer for '%s'", fn,
                    cg_target_brief(t, tb, sizeof tb), t->triple);
  const char *format = cg_object_format(t->triple);
  if (strcmp(format, "ELF"))
    return ir_error(ctx, TE_ERR_TARGET,
                    "%s: target '%s' writes %s objects; te writes ELF objects and System V "
                    "archives only (TE_SAVE_LLVM_IR and TE_SAVE_ASM work for it)",
                    fn, cg_target_brief(t, tb, sizeof tb), format);
  return TE_OK;
}

/* ---------------------------------------------------------------- diagnostics */

typedef struct cg_diag {
  char *first_error; /* malloc'd */
} cg_diag;

static void cg_diag_handler(LLVMDiagnosticInfoRef info, void *p) {
  cg_diag *d = p;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || d->first_error)
    return;
  char *msg = LLVMGetDiagInfoDescription(info);
  d->first_error = msg ? ir_strdup_malloc(NULL, msg) : NULL;
  LLVMDisposeMessage(msg);
}

static cg_diag *cg_diag_of(cg_linked *l) {
  return l->lctx ? LLVMContextGetDiagnosticContext(l->lctx) : NULL;
}

/* ---------------------------------------------------------------- linking */

void cg_linked_free(cg_linked *l) {
  if (!l)
    return;
  cg_diag *d = cg_diag_of(l);
  if (l->mod)
    LLVMDisposeModule(l->mod);
  if (l->lctx)
    LLVMContextDispose(l->lctx);
  if (l->tm)
    LLVMDisposeTargetMachine(l->tm);
  if (d) {
    free(d->first_error);
    free(d);
  }
  *l = (cg_linked){0};
}

/* The module's optimized code, read into lctx. NULL with the error recorded. */
static LLVMModuleRef cg_copy_into(te_ctx *ctx, te_module *m, LLVMContextRef lctx) {
  cg_llvm_module *lm = m->llvm;
  if (!lm || !lm->opt) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_module_save: kernel '%s' has no compiled code",
             m->nkernels ? m->kernels[0].name : "?");
    return NULL;
  }
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(lm->opt);
  LLVMModuleRef copy = NULL;
  if (!bc || LLVMParseBitcodeInContext2(lctx, bc, &copy)) {
    ir_error(ctx, TE_ERR_CODEGEN,
             "te_module_save: kernel '%s': LLVM could not copy its code "
             "(a bug in te)",
             m->kernels[0].name);
    copy = NULL;
  }
  if (bc)
    LLVMDisposeMemoryBuffer(bc);
  return copy;
}

te_status cg_link_modules(te_ctx *ctx, int n, te_module *const mods[], const char *name,
                          cg_linked *out) {
  *out = (cg_linked){0};
  cg_diag *d = ir_calloc(ctx, 1, sizeof *d);
  out->lctx = LLVMContextCreate();
  if (!d || !out->lctx) {
    free(d);
    return ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory");
  }
  LLVMContextSetDiagnosticHandler(out->lctx, cg_diag_handler, d);
  out->tm = tg_llvm_machine(ctx, mods[0]->target, false);
  if (!out->tm)
    return TE_ERR_TARGET;
  for (int i = 0; i < n; i++) {
    LLVMModuleRef copy = cg_copy_into(ctx, mods[i], out->lctx);
    if (!copy)
      return te_last_status(ctx) != TE_OK ? te_last_status(ctx) : TE_ERR_CODEGEN;
    if (!out->mod) {
      out->mod = copy;
      continue;
    }
    if (LLVMLinkModules2(out->mod, copy)) /* consumes copy */
      return ir_error(ctx, TE_ERR_CODEGEN,
                      "te_module_save: LLVM could not link kernel '%s' into '%s' (a bug in "
                      "te): %s",
                      mods[i]->kernels[0].name, name,
                      d->first_error ? d->first_error : "no message");
  }
  LLVMSetModuleIdentifier(out->mod, name, strlen(name));
  LLVMSetSourceFileName(out->mod, name, strlen(name));
  return TE_OK;
}

/* ---------------------------------------------------------------- emission */

te_status cg_emit(te_ctx *ctx, cg_linked *l, LLVMCodeGenFileType kind, cg_blob *out) {
  *out = (cg_blob){0};
  /* code generation changes the module it runs on: emit from a copy */
  LLVMModuleRef tmp = LLVMCloneModule(l->mod);
  LLVMMemoryBufferRef buf = NULL;
  char *err = NULL;
  te_status st = TE_OK;
  const char *what = kind == LLVMObjectFile ? "an object" : "asm";
  if (!tmp) {
    st = ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory");
  } else if (LLVMTargetMachineEmitToMemoryBuffer(l->tm, tmp, kind, &err, &buf)) {
    cg_diag *d = cg_diag_of(l);
    st = ir_error(ctx, TE_ERR_CODEGEN, "te_module_save: LLVM could not write %s: %s", what,
                  err && *err           ? err
                  : d && d->first_error ? d->first_error
                                        : "no message");
  } else {
    out->size = LLVMGetBufferSize(buf);
    out->data = ir_malloc(NULL, out->size + 1);
    if (out->data) {
      memcpy(out->data, LLVMGetBufferStart(buf), out->size);
      out->data[out->size] = '\0';
    } else {
      out->size = 0;
      st = ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory");
    }
  }
  LLVMDisposeMessage(err);
  if (buf)
    LLVMDisposeMemoryBuffer(buf);
  if (tmp)
    LLVMDisposeModule(tmp);
  return st;
}

te_status cg_emit_ll(te_ctx *ctx, cg_linked *l, cg_blob *out) {
  *out = (cg_blob){0};
  char *text = LLVMPrintModuleToString(l->mod);
  if (text) {
    out->size = strlen(text);
    out->data = ir_strdup_malloc(NULL, text);
  }
  LLVMDisposeMessage(text);
  if (!out->data) {
    out->size = 0;
    return ir_error(ctx, TE_ERR_NOMEM, "te_module_save: out of memory");
  }
  return TE_OK;
}

static bool cg_is_exported(LLVMValueRef v) {
  if (LLVMIsDeclaration(v))
    return false;
  LLVMLinkage k = LLVMGetLinkage(v);
  return k != LLVMInternalLinkage && k != LLVMPrivateLinkage;
}

static bool cg_push_name(char ***names, int *n, LLVMValueRef v) {
  size_t len = 0;
  const char *name = LLVMGetValueName2(v, &len);
  char **grown = ir_realloc(NULL, *names, sizeof **names * (size_t)(*n + 1));
  if (!grown)
    return false;
  *names = grown;
  if (!(grown[*n] = ir_strndup_malloc(NULL, name, len)))
    return false;
  (*n)++;
  return true;
}

int cg_exported_symbols(cg_linked *l, char ***out) {
  char **names = NULL;
  int n = 0;
  bool ok = true;
  for (LLVMValueRef f = LLVMGetFirstFunction(l->mod); f && ok; f = LLVMGetNextFunction(f))
    if (cg_is_exported(f))
      ok = cg_push_name(&names, &n, f);
  for (LLVMValueRef g = LLVMGetFirstGlobal(l->mod); g && ok; g = LLVMGetNextGlobal(g))
    if (cg_is_exported(g))
      ok = cg_push_name(&names, &n, g);
  if (!ok) {
    for (int i = 0; i < n; i++)
      free(names[i]);
    free(names);
    return -1;
  }
  *out = names;
  return n;
}
