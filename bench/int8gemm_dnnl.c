/* int8gemm_dnnl.c — the oneDNN 2.x anchor for the int8 GEMM (C API): a matmul primitive with
 * u8 src, s8 weights and s32 dst, row-major user buffers; the weights take the primitive's own
 * format (dnnl_format_tag_any, reordered once outside the timed call, as an inference engine
 * stores them), src and dst stay row-major. Threads: oneDNN's OpenMP (omp_set_num_threads).
 */
#include "bench.h"
#include "dnnl_i8.h"

#include <stdio.h>
#include <stdlib.h>

struct dnnl_i8mm {
  dnnl_i8_prim p;
};

dnnl_i8mm *dnnl_i8mm_new(int n, const uint8_t *a, const int8_t *b, int32_t *c, char *err,
                         int err_size) {
  dnnl_i8mm *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_size, "out of memory");
    return NULL;
  }
  const char *what = "";
  DNNL_I8_CHECK(dnnl_i8_matmul(&m->p, n, dnnl_u8, dnnl_s8, dnnl_s32, a, b, c, &what), what);
  return m;
fail:
  dnnl_i8mm_free(m);
  return NULL;
}

int dnnl_i8mm_run(void *arg) { return dnnl_i8_run(&((dnnl_i8mm *)arg)->p); }

void dnnl_i8mm_free(dnnl_i8mm *m) {
  if (!m)
    return;
  dnnl_i8_close(&m->p);
  free(m);
}
