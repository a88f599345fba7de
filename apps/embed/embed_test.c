/* embed_test.c — te-embed's tests (CTest apps.embed_reference and apps.embed_errors):
 *
 *   embed_test reference TE_EMBED MODEL_DIR REF_DIR OUT_DIR
 *       te-embed's token ids equal the Hugging Face tokenizer's (REF_DIR/token_ids.txt) and
 *       its embeddings have cosine >= 0.9999 with sentence-transformers' (embeddings.txt) for
 *       every sentence of sentences.txt (made by make_reference.py with PyTorch, committed);
 *       run in batches of 7 on 2 threads, so that batches mix lengths and pad;
 *   embed_test errors TE_EMBED MODEL_DIR OUT_DIR
 *       each misuse is refused with status 1 and a message naming it: no model directory, a
 *       truncated model file, a header that is not JSON, a tensor of another dtype or shape,
 *       an empty line, invalid UTF-8; bad options with status 2.
 *
 * Without the model (scripts/fetch-minilm.sh fetches it) a test prints a SKIP line and exits
 * 77, which CTest reports as skipped, unless TE_REQUIRE lists "minilm" (CI): then it fails.
 */
#define _POSIX_C_SOURCE 200809L /* popen */

#include "minilm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

enum { SKIP = 77 };

static int failures;

static void check(const char *what, int ok) {
  printf("%-64s %s\n", what, ok ? "ok" : "FAILED");
  failures += !ok;
}

static int required(const char *feature) {
  const char *list = getenv("TE_REQUIRE");
  size_t n = strlen(feature);
  for (const char *p = list ? list : ""; *p;) {
    size_t len = strcspn(p, ", ");
    if (len == n && strncmp(p, feature, n) == 0)
      return 1;
    p += len;
    p += strspn(p, ", ");
  }
  return 0;
}

static int have_model(const char *test, const char *dir) {
  char path[4096];
  struct stat sb;
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  if (stat(path, &sb) == 0)
    return 1;
  if (required("minilm")) {
    printf("FAIL %s: no model at %s, but TE_REQUIRE lists 'minilm' (scripts/fetch-minilm.sh "
           "should have fetched it)\n",
           test, dir);
    return 0;
  }
  printf("SKIP %s: no model at %s (scripts/fetch-minilm.sh fetches it)\n", test, dir);
  return 0;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0)
    if ((n += got) == cap - 1)
      buf = realloc(buf, cap *= 2);
  fclose(f);
  if (buf)
    buf[n] = '\0';
  return buf;
}

