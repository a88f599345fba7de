/* fuzz_util.h — small helpers shared by the fuzz targets (header only, public API only).
 *
 *   fz_fail     prints what broke, the input and a detail, then aborts: libFuzzer saves the
 *               input as crash-<sha1>, and the replay driver fails its CTest test;
 *   fz_text     the input as a NUL-terminated string (malloc'd);
 *   fz_reader   structured inputs: bytes taken in order, zeros once the input is exhausted, so
 *               every input, even an empty one, decodes to some case;
 *   fz_is_bug   the statuses that are te's bugs whatever the input (an internal invariant, a back
 *               end that refused te's own code), never an answer to bad input.
 */
#ifndef TE_FUZZ_UTIL_H
#define TE_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <te/te.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fz_fail(const char *target, const char *what, const char *input,
                           const char *detail) {
  fprintf(stderr, "%s: %s\n--- input:\n%s\n--- detail:\n%s\n", target, what, input ? input : "",
          detail ? detail : "");
  abort();
}

static inline char *fz_text(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return NULL;
  memcpy(text, data, size);
  text[size] = 0;
  return text;
}

static inline int fz_is_bug(te_status s) { return s == TE_ERR_INTERNAL || s == TE_ERR_CODEGEN; }

typedef struct fz_reader {
  const uint8_t *data;
  size_t size, pos;
} fz_reader;

static inline unsigned fz_byte(fz_reader *r) { return r->pos < r->size ? r->data[r->pos++] : 0; }

/* A value in [0, n) (0 when n is 0) from one byte, or two when n > 256. */
static inline unsigned fz_below(fz_reader *r, unsigned n) {
  if (n == 0)
    return 0;
  unsigned v = fz_byte(r);
  if (n > 256)
    v = v << 8 | fz_byte(r);
  return v % n;
}

/* A value in [lo, hi]. */
static inline int64_t fz_range(fz_reader *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)fz_below(r, (unsigned)(hi - lo + 1));
}

static inline int fz_done(const fz_reader *r) { return r->pos >= r->size; }

#endif
