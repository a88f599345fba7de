/* tokenizer.c — BERT's WordPiece tokenizer (tokenizer.h): the vocabulary as an open-addressing
 * hash table, the normalization into code points, and the greedy longest-match split. */
#include "tokenizer.h"

#include "unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_WORD_CHARS = 100 }; /* longer words are [UNK] (max_input_chars_per_word) */

struct embed_vocab {
  char *text;       /* the file, its newlines replaced by NULs */
  const char **tok; /* tok[id] */
  int32_t n;        /* tokens */
  int32_t *slots;   /* hash table of ids, -1 empty; a power of two in size */
  uint32_t mask;
  int32_t cls, sep, unk;
};

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* The id of the n bytes at s, or -1. */
static int32_t vocab_find(const embed_vocab *v, const char *s, size_t n) {
  for (uint32_t h = hash_bytes(s, n) & v->mask;; h = (h + 1) & v->mask) {
    int32_t id = v->slots[h];
    if (id < 0)
      return -1;
    if (strlen(v->tok[id]) == n && memcmp(v->tok[id], s, n) == 0)
      return id;
  }
}

static char *read_file(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
    buf[n] = '\0';
    *len = n;
  } else {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

static int vocab_index(embed_vocab *v, long len) {
  int32_t lines = 0;
  for (long i = 0; i < len; i++)
    lines += v->text[i] == '\n';
  lines += len > 0 && v->text[len - 1] != '\n';
  uint32_t size = 1;
  while (size < 2u * (uint32_t)lines + 2)
    size *= 2;
  v->tok = malloc(sizeof *v->tok * (size_t)(lines + 1));
  v->slots = malloc(sizeof *v->slots * size);
  if (!v->tok || !v->slots)
    return 0;
  memset(v->slots, 0xFF, sizeof *v->slots * size);
  v->mask = size - 1;
  char *p = v->text, *end = v->text + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      nl = end;
    *nl = '\0';
    if (nl > p && nl[-1] == '\r')
      nl[-1] = '\0';
    v->tok[v->n] = p;
    size_t n = strlen(p);
    uint32_t h = hash_bytes(p, n) & v->mask;
    while (v->slots[h] >= 0)
      h = (h + 1) & v->mask;
    if (vocab_find(v, p, n) < 0) /* a duplicate line keeps its first id, as HF's loader */
      v->slots[h] = v->n;
    v->n++;
    p = nl + 1;
  }
  return 1;
}

embed_vocab *embed_vocab_load(const char *path, char *err, size_t errlen) {
  embed_vocab *v = calloc(1, sizeof *v);
  long len = 0;
  if (!v || !(v->text = read_file(path, &len))) {
    snprintf(err, errlen, "%s: cannot read the vocabulary", path);
    embed_vocab_free(v);
    return NULL;
  }
  if (!vocab_index(v, len)) {
    snprintf(err, errlen, "%s: out of memory", path);
    embed_vocab_free(v);
    return NULL;
  }
  static const char *const special[] = {"[CLS]", "[SEP]", "[UNK]", "[PAD]"};
  int32_t ids[4];
  for (int i = 0; i < 4; i++)
    if ((ids[i] = vocab_find(v, special[i], strlen(special[i]))) < 0) {
      snprintf(err, errlen, "%s: the vocabulary (%d tokens) has no %s token", path, (int)v->n,
               special[i]);
      embed_vocab_free(v);
      return NULL;
    }
  v->cls = ids[0], v->sep = ids[1], v->unk = ids[2];
  return v;
}

void embed_vocab_free(embed_vocab *v) {
  if (!v)
    return;
  free(v->text);
  free(v->tok);
  free(v->slots);
  free(v);
}

int32_t embed_vocab_size(const embed_vocab *v) { return v->n; }

const char *embed_vocab_token(const embed_vocab *v, int32_t id) {
  return id >= 0 && id < v->n ? v->tok[id] : NULL;
}

/* Steps 1-3 of tokenizer.h: text -> code points (cps has room for 3 * TE_UC_FOLD_MAX per input
   byte). Returns the count, or -1 at invalid UTF-8 (its offset in *bad). */
