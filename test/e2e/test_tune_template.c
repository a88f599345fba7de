/* test_tune_template.c — te_tune with a schedule template (public API, shared libte): a 64x64x64
 * matmul whose template splits i with a factor knob {4, 8, 16}, splits j by an int knob {8, 16},
 * chooses between two loop orders and whether to vectorize. The log's records are of sketch
 * "user" with every knob value among its candidates, no point is measured twice, te_apply_best
 * gives a schedule whose kernel matches plain C; the same seed measures the same points; points
 * where the template fails are never measured.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <te/tune.h>

#include "te_test.h"

static char dir[256], logs[3][300];

static void setup(void) {
  tt_setup();
  const char *base = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/te_tune_tmpl_XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
  for (int i = 0; i < 3; i++)
    snprintf(logs[i], sizeof logs[i], "%s/log%d.jsonl", dir, i);
}

static void teardown(void) {
  for (int i = 0; i < 3; i++)
    unlink(logs[i]);
  rmdir(dir);
  tt_teardown();
}

TestSuite(tune_template, .init = setup, .fini = teardown, .timeout = 240);

enum { M = 64, N = 64, K = 64 };

static te_tensor *matmul(te_ctx *ctx, te_tensor **a, te_tensor **b) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, K));
  *a = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(te_int(ctx, M), te_int(ctx, K)));
  *b = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(te_int(ctx, K), te_int(ctx, N)));
  return te_compute(ctx, "C", 2, TE_EXPRS(te_int(ctx, M), te_int(ctx, N)), TE_EXPRS(i, j),
                    TE_SUM(te_mul(TE_AT(*a, i, k), TE_AT(*b, k, j)), k));
}

static const int64_t TI[] = {4, 8, 16}, TJ[] = {8, 16};

#define TRY(x)                                                                                     \
  do {                                                                                             \
    te_status st_ = (x);                                                                           \
    if (st_ != TE_OK)                                                                              \
      return st_;                                                                                  \
  } while (0)

/* The knobs after i's split: j's factor, the order, vectorization. */
static te_status mm_rest(te_stage *st, te_knobs *k, te_iter *io, te_iter *ii) {
  te_iter *jo, *ji, *kk = te_reduce_iter(st, 0);
  int64_t tj;
  TRY(te_knob_int(k, "tj", 2, TJ, &tj));
  TRY(te_split(st, te_axis(st, 1), tj, &jo, &ji));
  te_iter *orders[2][5] = {{io, jo, kk, ii, ji}, {io, jo, ii, kk, ji}};
  TRY(te_knob_reorder(k, st, "order", 2, 5, &orders[0][0]));
  int vec;
  TRY(te_knob_choice(k, "vec", 2, &vec));
  if (vec)
    TRY(te_vectorize(st, ji));
  return TE_OK;
}

static te_status mm_template(te_schedule *s, te_knobs *k, void *user) {
  (void)user;
  te_stage *st = te_tune_stage(s, "C");
  if (!st)
    return TE_ERR_NOT_FOUND;
  te_iter *io, *ii;
  TRY(te_knob_split(k, st, te_axis(st, 0), "ti", 3, TI, &io, &ii));
  return mm_rest(st, k, io, ii);
}

/* The same knobs, i's factor taken with te_knob_int; fails for the factor *user. */
static te_status refusing_template(te_schedule *s, te_knobs *k, void *user) {
  te_stage *st = te_tune_stage(s, "C");
  if (!st)
    return TE_ERR_NOT_FOUND;
  te_iter *io, *ii;
  int64_t ti;
  TRY(te_knob_int(k, "ti", 3, TI, &ti));
  TRY(te_split(st, te_axis(st, 0), ti, &io, &ii));
  TRY(mm_rest(st, k, io, ii));
  return ti == *(const int64_t *)user ? TE_ERR_SCHEDULE : TE_OK;
}

static te_tune_options quick(const char *log, int trials, uint64_t seed) {
  te_tune_options o = {0};
  o.trials = trials;
  o.log_path = log;
  o.seed = seed;
  o.batch = 4;
  o.population = 16;
  o.generations = 1;
  o.min_repeat_s = 0.001;
  o.min_repeats = 1;
  o.max_repeats = 3;
  o.timeout_s = 60; /* only a hang reaches it, however loaded the machine: "no errors" holds */
  o.threads = 1;
  o.confirm = -1; /* one record per trial */
  o.template_fn = mm_template;
  return o;
}

/* The records of a log: each one's tuner.params and tuner.sketch (read as text). */
typedef struct rec {
  char sketch[32], params[256];
  bool ok;
} rec;

static int read_log(const char *path, rec *out, int cap) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  static char line[1 << 16];
  int n = 0;
  while (n < cap && fgets(line, sizeof line, f)) {
    rec *r = &out[n++];
    memset(r, 0, sizeof *r);
    const char *sk = strstr(line, "\"sketch\":\""), *pa = strstr(line, "\"params\":\"");
    cr_assert(sk && pa, "record without sketch or params: %s", line);
    sscanf(sk + 10, "%31[^\"]", r->sketch);
    sscanf(pa + 10, "%255[^\"]", r->params);
    r->ok = strstr(line, "\"error\":0,") != NULL;
  }
  fclose(f);
  return n;
}

/* Parses "ti=8 tj=16 order=1 vec=0" (all four knobs, in registration order). */
static void knob_values(const char *params, int64_t v[4]) {
  long long a, b, c, d;
  cr_assert_eq(sscanf(params, "ti=%lld tj=%lld order=%lld vec=%lld", &a, &b, &c, &d), 4,
               "params '%s'", params);
  v[0] = a, v[1] = b, v[2] = c, v[3] = d;
}

