/* cmd_tune_tasks.c — `te-tune tune-tasks TASKS --trials N`: every distinct kernel of a model
 * (a task file, docs/tuning-tasks.md) tuned with one trial budget into one log, the rounds given
 * by the task scheduler (task_sched.h) to the kernel expected to cut the model's latency most.
 *
 * Per task, in order: its hand schedule (the task's hand_trace) is measured once as a record of
 * its own, so the log knows what tuning must beat; the warm-up gives every task one round of
 * --batch trials; then each round goes to at_sched_pick's task until the budget is spent; last,
 * a confirm pass per task measures its best schedules again side by side (the hand schedule
 * among them when it is one of the best), so te_apply_best picks by that ranking. Every round is
 * one te_tune call resuming from the log, so a killed run continues where it was.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autotune/task_sched.h"
#include "cli.h"

static void help(void) {
  printf("usage: te-tune tune-tasks TASKS --trials N [options]\n"
         "\n"
         "Tunes every task of the task file TASKS (a model's distinct kernels, each a workload\n"
         "text with its weight, the calls per model pass: docs/tuning-tasks.md) with one budget\n"
         "of N trials in all, into one log. Each task's hand schedule (hand_trace) is measured\n"
         "first; every task then gets one round of --batch trials in turn; then each round goes\n"
         "to the task whose next trials are expected to cut sum(weight x latency) most (Ansor's\n"
         "gradient-based task scheduler). Prints the allocation: per task its weight, rounds,\n"
         "trials, hand and best latency.\n"
         "\n"
         "options:\n"
         "  --trials N         the search's budget over all tasks (required; the hand-schedule\n"
         "                     baselines, one trial per task, come on top)\n"
         "  --log F            the tuning log (default " CLI_DEFAULT_LOG ")\n"
         "  --batch N          trials per round (default 8)\n"
         "  --target T         target string (default \"" CLI_DEFAULT_TARGET "\")\n"
         "  --seed S           random seed (default 0)\n"
         "  --jobs N           compile with N threads (default 1)\n"
         "  --threads N        threads of parallel loops while measuring (default: te's)\n"
         "  --min-repeat-s S   repeat each run until the runs add up to S seconds (default 0.1)\n"
         "  --max-repeats N    at most N timed runs (default 100)\n"
         "  --timeout S        kill a candidate's run after S seconds (default 10)\n"
         "  --confirm N        at the end, measure each task's best N schedules again side by\n"
         "                     side (default 4; 0 never)\n"
         "  --allocation F     also write the allocation table to F (tab-separated)\n"
         "  --clock C          cpu (default) or wall: how runs are timed (te-tune tune --help)\n"
         "  --flush-cache      evict the caches before each timed run: a model's kernels run\n"
         "                     among other kernels, with their weights out of cache\n"
         "  --no-hand          do not measure the hand schedules: the log's best is then a\n"
         "                     searched schedule, even where the hand one is faster\n"
         "  --quiet            only the allocation table\n"
         "\n"
         "exit status: 0 done (a task that cannot be tuned is reported and left out), 2 usage\n"
         "error (a bad task file, a workload that does not parse), 4 the log or the allocation\n"
         "file cannot be written\n");
}

/* A task as the run keeps it. */
typedef struct run_task {
  const cli_task *def;
  cli_workload w;
  te_target *target;
  int in_log; /* trials of this workload and target in the log */
  double hand_cost;
  at_sched_task s;
  double curve[AT_SCHED_MAX_ROUNDS];
} run_task;

typedef struct run {
  te_tune_options base;
  const char *target, *allocation;
  int trials, batch, confirm;
  bool quiet, no_hand;
  int ntasks;
  run_task *t;
} run;

/* The hand schedule as a template of one candidate: te_tune measures it as any other. */
static te_status hand_template(te_schedule *s, te_knobs *knobs, void *trace) {
  int c;
  te_status st = te_knob_choice(knobs, "hand", 1, &c);
  return st == TE_OK ? te_schedule_replay(s, trace) : st;
}

/* One te_tune call on task t: up to `more` new trials (0: only the confirm pass when confirm
   > 0), resuming from the log. Returns the te_status; sum filled. */
