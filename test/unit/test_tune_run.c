/* test_tune_run.c — short tuning runs (a few trials of small shapes): the log gets one record a
 * trial and te_apply_best replays the best; a planted crashing, hanging or wrong candidate costs
 * one error record and the run goes on; a tuner killed with SIGKILL and resumed loses at most the
 * record being written and measures no trace twice; the same seed measures the same candidates.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include "../../autotune/tune_session.h" /* at_confirm_cost */

#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

TestSuite(tune_run, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

static te_status tune(te_ctx *c, te_tensor *out, te_tune_options *o) {
  return te_tune(c, 1, &out, tu_target(c), o);
}

/* te_apply_best in another context (the computation rebuilt, the key found) replays trace. */
static void expect_apply_best(const char *log, const char *desc, const char *trace) {
  te_ctx *c2 = te_ctx_new();
  te_tensor *o2 = tu_op(c2, desc);
  te_schedule *s = te_schedule_new(c2, 1, &o2);
  cr_assert_eq(te_apply_best(s, log, tu_target(c2)), TE_OK, "%s", te_last_error(c2));
  char *got = te_schedule_trace(s);
  cr_assert_str_eq(got, trace);
  te_free(got);
  te_ctx_free(c2);
}

Test(tune_run, records_and_apply_best) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=16 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = tu_quick(log, 6, 1);
  o.summary = &sum;
  cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 6);
  cr_assert_eq(sum.trials_done, 6);
  cr_assert_eq(sum.errors, 0, "%d errors", sum.errors);
  cr_assert(isfinite(sum.best_cost_s) && sum.best_gflops > 0);
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 6);
  for (int i = 0; i < l.n; i++) {
    cr_assert_str_eq(l.rec[i].key, sum.key);
    cr_assert_eq(l.rec[i].trial, i);
    cr_assert_geq(l.rec[i].ncosts, 1);
    cr_assert_float_eq(l.rec[i].flops, 2.0 * 32 * 32 * 16, 1e-9);
  }
  int best = at_log_best(&l, sum.key, NULL);
  cr_assert_float_eq(at_record_cost(&l.rec[best]), sum.best_cost_s, 1e-12);
  expect_apply_best(log, "matmul M=32 N=32 K=16 dtype=f32", l.rec[best].trace);
  at_log_free(&l);
}

/* Quick options with a confirm pass of confirm schedules in rounds rounds. */
static te_tune_options with_confirm(const char *log, int trials, int confirm, int rounds,
                                    te_tune_summary *sum) {
  te_tune_options o = tu_quick(log, trials, (uint64_t)trials);
  o.confirm = confirm;
  o.confirm_rounds = rounds;
  o.summary = sum;
  return o;
}

/* The confirm pass: the 3 best of 6 trials measured again in 2 rounds, one record each (the
   trial it measures again, the samples of both rounds), which te_apply_best and the summary
   then judge them by; a resumed run does not count those records as trials. */
Test(tune_run, confirm_pass_measures_the_best_again) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=16 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = with_confirm(log, 6, 3, 2, &sum);
  cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 6);
  cr_assert_eq(sum.errors, 0);
  cr_assert_eq(sum.confirmed, 3);
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 9);
  double c[6];
  for (int i = 0; i < 6; i++) {
    cr_assert(!l.rec[i].confirm);
    c[i] = at_record_cost(&l.rec[i]);
  }
  for (int k = 6; k < 9; k++) {
    const at_record *r = &l.rec[k];
    cr_assert(r->confirm);
    cr_assert_geq(r->ncosts, 2, "a sample per round at least");
    int t = r->trial, better = 0;
    cr_assert(t >= 0 && t < 6);
    cr_assert_str_eq(r->trace, l.rec[t].trace, "the confirm record names the trial it repeats");
    cr_assert_str_eq(r->params, l.rec[t].params);
    cr_assert(l.rec[t].superseded);
    for (int i = 0; i < 6; i++)
      better += c[i] < c[t];
    cr_assert_lt(better, 3, "trial %d was not among the 3 best", t);
  }
  int best = at_log_best(&l, sum.key, NULL);
  cr_assert(l.rec[best].confirm, "the best of the confirm pass");
  cr_assert_float_eq(at_record_cost(&l.rec[best]), sum.best_cost_s, 1e-12);
  expect_apply_best(log, "matmul M=32 N=32 K=16 dtype=f32", l.rec[best].trace);
  at_log_free(&l);
  /* resume: 6 trials done, 2 more */
  o = tu_quick(log, 8, 6);
  o.resume = 1;
  o.summary = &sum;
  cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 2);
  cr_assert_eq(sum.trials_done, 8);
}

