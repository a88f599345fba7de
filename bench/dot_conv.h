/* dot_conv.h — the conv2d the low-precision conv rows share (int8conv.c: u8 x s8 -> s32 with
 * vpdpbusd; bf16conv.c: bf16 x bf16 -> f32 with vdpbf16ps): the ResNet-50 3x3 layer (N = 1,
 * C = K = 64, 56 x 56, stride 1, pad 1), NHWC data and output, its te definition and hand
 * schedule, the weights' packing and the f64 reference. The two rows differ only in their dtypes
 * and in how many consecutive input channels one lane of the instruction sums (its group G: 4
 * bytes or 2 bf16 values).
 *
 * te takes the weights as Kp[ry][rx][c / G][o][c % G] (G consecutive input channels of one
 * output channel in a 32-bit lane: the VNNI layout), packed outside the timed call as inference
 * engines store them. The kernel pads the data into a stage (parallel) and computes each 8 x 32
 * tile of (x, o) of a row in a local block: loops ry, rx, c / G, x (8, unrolled), o.v (2,
 * unrolled), c % G (te_tensorize), o (16, vectorized): 16 zmm accumulators, each step 8
 * broadcasts of one 32-bit lane of data and 2 loads of weights feeding 16 instructions. Rows are
 * parallel. The flags of te_util.h's ladder drop the steps in turn (TB_EXTRA is te_tensorize).
 */
#ifndef TE_BENCH_DOT_CONV_H
#define TE_BENCH_DOT_CONV_H

#include <stddef.h>

#include "te_util.h"

enum { DC_N = 1, DC_C = 64, DC_K = 64, DC_H = 56, DC_W = 56, DC_CHECK_ROWS = 3 };

typedef struct dot_conv {
  te_dtype data, weight, acc; /* D's and Kp's dtypes, O's (the accumulator) */
  int group;                  /* consecutive input channels one lane of the instruction sums */
  const char *instruction;    /* te_tensorize's name for it */
} dot_conv;

/* A tb_define_fn: params is a dot_conv. Tensors D (NHWC), Kp (above), O (NHWC). */
void dot_conv_define(te_ctx *, unsigned flags, const void *params, tb_def *out);

/* The output rows the checks compare (first, middle, last: both paddings and none). */
extern const int dot_conv_rows[DC_CHECK_ROWS];

/* Packs HWIO weights of elem bytes each into Kp (same size). */
void dot_conv_pack(const void *hwio, void *kp, size_t elem, int group);

/* The f64 reference of the rows dot_conv_rows from the data (NHWC) and HWIO weights as doubles:
   ref[q][x][o] (DC_CHECK_ROWS x W x K) and, when scale is not NULL, the sum of the products'
   magnitudes at each point (the scale of a float sum's rounding). */
void dot_conv_reference(const double *in, const double *w_hwio, double *ref, double *scale);

#endif
