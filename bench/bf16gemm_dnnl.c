/* bf16gemm_dnnl.c — the oneDNN 2.x anchor for the bf16 GEMM (C API): a matmul primitive with
 * bf16 src and weights and f32 dst, row-major user buffers; the weights take the primitive's
 * own format (dnnl_format_tag_any, reordered once outside the timed call, as an inference engine
 * stores them), src and dst stay row-major. The primitive plumbing is dnnl_i8.c's (it does not
 * depend on the dtypes). Threads: oneDNN's OpenMP (omp_set_num_threads).
 */
#include "bench.h"
#include "dnnl_i8.h"

#include <stdio.h>
#include <stdlib.h>

struct dnnl_bf16mm {
  dnnl_i8_prim p;
};

dnnl_bf16mm *dnnl_bf16mm_new(int n, const uint16_t *a, const uint16_t *b, float *c, char *err,
                             int err_size) {
  dnnl_bf16mm *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_size, "out of memory");
    return NULL;
  }
  const char *what = "";
  DNNL_I8_CHECK(dnnl_i8_matmul(&m->p, n, dnnl_bf16, dnnl_bf16, dnnl_f32, a, b, c, &what), what);
  return m;
fail:
  dnnl_bf16mm_free(m);
  return NULL;
}

int dnnl_bf16mm_run(void *arg) { return dnnl_i8_run(&((dnnl_bf16mm *)arg)->p); }

void dnnl_bf16mm_free(dnnl_bf16mm *m) {
  if (!m)
    return;
  dnnl_i8_close(&m->p);
  free(m);
}
