/* buckets.c — shape buckets: a computation with one symbolic size tuned at a few values of it
 * (the buckets), and the one schedule that dispatches among their best schedules at run time
 * with te_specialize (docs/tuning-buckets.md).
 *
 * A bucket is an ordinary workload: the symbolic computation's canonical text with the size
 * written as the bucket's value, so its records are ordinary records, found by its own key.
 * What ties the buckets to the symbolic computation is one line of the log, the bucket index,
 * written by `te-tune tune --bucket` once every bucket is tuned: a record of the symbolic
 * workload without costs (never anyone's best) that adds a "buckets" object naming the size,
 * the values and each bucket's key. te_apply_best on a schedule with symbolic shapes reads the
 * latest index of its computation and target and builds the dispatch from each bucket's best
 * record as the log holds it then (a bucket tuned further later counts).
 *
 * The dispatch, for values v1 < v2 < ... < vk: "specialize n == v1 {bucket v1}",
 * "specialize n <= v1 {bucket v1}", ..., "specialize n == vk {bucket vk}", then bucket vk's
 * schedule as the general one. A size between two buckets takes the next larger bucket's
 * schedule (the one tuned for the size rounded up, as padded sequence lengths are), a size
 * above the largest the largest's. The exact branches are there because a schedule replayed on
 * the symbolic size is a different kernel from the one te-tune measured (its loops over n keep
 * their tails and guards): measured here, a dense layer's bucket-64 schedule took 0.61 ms at
 * n = 64 with n constant and 2.8 ms under "n <= 64"; under "n == 64" n is the constant again.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "at.h"
#include "te/parse.h"

static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

char *at_bucket_text(te_ctx *ctx, const char *text, const char *size, int64_t value) {
  size_t n = strlen(size);
  ir_str out = {.ctx = ctx};
  int replaced = 0;
  for (const char *p = text; *p;) {
    /* a name starts after a character that cannot continue one (nor a number: 1e5, 1.5f) */
    bool starts = p == text || !(name_char(p[-1]) || p[-1] == '.');
    if (starts && !strncmp(p, size, n) && !name_char(p[n])) {
      ir_str_printf(&out, "%lld", (long long)value);
      p += n, replaced++;
    } else {
      ir_str_printf(&out, "%c", *p++);
    }
  }
  if (out.oom) {
    ir_str_free(&out);
    ir_error(ctx, TE_ERR_NOMEM, "shape buckets: out of memory");
    return NULL;
  }
  if (!replaced) {
    ir_str_free(&out);
    ir_error(ctx, TE_ERR_NOT_FOUND, "shape buckets: the workload has no size named '%s'", size);
    return NULL;
  }
  return ir_str_take(&out);
}

te_status at_bucket_key(te_ctx *ctx, const char *sym_text, const char *size, int64_t value,
                        char key[17]) {
  char *text = at_bucket_text(ctx, sym_text, size, value);
  if (!text)
    return te_last_status(ctx);
  te_ctx *tmp = te_ctx_new();
  if (!tmp) {
    free(text);
    return ir_error(ctx, TE_ERR_NOMEM, "shape buckets: out of memory");
  }
  int nout = 0;
  te_tensor **outs = NULL;
  at_workload wl;
  char *canon = NULL;
  te_status st = te_parse(tmp, text, &nout, &outs);
  if (st == TE_OK)
    st = at_workload_make(tmp, nout, outs, "shape buckets", &wl);
  if (st == TE_OK && !(canon = at_workload_text(&wl)))
    st = te_last_status(tmp) ? te_last_status(tmp) : TE_ERR_NOMEM;
  if (st == TE_OK)
    at_workload_key(canon, key);
  else
    ir_error(ctx, st, "shape buckets: %s = %lld: %s", size, (long long)value, te_last_error(tmp));
  free(canon);
  free(text);
  te_ctx_free(tmp);
  return st;
}

/* ---------------------------------------------------------------- symbolic shapes */

static bool const_shape(const te_tensor *t) {
  for (int d = 0; d < t->ndim; d++)
    if (!ir_is_const_int(t->shape[d], NULL))
      return false;
  return true;
}

bool at_schedule_is_symbolic(const te_schedule *s) {
  for (int i = 0; i < s->nstage; i++) {
    sch_op *op = s->stages[i]->op;
    for (int k = 0; k < op->nout; k++)
      if (!const_shape(op->outputs[k]))
        return true;
    te_tensor **in;
    int n = sch_op_inputs(op, &in);
    for (int k = 0; k < n; k++)
      if (!const_shape(in[k]))
        return true;
  }
  return false;
}

/* ---------------------------------------------------------------- the bucket index */

