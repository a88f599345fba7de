/* conv2d_dnnl.c — the oneDNN 2.x anchor for conv2d (C API), as oneDNN is meant to be used:
 * the convolution primitive chooses its own memory formats (dnnl_format_tag_any: on AVX-512 a
 * blocked nChw16c / OIhw16i16o layout), the NCHW input and OIHW weights are reordered into them
 * once, outside the timed call, and the output is reordered back to NCHW only for the check.
 * oneDNN here runs on OpenMP (DNNL_CPU_RUNTIME_OMP): the thread count is omp_set_num_threads'.
 */
#include "bench.h"

#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>

struct dnnl_conv {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t conv;
  dnnl_memory_t src, wei, dst;                /* in the primitive's formats */
  dnnl_memory_t user_src, user_wei, user_dst; /* NCHW / OIHW over caller-owned memory */
};

#define CHECK(call, what)                                                                          \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) {                                                                     \
      snprintf(err, (size_t)err_size, "%s failed (status %d)", what, (int)st_);                    \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

/* Copies memory from -> to with a reorder primitive (created, run, destroyed). */
static dnnl_status_t reorder(dnnl_conv *c, dnnl_memory_t from, dnnl_memory_t to) {
  const dnnl_memory_desc_t *fmd, *tmd;
  dnnl_memory_get_memory_desc(from, &fmd);
  dnnl_memory_get_memory_desc(to, &tmd);
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  dnnl_status_t st = dnnl_reorder_primitive_desc_create(&rpd, fmd, c->engine, tmd, c->engine, NULL);
  if (st != dnnl_success)
    return st;
  st = dnnl_primitive_create(&r, rpd);
  dnnl_primitive_desc_destroy(rpd);
  if (st != dnnl_success)
    return st;
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  st = dnnl_primitive_execute(r, c->stream, 2, args);
  if (st == dnnl_success)
    st = dnnl_stream_wait(c->stream);
  dnnl_primitive_destroy(r);
  return st;
}

dnnl_conv *dnnl_conv_new(int batch, int chans, int height, int width, int kout, const float *in,
                         const float *w, char *err, int err_size) {
  dnnl_conv *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, (size_t)err_size, "out of memory");
    return NULL;
  }
  dnnl_dims_t src_dims = {batch, chans, height, width}, wei_dims = {kout, chans, 3, 3},
              dst_dims = {batch, kout, height, width}, strides = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t u_src, u_wei, u_dst, a_src, a_wei, a_dst;
  CHECK(dnnl_engine_create(&c->engine, dnnl_cpu, 0), "dnnl_engine_create");
  CHECK(dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags), "stream");
  CHECK(dnnl_memory_desc_init_by_tag(&u_src, 4, src_dims, dnnl_f32, dnnl_nchw), "src desc");
  CHECK(dnnl_memory_desc_init_by_tag(&u_wei, 4, wei_dims, dnnl_f32, dnnl_oihw), "wei desc");
  CHECK(dnnl_memory_desc_init_by_tag(&u_dst, 4, dst_dims, dnnl_f32, dnnl_nchw), "dst desc");
  CHECK(dnnl_memory_desc_init_by_tag(&a_src, 4, src_dims, dnnl_f32, dnnl_format_tag_any), "any");
  CHECK(dnnl_memory_desc_init_by_tag(&a_wei, 4, wei_dims, dnnl_f32, dnnl_format_tag_any), "any");
  CHECK(dnnl_memory_desc_init_by_tag(&a_dst, 4, dst_dims, dnnl_f32, dnnl_format_tag_any), "any");
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                           &a_src, &a_wei, NULL, &a_dst, strides, pad, pad),
        "dnnl_convolution_forward_desc_init");
  CHECK(dnnl_primitive_desc_create(&c->pd, &cd, NULL, c->engine, NULL), "primitive desc");
  CHECK(dnnl_primitive_create(&c->conv, c->pd), "dnnl_primitive_create");
  CHECK(dnnl_memory_create(&c->src, dnnl_primitive_desc_query_md(c->pd, dnnl_query_src_md, 0),
                           c->engine, DNNL_MEMORY_ALLOCATE),
        "src memory");
  CHECK(dnnl_memory_create(&c->wei, dnnl_primitive_desc_query_md(c->pd, dnnl_query_weights_md, 0),
                           c->engine, DNNL_MEMORY_ALLOCATE),
        "weights memory");
  CHECK(dnnl_memory_create(&c->dst, dnnl_primitive_desc_query_md(c->pd, dnnl_query_dst_md, 0),
                           c->engine, DNNL_MEMORY_ALLOCATE),
        "dst memory");
  CHECK(dnnl_memory_create(&c->user_src, &u_src, c->engine, (void *)in), "user src");
  CHECK(dnnl_memory_create(&c->user_wei, &u_wei, c->engine, (void *)w), "user weights");
  CHECK(dnnl_memory_create(&c->user_dst, &u_dst, c->engine, DNNL_MEMORY_NONE), "user dst");
  CHECK(reorder(c, c->user_src, c->src), "src reorder");
  CHECK(reorder(c, c->user_wei, c->wei), "weights reorder");
  return c;
fail:
  dnnl_conv_free(c);
  return NULL;
}

int dnnl_conv_run(void *arg) {
  dnnl_conv *c = arg;
  dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->wei}, {DNNL_ARG_DST, c->dst}};
  if (dnnl_primitive_execute(c->conv, c->stream, 3, args) != dnnl_success)
    return 1;
  return dnnl_stream_wait(c->stream) != dnnl_success;
}

int dnnl_conv_output(dnnl_conv *c, float *out) {
  if (dnnl_memory_set_data_handle(c->user_dst, out) != dnnl_success)
    return 1;
  return reorder(c, c->dst, c->user_dst) != dnnl_success;
}

void dnnl_conv_free(dnnl_conv *c) {
  if (!c)
    return;
  dnnl_memory_t mems[6] = {c->src, c->wei, c->dst, c->user_src, c->user_wei, c->user_dst};
  for (int i = 0; i < 6; i++)
    if (mems[i])
      dnnl_memory_destroy(mems[i]);
  if (c->conv)
    dnnl_primitive_destroy(c->conv);
  if (c->pd)
    dnnl_primitive_desc_destroy(c->pd);
  if (c->stream)
    dnnl_stream_destroy(c->stream);
  if (c->engine)
    dnnl_engine_destroy(c->engine);
  free(c);
}

void dnnl_version_str(char *buf, int size) {
  const dnnl_version_t *v = dnnl_version();
  snprintf(buf, (size_t)size, "oneDNN %d.%d.%d (%s), cpu runtime %s", v->major, v->minor, v->patch,
           v->hash, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other");
}
