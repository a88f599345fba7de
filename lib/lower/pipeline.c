/* pipeline.c — the lowering pipeline: the one ordered table of passes, and its driver.
 *
 * The order is the design (docs/design.md lists the passes and why they come in this order);
 * each pass is one file with a header comment saying what it needs and guarantees. A new pass
 * is one line of this table and nowhere else.
 *
 * The driver, for each pass in order:
 *   - runs it and times it (TE_TIME_PASSES=1 prints the times to stderr); a pass that returns
 *     NULL with no error on the context left no statement (the generic mutator's convention):
 *     the body becomes a no-op;
 *   - with TE_DUMP=all or TE_DUMP=<name>,<name>,... prints "=== after <pass> ===" and the
 *     function to stderr, or "(unchanged)" when the pass returned the statement it was given;
 *   - in TE_DEBUG builds runs the IR verifier (flattened once a LW_PASS_FLATTENED pass has run);
 *   - stops after the pass named stop_after (lw_lower_until; TE_STOP_AFTER=<name> does the same
 *     for te_lower_text).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_lower.h"
#include "lower.h"

const lw_pass lw_pipeline[] = {
    {"schedule_to_loops", lw_schedule_to_loops, 0},
    {"storage_flatten", lw_storage_flatten, LW_PASS_FLATTENED},
    {"specialize", lw_specialize, 0}, /* a te_specialize branch: its condition's facts */
    {"simplify", lw_simplify, 0},
    {"prefetch", lw_prefetch, 0},
    {"loop_partition", lw_loop_partition, 0},
    {"vectorize", lw_vectorize, 0},
    {"tensorize", lw_tensorize, 0}, /* te_tensorize's loops: one instruction each */
    {"unroll", lw_unroll, 0},
    {"remove_likely", lw_remove_likely, 0},
    {"widen_half", lw_widen_half, 0},     /* f16/bf16 arithmetic in f32: widen_half.c */
    {"gpu_split", lw_gpu_split, 0},       /* GPU targets only (no-op otherwise): gpu_split.c */
    {"gpu_barriers", lw_gpu_barriers, 0}, /* GPU targets only: gpu_barrier.c */
    {"gpu_warp", lw_gpu_warp, 0},         /* cuda kernels with an mma: gpu_warp.c */
    {"simplify_final", lw_simplify, 0},
    {"nontemporal", lw_nontemporal, 0}, /* te_pragma nontemporal: into each iteration */
    /* the calling convention: what te_build compiles; te_lower_text stops before these */
    {"make_closures", lw_make_closures, LW_PASS_ABI}, /* parallel loops' closures */
    {"make_entry", lw_make_entry, LW_PASS_ABI},       /* argument checks, sizes, compute_scope */
};
const int lw_pipeline_count = (int)(sizeof lw_pipeline / sizeof lw_pipeline[0]);

int lw_pass_index(const char *name) {
  if (!name)
    return -1;
  for (int i = 0; i < lw_pipeline_count; i++)
    if (strcmp(lw_pipeline[i].name, name) == 0)
      return i;
  return -1;
}

const char *lw_last_compute_pass(void) {
  int i = lw_pipeline_count - 1;
  while (i > 0 && (lw_pipeline[i].flags & LW_PASS_ABI))
    i--;
  return lw_pipeline[i].name;
}

ir_analyzer *lw_analyzer_new(lw_pass_ctx *p) {
  ir_analyzer *an = ir_analyzer_new(p->ctx);
  if (!an)
    return NULL;
  for (int k = 0; k < p->func->nsizes; k++) /* a stride may be 0 (a broadcast view) */
    if (!lw_size_is_stride(p->func, k))
      ir_analyzer_assume_positive(an, p->func->size_vars[k]);
  const lw_facts *f = p->facts;
  for (int k = 0; f && k < f->nlets; k++) /* n_div16 of a size n: n >= 1 makes it >= 1 */
    ir_analyzer_assume_positive(an, f->let_var[k]);
  for (int k = 0; f && k < f->nranges; k++)
    ir_analyzer_bind(an, f->range_var[k], ir_i64(p->ctx, f->range_lo[k]),
                     ir_i64(p->ctx, f->range_hi[k] - f->range_lo[k] + 1));
  return an;
}