/* ir_error when there is a context to record on, else only the status (reading an index). */
static te_status refuse(te_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static te_status refuse(te_ctx *ctx, const char *fmt, ...) {
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  va_list ap;
  va_start(ap, fmt);
  te_status st = ir_verror(ctx, TE_ERR_INVALID_ARG, fmt, ap);
  va_end(ap);
  return st;
}

te_status at_buckets_check(te_ctx *ctx, const at_buckets *b) {
  if (!*b->size)
    return refuse(ctx, "shape buckets: no size is named");
  if (b->n < 1 || b->n > AT_MAX_BUCKETS)
    return refuse(ctx, "shape buckets: %d values of '%s' (1 to %d)", b->n, b->size, AT_MAX_BUCKETS);
  for (int i = 0; i < b->n; i++) {
    if (b->values[i] < 1)
      return refuse(ctx, "shape buckets: %s = %lld: a bucket's size must be >= 1", b->size,
                    (long long)b->values[i]);
    if (i && b->values[i] <= b->values[i - 1])
      return refuse(ctx, "shape buckets: the values of '%s' must increase (%lld after %lld)",
                    b->size, (long long)b->values[i], (long long)b->values[i - 1]);
  }
  return TE_OK;
}

te_status at_buckets_append(te_ctx *ctx, const char *log_path, const char *key, const char *text,
                            const char *target, const at_buckets *b, const char *trace) {
  json_t *values = json_array(), *keys = json_array();
  for (int i = 0; values && keys && i < b->n; i++) {
    json_array_append_new(values, json_integer(b->values[i]));
    json_array_append_new(keys, json_string(b->keys[i]));
  }
  char ts[32];
  at_timestamp(ts);
  json_t *j = json_pack("{s:i, s:{s:s, s:s, s:n}, s:s, s:s, s:{s:[], s:i, s:s}, s:s, s:s, "
                        "s:{s:s, s:o, s:o}}",
                        "version", AT_LOG_VERSION, "workload", "key", key, "text", text, "desc",
                        "target", target, "trace", trace, "result", "costs", "error", 0,
                        "error_name", "TE_OK", "timestamp", ts, "te_version", TE_VERSION_STRING,
                        "buckets", "size", b->size, "values", values, "keys", keys);
  char *line = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(j);
  if (!line)
    return ir_error(ctx, TE_ERR_NOMEM, "shape buckets: out of memory");
  FILE *f = at_log_open(log_path);
  bool ok = f && fputs(line, f) >= 0 && fputc('\n', f) != EOF && fflush(f) == 0;
  if (f)
    ok &= fclose(f) == 0;
  free(line);
  return ok ? TE_OK
            : ir_error(ctx, TE_ERR_IO, "cannot write the bucket index to tuning log '%s'",
                       log_path);
}

/* The index of one parsed line, when it is one for key and target. */
static bool index_of(json_t *j, const char *key, const char *target, at_buckets *out) {
  json_t *b = json_object_get(j, "buckets"), *wl = json_object_get(j, "workload");
  const char *k = json_string_value(json_object_get(wl, "key"));
  const char *t = json_string_value(json_object_get(j, "target"));
  const char *size = json_string_value(json_object_get(b, "size"));
  json_t *values = json_object_get(b, "values"), *keys = json_object_get(b, "keys");
  if (!k || !t || !size || strcmp(k, key) || strcmp(t, target) || !json_is_array(values) ||
      !json_is_array(keys) || json_array_size(values) != json_array_size(keys) ||
      json_array_size(values) > AT_MAX_BUCKETS || strlen(size) >= sizeof out->size)
    return false;
  at_buckets r = {.n = (int)json_array_size(values)};
  snprintf(r.size, sizeof r.size, "%s", size);
  for (int i = 0; i < r.n; i++) {
    json_t *v = json_array_get(values, (size_t)i);
    const char *bk = json_string_value(json_array_get(keys, (size_t)i));
    if (!json_is_integer(v) || !bk || strlen(bk) != 16)
      return false;
    r.values[i] = json_integer_value(v);
    memcpy(r.keys[i], bk, 17);
  }
  *out = r;
  return true;
}

te_status at_buckets_read(te_ctx *ctx, const char *log_path, const char *key, const char *target,
                          at_buckets *out) {
  FILE *f = fopen(log_path, "r");
  if (!f)
    return ir_error(ctx, TE_ERR_IO, "cannot read tuning log '%s'", log_path);
  bool found = false;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    if (!strstr(line, "\"buckets\"")) /* most lines are records: skip them unparsed */
      continue;
    json_t *j = json_loads(line, 0, NULL);
    at_buckets b;
    if (j && index_of(j, key, target, &b) && at_buckets_check(NULL, &b) == TE_OK) {
      *out = b; /* the latest index wins */
      found = true;
    }
    json_decref(j);
  }
  free(line);
  fclose(f);
  return found ? TE_OK : TE_ERR_NOT_FOUND;
}

