/* bench_gpu.c — te-bench-gpu: te's CUDA kernels timed on the machine's NVIDIA GPU, each as a
 * fraction of the device's peak (default an H200: 67 TFLOP/s f32 without tensor cores, 4.8 TB/s;
 * TE_GPU_PEAK_TFLOPS and TE_GPU_PEAK_GBPS for another device).
 *
 *   sgemm      C = A x B, 4096^3 f32: 32 x 32 tiles of C a block, 16 x 16 threads, each thread
 *              2 x 2 elements, A and B tiles cached in shared memory at k.o (cooperative loads)
 *   mma        C = A x B, 4096^3, A and B bf16 (and f16), C f32, on the tensor cores:
 *              te_tensorize(C, i.inner, "mma_m16n8k16") (16 x 8 x 16 tiles, mma.sync); a block of
 *              4 warps, each warp 4 tiles side by side (16 x 32 of C), A and B read from global
 *              memory (through L1/L2: no shared-memory staging in this version); as a fraction
 *              of the dense tensor-core peak (990 TFLOP/s bf16 on an H200;
 *              TE_GPU_PEAK_TC_TFLOPS for another device)
 *   softmax    te_op_softmax over 8192 x 8192 f32: a row a block, 256 threads
 *   layernorm  te_op_layer_norm over 8192 x 8192 f32: a row a block, 256 threads
 *
 * Each kernel is checked before it is timed: a sample of output elements against a plain C
 * computation (a wrong kernel prints FAIL and the program exits 1). Times are medians of 10
 * runs after a warm-up. Without a CUDA device it prints a SKIP line and exits 0 (77 with
 * --require-gpu), so it can be built and run everywhere (scripts/gpu-check.sh runs it);
 * --build-only builds the kernels and stops (CTest apps.bench_gpu_build).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <te/device.h>
#include <te/te.h>

#define E(...) ((te_expr *const[]){__VA_ARGS__})
#define T(...) ((te_tensor *const[]){__VA_ARGS__})

static const DLDevice gpu = {kDLCUDA, 0};

static int bad(te_ctx *ctx, const char *what) {
  fprintf(stderr, "te-bench-gpu: %s: %s\n", what,
          ctx ? te_last_error(ctx) : te_device_last_error());
  exit(1);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A device tensor of n f32 (shape given) filled from host data (NULL: left as allocated). */
typedef struct dbuf {
  DLTensor dl;
  int64_t shape[2];
  size_t bytes;
} dbuf;

static void dbuf_new(dbuf *b, int ndim, int64_t d0, int64_t d1, const float *host) {
  b->shape[0] = d0, b->shape[1] = d1;
  b->bytes = (size_t)d0 * (size_t)(ndim > 1 ? d1 : 1) * sizeof(float);
  void *p = NULL;
  if (te_device_alloc(gpu, b->bytes, &p) != TE_OK)
    bad(NULL, "te_device_alloc");
  if (host && te_device_copy(p, gpu, host, (DLDevice){kDLCPU, 0}, b->bytes) != TE_OK)
    bad(NULL, "te_device_copy");
  b->dl = (DLTensor){p, gpu, ndim, {kDLFloat, 32, 1}, b->shape, NULL, 0};
}

static float *random_host(size_t n, unsigned seed) {
  float *h = malloc(n * sizeof *h);
  if (!h)
    bad(NULL, "out of memory");
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = (float)((seed >> 8) & 0xffff) / 65536.0f * 2.0f - 1.0f;
  }
  return h;
}

/* Median seconds of 10 calls (after one warm-up), each synchronized. */
static double time_calls(te_ctx *ctx, te_module *m, const char *name, int nt, DLTensor **ts) {
  double t[10];
  for (int r = -1; r < 10; r++) {
    double t0 = now();
    if (te_module_call(m, name, nt, ts, 0, NULL) != TE_OK)
      bad(ctx, name);
    if (te_device_sync(gpu) != TE_OK)
      bad(NULL, "te_device_sync");
    if (r >= 0)
      t[r] = now() - t0;
  }
  qsort(t, 10, sizeof t[0], cmp_double);
  return t[5];
}