/* True when TE_DUMP names this pass ("all", or a comma-separated list). */
static bool dump_wanted(const char *dump, const char *pass) {
  if (!dump || !*dump)
    return false;
  if (strcmp(dump, "all") == 0)
    return true;
  size_t n = strlen(pass);
  for (const char *p = dump; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, pass, n) == 0)
      return true;
    if (!end)
      break;
    p = end + 1;
  }
  return false;
}

/* Warns once about names in TE_DUMP that are no pass (a typo would silently dump nothing). */
static void check_dump_names(const char *dump) {
  static bool warned;
  if (!dump || !*dump || strcmp(dump, "all") == 0 || warned)
    return;
  for (const char *p = dump; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    bool known = false;
    for (int i = 0; i < lw_pipeline_count; i++)
      if (strlen(lw_pipeline[i].name) == len && strncmp(p, lw_pipeline[i].name, len) == 0)
        known = true;
    if (!known && len > 0) {
      fprintf(stderr, "te: TE_DUMP names no pass '%.*s'; the passes are:", (int)len, p);
      for (int i = 0; i < lw_pipeline_count; i++)
        fprintf(stderr, " %s", lw_pipeline[i].name);
      fprintf(stderr, "\n");
      warned = true;
    }
    if (!end)
      break;
    p = end + 1;
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void dump(const lw_pass_ctx *p, const char *pass, bool unchanged) {
  fprintf(stderr, "=== after %s ===\n", pass);
  if (unchanged) {
    fprintf(stderr, "(unchanged)\n");
    return;
  }
  char *text = lw_func_to_string(p->ctx, p->func);
  fputs(text ? text : "(out of memory printing the IR)\n", stderr);
  free(text);
}

te_status lw_run_pipeline(lw_pass_ctx *p, const char *stop_after) {
  int stop = lw_pipeline_count - 1;
  if (stop_after) {
    stop = lw_pass_index(stop_after);
    if (stop < 0)
      return ir_error(p->ctx, TE_ERR_INVALID_ARG, "%s: stop after '%s': no pass has that name",
                      p->api, stop_after);
  }
  return lw_run_passes(p, 0, stop);
}

te_status lw_run_passes(lw_pass_ctx *p, int first, int last) {
  const char *dump_env = getenv("TE_DUMP");
  const char *time_env = getenv("TE_TIME_PASSES");
  bool timing = time_env && *time_env && strcmp(time_env, "0") != 0;
  check_dump_names(dump_env);
  bool flattened = false;
  for (int i = 0; i < first; i++)
    flattened = flattened || (lw_pipeline[i].flags & LW_PASS_FLATTENED);
  ir_stmt *s = p->func->body;
  for (int i = first; i <= last; i++) {
    const lw_pass *pass = &lw_pipeline[i];
    double t0 = now_s();
    ir_stmt *r = pass->fn(p, s);
    double dt = now_s() - t0;
    if (ir_failed(p->ctx)) /* a failure in the pass (out of memory part way), NULL or not */
      return te_last_status(p->ctx);
    if (!r)
      r = ir_evaluate(ir_i64(p->ctx, 0)); /* NULL without an error: nothing left to do */
    if (!r)
      return te_last_status(p->ctx);
    bool unchanged = r == s;
    s = r;
    p->func->body = s;
    flattened = flattened || (pass->flags & LW_PASS_FLATTENED);
    if (timing)
      fprintf(stderr, "te: pass %-18s %9.3f ms\n", pass->name, dt * 1e3);
    if (dump_wanted(dump_env, pass->name))
      dump(p, pass->name, unchanged);
#ifdef TE_DEBUG
    te_status vs = ir_verify_stmt(p->ctx, s, pass->name, flattened);
    if (vs != TE_OK)
      return vs;
#endif
  }
  return TE_OK;
}

te_status lw_run_abi_passes(te_ctx *ctx, lw_func *f, const struct te_target *target) {
  lw_pass_ctx p = {.ctx = ctx, .func = f, .target = target, .api = "te_build"};
  if (!(p.an = lw_analyzer_new(&p)))
    return te_last_status(ctx);
  for (int i = 0; i < lw_pipeline_count; i++) {
    if (!(lw_pipeline[i].flags & LW_PASS_ABI))
      continue;
    ir_stmt *r = lw_pipeline[i].fn(&p, f->body);
    if (!r)
      return ir_failed(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
    f->body = r;
  }
  return TE_OK;
}
