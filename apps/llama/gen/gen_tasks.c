/* gen_tasks.c — the tuning side of te-llama's generator (docs/tuning-tasks.md), as te-embed's
 * (apps/embed/gen_tasks.c): the tunable builders take their sizes from tl_size and end in
 * tl_finish, which builds the kernel, or writes it as a task for `te-tune tune-tasks`, or finds
 * its tuned schedule in a tuning log.
 *
 * te-tune tunes constant shapes; te-llama's kernels have symbolic sizes. So a kernel is built
 * twice from one builder: with the sizes constant (the model shape of tl_tune.shape), which is
 * the task te-tune tuned and whose key te_apply_best looks up in the log, and then symbolic,
 * onto which the found schedule's trace is replayed (a trace names stages and loops, not sizes;
 * a split of a symbolic loop gets a tail). A schedule that does not replay leaves the hand one.
 *
 * The tunable kernels are the twelve dense weight products (f32 and bf16; matvec, matmul and
 * their add and swiglu epilogues): they are te-llama's time. Not the Q8 kernels (their inner
 * product is te_tensorize'd onto vpdpbusd, a schedule te-tune's sketches do not make), nor
 * rmsnorm, rope and attention (small next to the products; rope and attention take a scalar
 * parameter and a KV-cache length that a task does not carry).
 */
#include "gen.h"

#include "../../common/tune_guard.h"

#include <jansson.h>

#include <stdlib.h>
#include <string.h>

tl_tuning tl_tune;

/* The tunable kernels: the task's sizes (t: tokens, n x k: the weight) as functions of the model
   shape, and how often te-llama calls the kernel per token (a matvec once per layer and token
   for each weight it multiplies; a matmul serves `tokens` prompt tokens a call). */
typedef enum { DIM, HIDDEN } size_of;
static const struct {
  const char *name;
  size_of n, k;
  int calls_per_layer; /* calls per layer and forward pass */
} tunable[] = {
    {"matvec", DIM, DIM, 3},        /* wq, wk, wv (wk, wv at the KV width: dim with MHA) */
    {"matvec_add", DIM, HIDDEN, 2}, /* wo (dim x dim) and w2 (dim x hidden): w2's shape */
    {"matvec_swiglu", HIDDEN, DIM, 1}, {"matmul", DIM, DIM, 3},
    {"matmul_add", DIM, HIDDEN, 2},    {"matmul_swiglu", HIDDEN, DIM, 1},
};
enum { NTUNABLE = sizeof tunable / sizeof tunable[0] };

/* The index in tunable[] of kernel "tl_[bf16_]<kind>", -1 when it is not tunable. */
static int tunable_index(const char *kernel) {
  if (strncmp(kernel, "tl_", 3))
    return -1;
  const char *kind = kernel + 3;
  if (!strncmp(kind, "bf16_", 5))
    kind += 5;
  for (int i = 0; i < NTUNABLE; i++)
    if (!strcmp(tunable[i].name, kind))
      return i;
  return -1;
}

bool tl_tunable(const char *kernel) { return tunable_index(kernel) >= 0; }

static int64_t size(size_of which) {
  return which == DIM ? tl_tune.shape.dim : tl_tune.shape.hidden;
}

te_expr *tl_size(te_ctx *ctx, const char *name) {
  int i = tl_tune.constant ? tunable_index(tl_tune.kernel) : -1;
  if (i < 0)
    return te_var(ctx, name);
  if (!strcmp(name, "T"))
    return te_int(ctx, tl_tune.shape.tokens);
  if (!strcmp(name, "n"))
    return te_int(ctx, size(tunable[i].n));
  if (!strcmp(name, "k"))
    return te_int(ctx, size(tunable[i].k));
  return te_var(ctx, name);
}

/* One task line of `te-tune tune-tasks` (docs/tuning-tasks.md), written by jansson. */
static te_status write_task(te_ctx *ctx, te_schedule *s, const char *name, te_tensor *out) {
  int i = tunable_index(name);
  char *text = te_tune_workload(ctx, 1, &out, NULL), *trace = te_schedule_trace(s);
  te_status st = text && trace && i >= 0 ? TE_OK : TE_ERR_INTERNAL;
  if (st == TE_OK) {
    double per_token = (double)tunable[i].calls_per_layer * (double)tl_tune.shape.layers;
    if (strstr(name, "matmul"))
      per_token /= (double)tl_tune.shape.tokens;
    json_t *task = json_pack("{s:s, s:f, s:s, s:s, s:s}", "task", name, "weight", per_token,
                             "group", strstr(name, "matmul") ? "matmul" : "matvec", "workload",
                             text, "hand_trace", trace);
    if (!task || json_dumpf(task, tl_tune.tasks, JSON_COMPACT) != 0 ||
        fputc('\n', tl_tune.tasks) == EOF)
      st = TE_ERR_NOMEM;
    json_decref(task);
  }
  te_free(text);
  te_free(trace);
  return st;
}

/* The log's best schedule of the constant-size kernel, as a trace in tl_tune.trace (NULL when
   the log has none for this kernel, shape and target, or when its best is the hand schedule s:
   the hand schedule then stays, untimed, unless tl_tune.no_guard asks for every replay). */
