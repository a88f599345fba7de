/* tasks.c — reading a task file (docs/tuning-tasks.md): one JSON object a line, a model's
 * distinct kernel as a workload text with its weight and, optionally, its hand schedule's trace
 * and a group of similar tasks.
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

void cli_tasks_free(cli_task *t, int n) {
  for (int i = 0; t && i < n; i++) {
    free(t[i].name);
    free(t[i].workload);
    free(t[i].hand_trace);
    free(t[i].group);
  }
  free(t);
}

static char *dup_or_null(const char *s) {
  if (!s)
    return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  return d ? memcpy(d, s, n) : NULL;
}

/* One line's object into t; false (with the problem printed) when it is not a task. */
static bool task_from_json(json_t *o, const char *path, int line, cli_task *t) {
  const char *name = NULL, *wl = NULL, *trace = NULL, *group = NULL;
  double weight = 0;
  json_error_t err;
  if (json_unpack_ex(o, &err, 0, "{s:s, s:F, s:s, s?:s, s?:s}", "task", &name, "weight", &weight,
                     "workload", &wl, "hand_trace", &trace, "group", &group) != 0) {
    fprintf(stderr,
            "te-tune: %s:%d: a task is {\"task\": name, \"weight\": calls per pass, \"workload\": "
            "text[, \"hand_trace\": trace][, \"group\": name]}: %s\n",
            path, line, err.text);
    return false;
  }
  if (!(weight > 0) || weight > 1e12) {
    fprintf(stderr, "te-tune: %s:%d: task '%s': the weight must be > 0 (got %g)\n", path, line,
            name, weight);
    return false;
  }
  *t = (cli_task){dup_or_null(name), weight, dup_or_null(wl), dup_or_null(trace),
                  dup_or_null(group)};
  return t->name && t->workload && (!trace || t->hand_trace) && (!group || t->group);
}

int cli_tasks_read(const char *path, cli_task **out, int *nout) {
  *out = NULL;
  *nout = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "te-tune: cannot read the task file '%s': %s\n", path, strerror(errno));
    return CLI_IO;
  }
  cli_task *t = NULL;
  int n = 0, cap = 0, line = 0, rc = CLI_OK;
  char *buf = NULL;
  size_t size = 0;
  while (rc == CLI_OK && getline(&buf, &size, f) > 0) {
    line++;
    if (strspn(buf, " \t\r\n") == strlen(buf))
      continue; /* blank */
    json_error_t err;
    json_t *o = json_loads(buf, 0, &err);
    if (!o) {
      fprintf(stderr, "te-tune: %s:%d: not JSON: %s\n", path, line, err.text);
      rc = CLI_USAGE;
      break;
    }
    if (n == cap) {
      cli_task *g = realloc(t, sizeof *t * (size_t)(cap = cap ? 2 * cap : 16));
      if (!g) {
        json_decref(o);
        rc = CLI_FAIL;
        break;
      }
      t = g;
    }
    memset(&t[n], 0, sizeof t[n]);
    bool ok = task_from_json(o, path, line, &t[n]);
    n++;
    json_decref(o);
    for (int k = 0; ok && k < n - 1; k++)
      if (!strcmp(t[k].name, t[n - 1].name)) {
        fprintf(stderr, "te-tune: %s:%d: task '%s' is given twice (line names are unique)\n", path,
                line, t[k].name);
        ok = false;
      }
    if (!ok)
      rc = CLI_USAGE;
  }
  free(buf);
  fclose(f);
  if (rc == CLI_OK && n == 0) {
    fprintf(stderr, "te-tune: the task file '%s' has no task\n", path);
    rc = CLI_USAGE;
  }
  if (rc != CLI_OK) {
    cli_tasks_free(t, n);
    return rc;
  }
  *out = t;
  *nout = n;
  return CLI_OK;
}
