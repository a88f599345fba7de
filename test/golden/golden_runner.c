/* golden_runner.c — runs golden IR cases: each file holds the input, the passes and the IR
 * expected after each of them.
 *
 *   golden_runner FILE.golden...            exit 0 when every case matches
 *   golden_runner --update FILE.golden...   rewrite the expected sections from the actual output
 *
 * A case file (test/golden/NAME.golden):
 *     # any number of comment lines (what the case shows)
 *     kernel: NAME(A, B, C, alpha)          the kernel's name and arguments, in order: tensors of
 *                                           the workload, then its scalar parameters
 *     workload:                             the computation as workload text
 *       C[i, j] = alpha*A[i, j] + B[i, j]   (docs/workload-text.md), each line indented by two
 *       where A: f32[n, m], B: f32[n, m], alpha: f32, C: [n, m]
 *     schedule:                             optional: a schedule trace (docs/schedule-trace.md)
 *       split C i 16                        replayed on the default schedule
 *     passes: simplify_final                the pipeline's passes after which the IR is shown
 *     === after simplify_final ===          one section a pass, in that order: the IR exactly
 *     func NAME(...) {                      as lowering prints it stopped after that pass
 *     ...
 * A pass's own test is a before/after pair: `passes: P Q` with Q the pass under test and P the
 * one before it. The runner parses the workload (te_parse), replays the trace
 * (te_schedule_replay), lowers with lw_lower_text stopped after each listed pass, and compares.
 * Each pass is lowered twice in one context: the two texts must be identical (printing is
 * deterministic and a build's scratch arena leaves nothing behind that changes the next one). On
 * a mismatch it prints the first differing line and both texts; --update keeps the header and
 * writes the sections anew.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <te/parse.h>
#include <te/te.h>

#include "lower/lower.h"

enum { MAX_PASSES = 16, MAX_ARGS = 16 };

typedef struct case_file {
  char *header; /* everything before the first section, kept on update */
  char name[128];
  int nargs;
  char args[MAX_ARGS][64];
  char *workload, *schedule; /* malloc'd, unindented */
  int npasses;
  char passes[MAX_PASSES][64];
  char *expected[MAX_PASSES]; /* malloc'd; NULL when the section is missing */
} case_file;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (n + 1 == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb)
        free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (buf)
    buf[n] = '\0';
  return buf;
}

