/* int8conv_dnnl.c — the oneDNN 2.x anchor for the int8 conv2d (C API): a direct convolution with
 * u8 src, s8 weights and s32 dst, stride 1, padding 1, 3x3; src and dst in NHWC (oneDNN's own
 * int8 layout on AVX-512, so no reorder surrounds the call), weights in the primitive's format
 * (dnnl_format_tag_any), reordered once from HWIO outside the timed call. The primitive is
 * dnnl_i8.c's (dnnl_i8_conv), shared with the bf16 conv2d's anchor.
 */
#include "bench.h"
#include "dnnl_i8.h"

#include <stdio.h>
#include <stdlib.h>

struct dnnl_i8conv {
  dnnl_i8_prim p;
};

dnnl_i8conv *dnnl_i8conv_new(int n, int c, int h, int w, int k, const uint8_t *in,
                             const int8_t *wei_hwio, int32_t *out, char *err, int err_size) {
  dnnl_i8conv *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_size, "out of memory");
    return NULL;
  }
  const char *what = "";
  const int dims[5] = {n, c, h, w, k};
  DNNL_I8_CHECK(dnnl_i8_conv(&m->p, dims, dnnl_u8, dnnl_s8, dnnl_s32, in, wei_hwio, out, &what),
                what);
  return m;
fail:
  dnnl_i8conv_free(m);
  return NULL;
}

int dnnl_i8conv_run(void *arg) { return dnnl_i8_run(&((dnnl_i8conv *)arg)->p); }

void dnnl_i8conv_free(dnnl_i8conv *m) {
  if (!m)
    return;
  dnnl_i8_close(&m->p);
  free(m);
}
