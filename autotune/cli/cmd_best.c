/* cmd_best.c — `te-tune best` (the best record per workload and target) and `te-tune show`
 * (one workload's best schedule: its record and trace, --as-c a C program, --ir the loop IR).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---------------------------------------------------------------- best */

static void best_help(void) {
  printf(
      "usage: te-tune best [--log F] [--target T] [WORKLOAD | --key K]\n"
      "\n"
      "Lists, for each workload and target in the log (default " CLI_DEFAULT_LOG "), its best\n"
      "record (after a confirm pass, the pass's best: docs/tuning-log.md): its rate (GFLOP/s, or\n"
      "GOP/s for a workload with integer arithmetic), median time, trials, sketch. With\n"
      "--target (a target string such as\n"
      "\"" CLI_DEFAULT_TARGET "\") only that target; with a workload (as `te-tune tune` takes\n"
      "it) or --key only that workload.\n"
      "\n"
      "exit status: 0 listed, 2 usage error, 3 no successful record, 4 the log cannot be read\n");
}

typedef struct group {
  const char *key, *target;
  int trials, best;
} group;

static int group_records(const at_log *log, group *g, int cap) {
  int n = 0;
  for (int i = 0; i < log->n; i++) {
    const at_record *r = &log->rec[i];
    int k = 0;
    while (k < n && (strcmp(g[k].key, r->key) || strcmp(g[k].target, r->target)))
      k++;
    if (k == n) {
      if (n == cap)
        continue;
      g[n++] = (group){r->key, r->target, 0, -1};
    }
    g[k].trials += !r->confirm;
  }
  for (int k = 0; k < n; k++)
    g[k].best = at_log_best(log, g[k].key, g[k].target);
  return n;
}

static const char *desc_of(const at_record *r) {
  if (r->wl_desc)
    return r->wl_desc;
  static char buf[64];
  const char *t = r->wl_text ? r->wl_text : "";
  snprintf(buf, sizeof buf, "%.*s", (int)strcspn(t, "\n"), t);
  return buf;
}

int cmd_best(int argc, char **argv) {
  cli_select sel = {CLI_DEFAULT_LOG, NULL, NULL, "f32", 0, {0}};
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h"))
      return best_help(), CLI_OK;
    if (!cli_select_arg(&sel, argc, argv, &i, &bad))
      fprintf(stderr, "te-tune best: unknown option '%s'\n", argv[i]), bad = true;
  }
  if (bad)
    return CLI_USAGE;
  at_log log;
  if (at_log_read(NULL, sel.log, false, stderr, &log) != TE_OK) {
    fprintf(stderr, "te-tune: cannot read the log '%s'\n", sel.log);
    return CLI_IO;
  }
  char tstr[4096] = "", cpu[64];
  cli_workload w = {0};
  int rc = sel.target ? cli_target_str(sel.target, tstr, sizeof tstr) : CLI_OK;
  if (rc == CLI_OK && sel.npos)
    rc = cli_workload_from_words(sel.npos, sel.pos, sel.dtype, &w);
  const char *key = sel.npos ? w.key : sel.key;
  group *g = calloc(1024, sizeof *g);
  int ng = rc == CLI_OK && g ? group_records(&log, g, 1024) : 0, shown = 0;
  for (int k = 0; k < ng; k++) {
    if ((key && strcmp(key, g[k].key)) || (*tstr && strcmp(tstr, g[k].target)) || g[k].best < 0)
      continue;
    const at_record *r = &log.rec[g[k].best];
    if (!shown++)
      printf("%-16s  %-44s  %-12s  %6s  %10s  %-7s  %10s  %s\n", "key", "workload", "cpu", "trials",
             "rate", "unit", "median ms", "sketch");
    printf("%-16s  %-44.44s  %-12s  %6d  %10.2f  %-7s  %10.4g  %s\n", r->key, desc_of(r),
           cli_target_cpu(r->target, cpu, sizeof cpu), g[k].trials, at_record_gops(r),
           at_record_rate_unit(r), at_record_cost(r) * 1e3, r->sketch ? r->sketch : "-");
  }
  if (rc == CLI_OK && !shown) {
    fprintf(stderr, "te-tune: no successful record%s in '%s'\n",
            key || *tstr ? " for that workload and target" : "", sel.log);
    rc = CLI_NOT_FOUND;
  }
  free(g);
  cli_workload_free(&w);
  at_log_free(&log);
  return rc;
}

/* ---------------------------------------------------------------- show */

