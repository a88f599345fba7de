/* cmd_tune.c — `te-tune tune`: options to te_tune_options, a progress display, a summary.
 *
 * On a terminal the progress is one bar redrawn in place on stderr (trials done/total, best
 * GFLOP/s, or GOP/s for a workload with integer arithmetic, elapsed, ETA); otherwise one plain line
 * per trial on stdout, so logs of CI runs stay readable.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void help(void) {
  printf("usage: te-tune tune WORKLOAD [options]\n"
         "       te-tune tune --plugin LIB.so [--plugin-symbol NAME] [options]\n"
         "\n"
         "Searches schedules for WORKLOAD on this machine and appends one JSON line per measured\n"
         "candidate to the log (docs/tuning-log.md). WORKLOAD is an operator with its parameters\n"
         "(below; --dtype sets the element type) or a workload text in one argument; a plugin is\n"
         "a shared library whose function (default " TE_TUNE_PLUGIN_SYMBOL ", see te/tune.h)\n"
         "builds the computation through the C API; when it also exports a schedule template\n"
         "(" TE_TUNE_TEMPLATE_SYMBOL "), the template's knobs are the search space.\n"
         "\n"
         "options:\n"
         "  --dtype T          element type: f32 (default), f64, f16, bf16, i8, i16, i32, i64, u8\n"
         "  --trials N         candidates to measure in all (default 64; resumed ones count)\n"
         "  --time-budget S    stop after S seconds\n"
         "  --early-stop N     stop after N trials without a better cost\n"
         "  --jobs N           compile with N threads (default 1)\n"
         "  --log F            the tuning log (default " CLI_DEFAULT_LOG ")\n"
         "  --resume           continue from the log's records of this workload and target\n"
         "  --seed S           random seed (default 0): same seed, same candidates\n"
         "  --target T         target string (default \"" CLI_DEFAULT_TARGET "\")\n"
         "  --batch N          candidates per round (default 16)\n"
         "  --population N     evolutionary search population (default 128)\n"
         "  --generations N    generations per round (default 3)\n"
         "  --epsilon X        fraction of random candidates per round (default 0.15)\n"
         "  --no-model         random search, no cost model\n"
         "  --min-repeat-s S   repeat each run until the runs add up to S seconds (default 0.1)\n"
         "  --max-repeats N    at most N timed runs (default 100, at most 256)\n"
         "  --timeout S        kill a candidate's run after S seconds (default 10)\n"
         "  --threads N        threads of parallel loops while measuring (default: te's)\n"
         "  --check N          compare the first N candidates of each sketch with the default\n"
         "                     schedule's results (default 2; 0 never)\n"
         "  --confirm N        after the search, measure the log's best N schedules again, side\n"
         "                     by side, one record each (default 4; 0 never); the best of them\n"
         "                     is the log's best, so a lucky minute does not pick it\n"
         "  --confirm-rounds N rounds of the confirm pass, alternating the schedules (default 3)\n"
         "  --transfer-logs D  train the cost model first on the records of other workloads\n"
         "                     (same target) in the logs of directory D (*.jsonl) or log D\n"
         "  --flush-cache      evict the caches before each timed run (cold-cache costs)\n"
         "  --max-statements N a candidate whose lowered body has more than N statements after\n"
         "                     unrolling is a failed trial, never compiled: LLVM would take\n"
         "                     minutes on it, and a compile thread cannot be stopped (default\n"
         "                     %d; docs/tuning-measurement.md)\n"
         "  --clock C          cpu (default): rank by each run's wall time less its threads'\n"
         "                     waits for a core (/proc schedstat), so other processes' load\n"
         "                     does not count; wall: by the wall time (a quiet machine)\n"
         "  --quiet            no progress display\n"
         "  --mpi              run under mpirun (-n 2 or more): rank 0 searches and writes the\n"
         "                     log, the other ranks build and measure the candidates\n"
         "  --bucket n=V1,V2,.. shape buckets: WORKLOAD (a text) has the symbolic size n; tune\n"
         "                     it at each value (--trials each), then record the dispatch\n"
         "                     among their best schedules (n == V1, n <= V1, ..., the largest\n"
         "                     bucket's above) that te_apply_best builds on the symbolic\n"
         "                     schedule (docs/tuning-buckets.md)\n"
         "\n"
         "operators:\n",
         TE_TUNE_MAX_STATEMENTS);
  at_op_spec_help(stdout);
  printf("\nexit status: 0 done (even if candidates failed: they are error records), 1 tuning\n"
         "could not run, 2 usage error, 4 the log cannot be written\n");
}

static void fmt_time(double s, char *buf, size_t size) {
  if (s < 0) {
    snprintf(buf, size, "--:--");
    return;
  }
  long t = (long)(s + 0.5);
  if (t >= 3600)
    snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

static void on_progress(const te_tune_progress *p, void *user) {
  cli_progress *pr = user;
  if (pr->quiet)
    return;
  char el[32], eta[32];
  const char *unit = pr->integer ? "GOP/s" : "GFLOP/s";
  double best = pr->integer ? p->best_gops : p->best_gflops;
  double last = pr->integer ? p->last_gops : p->last_gflops;
  fmt_time(p->elapsed_s, el, sizeof el);
  fmt_time(p->eta_s, eta, sizeof eta);
  if (pr->tty) {
    int width = 24, fill = p->trials_total ? width * p->trials_done / p->trials_total : 0;
    char bar[64];
    for (int i = 0; i < width; i++)
      bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %d/%d  best %.2f %s  elapsed %s  ETA %s \033[K", bar, p->trials_done,
            p->trials_total, best, unit, el, eta);
    fflush(stderr);
    return;
  }
  if (p->last_status == TE_OK)
    printf("trial %d/%d: %.2f %s (best %.2f) elapsed %s eta %s\n", p->trials_done, p->trials_total,
           last, unit, best, el, eta);
  else
    printf("trial %d/%d: error %s: %.160s (best %.2f) elapsed %s\n", p->trials_done,
           p->trials_total, te_status_str(p->last_status), p->last_error, best, el);
  fflush(stdout);
}

/* Numeric options: name, minimum, and where the value goes. */
static bool num_opt(int argc, char **argv, int *i, te_tune_options *o, bool *bad) {
  struct {
    const char *name;
    int *ip;
    double *dp;
  } t[] = {{"--trials", &o->trials, NULL},
           {"--early-stop", &o->early_stop, NULL},
           {"--jobs", &o->jobs, NULL},
           {"--batch", &o->batch, NULL},
           {"--population", &o->population, NULL},
           {"--generations", &o->generations, NULL},
           {"--max-repeats", &o->max_repeats, NULL},
           {"--threads", &o->threads, NULL},
           {"--check", &o->check, NULL},
           {"--confirm", &o->confirm, NULL},
           {"--confirm-rounds", &o->confirm_rounds, NULL},
           {"--max-statements", &o->max_statements, NULL},
           {"--time-budget", NULL, &o->time_budget_s},
           {"--min-repeat-s", NULL, &o->min_repeat_s},
           {"--timeout", NULL, &o->timeout_s},
           {"--epsilon", NULL, &o->epsilon}};
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    const char *v;
    if (!cli_opt(argc, argv, i, t[k].name, &v, bad))
      continue;
    long long n;
    if (*bad)
      return true;
    if (t[k].ip && cli_int(v, 0, &n) && n <= 1000000000)
      *t[k].ip = (int)n;
    else if (!t[k].dp || !cli_double(v, t[k].dp)) {
      fprintf(stderr, "te-tune: %s: bad value '%s'\n", t[k].name, v);
      *bad = true;
    }
    return true;
  }
  return false;
}

