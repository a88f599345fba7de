/* q8_layout.c — Q8_0 weights in the layout of te-llama's int8 kernels (q8_layout.h). */
#include "q8_layout.h"

#include <stdlib.h>

int tl_q8_pack(const tl_matrix *w, int64_t rows, int64_t cols, int gs, tl_q8_matrix *out) {
  int64_t padded = (rows + TL_Q8_ROW_ALIGN - 1) / TL_Q8_ROW_ALIGN * TL_Q8_ROW_ALIGN;
  int64_t ng = cols / gs, L = TL_Q8_LANES;
  out->blocks = padded / L;
  out->w = malloc((size_t)(padded * cols));
  out->s = malloc(sizeof(float) * (size_t)(padded * ng));
  if (!out->w || !out->s) {
    tl_q8_matrix_free(out);
    return -1;
  }
  for (int64_t row = 0; row < padded; row++) {
    int64_t b = row / L, l = row % L;
    const int8_t *q = row < rows ? w->q + row * cols : NULL;
    for (int64_t g = 0; g < ng; g++) {
      uint8_t *dst = out->w + ((b * ng + g) * L) * gs + l * 4;
      for (int64_t r = 0; r < gs; r++) /* [r / 4][l][r % 4]: 4 rows' bytes apart per r / 4 */
        dst[(r / 4) * L * 4 + r % 4] = (uint8_t)(q ? q[g * gs + r] + 128 : 128);
      out->s[(b * ng + g) * L + l] = q ? w->s[row * ng + g] : 0.0f;
    }
  }
  return 0;
}

void tl_q8_matrix_free(tl_q8_matrix *m) {
  free(m->w), free(m->s);
  m->w = NULL, m->s = NULL;
}