static long normalize(const char *text, long len, uint32_t *cps, long *bad) {
  long n = 0;
  for (long i = 0; i < len;) {
    uint32_t cp;
    int k = uc_decode_utf8((const unsigned char *)text + i, len - i, &cp);
    if (k == 0) {
      *bad = i;
      return -1;
    }
    i += k;
    if (cp == 0 || cp == 0xFFFD || uc_is_control(cp))
      continue;
    if (uc_is_space(cp)) {
      cps[n++] = ' ';
      continue;
    }
    int cjk = uc_is_cjk(cp);
    if (cjk)
      cps[n++] = ' ';
    n += uc_fold(cp, cps + n);
    if (cjk)
      cps[n++] = ' ';
  }
  return n;
}

typedef struct {
  int32_t *ids;
  int max, n, full; /* room, written, produced before the cut */
} id_sink;

static void emit(id_sink *s, int32_t id) {
  if (s->n < s->max)
    s->ids[s->n++] = id;
  s->full++;
}

/* Step 5 for one word of nchars code points, given as UTF-8 in w[0 .. nbytes) with the byte
   offset of each character in off[0 .. nchars] (off[nchars] == nbytes). */
static void wordpiece(const embed_vocab *v, const char *w, const int *off, int nchars,
                      char *scratch, id_sink *s) {
  if (nchars > MAX_WORD_CHARS) {
    emit(s, v->unk);
    return;
  }
  int32_t pieces[MAX_WORD_CHARS];
  int np = 0;
  for (int start = 0; start < nchars;) {
    int end = nchars;
    int32_t id = -1;
    for (; end > start; end--) {
      size_t n = (size_t)(off[end] - off[start]), pre = start > 0 ? 2 : 0;
      memcpy(scratch, "##", pre);
      memcpy(scratch + pre, w + off[start], n);
      if ((id = vocab_find(v, scratch, pre + n)) >= 0)
        break;
    }
    if (id < 0) {
      emit(s, v->unk);
      return;
    }
    pieces[np++] = id;
    start = end;
  }
  for (int i = 0; i < np; i++)
    emit(s, pieces[i]);
}

/* Step 4 and 5: words of the normalized code points. */
static void split_words(const embed_vocab *v, const uint32_t *cps, long n, char *utf8, int *off,
                        char *scratch, id_sink *s) {
  for (long i = 0; i < n;) {
    if (cps[i] == ' ') {
      i++;
      continue;
    }
    long end = i + 1;
    if (!uc_is_punct(cps[i]))
      while (end < n && cps[end] != ' ' && !uc_is_punct(cps[end]))
        end++;
    int nchars = (int)(end - i) > MAX_WORD_CHARS ? MAX_WORD_CHARS + 1 : (int)(end - i);
    int bytes = 0;
    for (int c = 0; c < nchars; c++) {
      off[c] = bytes;
      bytes += uc_encode_utf8(cps[i + c], utf8 + bytes);
    }
    off[nchars] = bytes;
    wordpiece(v, utf8, off, nchars, scratch, s);
    i = end;
  }
}

int embed_tokenize(const embed_vocab *v, const char *text, long len, int32_t *ids, int max_ids,
                   int *full, char *err, size_t errlen) {
  uint32_t *cps = malloc(sizeof *cps * (size_t)(3 * TE_UC_FOLD_MAX * len + 1));
  if (!cps) {
    snprintf(err, errlen, "out of memory tokenizing %ld bytes", len);
    return -1;
  }
  long bad = 0, n = normalize(text, len, cps, &bad);
  if (n < 0) {
    snprintf(err, errlen, "invalid UTF-8 at byte %ld", bad + 1);
    free(cps);
    return -1;
  }
  /* A word is cut at MAX_WORD_CHARS + 1 characters before encoding (it is [UNK] then). */
  char utf8[4 * (MAX_WORD_CHARS + 1)], scratch[2 + 4 * (MAX_WORD_CHARS + 1)];
  int off[MAX_WORD_CHARS + 2];
  id_sink s = {ids, max_ids - 1, 0, 0}; /* room kept for [SEP] */
  emit(&s, v->cls);
  split_words(v, cps, n, utf8, off, scratch, &s);
  free(cps);
  ids[s.n++] = v->sep;
  *full = s.full + 1;
  return s.n;
}