/* A schedule that fails when measured again (here: its run crashes) gets a failure record and
   is no longer the best; too many rounds is refused. */
Test(tune_run, confirm_pass_failure_supersedes) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=16 N=16 K=16 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = with_confirm(log, 4, 2, 1, &sum);
  at_test_plant(4, -1, -1, 0); /* the first run of the confirm pass: the best schedule */
  te_status st = tune(ctx, out, &o);
  at_test_plant(-1, -1, -1, 0);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(ctx));
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 6);
  int crashed = -1;
  for (int k = 4; k < 6; k++)
    if (!strcmp(l.rec[k].error_kind, "crash"))
      crashed = k;
  cr_assert_geq(crashed, 0, "the planted crash is recorded");
  int best = at_log_best(&l, sum.key, NULL);
  cr_assert_geq(best, 0);
  cr_assert_str_neq(l.rec[best].trace, l.rec[crashed].trace);
  cr_assert_float_eq(at_record_cost(&l.rec[best]), sum.best_cost_s, 1e-12);
  at_log_free(&l);
  o.confirm_rounds = 17;
  cr_assert_eq(tune(ctx, out, &o), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "confirm_rounds"), "%s", te_last_error(ctx));
}

Test(tune_run, apply_best_missing_workload) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=16 N=16 K=16 dtype=f32");
  te_tune_options o = tu_quick(log, 2, 1);
  cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s", te_last_error(ctx));
  te_tensor *other = tu_op(ctx, "matmul M=16 N=16 K=8 dtype=f32");
  te_schedule *s = te_schedule_new(ctx, 1, &other);
  cr_assert_eq(te_apply_best(s, log, tu_target(ctx)), TE_ERR_NOT_FOUND);
  char key[17];
  char *text = te_tune_workload(ctx, 1, &other, key);
  cr_assert(strstr(te_last_error(ctx), key), "message: %s", te_last_error(ctx));
  te_free(text);
  char *trace = te_schedule_trace(s);
  cr_assert_str_eq(trace, ""); /* left as it was: the default schedule */
  te_free(trace);
  te_clear_error(ctx);
  cr_assert_eq(te_apply_best(s, tu_path("missing.jsonl"), tu_target(ctx)), TE_ERR_IO);
}

/* Planted failures: the 2nd measurement crashes, the 4th hangs, the 5th answers wrong. */
Test(tune_run, crash_hang_and_wrong_are_isolated) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=16 N=16 K=16 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = tu_quick(log, 6, 3);
  o.check = 100; /* check every candidate */
  o.summary = &sum;
  /* the planted hang is killed after 1 s; the real candidates keep tu_quick's timeout, which no
     loaded machine reaches, so only the planted trial can be a timeout */
  at_test_plant(1, 3, 4, 1.0);
  te_status st = tune(ctx, out, &o);
  at_test_plant(-1, -1, -1, 0);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 6);
  cr_assert_eq(sum.errors, 3);
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 6);
  const char *kinds[6] = {"", "crash", "", "timeout", "wrong", ""};
  for (int i = 0; i < 6; i++) {
    cr_assert_str_eq(l.rec[i].error_kind, kinds[i], "trial %d: %s (%s)", i, l.rec[i].error_kind,
                     l.rec[i].message);
    cr_assert_eq(l.rec[i].error != TE_OK, *kinds[i] != 0);
  }
  cr_assert(strstr(l.rec[1].message, "signal"), "%s", l.rec[1].message);
  at_log_free(&l);
}

