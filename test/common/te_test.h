/* te_test.h — helpers shared by the end-to-end and error tests (public API only).
 *
 * Buffers (tt_buf) are compact, 64-byte aligned DLTensors of any dtype and shape, filled with
 * seeded random NON-ZERO values, poisoned before a kernel runs (NaN for floats, a 0x5A byte
 * pattern for integers and bools) and compared against a plain C reference with a tolerance by
 * dtype. f16 and bf16 elements are read and written through te_test_half.h's reference
 * conversions (tt_set rounds to nearest even). Every buffer and the per-test context are
 * released by tt_teardown, so a failing assertion (which leaves the test function early) leaks
 * nothing.
 *
 * Use the fixture in each test file:
 *   TestSuite(elementwise, .init = tt_setup, .fini = tt_teardown);
 * and the context tt_ctx inside the tests.
 */
#ifndef TE_TEST_H
#define TE_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <te/te.h>

/* ---------------------------------------------------------------- fixture */

/* The context of the running test (made by tt_setup, freed by tt_teardown). */
extern te_ctx *tt_ctx;
void tt_setup(void);
void tt_teardown(void);

/* ---------------------------------------------------------------- buffers */

typedef struct tt_buf {
  DLTensor dl; /* data and shape point into this buffer; strides NULL (compact) */
  int64_t shape[TE_MAX_DIMS];
  int64_t numel;
  size_t elem_bytes; /* bool: 1 */
} tt_buf;

/* A compact buffer of the given dtype and shape (ndim may be 0), contents poisoned. Freed by
   tt_teardown. */
tt_buf *tt_alloc(te_dtype, int ndim, const int64_t shape[]);
#define TT_SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define TT_NDIM_(...) (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define TT_ALLOC(dtype, ...) tt_alloc((dtype), TT_NDIM_(__VA_ARGS__), TT_SHAPE(__VA_ARGS__))

/* Random NON-ZERO values from a seeded generator: floats in [-2,-0.1] U [0.1,2]; signed ints in
   [-9,9] \ {0}; unsigned ints in [1,9]; bools 0 or 1 (random). */
void tt_fill(tt_buf *, uint64_t seed);
/* Floats in [lo, hi] (both of one sign, or the zero neighbourhood excluded when they straddle
   0); ints in [lo, hi] without 0. */
void tt_fill_range(tt_buf *, uint64_t seed, double lo, double hi);
/* NaN for floats, 0x5A in every byte for integers and bools. */
void tt_poison(tt_buf *);

/* The plain C reference of C = A x B (row-major, A: m x k, B: k x n), into c (m x n), summed
   in double. */
void tt_ref_matmul(const tt_buf *a, const tt_buf *b, tt_buf *c, int64_t m, int64_t n, int64_t k);

/* Element access by flat (row-major) index; converts through double / int64. */
double tt_get(const tt_buf *, int64_t flat);
void tt_set(tt_buf *, int64_t flat, double v);
int64_t tt_geti(const tt_buf *, int64_t flat);
void tt_seti(tt_buf *, int64_t flat, int64_t v);

/* Compares got with ref element by element (dtypes and shapes must match). Floats: within
   rtol * (|ref| + m), where m is the mean magnitude of ref's finite elements (so an element
   near zero is judged at the scale of the values around it) and rtol is tt_rtol(dtype,
   reduce_len); infinities exactly. A NaN in ref fails the test: the poison is NaN, so a NaN
   result could be an element never written (poison such outputs with a finite value and check
   them explicitly). Ints and bools exactly. Fails the test naming the first mismatching index,
   the values and the count. */
#define tt_assert_close(got, ref, reduce_len)                                                      \
  tt_assert_close_((got), (ref), (reduce_len), __FILE__, __LINE__)
void tt_assert_close_(const tt_buf *got, const tt_buf *ref, int64_t reduce_len, const char *file,
                      int line);
/* The relative tolerance of a float dtype: 1e-4 for f32, 1e-10 for f64, 3e-3 for f16 (6 units
   of its rounding), 2e-2 for bf16 (5 units), times
   sqrt(reduce_len / 256) for sums longer than 256 terms (rounding errors of a sum grow like the
   square root of its length); reduce_len is the number of terms an element sums (1: none). */
