/* test_tune_knobs.c — schedule templates inside the tuner: the first run registers the knobs as
 * the one sketch "user"; sampled, mutated (one knob redrawn) and crossed (knob by knob)
 * candidates stay valid and apply; the log's "name=value" params round-trip and bad ones are
 * refused; a template whose set of knobs depends on knob values fails for the candidates that
 * show it; proposals depend only on the seed; a resumed run continues without repeating points.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

TestSuite(tune_knobs, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

#define TRY(x)                                                                                     \
  do {                                                                                             \
    te_status st_ = (x);                                                                           \
    if (st_ != TE_OK)                                                                              \
      return st_;                                                                                  \
  } while (0)

static const int64_t B_VALS[] = {2, 5, 7}, C_VALS[] = {4, 8};

/* matmul (stage "matmul"): a choice a of 3 (unroll ii or not, or parallel io), an int b (the j
   factor), a split c of i, a reorder d of two orders. */
static te_status four_knobs(te_schedule *s, te_knobs *k, void *user) {
  (void)user;
  te_stage *st = te_tune_stage(s, "matmul");
  if (!st)
    return TE_ERR_NOT_FOUND;
  int a;
  int64_t b;
  te_iter *io, *ii, *jo, *ji, *kk = te_reduce_iter(st, 0);
  TRY(te_knob_choice(k, "a", 3, &a));
  TRY(te_knob_int(k, "b", 3, B_VALS, &b));
  TRY(te_knob_split(k, st, te_axis(st, 0), "c", 2, C_VALS, &io, &ii));
  TRY(te_split(st, te_axis(st, 1), b, &jo, &ji));
  te_iter *orders[] = {io, jo, kk, ii, ji, io, jo, ii, kk, ji};
  TRY(te_knob_reorder(k, st, "d", 2, 5, orders));
  if (a == 1)
    TRY(te_unroll(st, ii));
  if (a == 2)
    TRY(te_parallel(st, io));
  return TE_OK;
}

static at_workload wl_make(void) {
  te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=16 dtype=f32");
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &out, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  return wl;
}

static void task_of(at_workload *wl, te_tune_template_fn fn, at_task *t) {
  cr_assert_eq(at_task_from_template(wl, fn, NULL, t), TE_OK, "%s", te_last_error(ctx));
}

Test(tune_knobs, first_run_registers_the_knobs) {
  at_workload wl = wl_make();
  at_task t;
  task_of(&wl, four_knobs, &t);
  cr_assert_eq(t.nsketch, 1);
  cr_assert_eq(t.sketch[0].kind, AT_SK_USER);
  cr_assert_str_eq(t.sketch[0].name, "user");
  cr_assert_eq(t.sketch[0].nknob, 4);
  cr_assert_eq(t.sketch[0].nvals, 4);
  const char *names[] = {"a", "b", "c", "d"};
  const at_uknob_kind kinds[] = {AT_UK_CHOICE, AT_UK_INT, AT_UK_SPLIT, AT_UK_REORDER};
  const int counts[] = {3, 3, 2, 2};
  for (int i = 0; i < 4; i++) {
    cr_assert_str_eq(t.uknob[i].name, names[i]);
    cr_assert_eq(t.uknob[i].kind, kinds[i]);
    cr_assert_eq(t.uknob[i].n, counts[i]);
    cr_assert_eq(t.sketch[0].knob[i].kind, AT_KNOB_CHOICE);
    cr_assert_eq(t.sketch[0].knob[i].nchoices, counts[i]);
  }
  cr_assert_eq(t.uknob[1].vals[2], 7);
  cr_assert_eq(t.uknob[3].width, 5);
}

static int differing(const at_cand *a, const at_cand *b) {
  int n = 0;
  for (int i = 0; i < a->nvals; i++)
    n += a->v[i] != b->v[i];
  return n;
}