int cli_tune_run(te_tune_options *o, const char *target, cli_workload *w, cli_progress *pr,
                 int mpi_rank, int mpi_size) {
  te_target *t = te_target_parse(w->ctx, target);
  if (!t) {
    if (mpi_rank == 0)
      fprintf(stderr, "te-tune: bad target '%s': %s\n", target, te_last_error(w->ctx));
    return CLI_USAGE;
  }
  if (mpi_rank > 0)
    return cli_mpi_measure(w->ctx, w->wl.nout, w->wl.outs, t, o);
  if (!pr->quiet) { /* the target in short: the log records it whole (te-tune show --verbose) */
    printf("tuning %s for %s; clock %s; log %s\n", w->is_op ? w->desc : "the workload",
           te_target_short_str(t), at_clock_name(o->clock), o->log_path);
    fflush(stdout);
  }
  te_tune_summary sum;
  pr->integer = at_workload_int_ops(&w->wl) > 0;
  o->summary = &sum;
  o->description = w->is_op ? w->desc : NULL;
  o->progress = on_progress;
  o->progress_user = pr;
  o->template_fn = w->tmpl;
  at_remote remote = cli_mpi_remote(w->ctx, mpi_size);
  te_status st = mpi_size > 1 ? at_tune_remote(w->ctx, w->wl.nout, w->wl.outs, t, o, &remote)
                              : te_tune(w->ctx, w->wl.nout, w->wl.outs, t, o);
  if (pr->tty && !pr->quiet)
    fputc('\n', stderr);
  if (st != TE_OK) {
    fprintf(stderr, "te-tune: %s\n", te_last_error(w->ctx));
    return st == TE_ERR_IO ? CLI_IO : st == TE_ERR_INVALID_ARG ? CLI_USAGE : CLI_FAIL;
  }
  char confirmed[48] = "", warm[96] = "";
  if (sum.confirmed)
    snprintf(confirmed, sizeof confirmed, "; best %d measured again", sum.confirmed);
  if (o->transfer_logs)
    snprintf(warm, sizeof warm, "; model warmed by %d records of %d other workloads",
             sum.transfer_records, sum.transfer_workloads);
  bool integer = sum.int_ops > 0;
  printf("%s: %d trials (%d measured now, %d failed%s%s); best %.2f %s (%.4g ms); key %s; "
         "log %s\n",
         w->is_op ? w->desc : "workload", sum.trials_done, sum.measured, sum.errors, confirmed,
         warm, integer ? sum.best_gops : sum.best_gflops, integer ? "GOP/s" : "GFLOP/s",
         isfinite(sum.best_cost_s) ? sum.best_cost_s * 1e3 : 0.0, sum.key, o->log_path);
  return CLI_OK;
}