/* ---------------------------------------------------------------- the dispatch */

/* ctx's message, prefixed by what was being done. */
static te_status prefixed(te_ctx *ctx, te_status st, const char *what) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s", te_last_error(ctx));
  te_clear_error(ctx);
  return ir_error(ctx, st ? st : TE_ERR_INTERNAL, "%s: %s", what, msg);
}

/* A branch of s under "var OP value" replaying trace (what names the bucket in messages). */
static te_status branch(te_schedule *s, te_expr *cond, const char *trace, const char *what) {
  te_schedule *b;
  te_status st = cond ? sch_specialize(s, cond, &b) : te_last_status(s->ctx);
  if (st == TE_OK)
    st = te_schedule_replay(b, trace);
  return st == TE_OK ? TE_OK : prefixed(s->ctx, st, what);
}

/* The dispatch on s from the bucket traces (ascending values): per bucket an exact branch
   (n == v: the kernel te-tune measured, every size folded to a constant) and, but for the
   largest, a range branch (n <= v); the largest bucket's trace on s itself. */
static te_status dispatch_on(te_schedule *s, const at_buckets *b, char *const traces[]) {
  te_ctx *ctx = s->ctx;
  te_expr *var = sch_condition_var(s, b->size, "te_apply_best");
  if (!var)
    return te_last_status(ctx);
  char what[sizeof b->size + 128];
  for (int i = 0; i < b->n; i++) {
    snprintf(what, sizeof what, "te_apply_best: the schedule of bucket %s = %lld (workload %s)",
             b->size, (long long)b->values[i], b->keys[i]);
    te_expr *v = te_int(ctx, b->values[i]);
    te_status st = branch(s, v ? te_eq(var, v) : NULL, traces[i], what);
    if (st == TE_OK && i + 1 < b->n)
      st = branch(s, v ? te_le(var, v) : NULL, traces[i], what);
    if (st != TE_OK)
      return st;
  }
  te_status st = te_schedule_replay(s, traces[b->n - 1]);
  return st == TE_OK ? TE_OK : prefixed(ctx, st, what);
}

te_status at_buckets_dispatch(te_schedule *s, const at_log *log, const char *target,
                              const at_buckets *b) {
  te_ctx *ctx = s->ctx;
  te_status st = at_buckets_check(ctx, b);
  if (st != TE_OK)
    return st;
  char *text = te_workload_text(s->nout, s->outs);
  if (!text)
    return te_last_status(ctx) ? te_last_status(ctx) : TE_ERR_NOMEM;
  char *traces[AT_MAX_BUCKETS];
  for (int i = 0; i < b->n && st == TE_OK; i++) {
    char key[17];
    if ((st = at_bucket_key(ctx, text, b->size, b->values[i], key)) != TE_OK)
      break;
    if (strcmp(key, b->keys[i]) != 0) { /* the index predates a change of te's canonical text */
      st = ir_error(ctx, TE_ERR_NOT_FOUND,
                    "te_apply_best: bucket %s = %lld was tuned as workload %s, this computation "
                    "at that size is workload %s: tune the buckets again",
                    b->size, (long long)b->values[i], b->keys[i], key);
      break;
    }
    int best = at_log_best(log, b->keys[i], target);
    if (best < 0) {
      st = ir_error(ctx, TE_ERR_NOT_FOUND,
                    "te_apply_best: bucket %s = %lld (workload %s) has no successful record "
                    "for this target: the schedule is left as it is",
                    b->size, (long long)b->values[i], b->keys[i]);
      break;
    }
    traces[i] = log->rec[best].trace;
  }
  free(text);
  if (st != TE_OK)
    return st;
  /* built first on a scratch schedule: a trace that does not replay leaves s untouched */
  te_schedule *check = te_schedule_new(ctx, s->nout, s->outs);
  if (!check)
    return te_last_status(ctx);
  st = dispatch_on(check, b, traces);
  return st == TE_OK ? dispatch_on(s, b, traces) : st;
}

te_status at_apply_buckets(te_schedule *s, const char *log_path, const char *key,
                           const char *target) {
  te_ctx *ctx = s->ctx;
  at_buckets b;
  te_status st = at_buckets_read(ctx, log_path, key, target, &b);
  if (st == TE_ERR_NOT_FOUND)
    return ir_error(ctx, st,
                    "te_apply_best: the computation has symbolic shapes (workload %s) and "
                    "'%s' holds no bucket index of it for target '%.80s...' (te-tune tune "
                    "--bucket tunes one): the schedule is left as it is",
                    key, log_path, target);
  if (st != TE_OK)
    return st;
  at_log log;
  if ((st = at_log_read(ctx, log_path, false, stderr, &log)) != TE_OK)
    return st;
  st = at_buckets_dispatch(s, &log, target, &b);
  at_log_free(&log);
  return st;
}
