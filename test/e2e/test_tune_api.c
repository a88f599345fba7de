/* test_tune_api.c — te_tune and te_apply_best through the public API (shared libte): a matmul
 * written by hand with te_compute is tuned for a few trials, the best schedule applied to a
 * fresh schedule gives the same numbers as plain C, te_tune_workload's key is what the log
 * holds, and a workload without records gets TE_ERR_NOT_FOUND with the schedule left as it was.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <te/tune.h>

#include "te_test.h"

static char dir[256], logpath[300];

static void setup(void) {
  tt_setup();
  const char *base = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/te_tune_api_XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(logpath, sizeof logpath, "%s/log.jsonl", dir);
}

static void teardown(void) {
  unlink(logpath);
  rmdir(dir);
  tt_teardown();
}

TestSuite(tune_api, .init = setup, .fini = teardown, .timeout = 240);

enum { M = 24, N = 40, K = 12 };

static te_tensor *matmul(te_tensor **a, te_tensor **b, int k_extent) {
  *a = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, k_extent));
  *b = tt_placeholder("B", TE_F32, 2, TT_SHAPE(k_extent, N));
  return tt_matmul(*a, *b, M, N, k_extent);
}

static te_tune_options quick(int trials) {
  te_tune_options o = {0};
  o.trials = trials;
  o.log_path = logpath;
  o.seed = 11;
  o.batch = 3;
  o.population = 16;
  o.generations = 1;
  o.min_repeat_s = 0.001;
  o.max_repeats = 3;
  o.timeout_s = 60; /* only a hang reaches it, however loaded the machine */
  return o;
}

Test(tune_api, tune_apply_best_and_run) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B, K));
  te_tune_summary sum;
  te_tune_options o = quick(4);
  o.summary = &sum;
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o));
  cr_assert_eq(sum.measured, 4);
  cr_assert_gt(sum.best_gflops, 0);
  char key[17];
  char *text = TT_NN(te_tune_workload(tt_ctx, 1, &C, key));
  cr_assert_str_eq(key, sum.key);
  te_free(text);

  te_schedule *s = tt_schedule1(C);
  TT_OK(te_apply_best(s, logpath, tt_target()));
  char *trace = te_schedule_trace(s);
  cr_assert_neq(strlen(trace), 0, "the best schedule has steps");
  te_free(trace);
  te_module *mod = tt_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *c = TT_ALLOC(TE_F32, M, N);
  tt_buf *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_ref_matmul(a, b, ref, M, N, K);
  tt_call(mod, "mm", 3, TT_BUFS(a, b, c), 0, NULL);
  tt_assert_close(c, ref, K);
}

/* flush_cache: every trial is measured (cold caches cost more, which no test times) and its
   record says how (tuner.measure.flush_cache); a run without it writes no such field. */
Test(tune_api, flush_cache_is_recorded) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B, K));
  te_tune_summary sum;
  te_tune_options o = quick(3);
  o.summary = &sum;
  o.flush_cache = 1;
  o.confirm = -1;
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o));
  cr_assert_eq(sum.measured, 3);
  cr_assert_eq(sum.errors, 0);
  FILE *f = fopen(logpath, "r");
  cr_assert_not_null(f);
  char line[1 << 14];
  int n = 0, flushed = 0;
  while (fgets(line, sizeof line, f)) {
    n++;
    flushed += strstr(line, "\"flush_cache\":true") != NULL;
  }
  fclose(f);
  cr_assert_eq(n, 3);
  cr_assert_eq(flushed, 3, "every record says its caches were flushed");
  unlink(logpath);
  o.flush_cache = 0;
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o));
  f = fopen(logpath, "r");
  cr_assert_not_null(f);
  while (fgets(line, sizeof line, f))
    cr_assert_null(strstr(line, "flush_cache"), "a run without flush_cache records none");
  fclose(f);
}

/* transfer_logs: the records of another workload train the model of a new one (all of them
   here: every trial succeeded), the session's own workload and confirm records do not count, a
   record whose workload no longer rebuilds is skipped, and a missing path is an I/O error. */
