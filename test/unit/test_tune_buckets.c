/* test_tune_buckets.c — shape buckets (autotune/buckets.c): a computation with a symbolic size
 * n tuned at a few values of n, and te_apply_best on the symbolic schedule building the one
 * kernel that dispatches among the buckets' best schedules with te_specialize.
 *
 * Each bucket's condition reaches its branch (the lowered IR: the branch under "n <= 16" holds
 * bucket 16's loops, and so on, the largest bucket's schedule is the general one); the kernel's
 * results match plain C at sizes inside, between and outside the buckets, with split factors
 * that do not divide them, outputs poisoned; buckets really tuned by te_tune replay and give
 * the same; a missing index, a bucket without records, a stale key and a trace that does not
 * replay are refused with messages naming them, the schedule left as it was.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../autotune/at.h"
#include "te/parse.h"

TestSuite(tune_buckets, .init = tt_setup, .fini = tt_teardown, .timeout = 240);

/* C = A x B + bias (M: the product), A: n x 24 with n symbolic: a matmul whose rows are the size
 * that varies. */
static const char *sym_text = "M[i, j] = sum(A[i, k]*B[k, j], k);\n"
                              "C[i, j] = M[i, j] + bias[j]\n"
                              "where A: f32[n, 24], B: f32[24, 20], bias: f32[20], k: [0, 24)";

typedef struct sym {
  int nout;
  te_tensor **outs, **ins;
  int nin;
  char text[1024]; /* canonical */
  char key[17];
} sym;

static sym make_sym(void) {
  sym w = {0};
  TT_OK(te_parse(tt_ctx, sym_text, &w.nout, &w.outs));
  TT_OK(te_workload_inputs(w.nout, w.outs, &w.nin, &w.ins, NULL, NULL));
  char *text = TT_NN(te_workload_text(w.nout, w.outs));
  cr_assert_lt(strlen(text), sizeof w.text);
  strcpy(w.text, text);
  te_free(text);
  at_workload_key(w.text, w.key);
  return w;
}

static char log_path[256];

static void new_log(void) {
  snprintf(log_path, sizeof log_path, "/tmp/te_buckets_XXXXXX");
  int fd = mkstemp(log_path);
  cr_assert(fd >= 0);
  close(fd);
}

/* One successful record of bucket n = value with trace, as te_tune writes it. */
static void add_record(const sym *w, int64_t value, const char *trace, double cost) {
  char *text = TT_NN(at_bucket_text(tt_ctx, w->text, "n", value));
  te_ctx *c = te_ctx_new();
  int nout;
  te_tensor **outs;
  cr_assert_eq(te_parse(c, text, &nout, &outs), TE_OK, "%s", te_last_error(c));
  char *canon = TT_NN(te_workload_text(nout, outs));
  char key[17];
  at_workload_key(canon, key);
  double costs[1] = {cost};
  at_record r = {.version = 1,
                 .key = key,
                 .wl_text = canon,
                 .target = (char *)te_target_str(tt_target()),
                 .trace = (char *)trace,
                 .ncosts = 1,
                 .costs = costs};
  FILE *f = at_log_open(log_path);
  cr_assert(f && at_log_append(f, &r));
  fclose(f);
  te_free(canon);
  te_ctx_free(c);
  free(text);
}

/* The bucket index of values (keys computed as te-tune does). */
static void add_index(const sym *w, int n, const int64_t values[]) {
  at_buckets b = {.size = "n", .n = n};
  for (int i = 0; i < n; i++) {
    b.values[i] = values[i];
    TT_OK(at_bucket_key(tt_ctx, w->text, "n", values[i], b.keys[i]));
  }
  TT_OK(at_buckets_append(tt_ctx, log_path, w->key, w->text, te_target_str(tt_target()), &b, ""));
}

/* Distinct schedules per bucket, with factors that divide neither the buckets nor the sizes
   run: 16: i split by 3, j by 8 vectorized (20 columns: a tail); 64: i by 7 parallel, k by 5;
   256: i by 13 and 4, j by 6 unrolled. */
static const char *trace16 = "split M i 3\nsplit M j 8\nvectorize M j.i\n";
static const char *trace64 = "split M i 7\nsplit M k 5\nparallel M i.o\n";
static const char *trace256 = "split M i 13\nsplit M i.i 4\nsplit M j 6\nunroll M j.i\n";

