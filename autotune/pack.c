/* pack.c — a copied input (te_cache_read of tile+cache+read) stored in the register tile's
 * layout: the blocked layouts a BLAS packs its operands into, made with te_reorder_storage of
 * split axes (docs/tuning.md, "Packed operands").
 *
 * For an input the vector axis indexes (B[k, j] of a matmul, j the vector) the dim it indexes
 * is split into panels as wide as the local block (W = S2 * S3 of that axis) when the whole input
 * is copied: Bp[j / W][k][j % W], so that one tile of C reads one contiguous panel (a block copied
 * at the reduce loop is one panel already). For an input the vector does not index (A[i, k],
 * broadcast to every lane) the dim the register tile's rows index is split by the rows:
 * Ap[i / MR][k][i % MR], so that the MR broadcasts of one k are neighbours. In a dot sketch the
 * dim the grouped reduce axis indexes is also split by the instruction's group, innermost
 * ([j / W][k / 4][j % W][k % 4] and [i / MR][k / 4][i % MR][k % 4] for vpdpbusd), which makes
 * each lane's group of k, and each vector of them, contiguous: one load each, no gather.
 *
 * The copy's loops are split the same way; they run in the input's order (its reads contiguous,
 * which measured twice as fast as writing panel by panel, bench/sgemm_schedule.c) except where
 * a group is innermost (then in storage order: its reads of 4 bytes are strided either way) or
 * the vector runs along a dim that is not the input's last (then along that dim, as before).
 * The innermost loop is vectorized in 16-lane pieces unless it is a group; a whole copy's
 * outermost loop is parallel.
 */
#include <string.h>

#include "at.h"

static int64_t dim_extent(te_tensor *t, int d) {
  int64_t e = 0;
  return ir_is_const_int(t->shape[d], &e) ? e : 0;
}

void at_pack_plan_make(te_tensor *t, const at_pack_dims *dims, bool whole, at_pack_plan *p) {
  memset(p, 0, sizeof *p);
  p->nd = t->ndim;
  p->along = dims->along;
  p->group_dim = -1;
  if (dims->along >= 0) {
    int64_t ext = dim_extent(t, dims->along);
    if (whole && dims->width > 0 && (ext == 0 || dims->width < ext))
      p->split[dims->along] = dims->width;
  } else if (dims->rows_dim >= 0 && dims->rows > 1) {
    p->split[dims->rows_dim] = dims->rows;
  }
  if (dims->group > 1 && dims->group_dim >= 0) {
    p->split[dims->group_dim] = dims->group;
    p->group_dim = dims->group_dim;
  }
}

/* The storage dims of the plan, outermost first, as iters of the copy's stage cs whose split
   axes are split already (parts[d][0], [1]): the outer parts of the panel or row split, the
   whole dims and the group's outer part in dim order (the vector's dim last among them when
   along_last), the inner part of the panel or row split, the group's inner part. */
static int storage_dims(const at_pack_plan *p, te_stage *cs, te_iter *parts[][2], bool along_last,
                        te_iter *out[]) {
  int n = 0, g = p->group_dim;
  for (int d = 0; d < p->nd; d++)
    if (p->split[d] && d != g)
      out[n++] = parts[d][0];
  for (int d = 0; d < p->nd; d++)
    if (!p->split[d] && !(along_last && d == p->along))
      out[n++] = te_axis(cs, d);
    else if (d == g)
      out[n++] = parts[d][0];
  if (along_last && p->along >= 0 && !p->split[p->along])
    out[n++] = te_axis(cs, p->along);
  for (int d = 0; d < p->nd; d++)
    if (p->split[d] && d != g)
      out[n++] = parts[d][1];
  if (g >= 0)
    out[n++] = parts[g][1];
  return n;
}

te_status at_pack_copy(te_stage *cs, const at_pack_plan *p, bool along_last, bool vec, bool whole) {
  te_iter *parts[TE_MAX_DIMS][2] = {{0}};
  for (int d = 0; d < p->nd; d++)
    if (p->split[d])
      AT_TRY(te_split(cs, te_axis(cs, d), p->split[d], &parts[d][0], &parts[d][1]));
  te_iter *dims[2 * TE_MAX_DIMS];
  int n = storage_dims(p, cs, parts, along_last, dims);
  bool blocked = n > p->nd || (along_last && p->along >= 0 && p->along != p->nd - 1);
  if (blocked)
    AT_TRY(te_reorder_storage(cs, n, dims));
  if (p->group_dim >= 0 || (along_last && p->along >= 0 && p->along != p->nd - 1))
    AT_TRY(te_reorder(cs, n, dims));
  int nleaf = te_leaf_count(cs);
  te_iter *last = nleaf > 0 ? te_leaf(cs, nleaf - 1) : NULL;
  if (vec && last && !(p->group_dim >= 0 && last == parts[p->group_dim][1])) {
    te_iter *x, *vi;
    AT_TRY(te_split(cs, last, 16, &x, &vi));
    AT_TRY(te_vectorize(cs, vi));
  }
  if (whole && p->nd > 1)
    AT_TRY(te_parallel(cs, te_leaf(cs, 0)));
  return TE_OK;
}
