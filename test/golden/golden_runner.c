/* golden_runner.c — runs golden IR cases: builds the case's schedule, lowers it, compares the
 * printed IR with the expected text in the case file (format in golden.h).
 *
 *   golden_runner FILE.golden...            exit 0 when every case matches
 *   golden_runner --update FILE.golden...   rewrite the expected part from the actual output
 *
 * Each case is lowered twice in one context: the two texts must be identical (printing is
 * deterministic and a build's scratch arena leaves nothing behind that changes the next one).
 * On a mismatch it prints the first differing line and both texts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "lower/lower.h"

typedef struct case_file {
  char *header; /* everything before the "---" line, kept on update */
  char *expected;
  char builder[128];
  char stop_after[128];
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

/* The value of "# key: value" on a header line, trimmed, into out. */
static void header_value(const char *line, size_t len, const char *key, char *out, size_t size) {
  size_t klen = strlen(key);
  if (len < klen || strncmp(line, key, klen) != 0)
    return;
  const char *v = line + klen;
  size_t vlen = len - klen;
  while (vlen && (*v == ' ' || *v == '\t'))
    v++, vlen--;
  while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\r' || v[vlen - 1] == '\t'))
    vlen--;
  if (vlen >= size)
    vlen = size - 1;
  memcpy(out, v, vlen);
  out[vlen] = '\0';
}

static bool parse_case(const char *path, char *text, case_file *cf) {
  memset(cf, 0, sizeof *cf);
  char *sep = NULL;
  for (char *line = text; *line;) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    if (len == 3 && strncmp(line, "---", 3) == 0) {
      sep = line;
      break;
    }
    header_value(line, len, "# case:", cf->builder, sizeof cf->builder);
    header_value(line, len, "# stop-after:", cf->stop_after, sizeof cf->stop_after);
    if (!nl)
      break;
    line = nl + 1;
  }
  if (!sep || !cf->builder[0]) {
    fprintf(stderr, "%s: malformed case file (needs '# case: NAME' and a '---' line)\n", path);
    return false;
  }
  cf->header = text;
  sep[0] = '\0'; /* header ends before the separator */
  char *nl = strchr(sep + 1, '\n');
  cf->expected = nl ? nl + 1 : sep + 3;
  return true;
}

static golden_builder find_builder(const char *name) {
  for (int i = 0; i < golden_ncases; i++)
    if (strcmp(golden_cases[i].name, name) == 0)
      return golden_cases[i].build;
  return NULL;
}

/* Lowers the case; malloc'd text or NULL (message printed). */
static char *lower_case(const char *path, const case_file *cf) {
  golden_builder build = find_builder(cf->builder);
  if (!build) {
    fprintf(stderr, "%s: no case builder named '%s' in cases.c\n", path, cf->builder);
    return NULL;
  }
  te_ctx *ctx = te_ctx_new();
  golden_kernel k = {0};
  char *text[2] = {NULL, NULL};
  const char *stop = cf->stop_after[0] ? cf->stop_after : NULL;
  if (!build(ctx, &k)) {
    fprintf(stderr, "%s: building case '%s' failed: %s\n", path, cf->builder, te_last_error(ctx));
    te_ctx_free(ctx);
    return NULL;
  }
  for (int round = 0; round < 2; round++) {
    text[round] = lw_lower_text(k.sch, "te_lower_text", k.name, k.ntensors, k.tensors, k.nscalars,
                                k.scalars, stop);
    if (!text[round]) {
      fprintf(stderr, "%s: lowering failed: %s (%s)\n", path, te_last_error(ctx),
              te_status_str(te_last_status(ctx)));
      break;
    }
  }
  te_ctx_free(ctx);
  if (text[0] && text[1] && strcmp(text[0], text[1]) != 0) {
    fprintf(stderr, "%s: lowering twice gave different text:\n%s---\n%s", path, text[0], text[1]);
    free(text[0]);
    text[0] = NULL;
  }
  free(text[1]);
  return text[0];
}

static void report_mismatch(const char *path, const char *want, const char *got) {
  int line = 1;
  const char *w = want, *g = got;
  while (*w && *w == *g) {
    if (*w == '\n')
      line++;
    w++, g++;
  }
  fprintf(stderr, "%s: MISMATCH at line %d of the IR (run with --update to accept)\n", path, line);
  fprintf(stderr, "----- expected -----\n%s----- actual -----\n%s--------------------\n", want,
          got);
}

static bool write_case(const char *path, const case_file *cf, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write\n", path);
    return false;
  }
  bool ok = fprintf(f, "%s---\n%s", cf->header, text) >= 0;
  return fclose(f) == 0 && ok;
}

static bool run_case(const char *path, bool update) {
  char *text = read_file(path);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", path);
    return false;
  }
  case_file cf;
  bool ok = parse_case(path, text, &cf);
  char *got = ok ? lower_case(path, &cf) : NULL;
  ok = got != NULL;
  if (ok && strcmp(got, cf.expected) != 0) {
    if (update) {
      ok = write_case(path, &cf, got);
      if (ok)
        printf("%s: updated\n", path);
    } else {
      report_mismatch(path, cf.expected, got);
      ok = false;
    }
  } else if (ok) {
    printf("%s: ok\n", path);
  }
  free(got);
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
