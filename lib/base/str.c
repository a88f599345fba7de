/* str.c — a growable malloc'd string for printers and messages, and the hash of strings.
 *
 * Out of memory (TE_ERR_NOMEM on the string's context) sets oom and drops further text;
 * ir_str_take then returns NULL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static bool reserve(ir_str *s, size_t extra) {
  if (s->oom)
    return false;
  if (s->len + extra + 1 <= s->cap)
    return true;
  size_t cap = s->cap ? s->cap : 64;
  while (cap < s->len + extra + 1)
    cap *= 2;
  char *p = ir_realloc(s->ctx, s->buf, cap);
  if (!p) {
    s->oom = true;
    return false;
  }
  s->buf = p;
  s->cap = cap;
  return true;
}

void ir_str_puts(ir_str *s, const char *t) {
  size_t n = strlen(t);
  if (!reserve(s, n))
    return;
  memcpy(s->buf + s->len, t, n + 1);
  s->len += n;
}

void ir_str_printf(ir_str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof small) {
    ir_str_puts(s, small);
    return;
  }
  if (!reserve(s, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  s->len += (size_t)n;
}

char *ir_str_take(ir_str *s) {
  char *r = NULL;
  if (!s->oom) {
    if (!s->buf)
      reserve(s, 0);
    if (s->buf)
      s->buf[s->len] = '\0';
    r = s->buf;
  } else {
    free(s->buf);
  }
  s->buf = NULL;
  s->len = s->cap = 0;
  s->oom = false;
  return r;
}

void ir_str_free(ir_str *s) {
  free(s->buf);
  s->buf = NULL;
  s->len = s->cap = 0;
  s->oom = false;
}

uint64_t ir_str_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, 64 bits: offset basis and prime */
  for (; s && *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}
