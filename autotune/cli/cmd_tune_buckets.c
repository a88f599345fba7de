/* cmd_tune_buckets.c — `te-tune tune WORKLOAD --bucket n=16,64,256`: a workload with one
 * symbolic size tuned at each value (a bucket: the workload with n written as the value, tuned
 * as `te-tune tune` tunes any), then the one schedule that dispatches among the buckets' best
 * schedules (te_specialize on n == 16, n <= 16, n == 64, ...; the largest bucket's as the
 * general one) built and compiled once as a check and recorded in the log as its bucket index,
 * which te_apply_best on the symbolic schedule reads (docs/tuning-buckets.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "te/parse.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int cli_bucket_parse(const char *spec, at_buckets *b) {
  memset(b, 0, sizeof *b);
  const char *eq = strchr(spec, '=');
  size_t n = eq ? (size_t)(eq - spec) : 0;
  bool name_ok = n > 0 && n < sizeof b->size;
  for (size_t i = 0; name_ok && i < n; i++)
    name_ok = spec[i] == '_' || (spec[i] >= 'a' && spec[i] <= 'z') ||
              (spec[i] >= 'A' && spec[i] <= 'Z') || (i && spec[i] >= '0' && spec[i] <= '9');
  if (!name_ok) {
    fprintf(stderr,
            "te-tune tune: --bucket '%s': expected SIZE=V1,V2,... (a size of the "
            "workload, e.g. n=16,64,256)\n",
            spec);
    return CLI_USAGE;
  }
  memcpy(b->size, spec, n);
  char *list = strdup(eq + 1);
  if (!list)
    return CLI_FAIL;
  int rc = CLI_OK;
  char *save = NULL;
  for (char *v = strtok_r(list, ",", &save); v && rc == CLI_OK; v = strtok_r(NULL, ",", &save)) {
    long long x;
    if (!cli_int(v, 1, &x)) {
      fprintf(stderr, "te-tune tune: --bucket %s: '%s' is not a size >= 1\n", b->size, v);
      rc = CLI_USAGE;
    } else if (b->n == AT_MAX_BUCKETS) {
      fprintf(stderr, "te-tune tune: --bucket %s: at most %d buckets\n", b->size, AT_MAX_BUCKETS);
      rc = CLI_USAGE;
    } else {
      b->values[b->n++] = x;
    }
  }
  free(list);
  if (rc == CLI_OK && b->n == 0) {
    fprintf(stderr, "te-tune tune: --bucket %s: no values\n", b->size);
    rc = CLI_USAGE;
  }
  qsort(b->values, (size_t)b->n, sizeof b->values[0], cmp_i64);
  for (int i = 1; rc == CLI_OK && i < b->n; i++)
    if (b->values[i] == b->values[i - 1]) {
      fprintf(stderr, "te-tune tune: --bucket %s: %lld is given twice\n", b->size,
              (long long)b->values[i]);
      rc = CLI_USAGE;
    }
  return rc;
}

/* The symbolic workload: parsed in ctx, its canonical text and key. */
typedef struct sym_workload {
  int nout;
  te_tensor **outs;
  char *text;
  char key[17];
} sym_workload;

static int parse_symbolic(te_ctx *ctx, const char *words, const at_buckets *b, sym_workload *w) {
  if (te_parse(ctx, words, &w->nout, &w->outs) != TE_OK) {
    fprintf(stderr,
            "te-tune tune: --bucket needs a workload text with the symbolic size '%s' "
            "(an operator is not one): %s\n",
            b->size, te_last_error(ctx));
    return CLI_USAGE;
  }
  if (!(w->text = te_workload_text(w->nout, w->outs))) {
    fprintf(stderr, "te-tune tune: --bucket: %s\n", te_last_error(ctx));
    return CLI_FAIL;
  }
  at_workload_key(w->text, w->key);
  te_schedule *s = te_schedule_new(ctx, w->nout, w->outs);
  if (!s || !sch_condition_var(s, b->size, "te-tune tune --bucket")) {
    fprintf(stderr, "te-tune tune: %s\n", te_last_error(ctx));
    return CLI_USAGE;
  }
  return CLI_OK;
}

/* The range of sizes bucket i serves in the dispatch, for the summary. */
static void served(const at_buckets *b, int i, char *buf, size_t size) {
  const char *n = b->size;
  if (b->n == 1)
    snprintf(buf, size, "every %s", n);
  else if (i == 0)
    snprintf(buf, size, "%s <= %lld", n, (long long)b->values[0]);
  else if (i + 1 < b->n)
    snprintf(buf, size, "%lld < %s <= %lld", (long long)b->values[i - 1], n,
             (long long)b->values[i]);
  else
    snprintf(buf, size, "%s > %lld", n, (long long)b->values[i - 1]);
}

