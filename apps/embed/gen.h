/* gen.h — the parts of te-embed's kernel generator (gen_kernels.c): each gen_*.c defines and
 * schedules one family of the encoder's kernels with te's C API. */
#ifndef TE_EMBED_GEN_H
#define TE_EMBED_GEN_H

#include "minilm.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <te/te.h>

typedef struct gen {
  te_ctx *ctx;
  te_target *target;
  int lanes; /* f32 lanes of a vector register of the target (16 with AVX-512) */
  int nr;    /* columns of a matmul register tile, and of a packed weight panel (gen_set_target) */
  /* Tuning (gen_tasks.c, docs/tuning-tasks.md). With batch > 0 the kernels are built for that
     many sentences of seq tokens (constant sizes, as te-tune tunes them) instead of symbolic
     ones, and not compiled: written to tasks as task lines, or, with log, looked up there. */
  int64_t batch, seq;
  FILE *tasks;
  const char *log; /* a tuning log: each kernel's best schedule replayed on the symbolic one */
  int64_t tune_batch, tune_seq; /* the size log's tasks were tuned at (with log) */
  bool no_guard;     /* take log's schedule without timing it against the hand one (tests) */
  char *tuned_trace; /* the schedule of the kernel being made, found in log (malloc'd) */
  int tuned;         /* kernels built with a schedule from log */
  int kept;          /* kernels whose hand schedule beat log's in gen_guard */
  int same;          /* kernels whose best schedule in log is their hand schedule */
  int absent;        /* kernels log has no record of (the computation changed since it was
                        tuned, or it was never tuned): hand schedules */
} gen;

/* Sets g's target and the sizes that follow from its vectors (lanes, nr). */
void gen_set_target(gen *, te_target *);

/* The library's kernels, in its header's order: embed_ln, embed_qkv, embed_attention,
   embed_attn_out, embed_ffn_up, embed_ffn_down, embed_add_ln. gen_kernel makes kernel k (one of
   the gen_* below, through gen_finish); gen_kernel_name is its name. */
enum { GEN_NKERNELS = 7 };
te_status gen_kernel(gen *, int k, te_module **out);
const char *gen_kernel_name(int k);

/* One argument of a kernel call: shape and f32 data (the caller's). */
enum { GEN_MAX_ARGS = 5 };
typedef struct gen_arg {
  int ndim;
  int64_t shape[4];
  float *data;
  size_t n; /* elements */
} gen_arg;
/* The shapes of kernel k's arguments (output last) for b sentences of s tokens, data NULL;
   returns their count (0 for embed_ln); *terms: the length of its sums (for tolerances). */
int gen_kernel_args(const gen *, int k, int64_t b, int64_t s, gen_arg a[GEN_MAX_ARGS], int *terms);
/* te_module_call of name with those arguments. */
te_status gen_call(te_module *, const char *name, gen_arg *a, int nargs);
/* gen_guard.c: times kernel k's hand and tuned builds side by side at the tuned size, caches
   flushed before each call (tg_compare, apps/common/tune_guard.h); *use_tuned when the tuned one
   is clearly faster (tg_prefer_tuned's rule). */
te_status gen_guard(gen *, int k, te_module *hand, te_module *tuned, bool *use_tuned);

/* A size of the batch: the constant value when g->batch > 0 (task export, log look-up), else the
   symbolic size called name. */
te_expr *gen_size(gen *, const char *name, int64_t value);
/* The end of every kernel's generator, its hand schedule s applied: args are the kernel's
   arguments, its one output last. Builds the kernel into *out, with log's schedule instead of s
   when one was found (and replays); in task export writes the task and leaves *out NULL; in log
   look-up finds the log's schedule for the next (symbolic) build and leaves *out NULL. */
te_status gen_finish(gen *, te_schedule *s, const char *name, int nargs, te_tensor *const args[],
                     te_module **out);

/* Y[m, N] = act(X[m, K] . W^T + bias), W given packed as Wp[N / nr][K][nr] (model.c packs it);
   act is GELU (erf form) when gelu is set, else none. m is symbolic. */
te_status gen_linear(gen *, const char *name, int n, int k, int gelu, te_module **out);
/* Y[m, H] = layer_norm(X + R) * gamma + beta over the hidden axis (the residual and the norm
   of each sub-layer). */
te_status gen_add_layer_norm(gen *, const char *name, te_module **out);
/* Y[m, H] = layer_norm(word[ids[r]] + pos[pos_ids[r]] + type[0]) * gamma + beta: the
   embeddings (a gather of three tables) and their norm. */
te_status gen_embed_layer_norm(gen *, const char *name, te_module **out);
/* Multi-head self-attention of a padded batch: QKV [b, s, 3H] (the fused projections),
   mask_bias [b, s / 4, 4] (0 for a token, a large negative number for padding), out [b, s,
   heads, head_dim] = softmax(Q K^T / sqrt(head_dim) + mask_bias) V per head. b and s / 4 are
   symbolic: s is a multiple of 4 (EMBED_SEQ_MULTIPLE), te-embed pads batches to one. */
te_status gen_attention(gen *, const char *name, te_module **out);
/* The multiple (4) that embed_attention's sequence length must be. */
int gen_attention_block(void);

#endif
