/* transfer.c — a cost model that starts warm: te_tune_options.transfer_logs.
 *
 * Without it, a new workload's first rounds are random: the model has no sample to learn from
 * until a few candidates are measured. A directory of earlier logs for the same target holds
 * thousands of measured schedules of other workloads; their loop-nest features are the same
 * kind of features as this workload's candidates (features.c describes the lowered loop nest,
 * not the workload), so they train the model before the first round. Each record is labelled by
 * its throughput relative to the best record of its own workload, the label the model learns
 * for this workload too (model.c), so workloads of different speed mix.
 *
 * Each workload is rebuilt once from its record (the operator description, else the canonical
 * text through te_parse) in a scratch context, and each trace replayed there for its features.
 * A workload or trace that no longer rebuilds is skipped: logs outlive te versions. The number
 * of records is bounded (their features cost a lowering each).
 */
#define _DEFAULT_SOURCE /* DT_REG */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "te/parse.h"
#include "tune_session.h"

enum { MAX_FILES = 256, MAX_PER_WORKLOAD = 400, MAX_RECORDS = 2000 };

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The logs under path: the file itself, or a directory's *.jsonl files in name order (malloc'd
   paths, *n of them). */
static char **log_files(te_ctx *ctx, const char *path, int *n, te_status *st) {
  *n = 0;
  *st = TE_OK;
  struct stat sb;
  if (stat(path, &sb) != 0) {
    *st = ir_error(ctx, TE_ERR_IO, "te_tune: transfer_logs '%s' does not exist", path);
    return NULL;
  }
  char **files = ir_calloc(ctx, MAX_FILES, sizeof *files);
  if (!files) {
    *st = ir_error(ctx, TE_ERR_NOMEM, "te_tune: out of memory (transfer logs)");
    return NULL;
  }
  if (!S_ISDIR(sb.st_mode)) {
    if ((files[0] = ir_strdup_malloc(ctx, path)))
      *n = 1;
    return files;
  }
  DIR *d = opendir(path);
  if (!d) {
    free(files);
    *st = ir_error(ctx, TE_ERR_IO, "te_tune: cannot read the directory '%s'", path);
    return NULL;
  }
  for (struct dirent *e; (e = readdir(d)) && *n < MAX_FILES;) {
    size_t len = strlen(e->d_name);
    if (len <= 6 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
      continue;
    char *p = ir_malloc(ctx, strlen(path) + len + 2);
    if (!p)
      break;
    sprintf(p, "%s/%s", path, e->d_name);
    files[(*n)++] = p;
  }
  closedir(d);
  qsort(files, (size_t)*n, sizeof *files, by_name);
  return files;
}

/* The workload of record r rebuilt in ctx; false when it no longer can be. */
static bool rebuild(te_ctx *ctx, const at_record *r, at_workload *wl) {
  at_op_spec sp;
  char err[256];
  te_tensor *op_outs[8], **outs = op_outs;
  int nout = 0;
  te_status st = TE_ERR_NOT_FOUND;
  if (r->wl_desc && at_op_spec_from_desc(r->wl_desc, &sp, err, sizeof err))
    st = at_op_spec_build(&sp, ctx, &nout, op_outs);
  else if (r->wl_text && strncmp(r->wl_text, "# te-tune form", 14) != 0)
    st = te_parse(ctx, r->wl_text, &nout, &outs);
  bool ok = st == TE_OK && at_workload_make(ctx, nout, outs, "te_tune", wl) == TE_OK;
  te_clear_error(ctx);
  return ok;
}

/* Feeds the successful records of workload `key` (other than the session's) in log to the
   model; the number fed. */
static int take_workload(at_session *s, const at_log *log, const char *key, bool *used,
                         int budget) {
  double best = 0;
  for (int i = 0; i < log->n; i++) {
    const at_record *r = &log->rec[i];
    if (!used[i] && !strcmp(r->key, key) && !strcmp(r->target, s->target) && !r->confirm) {
      double c = at_record_cost(r);
      if (isfinite(c) && c > 0 && 1 / c > best)
        best = 1 / c; /* same workload: same flops, so 1/cost ranks throughput */
    }
  }
  te_ctx *tmp = te_ctx_new();
  at_workload wl;
  te_target *tgt = NULL;
  int fed = 0;
  bool built = false;
  for (int i = 0; i < log->n && fed < budget && fed < MAX_PER_WORKLOAD; i++) {
    const at_record *r = &log->rec[i];
    if (used[i] || strcmp(r->key, key) != 0)
      continue;
    used[i] = true;
    if (strcmp(r->target, s->target) != 0 || r->confirm || !(best > 0))
      continue;
    if (!built) {
      built = true;
      if (!tmp || !rebuild(tmp, r, &wl) || !(tgt = te_target_parse(tmp, s->target)))
        break;
    }
    if (!tgt)
      break;
    double c = at_record_cost(r);
    float feat[AT_NFEAT];
    if (at_trace_features(&wl, tgt, r->trace, feat) &&
        at_search_observe_prior(s->search, feat, isfinite(c) && c > 0 ? 1 / c / best : 0))
      fed++;
  }
  for (int i = 0; i < log->n; i++) /* the rest of this workload: not looked at again */
    used[i] = used[i] || !strcmp(log->rec[i].key, key);
  te_ctx_free(tmp);
  return fed;
}

te_status at_session_load_transfer(at_session *s) {
  if (!s->o.transfer_logs || !*s->o.transfer_logs)
    return TE_OK;
  int nfiles;
  te_status st;
  char **files = log_files(s->ctx, s->o.transfer_logs, &nfiles, &st);
  for (int f = 0; f < nfiles && s->transfer_records < MAX_RECORDS; f++) {
    at_log log;
    if (at_log_read(NULL, files[f], false, NULL, &log) != TE_OK)
      continue; /* unreadable: another process's file, or out of memory for a huge log */
    bool *used = ir_calloc(NULL, (size_t)(log.n ? log.n : 1), sizeof *used);
    for (int i = 0; used && i < log.n && s->transfer_records < MAX_RECORDS; i++) {
      const at_record *r = &log.rec[i];
      if (used[i] || !strcmp(r->key, s->key))
        continue;
      int fed = take_workload(s, &log, r->key, used, MAX_RECORDS - s->transfer_records);
      s->transfer_records += fed;
      s->transfer_workloads += fed > 0;
    }
    free(used);
    at_log_free(&log);
  }
  for (int f = 0; f < nfiles; f++)
    free(files[f]);
  free(files);
  if (st == TE_OK && s->transfer_records)
    at_search_retrain(s->search);
  return st;
}
