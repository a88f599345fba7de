/* int8conv_dnnl.c — the oneDNN 2.x anchor for the int8 conv2d (C API): a direct convolution with
 * u8 src, s8 weights and s32 dst, stride 1, padding 1, 3x3; src and dst in NHWC (oneDNN's own
 * int8 layout on AVX-512, so no reorder surrounds the call), weights in the primitive's format
 * (dnnl_format_tag_any), reordered once from HWIO outside the timed call.
 */
#include "bench.h"

#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>

struct dnnl_i8conv {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t conv;
  dnnl_memory_t src, wei, dst, user_wei;
};

#define CHECK(call, what)                                                                          \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) {                                                                     \
      snprintf(err, (size_t)err_size, "%s failed (status %d)", what, (int)st_);                    \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

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
  CHECK(dnnl_engine_create(&m->engine, dnnl_cpu, 0), "dnnl_engine_create");
  CHECK(dnnl_stream_create(&m->stream, m->engine, dnnl_stream_default_flags), "stream");
  CHECK(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_u8, dnnl_nhwc), "src desc");
  CHECK(dnnl_memory_desc_init_by_tag(&uwei_md, 4, wei_dims, dnnl_s8, dnnl_hwio), "weights desc");
  CHECK(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_dims, dnnl_s8, dnnl_format_tag_any), "any");
  CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_s32, dnnl_nhwc), "dst desc");
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                           &src_md, &wei_md, NULL, &dst_md, strides, pad, pad),
        "dnnl_convolution_forward_desc_init");
  CHECK(dnnl_primitive_desc_create(&m->pd, &cd, NULL, m->engine, NULL), "primitive desc");
  CHECK(dnnl_primitive_create(&m->conv, m->pd), "dnnl_primitive_create");
  CHECK(dnnl_memory_create(&m->src, &src_md, m->engine, (void *)in), "src memory");
  CHECK(dnnl_memory_create(&m->dst, &dst_md, m->engine, out), "dst memory");
  CHECK(dnnl_memory_create(&m->user_wei, &uwei_md, m->engine, (void *)wei_hwio), "user weights");
  CHECK(dnnl_memory_create(&m->wei, dnnl_primitive_desc_query_md(m->pd, dnnl_query_weights_md, 0),
                           m->engine, DNNL_MEMORY_ALLOCATE),
        "weights memory");
  {
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t r;
    CHECK(dnnl_reorder_primitive_desc_create(
              &rpd, &uwei_md, m->engine,
              dnnl_primitive_desc_query_md(m->pd, dnnl_query_weights_md, 0), m->engine, NULL),
          "reorder desc");
    dnnl_status_t st = dnnl_primitive_create(&r, rpd);
    dnnl_primitive_desc_destroy(rpd);
    CHECK(st, "reorder");
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, m->user_wei}, {DNNL_ARG_TO, m->wei}};
    st = dnnl_primitive_execute(r, m->stream, 2, args);
    if (st == dnnl_success)
      st = dnnl_stream_wait(m->stream);
    dnnl_primitive_destroy(r);
    CHECK(st, "weights reorder");
  }
  return m;
fail:
  dnnl_i8conv_free(m);
  return NULL;
}

int dnnl_i8conv_run(void *arg) {
  dnnl_i8conv *m = arg;
  dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, m->src}, {DNNL_ARG_WEIGHTS, m->wei}, {DNNL_ARG_DST, m->dst}};
  if (dnnl_primitive_execute(m->conv, m->stream, 3, args) != dnnl_success)
    return 1;
  return dnnl_stream_wait(m->stream) != dnnl_success;
}

void dnnl_i8conv_free(dnnl_i8conv *m) {
  if (!m)
    return;
  dnnl_memory_t mems[4] = {m->src, m->wei, m->dst, m->user_wei};
  for (int i = 0; i < 4; i++)
    if (mems[i])
      dnnl_memory_destroy(mems[i]);
  if (m->conv)
    dnnl_primitive_destroy(m->conv);
  if (m->pd)
    dnnl_primitive_desc_destroy(m->pd);
  if (m->stream)
    dnnl_stream_destroy(m->stream);
  if (m->engine)
    dnnl_engine_destroy(m->engine);
  free(m);
}
