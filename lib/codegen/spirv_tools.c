/* spirv_tools.c — SPIRV-Tools' C API: validation and disassembly of te's SPIR-V.
 *
 * Validation uses the Vulkan 1.1 environment's rules (spvValidate with SPV_ENV_VULKAN_1_1, what
 * `spirv-val --target-env vulkan1.1` checks): a module that fails it is a bug in te, reported as
 * TE_ERR_CODEGEN with the validator's message. Debian ships SPIRV-Tools as static libraries
 * (C++ inside, a C API outside): libte links libSPIRV-Tools.a and libstdc++.
 */
#include <stdlib.h>
#include <string.h>

#include <spirv-tools/libspirv.h>

#include "spirv.h"

te_status cg_spv_validate(te_ctx *ctx, const char *kernel, const uint32_t *words, size_t n) {
  spv_context c = spvContextCreate(SPV_ENV_VULKAN_1_1);
  if (!c)
    return ir_error(ctx, TE_ERR_NOMEM, "te_build: kernel '%s': SPIRV-Tools: out of memory", kernel);
  spv_const_binary_t bin = {words, n};
  spv_diagnostic diag = NULL;
  spv_result_t r = spvValidate(c, &bin, &diag);
  te_status st = TE_OK;
  if (r != SPV_SUCCESS)
    st = ir_error(ctx, TE_ERR_CODEGEN,
                  "te_build: kernel '%s': the SPIR-V module is invalid (a bug in te): %s", kernel,
                  diag && diag->error ? diag->error : "spvValidate failed");
  spvDiagnosticDestroy(diag);
  spvContextDestroy(c);
  return st;
}

char *cg_spv_disassemble(const uint32_t *words, size_t n) {
  spv_context c = spvContextCreate(SPV_ENV_VULKAN_1_1);
  if (!c)
    return NULL;
  spv_text text = NULL;
  spv_diagnostic diag = NULL;
  uint32_t opts = SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT;
  spv_result_t r = spvBinaryToText(c, words, n, opts, &text, &diag);
  char *out = NULL;
  if (r == SPV_SUCCESS && text) {
    out = ir_malloc(NULL, text->length + 1);
    if (out) {
      memcpy(out, text->str, text->length);
      out[text->length] = '\0';
    }
  }
  spvTextDestroy(text);
  spvDiagnosticDestroy(diag);
  spvContextDestroy(c);
  return out;
}