static te_status tune_task(run *r, run_task *t, int more, int confirm, bool hand,
                           te_tune_summary *sum) {
  memset(sum, 0, sizeof *sum);
  sum->best_cost_s = INFINITY;
  te_tune_options o = r->base;
  o.resume = 1;
  o.trials = t->in_log + more;
  o.confirm = confirm > 0 ? confirm : -1;
  o.summary = sum;
  o.description = t->def->name;
  o.template_fn = hand ? hand_template : NULL;
  o.template_user = hand ? t->def->hand_trace : NULL;
  if (o.trials == 0) /* te_tune's 0 means its default; here, nothing to measure or confirm */
    return TE_OK;
  te_status st = te_tune(t->w.ctx, t->w.wl.nout, t->w.wl.outs, t->target, &o);
  if (st == TE_OK)
    t->in_log = sum->trials_done;
  else
    fprintf(stderr, "te-tune: task '%s': %s\n", t->def->name, te_last_error(t->w.ctx));
  return st;
}

/* Builds every task's workload and counts what the log already holds of it. */
static int prepare(run *r) {
  at_log log;
  if (at_log_read(NULL, r->base.log_path, true, stderr, &log) != TE_OK) {
    fprintf(stderr, "te-tune: cannot read the log '%s'\n", r->base.log_path);
    return CLI_IO;
  }
  int rc = CLI_OK;
  for (int i = 0; i < r->ntasks && rc == CLI_OK; i++) {
    run_task *t = &r->t[i];
    char *words[1] = {t->def->workload};
    if ((rc = cli_workload_from_words(1, words, "f32", &t->w)) != CLI_OK) {
      fprintf(stderr, "te-tune: task '%s': its workload does not build\n", t->def->name);
      break;
    }
    if (!(t->target = te_target_parse(t->w.ctx, r->target))) {
      fprintf(stderr, "te-tune: bad target '%s': %s\n", r->target, te_last_error(t->w.ctx));
      rc = CLI_USAGE;
      break;
    }
    const char *tstr = te_target_str(t->target);
    for (int k = 0; k < log.n; k++)
      if (!log.rec[k].confirm && !strcmp(log.rec[k].key, t->w.key) &&
          !strcmp(log.rec[k].target, tstr))
        t->in_log++;
    t->hand_cost = INFINITY;
    t->s = (at_sched_task){t->def->weight,
                           /* an int8 task's multiply-adds count as a float task's */
                           at_workload_flops(&t->w.wl) + at_workload_int_ops(&t->w.wl), -1, false,
                           0, 0, at_log_best_cost(&log, t->w.key, tstr), t->curve};
    for (int k = 0; k < i && t->def->group; k++) /* the group: the first task's index */
      if (r->t[k].def->group && !strcmp(r->t[k].def->group, t->def->group)) {
        t->s.group = k;
        break;
      }
    if (t->def->group && t->s.group < 0)
      t->s.group = i;
  }
  at_log_free(&log);
  return rc;
}

static void print_round(const run *r, int round, const run_task *t, const te_tune_summary *sum) {
  if (r->quiet)
    return;
  double f = 0;
  for (int i = 0; i < r->ntasks; i++)
    f += r->t[i].s.weight * (isfinite(r->t[i].s.best) ? r->t[i].s.best : r->t[i].hand_cost);
  printf("round %d: %s +%d trials (%d failed), best %.4g ms; model estimate %.4g ms%s\n", round,
         t->def->name, sum->measured, sum->errors, t->s.best * 1e3, f * 1e3,
         isfinite(f) ? "" : " (a task has no latency yet)");
  fflush(stdout);
}

/* The hand baselines, then the warm-up and the scheduled rounds until the budget is spent. */
static int search(run *r) {
  te_tune_summary sum;
  for (int i = 0; i < r->ntasks; i++) {
    run_task *t = &r->t[i];
    if (!t->def->hand_trace || r->no_hand)
      continue;
    te_status st = tune_task(r, t, 1, 0, true, &sum);
    if (st == TE_ERR_IO)
      return CLI_IO;
    if (st == TE_OK && sum.measured == 1 && sum.errors == 0)
      t->hand_cost = sum.best_cost_s; /* also the best when the log held nothing better */
    if (st == TE_OK && sum.best_cost_s < t->s.best)
      t->s.best = sum.best_cost_s;
    if (!r->quiet)
      printf("hand schedule of %s: %s\n", t->def->name,
             st != TE_OK    ? "does not run (see above)"
             : sum.measured ? (sum.errors ? "failed (its error is in the log)" : "measured")
                            : "already in the log");
  }
  int spent = 0, round = 0;
  at_sched_task *s = malloc(sizeof *s * (size_t)r->ntasks);
  if (!s)
    return CLI_FAIL;
  while (spent < r->trials) {
    for (int k = 0; k < r->ntasks; k++)
      s[k] = r->t[k].s;
    int i = at_sched_pick(s, r->ntasks, NULL);
    if (i < 0)
      break; /* every task is dead */
    run_task *t = &r->t[i];
    int more = r->batch < r->trials - spent ? r->batch : r->trials - spent;
    te_status st = tune_task(r, t, more, 0, false, &sum);
    if (st == TE_ERR_IO) {
      free(s);
      return CLI_IO;
    }
    if (st != TE_OK) { /* this task cannot be tuned: the others still can */
      t->s.dead = true;
      continue;
    }
    spent += sum.measured;
    at_sched_record(&t->s, sum.measured, sum.best_cost_s, sum.measured == 0);
    print_round(r, ++round, t, &sum);
  }
  free(s);
  return CLI_OK;
}

