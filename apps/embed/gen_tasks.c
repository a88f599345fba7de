/* gen_tasks.c — the generator's tuning side (docs/tuning-tasks.md): every kernel's builder ends
 * in gen_finish, which builds it, or writes it as a task for `te-tune tune-tasks`, or finds its
 * tuned schedule in a tuning log.
 *
 * te-tune tunes constant shapes; the kernels have a symbolic batch. So a kernel is built twice
 * from one builder: with the batch constant (g->batch sentences of g->seq tokens), which is the
 * task te-tune tuned and whose key te_apply_best looks up in the log, and then symbolic, onto
 * which the found schedule's trace is replayed (a trace names stages and loops, not sizes; a
 * split of a symbolic loop gets a tail). A schedule that does not replay leaves the hand one.
 */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

te_expr *gen_size(gen *g, const char *name, int64_t value) {
  return g->batch > 0 ? te_int(g->ctx, value) : te_var(g->ctx, name);
}

/* Every kernel of the library in the header's order, how often te-embed calls it in one forward
   pass, and which kernels are alike (the scheduler's similar tasks). */
static const struct {
  const char *name, *group;
  int calls;
} kernels[GEN_NKERNELS] = {{"embed_ln", "norm", 1},
                           {"embed_qkv", "dense", MINILM_LAYERS},
                           {"embed_attention", "attention", MINILM_LAYERS},
                           {"embed_attn_out", "dense", MINILM_LAYERS},
                           {"embed_ffn_up", "dense", MINILM_LAYERS},
                           {"embed_ffn_down", "dense", MINILM_LAYERS},
                           {"embed_add_ln", "norm", 2 * MINILM_LAYERS}};

const char *gen_kernel_name(int k) { return kernels[k].name; }

te_status gen_kernel(gen *g, int k, te_module **out) {
  const int H = MINILM_HIDDEN, F = MINILM_FFN;
  switch (k) {
  case 0:
    return gen_embed_layer_norm(g, kernels[k].name, out);
  case 1:
    return gen_linear(g, kernels[k].name, 3 * H, H, 0, out);
  case 2:
    return gen_attention(g, kernels[k].name, out);
  case 3:
    return gen_linear(g, kernels[k].name, H, H, 0, out);
  case 4:
    return gen_linear(g, kernels[k].name, F, H, 1, out);
  case 5:
    return gen_linear(g, kernels[k].name, H, F, 0, out);
  default:
    return gen_add_layer_norm(g, kernels[k].name, out);
  }
}

/* s as a JSON string, quotes included. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static int kernel_index(const char *name) {
  for (int i = 0; i < GEN_NKERNELS; i++)
    if (!strcmp(kernels[i].name, name))
      return i;
  return -1;
}

static te_status write_task(gen *g, te_schedule *s, const char *name, te_tensor *out) {
  int k = kernel_index(name);
  char *text = te_tune_workload(g->ctx, 1, &out, NULL), *trace = te_schedule_trace(s);
  te_status st = text && trace && k >= 0 ? TE_OK : TE_ERR_INTERNAL;
  if (st == TE_OK) {
    fprintf(g->tasks, "{\"task\": \"%s\", \"weight\": %d, \"group\": \"%s\", \"workload\": ", name,
            kernels[k].calls, kernels[k].group);
    json_string(g->tasks, text);
    fputs(", \"hand_trace\": ", g->tasks);
    json_string(g->tasks, trace);
    fputs("}\n", g->tasks);
  }
  te_free(text);
  te_free(trace);
  return st;
}

/* The log's best schedule of the constant-size kernel, as a trace in g->tuned_trace (NULL when
   the log has none for this kernel and target, or when its best is the hand schedule s: the
   hand schedule then stays, untimed, unless g->no_guard asks for every replay). */
static te_status look_up(gen *g, te_schedule *s, const char *name, te_tensor *out) {
  te_schedule *fresh = te_schedule_new(g->ctx, 1, &out);
  if (!fresh)
    return te_last_status(g->ctx);
  te_status st = te_apply_best(fresh, g->log, g->target);
  free(g->tuned_trace);
  g->tuned_trace = NULL;
  if (st == TE_ERR_NOT_FOUND) { /* not tuned: the hand schedule stays */
    fprintf(stderr, "gen_kernels: %s: not in the tuning log; hand schedule\n", name);
    g->absent++;
    te_clear_error(g->ctx);
    return TE_OK;
  }
  if (st != TE_OK)
    return st;
  char *trace = te_schedule_trace(fresh), *hand = te_schedule_trace(s);
  if (!trace || !hand) {
    te_free(trace);
    te_free(hand);
    return te_last_status(g->ctx);
  }
  bool same = !strcmp(trace, hand);
  te_free(hand);
  if (same && !g->no_guard) {
    fprintf(stderr, "gen_kernels: %s: the log's best is the hand schedule; hand schedule\n", name);
    g->same++;
    te_free(trace);
    return TE_OK;
  }
  size_t n = strlen(trace) + 1;
  if ((g->tuned_trace = malloc(n)))
    memcpy(g->tuned_trace, trace, n);
  te_free(trace);
  return g->tuned_trace ? TE_OK : TE_ERR_NOMEM;
}

te_status gen_finish(gen *g, te_schedule *s, const char *name, int nargs, te_tensor *const args[],
                     te_module **out) {
  te_tensor *y = args[nargs - 1];
  if (g->batch > 0) {
    *out = NULL;
    return g->tasks ? write_task(g, s, name, y) : look_up(g, s, name, y);
  }
  if (!g->tuned_trace)
    return te_build(s, name, nargs, args, 0, NULL, g->target, out);
  te_schedule *tuned = te_schedule_new(g->ctx, 1, &y);
  te_status st = tuned ? te_schedule_replay(tuned, g->tuned_trace) : te_last_status(g->ctx);
  free(g->tuned_trace);
  g->tuned_trace = NULL;
  if (st != TE_OK) {
    fprintf(stderr,
            "gen_kernels: %s: the log's schedule does not fit the symbolic kernel (%s); "
            "hand schedule\n",
            name, te_last_error(g->ctx));
    te_clear_error(g->ctx);
    return te_build(s, name, nargs, args, 0, NULL, g->target, out);
  }
  te_module *hand = NULL, *mt = NULL;
  if ((st = te_build(tuned, name, nargs, args, 0, NULL, g->target, &mt)) != TE_OK)
    return st;
  bool use = true;
  if (!g->no_guard && ((st = te_build(s, name, nargs, args, 0, NULL, g->target, &hand)) != TE_OK ||
                       (st = gen_guard(g, kernel_index(name), hand, mt, &use)) != TE_OK))
    return st;
  if (g->no_guard)
    fprintf(stderr, "gen_kernels: %s: the tuning log's schedule (not timed)\n", name);
  g->tuned += use;
  g->kept += !use;
  *out = use ? mt : hand;
  return TE_OK;
}
