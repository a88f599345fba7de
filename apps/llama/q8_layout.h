/* q8_layout.h — a Q8_0 weight matrix laid out as te-llama's int8 kernels read it
 * (gen/gen_q8.c): made once when the model is created, beside the checkpoint's (read-only,
 * mapped) values, which the reference keeps reading.
 *
 *   w[b][g][r / 4][l][r % 4] = q[16 b + l][g gs + r] + 128   (u8: vpdpbusd's unsigned side)
 *   s[b][g][l]               = the scale of row 16 b + l, group g
 *
 * Rows are padded to a multiple of TL_Q8_ROW_ALIGN with weight 128 (the value 0) and scale 0,
 * so every block of rows a kernel runs is whole. */
#ifndef TL_Q8_LAYOUT_H
#define TL_Q8_LAYOUT_H
#include "checkpoint.h"

#include <stdint.h>

enum {
  TL_Q8_LANES = 16,     /* rows a vector (one int32 lane each) */
  TL_Q8_ROW_ALIGN = 64, /* the kernels' largest block of rows */
};

typedef struct {
  uint8_t *w;
  float *s;
  int64_t blocks; /* padded rows / TL_Q8_LANES */
} tl_q8_matrix;

/* Lays out w (rows x cols, groups of gs; cols a multiple of gs). 0, or -1 when out of memory
   (nothing allocated). */
int tl_q8_pack(const tl_matrix *w, int64_t rows, int64_t cols, int gs, tl_q8_matrix *out);
void tl_q8_matrix_free(tl_q8_matrix *);

#endif