/* Runs a shell command; its exit status (-1 when it did not exit). */
static int run(const char *cmd) {
  int st = system(cmd);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The next line of *p (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p) {
  if (!*p || !**p)
    return NULL;
  char *line = *p, *nl = strchr(line, '\n');
  if (nl)
    *nl = '\0', *p = nl + 1;
  else
    *p = line + strlen(line);
  return line;
}

static void compare_tokens(const char *got_path, const char *want_path) {
  char *got = slurp(got_path), *want = slurp(want_path), *g = got, *w = want;
  int line = 0, bad = 0;
  char *gl, *wl;
  while (got && want && (wl = next_line(&w))) {
    line++;
    gl = next_line(&g);
    if (!gl || strcmp(gl, wl) != 0) {
      if (bad++ == 0)
        printf("  sentence %d: token ids\n    got  %.200s\n    want %.200s\n", line,
               gl ? gl : "(none)", wl);
    }
  }
  char what[128];
  snprintf(what, sizeof what, "token ids of %d sentences match the HF tokenizer's", line);
  check(what, got && want && line >= 50 && bad == 0 && !next_line(&g));
  free(got), free(want);
}

static int parse_row(char *line, double *v) {
  int n = 0;
  for (char *tok = strtok(line, " "); tok && n <= MINILM_HIDDEN; tok = strtok(NULL, " "))
    v[n++] = strtod(tok, NULL);
  return n;
}

static void compare_embeddings(const char *got_path, const char *want_path) {
  char *got = slurp(got_path), *want = slurp(want_path), *g = got, *w = want;
  int line = 0, bad = 0;
  double worst = 2, gv[MINILM_HIDDEN + 1], wv[MINILM_HIDDEN + 1];
  char *gl, *wl;
  while (got && want && (wl = next_line(&w))) {
    line++;
    gl = next_line(&g);
    int nw = parse_row(wl, wv), ng = gl ? parse_row(gl, gv) : 0;
    double dot = 0, a = 0, b = 0;
    for (int c = 0; ng == MINILM_HIDDEN && nw == MINILM_HIDDEN && c < MINILM_HIDDEN; c++)
      dot += gv[c] * wv[c], a += gv[c] * gv[c], b += wv[c] * wv[c];
    double cosine = a > 0 && b > 0 ? dot / sqrt(a * b) : 0; /* NaN fails below too */
    if (!(cosine >= 0.9999)) {
      bad++;
      printf("  sentence %d: cosine %.6f (%d floats)\n", line, cosine, ng);
    }
    worst = cosine < worst ? cosine : worst;
  }
  printf("  lowest cosine: %.9f\n", worst);
  char what[128];
  snprintf(what, sizeof what, "embeddings of %d sentences: cosine >= 0.9999", line);
  check(what, got && want && line >= 50 && bad == 0 && !next_line(&g));
  free(got), free(want);
}

static int reference(const char *exe, const char *model, const char *ref, const char *out) {
  if (!have_model("apps.embed_reference", model))
    return required("minilm") ? 1 : SKIP;
  char cmd[8192], got[4096], want[4096];
  snprintf(got, sizeof got, "%s/tokens.txt", out);
  snprintf(want, sizeof want, "%s/token_ids.txt", ref);
  snprintf(cmd, sizeof cmd, "'%s' --model '%s' --tokens < '%s/sentences.txt' > '%s'", exe, model,
           ref, got);
  check("te-embed --tokens runs", run(cmd) == 0);
  compare_tokens(got, want);
  snprintf(got, sizeof got, "%s/embeddings.txt", out);
  snprintf(want, sizeof want, "%s/embeddings.txt", ref);
  snprintf(cmd, sizeof cmd, "'%s' --model '%s' --batch 7 --threads 2 < '%s/sentences.txt' > '%s'",
           exe, model, ref, got);
  check("te-embed --batch 7 --threads 2 runs", run(cmd) == 0);
  compare_embeddings(got, want);
  return failures ? 1 : 0;
}

/* Runs te-embed with the arguments and stdin text; checks the status and that stderr holds
   the words. */
static void refused(const char *what, const char *exe, const char *args, const char *input,
                    int status, const char *words, const char *out) {
  char in[4096], err[4096], cmd[32768];
  snprintf(in, sizeof in, "%s/stdin.txt", out);
  snprintf(err, sizeof err, "%s/stderr.txt", out);
  FILE *f = fopen(in, "wb");
  if (f) {
    fputs(input, f);
    fclose(f);
  }
  snprintf(cmd, sizeof cmd, "'%s' %s < '%s' > /dev/null 2> '%s'", exe, args, in, err);
  int st = run(cmd);
  char *msg = slurp(err);
  int ok = st == status && msg && strstr(msg, words);
  if (!ok)
    printf("  status %d, stderr: %s", st, msg ? msg : "(none)\n");
  check(what, ok);
  free(msg);
}

static int write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(data, 1, n, f) == n;
  return f && fclose(f) == 0 && ok;
}

/* A model directory DIR/name with the real vocabulary and pooling config and the given
   model.safetensors bytes: header (JSON) then data. */
static void fake_model(const char *model, const char *dir, const char *json, size_t data_bytes) {
  char cmd[16384], path[4096];
  snprintf(cmd, sizeof cmd,
           "mkdir -p '%s/1_Pooling' && cp '%s/vocab.txt' '%s/' && "
           "cp '%s/1_Pooling/config.json' '%s/1_Pooling/'",
           dir, model, dir, model, dir);
  run(cmd);
  size_t n = strlen(json), total = 8 + n + data_bytes;
  unsigned char *buf = calloc(1, total);
  for (int i = 0; buf && i < 8; i++)
    buf[i] = (unsigned char)(n >> (8 * i));
  if (buf)
    memcpy(buf + 8, json, n);
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  if (!buf || !write_file(path, buf, total))
    printf("  could not write %s\n", path);
  free(buf);
}