double tt_rtol(te_dtype, int64_t reduce_len);

/* ---------------------------------------------------------------- building and calling */

#define TT_TENSORS(...) ((te_tensor *const[]){__VA_ARGS__})
#define TT_NT_(...) (int)(sizeof((te_tensor *const[]){__VA_ARGS__}) / sizeof(te_tensor *))
#define TT_BUFS(...) ((tt_buf *const[]){__VA_ARGS__})
#define TT_NB_(...) (int)(sizeof((tt_buf *const[]){__VA_ARGS__}) / sizeof(tt_buf *))

/* The host target ("llvm"); fails the test when it cannot be parsed. */
te_target *tt_target(void);
/* A schedule of one output; fails the test on error. */
te_schedule *tt_schedule1(te_tensor *out);
/* The stage of t in s; fails the test on error. */
te_stage *tt_stage(te_schedule *, te_tensor *);
/* Asserts that a te_status is TE_OK, printing te_last_error otherwise. */
#define TT_OK(expr) tt_ok_((expr), #expr, __FILE__, __LINE__)
void tt_ok_(te_status, const char *what, const char *file, int line);
/* Asserts a non-NULL result, printing te_last_error otherwise; returns p. */
#define TT_NN(expr) tt_nn_((expr), #expr, __FILE__, __LINE__)
void *tt_nn_(void *p, const char *what, const char *file, int line);

/* Builds the kernel `name` for the host; fails the test with te_last_error on failure. */
te_module *tt_build(te_schedule *, const char *name, int nt, te_tensor *const tensors[], int ns,
                    te_expr *const scalars[]);
/* Calls the kernel; fails the test with te_last_error on failure. */
void tt_call(te_module *, const char *name, int nt, tt_buf *const bufs[], int ns,
             const void *const scalars[]);
/* The DLTensor pointers of the buffers (for te_module_call directly). */
void tt_dl(int n, tt_buf *const bufs[], DLTensor *out[]);

/* ---------------------------------------------------------------- errors */

/* Asserts te_last_status(ctx) == status and that te_last_error(ctx) contains every substring
   (NULL-terminated list), printing status and message otherwise. */
