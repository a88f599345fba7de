/* matmul.c — matrix products: te_op_matmul ([M, K] x [K, N]) and te_op_batch_matmul
 * ([b, M, K] x [b, K, N]), each with optional transposes of either operand.
 *
 * One stage: C[.., i, j] = sum_k op(A)[.., i, k] * op(B)[.., k, j], reduce axis "k". The
 * _acc forms multiply and sum in a given dtype (accum.c). The
 * transposes only change the index order of the reads, so schedules of the output stage are the
 * same whatever the layout of the operands.
 */
#include <stdio.h>

#include "ops_internal.h"

/* The extents of one operand: rows/cols after the (optional) transpose. */
typedef struct mm_side {
  te_expr *outer; /* M for A, N for B */
  te_expr *k;
} mm_side;

static mm_side side_of(const te_tensor *t, int batch, int trans, bool is_a) {
  te_expr *d0 = t->shape[batch], *d1 = t->shape[batch + 1];
  mm_side s;
  /* A: [M, K], transposed [K, M]. B: [K, N], transposed [N, K]. */
  bool k_first = is_a ? trans != 0 : trans == 0;
  s.k = k_first ? d0 : d1;
  s.outer = k_first ? d1 : d0;
  return s;
}

static bool check_extent(te_ctx *ctx, const char *fn, const char *what, te_tensor *A, te_tensor *B,
                         te_expr *ea, te_expr *eb) {
  if (op_same_extent(ea, eb))
    return true;
  char a[64], b[64], sa[160], sb[160];
  int64_t x, y;
  bool consts = ir_is_const_int(ea, &x) && ir_is_const_int(eb, &y);
  ir_error(ctx, TE_ERR_SHAPE, "%s: %s %s of A '%s' %s does not match %s of B '%s' %s%s", fn, what,
           op_extent_str(ea, a, sizeof a), A->name, op_shape_str(A, sa, sizeof sa),
           op_extent_str(eb, b, sizeof b), B->name, op_shape_str(B, sb, sizeof sb),
           consts ? "" : " (symbolic extents must be the identical expression)");
  return false;
}

static te_tensor *mm_build(te_ctx *ctx, const char *fn, te_tensor *A, te_tensor *B, int ta, int tb,
                           const te_dtype *acc, const char *name, const char *def, int batch) {
  if (!op_begin(ctx, fn, &name, def, 2, (te_tensor *const[]){A, B},
                (const char *const[]){"A", "B"}))
    return NULL;
  int rank = 2 + batch;
  if (!op_check_rank(ctx, fn, "A", A, rank) || !op_check_rank(ctx, fn, "B", B, rank) ||
      !op_check_inputs(ctx, fn, A, B, acc))
    return NULL;
  mm_side sa = side_of(A, batch, ta, true), sb = side_of(B, batch, tb, false);
  if (batch && !check_extent(ctx, fn, "batch extent", A, B, A->shape[0], B->shape[0]))
    return NULL;
  if (!check_extent(ctx, fn, "reduction extent K =", A, B, sa.k, sb.k))
    return NULL;
  if (acc && !op_check_acc_range(ctx, fn, A, B, *acc, sa.k))
    return NULL;

  te_expr *b = te_var(ctx, "b"), *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), sa.k);
  te_expr *ia[3], *ib[3];
  int n = 0;
  if (batch)
    ia[n] = ib[n] = b, n++;
  ia[n] = ta ? k : i;
  ia[n + 1] = ta ? i : k;
  ib[n] = tb ? j : k;
  ib[n + 1] = tb ? k : j;
  te_expr *body = te_sum(op_product(te_at(A, rank, ia), te_at(B, rank, ib), acc), 1, &k);
  te_expr *shape[3], *vars[3];
  n = 0;
  if (batch)
    shape[n] = A->shape[0], vars[n] = b, n++;
  shape[n] = sa.outer, vars[n] = i;
  shape[n + 1] = sb.outer, vars[n + 1] = j;
  return te_compute(ctx, name, rank, shape, vars, body);
}

te_tensor *te_op_matmul(te_ctx *ctx, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                        const char *name) {
  return mm_build(ctx, "te_op_matmul", A, B, trans_a, trans_b, NULL, name, "matmul", 0);
}

te_tensor *te_op_matmul_acc(te_ctx *ctx, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                            te_dtype acc, const char *name) {
  return mm_build(ctx, "te_op_matmul_acc", A, B, trans_a, trans_b, &acc, name, "matmul", 0);
}

te_tensor *te_op_batch_matmul(te_ctx *ctx, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                              const char *name) {
  return mm_build(ctx, "te_op_batch_matmul", A, B, trans_a, trans_b, NULL, name, "batch_matmul", 1);
}

te_tensor *te_op_batch_matmul_acc(te_ctx *ctx, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                                  te_dtype acc, const char *name) {
  return mm_build(ctx, "te_op_batch_matmul_acc", A, B, trans_a, trans_b, &acc, name, "batch_matmul",
                  1);
}
