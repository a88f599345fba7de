/* dnnl_i8.h — what the oneDNN low-precision anchors (int8gemm_dnnl.c, int8conv_dnnl.c,
 * bf16gemm_dnnl.c, bf16conv_dnnl.c) share: one primitive (u8 src, s8 weights, s32 dst; or bf16,
 * bf16, f32) over the caller's buffers, the weights reordered once from the user's layout into
 * the primitive's own (dnnl_format_tag_any), outside the timed call, as an inference engine
 * stores them.
 */
#ifndef TE_BENCH_DNNL_I8_H
#define TE_BENCH_DNNL_I8_H

#include <oneapi/dnnl/dnnl.h>

typedef struct dnnl_i8_prim {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd; /* made by the caller between dnnl_i8_open and dnnl_i8_bind */
  dnnl_primitive_t prim;
  dnnl_memory_t src, wei, dst, user_wei;
} dnnl_i8_prim;

/* In an anchor's constructor: a failing call writes "<what> failed (status N)" to err (of
   err_size bytes) and jumps to its fail label. */
#define DNNL_I8_CHECK(call, what)                                                                  \
  do {                                                                                             \
    dnnl_status_t st_ = (call);                                                                    \
    if (st_ != dnnl_success) {                                                                     \
      snprintf(err, (size_t)err_size, "%s failed (status %d)", what, (int)st_);                    \
      goto fail;                                                                                   \
    }                                                                                              \
  } while (0)

/* The CPU engine and its stream; on failure *what names the call. */
dnnl_status_t dnnl_i8_open(dnnl_i8_prim *, const char **what);
/* With p->pd set: the primitive, memories over src, dst and the user's weights (user_wei_md),
   and the weights reordered into the primitive's format. */
dnnl_status_t dnnl_i8_bind(dnnl_i8_prim *, const dnnl_memory_desc_t *src_md, const void *src,
                           const dnnl_memory_desc_t *dst_md, void *dst,
                           const dnnl_memory_desc_t *user_wei_md, const void *wei,
                           const char **what);
/* The whole of a GEMM anchor's primitive: open, an n x n matmul with row-major src (src_t) and
   dst (dst_t) and weights (wei_t) in the primitive's own format, bound to the user's a, b, c. */
dnnl_status_t dnnl_i8_matmul(dnnl_i8_prim *, int n, dnnl_data_type_t src_t, dnnl_data_type_t wei_t,
                             dnnl_data_type_t dst_t, const void *a, const void *b, void *c,
                             const char **what);
/* The whole of a conv2d anchor's primitive: open, a direct 3x3 convolution (stride 1, pad 1) of
   dims {n, c, h, w, k} with src (src_t) and dst (dst_t) in NHWC (oneDNN's own low-precision
   layout on AVX-512: no reorder around the call) and the weights (wei_t), given HWIO, in the
   primitive's own format, bound to the user's in, wei_hwio, out. */
dnnl_status_t dnnl_i8_conv(dnnl_i8_prim *, const int dims[5], dnnl_data_type_t src_t,
                           dnnl_data_type_t wei_t, dnnl_data_type_t dst_t, const void *in,
                           const void *wei_hwio, void *out, const char **what);
/* The timed part: 0 on success. */
int dnnl_i8_run(dnnl_i8_prim *);
/* Releases what was made (any prefix of it). */
void dnnl_i8_close(dnnl_i8_prim *);

#endif