#define TT_EXPECT_ERR(ctx, status, ...)                                                            \
  tt_expect_err_((ctx), (status), (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)
void tt_expect_err_(te_ctx *, te_status, const char *const substrs[], const char *file, int line);
/* Asserts that the context holds no error. */
#define TT_NO_ERR(ctx) tt_no_err_((ctx), __FILE__, __LINE__)
void tt_no_err_(te_ctx *, const char *file, int line);

/* ---------------------------------------------------------------- skips */

/* A test that needs what this machine lacks is skipped visibly: tt_skip prints "SKIP
   <suite>.<test>: <why>" and ends the test as skipped; tt_skip_part prints the same line for a
   part of the test and returns, so the rest still runs. When the feature is listed in the
   environment variable TE_REQUIRE (names separated by commas, e.g. TE_REQUIRE=vulkan,ptxas; CI
   sets it to what its machines have), both fail the test instead. Features: "vulkan" (a Vulkan
   driver, lavapipe on CPU machines), "ptxas", "cuda" (a CUDA driver and GPU), "spirv-val",
   "vulkan-int64" (a Vulkan device with Int64 and 8-bit storage), "avx512" (an AVX-512F host),
   and the programs some tests call by their names ("ar", "readelf", "ld.lld", ...). */
bool tt_required(const char *feature);
void tt_skip(const char *feature, const char *fmt, ...) __attribute__((format(printf, 2, 3)))
__attribute__((noreturn));
void tt_skip_part(const char *feature, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A suite's teardown for tt_skip to call first: a skipped test ends without the suite's .fini
   (Criterion), so what its .init made (a temporary directory) would be left behind. */
void tt_on_skip(void (*cleanup)(void));

/* te_test_ptxas.c: assembles ptx with NVIDIA's ptxas -arch=arch (PATH, $PTXAS or
   /usr/local/cuda/bin) and expects success, printing "ptxas -arch=ARCH WHAT: ok"; without
   ptxas a tt_skip_part("ptxas", ...) line (a failure under TE_REQUIRE=ptxas). */
void tt_ptxas_assemble(const char *what, const char *ptx, const char *arch);

/* ---------------------------------------------------------------- schedules and map kernels */

/* A line of context (e.g. the schedule being tried) printed with every failure of the helpers
   until the next tt_note; "" clears it. */
void tt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *tt_note_text(void);

/* Generic data-parallel schedules of an output stage (any rank), used so that every e2e kernel
   runs under several schedules:
     TT_S_DEFAULT  nothing;
     TT_S_SPLIT    split the last axis by 5 and the first by 3 (tails), then swap the first
                   outer and the last inner loop with te_reorder;
     TT_S_FUSE     fuse the first two axes (rank >= 2) and split the result by 7; rank 1:
                   split by 4 and split the outer loop again by 2;
     TT_S_NPARTS   split_nparts the first axis into 3, and split the inner result by 2. */
enum { TT_S_DEFAULT, TT_S_SPLIT, TT_S_FUSE, TT_S_NPARTS, TT_S_COUNT };
const char *tt_sched_name(int kind);
void tt_apply_sched(te_schedule *, te_tensor *out, int kind);

/* An element-wise kernel out[idx] = body(in0[idx], in1[idx], ...) on tensors of one shape,
   checked against ref, which computes out's element at a flat index from the inputs. */
typedef struct tt_map {
  const char *name;
  int nin;
  te_dtype in_dtype[4];
  double lo[4], hi[4]; /* fill range of each input; lo == hi means tt_fill */
  te_expr *(*body)(te_expr *const v[]);
  void (*ref)(tt_buf *const in[], tt_buf *out, int64_t i);
  te_dtype out_dtype; /* checked when bits != 0 */
} tt_map;
/* Builds and runs the map at the given shape under one schedule kind; fails the test on any
   error or mismatch. */
void tt_run_map(const tt_map *, int ndim, const int64_t shape[], int sched_kind);
/* tt_run_map under every schedule kind, at shape 7x13 and 1x1 (rank 2) and 37 (rank 1), each in
   a fresh context. */
void tt_run_map_all(const tt_map *);

/* Builds s into a kernel over ts (bufs in the same order; scalars as te_build/te_module_call
   take them), poisons got, runs the kernel and compares got with ref. */
void tt_check(te_schedule *s, int nt, te_tensor *const ts[], tt_buf *const bufs[], int ns,
              te_expr *const scalars[], const void *const values[], tt_buf *got, const tt_buf *ref,
              int64_t reduce_len);
/* tt_check of a fresh schedule of out under every generic schedule kind. */
void tt_check_all(te_tensor *out, int nt, te_tensor *const ts[], tt_buf *const bufs[], tt_buf *got,
                  const tt_buf *ref, int64_t reduce_len);

/* ---------------------------------------------------------------- small expression helpers */

te_expr *tt_at1(te_tensor *, te_expr *i);
te_expr *tt_at2(te_tensor *, te_expr *i, te_expr *j);
te_expr *tt_at3(te_tensor *, te_expr *i, te_expr *j, te_expr *k);
/* A placeholder with constant extents (ndim <= TE_MAX_DIMS). */
te_tensor *tt_placeholder(const char *name, te_dtype, int ndim, const int64_t shape[]);
/* C[i, j] = sum over k of A[i, k] * B[k, j], with C m x n and k in [0, kk) (names "C", "i", "j",
   "k"). */
te_tensor *tt_matmul(te_tensor *A, te_tensor *B, int64_t m, int64_t n, int64_t kk);
/* Constant shape expressions: out[i] = te_int(shape[i]). */
void tt_shape_exprs(int ndim, const int64_t shape[], te_expr *out[]);

/* Floor division / modulo of C integers (the reference for te_floordiv / te_floormod). */
int64_t tt_floordiv(int64_t a, int64_t b);
int64_t tt_floormod(int64_t a, int64_t b);

#endif
