/* unicode.c — lookups in the generated tables (unicode_tables.c), Hangul decomposition, UTF-8. */
#include "unicode.h"

static int in_ranges(const te_uc_range *r, int n, uint32_t cp) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (cp < r[mid].first)
      hi = mid - 1;
    else if (cp > r[mid].last)
      lo = mid + 1;
    else
      return 1;
  }
  return 0;
}

int uc_is_control(uint32_t cp) { return in_ranges(te_uc_control, te_uc_control_count, cp); }
int uc_is_space(uint32_t cp) { return in_ranges(te_uc_space, te_uc_space_count, cp); }
int uc_is_punct(uint32_t cp) { return in_ranges(te_uc_punct, te_uc_punct_count, cp); }

int uc_is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* Hangul syllables decompose arithmetically into two or three jamo (Unicode 3.12), none of
   them a mark nor uppercase: the table leaves the 11,172 syllables out. */
static int hangul_decompose(uint32_t cp, uint32_t out[TE_UC_FOLD_MAX]) {
  enum { S_BASE = 0xAC00, L_BASE = 0x1100, V_BASE = 0x1161, T_BASE = 0x11A7 };
  enum { V_COUNT = 21, T_COUNT = 28, N_COUNT = V_COUNT * T_COUNT };
  uint32_t s = cp - S_BASE;
  out[0] = L_BASE + s / N_COUNT;
  out[1] = V_BASE + (s % N_COUNT) / T_COUNT;
  if (s % T_COUNT == 0)
    return 2;
  out[2] = T_BASE + s % T_COUNT;
  return 3;
}

int uc_fold(uint32_t cp, uint32_t out[TE_UC_FOLD_MAX]) {
  if (cp >= 0xAC00 && cp <= 0xD7A3)
    return hangul_decompose(cp, out);
  if (in_ranges(te_uc_mark, te_uc_mark_count, cp))
    return 0;
  int lo = 0, hi = te_uc_fold_count - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (cp < te_uc_fold[mid].cp)
      hi = mid - 1;
    else if (cp > te_uc_fold[mid].cp)
      lo = mid + 1;
    else {
      for (int i = 0; i < te_uc_fold[mid].n; i++)
        out[i] = te_uc_fold[mid].to[i];
      return te_uc_fold[mid].n;
    }
  }
  out[0] = cp;
  return 1;
}

int uc_decode_utf8(const unsigned char *s, long n, uint32_t *cp) {
  if (n <= 0)
    return 0;
  unsigned c = s[0];
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || len > n)
    return 0;
  uint32_t v = len == 1 ? c : c & (0x3Fu >> (len - 1));
  for (int i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0;
    v = v << 6 | (s[i] & 0x3F);
  }
  static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < least[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
    return 0;
  *cp = v;
  return len;
}

int uc_encode_utf8(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}
