/* test_trace_steps.c — schedule steps, declared once in lib/schedule/steps.def:
 *   - the table is well formed: known word kinds, a list only last, unique verbs, a stage added
 *     only by steps on tensors;
 *   - every declared step round-trips: the traces of every_step (below) replay on their
 *     workloads and give back the same text byte for byte, and together they use every step,
 *     so a step added to steps.def fails here until a trace of it is added to every_step;
 *   - old traces still replay: every record of trace_logs/te-0.1.0.jsonl, a tuning log written
 *     by te 0.1.0 before steps.def existed (tuner records of five workloads, and hand schedules
 *     using every step of that time), replays byte-identically and the schedule lowers. That
 *     file is a fixture: never regenerate it;
 *   - docs/schedule-trace.md has a row for every declared step;
 *   - te_scope_name, te_thread_tag_name and te_tail_name give each enumerator's word, NULL past
 *     the last, and the words read back to their values.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../autotune/at.h"
#include "schedule/trace.h"

static te_ctx *ctx;
static void setup(void) { ctx = te_ctx_new(); }
static void teardown(void) { te_ctx_free(ctx); }
TestSuite(trace_steps, .init = setup, .fini = teardown, .timeout = 120);

Test(trace_steps, table_is_well_formed) {
  cr_assert_eq(SCH_STEP_COUNT, 19);
  for (int k = 0; k < SCH_STEP_COUNT; k++) {
    const sch_step_info *s = &sch_steps[k];
    cr_assert_eq(sch_step_find(s->verb), k, "verb '%s' is not unique", s->verb);
    size_t n = strlen(s->words);
    cr_assert(n >= 1 && n <= 6, "%s: %zu kinds", s->verb, n);
    for (size_t i = 0; i < n; i++) {
      char c = s->words[i];
      if (c == '*') {
        cr_assert_eq(i, n - 1, "%s: a list must be the last word", s->verb);
        cr_assert(strchr("SIA", s->words[i - 1]), "%s: a list of '%c'", s->verb, s->words[i - 1]);
      } else {
        cr_assert(strchr("STIANPCGLK", c), "%s: unknown kind '%c'", s->verb, c);
      }
    }
    /* only steps on a tensor add a stage, and only they take the schedule first */
    cr_assert_eq(s->adds != NULL, s->words[0] == 'T', "%s", s->verb);
    cr_assert(!(s->adds && s->outs), "%s", s->verb);
  }
  cr_assert_eq(sch_step_find("frobnicate"), -1);
  cr_assert_eq(sch_step_find(NULL), -1);
  bool list;
  cr_assert_eq(sch_step_nkinds(&sch_steps[SCH_STEP_cache_read], &list), 3);
  cr_assert(list);
  cr_assert_eq(sch_step_nkinds(&sch_steps[SCH_STEP_tile], &list), 5);
  cr_assert_not(list);
}

/* Replays trace on the computation of the workload text: the same trace back, and a schedule
   that lowers. */
static void replay_on(const char *what, const char *workload, const char *trace) {
  te_ctx *c = te_ctx_new();
  int nout = 0;
  te_tensor **outs = NULL;
  cr_assert_eq(te_parse(c, workload, &nout, &outs), TE_OK, "%s: %s", what, te_last_error(c));
  te_schedule *s = te_schedule_new(c, nout, outs);
  cr_assert_eq(te_schedule_replay(s, trace), TE_OK, "%s: %s\n%s", what, te_last_error(c), trace);
  char *back = te_schedule_trace(s);
  cr_assert_str_eq(back, trace, "%s", what);
  te_free(back);
  te_tensor **in = NULL;
  int nin = sch_schedule_inputs(s, &in);
  te_tensor *args[16];
  cr_assert(nin + nout <= 16);
  for (int i = 0; i < nin; i++)
    args[i] = in[i];
  for (int i = 0; i < nout; i++)
    args[nin + i] = outs[i];
  char *ir = te_lower_text(s, nin + nout, args, 0, NULL);
  cr_assert_not_null(ir, "%s: %s", what, te_last_error(c));
  te_free(ir);
  te_ctx_free(c);
}

/* Marks the steps trace uses. */
static void mark_steps(const char *trace, bool used[SCH_STEP_COUNT]) {
  char *copy = strdup(trace), *save = NULL;
  for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char verb[32];
    if (sscanf(l, "%31s", verb) == 1 && sch_step_find(verb) >= 0)
      used[sch_step_find(verb)] = true;
  }
  free(copy);
}

static const char mm[] = "C[i, j] = sum(A[i, k]*B[k, j], k)\n"
                         "where A: f32[20, 12], B: f32[12, 24], C: [20, 24], k: [0, 12)\n";
static const char two_stage[] = "P[i] = A[i]*2.0f;\nC[i] = P[i] + P[i + 1]\n"
                                "where A: f32[30], P: [30], C: [29]\n";
static const char qmm[] = "C[i, j] = sum(i32(A[i, k])*i32(B[k, j]), k)\n"
                          "where A: u8[4, 16], B: i8[16, 32], C: [4, 32], k: [0, 16)\n";
static const char rowsum[] = "B[i] = sum(A[i, k], k)\nwhere A: f32[6, 10], B: [6], k: [0, 10)\n";

