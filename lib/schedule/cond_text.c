/* cond_text.c — reading back a te_specialize condition as the trace writes it.
 *
 * The trace writes a condition with the IR printer ("N % 16 == 0 && rs == 1"); replay reads it
 * with this small recursive-descent parser, over the printer's grammar for what a condition
 * may hold (te_specialize refuses anything else, by checking that its condition reads back to
 * the same expression):
 *   or   := and ('||' and)*            and := cmp ('&&' cmp)*
 *   cmp  := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)?
 *   sum  := prod (('+' | '-') prod)*   prod := unary (('*' | '/' | '//' | '%') unary)*
 *   unary:= '!' unary | '-' NUMBER | atom
 *   atom := NUMBER | 'true' | 'false' | NAME | ('min' | 'max') '(' or ',' or ')' | '(' or ')'
 * NUMBER is an integer (i64) or a float (f64; f32 with an 'f' suffix); a constant next to an
 * operand of another dtype takes that dtype, as the public constructors promote it. NAME is a
 * size, stride or parameter of the schedule's computation (sch_condition_var). The parser lives
 * in the schedule layer because replay does (the workload parser is a layer above).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sch.h"

typedef struct cparse {
  te_schedule *s;
  const char *fn, *text, *p;
  bool failed;
} cparse;

static te_expr *fail(cparse *c, const char *what) {
  if (!c->failed && c->fn)
    ir_error(c->s->ctx, TE_ERR_PARSE, "%s: condition '%s': %s at offset %d", c->fn, c->text, what,
             (int)(c->p - c->text));
  c->failed = true;
  return NULL;
}

static void skip_blanks(cparse *c) {
  while (*c->p == ' ')
    c->p++;
}

/* Consumes op when the text continues with it (and, for a one-character op, not with a longer
   operator starting the same way: '<' is not '<='). */
static bool eat(cparse *c, const char *op) {
  skip_blanks(c);
  size_t n = strlen(op);
  if (strncmp(c->p, op, n) != 0)
    return false;
  if (n == 1 && strchr("<>=!/", op[0]) && (c->p[1] == '=' || (op[0] == '/' && c->p[1] == '/')))
    return false;
  c->p += n;
  return true;
}

static bool is_name_char(char ch) { return isalnum((unsigned char)ch) || ch == '_' || ch == '.'; }

/* A constant of value e's in dtype t (ints to ints or floats, floats to floats). */
static te_expr *coerce(cparse *c, te_expr *e, te_dtype t) {
  te_ctx *ctx = c->s->ctx;
  if (e->kind == IR_INT && !ir_is_bool(e->dtype) && !ir_is_bool(t))
    return t.code == kDLFloat ? ir_float(ctx, t, (double)e->u.i) : ir_int(ctx, t, e->u.i);
  if (e->kind == IR_FLOAT && t.code == kDLFloat)
    return ir_float(ctx, t, e->u.f);
  return e;
}

static te_expr *binary(cparse *c, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  if (!ir_dtype_eq(a->dtype, b->dtype)) {
    if (a->kind == IR_INT || a->kind == IR_FLOAT)
      a = coerce(c, a, b->dtype);
    else
      b = coerce(c, b, a->dtype);
  }
  if (!a || !b)
    return NULL;
  te_dtype t = a->dtype;
  bool ok = ir_dtype_eq(t, b->dtype);
  if (k == IR_AND || k == IR_OR)
    ok = ok && ir_is_bool(t);
  else if (k == IR_DIV)
    ok = ok && t.code == kDLFloat;
  else if (k == IR_FLOORDIV || k == IR_FLOORMOD)
    ok = ok && (t.code == kDLInt || t.code == kDLUInt) && !ir_is_bool(t);
  else if (k != IR_EQ && k != IR_NE)
    ok = ok && !ir_is_bool(t);
  if (!ok)
    return fail(c, "operands of these types do not combine so");
  return ir_binary(k, a, b);
}

static te_expr *parse_or(cparse *c);

static te_expr *number(cparse *c) {
  const char *start = c->p;
  while (isdigit((unsigned char)*c->p))
    c->p++;
  bool is_float = *c->p == '.' || *c->p == 'e' || *c->p == 'E';
  te_ctx *ctx = c->s->ctx;
  char *end;
  errno = 0;
  if (!is_float) {
    long long v = strtoll(start, &end, 10);
    if (errno == ERANGE)
      return fail(c, "integer out of range");
    c->p = end;
    return ir_i64(ctx, v);
  }
  double v = strtod(start, &end);
  c->p = end;
  bool f32 = *c->p == 'f';
  if (f32)
    c->p++;
  return ir_float(ctx, f32 ? TE_F32 : TE_F64, v);
}