static void three_buckets(const sym *w) {
  new_log();
  add_record(w, 16, "split M i 2\n", 2e-6); /* slower than the next: not the best */
  add_record(w, 16, trace16, 1e-6);
  add_record(w, 64, trace64, 4e-6);
  add_record(w, 256, trace256, 9e-6);
  add_index(w, 3, (int64_t[]){16, 64, 256});
}

static void run_at(te_module *m, int64_t n) {
  tt_note("n = %lld", (long long)n);
  tt_buf *a = TT_ALLOC(TE_F32, n, 24), *b = TT_ALLOC(TE_F32, 24, 20), *bias = TT_ALLOC(TE_F32, 20);
  tt_buf *got = TT_ALLOC(TE_F32, n, 20), *ref = TT_ALLOC(TE_F32, n, 20);
  tt_fill(a, (uint64_t)n * 3 + 1);
  tt_fill(b, 7);
  tt_fill(bias, 11);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < 20; j++) {
      double s = 0;
      for (int64_t k = 0; k < 24; k++)
        s += tt_get(a, i * 24 + k) * tt_get(b, k * 20 + j);
      tt_set(ref, i * 20 + j, s + tt_get(bias, j));
    }
  tt_poison(got);
  tt_call(m, "mm", 4, TT_BUFS(a, b, bias, got), 0, NULL);
  tt_assert_close(got, ref, 24);
}

static te_module *build(const sym *w, te_schedule *s) {
  te_tensor *args[4] = {w->ins[0], w->ins[1], w->ins[2], w->outs[0]};
  return tt_build(s, "mm", 4, args, 0, NULL);
}

/* Sizes inside the buckets (at or below a value), between them, below the smallest and above
   the largest. */
static const int64_t sizes[] = {1, 2, 5, 16, 17, 23, 40, 63, 64, 65, 100, 255, 256, 257, 301, 517};

Test(tune_buckets, dispatch_trace_and_results) {
  sym w = make_sym();
  three_buckets(&w);
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  TT_OK(te_apply_best(s, log_path, tt_target()));
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(trace, "specialize n == 16 {\n"
                          "  split M i 3\n  split M j 8\n  vectorize M j.i\n"
                          "}\n"
                          "specialize n <= 16 {\n"
                          "  split M i 3\n  split M j 8\n  vectorize M j.i\n"
                          "}\n"
                          "specialize n == 64 {\n"
                          "  split M i 7\n  split M k 5\n  parallel M i.o\n"
                          "}\n"
                          "specialize n <= 64 {\n"
                          "  split M i 7\n  split M k 5\n  parallel M i.o\n"
                          "}\n"
                          "specialize n == 256 {\n"
                          "  split M i 13\n  split M i.i 4\n  split M j 6\n  unroll M j.i\n"
                          "}\n"
                          "split M i 13\nsplit M i.i 4\nsplit M j 6\nunroll M j.i\n");
  te_module *m = build(&w, s);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    run_at(m, sizes[i]);
  te_free(trace);
  unlink(log_path);
}

/* The text of a branch of the lowered IR: from the line holding head to the next line that
   closes a block at that line's indentation (malloc'd). Tails of splits hold if/else blocks of
   their own, deeper in. */
static char *branch_text(const char *ir, const char *head) {
  const char *b = strstr(ir, head);
  cr_assert(b, "no branch '%s' in\n%s", head, ir);
  const char *line = b;
  while (line > ir && line[-1] != '\n')
    line--;
  int indent = (int)strspn(line, " ");
  char close[64];
  snprintf(close, sizeof close, "\n%*s}", indent, "");
  const char *e = strstr(b + strlen(head), close);
  size_t n = e ? (size_t)(e - b) : strlen(b);
  char *out = malloc(n + 1);
  memcpy(out, b, n);
  out[n] = '\0';
  return out;
}

/* Each bucket's conditions lead to its own schedule: n == 16 and n <= 16 to the rows in 3s
   with 8-wide vectors, n == 64 and n <= 64 to the parallel rows in 7s, n == 256 and every
   other n to the rows in 13s; under n == v the loops have n folded to v. */
