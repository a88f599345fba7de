/* tokenizer.c — llama2.c's tokenizer.bin: loading, BPE encoding, decoding (tokenizer.h). */
#include "tokenizer.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tl_tokenizer *sort_target; /* qsort has no context argument */

static int by_string(const void *a, const void *b) {
  return strcmp(sort_target->vocab[*(const int *)a], sort_target->vocab[*(const int *)b]);
}

static int lookup(const tl_tokenizer *t, const char *s) {
  int lo = 0, hi = t->vocab_size - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(t->vocab[t->sorted[mid]], s);
    if (c == 0)
      return t->sorted[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

static int fail(tl_tokenizer *t, FILE *f, char *err, size_t n, const char *path, const char *why,
                int at) {
  snprintf(err, n, "%s: %s (token %d of %d); not a tokenizer.bin for this model?", path, why, at,
           t->vocab_size);
  if (f)
    fclose(f);
  tl_tokenizer_close(t);
  return -1;
}

int tl_tokenizer_open(const char *path, int vocab_size, tl_tokenizer *t, char *err, size_t n) {
  memset(t, 0, sizeof *t);
  t->vocab_size = vocab_size;
  for (int b = 0; b < 256; b++)
    t->byte_pieces[b][0] = (char)b;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, n, "%s: cannot open the tokenizer (give its path with -z)", path);
    return -1;
  }
  t->vocab = calloc((size_t)vocab_size, sizeof *t->vocab);
  t->scores = malloc((size_t)vocab_size * sizeof *t->scores);
  t->sorted = malloc((size_t)vocab_size * sizeof *t->sorted);
  if (!t->vocab || !t->scores || !t->sorted)
    return fail(t, f, err, n, path, "out of memory", 0);
  int32_t maxlen;
  if (fread(&maxlen, 4, 1, f) != 1 || maxlen <= 0 || maxlen > 4096)
    return fail(t, f, err, n, path, "bad max_token_length header", 0);
  t->max_token_length = maxlen;
  for (int i = 0; i < vocab_size; i++) {
    int32_t len;
    if (fread(&t->scores[i], 4, 1, f) != 1 || fread(&len, 4, 1, f) != 1)
      return fail(t, f, err, n, path, "truncated", i);
    if (len < 0 || len > maxlen)
      return fail(t, f, err, n, path, "a token longer than max_token_length", i);
    if (!(t->vocab[i] = malloc((size_t)len + 1)))
      return fail(t, f, err, n, path, "out of memory", i);
    if (len && fread(t->vocab[i], (size_t)len, 1, f) != 1)
      return fail(t, f, err, n, path, "truncated", i);
    t->vocab[i][len] = '\0';
    t->sorted[i] = i;
  }
  fclose(f);
  sort_target = t;
  qsort(t->sorted, (size_t)vocab_size, sizeof *t->sorted, by_string);
  return 0;
}

void tl_tokenizer_close(tl_tokenizer *t) {
  for (int i = 0; t->vocab && i < t->vocab_size; i++)
    free(t->vocab[i]);
  free(t->vocab);
  free(t->scores);
  free(t->sorted);
  memset(t, 0, sizeof *t);
}

/* The tokens of each code point: its vocabulary entry, else one byte token per byte (a code
   point is cut after 4 bytes, as run.c does with stray continuation bytes). */
static int split_code_points(const tl_tokenizer *t, const char *text, int *tokens, int n) {
  char cp[8];
  size_t len = 0;
  for (const char *c = text; *c; c++) {
    if (((unsigned char)*c & 0xC0) != 0x80)
      len = 0;
    cp[len++] = *c;
    cp[len] = '\0';
    if (((unsigned char)c[1] & 0xC0) == 0x80 && len < 4)
      continue;
    int id = lookup(t, cp);
    if (id >= 0) {
      tokens[n++] = id;
    } else {
      for (size_t b = 0; b < len; b++)
        tokens[n++] = (unsigned char)cp[b] + 3;
    }
    len = 0;
  }
  return n;
}

int tl_encode(const tl_tokenizer *t, const char *text, int bos, int eos, int *tokens) {
  char *pair = malloc((size_t)t->max_token_length * 2 + 3);
  if (!pair)
    return -1;
  int n = 0;
  if (bos)
    tokens[n++] = 1;
  if (text[0] != '\0')
    tokens[n++] = lookup(t, " ");
  n = split_code_points(t, text, tokens, n);
  for (;;) { /* merge the best-scoring neighbours (the first of equals) until none merges */
    float best = -1e10f;
    int best_id = -1, best_at = -1;
    for (int i = 0; i + 1 < n; i++) {
      snprintf(pair, (size_t)t->max_token_length * 2 + 3, "%s%s", t->vocab[tokens[i]],
               t->vocab[tokens[i + 1]]);
      int id = lookup(t, pair);
      if (id >= 0 && t->scores[id] > best)
        best = t->scores[id], best_id = id, best_at = i;
    }
    if (best_at < 0)
      break;
    tokens[best_at] = best_id;
    memmove(tokens + best_at + 1, tokens + best_at + 2, sizeof(int) * (size_t)(n - best_at - 2));
    n--;
  }
  if (eos)
    tokens[n++] = 2;
  free(pair);
  return n;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  c = (char)toupper((unsigned char)c);
  return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

const char *tl_decode(const tl_tokenizer *t, int prev, int token) {
  const char *piece = t->vocab[token];
  if (prev == 1 && piece[0] == ' ')
    piece++;
  /* "<0xHH>" is the byte HH; as run.c's sscanf("<0x%02hhX>"), one or two hex digits after
     "<0x" suffice (the closing '>' is not checked) */
  if (!strncmp(piece, "<0x", 3) && hex_digit(piece[3]) >= 0) {
    int v = hex_digit(piece[3]);
    if (hex_digit(piece[4]) >= 0)
      v = v * 16 + hex_digit(piece[4]);
    return t->byte_pieces[v];
  }
  return piece;
}

void tl_print_piece(const char *piece) {
  if (!piece || !piece[0])
    return;
  if (!piece[1] && !(isprint((unsigned char)piece[0]) || isspace((unsigned char)piece[0])))
    return;
  fputs(piece, stdout);
}