static int errors(const char *exe, const char *model, const char *out) {
  char args[8192], dir[4096];
  refused("no --model: usage, status 2", exe, "", "hello\n", 2, "--model DIR is required", out);
  refused("--batch 0: status 2", exe, "--model x --batch 0", "hello\n", 2, "--batch takes", out);
  snprintf(args, sizeof args, "--model '%s/no-such-dir'", out);
  refused("a missing model: status 1, names the file", exe, args, "hello\n", 1,
          "no-such-dir/1_Pooling/config.json", out);
  if (!have_model("apps.embed_errors", model))
    return failures ? 1 : required("minilm") ? 1 : SKIP;
  snprintf(args, sizeof args, "--model '%s'", model);
  refused("an empty line", exe, args, "one\n\nthree\n", 1, "line 2 is empty", out);
  refused("a line of white space", exe, args, "one\n \t \n", 1, "line 2 is empty", out);
  refused("invalid UTF-8", exe, args, "ok\nbad \xC3\x28 byte\n", 1,
          "line 2: invalid UTF-8 at byte 5", out);

  snprintf(dir, sizeof dir, "%s/truncated", out);
  fake_model(model, dir,
             "{\"embeddings.word_embeddings.weight\": {\"dtype\": \"F32\", "
             "\"shape\": [30522, 384], \"data_offsets\": [0, 46882816]}}",
             1000);
  snprintf(args, sizeof args, "--model '%s'", dir);
  refused("a truncated model file", exe, args, "hello\n", 1,
          "'embeddings.word_embeddings.weight': data_offsets [0, 46882816] are not a range inside "
          "the 1000 bytes of data",
          out);
  snprintf(dir, sizeof dir, "%s/not-json", out);
  fake_model(model, dir, "{\"a\": [1, 2", 0);
  snprintf(args, sizeof args, "--model '%s'", dir);
  refused("a header that is not JSON", exe, args, "hello\n", 1, "the header is not a JSON object",
          out);
  snprintf(dir, sizeof dir, "%s/f16", out);
  fake_model(model, dir,
             "{\"embeddings.word_embeddings.weight\": {\"dtype\": \"F16\", "
             "\"shape\": [2, 2], \"data_offsets\": [0, 8]}}",
             8);
  snprintf(args, sizeof args, "--model '%s'", dir);
  refused("a tensor of another dtype", exe, args, "hello\n", 1,
          "tensor 'embeddings.word_embeddings.weight' is F16; te-embed needs F32", out);
  snprintf(dir, sizeof dir, "%s/shape", out);
  fake_model(model, dir,
             "{\"embeddings.word_embeddings.weight\": {\"dtype\": \"F32\", "
             "\"shape\": [2, 384], \"data_offsets\": [0, 3072]}}",
             3072);
  snprintf(args, sizeof args, "--model '%s'", dir);
  refused("a tensor of another shape", exe, args, "hello\n", 1,
          "has shape [2, 384]; te-embed needs [30522, 384]", out);
  snprintf(dir, sizeof dir, "%s/missing", out);
  fake_model(model, dir, "{\"__metadata__\": {\"format\": \"pt\"}}", 0);
  snprintf(args, sizeof args, "--model '%s'", dir);
  refused("a missing tensor", exe, args, "hello\n", 1,
          "no tensor 'embeddings.word_embeddings.weight'", out);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && !strcmp(argv[1], "reference"))
    return reference(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 5 && !strcmp(argv[1], "errors"))
    return errors(argv[2], argv[3], argv[4]);
  fprintf(stderr, "usage: embed_test reference TE_EMBED MODEL_DIR REF_DIR OUT_DIR\n"
                  "       embed_test errors TE_EMBED MODEL_DIR OUT_DIR\n");
  return 2;
}