Test(tune_buckets, each_condition_reaches_its_branch) {
  sym w = make_sym();
  three_buckets(&w);
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  TT_OK(te_apply_best(s, log_path, tt_target()));
  te_tensor *args[4] = {w.ins[0], w.ins[1], w.ins[2], w.outs[0]};
  char *ir = TT_NN(te_lower_text(s, 4, args, 0, NULL));
  char *e16 = branch_text(ir, "if (n == 16) {");
  char *b16 = branch_text(ir, "} else if (n <= 16) {");
  char *e64 = branch_text(ir, "} else if (n == 64) {");
  char *b64 = branch_text(ir, "} else if (n <= 64) {");
  char *e256 = branch_text(ir, "} else if (n == 256) {");
  const char *at = strstr(ir, "if (n == 16) {"), *line = at;
  while (line > ir && line[-1] != '\n')
    line--;
  char head[64]; /* the dispatch's own else, at the indentation of its if */
  snprintf(head, sizeof head, "\n%*s} else {", (int)(at - line), "");
  char *general = branch_text(ir, head);
  cr_expect(strstr(b16, "i.i") && strstr(b16, "x8(") && !strstr(b16, "parallel"),
            "n <= 16: bucket 16's schedule expected:\n%s", b16);
  cr_expect(strstr(b64, "parallel") && strstr(b64, "k.i") && !strstr(b64, "x8("),
            "n <= 64: bucket 64's schedule expected:\n%s", b64);
  cr_expect(strstr(general, "i.i.i") && !strstr(general, "parallel") && !strstr(general, "x8("),
            "n > 64: bucket 256's schedule expected:\n%s", general);
  /* the exact branches: the same schedules with n a constant (no n left in their loops) */
  cr_expect(strstr(e16, "x8(") && !strstr(e16, "parallel") && !strstr(e16, "n//"),
            "n == 16: bucket 16's schedule at n = 16 expected:\n%s", e16);
  cr_expect(strstr(e64, "parallel") && !strstr(e64, "n//") && !strstr(e64, "n%"),
            "n == 64: bucket 64's schedule at n = 64 expected:\n%s", e64);
  cr_expect(strstr(e256, "i.i.i") && !strstr(e256, "n//") && !strstr(e256, "n%"),
            "n == 256: bucket 256's schedule at n = 256 expected:\n%s", e256);
  free(e16), free(e64), free(e256);
  free(b16), free(b64), free(general), te_free(ir);
  unlink(log_path);
}

/* One bucket: its schedule for every size (its exact branch, then the general schedule). */
Test(tune_buckets, one_bucket_is_the_general_schedule) {
  sym w = make_sym();
  new_log();
  add_record(&w, 32, trace64, 1e-6);
  add_index(&w, 1, (int64_t[]){32});
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  TT_OK(te_apply_best(s, log_path, tt_target()));
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(trace,
                   "specialize n == 32 {\n  split M i 7\n  split M k 5\n  parallel M i.o\n}\n"
                   "split M i 7\nsplit M k 5\nparallel M i.o\n");
  te_module *m = build(&w, s);
  run_at(m, 3), run_at(m, 32), run_at(m, 45);
  te_free(trace);
  unlink(log_path);
}

/* The latest index of the computation wins: buckets tuned again with other values. */
Test(tune_buckets, latest_index_wins) {
  sym w = make_sym();
  three_buckets(&w);
  add_index(&w, 2, (int64_t[]){16, 256});
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  TT_OK(te_apply_best(s, log_path, tt_target()));
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect(!strstr(trace, "n <= 64") && !strstr(trace, "n == 64") &&
                strstr(trace, "specialize n <= 16 {"),
            "%s", trace);
  te_free(trace);
  unlink(log_path);
}

/* Buckets tuned for real (te_tune, a few trials each, as `te-tune tune --bucket` runs them):
   their best schedules replay on the symbolic computation and give the right results. */
