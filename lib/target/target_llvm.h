/* target_llvm.h — a CPU target as LLVM sees it (internal; target.c).
 *
 * Apart from target.h so that only the layers that speak LLVM (target, codegen) need LLVM's
 * headers.
 */
#ifndef TE_TARGET_LLVM_H
#define TE_TARGET_LLVM_H

#include <llvm-c/TargetMachine.h>

#include "target.h"

/* Registers the X86 and AArch64 back ends with LLVM (once per process; thread-safe). */
void tg_llvm_init(void);

/* A new target machine for t (kind TG_LLVM; for_jit: the JIT's code model), disposed by the
   caller, or NULL with TE_ERR_TARGET recorded. */
LLVMTargetMachineRef tg_llvm_machine(te_ctx *, const te_target *, bool for_jit);

#endif