/* The confirm pass of every task with a working schedule; the final bests. */
static int confirm_all(run *r) {
  if (r->confirm <= 0)
    return CLI_OK;
  for (int i = 0; i < r->ntasks; i++) {
    run_task *t = &r->t[i];
    te_tune_summary sum;
    if (!isfinite(t->s.best))
      continue;
    te_status st = tune_task(r, t, 0, r->confirm, false, &sum);
    if (st == TE_ERR_IO)
      return CLI_IO;
    if (st == TE_OK)
      t->s.best = sum.best_cost_s;
  }
  return CLI_OK;
}

/* The hand schedule's latest cost in the log (its confirm record when there is one). */
static void find_hand_costs(run *r) {
  at_log log;
  if (at_log_read(NULL, r->base.log_path, true, NULL, &log) != TE_OK)
    return;
  for (int i = 0; i < r->ntasks; i++) {
    run_task *t = &r->t[i];
    const char *tstr = te_target_str(t->target);
    for (int k = 0; t->def->hand_trace && k < log.n; k++) {
      const at_record *rec = &log.rec[k];
      if (!strcmp(rec->key, t->w.key) && !strcmp(rec->target, tstr) && rec->trace &&
          !strcmp(rec->trace, t->def->hand_trace))
        t->hand_cost = at_record_cost(rec); /* later records win */
    }
  }
  at_log_free(&log);
}

/* A latency in ms, "-" when unknown. */
static void put_ms(FILE *f, const char *sep, double s) {
  if (isfinite(s))
    fprintf(f, "%s%.4g", sep, s * 1e3);
  else
    fprintf(f, "%s-", sep);
}

static void put_ratio(FILE *f, const char *sep, double a, double b) {
  if (isfinite(a) && isfinite(b) && b > 0)
    fprintf(f, "%s%.3f", sep, a / b);
  else
    fprintf(f, "%s-", sep);
}

/* Per task: weight, rounds, trials, hand and best latency, hand / best, its share of the model's
   estimated latency; then the model's row (sum weight x latency; hand "-" when a task has none). */
static void print_table(FILE *f, const run *r, const char *sep) {
  double hand = 0, best = 0;
  fprintf(f, "task%sweight%srounds%strials%shand_ms%sbest_ms%sspeedup%sshare\n", sep, sep, sep, sep,
          sep, sep, sep);
  for (int i = 0; i < r->ntasks; i++) {
    const run_task *t = &r->t[i];
    hand += t->s.weight * t->hand_cost;
    best += t->s.weight * (isfinite(t->s.best) ? t->s.best : t->hand_cost);
  }
  for (int i = 0; i < r->ntasks; i++) {
    const run_task *t = &r->t[i];
    double b = isfinite(t->s.best) ? t->s.best : t->hand_cost;
    fprintf(f, "%s%s%g%s%d%s%d", t->def->name, sep, t->s.weight, sep, t->s.rounds, sep,
            t->s.trials);
    put_ms(f, sep, t->hand_cost);
    put_ms(f, sep, b);
    put_ratio(f, sep, t->hand_cost, b);
    put_ratio(f, sep, t->s.weight * b, best);
    fputc('\n', f);
  }
  fprintf(f, "model%s%s%s", sep, sep, sep);
  put_ms(f, sep, hand);
  put_ms(f, sep, best);
  put_ratio(f, sep, hand, best);
  fprintf(f, "%s1\n", sep);
}

static int report(const run *r) {
  if (!r->quiet)
    printf("\nallocation (latency = median cost of one call; model = sum weight x latency):\n");
  print_table(stdout, r, "\t");
  if (!r->allocation)
    return CLI_OK;
  FILE *f = fopen(r->allocation, "w");
  if (!f) {
    fprintf(stderr, "te-tune: cannot write '%s'\n", r->allocation);
    return CLI_IO;
  }
  print_table(f, r, "\t");
  return fclose(f) == 0 ? CLI_OK : CLI_IO;
}