int cmd_tune(int argc, char **argv) {
  te_tune_options o = {0};
  o.log_path = CLI_DEFAULT_LOG;
  o.check = o.confirm = -2; /* not given */
  const char *target = CLI_DEFAULT_TARGET, *dtype = "f32", *v, *plugin = NULL, *symbol = NULL;
  const char *bucket = NULL;
  char *words[32];
  int nw = 0;
  bool bad = false, mpi = false;
  cli_progress pr = {isatty(STDERR_FILENO) != 0, false, false};
  for (int i = 1; i < argc && !bad; i++) {
    long long n;
    if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
      help();
      return CLI_OK;
    } else if (cli_flag(argv, i, "--resume")) {
      o.resume = 1;
    } else if (cli_flag(argv, i, "--no-model")) {
      o.no_model = 1;
    } else if (cli_flag(argv, i, "--quiet")) {
      pr.quiet = true;
    } else if (cli_flag(argv, i, "--flush-cache")) {
      o.flush_cache = 1;
    } else if (cli_flag(argv, i, "--mpi")) {
      mpi = true;
    } else if (num_opt(argc, argv, &i, &o, &bad) ||
               cli_clock_opt(argc, argv, &i, "te-tune tune", &o.clock, &bad)) {
    } else if (cli_opt(argc, argv, &i, "--log", &o.log_path, &bad) ||
               cli_opt(argc, argv, &i, "--target", &target, &bad) ||
               cli_opt(argc, argv, &i, "--dtype", &dtype, &bad) ||
               cli_opt(argc, argv, &i, "--plugin", &plugin, &bad) ||
               cli_opt(argc, argv, &i, "--transfer-logs", &o.transfer_logs, &bad) ||
               cli_opt(argc, argv, &i, "--plugin-symbol", &symbol, &bad)) {
    } else if (cli_opt(argc, argv, &i, "--bucket", &v, &bad)) {
      if (bucket && !bad)
        fprintf(stderr, "te-tune tune: --bucket is given twice (one symbolic size is tuned in "
                        "buckets at a time)\n"),
            bad = true;
      bucket = v;
    } else if (cli_opt(argc, argv, &i, "--seed", &v, &bad)) {
      if (!bad && !cli_int(v, 0, &n))
        fprintf(stderr, "te-tune: --seed: bad value '%s'\n", v), bad = true;
      o.seed = (uint64_t)n;
    } else if (argv[i][0] == '-' && argv[i][1] == '-') {
      fprintf(stderr, "te-tune tune: unknown option '%s' (see --help)\n", argv[i]);
      bad = true;
    } else if (nw < 32) {
      words[nw++] = argv[i];
    }
  }
  if (!bad && (nw == 0) == (plugin == NULL))
    fprintf(stderr, "te-tune tune: %s (see --help)\n",
            nw ? "a workload or --plugin, not both" : "which workload?"),
        bad = true;
  if (!bad && bucket && (plugin || mpi))
    fprintf(stderr, "te-tune tune: --bucket takes a workload text, without %s\n",
            plugin ? "--plugin" : "--mpi"),
        bad = true;
  if (bad)
    return CLI_USAGE;
  o.check = o.check == -2 ? 0 : o.check == 0 ? -1 : o.check;         /* --check 0: never */
  o.confirm = o.confirm == -2 ? 0 : o.confirm == 0 ? -1 : o.confirm; /* --confirm 0: never */
  if (bucket)
    return cli_tune_buckets(&o, target, nw, words, dtype, bucket, &pr);
  int rank = 0, size = 1;
  if (mpi && (bad = !cli_mpi_available()))
    fprintf(stderr, "te-tune tune: --mpi: this te-tune was built without MPI (scripts/setup.sh "
                    "installs Open MPI; then build again)\n");
  if (mpi && !bad && cli_mpi_init(&rank, &size) != CLI_OK)
    return CLI_FAIL;
  if (mpi && !bad && size < 2) {
    fprintf(stderr, "te-tune tune: --mpi needs 2 ranks or more (rank 0 searches, the others "
                    "measure): mpirun -n 3 te-tune tune ... --mpi\n");
    cli_mpi_finalize();
    return CLI_USAGE;
  }
  if (bad)
    return CLI_USAGE;
  cli_workload w;
  int rc = plugin ? cli_workload_from_plugin(plugin, symbol, &w)
                  : cli_workload_from_words(nw, words, dtype, &w);
  if (rc == CLI_OK)
    rc = cli_tune_run(&o, target, &w, &pr, rank, size);
  if (rank == 0 && size > 1)
    cli_mpi_stop(size);
  cli_workload_free(&w);
  if (mpi)
    cli_mpi_finalize();
  return rc;
}
