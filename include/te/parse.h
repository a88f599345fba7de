/* te/parse.h — workloads as text: a parser for tensor expressions and their canonical printer.
 *
 * A workload text is one or more statements defining tensors, then declarations
 * (docs/workload-text.md has the grammar):
 *
 *   C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[M, K], B: f32[K, N], k: [0, K)
 *
 *   P[i, j] = A[i, j]*2.0f;
 *   C[i] = max(P[i, r], r)
 *   where A: f32[64, N], r: [0, N)
 *
 * te_parse builds the computation with the te_* constructors; te_workload_text prints any
 * computation (built by te_parse, by hand through the C API, or by ops.h) in one canonical form
 * that te_parse reads back to the same computation: same tensors, names, dtypes, shapes and
 * bodies, so the same schedule lowers to the same loop nest. The canonical text is the workload
 * key of the tuning log (through te_workload_hash) and makes tests before/after pairs and fuzz
 * failures replayable.
 */
#ifndef TE_PARSE_H
#define TE_PARSE_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses a workload text and builds its tensors in ctx. On success *nout and *outs give the
   outputs: those named by an `outputs` clause, else the tensors no later statement reads, in
   statement order (every output of a multi-output statement). The array is owned by the
   context (freed with it). On failure *nout is 0, *outs NULL, and the status is:
     TE_ERR_PARSE      malformed text, with line:column and what was expected, e.g.
                       "te_parse: 1:17: expected ']' after the indices, got ','";
     TE_ERR_NOT_FOUND  an unknown name (tensor, variable, function), with line:column;
     TE_ERR_SHAPE      a shape that cannot be inferred (declare it: `C: [M, N]`);
     TE_ERR_INVALID_ARG NULL arguments;
     or the status of the te_* constructor that refused a part (TE_ERR_TYPE for
     `A[i] && 1.0`, ...), whose message is kept after "te_parse: line:column: ".
   Tensors made before a failure stay in the context (unreachable, freed with it). */
TE_API te_status te_parse(te_ctx *ctx, const char *text, int *nout, te_tensor ***outs);

/* The canonical text of the computation that produces outs[0..nout) (placeholders, computes
   and reductions reachable from them): statements in dependency order (producers first, the
   outputs' order breaking ties), placeholders declared in first-use order, every computed
   tensor's shape declared, deterministic spacing and literals (docs/workload-text.md),
   variables and tensors printed with the names they were created with (made unique with _1,
   _2, ... where two objects share one). te_parse of the text gives the same computation, and
   printing that again gives byte-identical text. malloc'd: te_free() it. NULL on failure
   (message on the tensors' context): nout < 1, a NULL tensor, tensors of different contexts
   (TE_ERR_INVALID_ARG), or a node the text cannot express (TE_ERR_UNSUPPORTED). Does not
   change the computation; the context must not be used by another thread meanwhile. */
TE_API char *te_workload_text(int nout, te_tensor *const outs[]);

/* What a kernel of the computation producing outs takes besides outs: the placeholders it reads
   (*nin, *ins), in first-use order, which is the order te_workload_text declares them, and the
   scalar parameters (te_param) its bodies use (*nparams, *params; both may be NULL), in the
   same order as declared there. For a workload from te_parse, te_build(s, name, tensors =
   ins then outs, params) makes its kernel. Arrays owned by the context. Errors as
   te_workload_text (TE_ERR_INVALID_ARG), or TE_ERR_UNSUPPORTED for what it cannot print. */
TE_API te_status te_workload_inputs(int nout, te_tensor *const outs[], int *nin, te_tensor ***ins,
                                    int *nparams, te_expr ***params);

/* The workload key of a canonical text: the 64-bit FNV-1a hash of its bytes (offset basis
   0xcbf29ce484222325, prime 0x100000001b3), up to the terminating NUL. NULL gives the offset
   basis. Print it as 16 lowercase hex digits ("%016llx") where a string is needed. */
TE_API uint64_t te_workload_hash(const char *canonical);

#ifdef __cplusplus
}
#endif
#endif
