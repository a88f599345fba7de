/* fuzz_replay.c — libFuzzer target for te_schedule_replay (test/fuzz/README.md says how to run
 * it).
 *
 * An input is a schedule trace (docs/schedule-trace.md), optionally preceded by a line naming
 * one of the workloads of fuzz_workloads.h ("blur\n<trace>"; without it: the first, matmul).
 * Whatever the text, replay must return (never crash or abort), and a refusal must not be a
 * status that means a bug of te (TE_ERR_INTERNAL, TE_ERR_CODEGEN) and must carry a message. Then,
 * whatever part of it applied:
 *   - te's trace holds one step per line applied, the input's lines in order, word for word
 *     (integers compared by value): a line replays as the primitive it names, with its words;
 *   - the schedule's own trace replays whole on a fresh schedule of the same workload and prints
 *     the same trace (replay is exact: what the tuning log relies on);
 *   - both schedules lower to the same loop IR (te_lower_text), or both are refused with the
 *     same status; a refusal at lowering is not a bug status either;
 *   - a trace that binds GPU threads also lowers for "cuda" without a bug status.
 */
#include <stdbool.h>

#include "fuzz_workloads.h"

static const char *const NAME = "fuzz_replay";

static void check_status(te_ctx *ctx, te_status st, const char *what, const char *input) {
  if (st == TE_OK)
    return;
  if (fz_is_bug(st))
    fz_fail(NAME, what, input, te_last_error(ctx));
  if (!*te_last_error(ctx))
    fz_fail(NAME, "a refusal without a message", input, te_status_str(st));
}

/* The lowered text of s, or NULL with its status in *st (the error then cleared). */
static char *lower(te_ctx *ctx, te_schedule *s, fz_workload *w, te_status *st, const char *input) {
  char *ir = te_lower_text(s, w->nt, w->tensors, w->nparams, w->params);
  *st = ir ? TE_OK : te_last_status(ctx);
  check_status(ctx, *st, "lowering a replayed schedule gives a bug status", input);
  te_clear_error(ctx);
  return ir;
}

/* The words of the next step line of *text (blank and '#' lines skipped, as replay skips them);
   0 at the end. */
static int next_step(char **text, char *words[], int max) {
  while (**text) {
    char *line = *text, *end = strchr(line, '\n');
    *text = end ? end + 1 : line + strlen(line);
    if (end)
      *end = 0;
    int n = 0;
    for (char *c = line; *c;) {
      while (*c == ' ' || *c == '\t' || *c == '\r')
        *c++ = 0;
      if (!*c)
        break;
      if (n < max)
        words[n++] = c;
      while (*c && *c != ' ' && *c != '\t' && *c != '\r')
        c++;
    }
    if (n > 0 && words[0][0] != '#')
      return n;
  }
  return 0;
}

static bool same_word(const char *a, const char *b) {
  if (!strcmp(a, b))
    return true;
  char *ea, *eb;
  long long x = strtoll(a, &ea, 10), y = strtoll(b, &eb, 10);
  return *a && *b && !*ea && !*eb && x == y;
}

/* te's trace is the input's first steps, word for word; all of them when replay succeeded. */
static void check_steps(const char *input, const char *trace, bool whole) {
  char *in = fz_text((const uint8_t *)input, strlen(input));
  char *tr = fz_text((const uint8_t *)trace, strlen(trace)), *pi = in, *pt = tr;
  if (!in || !tr)
    fz_fail(NAME, "out of memory", input, "");
  char *wi[80], *wt[80];
  int ni, nt;
  while ((nt = next_step(&pt, wt, 80)) > 0) {
    ni = next_step(&pi, wi, 80);
    bool same = ni == nt;
    for (int k = 0; k < nt && same; k++)
      same = same_word(wi[k], wt[k]);
    if (!same)
      fz_fail(NAME, "a step was recorded as another step than the line replayed", input, trace);
  }
  if (whole && next_step(&pi, wi, 80) > 0)
    fz_fail(NAME, "replay succeeded but the trace misses steps of the input", input, trace);
  free(in);
  free(tr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fz_text(data, size);
  if (!text)
    return 0;
  size_t skip;
  int wi = fz_workload_named(text, &skip);
  te_ctx *ctx = te_ctx_new();
  fz_workload w;
  fz_workload_parse(ctx, wi < 0 ? 0 : wi, &w, NAME);
  te_schedule *s = te_schedule_new(ctx, w.nout, w.outs);
  te_status st = te_schedule_replay(s, text + skip);
  check_status(ctx, st, "replay gives a bug status", text);
  te_clear_error(ctx);

  char *trace = te_schedule_trace(s);
  if (!trace)
    fz_fail(NAME, "no trace after a replay", text, te_last_error(ctx));
  check_steps(text + skip, trace, st == TE_OK);
  te_schedule *s2 = te_schedule_new(ctx, w.nout, w.outs);
  if (te_schedule_replay(s2, trace) != TE_OK)
    fz_fail(NAME, "the trace te wrote does not replay", trace, te_last_error(ctx));
  char *trace2 = te_schedule_trace(s2);
  if (!trace2 || strcmp(trace, trace2) != 0)
    fz_fail(NAME, "the replayed trace differs", trace, trace2 ? trace2 : "(none)");

  te_status l1, l2;
  char *ir1 = lower(ctx, s, &w, &l1, text), *ir2 = lower(ctx, s2, &w, &l2, text);
  if (l1 != l2)
    fz_fail(NAME, "a schedule and its replay lower differently", trace, te_status_str(l2));
  if (ir1 && strcmp(ir1, ir2) != 0)
    fz_fail(NAME, "a schedule and its replay lower to other IR", ir1, ir2);
  te_free(ir1);
  te_free(ir2);

  if (strstr(trace, "bind ")) {
    te_target *cuda = te_target_parse(ctx, "cuda");
    char *gpu = te_lower_text_for(s, cuda, w.nt, w.tensors, w.nparams, w.params);
    if (!gpu)
      check_status(ctx, te_last_status(ctx), "lowering for cuda gives a bug status", trace);
    te_free(gpu);
  }
  te_free(trace);
  te_free(trace2);
  te_ctx_free(ctx);
  free(text);
  return 0;
}