Test(tune_buckets, tuned_buckets_dispatch) {
  sym w = make_sym();
  new_log();
  int64_t values[] = {8, 40};
  for (int i = 0; i < 2; i++) {
    te_ctx *c = te_ctx_new();
    char *text = TT_NN(at_bucket_text(tt_ctx, w.text, "n", values[i]));
    int nout;
    te_tensor **outs;
    cr_assert_eq(te_parse(c, text, &nout, &outs), TE_OK, "%s", te_last_error(c));
    te_tune_options o = {.trials = 4,
                         .log_path = log_path,
                         .seed = (uint64_t)i,
                         .batch = 4,
                         .population = 16,
                         .generations = 1,
                         .min_repeat_s = 0.0005,
                         .min_repeats = 1,
                         .max_repeats = 3,
                         .timeout_s = 60,
                         .threads = 1,
                         .confirm = -1};
    te_target *t = te_target_parse(c, te_target_str(tt_target()));
    cr_assert_eq(te_tune(c, nout, outs, t, &o), TE_OK, "%s", te_last_error(c));
    free(text);
    te_ctx_free(c);
  }
  add_index(&w, 2, values);
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  TT_OK(te_apply_best(s, log_path, tt_target()));
  char *trace = TT_NN(te_schedule_trace(s));
  tt_note("dispatch:\n%s", trace);
  cr_expect(!strncmp(trace, "specialize n == 8 {", 19) && strstr(trace, "specialize n <= 8 {") &&
                strstr(trace, "specialize n == 40 {") && !strstr(trace, "n <= 40"),
            "%s", trace);
  te_module *m = build(&w, s);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    run_at(m, sizes[i]);
  te_free(trace);
  unlink(log_path);
}

/* The size as a reduction's extent (attention over the positions so far): C = A B with
   A: 12 x n, B: n x 10, buckets 16 and 100 tuned for real, results at sizes around them. */
Test(tune_buckets, tuned_reduction_over_the_size) {
  const char *text = "C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[12, n], B: f32[n, 10], "
                     "k: [0, n)";
  int nout;
  te_tensor **outs, **ins;
  int nin;
  TT_OK(te_parse(tt_ctx, text, &nout, &outs));
  TT_OK(te_workload_inputs(nout, outs, &nin, &ins, NULL, NULL));
  char *canon = TT_NN(te_workload_text(nout, outs)), key[17];
  at_workload_key(canon, key);
  new_log();
  at_buckets b = {.size = "n", .n = 2, .values = {16, 100}};
  for (int i = 0; i < 2; i++) {
    TT_OK(at_bucket_key(tt_ctx, canon, "n", b.values[i], b.keys[i]));
    char *bt = TT_NN(at_bucket_text(tt_ctx, canon, "n", b.values[i]));
    te_ctx *c = te_ctx_new();
    int bn;
    te_tensor **bo;
    cr_assert_eq(te_parse(c, bt, &bn, &bo), TE_OK, "%s", te_last_error(c));
    te_tune_options o = {.trials = 4,
                         .log_path = log_path,
                         .seed = 7,
                         .batch = 4,
                         .population = 16,
                         .generations = 1,
                         .min_repeat_s = 0.0005,
                         .min_repeats = 1,
                         .max_repeats = 3,
                         .timeout_s = 60,
                         .threads = 1,
                         .confirm = -1};
    te_target *t = te_target_parse(c, te_target_str(tt_target()));
    cr_assert_eq(te_tune(c, bn, bo, t, &o), TE_OK, "%s", te_last_error(c));
    free(bt);
    te_ctx_free(c);
  }
  TT_OK(at_buckets_append(tt_ctx, log_path, key, canon, te_target_str(tt_target()), &b, ""));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, nout, outs));
  TT_OK(te_apply_best(s, log_path, tt_target()));
  te_module *m = tt_build(s, "mm", 3, (te_tensor *const[]){ins[0], ins[1], outs[0]}, 0, NULL);
  static const int64_t ns[] = {1, 3, 16, 17, 57, 100, 101, 203};
  for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
    int64_t n = ns[q];
    tt_note("n = %lld", (long long)n);
    tt_buf *a = TT_ALLOC(TE_F32, 12, n), *bb = TT_ALLOC(TE_F32, n, 10);
    tt_buf *got = TT_ALLOC(TE_F32, 12, 10), *ref = TT_ALLOC(TE_F32, 12, 10);
    tt_fill(a, (uint64_t)n + 5);
    tt_fill(bb, (uint64_t)n + 9);
    tt_ref_matmul(a, bb, ref, 12, 10, n);
    tt_poison(got);
    tt_call(m, "mm", 3, TT_BUFS(a, bb, got), 0, NULL);
    tt_assert_close(got, ref, n);
  }
  te_free(canon);
  unlink(log_path);
}

