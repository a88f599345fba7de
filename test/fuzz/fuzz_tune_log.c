/* fuzz_tune_log.c — libFuzzer target for the tuning-log reader (autotune/log.c;
 * docs/tuning-log.md; test/fuzz/README.md says how to run it).
 *
 * An input is the content of a log file. Whatever it holds, reading must return TE_OK, keep
 * every well-formed record and skip every other non-empty line with one warning each
 * (records + skipped = non-empty lines). Then:
 *   - the records read, written back with the log's own writer and read again, are all kept,
 *     and writing them once more gives the same bytes (the writer and the reader agree);
 *   - the best record of each workload key and target is one of that key and target;
 *   - the best record of the matmul of fuzz_workloads.h for the host target (seeds hold its key)
 *     replays as te_apply_best replays it: without a crash or a bug status; when the log has no
 *     malformed line, te_apply_best itself runs (it warns on stderr otherwise).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <unistd.h>

#include "at.h"
#include "fuzz_workloads.h"

static const char *const NAME = "fuzz_tune_log";

/* One scratch file per process, rewritten by each input (the reader takes a path). */
static char *scratch(int which) {
  static char paths[2][64];
  if (!paths[which][0]) {
    const char *dir = getenv("TMPDIR");
    snprintf(paths[which], sizeof paths[which], "%.40s/te-fuzz-log-%d-%d.jsonl",
             dir && *dir ? dir : "/tmp", (int)getpid(), which);
  }
  return paths[which];
}

static void write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
    fz_fail(NAME, "cannot write the scratch log", path, "");
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    fz_fail(NAME, "cannot read the scratch log", path, "");
  char *buf = NULL;
  size_t cap = 0;
  FILE *mem = open_memstream(&buf, &cap);
  int c;
  while ((c = fgetc(f)) != EOF)
    fputc(c, mem);
  fclose(f);
  fclose(mem);
  *size = cap;
  return buf;
}

/* The lines the reader sees as records: split at '\n', trailing '\r's dropped, empty ones left
   out. */
static int nonempty_lines(const uint8_t *data, size_t size) {
  int n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= size; i++) {
    if (i < size && data[i] != '\n')
      continue;
    size_t end = i;
    while (end > start && data[end - 1] == '\r')
      end--;
    n += end > start;
    start = i + 1;
  }
  return n;
}

/* Reads path; warnings are counted, not printed. */
static void read_log(const char *path, at_log *log, int *warnings, const char *input) {
  char *wbuf = NULL;
  size_t wsize = 0;
  FILE *warn = open_memstream(&wbuf, &wsize);
  te_status st = at_log_read(NULL, path, false, warn, log);
  fclose(warn);
  if (st != TE_OK)
    fz_fail(NAME, "reading an existing log failed", input, te_status_str(st));
  *warnings = 0;
  for (size_t i = 0; i < wsize; i++)
    *warnings += wbuf[i] == '\n';
  free(wbuf);
}

/* Writes the log's records to path (replacing it) and returns the bytes written. */
static char *write_log(const at_log *log, const char *path, size_t *size, const char *input) {
  unlink(path);
  FILE *f = at_log_open(path);
  if (!f)
    fz_fail(NAME, "cannot open the scratch log for writing", path, "");
  for (int i = 0; i < log->n; i++)
    if (!at_log_append(f, &log->rec[i]))
      fz_fail(NAME, "a record read cannot be written back", input, log->rec[i].key);
  fclose(f);
  return read_file(path, size);
}

static void check_best(const at_log *log, const char *input) {
  for (int i = 0; i < log->n; i++) {
    const at_record *r = &log->rec[i];
    int b = at_log_best(log, r->key, r->target);
    if (b < -1 || b >= log->n)
      fz_fail(NAME, "at_log_best out of range", input, r->key);
    if (b >= 0 && (strcmp(log->rec[b].key, r->key) || strcmp(log->rec[b].target, r->target)))
      fz_fail(NAME, "at_log_best gives a record of another workload or target", input, r->key);
    if (b >= 0 && !(at_record_cost(&log->rec[b]) < INFINITY))
      fz_fail(NAME, "at_log_best gives a failed record", input, r->key);
    if (isnan(at_log_best_cost(log, r->key, NULL)))
      fz_fail(NAME, "a best cost is NaN", input, r->key);
  }
}

/* What te_apply_best does with the log, on the matmul workload and the host target. */
static void check_apply(const at_log *log, const char *path, int warnings, const char *input) {
  te_ctx *ctx = te_ctx_new();
  fz_workload w;
  fz_workload_parse(ctx, 0, &w, NAME);
  te_target *host = te_target_parse(ctx, "llvm");
  char key[17];
  char *text = te_tune_workload(ctx, w.nout, w.outs, key);
  if (!host || !text)
    fz_fail(NAME, "cannot make the matmul workload's key", input, te_last_error(ctx));
  free(text);
  int best = at_log_best(log, key, te_target_str(host));
  te_status replayed = TE_OK;
  if (best >= 0) {
    te_schedule *s = te_schedule_new(ctx, w.nout, w.outs);
    replayed = te_schedule_replay(s, log->rec[best].trace);
    if (fz_is_bug(replayed))
      fz_fail(NAME, "the best record's trace gives a bug status", input, te_last_error(ctx));
    te_clear_error(ctx);
  }
  if (warnings == 0) {
    te_schedule *s = te_schedule_new(ctx, w.nout, w.outs);
    te_status st = te_apply_best(s, path, host);
    if (fz_is_bug(st))
      fz_fail(NAME, "te_apply_best gives a bug status", input, te_last_error(ctx));
    if (st != (best < 0 ? TE_ERR_NOT_FOUND : replayed))
      fz_fail(NAME, "te_apply_best's status is not that of replaying the best record", input,
              te_last_error(ctx));
  }
  te_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *input = fz_text(data, size);
  if (!input)
    return 0;
  const char *p0 = scratch(0), *p1 = scratch(1);
  write_file(p0, data, size);
  at_log log;
  int warnings;
  read_log(p0, &log, &warnings, input);
  if (log.n + log.skipped != nonempty_lines(data, size) || warnings != log.skipped)
    fz_fail(NAME, "records + skipped lines != non-empty lines, or a skip without its warning",
            input, "");
  check_best(&log, input);
  check_apply(&log, p0, warnings, input);

  size_t n1, n2;
  char *w1 = write_log(&log, p1, &n1, input);
  at_log again;
  int w;
  read_log(p1, &again, &w, input);
  if (again.n != log.n || again.skipped != 0)
    fz_fail(NAME, "records written back are not all read again", input, w1);
  char *w2 = write_log(&again, p0, &n2, input);
  if (n1 != n2 || memcmp(w1, w2, n1) != 0)
    fz_fail(NAME, "writing what was read is not a fixed point", w1, w2);
  free(w1);
  free(w2);
  at_log_free(&again);
  at_log_free(&log);
  unlink(p0);
  unlink(p1);
  free(input);
  return 0;
}
