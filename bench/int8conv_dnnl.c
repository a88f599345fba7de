/* int8conv_dnnl.c — the oneDNN 2.x anchor for the int8 conv2d (C API): a direct convolution with
 * u8 src, s8 weights and s32 dst, stride 1, padding 1, 3x3; src and dst in NHWC (oneDNN's own
 * int8 layout on AVX-512, so no reorder surrounds the call), weights in the primitive's format
 * (dnnl_format_tag_any), reordered once from HWIO outside the timed call.
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
  dnnl_dims_t src_dims = {n, c, h, w}, wei_dims = {k, c, 3, 3}, dst_dims = {n, k, h, w};
  dnnl_dims_t strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t src_md, wei_md, uwei_md, dst_md;
  const char *what = "";
  DNNL_I8_CHECK(dnnl_i8_open(&m->p, &what), what);
  DNNL_I8_CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_u8, dnnl_nhwc), "src desc");
  DNNL_I8_CHECK(dnnl_memory_desc_init_by_tag(&uwei_md, 4, wei_dims, dnnl_s8, dnnl_hwio),
                "weights desc");
  DNNL_I8_CHECK(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_dims, dnnl_s8, dnnl_format_tag_any),
                "any");
  DNNL_I8_CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_s32, dnnl_nhwc),
                "dst desc");
  dnnl_convolution_desc_t cd;
  DNNL_I8_CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                   dnnl_convolution_direct, &src_md, &wei_md, NULL,
                                                   &dst_md, strides, pad, pad),
                "dnnl_convolution_forward_desc_init");
  DNNL_I8_CHECK(dnnl_primitive_desc_create(&m->p.pd, &cd, NULL, m->p.engine, NULL),
                "primitive desc");
  DNNL_I8_CHECK(dnnl_i8_bind(&m->p, &src_md, in, &dst_md, out, &uwei_md, wei_hwio, &what), what);
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
