/* driver.h — te_build with a bound on the size of the code, for the tuner.
 *
 * LLVM cannot be interrupted inside a thread, and the tuner compiles in threads (the measuring
 * children call the JIT modules those threads made), so a candidate whose straight-line body is
 * huge would hold its thread for minutes. The bound is checked on the lowered body, after
 * unrolling and before LLVM, where it costs milliseconds.
 */
#ifndef TE_DRIVER_H
#define TE_DRIVER_H

#include "te/build.h"

typedef struct dr_size_limit {
  int64_t max;       /* lw_code_size of the lowered body: at most this */
  const char *api;   /* the caller, first in the message ("te_tune") */
  const char *whose; /* the limit's name in the message ("the tuner's limit") */
  const char *hint;  /* after the numbers: how to change it, why it is there */
} dr_size_limit;

/* te_build, refusing with TE_ERR_SCHEDULE ("<api>: kernel 'NAME': N statements after unrolling,
   over <whose> M (<hint>; ...)") a schedule whose lowered body is larger than limit->max. NULL
   limit: te_build. */
te_status dr_build_bounded(te_schedule *, const char *name, int ntensors,
                           te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                           te_target *, const dr_size_limit *limit, te_module **out);

#endif
