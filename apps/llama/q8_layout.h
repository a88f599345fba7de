/* q8_layout.h — Q8_0 weight matrices laid out as te-llama's int8 kernels read them
 * (gen/gen_q8.c): made once when the model is created, beside the checkpoint's (read-only,
 * mapped) values, which the reference keeps reading.
 *
 *   w[b][g][r / 4][l][r % 4] = q[16 b + l][g gs + r] + 128   (u8: vpdpbusd's unsigned side)
 *   s[b][g][l]               = the scale of row 16 b + l, group g
 *
 * One laid-out matrix may hold several of the checkpoint's with the same columns, one below the
 * other (a layer's wq, wk and wv: one product for all three when a token is generated). Each
 * part's rows are padded to a multiple of TL_Q8_ROW_ALIGN with weight 128 (the value 0) and
 * scale 0, so every block of rows a kernel runs is whole, and a part alone is a matrix too. */
#ifndef TL_Q8_LAYOUT_H
#define TL_Q8_LAYOUT_H
#include "checkpoint.h"

#include <stdint.h>

enum {
  TL_Q8_LANES = 16,     /* rows a vector (one int32 lane each) */
  TL_Q8_ROW_ALIGN = 64, /* the kernels' largest block of rows */
  TL_Q8_MAX_PARTS = 3,
};

typedef struct {
  uint8_t *w;
  float *s;
  int64_t cols;
  int nparts;
  int64_t first[TL_Q8_MAX_PARTS + 1]; /* the vector of rows where part p starts; first[nparts]:
                                         all of them */
} tl_q8_matrix;

/* Lays out the nparts matrices parts[p] (rows[p] x cols each, groups of gs; cols a multiple of
   gs) one below the other. 0, or -1 when out of memory (nothing allocated). */
int tl_q8_pack(int nparts, const tl_matrix *const parts[], const int64_t rows[], int64_t cols,
               int gs, tl_q8_matrix *out);
void tl_q8_matrix_free(tl_q8_matrix *);

#endif
