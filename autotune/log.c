/* log.c — the tuning log: one JSON object a line (docs/tuning-log.md is the reference).
 *
 * Writing: each record is serialized whole, written with one fputs plus a newline and flushed,
 * so a tuner killed at any moment leaves at most one partial line (the one being written). When
 * a log is opened for appending and does not end with a newline, one is added first, so a cut
 * line never swallows the next record.
 * Reading: a line that does not parse, is not an object, or misses a required field is skipped
 * with a warning naming the file and line; every other record is kept.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "at.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double at_median(const double *v, int n) {
  if (n <= 0)
    return INFINITY;
  double tmp[256];
  n = n < 256 ? n : 256;
  memcpy(tmp, v, sizeof(double) * (size_t)n);
  qsort(tmp, (size_t)n, sizeof tmp[0], cmp_double);
  return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

double at_record_cost(const at_record *r) {
  if (r->error != TE_OK || r->ncosts <= 0)
    return INFINITY;
  if (r->confirm && r->confirm_cost_s > 0 && isfinite(r->confirm_cost_s))
    return r->confirm_cost_s;
  if (r->measure.clock == TE_TUNE_CLOCK_CPU && r->ncpu_costs > 0 && r->ncpu_costs == r->ncosts)
    return at_median(r->cpu_costs, r->ncpu_costs);
  return at_median(r->costs, r->ncosts);
}

double at_record_gflops(const at_record *r) {
  double c = at_record_cost(r);
  return isfinite(c) && c > 0 && r->flops > 0 ? r->flops / c * 1e-9 : 0;
}

double at_record_gops(const at_record *r) {
  double c = at_record_cost(r), ops = r->flops + r->int_ops;
  return isfinite(c) && c > 0 && ops > 0 ? ops / c * 1e-9 : 0;
}

const char *at_record_rate_unit(const at_record *r) { return r->int_ops > 0 ? "GOP/s" : "GFLOP/s"; }

void at_record_free(at_record *r) {
  char **s[] = {&r->key,     &r->wl_text,   &r->wl_desc,    &r->target,
                &r->trace,   &r->sketch,    &r->params,     &r->error_kind,
                &r->message, &r->timestamp, &r->te_version, &r->measured_on};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
    free(*s[i]);
    *s[i] = NULL;
  }
  free(r->costs);
  r->costs = NULL;
  free(r->cpu_costs);
  r->cpu_costs = NULL;
  free(r->round_costs);
  r->round_costs = NULL;
}

void at_timestamp(char *buf) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char tmp[96];
  snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
  snprintf(buf, 32, "%.31s", tmp);
}

/* ---------------------------------------------------------------- writing */

