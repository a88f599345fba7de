/* unicode.h — the character classes and the folding that te-embed's tokenizer needs.
 *
 * The tables (unicode_tables.c) are generated from Python's unicodedata by
 * gen_unicode_tables.py; this header's functions look code points up in them.
 */
#ifndef TE_EMBED_UNICODE_H
#define TE_EMBED_UNICODE_H

#include <stdint.h>

enum { TE_UC_FOLD_MAX = 4 };

typedef struct te_uc_range {
  uint32_t first, last;
} te_uc_range;

typedef struct te_uc_fold_entry {
  uint32_t cp;
  int n; /* 0 ... TE_UC_FOLD_MAX */
  uint32_t to[TE_UC_FOLD_MAX];
} te_uc_fold_entry;

extern const te_uc_fold_entry te_uc_fold[];
extern const int te_uc_fold_count;
extern const te_uc_range te_uc_control[], te_uc_space[], te_uc_mark[], te_uc_punct[];
extern const int te_uc_control_count, te_uc_space_count, te_uc_mark_count, te_uc_punct_count;

/* Category C* except \t \n \r (removed by BERT's text cleaning). */
int uc_is_control(uint32_t cp);
/* \t \n \r and categories Zs, Zl, Zp. */
int uc_is_space(uint32_t cp);
/* ASCII punctuation or category P* (a token of its own). */
int uc_is_punct(uint32_t cp);
/* The CJK ideograph blocks BERT surrounds with spaces (its _is_chinese_char). */
int uc_is_cjk(uint32_t cp);
/* Writes cp decomposed (NFD), without its nonspacing marks, lowercased into out (room for
   TE_UC_FOLD_MAX code points) and returns the count (0 for a mark on its own). */
int uc_fold(uint32_t cp, uint32_t out[TE_UC_FOLD_MAX]);

/* Decodes one UTF-8 character of s[0 .. n): its code point in *cp and its length, or 0 for a
   malformed sequence (overlong, a surrogate, past U+10FFFF, truncated). */
int uc_decode_utf8(const unsigned char *s, long n, uint32_t *cp);
/* Writes cp as UTF-8 into out (4 bytes of room) and returns the length. */
int uc_encode_utf8(uint32_t cp, char out[4]);

#endif