static float *download(const dbuf *b) {
  float *h = malloc(b->bytes);
  if (!h || te_device_copy(h, (DLDevice){kDLCPU, 0}, b->dl.data, gpu, b->bytes) != TE_OK)
    bad(NULL, "te_device_copy back");
  return h;
}

/* |got - want| within 1e-3 of the row's scale: the sample check before timing. */
static void check(const char *what, double got, double want, double scale) {
  if (!(fabs(got - want) <= 1e-3 * (fabs(want) + scale))) {
    printf("FAIL %s: got %.6g, expected %.6g\n", what, got, want);
    exit(1);
  }
}

static double peak_tflops, peak_gbps, peak_tc_tflops;
static bool build_only; /* --build-only: the kernels are built (PTX), nothing runs */

static void bench_sgemm(void) {
  enum { N = 4096 };
  te_ctx *ctx = te_ctx_new();
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *n = te_int(ctx, N);
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), n);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(n, n));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(n, n));
  te_tensor *c =
      te_compute(ctx, "C", 2, E(n, n), E(i, j), TE_SUM(te_mul(TE_AT(a, i, k), TE_AT(b, k, j)), k));
  te_schedule *s = te_schedule_new(ctx, 1, T(c));
  te_stage *sc = te_stage_of(s, c);
  te_iter *io, *jo, *ii, *ji, *ty, *iy, *tx, *ix, *ko, *ki;
  te_tensor *as, *bs;
  te_status st[] = {
      te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 32, 32, &io, &jo, &ii, &ji),
      te_split(sc, ii, 2, &ty, &iy),
      te_split(sc, ji, 2, &tx, &ix),
      te_split(sc, te_reduce_iter(sc, 0), 16, &ko, &ki),
      te_reorder(sc, 8, (te_iter *const[]){io, jo, ty, tx, ko, ki, iy, ix}),
      te_bind(sc, io, TE_BLOCK_Y),
      te_bind(sc, jo, TE_BLOCK_X),
      te_bind(sc, ty, TE_THREAD_Y),
      te_bind(sc, tx, TE_THREAD_X),
      te_cache_read(s, a, TE_SCOPE_SHARED, 1, (te_stage *const[]){sc}, &as),
      te_cache_read(s, b, TE_SCOPE_SHARED, 1, (te_stage *const[]){sc}, &bs),
  };
  for (size_t q = 0; q < sizeof st / sizeof st[0]; q++)
    if (st[q] != TE_OK)
      bad(ctx, "sgemm schedule");
  te_tensor *caches[2] = {as, bs};
  for (int q = 0; q < 2; q++) { /* each tile copied by the 16 x 16 threads together */
    te_stage *sx = te_stage_of(s, caches[q]);
    te_iter *f, *o, *in, *o2, *o1;
    if (te_compute_at(sx, sc, ko) || te_fuse(sx, te_axis(sx, 0), te_axis(sx, 1), &f) ||
        te_split(sx, f, 16, &o, &in) || te_split(sx, o, 16, &o2, &o1) ||
        te_bind(sx, o1, TE_THREAD_Y) || te_bind(sx, in, TE_THREAD_X))
      bad(ctx, "sgemm cache schedule");
  }
  te_module *m = NULL;
  if (te_build(s, "sgemm", 3, T(a, b, c), 0, NULL, te_target_parse(ctx, "cuda -arch=sm_90"), &m))
    bad(ctx, "sgemm build");
  if (build_only) {
    printf("sgemm: built (%zu bytes of PTX)\n", strlen(te_module_source(m, "ptx")));
    te_ctx_free(ctx);
    return;
  }
  float *ha = random_host((size_t)N * N, 1), *hb = random_host((size_t)N * N, 2);
  dbuf da, db, dc;
  dbuf_new(&da, 2, N, N, ha), dbuf_new(&db, 2, N, N, hb), dbuf_new(&dc, 2, N, N, NULL);
  DLTensor *ts[3] = {&da.dl, &db.dl, &dc.dl};
  double t = time_calls(ctx, m, "sgemm", 3, ts);
  float *hc = download(&dc);
  for (int q = 0; q < 64; q++) {
    int r = (q * 977) % N, col = (q * 1531 + 7) % N;
    double want = 0;
    for (int kk = 0; kk < N; kk++)
      want += (double)ha[(size_t)r * N + kk] * hb[(size_t)kk * N + col];
    check("sgemm", hc[(size_t)r * N + col], want, sqrt((double)N) * 0.5);
  }
  double tflops = 2.0 * N * N * (double)N / t / 1e12;
  printf("sgemm 4096 f32     %8.3f ms  %7.2f TFLOP/s  %.3f of peak (%.0f TFLOP/s)\n", t * 1e3,
         tflops, tflops / peak_tflops, peak_tflops);
  free(ha), free(hb), free(hc);
  for (int q = 0; q < 3; q++)
    te_device_free(gpu, ts[q]->data);
  te_ctx_free(ctx);
}