static bool has_duplicates(const at_log *l) {
  for (int i = 0; i < l->n; i++)
    for (int j = 0; j < i; j++)
      if (!strcmp(l->rec[i].trace, l->rec[j].trace))
        return true;
  return false;
}

Test(tune_run, kill_then_resume) {
  const char *log = tu_path("log.jsonl");
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) { /* the tuner to kill: more trials than it can finish, slowed by repeats */
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* and it dies with the test, should the test time out */
    te_ctx *c = te_ctx_new();
    te_tune_options o = tu_quick(log, 100000, 5);
    o.batch = 2;
    o.min_repeat_s = 0.02;
    o.max_repeats = 200;
    te_tune(c, 1, (te_tensor *[]){tu_op(c, "matmul M=32 N=32 K=32 dtype=f32")}, tu_target(c), &o);
    _exit(0);
  }
  /* killed once it has written 5 records, however long that takes on this machine (the test's
     own timeout ends a tuner that never gets there); a tuner that exits first is a failure */
  int ws = 0;
  pid_t done = 0;
  while (tu_count_lines(log) < 5 && (done = waitpid(pid, &ws, WNOHANG)) == 0)
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  cr_assert_eq(done, 0, "the tuner ended (status %d) after %d records, before it was killed", ws,
               tu_count_lines(log));
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  at_log before;
  tu_read(log, &before);
  int lines = tu_count_lines(log);
  cr_assert_geq(before.n, 5);
  cr_assert_leq(lines - before.n, 1, "%d lines, %d records", lines,
                before.n); /* at most the last */
  cr_assert_eq(before.skipped, lines - before.n);
  /* resume to before.n + 4 trials */
  te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=32 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = tu_quick(log, before.n + 4, 5);
  o.resume = 1;
  o.summary = &sum;
  cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 4);
  cr_assert_eq(sum.trials_done, before.n + 4);
  at_log after;
  tu_read(log, &after);
  cr_assert_eq(after.n, before.n + 4);
  cr_assert(!has_duplicates(&after), "a trace was measured twice");
  for (int i = 0; i < before.n; i++) /* nothing written before the kill is lost */
    cr_assert_str_eq(after.rec[i].trace, before.rec[i].trace);
  for (int i = before.n; i < after.n; i++)
    cr_assert_eq(after.rec[i].trial, i, "trial numbers continue");
  at_log_free(&before);
  at_log_free(&after);
}

/* Random search (no model: measurements do not steer it) with one seed measures the same
   candidates in the same order; the model-guided search does for its first round. */
Test(tune_run, same_seed_same_trials) {
  const char *logs[2] = {tu_path("a.jsonl"), tu_path("b.jsonl")};
  for (int k = 0; k < 2; k++) {
    te_ctx *c = te_ctx_new();
    te_tune_options o = tu_quick(logs[k], 6, 42);
    o.no_model = 1;
    o.batch = 3;
    cr_assert_eq(tune(c, tu_op(c, "matmul M=16 N=32 K=8 dtype=f32"), &o), TE_OK);
    te_ctx_free(c);
  }
  at_log a, b;
  tu_read(logs[0], &a);
  tu_read(logs[1], &b);
  cr_assert_eq(a.n, 6);
  cr_assert_eq(b.n, 6);
  for (int i = 0; i < a.n; i++) {
    cr_assert_str_eq(a.rec[i].trace, b.rec[i].trace, "trial %d differs", i);
    cr_assert_str_eq(a.rec[i].params, b.rec[i].params);
  }
  at_log_free(&a);
  at_log_free(&b);
}

Test(tune_run, conv2d_and_softmax_tune) {
  const char *descs[] = {"conv2d C=4 H=8 W=8 O=8 pad=1 dtype=f32", "softmax N=8 D=64 dtype=f32",
                         "matmul_relu M=16 N=16 K=16 dtype=f32"};
  for (int k = 0; k < 3; k++) {
    te_tensor *out = tu_op(ctx, descs[k]);
    te_tune_summary sum;
    te_tune_options o = tu_quick(tu_path("log.jsonl"), 4, 1);
    o.check = 100;
    o.summary = &sum;
    cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s: %s", descs[k], te_last_error(ctx));
    cr_assert_eq(sum.errors, 0, "%s: %d errors", descs[k], sum.errors);
    cr_assert_eq(sum.measured, 4);
  }
}

