/* common.c — what te-tune's subcommands share: option parsing, building a workload from the
 * command line or from a log record, the target string, and finding the best record.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "te/parse.h"

bool cli_opt(int argc, char **argv, int *i, const char *name, const char **val, bool *bad) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0)
    return false;
  if (a[n] == '=') {
    *val = a + n + 1;
    return true;
  }
  if (a[n] != 0)
    return false;
  if (*i + 1 >= argc) {
    fprintf(stderr, "te-tune: option %s needs a value\n", name);
    *bad = true;
    return true;
  }
  *val = argv[++*i];
  return true;
}

bool cli_flag(char **argv, int i, const char *name) { return strcmp(argv[i], name) == 0; }

bool cli_clock_opt(int argc, char **argv, int *i, const char *cmd, int *clock, bool *bad) {
  const char *v;
  if (!cli_opt(argc, argv, i, "--clock", &v, bad))
    return false;
  if (*bad)
    return true;
  if (!strcmp(v, "cpu"))
    *clock = TE_TUNE_CLOCK_CPU;
  else if (!strcmp(v, "wall"))
    *clock = TE_TUNE_CLOCK_WALL;
  else
    fprintf(stderr, "%s: --clock: bad value '%s' (wall or cpu)\n", cmd, v), *bad = true;
  return true;
}

bool cli_int(const char *s, long long min, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < min)
    return false;
  *out = v;
  return true;
}

bool cli_double(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !(v >= 0))
    return false;
  *out = v;
  return true;
}

bool cli_select_arg(cli_select *s, int argc, char **argv, int *i, bool *bad) {
  if (cli_opt(argc, argv, i, "--log", &s->log, bad) ||
      cli_opt(argc, argv, i, "--target", &s->target, bad) ||
      cli_opt(argc, argv, i, "--key", &s->key, bad) ||
      cli_opt(argc, argv, i, "--dtype", &s->dtype, bad))
    return true;
  if (argv[*i][0] == '-' && argv[*i][1] == '-')
    return false;
  if (s->npos >= 32) {
    fprintf(stderr, "te-tune: too many workload words\n");
    *bad = true;
    return true;
  }
  s->pos[s->npos++] = argv[*i];
  return true;
}

int cli_target_str(const char *target, char *out, size_t size) {
  te_ctx *ctx = te_ctx_new();
  te_target *t = ctx ? te_target_parse(ctx, target) : NULL;
  if (!t) {
    fprintf(stderr, "te-tune: bad target '%s': %s\n", target,
            ctx ? te_last_error(ctx) : "no memory");
    te_ctx_free(ctx);
    return CLI_USAGE;
  }
  snprintf(out, size, "%s", te_target_str(t));
  te_ctx_free(ctx);
  return CLI_OK;
}

const char *cli_target_short(const char *target, char *buf, size_t size) {
  te_ctx *ctx = te_ctx_new();
  te_target *t = ctx ? te_target_parse(ctx, target) : NULL;
  if (t)
    snprintf(buf, size, "%s", te_target_short_str(t));
  te_ctx_free(ctx);
  return t ? buf : cli_target_cpu(target, buf, size);
}

const char *cli_target_cpu(const char *target, char *buf, size_t size) {
  const char *c = strstr(target, "-mcpu=");
  if (!c)
    return snprintf(buf, size, "%s", target), buf;
  c += 6;
  size_t n = strcspn(c, " ");
  snprintf(buf, size, "%.*s", (int)n, c);
  return buf;
}

/* ---------------------------------------------------------------- workloads */

static int finish(cli_workload *w, int nout, te_tensor **outs) {
  if (at_workload_make(w->ctx, nout, outs, "te-tune", &w->wl) != TE_OK ||
      !(w->text = at_workload_text(&w->wl))) {
    fprintf(stderr, "te-tune: cannot tune this workload: %s\n", te_last_error(w->ctx));
    return CLI_FAIL;
  }
  at_workload_key(w->text, w->key);
  return CLI_OK;
}

