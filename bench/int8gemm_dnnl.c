/* int8gemm_dnnl.c — the oneDNN 2.x anchor for the int8 GEMM (C API): a matmul primitive with
 * u8 src, s8 weights and s32 dst, row-major user buffers; the weights take the primitive's own
 * format (dnnl_format_tag_any, reordered once outside the timed call, as an inference engine
 * stores them), src and dst stay row-major. Threads: oneDNN's OpenMP (omp_set_num_threads).
 */
#include "bench.h"

#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>

struct dnnl_i8mm {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t mm;
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

dnnl_i8mm *dnnl_i8mm_new(int n, const uint8_t *a, const int8_t *b, int32_t *c, char *err,
                         int err_size) {
  dnnl_i8mm *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_size, "out of memory");
    return NULL;
  }
  dnnl_dims_t dims = {n, n};
  dnnl_memory_desc_t src_md, wei_md, uwei_md, dst_md;
  CHECK(dnnl_engine_create(&m->engine, dnnl_cpu, 0), "dnnl_engine_create");
  CHECK(dnnl_stream_create(&m->stream, m->engine, dnnl_stream_default_flags), "stream");
  CHECK(dnnl_memory_desc_init_by_tag(&src_md, 2, dims, dnnl_u8, dnnl_ab), "src desc");
  CHECK(dnnl_memory_desc_init_by_tag(&uwei_md, 2, dims, dnnl_s8, dnnl_ab), "weights desc");
  CHECK(dnnl_memory_desc_init_by_tag(&wei_md, 2, dims, dnnl_s8, dnnl_format_tag_any), "any");
  CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 2, dims, dnnl_s32, dnnl_ab), "dst desc");
  dnnl_matmul_desc_t md;
  CHECK(dnnl_matmul_desc_init(&md, &src_md, &wei_md, NULL, &dst_md), "dnnl_matmul_desc_init");
  CHECK(dnnl_primitive_desc_create(&m->pd, &md, NULL, m->engine, NULL), "primitive desc");
  CHECK(dnnl_primitive_create(&m->mm, m->pd), "dnnl_primitive_create");
  CHECK(dnnl_memory_create(&m->src, &src_md, m->engine, (void *)a), "src memory");
  CHECK(dnnl_memory_create(&m->dst, &dst_md, m->engine, c), "dst memory");
  CHECK(dnnl_memory_create(&m->user_wei, &uwei_md, m->engine, (void *)b), "user weights");
  CHECK(dnnl_memory_create(&m->wei, dnnl_primitive_desc_query_md(m->pd, dnnl_query_weights_md, 0),
                           m->engine, DNNL_MEMORY_ALLOCATE),
        "weights memory");
  {
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t r;
    const dnnl_memory_desc_t *fmd = &uwei_md,
                             *tmd = dnnl_primitive_desc_query_md(m->pd, dnnl_query_weights_md, 0);
    CHECK(dnnl_reorder_primitive_desc_create(&rpd, fmd, m->engine, tmd, m->engine, NULL),
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
  dnnl_i8mm_free(m);
  return NULL;
}

int dnnl_i8mm_run(void *arg) {
  dnnl_i8mm *m = arg;
  dnnl_exec_arg_t args[3] = {
      {DNNL_ARG_SRC, m->src}, {DNNL_ARG_WEIGHTS, m->wei}, {DNNL_ARG_DST, m->dst}};
  if (dnnl_primitive_execute(m->mm, m->stream, 3, args) != dnnl_success)
    return 1;
  return dnnl_stream_wait(m->stream) != dnnl_success;
}

void dnnl_i8mm_free(dnnl_i8mm *m) {
  if (!m)
    return;
  dnnl_memory_t mems[4] = {m->src, m->wei, m->dst, m->user_wei};
  for (int i = 0; i < 4; i++)
    if (mems[i])
      dnnl_memory_destroy(mems[i]);
  if (m->mm)
    dnnl_primitive_destroy(m->mm);
  if (m->pd)
    dnnl_primitive_desc_destroy(m->pd);
  if (m->stream)
    dnnl_stream_destroy(m->stream);
  if (m->engine)
    dnnl_engine_destroy(m->engine);
  free(m);
}