FILE *at_log_open(const char *path) {
  FILE *f = fopen(path, "a+");
  if (!f)
    return NULL;
  if (fseek(f, -1, SEEK_END) == 0) {
    int c = fgetc(f);
    fseek(f, 0, SEEK_END);
    if (c != '\n' && c != EOF) {
      fputc('\n', f);
      fflush(f);
    }
  }
  return f;
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *record_json(const at_record *r) {
  json_t *costs = json_array();
  for (int i = 0; i < r->ncosts; i++)
    json_array_append_new(costs, json_real(r->costs[i]));
  json_t *wl = json_pack("{s:s?, s:s?, s:o}", "key", r->key, "text", r->wl_text, "desc",
                         str_or_null(r->wl_desc));
  json_t *res =
      json_pack("{s:o, s:i, s:s, s:s?, s:s?}", "costs", costs, "error", r->error, "error_name",
                te_status_str((te_status)r->error), "error_kind",
                r->error_kind ? r->error_kind : "", "message", r->message ? r->message : "");
  if (res && r->ncpu_costs > 0) { /* next to costs: the same runs on the cpu clock */
    json_t *cpu = json_array();
    for (int i = 0; i < r->ncpu_costs; i++)
      json_array_append_new(cpu, json_real(r->cpu_costs[i]));
    json_object_set_new(res, "cpu_costs", cpu);
  }
  json_t *meas = json_pack("{s:f, s:i, s:i, s:i, s:f, s:i}", "min_repeat_s",
                           r->measure.min_repeat_s, "min_repeats", r->measure.min_repeats,
                           "max_repeats", r->measure.max_repeats, "warmup", r->measure.warmup,
                           "timeout_s", r->measure.timeout_s, "threads", r->measure.threads);
  if (meas && r->measure.flush_cache)
    json_object_set_new(meas, "flush_cache", json_true());
  if (meas)
    json_object_set_new(meas, "clock", json_string(at_clock_name(r->measure.clock)));
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
  json_t *tuner = json_pack("{s:s, s:i, s:f, s:f, s:o, s:s?, s:s?}", "seed", seed, "trial",
                            r->trial, "elapsed_s", r->elapsed_s, "load1", r->load1, "measure", meas,
                            "sketch", r->sketch, "params", r->params);
  if (tuner && r->confirm)
    json_object_set_new(tuner, "confirm", json_true());
  if (tuner && r->confirm && r->search_cost_s > 0 && isfinite(r->search_cost_s))
    json_object_set_new(tuner, "search_cost_s", json_real(r->search_cost_s));
  if (tuner && r->confirm && r->confirm_cost_s > 0 && isfinite(r->confirm_cost_s))
    json_object_set_new(tuner, "confirm_cost_s", json_real(r->confirm_cost_s));
  if (tuner && r->confirm && r->nround_costs > 0) {
    json_t *rounds = json_array();
    for (int i = 0; i < r->nround_costs; i++)
      json_array_append_new(rounds, json_real(r->round_costs[i]));
    json_object_set_new(tuner, "round_costs_s", rounds);
  }
  if (tuner && r->confirm && r->reconfirmed)
    json_object_set_new(tuner, "reconfirmed", json_true());
  if (tuner && r->measured_on && *r->measured_on)
    json_object_set_new(tuner, "measured_on", json_string(r->measured_on));
  json_t *rec =
      json_pack("{s:i, s:o, s:s?, s:s?, s:f, s:o, s:s?, s:s?, s:o}", "version", r->version,
                "workload", wl, "target", r->target, "trace", r->trace, "flops", r->flops, "result",
                res, "timestamp", r->timestamp, "te_version", r->te_version, "tuner", tuner);
  /* only where there are some: the records of float workloads stay as they were */
  if (rec && r->int_ops > 0)
    json_object_set_new(rec, "int_ops", json_real(r->int_ops));
  return rec;
}

bool at_log_append(FILE *f, const at_record *r) {
  json_t *j = record_json(r);
  if (!j)
    return false;
  char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  if (!text)
    return false;
  bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0;
  free(text);
  return ok;
}

/* ---------------------------------------------------------------- reading */

static char *dup_str(json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? ir_strdup_malloc(NULL, s) : NULL;
}

static bool parse_costs(json_t *arr, at_record *r) {
  if (!json_is_array(arr))
    return false;
  size_t n = json_array_size(arr);
  r->costs = ir_calloc(NULL, n ? n : 1, sizeof(double));
  if (!r->costs)
    return false;
  for (size_t i = 0; i < n; i++) {
    json_t *v = json_array_get(arr, i);
    if (!json_is_number(v))
      return false;
    r->costs[r->ncosts++] = json_number_value(v);
  }
  return true;
}

/* result.cpu_costs: kept only when it has a number for every run (absent in logs before it). */
static void parse_cpu_costs(json_t *arr, at_record *r) {
  size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
  if (n == 0 || n != (size_t)r->ncosts || !(r->cpu_costs = ir_malloc(NULL, n * sizeof(double))))
    return;
  for (size_t i = 0; i < n; i++) {
    json_t *v = json_array_get(arr, i);
    if (!json_is_number(v)) {
      free(r->cpu_costs);
      r->cpu_costs = NULL;
      r->ncpu_costs = 0;
      return;
    }
    r->cpu_costs[r->ncpu_costs++] = json_number_value(v);
  }
}

/* tuner.round_costs_s: the numbers of the array (others skipped); none when it is absent or
   memory runs out (it only informs). */
static void parse_round_costs(json_t *arr, at_record *r) {
  size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
  r->round_costs = n ? ir_malloc(NULL, n * sizeof(double)) : NULL;
  for (size_t i = 0; r->round_costs && i < n; i++)
    if (json_is_number(json_array_get(arr, i)))
      r->round_costs[r->nround_costs++] = json_number_value(json_array_get(arr, i));
}

static void parse_tuner(json_t *t, at_record *r) {
  const char *seed = json_string_value(json_object_get(t, "seed"));
  r->seed = seed ? strtoull(seed, NULL, 10) : 0;
  r->trial = (int)json_integer_value(json_object_get(t, "trial"));
  r->elapsed_s = json_number_value(json_object_get(t, "elapsed_s"));
  json_t *load = json_object_get(t, "load1");
  r->load1 = json_is_number(load) ? json_number_value(load) : -1;
  r->sketch = dup_str(t, "sketch");
  r->params = dup_str(t, "params");
  r->confirm = json_is_true(json_object_get(t, "confirm"));
  r->search_cost_s = json_number_value(json_object_get(t, "search_cost_s"));
  r->confirm_cost_s = json_number_value(json_object_get(t, "confirm_cost_s"));
  if (!(r->confirm_cost_s > 0) || !isfinite(r->confirm_cost_s))
    r->confirm_cost_s = 0; /* unknown: the record is judged by its median */
  r->reconfirmed = json_is_true(json_object_get(t, "reconfirmed"));
  parse_round_costs(json_object_get(t, "round_costs_s"), r);
  r->measured_on = dup_str(t, "measured_on");
  json_t *m = json_object_get(t, "measure");
  r->measure.min_repeat_s = json_number_value(json_object_get(m, "min_repeat_s"));
  r->measure.min_repeats = (int)json_integer_value(json_object_get(m, "min_repeats"));
  r->measure.max_repeats = (int)json_integer_value(json_object_get(m, "max_repeats"));
  r->measure.warmup = (int)json_integer_value(json_object_get(m, "warmup"));
  r->measure.timeout_s = json_number_value(json_object_get(m, "timeout_s"));
  r->measure.threads = (int)json_integer_value(json_object_get(m, "threads"));
  r->measure.flush_cache = json_is_true(json_object_get(m, "flush_cache"));
  /* logs before the cpu clock were measured on the wall clock */
  const char *clock = json_string_value(json_object_get(m, "clock"));
  r->measure.clock = clock && !strcmp(clock, "cpu") ? TE_TUNE_CLOCK_CPU : TE_TUNE_CLOCK_WALL;
}

/* Fills r from one parsed line; false (r freed) when a required field is missing. */
static bool parse_record(json_t *j, at_record *r) {
  memset(r, 0, sizeof *r);
  json_t *wl = json_object_get(j, "workload"), *res = json_object_get(j, "result");
  if (!json_is_object(j) || !json_is_integer(json_object_get(j, "version")) ||
      !json_is_object(wl) || !json_is_object(res))
    return false;
  r->version = (int)json_integer_value(json_object_get(j, "version"));
  r->key = dup_str(wl, "key");
  r->wl_text = dup_str(wl, "text");
  r->wl_desc = dup_str(wl, "desc");
  r->target = dup_str(j, "target");
  r->trace = dup_str(j, "trace");
  r->flops = json_number_value(json_object_get(j, "flops"));
  r->int_ops = json_number_value(json_object_get(j, "int_ops"));
  if (!(r->flops >= 0) || !isfinite(r->flops))
    r->flops = 0; /* a hand-edited log's nonsense does not become a rate */
  if (!(r->int_ops >= 0) || !isfinite(r->int_ops))
    r->int_ops = 0;
  r->timestamp = dup_str(j, "timestamp");
  r->te_version = dup_str(j, "te_version");
  json_t *err = json_object_get(res, "error");
  r->error = (int)json_integer_value(err);
  r->error_kind = dup_str(res, "error_kind");
  r->message = dup_str(res, "message");
  bool ok = r->key && r->target && r->trace && json_is_integer(err) &&
            parse_costs(json_object_get(res, "costs"), r) && r->version <= AT_LOG_VERSION;
  if (ok)
    parse_cpu_costs(json_object_get(res, "cpu_costs"), r);
  parse_tuner(json_object_get(j, "tuner"), r);
  if (!ok)
    at_record_free(r);
  return ok;
}

static bool push(at_log *l, const at_record *r) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    at_record *p = ir_realloc(NULL, l->rec, sizeof *p * (size_t)cap);
    if (!p)
      return false;
    l->rec = p;
    l->cap = cap;
  }
  l->rec[l->n++] = *r;
  return true;
}

