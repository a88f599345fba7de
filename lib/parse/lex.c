/* lex.c — the parser's memory and messages, and the lexer: workload text -> tokens.
 *
 * Tokens: names ([A-Za-z_][A-Za-z0-9_]*), numbers (123, 1.5, 1e-3, each with an optional dtype
 * suffix: 1.5f, 2i32, 0.5f64), punctuation and operators (( ) [ ] , ; : = == != < <= > >= + -
 * * / // % && || !). Blanks and `#` comments (to the end of the line) separate tokens. Every
 * token keeps its line and column (both from 1) for messages.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* ---------------------------------------------------------------- memory */

struct ps_block {
  ps_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void *ps_alloc(ps_parser *p, size_t size) {
  size = (size + 15) & ~(size_t)15;
  ps_block *b = p->blocks;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > 16384 ? size : 16384;
    b = ir_malloc(p->ctx, sizeof *b + cap);
    if (!b) {
      ps_error(p, 0, 0, TE_ERR_NOMEM, "out of memory");
      return NULL;
    }
    b->next = p->blocks;
    b->used = 0;
    b->cap = cap;
    p->blocks = b;
  }
  void *r = b->data + b->used;
  b->used += size;
  memset(r, 0, size);
  return r;
}

char *ps_strndup(ps_parser *p, const char *s, size_t n) {
  char *r = ps_alloc(p, n + 1);
  if (r)
    memcpy(r, s, n);
  return r;
}

void ps_parser_free(ps_parser *p) {
  while (p->blocks) {
    ps_block *next = p->blocks->next;
    free(p->blocks);
    p->blocks = next;
  }
  free(p->toks);
  p->toks = NULL;
}

te_status ps_error(ps_parser *p, int line, int col, te_status st, const char *fmt, ...) {
  if (p->status != TE_OK)
    return p->status;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->status = st;
  if (line > 0)
    ir_error(p->ctx, st, "te_parse: %d:%d: %s", line, col, msg);
  else
    ir_error(p->ctx, st, "te_parse: %s", msg);
  return st;
}

const char *ps_tok_desc(const ps_tok *t, char *buf, size_t size) {
  int n = t->len > 40 ? 40 : t->len;
  switch (t->kind) {
  case PS_EOF:
    snprintf(buf, size, "end of input");
    break;
  case PS_NAME:
    snprintf(buf, size, "name '%.*s'", n, t->start);
    break;
  case PS_INT:
  case PS_FLOAT:
    snprintf(buf, size, "number '%.*s'", n, t->start);
    break;
  default:
    snprintf(buf, size, "'%.*s'", n, t->start);
    break;
  }
  return buf;
}

/* ---------------------------------------------------------------- dtypes */

static const struct {
  const char *name;
  te_dtype t;
} dtypes[] = {
    {"i8", TE_I8},   {"i16", TE_I16}, {"i32", TE_I32},   {"i64", TE_I64}, {"u8", TE_U8},
    {"u16", TE_U16}, {"u32", TE_U32}, {"u64", TE_U64},   {"f16", TE_F16}, {"bf16", TE_BF16},
    {"f32", TE_F32}, {"f64", TE_F64}, {"bool", TE_BOOL},
};

bool ps_dtype_named(const char *name, size_t len, te_dtype *out) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, name, len) == 0) {
      if (out)
        *out = dtypes[i].t;
      return true;
    }
  return false;
}

/* ---------------------------------------------------------------- lexer */

static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static ps_tok *push(ps_parser *p, ps_tok_kind k, const char *s, int len, int line, int col) {
  if (p->ntok == p->cap) {
    int cap = p->cap ? p->cap * 2 : 64;
    ps_tok *t = ir_realloc(p->ctx, p->toks, sizeof *t * (size_t)cap);
    if (!t) {
      ps_error(p, 0, 0, TE_ERR_NOMEM, "out of memory");
      return NULL;
    }
    p->toks = t;
    p->cap = cap;
  }
  ps_tok *t = &p->toks[p->ntok++];
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->start = s;
  t->len = len;
  t->line = line;
  t->col = col;
  return t;
}

