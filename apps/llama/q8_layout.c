/* q8_layout.c — Q8_0 weights in the layout of te-llama's int8 kernels (q8_layout.h). */
#include "q8_layout.h"

#include <stdlib.h>

/* One part: rows x cols from w, written from row vector `first` on. */
static void pack_part(const tl_matrix *w, int64_t rows, int64_t cols, int gs, int64_t first,
                      int64_t padded, tl_q8_matrix *out) {
  int64_t ng = cols / gs, L = TL_Q8_LANES;
  for (int64_t row = 0; row < padded; row++) {
    int64_t b = first + row / L, l = row % L;
    const int8_t *q = row < rows ? w->q + row * cols : NULL;
    for (int64_t g = 0; g < ng; g++) {
      uint8_t *dst = out->w + ((b * ng + g) * L) * gs + l * 4;
      for (int64_t r = 0; r < gs; r++) /* [r / 4][l][r % 4]: 4 rows' bytes apart per r / 4 */
        dst[(r / 4) * L * 4 + r % 4] = (uint8_t)(q ? q[g * gs + r] + 128 : 128);
      out->s[(b * ng + g) * L + l] = q ? w->s[row * ng + g] : 0.0f;
    }
  }
}

int tl_q8_pack(int nparts, const tl_matrix *const parts[], const int64_t rows[], int64_t cols,
               int gs, tl_q8_matrix *out) {
  int64_t A = TL_Q8_ROW_ALIGN, L = TL_Q8_LANES, total = 0;
  out->cols = cols, out->nparts = nparts;
  for (int p = 0; p < nparts; p++) {
    out->first[p] = total / L;
    total += (rows[p] + A - 1) / A * A;
  }
  out->first[nparts] = total / L;
  out->w = malloc((size_t)(total * cols));
  out->s = malloc(sizeof(float) * (size_t)(total * (cols / gs)));
  if (!out->w || !out->s) {
    tl_q8_matrix_free(out);
    return -1;
  }
  for (int p = 0; p < nparts; p++)
    pack_part(parts[p], rows[p], cols, gs, out->first[p], (out->first[p + 1] - out->first[p]) * L,
              out);
  return 0;
}

void tl_q8_matrix_free(tl_q8_matrix *m) {
  free(m->w), free(m->s);
  m->w = NULL, m->s = NULL;
}