/* Records of one key, target and trace, in file order: all but the last are superseded.
   Sorting (hash, index) pairs keeps this n log n for logs of many thousands of records. */
typedef struct rec_hash {
  uint64_t h;
  int i;
} rec_hash;

static int by_hash(const void *a, const void *b) {
  const rec_hash *x = a, *y = b;
  return x->h != y->h ? (x->h > y->h) - (x->h < y->h) : (x->i > y->i) - (x->i < y->i);
}

static bool same_trace(const at_record *a, const at_record *b) {
  return !strcmp(a->key, b->key) && !strcmp(a->target, b->target) && !strcmp(a->trace, b->trace);
}

static void mark_superseded(at_log *l) {
  rec_hash *h = ir_malloc(NULL, sizeof *h * (size_t)(l->n ? l->n : 1));
  if (!h)
    return; /* then no record is superseded: each judged alone, as before the confirm pass */
  for (int i = 0; i < l->n; i++) {
    const at_record *r = &l->rec[i];
    uint64_t k = (ir_str_hash(r->key) * 31 + ir_str_hash(r->target)) * 31 + ir_str_hash(r->trace);
    h[i] = (rec_hash){k, i}; /* equal hashes are compared in full: collisions do no harm */
  }
  qsort(h, (size_t)l->n, sizeof *h, by_hash);
  for (int a = 0; a < l->n; a++)
    for (int b = a + 1; b < l->n && h[b].h == h[a].h; b++)
      if (same_trace(&l->rec[h[a].i], &l->rec[h[b].i])) {
        l->rec[h[a].i].superseded = true; /* h[b].i > h[a].i: a later record of the trace */
        break;
      }
  free(h);
}

