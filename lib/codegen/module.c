/* module.c — te_module: calling kernels (libffi), their code as text, build times.
 * (Saving objects, libraries and headers: save.c.)
 *
 * A module is malloc'd (not in the context's arena) and freed by a destructor registered with
 * the context, together with its LLVM state (JIT, target machine, modules) and its texts; its
 * kernel records live in the context's arena.
 *
 * te_module_call calls the kernel's typed entry through libffi with the argument list the
 * caller built at run time: one pointer per DLTensor, then each scalar by its dtype. The call
 * interface is prepared once per kernel and kept. A nonzero return is the kernel's te_status;
 * its message (te_rt_last_error on this thread) goes onto the context.
 */
#include <ffi.h>
#include <stdlib.h>
#include <string.h>

#include "llvm_cg.h"
#include "te/runtime.h"

typedef struct cg_ffi {
  ffi_cif cif;
  ffi_type **types;
} cg_ffi;

static void cg_module_free(void *p) {
  te_module *m = p;
  cg_llvm_module_free(m->llvm);
  free(m->ll_text);
  free(m->asm_text);
  free(m->ptx_text);
  free(m);
}

te_module *cg_module_new(te_ctx *ctx, te_target *target) {
  te_module *m = ir_calloc(ctx, 1, sizeof *m);
  if (!m)
    return NULL;
  m->ctx = ctx;
  m->target = target;
  if (!ir_ctx_on_free(ctx, cg_module_free, m)) {
    free(m);
    return NULL;
  }
  return m;
}

static cg_kernel *cg_find_kernel(te_module *m, const char *fn, const char *name) {
  if (!name) {
    ir_error(m->ctx, TE_ERR_INVALID_ARG, "%s: kernel name is NULL", fn);
    return NULL;
  }
  for (int i = 0; i < m->nkernels; i++)
    if (!strcmp(m->kernels[i].name, name))
      return &m->kernels[i];
  ir_error(m->ctx, TE_ERR_NOT_FOUND, "%s: no kernel '%s' in the module%s%s%s", fn, name,
           m->nkernels ? " (it has '" : "", m->nkernels ? m->kernels[0].name : "",
           m->nkernels ? "')" : "");
  return NULL;
}

/* The kernel's entry, or NULL with the reason recorded. */
static void *cg_kernel_entry(te_module *m, cg_kernel *k, const char *fn) {
  if (k->entry)
    return k->entry;
  if (!m->target->is_host)
    ir_error(m->ctx, TE_ERR_TARGET,
             "%s: kernel '%s' was compiled for '%s', not for this host, so it cannot run in "
             "this process (te_module_save writes it to an object or a static library)",
             fn, k->name, m->target->str);
  else
    ir_error(m->ctx, TE_ERR_INVALID_ARG, "%s: kernel '%s' has no code (its build failed)", fn,
             k->name);
  return NULL;
}

static ffi_type *cg_ffi_type(te_dtype t) {
  if (ir_is_half(t)) /* passed as its 16 bits (llvm_entry.c) */
    return &ffi_type_uint16;
  if (ir_is_float(t))
    return t.bits == 32 ? &ffi_type_float : &ffi_type_double;
  if (ir_is_bool(t))
    return &ffi_type_uint8;
  bool s = ir_is_int(t);
  switch (t.bits) {
  case 8:
    return s ? &ffi_type_sint8 : &ffi_type_uint8;
  case 16:
    return s ? &ffi_type_sint16 : &ffi_type_uint16;
  case 32:
    return s ? &ffi_type_sint32 : &ffi_type_uint32;
  default:
    return s ? &ffi_type_sint64 : &ffi_type_uint64;
  }
}

static cg_ffi *cg_prepare_ffi(te_module *m, cg_kernel *k) {
  if (k->ffi)
    return k->ffi;
  int n = k->ntensors + k->nscalars;
  cg_ffi *f = ir_alloc_persistent(m->ctx, sizeof *f);
  ffi_type **types = ir_alloc_persistent(m->ctx, sizeof *types * (size_t)(n + 1));
  if (!f || !types)
    return NULL;
  for (int i = 0; i < k->ntensors; i++)
    types[i] = &ffi_type_pointer;
  for (int i = 0; i < k->nscalars; i++)
    types[k->ntensors + i] = cg_ffi_type(k->scalar_dtypes[i]);
  f->types = types;
  if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, (unsigned)n, &ffi_type_sint32, types) != FFI_OK) {
    ir_error(m->ctx, TE_ERR_INTERNAL, "internal: te_module_call: libffi cannot call kernel '%s'",
             k->name);
    return NULL;
  }
  k->ffi = f;
  return f;
}