static te_status look_up(te_ctx *ctx, te_target *tgt, te_schedule *s, const char *name,
                         te_tensor *out) {
  te_schedule *fresh = te_schedule_new(ctx, 1, &out);
  if (!fresh)
    return te_last_status(ctx);
  te_status st = te_apply_best(fresh, tl_tune.log, tgt);
  free(tl_tune.trace);
  tl_tune.trace = NULL;
  if (st == TE_ERR_NOT_FOUND) { /* not tuned at this shape: the hand schedule stays */
    fprintf(stderr, "tl_gen: %s: not in the tuning log at this shape; hand schedule\n", name);
    te_clear_error(ctx);
    return TE_OK;
  }
  if (st != TE_OK)
    return st;
  char *trace = te_schedule_trace(fresh), *hand = te_schedule_trace(s);
  if (!trace || !hand) {
    te_free(trace);
    te_free(hand);
    return te_last_status(ctx);
  }
  tl_tune.found++;
  bool same = !strcmp(trace, hand);
  te_free(hand);
  if (same && !tl_tune.no_guard) { /* nothing to time: the hand schedule stays */
    fprintf(stderr, "tl_gen: %s: the log's best is the hand schedule; hand schedule\n", name);
    tl_tune.same++;
    te_free(trace);
    return TE_OK;
  }
  size_t n = strlen(trace) + 1;
  if ((tl_tune.trace = malloc(n)))
    memcpy(tl_tune.trace, trace, n);
  te_free(trace);
  return tl_tune.trace ? TE_OK : TE_ERR_NOMEM;
}

bool tl_kernel_shape(const char *name, int64_t *T, int64_t *n, int64_t *k) {
  int i = tunable_index(name);
  if (i < 0)
    return false;
  *T = strstr(name, "matmul") ? tl_tune.shape.tokens : 1;
  *n = size(tunable[i].n);
  *k = size(tunable[i].k);
  return true;
}

/* The hand-scheduled kernel, or the tuned one when the guard finds it clearly faster (or when
   tl_tune.no_guard). tuned: the module built from the log's schedule. */
static te_status guarded(te_schedule *s, const char *name, int nargs, te_tensor *const args[],
                         int nparams, te_expr *const params[], te_target *tgt, te_module *tuned,
                         te_module **out) {
  tl_tune.replayed++;
  if (tl_tune.no_guard) {
    fprintf(stderr, "tl_gen: %s: the tuning log's schedule (not timed)\n", name);
    tl_tune.tuned++;
    *out = tuned;
    return TE_OK;
  }
  te_module *hand;
  TRY(te_build(s, name, nargs, args, nparams, params, tgt, &hand));
  tg_verdict v;
  TRY(tl_guard(name, hand, tuned, &v));
  const tl_shape *sh = &tl_tune.shape;
  char what[96], where[96];
  snprintf(what, sizeof what, "tl_gen: %s", name);
  snprintf(where, sizeof where, "dim %lld, hidden %lld, %lld tokens", (long long)sh->dim,
           (long long)sh->hidden,
           (long long)(!strstr(name, "matmul")        ? 1
                       : sh->tokens > TL_GUARD_TOKENS ? TL_GUARD_TOKENS
                                                      : sh->tokens));
  tg_report(what, where, &v);
  tl_tune.tuned += v.use_tuned;
  tl_tune.kept += !v.use_tuned;
  *out = v.use_tuned ? tuned : hand;
  return TE_OK;
}

te_status tl_finish(te_schedule *s, const char *name, int nargs, te_tensor *const args[],
                    int nparams, te_expr *const params[], te_target *tgt, te_module **out) {
  te_ctx *ctx = tl_tune.ctx;
  te_tensor *y = args[nargs - 1];
  if (tl_tune.constant && tunable_index(name) >= 0) {
    *out = NULL;
    return tl_tune.tasks ? write_task(ctx, s, name, y) : look_up(ctx, tgt, s, name, y);
  }
  if (!tl_tune.trace)
    return te_build(s, name, nargs, args, nparams, params, tgt, out);
  te_schedule *tuned = te_schedule_new(ctx, 1, &y);
  te_status st = tuned ? te_schedule_replay(tuned, tl_tune.trace) : te_last_status(ctx);
  free(tl_tune.trace);
  tl_tune.trace = NULL;
  /* replayed or built, a step that is legal only at the constant size fails here (none is
     known since loop_partition.c keeps a tail's constant bound: a cache_read at the tail of a
     split reduction lost it); the hand schedule then stays */
  te_module *mt = NULL;
  if (st == TE_OK)
    st = te_build(tuned, name, nargs, args, nparams, params, tgt, &mt);
  if (st == TE_ERR_NOMEM)
    return st;
  if (st != TE_OK) {
    fprintf(stderr,
            "tl_gen: %s: the log's schedule does not fit the symbolic kernel (%s); hand "
            "schedule\n",
            name, te_last_error(ctx));
    te_clear_error(ctx);
    return te_build(s, name, nargs, args, nparams, params, tgt, out);
  }
  return guarded(s, name, nargs, args, nparams, params, tgt, mt, out);
}