/* The next line of f into *line (grown with te's allocator; the newline kept, NUL-terminated):
   its length in bytes, 0 at the end of the file, -1 when out of memory. Read byte by byte rather
   than with fgets so that a NUL byte inside a line neither hides the rest of it nor joins it to
   the next line: *has_nul tells the caller, which skips such a line as malformed. */
static ssize_t read_line(te_ctx *ctx, FILE *f, char **line, size_t *cap, bool *has_nul) {
  size_t len = 0;
  *has_nul = false;
  for (;;) {
    if (*cap - len < 2) {
      size_t ncap = *cap ? 2 * *cap : 256;
      char *grown = ir_realloc(ctx, *line, ncap);
      if (!grown)
        return -1;
      *line = grown, *cap = ncap;
    }
    int c = getc(f);
    if (c == EOF)
      break;
    *has_nul |= c == 0;
    (*line)[len++] = (char)c;
    if (c == '\n')
      break;
  }
  if (*line)
    (*line)[len] = 0;
  return (ssize_t)len;
}

/* A record that failed to parse because memory ran out is not malformed: the read fails. */
static bool out_of_memory(te_ctx *ctx) {
  te_ctx *c = ctx ? ctx : ir_call_ctx();
  return c && te_last_status(c) == TE_ERR_NOMEM;
}

te_status at_log_read(te_ctx *ctx, const char *path, bool missing_ok, FILE *warn, at_log *l) {
  memset(l, 0, sizeof *l);
  FILE *f = fopen(path, "r");
  if (!f) {
    if (missing_ok && errno == ENOENT)
      return TE_OK;
    return ctx ? ir_error(ctx, TE_ERR_IO, "cannot read tuning log '%s': %s", path, strerror(errno))
               : TE_ERR_IO;
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0;
  bool oom = false, has_nul;
  while (!oom && (len = read_line(ctx, f, &line, &cap, &has_nul)) > 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
      line[--len] = 0;
    if (len == 0)
      continue;
    if (has_nul) {
      l->skipped++;
      if (warn)
        fprintf(warn, "te-tune: warning: %s:%d: skipping a malformed record (a NUL byte)\n", path,
                lineno);
      continue;
    }
    json_error_t je;
    json_t *j = json_loads(line, 0, &je);
    at_record r;
    bool parsed = j && parse_record(j, &r);
    if (parsed && push(l, &r)) {
      json_decref(j);
      continue;
    }
    if (parsed) /* push ran out of memory */
      at_record_free(&r);
    json_decref(j);
    if ((oom = out_of_memory(ctx)))
      break;
    l->skipped++;
    if (warn)
      fprintf(warn, "te-tune: warning: %s:%d: skipping a malformed record (%s)\n", path, lineno,
              j ? "missing or bad fields" : je.text);
  }
  oom |= len < 0;
  free(line);
  fclose(f);
  if (oom) {
    at_log_free(l);
    return TE_ERR_NOMEM;
  }
  mark_superseded(l);
  return TE_OK;
}

void at_log_free(at_log *l) {
  for (int i = 0; i < l->n; i++)
    at_record_free(&l->rec[i]);
  free(l->rec);
  memset(l, 0, sizeof *l);
}

static bool of(const at_record *r, const char *key, const char *target) {
  return !strcmp(r->key, key) && (!target || !strcmp(r->target, target));
}

/* The cheapest successful record of key and target with index >= from, among the confirm
   records when confirm_only, skipping superseded ones; -1 when none. */
static int cheapest(const at_log *l, const char *key, const char *target, int from,
                    bool confirm_only) {
  int best = -1;
  double bc = INFINITY;
  for (int i = from; i < l->n; i++) {
    const at_record *r = &l->rec[i];
    if (r->superseded || (confirm_only && !r->confirm) || !of(r, key, target))
      continue;
    double c = at_record_cost(r);
    if (c < bc) {
      bc = c;
      best = i;
    }
  }
  return best;
}

int at_log_best(const at_log *l, const char *key, const char *target) {
  int last_trial = -1;
  for (int i = 0; i < l->n; i++)
    if (!l->rec[i].confirm && of(&l->rec[i], key, target))
      last_trial = i;
  /* A confirm pass after the last trial ranked its schedules side by side: its own costs are
     compared with each other, not with trials measured in other minutes. */
  int best = cheapest(l, key, target, last_trial + 1, true);
  return best >= 0 ? best : cheapest(l, key, target, 0, false);
}

double at_log_best_cost(const at_log *l, const char *key, const char *target) {
  int best = at_log_best(l, key, target);
  return best >= 0 ? at_record_cost(&l->rec[best]) : INFINITY;
}