static te_status cg_check_call(te_module *m, cg_kernel *k, int ntensors, DLTensor *const tensors[],
                               int nscalars, const void *const scalars[]) {
  if (ntensors != k->ntensors)
    return ir_error(m->ctx, TE_ERR_INVALID_ARG,
                    "te_module_call: kernel '%s' takes %d tensor%s (got %d)", k->name, k->ntensors,
                    k->ntensors == 1 ? "" : "s", ntensors);
  if (nscalars != k->nscalars)
    return ir_error(m->ctx, TE_ERR_INVALID_ARG,
                    "te_module_call: kernel '%s' takes %d scalar%s (got %d)", k->name, k->nscalars,
                    k->nscalars == 1 ? "" : "s", nscalars);
  if (ntensors > 0 && !tensors)
    return ir_error(m->ctx, TE_ERR_INVALID_ARG, "te_module_call: kernel '%s': tensors is NULL",
                    k->name);
  if (nscalars > 0 && !scalars)
    return ir_error(m->ctx, TE_ERR_INVALID_ARG, "te_module_call: kernel '%s': scalars is NULL",
                    k->name);
  for (int i = 0; i < nscalars; i++)
    if (!scalars[i])
      return ir_error(m->ctx, TE_ERR_INVALID_ARG, "te_module_call: kernel '%s': scalar #%d is NULL",
                      k->name, i);
  return TE_OK;
}

static te_status module_call_impl(te_module *m, const char *name, int ntensors,
                                  DLTensor *const tensors[], int nscalars,
                                  const void *const scalars[]) {
  if (!m)
    return TE_ERR_INVALID_ARG;
  cg_kernel *k = cg_find_kernel(m, "te_module_call", name);
  if (!k)
    return name ? TE_ERR_NOT_FOUND : TE_ERR_INVALID_ARG;
  if (m->target->kind == TG_VULKAN) { /* launched through libte_runtime's Vulkan */
    te_status vst = cg_check_call(m, k, ntensors, tensors, nscalars, scalars);
    return vst != TE_OK ? vst : cg_vulkan_call(m, k, tensors, scalars);
  }
  void *entry = cg_kernel_entry(m, k, "te_module_call");
  if (!entry)
    return m->target->is_host ? TE_ERR_INVALID_ARG : TE_ERR_TARGET;
  te_status st = cg_check_call(m, k, ntensors, tensors, nscalars, scalars);
  if (st != TE_OK)
    return st;
  cg_ffi *f = cg_prepare_ffi(m, k);
  if (!f)
    return te_last_status(m->ctx);
  int n = ntensors + nscalars;
  void *small[16];
  void **values = n <= 16 ? small : ir_malloc(m->ctx, sizeof *values * (size_t)n);
  if (!values)
    return ir_error(m->ctx, TE_ERR_NOMEM, "te_module_call: out of memory");
  for (int i = 0; i < ntensors; i++)
    values[i] = (void *)&tensors[i];
  for (int i = 0; i < nscalars; i++)
    values[ntensors + i] = (void *)scalars[i];
  ffi_arg rc = 0;
  ffi_call(&f->cif, FFI_FN(entry), &rc, values);
  if (values != small)
    free(values);
  int32_t code = (int32_t)rc;
  if (code == 0)
    return TE_OK;
  te_status status = code > 0 && code <= TE_ERR_INTERNAL ? (te_status)code : TE_ERR_RUNTIME;
  /* kernels' own messages start with "kernel 'NAME': " already */
  const char *msg = te_rt_last_error();
  size_t len = strlen(k->name);
  if (!strncmp(msg, "kernel '", 8) && !strncmp(msg + 8, k->name, len) && msg[8 + len] == '\'')
    return ir_error(m->ctx, status, "te_module_call: %s", msg);
  return ir_error(m->ctx, status, "te_module_call: kernel '%s': %s", k->name, msg);
}

te_status te_module_call(te_module *m, const char *name, int ntensors, DLTensor *const tensors[],
                         int nscalars, const void *const scalars[]) {
  if (!m)
    return TE_ERR_INVALID_ARG;
  return IR_PUBLIC_CALL(m->ctx, module_call_impl(m, name, ntensors, tensors, nscalars, scalars));
}

void *te_module_entry(te_module *m, const char *name) {
  if (!m)
    return NULL;
  cg_kernel *k = cg_find_kernel(m, "te_module_entry", name);
  return k ? cg_kernel_entry(m, k, "te_module_entry") : NULL;
}

static const char *module_source_impl(te_module *m, const char *kind) {
  if (!m)
    return NULL;
  if (!kind) {
    ir_error(m->ctx, TE_ERR_INVALID_ARG, "te_module_source: kind is NULL");
    return NULL;
  }
  if (!strcmp(kind, "ll") && m->ll_text)
    return m->ll_text;
  if ((!strcmp(kind, "ptx") || !strcmp(kind, "asm")) && m->ptx_text) /* cuda: the device code */
    return m->ptx_text;
  if (!strcmp(kind, "spirv-dis") && m->vk)
    return cg_vulkan_source(m);
  if (!strcmp(kind, "asm") && m->llvm) {
    if (!m->asm_text)
      m->asm_text = cg_emit_asm(m);
    return m->asm_text;
  }
  ir_error(m->ctx, TE_ERR_NOT_FOUND,
           "te_module_source: no '%s' text in this module (an LLVM module has 'll' and 'asm', "
           "a vulkan module 'spirv-dis')",
           kind);
  return NULL;
}

const char *te_module_source(te_module *m, const char *kind) {
  if (!m)
    return NULL;
  return IR_PUBLIC_CALL_PTR(m->ctx, module_source_impl(m, kind));
}

te_build_times te_module_build_times(const te_module *m) {
  return m ? m->times : (te_build_times){0, 0, 0};
}
