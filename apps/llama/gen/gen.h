/* gen.h — the kernel generator of te-llama (run at build time by te_add_kernel_library).
 *
 * Every kernel has symbolic sizes only (tokens, model width, hidden width, heads, positions), so
 * one library serves every checkpoint shape; the group size of the int8 kernels is the one
 * constant (a kernel per supported size). Each builder defines its computation, schedules it
 * and builds it for the target into *out. */
#ifndef TL_GEN_H
#define TL_GEN_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <te/te.h>

/* Returns a te call's status from the enclosing builder when it is not TE_OK. */
#define TRY(x)                                                                                     \
  do {                                                                                             \
    te_status try_r_ = (x);                                                                        \
    if (try_r_ != TE_OK)                                                                           \
      return try_r_;                                                                               \
  } while (0)

typedef te_status (*tl_gen_fn)(te_ctx *, te_target *, te_module **out);

/* gen_tasks.c: tuning the dense kernels as a model (docs/tuning-tasks.md). tl_gen sets tl_tune;
   a tunable builder takes its sizes T, n and k from tl_size (constant, the model shape's, while
   tl_tune.constant, else symbolic te_vars) and ends in tl_finish instead of te_build (the same
   arguments): with the sizes constant it writes the kernel to tl_tune.tasks as a task line, or
   finds its best schedule in tl_tune.log; then, symbolic, it replays that schedule and builds.
   A global, not an argument: every builder has tl_gen_fn's signature. */
typedef struct tl_shape {
  int64_t dim, hidden, layers, tokens; /* model width, FFN width, layers, prompt tokens */
} tl_shape;
typedef struct tl_tuning {
  te_ctx *ctx;
  tl_shape shape;
  bool constant;      /* build the kernel at shape, for a task or the log's look-up */
  const char *kernel; /* the kernel being built */
  FILE *tasks;        /* --export-tasks */
  const char *log;    /* --tuning-log */
  char *trace;        /* the log's schedule of the kernel being built (malloc'd) */
  bool no_guard;      /* take the log's schedule without timing it against the hand one */
  int found, tuned;   /* kernels found in log; built with its schedule */
  int same;           /* of found: the log's best is the hand schedule (hand kept, untimed) */
  int replayed, kept; /* of found: replayed on the symbolic kernel; of those, hand kept */
} tl_tuning;
extern tl_tuning tl_tune;
bool tl_tunable(const char *kernel);
te_expr *tl_size(te_ctx *, const char *name);
te_status tl_finish(te_schedule *, const char *name, int nargs, te_tensor *const args[],
                    int nparams, te_expr *const params[], te_target *, te_module **out);
/* The sizes of tunable kernel name at tl_tune.shape: *T tokens (1 for a matvec), an n x k
   weight; false when name is not tunable. */
bool tl_kernel_shape(const char *name, int64_t *T, int64_t *n, int64_t *k);
/* gen_guard.c: times the hand and the tuned build of dense kernel name side by side at
   tl_tune.shape (tg_compare, apps/common/tune_guard.h) into *out; out->use_tuned when the tuned
   one is clearly faster (tg_prefer_tuned's rule). */
enum { TL_GUARD_TOKENS = 32 }; /* the tokens of a timed matmul: of the tuned 128, 32 */
struct tg_verdict;
te_status tl_guard(const char *name, te_module *hand, te_module *tuned, struct tg_verdict *out);

/* gen_dense.c: f32 weight products (W is n x k, row-major, as llama2.c stores it) */
te_status tl_gen_matvec(te_ctx *, te_target *, te_module **);     /* Y[n] = W X[k]          */
te_status tl_gen_matvec_add(te_ctx *, te_target *, te_module **); /* Y[n] = R[n] + W X[k]   */
te_status tl_gen_matvec_swiglu(te_ctx *, te_target *, te_module **);
/* the same three with bf16 weights (W, W3 bf16; X, R, Y f32; f32 arithmetic) */
te_status tl_gen_bf16_matvec(te_ctx *, te_target *, te_module **);
te_status tl_gen_bf16_matvec_add(te_ctx *, te_target *, te_module **);
te_status tl_gen_bf16_matvec_swiglu(te_ctx *, te_target *, te_module **);
/* gen_matmul.c: the prompt's products, T tokens at once (an SGEMM schedule when 32 divides T) */
te_status tl_gen_matmul(te_ctx *, te_target *, te_module **); /* Y[t, n] = X[t, :] . W  */
te_status tl_gen_matmul_add(te_ctx *, te_target *, te_module **);
te_status tl_gen_matmul_swiglu(te_ctx *, te_target *, te_module **);
te_status tl_gen_bf16_matmul(te_ctx *, te_target *, te_module **);
te_status tl_gen_bf16_matmul_add(te_ctx *, te_target *, te_module **);
te_status tl_gen_bf16_matmul_swiglu(te_ctx *, te_target *, te_module **);

/* gen_layer.c: RMSNorm and RoPE */
te_status tl_gen_rmsnorm(te_ctx *, te_target *, te_module **);
te_status tl_gen_rope(te_ctx *, te_target *, te_module **);
/* gen_attention.c: attention over te-llama's KV cache layout (described there) */
te_status tl_gen_attention(te_ctx *, te_target *, te_module **);

/* gen_q8.c: Q8_0 (int8 values, one f32 scale per group of GS) */
#define TL_GEN_GROUP(GS)                                                                           \
  te_status tl_gen_quantize_g##GS(te_ctx *, te_target *, te_module **);                            \
  te_status tl_gen_quantize_swiglu_g##GS(te_ctx *, te_target *, te_module **);                     \
  te_status tl_gen_q8_matmul_g##GS(te_ctx *, te_target *, te_module **);                           \
  te_status tl_gen_q8_matvec_g##GS(te_ctx *, te_target *, te_module **);                           \
  te_status tl_gen_q8_matmul_add_g##GS(te_ctx *, te_target *, te_module **);                       \
  te_status tl_gen_q8_matvec_add_g##GS(te_ctx *, te_target *, te_module **);
TL_GEN_GROUP(64)
TL_GEN_GROUP(32)
TL_GEN_GROUP(16)
TL_GEN_GROUP(8)

#endif