static te_expr *atom(cparse *c) {
  skip_blanks(c);
  if (eat(c, "(")) {
    te_expr *e = parse_or(c);
    return e && eat(c, ")") ? e : fail(c, "expected ')'");
  }
  if (isdigit((unsigned char)*c->p))
    return number(c);
  if (!is_name_char(*c->p))
    return fail(c, "expected a number, a name or '('");
  const char *start = c->p;
  while (is_name_char(*c->p))
    c->p++;
  char name[128];
  size_t n = (size_t)(c->p - start);
  if (n >= sizeof name)
    return fail(c, "name too long");
  memcpy(name, start, n);
  name[n] = '\0';
  if (strcmp(name, "true") == 0 || strcmp(name, "false") == 0)
    return ir_bool(c->s->ctx, name[0] == 't');
  if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
    if (!eat(c, "("))
      return fail(c, "expected '(' after min/max");
    te_expr *a = parse_or(c);
    if (!a || !eat(c, ","))
      return fail(c, "expected ','");
    te_expr *b = parse_or(c);
    if (!b || !eat(c, ")"))
      return fail(c, "expected ')'");
    return binary(c, name[1] == 'i' ? IR_MIN : IR_MAX, a, b);
  }
  te_expr *v = sch_condition_var(c->s, name, c->fn);
  if (!v)
    c->failed = true;
  return v;
}

static te_expr *unary(cparse *c) {
  if (eat(c, "!")) {
    te_expr *a = unary(c);
    if (!a)
      return NULL;
    return ir_is_bool(a->dtype) ? ir_not(a) : fail(c, "'!' of a value that is no bool");
  }
  skip_blanks(c);
  if (*c->p == '-' && isdigit((unsigned char)c->p[1])) {
    c->p++;
    te_expr *e = number(c);
    if (!e)
      return NULL;
    return e->kind == IR_INT ? ir_i64(c->s->ctx, -e->u.i) : ir_float(c->s->ctx, e->dtype, -e->u.f);
  }
  return atom(c);
}

static te_expr *prod(cparse *c) {
  te_expr *e = unary(c);
  while (e) {
    ir_expr_kind k;
    if (eat(c, "*"))
      k = IR_MUL;
    else if (eat(c, "//"))
      k = IR_FLOORDIV;
    else if (eat(c, "/"))
      k = IR_DIV;
    else if (eat(c, "%"))
      k = IR_FLOORMOD;
    else
      return e;
    e = binary(c, k, e, unary(c));
  }
  return NULL;
}

static te_expr *sum(cparse *c) {
  te_expr *e = prod(c);
  while (e) {
    skip_blanks(c);
    ir_expr_kind k;
    if (eat(c, "+"))
      k = IR_ADD;
    else if (eat(c, "-"))
      k = IR_SUB;
    else
      return e;
    e = binary(c, k, e, prod(c));
  }
  return NULL;
}

static te_expr *cmp(cparse *c) {
  te_expr *a = sum(c);
  if (!a)
    return NULL;
  static const struct {
    const char *op;
    ir_expr_kind k;
  } ops[] = {{"==", IR_EQ}, {"!=", IR_NE}, {"<=", IR_LE},
             {">=", IR_GE}, {"<", IR_LT},  {">", IR_GT}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (eat(c, ops[i].op))
      return binary(c, ops[i].k, a, sum(c));
  return a;
}

static te_expr *conjunction(cparse *c) {
  te_expr *e = cmp(c);
  while (e && eat(c, "&&"))
    e = binary(c, IR_AND, e, cmp(c));
  return e;
}

static te_expr *parse_or(cparse *c) {
  te_expr *e = conjunction(c);
  while (e && eat(c, "||"))
    e = binary(c, IR_OR, e, conjunction(c));
  return e;
}

te_expr *sch_condition_parse(te_schedule *s, const char *text, const char *fn) {
  cparse c = {.s = s, .fn = fn, .text = text, .p = text};
  te_expr *e = parse_or(&c);
  if (!e)
    return c.failed ? NULL : fail(&c, "expected an expression");
  skip_blanks(&c);
  if (*c.p)
    return fail(&c, "unexpected text");
  if (!ir_is_bool(e->dtype))
    return fail(&c, "a condition must be a bool");
  return e;
}