Test(tune_api, transfer_logs_warm_the_model) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B, K));
  te_tune_summary sum;
  te_tune_options o = quick(4);
  o.summary = &sum;
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o)); /* 4 trials + a confirm pass of K */
  cr_assert_eq(sum.errors, 0);
  FILE *f = fopen(logpath, "a"); /* a record of a workload that does not parse: skipped */
  cr_assert_not_null(f);
  fprintf(f,
          "{\"version\":1,\"workload\":{\"key\":\"00000000000000aa\",\"text\":\"not a "
          "workload\"},\"target\":\"%s\",\"trace\":\"\",\"result\":{\"costs\":[1e-6],"
          "\"error\":0}}\n",
          te_target_str(tt_target()));
  fclose(f);

  te_tensor *A2, *B2, *C2 = TT_NN(matmul(&A2, &B2, K + 1)); /* another workload */
  char other[320];
  snprintf(other, sizeof other, "%s/other.jsonl", dir);
  te_tune_options o2 = quick(2);
  o2.log_path = other;
  o2.transfer_logs = dir; /* log.jsonl (K's) and other.jsonl itself (empty at the start) */
  o2.summary = &sum;
  TT_OK(te_tune(tt_ctx, 1, &C2, tt_target(), &o2));
  cr_assert_eq(sum.transfer_records, 4, "K's 4 trials, not its confirm records (got %d)",
               sum.transfer_records);
  cr_assert_eq(sum.transfer_workloads, 1);
  cr_assert_eq(sum.measured, 2);

  o2.transfer_logs = "/nonexistent/te-logs";
  cr_assert_eq(te_tune(tt_ctx, 1, &C2, tt_target(), &o2), TE_ERR_IO);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_IO, "transfer_logs", "/nonexistent/te-logs");
  unlink(other);
}

Test(tune_api, no_record_is_not_found) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B, K));
  te_tune_options o = quick(2);
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o));
  te_tensor *A2, *B2, *C2 = TT_NN(matmul(&A2, &B2, K + 1)); /* another workload */
  te_schedule *s = tt_schedule1(C2);
  cr_assert_eq(te_apply_best(s, logpath, tt_target()), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_apply_best", "no successful record");
  char *trace = te_schedule_trace(s);
  cr_assert_str_eq(trace, "");
  te_free(trace);
}

Test(tune_api, argument_errors) {
  te_tensor *A, *B, *C = TT_NN(matmul(&A, &B, K));
  te_tune_options o = quick(2);
  cr_assert_eq(te_tune(tt_ctx, 1, &C, NULL, &o), TE_ERR_INVALID_ARG);
  te_clear_error(tt_ctx);
  cr_assert_eq(te_tune(tt_ctx, 1, &C, tt_target(), NULL), TE_ERR_INVALID_ARG);
  te_clear_error(tt_ctx);
  cr_assert_eq(te_tune(tt_ctx, 1, &A, tt_target(), &o), TE_ERR_INVALID_ARG); /* a placeholder */
  te_clear_error(tt_ctx);
  cr_assert_eq(te_apply_best(NULL, logpath, tt_target()), TE_ERR_INVALID_ARG);
  te_schedule *s = tt_schedule1(C);
  cr_assert_eq(te_apply_best(s, NULL, tt_target()), TE_ERR_INVALID_ARG);
}

/* A workload whose sum sits inside the expression (C = 2 * C0 + sum, lifted into C_red0) and a
   scan reading it: tuned in te_tune's own copy of the computation, the best schedule replays on
   the user's and computes the reference. */
Test(tune_api, lifted_reduction_and_scan) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *C0 = tt_placeholder("C0", TE_F32, 2, TT_SHAPE(M, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *sum = TE_SUM(te_mul(tt_at2(A, i, k), tt_at2(B, k, j)), k);
  te_tensor *C = TT_NN(
      te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)), TE_EXPRS(i, j),
                 te_add(te_mul(te_float(tt_ctx, TE_F32, 2), tt_at2(C0, i, j)), sum)));
  te_tensor *St = tt_placeholder("S", TE_F32, 2, TT_SHAPE(M, N));
  te_expr *t = te_var(tt_ctx, "t"), *u = te_var(tt_ctx, "u");
  te_tensor *S =
      TT_NN(te_scan(tt_ctx, "S", St, 0, 1, TE_EXPRS(t, u), tt_at2(C, t, u),
                    te_add(tt_at2(St, te_sub(t, te_int(tt_ctx, 1)), u), tt_at2(C, t, u))));
  te_tune_options o = quick(4);
  TT_OK(te_tune(tt_ctx, 1, &S, tt_target(), &o));
  te_schedule *s = tt_schedule1(S);
  TT_OK(te_apply_best(s, logpath, tt_target()));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *c0 = TT_ALLOC(TE_F32, M, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_fill(c0, 3);
  tt_ref_matmul(a, b, ref, M, N, K);
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++)
      tt_set(ref, p * N + q,
             2 * tt_get(c0, p * N + q) + tt_get(ref, p * N + q) +
                 (p ? tt_get(ref, (p - 1) * N + q) : 0));
  tt_check(s, 4, TT_TENSORS(A, B, C0, S), TT_BUFS(a, b, c0, got), 0, NULL, NULL, got, ref, K * M);
}
