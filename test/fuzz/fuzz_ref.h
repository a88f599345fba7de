/* fuzz_ref.h — buffers for a computation's tensors, filled with random data or computed by the
 * reference interpreter, and compared with a kernel's outputs (for fuzz_schedule.c).
 *
 * The reference evaluates the computation element by element from its definition (te_compute
 * bodies, reductions, custom reducers, if_then_else) with test/unit/ir_eval.c, an interpreter
 * written apart from te's simplifier, lowering and code generation: it shares only the
 * definition of the computation with what it checks.
 */
#ifndef TE_FUZZ_REF_H
#define TE_FUZZ_REF_H

#include <stdbool.h>
#include <stdint.h>

#include <te/te.h>

#include "ir_eval.h"

typedef struct fz_buf {
  te_tensor *tensor;
  te_dtype dtype;
  int ndim;
  int64_t shape[TE_MAX_DIMS];
  int64_t numel;
  ir_eval_val *ref; /* the reference values (row-major) */
  bool computed;    /* ref holds the values (placeholders: filled; computes: evaluated) */
  bool computing;   /* evaluating now: a read of itself means a cycle */
  void *data;       /* the kernel's copy, in the dtype's C layout */
  DLTensor dl;
} fz_buf;

typedef struct fz_ref {
  int nbuf;
  fz_buf buf[32];
  ir_eval_env env; /* symbolic sizes and scalar parameters, and the tensor reader */
  int nvars;
  te_expr *vars[16];
  ir_eval_val vals[16];
  uint64_t rng;
  int64_t max_reduce; /* the longest reduction of the computation (tolerances scale with it) */
} fz_ref;

/* Starts a reference over the computation of outs: finds its symbolic sizes (in the order of
   first appearance in the placeholders' shapes) for fz_ref_bind. */
void fz_ref_init(fz_ref *, int nout, te_tensor *const outs[], uint64_t seed);
/* The symbolic sizes found, and a value for each (then call fz_ref_shape for every tensor). */
int fz_ref_nsizes(const fz_ref *);
void fz_ref_set_size(fz_ref *, int i, int64_t value);
/* A scalar parameter's value. */
void fz_ref_set_param(fz_ref *, te_expr *param, ir_eval_val value);
/* The buffer of t (made at its evaluated shape; placeholders filled with random non-zero
   values); NULL when a shape does not evaluate to positive extents, or too many elements. */
fz_buf *fz_ref_buffer(fz_ref *, te_tensor *t);
/* Computes t's reference values; false when an element is undefined (a read out of bounds, a
   division by zero). */
bool fz_ref_compute(fz_ref *, fz_buf *);
/* Copies the reference into the kernel's layout (inputs), or poisons it (outputs: NaN for
   floats, 0x5A bytes for integers). */
void fz_buf_upload(fz_buf *);
void fz_buf_poison(fz_buf *);
/* The first element of the kernel's output that differs from the reference beyond the dtype's
   tolerance (floats: relative to the largest reference value, scaled by the reduction length;
   integers: exact); -1 when none. *got and *want receive the values. */
int64_t fz_buf_mismatch(const fz_ref *, const fz_buf *, double *got, double *want);
void fz_ref_free(fz_ref *);

#endif