/* A number at s: digits [. digits] [e [+-] digits] [suffix]. Returns its length, 0 on error. */
static int lex_number(ps_parser *p, const char *s, int line, int col) {
  int n = 0;
  bool is_float = false;
  while (is_digit(s[n]))
    n++;
  if (s[n] == '.' && is_digit(s[n + 1])) {
    is_float = true;
    for (n++; is_digit(s[n]); n++) {
    }
  }
  if ((s[n] == 'e' || s[n] == 'E') &&
      (is_digit(s[n + 1]) || ((s[n + 1] == '+' || s[n + 1] == '-') && is_digit(s[n + 2])))) {
    is_float = true;
    n += s[n + 1] == '+' || s[n + 1] == '-' ? 2 : 1;
    while (is_digit(s[n]))
      n++;
  }
  int digits = n;
  while (is_alpha(s[n]) || is_digit(s[n]))
    n++;
  ps_tok *t = push(p, is_float ? PS_FLOAT : PS_INT, s, n, line, col);
  if (!t)
    return 0;
  if (n > digits) {
    const char *suf = s + digits;
    size_t sl = (size_t)(n - digits);
    t->typed = true;
    if (sl == 1 && suf[0] == 'f') {
      t->dtype = TE_F32;
    } else if (!ps_dtype_named(suf, sl, &t->dtype) || t->dtype.bits == 1) {
      ps_error(p, line, col, TE_ERR_PARSE, "unknown suffix '%.*s' of number '%.*s'", (int)sl, suf,
               digits, s);
      return 0;
    }
    if (is_float && t->dtype.code != kDLFloat && t->dtype.code != kDLBfloat) {
      ps_error(p, line, col, TE_ERR_PARSE, "number '%.*s' has a fraction but an integer suffix", n,
               s);
      return 0;
    }
  }
  char buf[400];
  if (is_float) {
    if (digits >= (int)sizeof buf) {
      ps_error(p, line, col, TE_ERR_PARSE, "number too long");
      return 0;
    }
    memcpy(buf, s, (size_t)digits);
    buf[digits] = 0;
    t->f = strtod(buf, NULL);
  } else {
    uint64_t v = 0;
    for (int i = 0; i < digits; i++) {
      uint64_t d = (uint64_t)(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10) {
        ps_error(p, line, col, TE_ERR_PARSE, "integer '%.*s' is too large",
                 digits > 40 ? 40 : digits, s);
        return 0;
      }
      v = v * 10 + d;
    }
    t->u = v;
  }
  return n;
}

/* Two-character operators first, then one-character ones. */
static const struct {
  const char *text;
  ps_tok_kind kind;
} ops[] = {
    {"==", PS_EQ},    {"!=", PS_NE},     {"<=", PS_LE},    {">=", PS_GE},    {"//", PS_FLOORDIV},
    {"&&", PS_AND},   {"||", PS_OR},     {"(", PS_LPAREN}, {")", PS_RPAREN}, {"[", PS_LBRACK},
    {"]", PS_RBRACK}, {",", PS_COMMA},   {";", PS_SEMI},   {":", PS_COLON},  {"=", PS_ASSIGN},
    {"<", PS_LT},     {">", PS_GT},      {"+", PS_PLUS},   {"-", PS_MINUS},  {"*", PS_STAR},
    {"/", PS_SLASH},  {"%", PS_PERCENT}, {"!", PS_NOT},
};

te_status ps_lex(ps_parser *p, const char *text) {
  int line = 1;
  const char *bol = text;
  const char *s = text;
  for (;;) {
    char c = *s;
    int col = (int)(s - bol) + 1;
    if (c == 0)
      break;
    if (c == '\n') {
      line++;
      bol = ++s;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      s++;
      continue;
    }
    if (c == '#') {
      while (*s && *s != '\n')
        s++;
      continue;
    }
    if (is_alpha(c)) {
      int n = 1;
      while (is_alpha(s[n]) || is_digit(s[n]))
        n++;
      if (!push(p, PS_NAME, s, n, line, col))
        return p->status;
      s += n;
      continue;
    }
    if (is_digit(c)) {
      int n = lex_number(p, s, line, col);
      if (!n)
        return p->status;
      s += n;
      continue;
    }
    size_t i = 0;
    for (; i < sizeof ops / sizeof ops[0]; i++)
      if (strncmp(s, ops[i].text, strlen(ops[i].text)) == 0)
        break;
    if (i == sizeof ops / sizeof ops[0]) {
      unsigned char uc = (unsigned char)c;
      if (uc >= 0x20 && uc < 0x7f)
        return ps_error(p, line, col, TE_ERR_PARSE, "unexpected character '%c'", c);
      return ps_error(p, line, col, TE_ERR_PARSE, "unexpected byte 0x%02x", uc);
    }
    int n = (int)strlen(ops[i].text);
    if (!push(p, ops[i].kind, s, n, line, col))
      return p->status;
    s += n;
  }
  if (!push(p, PS_EOF, s, 0, line, (int)(s - bol) + 1))
    return p->status;
  return TE_OK;
}

/* ---------------------------------------------------------------- reserved words */

bool ps_is_keyword(const char *s) {
  return !strcmp(s, "where") || !strcmp(s, "true") || !strcmp(s, "false") || !strcmp(s, "inf") ||
         !strcmp(s, "nan");
}

bool ps_is_builtin_fn(const char *s) {
  static const char *const fns[] = {"select", "min", "max", "sum", "prod"};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if (!strcmp(s, fns[i]))
      return true;
  return ps_dtype_named(s, strlen(s), NULL) || ir_intrin_lookup(s) >= 0;
}
