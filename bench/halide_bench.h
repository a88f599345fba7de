/* halide_bench.h — the Halide 14 anchors, seen from C.
 *
 * Each constructor defines a Halide pipeline over the caller's buffers (wrapped, not copied),
 * schedules it by hand (the schedules are in the .cpp files and described there), and JIT-compiles
 * it for the host, timing the compilation. parallel = 0 gives the same schedule without
 * .parallel(), for the one-thread rows (Halide's JIT thread pool is process-wide).
 * On failure they return NULL and write Halide's message into err.
 */
#ifndef TE_BENCH_HALIDE_BENCH_H
#define TE_BENCH_HALIDE_BENCH_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hl_pipe hl_pipe;

/* C[i][j] = sum_k A[i][k] * B[k][j], all n x n row-major. */
hl_pipe *hl_sgemm_new(int n, const float *a, const float *b, float *c, int parallel, char *err,
                      int err_size);
/* NCHW conv2d, 3x3, stride 1, pad 1: out[n][k][y][x] = sum_{c,ry,rx} w[k][c][ry][rx] *
   in[n][c][y+ry-1][x+rx-1] (zero outside). */
hl_pipe *hl_conv2d_new(int batch, int chans, int height, int width, int kout, const float *in,
                       const float *w, float *out, int parallel, char *err, int err_size);
/* out[y][x] = (bx[y][x] + bx[y+1][x] + bx[y+2][x]) / 3 with bx[y][x] = (in[y][x] + in[y][x+1] +
   in[y][x+2]) / 3; in is (h + 2) x (w + 2), out h x w (row-major). */
hl_pipe *hl_blur_new(int width, int height, const float *in, float *out, int parallel, char *err,
                     int err_size);

/* Seconds compile_jit took. */
double hl_compile_s(const hl_pipe *);
/* Runs the pipeline once (a bench_fn: the argument is the hl_pipe). 0 on success. */
int hl_run(void *pipe);
void hl_free(hl_pipe *);
/* Compiles and runs a trivial pipeline, so the first timed compile does not pay for Halide's
   one-time JIT runtime setup. */
void hl_warm_up(void);
/* Halide's JIT target for this host, as text. */
void hl_target_str(char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