/* f to the 16-bit type's bits, rounded to nearest even (bf16: the top half of the f32 bits). */
static uint16_t to_half(te_dtype t, float f) {
  if (t.code == kDLFloat) {
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
  }
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float from_half(te_dtype t, uint16_t u) {
  if (t.code == kDLFloat) {
    _Float16 h;
    memcpy(&h, &u, 2);
    return (float)h;
  }
  uint32_t w = (uint32_t)u << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

static void bench_mma(te_dtype in, const char *label) {
  enum { N = 4096 };
  te_ctx *ctx = te_ctx_new();
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *n = te_int(ctx, N);
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), n);
  te_tensor *a = te_placeholder(ctx, "A", in, 2, E(n, n));
  te_tensor *b = te_placeholder(ctx, "B", in, 2, E(n, n));
  te_expr *prod = te_mul(te_cast(TE_F32, TE_AT(a, i, k)), te_cast(TE_F32, TE_AT(b, k, j)));
  te_tensor *c = te_compute(ctx, "C", 2, E(n, n), E(i, j), TE_SUM(prod, k));
  te_schedule *s = te_schedule_new(ctx, 1, T(c));
  te_stage *sc = te_stage_of(s, c);
  te_iter *io, *jo, *ii, *ji, *ko, *ki, *jb, *jw, *jwo, *jt;
  te_status st[] = {
      te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 16, 8, &io, &jo, &ii, &ji),
      te_split(sc, jo, 16, &jb, &jw), /* 16 tiles of 8 columns a block */
      te_split(sc, jw, 4, &jwo, &jt), /* 4 warps, 4 tiles each */
      te_split(sc, te_reduce_iter(sc, 0), 16, &ko, &ki),
      te_reorder(sc, 8, (te_iter *const[]){io, jb, jwo, ko, jt, ii, ji, ki}),
      te_bind(sc, io, TE_BLOCK_Y),
      te_bind(sc, jb, TE_BLOCK_X),
      te_bind(sc, jwo, TE_THREAD_X),
      te_tensorize(sc, ii, "mma_m16n8k16"),
  };
  for (size_t q = 0; q < sizeof st / sizeof st[0]; q++)
    if (st[q] != TE_OK)
      bad(ctx, "mma schedule");
  te_module *m = NULL;
  if (te_build(s, "mma", 3, T(a, b, c), 0, NULL, te_target_parse(ctx, "cuda -arch=sm_90"), &m))
    bad(ctx, "mma build");
  if (build_only) {
    printf("mma %s: built (%zu bytes of PTX)\n", label, strlen(te_module_source(m, "ptx")));
    te_ctx_free(ctx);
    return;
  }
  size_t nn = (size_t)N * N;
  float *fa = random_host(nn, 3), *fb = random_host(nn, 4);
  uint16_t *ha = malloc(nn * 2), *hb = malloc(nn * 2);
  if (!ha || !hb)
    bad(NULL, "out of memory");
  for (size_t q = 0; q < nn; q++) { /* the reference sees the rounded inputs */
    ha[q] = to_half(in, fa[q]), fa[q] = from_half(in, ha[q]);
    hb[q] = to_half(in, fb[q]), fb[q] = from_half(in, hb[q]);
  }
  dbuf da, db, dc;
  dbuf_new(&da, 2, N, N / 2, NULL), dbuf_new(&db, 2, N, N / 2, NULL); /* N*N*2 bytes */
  if (te_device_copy(da.dl.data, gpu, ha, (DLDevice){kDLCPU, 0}, nn * 2) != TE_OK ||
      te_device_copy(db.dl.data, gpu, hb, (DLDevice){kDLCPU, 0}, nn * 2) != TE_OK)
    bad(NULL, "te_device_copy");
  da.shape[1] = db.shape[1] = N;
  da.dl.dtype = db.dl.dtype = (DLDataType){(uint8_t)in.code, 16, 1};
  dbuf_new(&dc, 2, N, N, NULL);
  DLTensor *ts[3] = {&da.dl, &db.dl, &dc.dl};
  double t = time_calls(ctx, m, "mma", 3, ts);
  float *hc = download(&dc);
  for (int q = 0; q < 64; q++) {
    int r = (q * 977) % N, col = (q * 1531 + 7) % N;
    double want = 0;
    for (int kk = 0; kk < N; kk++)
      want += (double)fa[(size_t)r * N + kk] * fb[(size_t)kk * N + col];
    check("mma", hc[(size_t)r * N + col], want, sqrt((double)N) * 0.5);
  }
  double tflops = 2.0 * N * N * (double)N / t / 1e12;
  printf("mma 4096 %-5s     %8.3f ms  %7.2f TFLOP/s  %.3f of tensor-core peak (%.0f TFLOP/s)\n",
         label, t * 1e3, tflops, tflops / peak_tc_tflops, peak_tc_tflops);
  free(fa), free(fb), free(ha), free(hb), free(hc);
  for (int q = 0; q < 3; q++)
    te_device_free(gpu, ts[q]->data);
  te_ctx_free(ctx);
}

