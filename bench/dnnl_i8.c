/* dnnl_i8.c — the oneDNN low-precision primitive shared by the int8 and bf16 GEMM and conv2d
 * anchors (dnnl_i8.h). */
#include "dnnl_i8.h"

#include "bench.h"

#include <stddef.h>
#include <stdio.h>

#define TRY(call, name)                                                                            \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) {                                                                     \
      *what = name;                                                                                \
      return st_;                                                                                  \
    }                                                                                              \
  } while (0)

uint8_t dnnl_i8_u8_max(void) {
  return __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni") ? 255 : 127;
}

dnnl_status_t dnnl_i8_open(dnnl_i8_prim *p, const char **what) {
  TRY(dnnl_engine_create(&p->engine, dnnl_cpu, 0), "dnnl_engine_create");
  TRY(dnnl_stream_create(&p->stream, p->engine, dnnl_stream_default_flags), "stream");
  return dnnl_success;
}

/* Reorders the user's weights into the primitive's once. */
static dnnl_status_t reorder_weights(dnnl_i8_prim *p, const dnnl_memory_desc_t *user_wei_md,
                                     const char **what) {
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  TRY(dnnl_reorder_primitive_desc_create(
          &rpd, user_wei_md, p->engine,
          dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0), p->engine, NULL),
      "reorder desc");
  dnnl_status_t st = dnnl_primitive_create(&r, rpd);
  dnnl_primitive_desc_destroy(rpd);
  TRY(st, "reorder");
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, p->user_wei}, {DNNL_ARG_TO, p->wei}};
  st = dnnl_primitive_execute(r, p->stream, 2, args);
  if (st == dnnl_success)
    st = dnnl_stream_wait(p->stream);
  dnnl_primitive_destroy(r);
  TRY(st, "weights reorder");
  return dnnl_success;
}

dnnl_status_t dnnl_i8_bind(dnnl_i8_prim *p, const dnnl_memory_desc_t *src_md, const void *src,
                           const dnnl_memory_desc_t *dst_md, void *dst,
                           const dnnl_memory_desc_t *user_wei_md, const void *wei,
                           const char **what) {
  TRY(dnnl_primitive_create(&p->prim, p->pd), "dnnl_primitive_create");
  TRY(dnnl_memory_create(&p->src, src_md, p->engine, (void *)src), "src memory");
  TRY(dnnl_memory_create(&p->dst, dst_md, p->engine, dst), "dst memory");
  TRY(dnnl_memory_create(&p->user_wei, user_wei_md, p->engine, (void *)wei), "user weights");
  TRY(dnnl_memory_create(&p->wei, dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0),
                         p->engine, DNNL_MEMORY_ALLOCATE),
      "weights memory");
  return reorder_weights(p, user_wei_md, what);
}

dnnl_status_t dnnl_i8_matmul(dnnl_i8_prim *p, int n, dnnl_data_type_t src_t, dnnl_data_type_t wei_t,
                             dnnl_data_type_t dst_t, const void *a, const void *b, void *c,
                             const char **what) {
  dnnl_dims_t dims = {n, n};
  dnnl_memory_desc_t src_md, wei_md, uwei_md, dst_md;
  dnnl_status_t st = dnnl_i8_open(p, what);
  if (st != dnnl_success)
    return st;
  TRY(dnnl_memory_desc_init_by_tag(&src_md, 2, dims, src_t, dnnl_ab), "src desc");
  TRY(dnnl_memory_desc_init_by_tag(&uwei_md, 2, dims, wei_t, dnnl_ab), "weights desc");
  TRY(dnnl_memory_desc_init_by_tag(&wei_md, 2, dims, wei_t, dnnl_format_tag_any), "any");
  TRY(dnnl_memory_desc_init_by_tag(&dst_md, 2, dims, dst_t, dnnl_ab), "dst desc");
  dnnl_matmul_desc_t md;
  TRY(dnnl_matmul_desc_init(&md, &src_md, &wei_md, NULL, &dst_md), "dnnl_matmul_desc_init");
  TRY(dnnl_primitive_desc_create(&p->pd, &md, NULL, p->engine, NULL), "primitive desc");
  return dnnl_i8_bind(p, &src_md, a, &dst_md, c, &uwei_md, b, what);
}

dnnl_status_t dnnl_i8_conv(dnnl_i8_prim *p, const int dims[5], dnnl_data_type_t src_t,
                           dnnl_data_type_t wei_t, dnnl_data_type_t dst_t, const void *in,
                           const void *wei_hwio, void *out, const char **what) {
  int n = dims[0], c = dims[1], h = dims[2], w = dims[3], k = dims[4];
  dnnl_dims_t src_dims = {n, c, h, w}, wei_dims = {k, c, 3, 3}, dst_dims = {n, k, h, w};
  dnnl_dims_t strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t src_md, wei_md, uwei_md, dst_md;
  dnnl_status_t st = dnnl_i8_open(p, what);
  if (st != dnnl_success)
    return st;
  TRY(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, src_t, dnnl_nhwc), "src desc");
  TRY(dnnl_memory_desc_init_by_tag(&uwei_md, 4, wei_dims, wei_t, dnnl_hwio), "weights desc");
  TRY(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_dims, wei_t, dnnl_format_tag_any), "any");
  TRY(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dst_t, dnnl_nhwc), "dst desc");
  dnnl_convolution_desc_t cd;
  TRY(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                         &src_md, &wei_md, NULL, &dst_md, strides, pad, pad),
      "dnnl_convolution_forward_desc_init");
  TRY(dnnl_primitive_desc_create(&p->pd, &cd, NULL, p->engine, NULL), "primitive desc");
  return dnnl_i8_bind(p, &src_md, in, &dst_md, out, &uwei_md, wei_hwio, what);
}

int dnnl_i8_run(dnnl_i8_prim *p) {
  dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->wei}, {DNNL_ARG_DST, p->dst}};
  if (dnnl_primitive_execute(p->prim, p->stream, 3, args) != dnnl_success)
    return 1;
  return dnnl_stream_wait(p->stream) != dnnl_success;
}

void dnnl_i8_close(dnnl_i8_prim *p) {
  dnnl_memory_t mems[4] = {p->src, p->wei, p->dst, p->user_wei};
  for (int i = 0; i < 4; i++)
    if (mems[i])
      dnnl_memory_destroy(mems[i]);
  if (p->prim)
    dnnl_primitive_destroy(p->prim);
  if (p->pd)
    dnnl_primitive_desc_destroy(p->pd);
  if (p->stream)
    dnnl_stream_destroy(p->stream);
  if (p->engine)
    dnnl_engine_destroy(p->engine);
}