/* ---------------------------------------------------------------- refusals */

static void expect_unchanged(te_schedule *s) {
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(trace, "");
  te_free(trace);
}

Test(tune_buckets, no_index_is_not_found) {
  sym w = make_sym();
  new_log();
  add_record(&w, 16, trace16, 1e-6); /* records of a bucket, but no index */
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  cr_assert_eq(te_apply_best(s, log_path, tt_target()), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "symbolic shapes", w.key, "no bucket index",
                "te-tune tune --bucket");
  expect_unchanged(s);
  unlink(log_path);
}

Test(tune_buckets, bucket_without_records_is_named) {
  sym w = make_sym();
  new_log();
  add_record(&w, 16, trace16, 1e-6);
  add_index(&w, 2, (int64_t[]){16, 64});
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  cr_assert_eq(te_apply_best(s, log_path, tt_target()), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "bucket n = 64", "no successful record");
  expect_unchanged(s);
  unlink(log_path);
}

/* An index whose key for a bucket is not what the computation gives at that size (the log
   predates a change of the canonical text): refused, naming both keys. */
Test(tune_buckets, stale_bucket_key_is_refused) {
  sym w = make_sym();
  new_log();
  add_record(&w, 16, trace16, 1e-6);
  at_buckets b = {.size = "n", .n = 1, .values = {16}, .keys = {"0123456789abcdef"}};
  TT_OK(at_buckets_append(tt_ctx, log_path, w.key, w.text, te_target_str(tt_target()), &b, ""));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  cr_assert_eq(te_apply_best(s, log_path, tt_target()), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "was tuned as workload 0123456789abcdef",
                "tune the buckets again");
  expect_unchanged(s);
  unlink(log_path);
}

/* A bucket's trace that does not replay on the symbolic schedule: its bucket named, the
   schedule unchanged (the dispatch was tried on a scratch schedule first). */
Test(tune_buckets, trace_that_does_not_replay_names_the_bucket) {
  sym w = make_sym();
  new_log();
  add_record(&w, 16, trace16, 1e-6);
  add_record(&w, 64, "split M nosuch 4\n", 1e-6);
  add_index(&w, 2, (int64_t[]){16, 64});
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, w.nout, w.outs));
  cr_assert_neq(te_apply_best(s, log_path, tt_target()), TE_OK);
  TT_EXPECT_ERR(tt_ctx, te_last_status(tt_ctx), "bucket n = 64", "nosuch");
  expect_unchanged(s);
  unlink(log_path);
}

/* Bad bucket lists are refused by name. */
Test(tune_buckets, bad_bucket_lists) {
  at_buckets b = {.size = "n", .n = 2, .values = {64, 16}};
  cr_expect_eq(at_buckets_check(tt_ctx, &b), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "must increase");
  te_clear_error(tt_ctx);
  b = (at_buckets){.size = "n", .n = 1, .values = {0}};
  cr_expect_eq(at_buckets_check(tt_ctx, &b), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "n = 0", ">= 1");
}

/* The size is replaced as a whole name only: not inside other names, nor a number's exponent
   or suffix; a text without it is TE_ERR_NOT_FOUND. */
Test(tune_buckets, bucket_text_replaces_whole_names) {
  char *t = TT_NN(
      at_bucket_text(tt_ctx, "nn[i] = A[i, n]*1e5 + x_n where A: f32[n, n], n2: [0, n)", "n", 12));
  cr_expect_str_eq(t, "nn[i] = A[i, 12]*1e5 + x_n where A: f32[12, 12], n2: [0, 12)");
  free(t);
  t = TT_NN(at_bucket_text(tt_ctx, "A[i] = 1.5f where A: [f]", "f", 3));
  cr_expect_str_eq(t, "A[i] = 1.5f where A: [3]");
  free(t);
  cr_expect_null(at_bucket_text(tt_ctx, "C[i] = A[i] where A: f32[m]", "n", 4));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "no size named 'n'");
}

/* A size left symbolic besides the bucketed one: the bucket's key cannot be made. */
Test(tune_buckets, other_symbolic_sizes_are_refused) {
  char key[17];
  cr_expect_eq(at_bucket_key(tt_ctx, "C[i, j] = A[i, j]*2.0f where A: f32[n, m]", "n", 8, key),
               TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "n = 8", "symbolic shape");
}