/* "--name S" with S a number >= 0 into *out. */
static bool double_opt(int argc, char **argv, int *i, const char *name, double *out, bool *bad) {
  const char *v;
  if (!cli_opt(argc, argv, i, name, &v, bad))
    return false;
  if (!*bad && (!cli_double(v, out) || *out < 0)) {
    fprintf(stderr, "te-tune tune-tasks: %s: bad value '%s'\n", name, v);
    *bad = true;
  }
  return true;
}

static bool parse_args(int argc, char **argv, run *r, const char **tasks) {
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    const char *v;
    long long n;
    if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
      help();
      exit(CLI_OK);
    } else if (cli_flag(argv, i, "--quiet")) {
      r->quiet = true;
    } else if (cli_flag(argv, i, "--no-hand")) {
      r->no_hand = true;
    } else if (cli_flag(argv, i, "--flush-cache")) {
      r->base.flush_cache = 1;
    } else if (cli_clock_opt(argc, argv, &i, "te-tune tune-tasks", &r->base.clock, &bad)) {
    } else if (cli_opt(argc, argv, &i, "--log", &r->base.log_path, &bad) ||
               cli_opt(argc, argv, &i, "--target", &r->target, &bad) ||
               cli_opt(argc, argv, &i, "--allocation", &r->allocation, &bad)) {
    } else if (double_opt(argc, argv, &i, "--min-repeat-s", &r->base.min_repeat_s, &bad) ||
               double_opt(argc, argv, &i, "--timeout", &r->base.timeout_s, &bad)) {
    } else {
      struct {
        const char *name;
        int *p;
      } ints[] = {{"--trials", &r->trials},
                  {"--batch", &r->batch},
                  {"--jobs", &r->base.jobs},
                  {"--threads", &r->base.threads},
                  {"--confirm", &r->confirm},
                  {"--max-repeats", &r->base.max_repeats},
                  {"--seed", NULL}};
      bool matched = false;
      for (size_t k = 0; k < sizeof ints / sizeof ints[0] && !matched && !bad; k++) {
        if (!(matched = cli_opt(argc, argv, &i, ints[k].name, &v, &bad)) || bad)
          continue;
        if (!cli_int(v, 0, &n) || n > 1000000000) {
          fprintf(stderr, "te-tune tune-tasks: %s: bad value '%s'\n", ints[k].name, v);
          bad = true;
        } else if (ints[k].p) {
          *ints[k].p = (int)n;
        } else {
          r->base.seed = (uint64_t)n;
        }
      }
      if (matched || bad)
        continue;
      if (argv[i][0] == '-' && argv[i][1] == '-') {
        fprintf(stderr, "te-tune tune-tasks: unknown option '%s' (see --help)\n", argv[i]);
        bad = true;
      } else if (*tasks) {
        fprintf(stderr, "te-tune tune-tasks: one task file, not '%s' too\n", argv[i]);
        bad = true;
      } else {
        *tasks = argv[i];
      }
    }
  }
  if (!bad && !*tasks)
    fprintf(stderr, "te-tune tune-tasks: which task file? (see --help)\n"), bad = true;
  if (!bad && r->trials <= 0)
    fprintf(stderr, "te-tune tune-tasks: --trials N (> 0) is required\n"), bad = true;
  if (!bad && r->batch <= 0)
    fprintf(stderr, "te-tune tune-tasks: --batch must be > 0\n"), bad = true;
  return !bad;
}

int cmd_tune_tasks(int argc, char **argv) {
  run r = {0};
  r.base.log_path = CLI_DEFAULT_LOG;
  r.target = CLI_DEFAULT_TARGET;
  r.batch = 8;
  r.confirm = 4;
  const char *path = NULL;
  if (!parse_args(argc, argv, &r, &path))
    return CLI_USAGE;
  cli_task *defs;
  int rc = cli_tasks_read(path, &defs, &r.ntasks);
  if (rc != CLI_OK)
    return rc;
  if (!(r.t = calloc((size_t)r.ntasks, sizeof *r.t))) {
    cli_tasks_free(defs, r.ntasks);
    return CLI_FAIL;
  }
  for (int i = 0; i < r.ntasks; i++)
    r.t[i].def = &defs[i];
  if ((rc = prepare(&r)) == CLI_OK && (rc = search(&r)) == CLI_OK &&
      (rc = confirm_all(&r)) == CLI_OK) {
    find_hand_costs(&r);
    rc = report(&r);
  }
  for (int i = 0; i < r.ntasks; i++)
    if (r.t[i].w.ctx)
      cli_workload_free(&r.t[i].w);
  free(r.t);
  cli_tasks_free(defs, r.ntasks);
  return rc;
}