Test(tune_run, bad_options) {
  te_tensor *out = tu_op(ctx, "matmul M=8 N=8 K=8 dtype=f32");
  te_tune_options o = tu_quick(NULL, 2, 1);
  cr_assert_eq(tune(ctx, out, &o), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "log"));
  te_clear_error(ctx);
  o = tu_quick(tu_path("l.jsonl"), -1, 1);
  cr_assert_eq(tune(ctx, out, &o), TE_ERR_INVALID_ARG);
  te_clear_error(ctx);
  te_expr *n = te_var(ctx, "n");
  te_tensor *x = te_placeholder(ctx, "x", TE_F32, 1, TE_EXPRS(n));
  te_tensor *y = te_op_relu(ctx, x, NULL);
  o = tu_quick(tu_path("l.jsonl"), 2, 1);
  cr_assert_eq(te_tune(ctx, 1, &y, tu_target(ctx), &o), TE_ERR_UNSUPPORTED);
  cr_assert(strstr(te_last_error(ctx), "symbolic"), "%s", te_last_error(ctx));
}

/* Every generated sketch computes the function of the default schedule: each measured candidate
   is checked against it (o.check), on shapes no tile divides evenly into powers of two and a
   convolution whose padding is inlined into the copies of tile+cache+read; some register tiles
   leave a tail their local block rounds up. */
static void expect_all_correct(const char *desc, int trials) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, desc);
  te_tune_options o = tu_quick(log, trials, 7);
  o.check = 1000;
  cr_assert_eq(tune(ctx, out, &o), TE_OK, "%s: %s", desc, te_last_error(ctx));
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, trials, "%s", desc);
  int read_sketch = 0, round_up = 0;
  for (int i = 0; i < l.n; i++) {
    cr_assert_str_eq(l.rec[i].error_kind, "", "%s: trial %d (%s): %s %s", desc, i, l.rec[i].sketch,
                     l.rec[i].error_kind, l.rec[i].message);
    read_sketch += !strcmp(l.rec[i].sketch, "tile+cache+read");
    round_up += strstr(l.rec[i].trace, "round_up") != NULL;
  }
  cr_assert_gt(read_sketch, 0, "%s: no tile+cache+read candidate measured", desc);
  cr_assert_gt(round_up, 0, "%s: no register tile with a rounded-up tail measured", desc);
  at_log_free(&l);
  remove(log);
}

Test(tune_run, every_sketch_computes_the_default_function) {
  expect_all_correct("matmul M=24 N=40 K=36 dtype=f32", 16);
  expect_all_correct("conv2d C=3 H=10 W=12 O=8 pad=1 dtype=f32", 16);
}

/* The confirmed cost is the lowest round median; it disagrees with the search beyond 3x. */
Test(tune_run, confirm_cost_rules) {
  double rounds[3] = {9e-3, 1e-3, 4e-3};
  cr_assert_float_eq(at_confirm_cost(rounds, 3), 1e-3, 1e-15);
  cr_assert(isinf(at_confirm_cost(rounds, 0)));
  cr_assert(!at_confirm_disagrees(2.9e-3, 1e-3));
  cr_assert(at_confirm_disagrees(3.1e-3, 1e-3));
  cr_assert(!at_confirm_disagrees(1, 0), "no search cost: nothing to disagree with");
  cr_assert(!at_confirm_disagrees(1, INFINITY));
}

/* The confirm record of the trial whose trace is trace. */
static const at_record *confirm_of(const at_log *l, const char *trace) {
  for (int i = l->n - 1; i >= 0; i--)
    if (l->rec[i].confirm && !strcmp(l->rec[i].trace, trace))
      return &l->rec[i];
  cr_assert_fail("no confirm record of\n%s", trace);
  return NULL;
}