Test(tune_knobs, sample_mutate_crossover_apply) {
  at_workload wl = wl_make();
  at_task t;
  task_of(&wl, four_knobs, &t);
  at_rng rng;
  at_rng_seed(&rng, 3);
  bool seen[3] = {0};
  for (int n = 0; n < 40; n++) {
    at_cand a, b, m, x;
    at_cand_sample(&t, 0, &rng, &a);
    at_cand_sample(&t, 0, &rng, &b);
    at_cand_mutate(&t, &a, &rng, &m);
    at_cand_crossover(&t, &a, &b, &rng, &x);
    seen[a.v[0]] = true;
    cr_assert_eq(differing(&a, &m), 1, "a mutation redraws one knob");
    for (int i = 0; i < x.nvals; i++)
      cr_assert(x.v[i] == a.v[i] || x.v[i] == b.v[i], "crossover knob %d", i);
    const at_cand *all[] = {&a, &m, &x};
    for (int i = 0; i < 3; i++) {
      cr_assert(at_cand_valid(&t, all[i]));
      te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
      cr_assert_eq(at_cand_apply(&t, all[i], s), TE_OK, "%s", te_last_error(ctx));
      char *ir = te_lower_text(s, wl.nargs, wl.args, 0, NULL);
      cr_assert_not_null(ir, "%s", te_last_error(ctx));
      te_free(ir);
      char *p = at_cand_params_str(&t, all[i]), *tr = te_schedule_trace(s);
      char want[32];
      snprintf(want, sizeof want, "split matmul i %lld\n", (long long)C_VALS[all[i]->v[2]]);
      cr_assert(strstr(tr, want), "%s: %s", p, tr);
      at_cand back;
      cr_assert(at_cand_from_params(&t, 0, p, &back), "%s", p);
      cr_assert_eq(differing(all[i], &back), 0, "%s", p);
      free(p);
      te_free(tr);
    }
  }
  cr_assert(seen[0] && seen[1] && seen[2], "sampling reaches every choice");
}

Test(tune_knobs, params_text) {
  at_workload wl = wl_make();
  at_task t;
  task_of(&wl, four_knobs, &t);
  at_cand c = {.sketch = 0, .nvals = 4, .v = {2, 2, 1, 1}};
  cr_assert(at_cand_valid(&t, &c));
  char *p = at_cand_params_str(&t, &c);
  cr_assert_str_eq(p, "a=2 b=7 c=8 d=1"); /* values of value knobs, indices of the others */
  free(p);
  at_cand back;
  cr_assert(at_cand_from_params(&t, 0, "d=1 c=8 b=7 a=2", &back), "any order");
  cr_assert_eq(differing(&c, &back), 0);
  const char *bad[] = {
      "a=3 b=7 c=8 d=1",     "b=7 c=8 d=1",     "a=0 b=6 c=8 d=1", "a=0 b=2 c=8 d=1 x=1",
      "a=0 a=0 b=2 c=8 d=1", "a=0 b=2 c=8 d=x", "0 2 1 1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert(!at_cand_from_params(&t, 0, bad[i], &back), "accepted '%s'", bad[i]);
}

/* Knob b exists only when a is 1. */
static te_status b_when_a(te_schedule *s, te_knobs *k, void *user) {
  (void)s, (void)user;
  int a, b;
  TRY(te_knob_choice(k, "a", 2, &a));
  if (a == 1)
    TRY(te_knob_choice(k, "b", 2, &b));
  return TE_OK;
}

/* Knob b exists only when a is 0. */
static te_status b_unless_a(te_schedule *s, te_knobs *k, void *user) {
  (void)s, (void)user;
  int a, b;
  TRY(te_knob_choice(k, "a", 2, &a));
  if (a == 0)
    TRY(te_knob_choice(k, "b", 2, &b));
  return TE_OK;
}

/* Knob b's candidates depend on a. */
static te_status b_count_of_a(te_schedule *s, te_knobs *k, void *user) {
  (void)s, (void)user;
  int a, b;
  TRY(te_knob_choice(k, "a", 2, &a));
  TRY(te_knob_choice(k, "b", 2 + a, &b));
  return TE_OK;
}

static void expect_dependency(te_tune_template_fn fn, int nknob, const char *msg) {
  at_workload wl = wl_make();
  at_task t;
  task_of(&wl, fn, &t);
  cr_assert_eq(t.sketch[0].nknob, nknob);
  at_cand c = {.sketch = 0, .nvals = nknob};
  c.v[0] = 1;
  te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_ERR_INVALID_ARG);
  const char *e = te_last_error(ctx);
  cr_assert(strstr(e, "knob 'b'") && strstr(e, msg) && strstr(e, "must not depend on knob values"),
            "%s", e);
  te_clear_error(ctx);
  c.v[0] = 0; /* the first run's branch still applies */
  s = te_schedule_new(ctx, wl.nout, wl.outs);
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_OK, "%s", te_last_error(ctx));
}