/* At least one trace of every step; a new step in steps.def needs one here. */
static const struct {
  const char *workload, *trace;
} every_step[] = {
    {mm, "tile C i j 8 8\nsplit C k 4\nreorder C i.o j.o k.o i.i k.i j.i\nvectorize C j.i\n"
         "unroll C k.i\nfuse C i.o j.o\nparallel C i.o.j.o.f\n"
         "pragma C i.o.j.o.f unroll_max_step 16\npragma C k.o prefetch 2\n"},
    {mm, "split_nparts C i 3\nset_tail C i.o shift_inwards\nsplit C j 5\nset_tail C j guard\n"},
    {mm, "cache_write C local\ntile C i j 4 8\ncompute_at C_local C j.o\n"},
    {mm, "split C i 4\nbind C i.o blockIdx.x\nbind C i.i threadIdx.x\n"},
    {mm, "cache_read A shared C\ncache_read B local C\nsplit C i 4\ncompute_at A_shared C i.o\n"},
    {two_stage, "compute_inline P\n"},
    {two_stage, "split C i 8\ncompute_at P C i.o\ncompute_root P\n"},
    {two_stage, "cache_write P local\nset_tail P_local i round_up\nsplit P_local i 7\n"
                "reorder_storage P i\n"},
    {rowsum, "split B k 4\nrfactor B k.i 0\nvectorize B_rf k.i\n"},
    {qmm, "split C j 16\nsplit C k 4\nreorder C i j.o k.o k.i j.i\nvectorize C j.i\n"
          "tensorize C k.i vpdpbusd\n"},
};

Test(trace_steps, every_step_round_trips) {
  bool used[SCH_STEP_COUNT] = {0};
  for (size_t k = 0; k < sizeof every_step / sizeof every_step[0]; k++) {
    char what[32];
    snprintf(what, sizeof what, "every_step[%zu]", k);
    replay_on(what, every_step[k].workload, every_step[k].trace);
    mark_steps(every_step[k].trace, used);
  }
  for (int k = 0; k < SCH_STEP_COUNT; k++)
    cr_expect(used[k], "no trace of every_step uses step '%s'", sch_steps[k].verb);
}

Test(trace_steps, log_from_before_replays_byte_identical) {
  at_log log = {0};
  cr_assert_eq(
      at_log_read(ctx, TE_SOURCE_DIR "/test/unit/trace_logs/te-0.1.0.jsonl", false, stderr, &log),
      TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(log.skipped, 0);
  cr_assert_eq(log.n, 21);
  bool used[SCH_STEP_COUNT] = {0};
  for (int i = 0; i < log.n; i++) {
    replay_on(log.rec[i].wl_desc, log.rec[i].wl_text, log.rec[i].trace);
    mark_steps(log.rec[i].trace, used);
  }
  for (int k = 0; k < SCH_STEP_COUNT; k++) /* the steps te 0.1.0 had: all 18 of today's */
    cr_expect(used[k] || k >= 18, "no record uses step '%s'", sch_steps[k].verb);
  at_log_free(&log);
}

/* docs/schedule-trace.md's table of steps has a row for every declared step. */
Test(trace_steps, reference_lists_every_step) {
  FILE *f = fopen(TE_SOURCE_DIR "/docs/schedule-trace.md", "r");
  cr_assert_not_null(f);
  static char doc[1 << 16];
  size_t n = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[n] = '\0';
  for (int k = 0; k < SCH_STEP_COUNT; k++) {
    char row[64];
    snprintf(row, sizeof row, "`%s ", sch_steps[k].verb);
    cr_expect(strstr(doc, row), "docs/schedule-trace.md has no row for step '%s'",
              sch_steps[k].verb);
  }
}

Test(trace_steps, enum_words) {
  const char *scopes[] = {"global", "local", "shared"};
  const char *tags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                        "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  const char *tails[] = {"guard", "shift_inwards", "round_up"};
  for (int v = 0; v < 3; v++) {
    cr_assert_str_eq(te_scope_name((te_scope)v), scopes[v]);
    cr_assert_eq(ir_enum_value(&ir_scope_words, scopes[v]), v);
    cr_assert_str_eq(te_tail_name((te_tail)v), tails[v]);
    cr_assert_eq(ir_enum_value(&ir_tail_words, tails[v]), v);
  }
  for (int v = 0; v < 6; v++) {
    cr_assert_str_eq(te_thread_tag_name((te_thread_tag)v), tags[v]);
    cr_assert_eq(ir_enum_value(&ir_thread_tag_words, tags[v]), v);
  }
  cr_assert_str_eq(te_scope_name(TE_SCOPE_SHARED), "shared");
  cr_assert_str_eq(ir_enum_enumerator(&ir_thread_tag_words, TE_THREAD_Z), "TE_THREAD_Z");
  cr_assert_str_eq(ir_enum_enumerator(&ir_tail_words, TE_TAIL_ROUND_UP), "TE_TAIL_ROUND_UP");
  cr_assert_null(te_scope_name((te_scope)3));
  cr_assert_null(te_scope_name((te_scope)-1));
  cr_assert_null(te_thread_tag_name((te_thread_tag)6));
  cr_assert_null(te_tail_name((te_tail)3));
  cr_assert_eq(ir_enum_value(&ir_scope_words, "Global"), -1);
  cr_assert_eq(ir_enum_value(&ir_scope_words, NULL), -1);
}
