/* fuzz_workloads.h — the computations the schedule fuzz targets schedule, as workload texts
 * (docs/workload-text.md), and a parsed instance of one (header only, public API only).
 *
 * Small shapes that split factors do not divide, several stages (for placements and caches),
 * reductions (for rfactor), a multi-output custom reducer, symbolic sizes and a scalar
 * parameter, f64 and integer types, and a quantized kernel (u8 x i8 summed in i32, then the
 * bitwise and shift operators).
 */
#ifndef TE_FUZZ_WORKLOADS_H
#define TE_FUZZ_WORKLOADS_H

#include "fuzz_util.h"

typedef struct fz_workload_text {
  const char *name, *text;
} fz_workload_text;

static const fz_workload_text FZ_WORKLOADS[] = {
    {"matmul",
     "C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[13, 11], B: f32[11, 17], k: [0, 11)"},
    {"producer", "P[i, j] = A[i, j]*2.0f + 1.0f;\n"
                 "C[i] = sum(P[i, r]*v[r], r)\n"
                 "where A: f32[9, 14], v: f32[14], r: [0, 14)"},
    {"blur", "bx[y, x] = (I[y, x] + I[y, x + 1] + I[y, x + 2])/3.0f;\n"
             "by[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x])/3.0f\n"
             "where I: f32[13, 21], bx: [13, 19], by: [11, 19]"},
    {"sum2", "S[i] = sum(X[i, j, k], j, k);\n"
             "T[i] = max(S[i], 0.5f)\n"
             "where X: f32[5, 7, 6], j: [0, 7), k: [0, 6)"},
    {"argmax", "M[i] = argmax((k, A[i, k]), k)\n"
               "where A: f32[7, 10], k: [0, 10),\n"
               "      argmax: reducer (li: i64, lv: f32) (ri: i64, rv: f32)\n"
               "              = (select(rv > lv, ri, li), max(lv, rv)) identity (-1, f32(-inf))"},
    {"symbolic", "C[i, j] = A[i, j]*alpha + B[j] where A: f32[M, N], B: f32[N], alpha: f32"},
    {"int_matmul", "C[i, j] = sum(A[i, k]*B[k, j], k) where A: i32[6, 9], B: i32[9, 5], k: [0, 9)"},
    {"pad_f64",
     "P[y, x] = if_then_else(y >= 1 && y <= 8 && x >= 1 && x <= 10, I[y - 1, x - 1], 0.0);\n"
     "O[y, x] = P[y, x] + P[y + 1, x + 1]*0.5\n"
     "where I: f64[8, 10], P: [10, 12], O: [9, 11]"},
    {"quantized", "C[i, j] = sum(i32(A[i, k])*i32(B[k, j]), k);\n"
                  "Q[i, j] = rounding_shift_right(bitwise_xor(C[i, j], 21), 3) + "
                  "shift_right(C[i, j], 9) + bitwise_and(shift_left(C[i, j], 2), 1023)\n"
                  "where A: u8[7, 12], B: i8[12, 9], k: [0, 12)"},
};
enum { FZ_NWORKLOADS = (int)(sizeof FZ_WORKLOADS / sizeof FZ_WORKLOADS[0]) };

/* A parsed workload: its outputs, then the kernel's tensors (inputs, then outputs) and scalar
   parameters as te_build takes them. */
typedef struct fz_workload {
  int index;
  int nout, nin, nparams;
  te_tensor **outs, **ins;
  te_expr **params;
  int nt;
  te_tensor *tensors[16];
} fz_workload;

/* Parses workload `index` in ctx; a fixed text that fails to parse is a bug of te (or of this
   table): abort. */
static inline void fz_workload_parse(te_ctx *ctx, int index, fz_workload *w, const char *target) {
  memset(w, 0, sizeof *w);
  w->index = index;
  const char *text = FZ_WORKLOADS[index].text;
  if (te_parse(ctx, text, &w->nout, &w->outs) != TE_OK ||
      te_workload_inputs(w->nout, w->outs, &w->nin, &w->ins, &w->nparams, &w->params) != TE_OK)
    fz_fail(target, "a fixed workload does not parse", text, te_last_error(ctx));
  for (int i = 0; i < w->nin && w->nt < 16; i++)
    w->tensors[w->nt++] = w->ins[i];
  for (int i = 0; i < w->nout && w->nt < 16; i++)
    w->tensors[w->nt++] = w->outs[i];
}

/* The workload a text names on its first line ("matmul\n..."); -1 when it names none. */
static inline int fz_workload_named(const char *text, size_t *skip) {
  for (int k = 0; k < FZ_NWORKLOADS; k++) {
    size_t n = strlen(FZ_WORKLOADS[k].name);
    if (strncmp(text, FZ_WORKLOADS[k].name, n) == 0 && (text[n] == '\n' || text[n] == 0)) {
      *skip = text[n] ? n + 1 : n;
      return k;
    }
  }
  *skip = 0;
  return -1;
}

#endif