/* A row a block: the output's axis 0 bound to blocks, axis 1 split by 256 over threads; the
   named inner stages computed at the row (reductions by one thread, maps over the threads). */
static void row_schedule(te_ctx *ctx, te_schedule *s, te_tensor *out, const char *const at[],
                         int nat, const char *const maps[], int nmaps) {
  te_stage *so = te_stage_of(s, out);
  for (int q = 0; q < nat; q++) /* readers first */
    if (te_compute_at(te_stage_of(s, te_op_stage(out, at[q])), so, te_axis(so, 0)))
      bad(ctx, at[q]);
  te_iter *o, *in;
  if (te_bind(so, te_axis(so, 0), TE_BLOCK_X) || te_split(so, te_axis(so, 1), 256, &o, &in) ||
      te_bind(so, in, TE_THREAD_X))
    bad(ctx, "row schedule");
  for (int q = 0; q < nmaps; q++) {
    te_stage *sm = te_stage_of(s, te_op_stage(out, maps[q]));
    if (te_split(sm, te_axis(sm, 1), 256, &o, &in) || te_bind(sm, in, TE_THREAD_X))
      bad(ctx, maps[q]);
  }
}

static void bench_rows(bool layernorm) {
  enum { R = 8192, D = 8192 };
  te_ctx *ctx = te_ctx_new();
  te_tensor *x = te_placeholder(ctx, "x", TE_F32, 2, E(te_int(ctx, R), te_int(ctx, D)));
  te_tensor *g = te_placeholder(ctx, "g", TE_F32, 1, E(te_int(ctx, D)));
  te_tensor *bt = te_placeholder(ctx, "b", TE_F32, 1, E(te_int(ctx, D)));
  te_tensor *out =
      layernorm ? te_op_layer_norm(ctx, x, g, bt, 1e-5, "ln") : te_op_softmax(ctx, x, "sm");
  if (!out)
    bad(ctx, "op");
  te_schedule *s = te_schedule_new(ctx, 1, T(out));
  static const char *const sm_at[] = {"sum", "exp", "max"}, *const sm_maps[] = {"exp"};
  static const char *const ln_at[] = {"var", "mean"};
  if (layernorm)
    row_schedule(ctx, s, out, ln_at, 2, NULL, 0);
  else
    row_schedule(ctx, s, out, sm_at, 3, sm_maps, 1);
  const char *name = layernorm ? "layernorm" : "softmax";
  te_module *m = NULL;
  int nt = layernorm ? 4 : 2;
  te_tensor *const *tensors = layernorm ? T(x, g, bt, out) : T(x, out);
  if (te_build(s, name, nt, tensors, 0, NULL, te_target_parse(ctx, "cuda -arch=sm_90"), &m))
    bad(ctx, name);
  if (build_only) {
    printf("%s: built (%zu bytes of PTX)\n", name, strlen(te_module_source(m, "ptx")));
    te_ctx_free(ctx);
    return;
  }
  float *hx = random_host((size_t)R * D, 3), *hg = random_host(D, 4), *hb = random_host(D, 5);
  dbuf dx, dg, db, dout;
  dbuf_new(&dx, 2, R, D, hx), dbuf_new(&dg, 1, D, 0, hg), dbuf_new(&db, 1, D, 0, hb);
  dbuf_new(&dout, 2, R, D, NULL);
  DLTensor *ts4[4] = {&dx.dl, &dg.dl, &db.dl, &dout.dl}, *ts2[2] = {&dx.dl, &dout.dl};
  double t = time_calls(ctx, m, name, nt, layernorm ? ts4 : ts2);
  float *ho = download(&dout);
  for (int q = 0; q < 8; q++) { /* whole rows, a few columns each */
    int r = (q * 1237) % R;
    const float *row = hx + (size_t)r * D;
    double mx = -INFINITY, sum = 0, mean = 0, var = 0;
    for (int c = 0; c < D; c++)
      mx = fmax(mx, row[c]), mean += row[c];
    mean /= D;
    for (int c = 0; c < D; c++)
      sum += exp(row[c] - mx), var += (row[c] - mean) * (row[c] - mean);
    var /= D;
    for (int c = 0; c < D; c += 911) {
      double want =
          layernorm ? (row[c] - mean) / sqrt(var + 1e-5) * hg[c] + hb[c] : exp(row[c] - mx) / sum;
      check(name, ho[(size_t)r * D + c], want, layernorm ? 1.0 : 1.0 / D);
    }
  }
  double bytes = 2.0 * R * (double)D * sizeof(float); /* read x once, write out once */
  double gbps = bytes / t / 1e9;
  printf("%-9s 8192^2 f32 %8.3f ms  %7.1f GB/s     %.3f of peak (%.0f GB/s)\n", name, t * 1e3, gbps,
         gbps / peak_gbps, peak_gbps);
  free(hx), free(hg), free(hb), free(ho);
  for (int q = 0; q < 4; q++)
    te_device_free(gpu, ts4[q]->data);
  te_ctx_free(ctx);
}

static double env_or(const char *name, double dflt) {
  const char *v = getenv(name);
  return v && *v ? atof(v) : dflt;
}

int main(int argc, char **argv) {
  bool require = argc > 1 && !strcmp(argv[1], "--require-gpu");
  build_only = argc > 1 && !strcmp(argv[1], "--build-only");
  if (!build_only && !te_device_available(kDLCUDA)) {
    printf("SKIP te-bench-gpu: no CUDA device: %s\n", te_device_last_error());
    return require ? 77 : 0;
  }
  peak_tflops = env_or("TE_GPU_PEAK_TFLOPS", 67.0);
  peak_gbps = env_or("TE_GPU_PEAK_GBPS", 4800.0);
  peak_tc_tflops = env_or("TE_GPU_PEAK_TC_TFLOPS", 990.0);
  bench_sgemm();
  bench_mma(TE_BF16, "bf16");
  bench_mma(TE_F16, "f16");
  bench_rows(false);
  bench_rows(true);
  return 0;
}
