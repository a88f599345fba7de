/* gpu_ref.c — plain C references of the GPU cases (see gpu_ref.h). */
#include "gpu_ref.h"

#include <math.h>
#include <string.h>

void gpu_ref_elementwise(const tt_buf *a, const tt_buf *b, tt_buf *c) {
  for (int64_t i = 0; i < c->numel; i++)
    tt_set(c, i, (double)((float)tt_get(a, i) * 2.0f + (float)tt_get(b, i)));
}

void gpu_ref_rowsum(const tt_buf *a, tt_buf *b) {
  int64_t rows = b->numel, len = a->numel / rows;
  for (int64_t i = 0; i < rows; i++) {
    double s = 0;
    for (int64_t k = 0; k < len; k++)
      s += tt_get(a, i * len + k);
    tt_set(b, i, s);
  }
}

void gpu_ref_softmax(const tt_buf *x, tt_buf *out) {
  int64_t len = x->shape[x->dl.ndim - 1], rows = x->numel / len;
  for (int64_t r = 0; r < rows; r++) {
    double mx = -INFINITY, s = 0;
    for (int64_t k = 0; k < len; k++)
      mx = fmax(mx, tt_get(x, r * len + k));
    for (int64_t k = 0; k < len; k++)
      s += exp(tt_get(x, r * len + k) - mx);
    for (int64_t k = 0; k < len; k++)
      tt_set(out, r * len + k, exp(tt_get(x, r * len + k) - mx) / s);
  }
}

bool gpu_ref_case(const char *kernel, int n, tt_buf *const b[]) {
  if (!strcmp(kernel, "gpu_add") && n == 3)
    gpu_ref_elementwise(b[0], b[1], b[2]);
  else if (!strcmp(kernel, "gpu_rowsum") && n == 2)
    gpu_ref_rowsum(b[0], b[1]);
  else if (!strcmp(kernel, "gpu_matmul") && n == 3)
    tt_ref_matmul(b[0], b[1], b[2], b[2]->shape[0], b[2]->shape[1], b[0]->shape[1]);
  else if (!strcmp(kernel, "gpu_softmax") && n == 2)
    gpu_ref_softmax(b[0], b[1]);
  else
    return false;
  return true;
}
