/* bf16conv_dnnl.c — the oneDNN 2.x anchor for the bf16 conv2d (C API): a direct convolution with
 * bf16 src and weights and f32 dst, stride 1, padding 1, 3x3; src and dst in NHWC, weights in the
 * primitive's format, reordered once from HWIO outside the timed call: dnnl_i8.c's dnnl_i8_conv,
 * as the int8 conv2d's anchor, with other dtypes.
 */
#include "bench.h"
#include "dnnl_i8.h"

#include <stdio.h>
#include <stdlib.h>

struct dnnl_bf16conv {
  dnnl_i8_prim p;
};

dnnl_bf16conv *dnnl_bf16conv_new(int n, int c, int h, int w, int k, const uint16_t *in,
                                 const uint16_t *wei_hwio, float *out, char *err, int err_size) {
  dnnl_bf16conv *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_size, "out of memory");
    return NULL;
  }
  const char *what = "";
  const int dims[5] = {n, c, h, w, k};
  DNNL_I8_CHECK(dnnl_i8_conv(&m->p, dims, dnnl_bf16, dnnl_bf16, dnnl_f32, in, wei_hwio, out, &what),
                what);
  return m;
fail:
  dnnl_bf16conv_free(m);
  return NULL;
}

int dnnl_bf16conv_run(void *arg) { return dnnl_i8_run(&((dnnl_bf16conv *)arg)->p); }

void dnnl_bf16conv_free(dnnl_bf16conv *m) {
  if (!m)
    return;
  dnnl_i8_close(&m->p);
  free(m);
}