/* Tunes 8 trials of a 64^3 matmul without a confirm pass, then resumes with a confirm pass of
   all 8 in 3 rounds while the best trial's runs at the calls in noisy[0..nnoisy) of that pass are
   stretched 1000x (a burst of load). Returns the log; *best the search's best trial. */
static void noisy_confirm(const char *log, const int *noisy, int nnoisy, at_log *l, int *best) {
  te_tensor *out = tu_op(ctx, "matmul M=64 N=64 K=64 dtype=f32");
  te_tune_options o = tu_quick(log, 8, 3);
  o.confirm = -1;
  /* random finalists, whose costs spread: the derived points (seed_points.c) and their
     neighbours would make 8 kernels within the machine's noise of each other, and the ranking
     this checks is of the noisy one among clearly different ones */
  setenv("TE_TUNE_NO_SEEDS", "1", 1);
  te_status st0 = tune(ctx, out, &o);
  unsetenv("TE_TUNE_NO_SEEDS");
  cr_assert_eq(st0, TE_OK, "%s", te_last_error(ctx));
  tu_read(log, l);
  cr_assert_eq(l->n, 8);
  *best = 0;
  for (int i = 1; i < 8; i++)
    *best = at_record_cost(&l->rec[i]) < at_record_cost(&l->rec[*best]) ? i : *best;
  /* rounds of the 8 finalists, cheapest first, rotated: finalist 0 runs at calls 0, 15, 22 */
  o = tu_quick(log, 8, 3);
  o.resume = 1;
  o.confirm = 8;
  o.confirm_rounds = 3;
  at_test_noise(nnoisy, noisy, 1000);
  te_status st = tune(ctx, out, &o);
  at_test_noise(0, NULL, 1);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(ctx));
  at_log_free(l);
  tu_read(log, l);
  cr_assert_eq(l->n, 16);
}

/* Two of the best schedule's three confirm rounds stretched 1000x: the pooled median of its
   runs is the noise (what ranked it by before), its confirmed cost is the clean round's, and
   the ranking keeps it near the top rather than last. */
Test(tune_run, confirm_ranking_survives_noisy_rounds) {
  at_log l;
  int best;
  noisy_confirm(tu_path("log.jsonl"), (const int[]){0, 15}, 2, &l, &best);
  const at_record *c = confirm_of(&l, l.rec[best].trace);
  double search = at_record_cost(&l.rec[best]);
  cr_assert_eq(c->nround_costs, 3);
  cr_assert(!c->reconfirmed);
  cr_assert_gt(at_median(c->costs, c->ncosts), 20 * search, "the noise is in the runs");
  cr_assert_lt(at_record_cost(c), 5 * search, "confirmed %g, search %g", at_record_cost(c), search);
  cr_assert_float_eq(c->search_cost_s, search, 1e-15);
  int worse = 0; /* finalists the noisy one still beats */
  for (int i = 8; i < 16; i++)
    worse += at_record_cost(&l.rec[i]) > at_record_cost(c);
  cr_assert_geq(worse, 4, "the best of the search fell to rank %d of 8", 8 - worse);
  at_log_free(&l);
}

/* All three rounds stretched: its confirmed cost disagrees with the search's, so every finalist
   is measured in 3 rounds more, which give the clean cost. */
Test(tune_run, confirm_reconfirms_a_disagreeing_finalist) {
  at_log l;
  int best;
  noisy_confirm(tu_path("log.jsonl"), (const int[]){0, 15, 22}, 3, &l, &best);
  const at_record *c = confirm_of(&l, l.rec[best].trace);
  double search = at_record_cost(&l.rec[best]);
  cr_assert(c->reconfirmed);
  cr_assert_eq(c->nround_costs, 6);
  for (int r = 0; r < 3; r++)
    cr_assert_gt(c->round_costs[r], 20 * search, "round %d is the noise", r);
  cr_assert_lt(at_record_cost(c), 5 * search, "confirmed %g, search %g", at_record_cost(c), search);
  for (int i = 8; i < 16; i++) /* every finalist ran the extra rounds beside it */
    cr_assert_eq(l.rec[i].nround_costs, 6, "finalist %d", i - 8);
  at_log_free(&l);
}