static void show_help(void) {
  printf(
      "usage: te-tune show [--log F] [--target T] [--as-c | --ir | --verbose] [WORKLOAD | "
      "--key K]\n"
      "\n"
      "Prints the best schedule of a workload for a target (default \"" CLI_DEFAULT_TARGET "\")\n"
      "from the log (default " CLI_DEFAULT_LOG "): its record and its trace. When the log holds\n"
      "one workload it need not be named.\n"
      "  --as-c  a C program that builds the workload with ops.h and applies the schedule as\n"
      "          te_* calls (one per trace step); compile it against te and run it to print\n"
      "          the lowered IR (`--trace`: the trace). Operator workloads only.\n"
      "  --ir    the lowered loop IR of the schedule\n"
      "  --verbose  the target as the log records it, every CPU feature named (otherwise in\n"
      "          short: \"llvm -mcpu=znver5\")\n"
      "\n"
      "exit status: 0 shown, 1 the schedule no longer applies, 2 usage error, 3 no record,\n"
      "             4 the log cannot be read\n");
}

static int show_c(const at_record *r, cli_workload *w, const char *tstr) {
  if (!w->is_op) {
    fprintf(stderr, "te-tune show --as-c: only operator workloads (not texts) are printed as C; "
                    "use te_parse and te_apply_best for this one\n");
    return CLI_FAIL;
  }
  const char *names[8];
  int nnames = 0;
  char *wc = at_op_spec_c(&w->spec, names, &nnames), err[256], comment[1024];
  snprintf(comment, sizeof comment,
           "%s: best schedule from a te-tune log (workload key %s), %.2f %s,\n"
           "median %.4g ms, sketch %s, trial %d, measured %s",
           w->desc, r->key, at_record_gops(r), at_record_rate_unit(r), at_record_cost(r) * 1e3,
           r->sketch ? r->sketch : "-", r->trial, r->timestamp ? r->timestamp : "?");
  char *c = wc ? at_trace_to_c(r->trace, wc, names, nnames, te_tensor_name(w->wl.outs[0]), tstr,
                               comment, err, sizeof err)
               : NULL;
  free(wc);
  if (!c) {
    fprintf(stderr, "te-tune show --as-c: %s\n", wc ? err : "out of memory");
    return CLI_FAIL;
  }
  fputs(c, stdout);
  free(c);
  return CLI_OK;
}

static int show_ir(const at_record *r, cli_workload *w) {
  te_schedule *s = te_schedule_new(w->ctx, w->wl.nout, w->wl.outs);
  char *ir = s && te_schedule_replay(s, r->trace) == TE_OK
                 ? te_lower_text(s, w->wl.nargs, w->wl.args, 0, NULL)
                 : NULL;
  if (!ir) {
    fprintf(stderr, "te-tune show: the schedule does not apply: %s\n", te_last_error(w->ctx));
    return CLI_FAIL;
  }
  fputs(ir, stdout);
  te_free(ir);
  return CLI_OK;
}

int cmd_show(int argc, char **argv) {
  cli_select sel = {CLI_DEFAULT_LOG, NULL, NULL, "f32", 0, {0}};
  bool bad = false, as_c = false, ir = false, verbose = false;
  for (int i = 1; i < argc && !bad; i++) {
    if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h"))
      return show_help(), CLI_OK;
    if (cli_flag(argv, i, "--as-c"))
      as_c = true;
    else if (cli_flag(argv, i, "--verbose"))
      verbose = true;
    else if (cli_flag(argv, i, "--ir"))
      ir = true;
    else if (!cli_select_arg(&sel, argc, argv, &i, &bad))
      fprintf(stderr, "te-tune show: unknown option '%s'\n", argv[i]), bad = true;
  }
  if (bad || (as_c && ir))
    return as_c && ir ? fprintf(stderr, "te-tune show: --as-c or --ir, not both\n"),
           CLI_USAGE  : CLI_USAGE;
  at_log log;
  cli_workload w;
  char tstr[4096], short_target[256];
  int best, rc = cli_find_best(&sel, &log, &w, tstr, sizeof tstr, &best);
  if (rc == CLI_OK) {
    const at_record *r = &log.rec[best];
    if (as_c)
      rc = show_c(r, &w, tstr);
    else if (ir)
      rc = show_ir(r, &w);
    else
      printf("workload  %s (key %s)\ntarget    %s\nbest      %.2f %s, median %.4g ms of %d "
             "runs (%s clock), trial %d%s, sketch %s, %s\ntrace:\n%s",
             r->wl_desc ? r->wl_desc : "(text)", r->key,
             verbose ? r->target : cli_target_short(r->target, short_target, sizeof short_target),
             at_record_gops(r), at_record_rate_unit(r), at_record_cost(r) * 1e3, r->ncosts,
             at_clock_name(r->ncpu_costs ? r->measure.clock : TE_TUNE_CLOCK_WALL), r->trial,
             r->confirm ? " (measured again by the confirm pass)" : "", r->sketch ? r->sketch : "-",
             r->timestamp ? r->timestamp : "", r->trace);
  }
  cli_workload_free(&w);
  at_log_free(&log);
  return rc;
}