Test(tune_knobs, knob_made_only_for_some_values) {
  expect_dependency(b_when_a, 1, "was not made by the template's first run");
}

Test(tune_knobs, knob_skipped_for_some_values) {
  expect_dependency(b_unless_a, 2, "was not used by this run");
}

Test(tune_knobs, knob_candidates_depend_on_values) {
  expect_dependency(b_count_of_a, 2, "differs from the template's first run");
}

/* A knob error the template ignores still fails the run. */
static te_status ignores_errors(te_schedule *s, te_knobs *k, void *user) {
  (void)s, (void)user;
  int a = 0;
  te_knob_choice(k, "a", 0, &a);
  return TE_OK;
}

Test(tune_knobs, ignored_knob_error_fails) {
  at_workload wl = wl_make();
  at_task t;
  cr_assert_eq(at_task_from_template(&wl, ignores_errors, NULL, &t), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "nchoices must be in [1, 64] (got 0)"), "%s",
            te_last_error(ctx));
}

static int propose(uint64_t seed, char **traces, int n) {
  at_workload wl = wl_make();
  at_task t;
  task_of(&wl, four_knobs, &t);
  at_search_opts o = {seed, 16, 1, 0.15, true, false};
  at_search *s = at_search_new(&t, &o);
  at_proposal ps[16];
  int got = at_search_propose(s, &wl, tu_target(ctx), n, ps);
  for (int i = 0; i < got; i++) {
    traces[i] = ps[i].trace;
    cr_assert_eq(ps[i].cand.sketch, 0);
  }
  at_search_free(s);
  return got;
}

Test(tune_knobs, same_seed_same_proposals) {
  char *a[16], *b[16], *c[16];
  int na = propose(7, a, 10), nb = propose(7, b, 10), nc = propose(8, c, 10);
  cr_assert_eq(na, 10);
  cr_assert_eq(nb, 10);
  int same = 0;
  for (int i = 0; i < na; i++) {
    cr_assert_str_eq(a[i], b[i], "proposal %d differs", i);
    for (int j = 0; j < i; j++)
      cr_assert_str_neq(a[i], a[j], "proposal %d repeats %d", i, j);
    same += i < nc && strcmp(a[i], c[i]) == 0;
  }
  cr_assert_lt(same, na, "another seed gave the same proposals");
  for (int i = 0; i < na; i++)
    free(a[i]), free(b[i]);
  for (int i = 0; i < nc; i++)
    free(c[i]);
}

/* A resumed template run reads the logged points back (params), measures only new ones. */
Test(tune_knobs, resume_continues_without_repeats) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=16 dtype=f32");
  te_tune_options o = tu_quick(log, 4, 2);
  o.template_fn = four_knobs;
  cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_OK, "%s", te_last_error(ctx));
  o.trials = 9;
  o.resume = 1;
  te_tune_summary sum;
  o.summary = &sum;
  cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 5);
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 9);
  at_workload wl = wl_make();
  at_task t;
  task_of(&wl, four_knobs, &t);
  for (int i = 0; i < l.n; i++) {
    cr_assert_str_eq(l.rec[i].sketch, "user");
    at_cand c;
    cr_assert(at_cand_from_params(&t, 0, l.rec[i].params, &c), "%s", l.rec[i].params);
    for (int j = 0; j < i; j++)
      cr_assert_str_neq(l.rec[i].trace, l.rec[j].trace, "records %d and %d", j, i);
  }
  at_log_free(&l);
}

/* A template without knobs is one point: measured once, then the search has nothing new. */
static te_status no_knobs(te_schedule *s, te_knobs *k, void *user) {
  (void)k, (void)user;
  te_stage *st = te_tune_stage(s, "matmul");
  return st ? te_parallel(st, te_axis(st, 0)) : TE_ERR_NOT_FOUND;
}

Test(tune_knobs, template_without_knobs) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=16 N=16 K=16 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = tu_quick(log, 4, 1);
  o.template_fn = no_knobs;
  o.summary = &sum;
  cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 1);
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 1);
  cr_assert_str_eq(l.rec[0].sketch, "user");
  cr_assert_str_eq(l.rec[0].params, "");
  cr_assert_str_eq(l.rec[0].trace, "parallel matmul i\n");
  at_log_free(&l);
}