static int from_text(const char *text, cli_workload *w) {
  int nout = 0;
  te_tensor **outs = NULL;
  if (te_parse(w->ctx, text, &nout, &outs) != TE_OK) {
    fprintf(stderr, "te-tune: %s\n", te_last_error(w->ctx));
    return CLI_USAGE;
  }
  return finish(w, nout, outs);
}

int cli_workload_from_words(int n, char **words, const char *dtype, cli_workload *w) {
  memset(w, 0, sizeof *w);
  if (!(w->ctx = te_ctx_new()))
    return CLI_FAIL;
  if (n == 1 && strchr(words[0], '['))
    return from_text(words[0], w);
  char err[256];
  if (!at_op_spec_parse(n, words, dtype, &w->spec, err, sizeof err)) {
    fprintf(stderr, "te-tune: %s\n", err);
    return CLI_USAGE;
  }
  w->is_op = true;
  at_op_spec_desc(&w->spec, w->desc, sizeof w->desc);
  te_tensor *outs[4];
  int nout = 0;
  if (at_op_spec_build(&w->spec, w->ctx, &nout, outs) != TE_OK) {
    fprintf(stderr, "te-tune: %s: %s\n", w->desc, te_last_error(w->ctx));
    return CLI_USAGE;
  }
  return finish(w, nout, outs);
}

int cli_workload_from_plugin(const char *path, const char *symbol, cli_workload *w) {
  memset(w, 0, sizeof *w);
  if (!(w->ctx = te_ctx_new()))
    return CLI_FAIL;
  char local[4096];
  snprintf(local, sizeof local, "%s%s", strchr(path, '/') ? "" : "./", path); /* not a search */
  void *lib = dlopen(local, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "te-tune: cannot load the plugin: %s\n", dlerror());
    return CLI_USAGE;
  }
  const char *name = symbol ? symbol : TE_TUNE_PLUGIN_SYMBOL;
  te_tune_plugin_fn fn;
  *(void **)&fn = dlsym(lib, name);
  if (!fn) {
    fprintf(stderr, "te-tune: the plugin '%s' has no function '%s'\n", path, name);
    return CLI_USAGE;
  }
  *(void **)&w->tmpl = dlsym(lib, TE_TUNE_TEMPLATE_SYMBOL); /* optional */
  te_tensor *outs[16] = {0};
  int nout = 0;
  te_status st = fn(w->ctx, &nout, outs);
  if (st != TE_OK || nout < 1 || nout > 16) {
    fprintf(stderr, "te-tune: the plugin '%s' failed: %s (%s)\n", path, te_last_error(w->ctx),
            te_status_str(st != TE_OK ? st : TE_ERR_INVALID_ARG));
    return CLI_FAIL;
  }
  return finish(w, nout, outs); /* the library stays loaded: its code made the tensors */
}

int cli_workload_from_record(const at_record *r, cli_workload *w) {
  char err[256];
  at_op_spec sp;
  int rc;
  if (r->wl_desc && at_op_spec_from_desc(r->wl_desc, &sp, err, sizeof err)) {
    char *words[40], copy[512], *save = NULL, dt[16] = "f32";
    int n = 0;
    snprintf(copy, sizeof copy, "%s", r->wl_desc);
    for (char *t = strtok_r(copy, " ", &save); t && n < 40; t = strtok_r(NULL, " ", &save))
      if (strncmp(t, "dtype=", 6) == 0)
        snprintf(dt, sizeof dt, "%s", t + 6);
      else
        words[n++] = t;
    rc = cli_workload_from_words(n, words, dt, w);
  } else if (r->wl_text && strncmp(r->wl_text, "# te-tune form", 14) != 0) {
    memset(w, 0, sizeof *w);
    rc = (w->ctx = te_ctx_new()) ? from_text(r->wl_text, w) : CLI_FAIL;
  } else {
    memset(w, 0, sizeof *w);
    fprintf(stderr,
            "te-tune: workload %s has neither an operator description nor a parseable "
            "text: it cannot be rebuilt from the log\n",
            r->key);
    return CLI_FAIL;
  }
  if (rc == CLI_OK && strcmp(w->key, r->key) != 0)
    fprintf(stderr,
            "te-tune: warning: the rebuilt workload's key %s differs from the record's %s "
            "(te's canonical form changed?)\n",
            w->key, r->key);
  return rc;
}

