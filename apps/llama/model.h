/* model.h — a decoder that turns tokens into next-token logits, behind one interface so that
 * the command line (main.c, generate.c) runs te's kernels (model_te.c) or the plain C
 * reference (reference.c) the same way.
 *
 * forward runs the n tokens at positions pos .. pos + n - 1 (each token attends to every
 * earlier position, whose keys and values the model keeps), and sets *logits to the
 * vocab_size logits after the last of them (owned by the model, valid until the next call).
 * Returns 0, or -1 with a message in err. pos + n must not exceed the checkpoint's seq_len.
 */
#ifndef TL_MODEL_H
#define TL_MODEL_H
#include "checkpoint.h"

typedef struct tl_model tl_model;
struct tl_model {
  int (*forward)(tl_model *, const int *tokens, int n, int pos, float **logits);
  void (*destroy)(tl_model *);
  /* the most tokens one forward call takes (longer runs are split by the caller) */
  int max_batch;
  char err[512];
};

/* te's kernels (ahead-of-time library tl_kernels). NULL with a message in err. */
tl_model *tl_te_model_new(const tl_checkpoint *, char *err, size_t errlen);
/* The plain C reference: llama2.c's math one token at a time (run.c for f32, runq.c's
   quantized activations for Q8_0). NULL with a message in err. */
tl_model *tl_ref_model_new(const tl_checkpoint *, char *err, size_t errlen);

static inline void tl_model_free(tl_model *m) {
  if (m)
    m->destroy(m);
}

#endif