static bool starts(const char *line, const char *prefix) {
  return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* Appends the indented block lines following a "key:" line, without their indent. */
static char *take_block(char **lines, int n, int *i) {
  size_t len = 0;
  for (int j = *i + 1; j < n && starts(lines[j], "  "); j++)
    len += strlen(lines[j]) - 2 + 1;
  char *s = malloc(len + 1), *p = s;
  if (!s)
    return NULL;
  for (*i += 1; *i < n && starts(lines[*i], "  "); *i += 1)
    p += sprintf(p, "%s\n", lines[*i] + 2);
  *p = '\0';
  *i -= 1;
  return s;
}

/* "NAME(A, B, C)" */
static bool parse_kernel(const char *v, case_file *cf) {
  const char *open = strchr(v, '('), *close = strrchr(v, ')');
  if (!open || !close || close < open || (size_t)(open - v) >= sizeof cf->name)
    return false;
  memcpy(cf->name, v, (size_t)(open - v));
  cf->name[open - v] = '\0';
  for (const char *p = open + 1; p < close && cf->nargs < MAX_ARGS;) {
    while (*p == ' ' || *p == ',')
      p++;
    size_t k = strcspn(p, ", )");
    if (k == 0 || k >= sizeof cf->args[0])
      break;
    memcpy(cf->args[cf->nargs], p, k);
    cf->args[cf->nargs++][k] = '\0';
    p += k;
  }
  return cf->name[0] != '\0';
}

static bool parse_passes(const char *v, case_file *cf) {
  for (const char *p = v; *p && cf->npasses < MAX_PASSES;) {
    while (*p == ' ')
      p++;
    size_t k = strcspn(p, " ");
    if (k == 0)
      break;
    if (k >= sizeof cf->passes[0])
      return false;
    memcpy(cf->passes[cf->npasses], p, k);
    cf->passes[cf->npasses++][k] = '\0';
    p += k;
  }
  return cf->npasses > 0;
}

/* Reads the header fields and copies out the sections. */
static bool parse_case(const char *path, char *text, case_file *cf) {
  memset(cf, 0, sizeof *cf);
  char *sections = strstr(text, "=== after ");
  if (sections && sections != text && sections[-1] != '\n')
    sections = NULL;
  size_t hlen = sections ? (size_t)(sections - text) : strlen(text);
  cf->header = malloc(hlen + 1);
  char *h = malloc(hlen + 1);
  char **lines = malloc(sizeof *lines * (hlen + 2));
  if (!cf->header || !h || !lines) {
    free(h), free(lines);
    return false;
  }
  memcpy(cf->header, text, hlen);
  cf->header[hlen] = '\0';
  memcpy(h, text, hlen);
  h[hlen] = '\0';
  int n = 0;
  for (char *line = h; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    lines[n++] = line;
    line = nl ? nl + 1 : NULL;
  }
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    char *l = lines[i];
    if (l[0] == '#' || l[0] == '\0')
      continue;
    if (starts(l, "kernel:"))
      ok = parse_kernel(l + 7 + strspn(l + 7, " "), cf);
    else if (starts(l, "workload:"))
      ok = (cf->workload = take_block(lines, n, &i)) != NULL;
    else if (starts(l, "schedule:"))
      ok = (cf->schedule = take_block(lines, n, &i)) != NULL;
    else if (starts(l, "passes:"))
      ok = parse_passes(l + 7, cf);
    else {
      fprintf(stderr, "%s: unknown header line '%s'\n", path, l);
      ok = false;
    }
  }
  free(h);
  free(lines);
  if (!ok || !cf->name[0] || !cf->workload || !cf->npasses) {
    fprintf(stderr, "%s: malformed case file (needs 'kernel:', 'workload:' and 'passes:')\n", path);
    return false;
  }
  /* the sections: an "=== after P ===" line, then the text up to the next such line */
  for (char *sec = sections; sec;) {
    char *body = strchr(sec, '\n');
    if (!body)
      break;
    body++;
    char *next = strstr(body, "\n=== after ");
    size_t len = next ? (size_t)(next + 1 - body) : strlen(body);
    char name[64] = "";
    sscanf(sec, "=== after %63s ===", name);
    for (int k = 0; k < cf->npasses; k++)
      if (!cf->expected[k] && strcmp(cf->passes[k], name) == 0) {
        if ((cf->expected[k] = malloc(len + 1))) {
          memcpy(cf->expected[k], body, len);
          cf->expected[k][len] = '\0';
        }
        break;
      }
    sec = next ? next + 1 : NULL;
  }
  return true;
}

static void free_case(case_file *cf) {
  for (int k = 0; k < MAX_PASSES; k++)
    free(cf->expected[k]);
  free(cf->header);
  free(cf->workload);
  free(cf->schedule);
}

/* The workload's tensors and parameters as the kernel's arguments, by name. */
static bool kernel_args(const char *path, const case_file *cf, int nout, te_tensor **outs,
                        te_tensor **tensors, int *nt, te_expr **scalars, int *ns) {
  int nin = 0, np = 0;
  te_tensor **ins = NULL;
  te_expr **params = NULL;
  if (te_workload_inputs(nout, outs, &nin, &ins, &np, &params) != TE_OK)
    return false;
  *nt = *ns = 0;
  for (int a = 0; a < cf->nargs; a++) {
    const char *want = cf->args[a];
    te_tensor *t = NULL;
    te_expr *s = NULL;
    for (int i = 0; i < nin && !t; i++)
      if (strcmp(te_tensor_name(ins[i]), want) == 0)
        t = ins[i];
    for (int i = 0; i < nout && !t; i++)
      if (strcmp(te_tensor_name(outs[i]), want) == 0)
        t = outs[i];
    for (int i = 0; i < np && !t && !s; i++)
      if (strcmp(params[i]->u.var.name, want) == 0)
        s = params[i];
    if (!t && !s) {
      fprintf(stderr, "%s: kernel argument '%s' is no tensor or parameter of the workload\n", path,
              want);
      return false;
    }
    if (t)
      tensors[(*nt)++] = t;
    else
      scalars[(*ns)++] = s;
  }
  return true;
}

