/* test_tune_log.c — the tuning log: a record survives a write/read round trip field by field,
 * malformed and truncated lines are skipped (and counted) while every other record is kept, a
 * record appended after a cut line starts its own line, and the best record is the lowest
 * median cost of the right workload and target.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_log, .init = tu_setup, .fini = tu_teardown);

static at_record sample(const char *key, const char *target, double c0, int error) {
  static double pool[16][3];
  static int used;
  double *costs = pool[used++ % 16];
  costs[0] = c0, costs[1] = c0 * 2, costs[2] = c0 / 2;
  at_record r = {0};
  r.version = AT_LOG_VERSION;
  r.key = (char *)key;
  r.wl_text = "placeholder A f32 [4]\n\"quoted\" \\ text\n";
  r.wl_desc = "matmul M=4 N=4 K=4 dtype=f32";
  r.target = (char *)target;
  r.trace = "split C i 2\nreorder C i.o i.i\n";
  r.sketch = "tile";
  r.params = "1 2 3";
  r.ncosts = error ? 0 : 3;
  r.costs = costs;
  r.error = error;
  r.error_kind = error ? "crash" : "";
  r.message = error ? "the kernel crashed: signal 11" : "";
  r.timestamp = "2025-01-02T03:04:05.678Z";
  r.te_version = TE_VERSION_STRING;
  r.seed = 18446744073709551615ull;
  r.trial = 7;
  r.elapsed_s = 12.5;
  r.flops = 128;
  r.load1 = 1.5;
  r.measure = (at_measure_opts){0.25, 3, 100, 1, 10, 2};
  return r;
}

static void write_records(const char *path, int n, const at_record *recs) {
  FILE *f = at_log_open(path);
  cr_assert_not_null(f);
  for (int i = 0; i < n; i++)
    cr_assert(at_log_append(f, &recs[i]));
  fclose(f);
}

Test(tune_log, round_trip) {
  const char *path = tu_path("log.jsonl");
  at_record in[2] = {sample("00000000000000aa", "llvm -mcpu=x", 0.001, 0),
                     sample("00000000000000aa", "llvm -mcpu=x", 0, TE_ERR_RUNTIME)};
  write_records(path, 2, in);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 2);
  cr_assert_eq(log.skipped, 0);
  const at_record *r = &log.rec[0];
  cr_assert_str_eq(r->key, in[0].key);
  cr_assert_str_eq(r->wl_text, in[0].wl_text);
  cr_assert_str_eq(r->wl_desc, in[0].wl_desc);
  cr_assert_str_eq(r->target, in[0].target);
  cr_assert_str_eq(r->trace, in[0].trace);
  cr_assert_str_eq(r->sketch, "tile");
  cr_assert_str_eq(r->params, "1 2 3");
  cr_assert_str_eq(r->timestamp, in[0].timestamp);
  cr_assert_str_eq(r->te_version, TE_VERSION_STRING);
  cr_assert_eq(r->version, AT_LOG_VERSION);
  cr_assert_eq(r->ncosts, 3);
  for (int i = 0; i < 3; i++)
    cr_assert_float_eq(r->costs[i], in[0].costs[i], 1e-15);
  cr_assert_eq(r->seed, in[0].seed);
  cr_assert_eq(r->trial, 7);
  cr_assert_float_eq(r->elapsed_s, 12.5, 1e-12);
  cr_assert_float_eq(r->flops, 128, 1e-12);
  cr_assert_float_eq(r->load1, 1.5, 1e-12);
  cr_assert_float_eq(r->measure.min_repeat_s, 0.25, 1e-12);
  cr_assert_eq(r->measure.max_repeats, 100);
  cr_assert_eq(r->measure.threads, 2);
  cr_assert_float_eq(at_record_cost(r), 0.001, 1e-15); /* the median */
  cr_assert_float_eq(at_record_gflops(r), 128 / 0.001 * 1e-9, 1e-12);
  r = &log.rec[1];
  cr_assert_eq(r->error, TE_ERR_RUNTIME);
  cr_assert_str_eq(r->error_kind, "crash");
  cr_assert_str_eq(r->message, "the kernel crashed: signal 11");
  cr_assert(isinf(at_record_cost(r)));
  at_log_free(&log);
}

Test(tune_log, malformed_lines_are_skipped) {
  const char *path = tu_path("log.jsonl");
  at_record good = sample("00000000000000bb", "t", 0.5, 0);
  write_records(path, 1, &good);
  FILE *f = fopen(path, "a");
  fputs("this is not json\n", f);
  fputs("{\"version\": 1, \"workload\": {}}\n", f); /* parses, misses fields */
  fputs("[1, 2, 3]\n\n", f);                        /* not an object; an empty line */
  fclose(f);
  write_records(path, 1, &good);
  /* a record cut in the middle, as a kill leaves it */
  f = fopen(path, "a");
  fputs("{\"version\":1,\"workload\":{\"key\":\"00000000000000bb\",\"te", f);
  fclose(f);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 2, "kept %d", log.n);
  cr_assert_eq(log.skipped, 4, "skipped %d", log.skipped);
  at_log_free(&log);
  /* appending after the cut line starts a new line: the new record is readable */
  write_records(path, 1, &good);
  tu_read(path, &log);
  cr_assert_eq(log.n, 3);
  cr_assert_eq(log.skipped, 4);
  at_log_free(&log);
}

