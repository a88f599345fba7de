/* golden.h — the golden IR tests: case builders (cases.c) and what the runner needs of them.
 *
 * A case file (test/golden/NAME.golden) holds
 *     # case: <builder name in golden_cases>
 *     # stop-after: <pass>          (optional; default: the whole pipeline)
 *     # any other comment line
 *     ---
 *     <the expected IR text, exactly as lowering prints it>
 * The runner (golden_runner.c) builds the case's schedule with the public API, lowers it, and
 * compares; `golden_runner --update FILE...` rewrites the expected part from the actual output.
 */
#ifndef TE_GOLDEN_H
#define TE_GOLDEN_H

#include <stdbool.h>

#include <te/te.h>

#define GOLDEN_MAX_TENSORS 8
#define GOLDEN_MAX_SCALARS 4

/* What a builder makes: a schedule and the kernel's arguments. */
typedef struct golden_kernel {
  const char *name; /* the kernel name printed in `func NAME(...)` */
  te_schedule *sch;
  int ntensors;
  te_tensor *tensors[GOLDEN_MAX_TENSORS];
  int nscalars;
  te_expr *scalars[GOLDEN_MAX_SCALARS];
} golden_kernel;

/* Builds a case in ctx; false on failure (the message is on the context). */
typedef bool (*golden_builder)(te_ctx *, golden_kernel *);

typedef struct golden_case {
  const char *name;
  golden_builder build;
} golden_case;

extern const golden_case golden_cases[];
extern const int golden_ncases;

#endif