/* After the buckets are tuned: the dispatch built from the log, compiled, its index written. */
static int write_dispatch(te_ctx *ctx, const te_tune_options *o, te_target *t, sym_workload *w,
                          at_buckets *b) {
  const char *tstr = te_target_str(t);
  at_log log;
  if (at_log_read(ctx, o->log_path, false, stderr, &log) != TE_OK) {
    fprintf(stderr, "te-tune: %s\n", te_last_error(ctx));
    return CLI_IO;
  }
  int rc = CLI_OK;
  te_schedule *s = te_schedule_new(ctx, w->nout, w->outs);
  int nin = 0, nparam = 0;
  te_tensor **ins = NULL;
  te_expr **params = NULL;
  te_module *m = NULL;
  char *trace = NULL;
  if (!s || at_buckets_dispatch(s, &log, tstr, b) != TE_OK || !(trace = te_schedule_trace(s)) ||
      te_workload_inputs(w->nout, w->outs, &nin, &ins, &nparam, &params) != TE_OK) {
    fprintf(stderr, "te-tune: the dispatch among the buckets: %s\n", te_last_error(ctx));
    rc = CLI_FAIL;
  }
  te_tensor *args[64];
  if (rc == CLI_OK && nin + w->nout > 64) {
    fprintf(stderr, "te-tune: the dispatch: more than 64 tensors\n");
    rc = CLI_FAIL;
  }
  if (rc == CLI_OK) {
    memcpy(args, ins, sizeof(te_tensor *) * (size_t)nin);
    memcpy(args + nin, w->outs, sizeof(te_tensor *) * (size_t)w->nout);
    if (te_build(s, "buckets", nin + w->nout, args, nparam, params, t, &m) != TE_OK) {
      fprintf(stderr, "te-tune: the dispatch among the buckets does not build: %s\n",
              te_last_error(ctx));
      rc = CLI_FAIL;
    }
  }
  if (rc == CLI_OK && at_buckets_append(ctx, o->log_path, w->key, w->text, tstr, b, trace)) {
    fprintf(stderr, "te-tune: %s\n", te_last_error(ctx));
    rc = CLI_IO;
  }
  if (rc == CLI_OK) {
    bool integer = b->n > 0 && log.rec[at_log_best(&log, b->keys[0], tstr)].int_ops > 0;
    printf("\nbucket  serves              best_ms     %-8s key\n", integer ? "GOP/s" : "GFLOP/s");
    for (int i = 0; i < b->n; i++) {
      int best = at_log_best(&log, b->keys[i], tstr);
      char range[96];
      served(b, i, range, sizeof range);
      double c = at_record_cost(&log.rec[best]);
      printf("%-7lld %-19s %-11.5g %-8.2f %s\n", (long long)b->values[i], range, c * 1e3,
             at_record_gops(&log.rec[best]), b->keys[i]);
    }
    printf("dispatch of %d buckets: workload %s; log %s (te_apply_best on the schedule with the "
           "symbolic size builds it)\n",
           b->n, w->key, o->log_path);
  }
  te_free(trace);
  at_log_free(&log);
  return rc;
}

int cli_tune_buckets(te_tune_options *o, const char *target, int nw, char **words,
                     const char *dtype, const char *spec, cli_progress *pr) {
  at_buckets b;
  int rc = cli_bucket_parse(spec, &b);
  if (rc != CLI_OK)
    return rc;
  if (nw != 1) {
    fprintf(stderr,
            "te-tune tune: --bucket needs one workload text (in one argument) with the "
            "symbolic size '%s', not an operator\n",
            b.size);
    return CLI_USAGE;
  }
  te_ctx *ctx = te_ctx_new();
  if (!ctx)
    return CLI_FAIL;
  sym_workload w = {0};
  te_target *t = te_target_parse(ctx, target);
  if (!t) {
    fprintf(stderr, "te-tune: bad target '%s': %s\n", target, te_last_error(ctx));
    rc = CLI_USAGE;
  }
  if (rc == CLI_OK)
    rc = parse_symbolic(ctx, words[0], &b, &w);
  for (int i = 0; rc == CLI_OK && i < b.n; i++) /* every bucket checked before any is tuned */
    if (at_bucket_key(ctx, w.text, b.size, b.values[i], b.keys[i]) != TE_OK) {
      fprintf(stderr, "te-tune tune: --bucket: %s\n", te_last_error(ctx));
      rc = CLI_USAGE;
    }
  for (int i = 0; rc == CLI_OK && i < b.n; i++) {
    char *text = at_bucket_text(ctx, w.text, b.size, b.values[i]);
    if (!text) {
      rc = CLI_FAIL;
      break;
    }
    if (!pr->quiet)
      printf("bucket %d of %d: %s = %lld\n", i + 1, b.n, b.size, (long long)b.values[i]);
    cli_workload bw;
    rc = cli_workload_from_words(1, &text, dtype, &bw);
    if (rc == CLI_OK && strcmp(bw.key, b.keys[i]) != 0) {
      fprintf(stderr, "te-tune: internal: bucket %s = %lld has key %s, expected %s\n", b.size,
              (long long)b.values[i], bw.key, b.keys[i]);
      rc = CLI_FAIL;
    }
    if (rc == CLI_OK)
      rc = cli_tune_run(o, target, &bw, pr, 0, 1);
    cli_workload_free(&bw);
    free(text);
  }
  if (rc == CLI_OK)
    rc = write_dispatch(ctx, o, t, &w, &b);
  free(w.text);
  te_ctx_free(ctx);
  return rc;
}