Test(tune_log, missing_file) {
  at_log log;
  cr_assert_eq(at_log_read(NULL, tu_path("none.jsonl"), true, NULL, &log), TE_OK);
  cr_assert_eq(log.n, 0);
  cr_assert_eq(at_log_read(ctx, tu_path("none.jsonl"), false, NULL, &log), TE_ERR_IO);
  cr_assert(strstr(te_last_error(ctx), "none.jsonl"));
}

Test(tune_log, best_by_workload_and_target) {
  const char *path = tu_path("log.jsonl");
  at_record in[5] = {sample("k1", "t1", 0.004, 0), sample("k1", "t1", 0.002, 0),
                     sample("k1", "t2", 0.001, 0), sample("k2", "t1", 0.0001, 0),
                     sample("k1", "t1", 0, TE_ERR_RUNTIME)};
  const char *traces[5] = {"split C i 2\n", "split C i 4\n", "split C i 4\n", "split C i 4\n",
                           "split C i 8\n"};
  for (int i = 0; i < 5; i++)
    in[i].trace = (char *)traces[i];
  write_records(path, 5, in);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(at_log_best(&log, "k1", "t1"), 1);
  cr_assert_eq(at_log_best(&log, "k1", "t2"), 2);
  cr_assert_eq(at_log_best(&log, "k1", NULL), 2);
  cr_assert_eq(at_log_best(&log, "k3", "t1"), -1);
  at_log_free(&log);
}

/* A schedule measured again is judged by its latest record; a confirm pass after the last trial
   ranks its own schedules (a trial measured in a faster minute does not beat them); a failure
   in the pass removes the schedule; other workloads' and targets' records of the same trace are
   not touched; tuner.confirm reads back. A trial after the pass brings back the plain rule. */
Test(tune_log, confirm_pass_and_latest_records) {
  const char *path = tu_path("log.jsonl");
  at_record in[8] = {sample("k1", "t1", 0.001, 0),  sample("k1", "t1", 0.002, 0),
                     sample("k1", "t1", 0.0024, 0), sample("k2", "t1", 0.0005, 0),
                     sample("k1", "t2", 0.0004, 0), sample("k2", "t1", 0, TE_ERR_RUNTIME),
                     sample("k1", "t1", 0.0025, 0), sample("k1", "t1", 0.0026, 0)};
  const char *traces[8] = {"a\n", "b\n", "d\n", "a\n", "a\n", "a\n", "a\n", "b\n"};
  for (int i = 0; i < 8; i++)
    in[i].trace = (char *)traces[i];
  in[5].confirm = in[6].confirm = in[7].confirm = true;
  write_records(path, 8, in);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 8);
  bool superseded[8] = {true, true, false, true, false, false, false, false};
  for (int i = 0; i < 8; i++) {
    cr_expect_eq(log.rec[i].superseded, superseded[i], "record %d", i);
    cr_expect_eq(log.rec[i].confirm, i >= 5, "record %d", i);
  }
  cr_expect_eq(at_log_best(&log, "k1", "t1"), 6, "the pass's best (a, 2.5 ms), not d (2.4 ms)");
  cr_expect_eq(at_log_best(&log, "k2", "t1"), -1, "a failed when measured again");
  cr_expect_eq(at_log_best(&log, "k1", "t2"), 4);
  at_log_free(&log);
  /* a later trial: every schedule by its latest record again (d at 2.4 ms) */
  at_record later = sample("k1", "t1", 0.0027, 0);
  later.trace = "e\n";
  write_records(path, 1, &later);
  tu_read(path, &log);
  cr_expect_eq(at_log_best(&log, "k1", "t1"), 2);
  at_log_free(&log);
}

Test(tune_log, workload_key_is_stable) {
  te_tensor *a = tu_op(ctx, "matmul M=8 N=4 K=2 dtype=f32");
  te_ctx *other = te_ctx_new();
  te_tensor *b = tu_op(other, "matmul M=8 N=4 K=2 dtype=f32");
  te_tensor *c = tu_op(other, "matmul M=8 N=4 K=3 dtype=f32");
  char ka[17], kb[17], kc[17];
  char *ta = te_tune_workload(ctx, 1, &a, ka), *tb = te_tune_workload(other, 1, &b, kb);
  char *tc = te_tune_workload(other, 1, &c, kc);
  cr_assert(ta && tb && tc, "%s", te_last_error(other));
  cr_assert_str_eq(ta, tb);
  cr_assert_str_eq(ka, kb);
  cr_assert_str_neq(ka, kc);
  cr_assert_eq(strlen(ka), 16);
  te_free(ta), te_free(tb), te_free(tc);
  te_ctx_free(other);
}