void cli_workload_free(cli_workload *w) {
  free(w->text);
  te_ctx_free(w->ctx);
  memset(w, 0, sizeof *w);
}

/* ---------------------------------------------------------------- the best record */

static int pick_key(const cli_select *sel, const at_log *log, const char **key) {
  if (sel->key) {
    *key = sel->key;
    return CLI_OK;
  }
  *key = NULL;
  for (int i = 0; i < log->n; i++) {
    if (*key && strcmp(*key, log->rec[i].key) != 0) {
      fprintf(stderr, "te-tune: the log holds several workloads: name one (an operator with its "
                      "parameters, a workload text, or --key; `te-tune best` lists them)\n");
      return CLI_USAGE;
    }
    *key = log->rec[i].key;
  }
  if (!*key) {
    fprintf(stderr, "te-tune: the log '%s' has no records\n", sel->log);
    return CLI_NOT_FOUND;
  }
  return CLI_OK;
}

int cli_find_best(const cli_select *sel, at_log *log, cli_workload *w, char *tstr, size_t tsize,
                  int *best) {
  memset(w, 0, sizeof *w);
  if (at_log_read(NULL, sel->log, false, stderr, log) != TE_OK) {
    fprintf(stderr, "te-tune: cannot read the log '%s': %s\n", sel->log, strerror(errno));
    return CLI_IO;
  }
  int rc = cli_target_str(sel->target ? sel->target : CLI_DEFAULT_TARGET, tstr, tsize);
  if (rc != CLI_OK)
    return rc;
  const char *key = NULL;
  if (sel->npos > 0) {
    if ((rc = cli_workload_from_words(sel->npos, (char **)sel->pos, sel->dtype, w)) != CLI_OK)
      return rc;
    key = w->key;
  } else if ((rc = pick_key(sel, log, &key)) != CLI_OK) {
    return rc;
  }
  *best = at_log_best(log, key, tstr);
  if (*best < 0) {
    char short_target[256];
    fprintf(stderr, "te-tune: no successful record of workload %s for target %s in '%s'\n", key,
            cli_target_short(tstr, short_target, sizeof short_target), sel->log);
    return CLI_NOT_FOUND;
  }
  if (!w->ctx)
    return cli_workload_from_record(&log->rec[*best], w);
  return CLI_OK;
}

int cli_run_on_best(int argc, char **argv, const char *cmd, const char *what_out,
                    void (*help)(void), cli_best_action action) {
  cli_select sel = {CLI_DEFAULT_LOG, NULL, NULL, "f32", 0, {0}};
  const char *out = NULL;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h"))
      return help(), CLI_OK;
    if (!cli_opt(argc, argv, &i, "--out", &out, &bad) &&
        !cli_select_arg(&sel, argc, argv, &i, &bad))
      fprintf(stderr, "te-tune %s: unknown option '%s'\n", cmd, argv[i]), bad = true;
  }
  if (!bad && !out)
    fprintf(stderr, "te-tune %s: --out %s is required\n", cmd, what_out), bad = true;
  if (bad)
    return CLI_USAGE;
  at_log log;
  cli_workload w;
  char tstr[4096];
  int best, rc = cli_find_best(&sel, &log, &w, tstr, sizeof tstr, &best);
  if (rc == CLI_OK)
    rc = action(&log, best, &w, tstr, out);
  cli_workload_free(&w);
  at_log_free(&log);
  return rc;
}