/* Lowers the case stopped after each of its passes into got[]; false (message printed) on
   failure. */
static bool lower_case(const char *path, const case_file *cf, char **got) {
  te_ctx *ctx = te_ctx_new();
  int nout = 0, nt = 0, ns = 0;
  te_tensor **outs = NULL, *tensors[MAX_ARGS];
  te_expr *scalars[MAX_ARGS];
  te_schedule *sch = NULL;
  bool ok = te_parse(ctx, cf->workload, &nout, &outs) == TE_OK &&
            kernel_args(path, cf, nout, outs, tensors, &nt, scalars, &ns) &&
            (sch = te_schedule_new(ctx, nout, outs)) != NULL &&
            (!cf->schedule || te_schedule_replay(sch, cf->schedule) == TE_OK);
  if (!ok)
    fprintf(stderr, "%s: building the case failed: %s\n", path, te_last_error(ctx));
  for (int k = 0; ok && k < cf->npasses; k++) {
    char *text[2] = {NULL, NULL};
    for (int round = 0; round < 2 && ok; round++) {
      text[round] =
          lw_lower_text(sch, "te_lower_text", cf->name, nt, tensors, ns, scalars, cf->passes[k]);
      if (!text[round]) {
        fprintf(stderr, "%s: lowering to '%s' failed: %s (%s)\n", path, cf->passes[k],
                te_last_error(ctx), te_status_str(te_last_status(ctx)));
        ok = false;
      }
    }
    if (ok && strcmp(text[0], text[1]) != 0) {
      fprintf(stderr, "%s: lowering twice gave different text:\n%s---\n%s", path, text[0], text[1]);
      ok = false;
    }
    free(text[1]);
    got[k] = ok ? text[0] : (free(text[0]), NULL);
  }
  te_ctx_free(ctx);
  return ok;
}

static void report_mismatch(const char *path, const char *pass, const char *want, const char *got) {
  if (!want) {
    fprintf(stderr, "%s: no section '=== after %s ===' (run with --update to write it)\n", path,
            pass);
    return;
  }
  int line = 1;
  const char *w = want, *g = got;
  while (*w && *w == *g) {
    if (*w == '\n')
      line++;
    w++, g++;
  }
  fprintf(stderr, "%s: MISMATCH after '%s' at line %d of the IR (run with --update to accept)\n",
          path, pass, line);
  fprintf(stderr, "----- expected -----\n%s----- actual -----\n%s--------------------\n", want,
          got);
}

static bool write_case(const char *path, const case_file *cf, char *const got[]) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write\n", path);
    return false;
  }
  bool ok = fputs(cf->header, f) >= 0;
  for (int k = 0; k < cf->npasses; k++)
    ok = ok && fprintf(f, "=== after %s ===\n%s", cf->passes[k], got[k]) >= 0;
  return fclose(f) == 0 && ok;
}

static bool run_case(const char *path, bool update) {
  char *text = read_file(path);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", path);
    return false;
  }
  case_file cf;
  char *got[MAX_PASSES] = {0};
  bool ok = parse_case(path, text, &cf) && lower_case(path, &cf, got);
  bool same = ok;
  for (int k = 0; ok && k < cf.npasses; k++)
    if (!cf.expected[k] || strcmp(got[k], cf.expected[k]) != 0) {
      same = false;
      if (!update)
        report_mismatch(path, cf.passes[k], cf.expected[k], got[k]);
    }
  if (ok && !same && update) {
    ok = write_case(path, &cf, got);
    if (ok)
      printf("%s: updated\n", path);
  } else if (ok) {
    ok = same;
    if (ok)
      printf("%s: ok\n", path);
  }
  for (int k = 0; k < MAX_PASSES; k++)
    free(got[k]);
  free_case(&cf);
  free(text);
  return ok;
}

int main(int argc, char **argv) {
  bool update = false;
  int failures = 0, ncases = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--update") == 0) {
      update = true;
      continue;
    }
    ncases++;
    if (!run_case(argv[i], update))
      failures++;
  }
  if (ncases == 0) {
    fprintf(stderr, "usage: golden_runner [--update] CASE.golden...\n");
    return 2;
  }
  return failures ? 1 : 0;
}