static bool in(int64_t x, const int64_t *list, int n) {
  for (int i = 0; i < n; i++)
    if (list[i] == x)
      return true;
  return false;
}

Test(tune_template, tunes_the_knobs_and_apply_best_runs) {
  te_tensor *A, *B, *C = TT_NN(matmul(tt_ctx, &A, &B));
  te_tune_summary sum;
  te_tune_options o = quick(logs[0], 10, 5);
  o.summary = &sum;
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o));
  cr_assert_eq(sum.measured, 10);
  cr_assert_eq(sum.errors, 0, "%d errors", sum.errors);
  cr_assert_gt(sum.best_gflops, 0);

  rec r[16];
  int n = read_log(logs[0], r, 16);
  cr_assert_eq(n, 10);
  for (int i = 0; i < n; i++) {
    cr_assert_str_eq(r[i].sketch, "user");
    cr_assert(r[i].ok, "record %d failed", i);
    int64_t v[4];
    knob_values(r[i].params, v);
    cr_assert(in(v[0], TI, 3), "ti=%lld", (long long)v[0]);
    cr_assert(in(v[1], TJ, 2), "tj=%lld", (long long)v[1]);
    cr_assert(v[2] == 0 || v[2] == 1, "order=%lld", (long long)v[2]);
    cr_assert(v[3] == 0 || v[3] == 1, "vec=%lld", (long long)v[3]);
    for (int j = 0; j < i; j++)
      cr_assert_str_neq(r[i].params, r[j].params, "records %d and %d are one point", j, i);
  }

  te_schedule *s = tt_schedule1(C);
  TT_OK(te_apply_best(s, logs[0], tt_target()));
  char *trace = te_schedule_trace(s);
  cr_assert(strstr(trace, "split C i "), "%s", trace);
  cr_assert(strstr(trace, "reorder C "), "%s", trace);
  te_free(trace);
  te_module *mod = tt_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *c = TT_ALLOC(TE_F32, M, N);
  tt_buf *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_ref_matmul(a, b, ref, M, N, K);
  tt_poison(c);
  tt_call(mod, "mm", 3, TT_BUFS(a, b, c), 0, NULL);
  tt_assert_close(c, ref, K);
}

/* Random search: the same seed measures the same points in the same order; another seed
   other points. */
Test(tune_template, same_seed_same_points) {
  rec r[3][8];
  int n[3];
  const uint64_t seeds[3] = {9, 9, 10};
  for (int k = 0; k < 3; k++) {
    te_ctx *c = te_ctx_new();
    te_tensor *A, *B, *C = TT_NN(matmul(c, &A, &B));
    te_tune_options o = quick(logs[k], 6, seeds[k]);
    o.no_model = 1;
    o.batch = 3;
    te_target *t = te_target_parse(c, "llvm");
    cr_assert_eq(te_tune(c, 1, &C, t, &o), TE_OK, "%s", te_last_error(c));
    te_ctx_free(c);
    n[k] = read_log(logs[k], r[k], 8);
  }
  cr_assert_eq(n[0], 6);
  cr_assert_eq(n[1], 6);
  int same = 0;
  for (int i = 0; i < 6; i++) {
    cr_assert_str_eq(r[0][i].params, r[1][i].params, "trial %d differs", i);
    same += strcmp(r[0][i].params, r[2][i].params) == 0;
  }
  cr_assert_lt(same, 6, "another seed measured the same points");
}

/* The template fails for ti=16: those points are never measured, and the search stops when
   the 2*2*2*2 others are done. */
Test(tune_template, failing_points_are_never_measured) {
  te_tensor *A, *B, *C = TT_NN(matmul(tt_ctx, &A, &B));
  static const int64_t refuse[] = {16};
  te_tune_summary sum;
  te_tune_options o = quick(logs[0], 30, 3);
  o.template_fn = refusing_template;
  o.template_user = (void *)refuse;
  o.summary = &sum;
  TT_OK(te_tune(tt_ctx, 1, &C, tt_target(), &o));
  cr_assert_eq(sum.measured, 16, "%d measured", sum.measured);
  cr_assert_eq(sum.errors, 0);
  rec r[32];
  int n = read_log(logs[0], r, 32);
  cr_assert_eq(n, 16);
  for (int i = 0; i < n; i++)
    cr_assert(!strstr(r[i].params, "ti=16"), "measured %s", r[i].params);
}

/* The first run (the first candidate of every knob) fails: te_tune returns its status. */
static te_status vectorize_reduction(te_schedule *s, te_knobs *k, void *user) {
  (void)user;
  te_stage *st = te_tune_stage(s, "C");
  int v;
  te_status st0 = te_knob_choice(k, "v", 2, &v);
  return st0 != TE_OK ? st0 : te_vectorize(st, te_reduce_iter(st, 0));
}

Test(tune_template, first_run_failure_is_returned) {
  te_tensor *A, *B, *C = TT_NN(matmul(tt_ctx, &A, &B));
  te_tune_options o = quick(logs[0], 4, 1);
  o.template_fn = vectorize_reduction;
  cr_assert_eq(te_tune(tt_ctx, 1, &C, tt_target(), &o), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tune", "template", "first run", "te_vectorize");
  cr_assert_neq(access(logs[0], F_OK), 0, "no log is written");
}
