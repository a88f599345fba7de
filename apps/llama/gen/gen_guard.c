/* gen_guard.c — tuning never makes te-llama slower: before a dense kernel takes the tuning log's
 * schedule, tl_finish (gen_tasks.c) builds both it and the hand schedule as the library ships
 * them (symbolic sizes) and tl_guard times the two side by side at the model shape the log was
 * tuned at (tl_tune.shape), caches flushed before each call, one thread, and keeps the hand
 * schedule unless the tuned one is clearly faster: apps/common/tune_guard.h, shared with
 * te-embed's generator, has the timing and the rule.
 *
 * A matmul is timed at TL_GUARD_TOKENS tokens at most (gen.h), so that the build's timing stays
 * at a few seconds. The arguments are the kernel's at that shape (gen_dense.c's order: X, W, [W3],
 * [R], Y) with fixed non-zero data, bf16 weights for the tl_bf16_* kernels.
 */
#include "gen.h"

#include "../../common/tune_guard.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_ARGS = 5 };

/* A fixed pattern in [-0.5, 0.5): f32 values, or bf16 ones (an f32's upper 16 bits). */
static void fill(void *data, size_t n, bool bf16) {
  for (size_t e = 0; e < n; e++) {
    float f = (float)((e * 2654435761u) % 1000) * 1e-3f - 0.5f;
    if (bf16) {
      uint32_t u;
      memcpy(&u, &f, 4);
      ((uint16_t *)data)[e] = (uint16_t)(u >> 16);
    } else {
      ((float *)data)[e] = f;
    }
  }
}

te_status tl_guard(const char *name, te_module *hand, te_module *tuned, tg_verdict *out) {
  int64_t T, n, k;
  if (!tl_kernel_shape(name, &T, &n, &k))
    return TE_ERR_INVALID_ARG;
  if (T > TL_GUARD_TOKENS)
    T = TL_GUARD_TOKENS;
  bool batched = strstr(name, "matmul") != NULL, bf16 = strstr(name, "bf16") != NULL;
  bool swiglu = strstr(name, "swiglu") != NULL, add = strstr(name, "_add") != NULL;
  int64_t xs[2] = {T, k}, ws[2] = {n, k}, ys[2] = {T, n};
  int nd = batched ? 2 : 1;
  DLDataType f32 = {kDLFloat, 32, 1}, wt = bf16 ? (DLDataType){kDLBfloat, 16, 1} : f32;
  DLTensor t[MAX_ARGS];
  int na = 0;
  t[na++] = (DLTensor){NULL, {kDLCPU, 0}, nd, f32, batched ? xs : xs + 1, NULL, 0};
  t[na++] = (DLTensor){NULL, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  if (swiglu)
    t[na++] = (DLTensor){NULL, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  if (add)
    t[na++] = (DLTensor){NULL, {kDLCPU, 0}, nd, f32, batched ? ys : ys + 1, NULL, 0};
  t[na++] = (DLTensor){NULL, {kDLCPU, 0}, nd, f32, batched ? ys : ys + 1, NULL, 0};
  DLTensor *p[MAX_ARGS];
  te_status st = TE_OK;
  for (int i = 0; i < na; i++) {
    size_t elems = (size_t)t[i].shape[0] * (size_t)(t[i].ndim == 2 ? t[i].shape[1] : 1);
    bool b = t[i].dtype.code == kDLBfloat;
    p[i] = &t[i];
    if (st == TE_OK && !(t[i].data = malloc(elems * (b ? 2 : 4))))
      st = TE_ERR_NOMEM;
    if (t[i].data)
      fill(t[i].data, elems, b);
  }
  if (st == TE_OK)
    st = tg_compare(hand, tuned, name, na, p, out);
  for (int i = 0; i < na; i++)
    free(t[i].data);
  return st;
}
