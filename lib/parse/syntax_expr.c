/* syntax_expr.c — recursive descent over expressions (and the token helpers of syntax.h).
 *
 * Only the shape of the text is checked here (docs/workload-text.md has the grammar); names,
 * types and shapes are checked by build_expr.c. Precedence, loosest first: || ; && ;
 * comparisons ; + - ; * / // % ; unary - ! ; all binary operators are left-associative. A minus
 * in front of a number is part of the number (-2 is one literal, as the IR printer writes it).
 * Nesting is limited (PS_MAX_DEPTH recursion, MAX_TREE_DEPTH tree height) so that neither this
 * parser nor the passes that later walk the tree run out of stack.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syntax.h"

enum { MAX_TREE_DEPTH = 1000 };

ps_tok *ps_peek(ps_parser *p) { return &p->toks[p->pos]; }
ps_tok *ps_peek_at(ps_parser *p, int k) {
  int i = p->pos + k;
  return &p->toks[i < p->ntok ? i : p->ntok - 1];
}
ps_tok *ps_next(ps_parser *p) {
  ps_tok *t = &p->toks[p->pos];
  if (t->kind != PS_EOF)
    p->pos++;
  return t;
}
bool ps_tok_is(const ps_tok *t, const char *word) {
  return t->kind == PS_NAME && (size_t)t->len == strlen(word) &&
         memcmp(t->start, word, (size_t)t->len) == 0;
}
bool ps_accept(ps_parser *p, ps_tok_kind k) {
  if (ps_peek(p)->kind != k)
    return false;
  ps_next(p);
  return true;
}

te_status ps_expected(ps_parser *p, const char *what) {
  char d[64];
  ps_tok *t = ps_peek(p);
  return ps_error(p, t->line, t->col, TE_ERR_PARSE, "expected %s, got %s", what,
                  ps_tok_desc(t, d, sizeof d));
}

bool ps_expect(ps_parser *p, ps_tok_kind k, const char *what) {
  if (ps_accept(p, k))
    return true;
  ps_expected(p, what);
  return false;
}

/* ---------------------------------------------------------------- growable lists */

bool ps_vec_push(ps_parser *p, ps_vec *a, void *x) {
  if (!x)
    return false;
  if (a->n == a->cap) {
    int cap = a->cap ? a->cap * 2 : 8;
    void **v = ir_realloc(p->ctx, a->v, sizeof *v * (size_t)cap);
    if (!v) {
      ps_error(p, 0, 0, TE_ERR_NOMEM, "out of memory");
      return false;
    }
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return true;
}

/* Moves the list into the parser's memory; frees the vec. */
void *ps_vec_take(ps_parser *p, ps_vec *a, size_t elem, int *n) {
  void *r = ps_alloc(p, elem * (size_t)(a->n ? a->n : 1));
  if (r && a->n)
    memcpy(r, a->v, elem * (size_t)a->n);
  *n = a->n;
  free(a->v);
  a->v = NULL;
  a->n = a->cap = 0;
  return r;
}

/* ---------------------------------------------------------------- nodes */

ps_node *ps_node_new(ps_parser *p, ps_node_kind k, const ps_tok *at) {
  ps_node *n = ps_alloc(p, sizeof *n);
  if (!n)
    return NULL;
  n->kind = k;
  n->line = at->line;
  n->col = at->col;
  n->naxes = -1;
  return n;
}

ps_node *ps_name_node(ps_parser *p, const ps_tok *t) {
  ps_node *n = ps_node_new(p, PS_N_NAME, t);
  if (n && !(n->name = ps_strndup(p, t->start, (size_t)t->len)))
    return NULL;
  return n;
}

/* Sets n's depth from its children; fails past the nesting limit. */
static ps_node *seal(ps_parser *p, ps_node *n) {
  if (!n)
    return NULL;
  int d = 0;
  for (int i = 0; i < n->nargs; i++)
    if (n->args[i]->depth > d)
      d = n->args[i]->depth;
  if (n->cond && n->cond->depth > d)
    d = n->cond->depth;
  n->depth = d + 1;
  if (n->depth > MAX_TREE_DEPTH) {
    ps_error(p, n->line, n->col, TE_ERR_PARSE, "expression nested too deeply (more than %d levels)",
             MAX_TREE_DEPTH);
    return NULL;
  }
  return n;
}

/* ---------------------------------------------------------------- primaries */

/* expr {',' expr} up to the closing token (which is not consumed); empty allowed if allow_empty */
bool ps_parse_list(ps_parser *p, ps_tok_kind close, ps_vec *out) {
  if (ps_peek(p)->kind == close)
    return true;
  do {
    if (!ps_vec_push(p, out, ps_parse_expr(p)))
      return false;
  } while (ps_accept(p, PS_COMMA));
  return true;
}

static ps_node *parse_literal(ps_parser *p) {
  ps_tok *t = ps_next(p);
  ps_node *n = ps_node_new(p, t->kind == PS_INT ? PS_N_INT : PS_N_FLOAT, t);
  if (!n)
    return NULL;
  n->mag = t->u;
  n->f = t->f;
  n->typed = t->typed;
  n->dtype = t->dtype;
  return seal(p, n);
}

/* axes=[k, l] inside a call */
static bool parse_axes_arg(ps_parser *p, ps_node *call) {
  ps_next(p); /* axes */
  ps_next(p); /* = */
  if (call->naxes >= 0) {
    ps_error(p, ps_peek(p)->line, ps_peek(p)->col, TE_ERR_PARSE, "axes= given twice");
    return false;
  }
  if (!ps_expect(p, PS_LBRACK, "'[' after 'axes='"))
    return false;
  ps_vec axes = {0};
  bool ok = true;
  if (ps_peek(p)->kind != PS_RBRACK)
    do {
      if (ps_peek(p)->kind != PS_NAME) {
        ps_expected(p, "a reduce axis name");
        ok = false;
        break;
      }
      ok = ps_vec_push(p, &axes, ps_name_node(p, ps_next(p)));
    } while (ok && ps_accept(p, PS_COMMA));
  ps_node **v = ps_vec_take(p, &axes, sizeof *v, &call->naxes);
  call->axes = v;
  return ok && v && ps_expect(p, PS_RBRACK, "']' after the axes");
}

/* NAME '(' args [where cond] ')': arguments, axes=[...], where cond / where=cond */
static ps_node *parse_call(ps_parser *p, ps_tok *name) {
  ps_node *n = ps_node_new(p, PS_N_CALL, name);
  if (!n || !(n->name = ps_strndup(p, name->start, (size_t)name->len)))
    return NULL;
  ps_next(p); /* ( */
  ps_vec args = {0};
  bool ok = true;
  if (ps_peek(p)->kind != PS_RPAREN) {
    for (;;) {
      if (ps_tok_is(ps_peek(p), "axes") && ps_peek_at(p, 1)->kind == PS_ASSIGN) {
        ok = parse_axes_arg(p, n);
      } else if (ps_tok_is(ps_peek(p), "where")) {
        ps_next(p);
        ps_accept(p, PS_ASSIGN);
        ok = (n->cond = ps_parse_expr(p)) != NULL;
        break;
      } else {
        ok = ps_vec_push(p, &args, ps_parse_expr(p));
      }
      if (!ok)
        break;
      if (ps_accept(p, PS_COMMA))
        continue;
      if (ps_tok_is(ps_peek(p), "where"))
        continue;
      break;
    }
  }
  n->args = ps_vec_take(p, &args, sizeof *n->args, &n->nargs);
  if (!ok || !n->args)
    return NULL;
  char what[96];
  snprintf(what, sizeof what, "')' after the arguments of '%.40s'", n->name);
  if (!ps_expect(p, PS_RPAREN, what))
    return NULL;
  return seal(p, n);
}

/* NAME '[' indices ']' */
static ps_node *parse_index(ps_parser *p, ps_tok *name) {
  ps_node *n = ps_node_new(p, PS_N_INDEX, name);
  if (!n || !(n->name = ps_strndup(p, name->start, (size_t)name->len)))
    return NULL;
  ps_next(p); /* [ */
  ps_vec idx = {0};
  bool ok = ps_parse_list(p, PS_RBRACK, &idx);
  n->args = ps_vec_take(p, &idx, sizeof *n->args, &n->nargs);
  if (!ok || !n->args || !ps_expect(p, PS_RBRACK, "']' after the indices"))
    return NULL;
  return seal(p, n);
}

/* '(' expr ')' or a tuple '(' expr ',' expr ... ')' */
static ps_node *parse_parens(ps_parser *p) {
  ps_tok *open = ps_next(p);
  ps_vec items = {0};
  bool ok = ps_parse_list(p, PS_RPAREN, &items) && ps_expect(p, PS_RPAREN, "')'");
  if (ok && items.n == 0) {
    ps_error(p, open->line, open->col, TE_ERR_PARSE, "expected an expression inside '()'");
    ok = false;
  }
  if (!ok) {
    free(items.v);
    return NULL;
  }
  if (items.n == 1) {
    ps_node *e = items.v[0];
    free(items.v);
    e->paren = true;
    return e;
  }
  ps_node *t = ps_node_new(p, PS_N_TUPLE, open);
  if (!t) {
    free(items.v);
    return NULL;
  }
  t->args = ps_vec_take(p, &items, sizeof *t->args, &t->nargs);
  return t->args ? seal(p, t) : NULL;
}

static ps_node *parse_primary(ps_parser *p) {
  ps_tok *t = ps_peek(p);
  if (t->kind == PS_INT || t->kind == PS_FLOAT)
    return parse_literal(p);
  if (t->kind == PS_LPAREN)
    return parse_parens(p);
  if (t->kind != PS_NAME || ps_tok_is(t, "where")) {
    ps_expected(p, "an expression");
    return NULL;
  }
  ps_tok_kind after = ps_peek_at(p, 1)->kind;
  ps_next(p);
  if (after == PS_LPAREN)
    return parse_call(p, t);
  if (after == PS_LBRACK)
    return parse_index(p, t);
  ps_node *n;
  if (ps_tok_is(t, "true") || ps_tok_is(t, "false")) {
    if ((n = ps_node_new(p, PS_N_BOOL, t)))
      n->mag = ps_tok_is(t, "true");
  } else if (ps_tok_is(t, "inf") || ps_tok_is(t, "nan")) {
    if ((n = ps_node_new(p, PS_N_FLOAT, t)))
      n->f = ps_tok_is(t, "inf") ? (double)INFINITY : (double)NAN;
  } else {
    n = ps_name_node(p, t);
  }
  return seal(p, n);
}

/* ---------------------------------------------------------------- operators */

static ps_node *parse_unary(ps_parser *p) {
  ps_tok *t = ps_peek(p);
  if (t->kind != PS_MINUS && t->kind != PS_NOT)
    return parse_primary(p);
  if (++p->depth > PS_MAX_DEPTH) {
    ps_error(p, t->line, t->col, TE_ERR_PARSE, "expression nested too deeply");
    return NULL;
  }
  ps_next(p);
  ps_node *a = parse_unary(p);
  p->depth--;
  if (!a)
    return NULL;
  if (t->kind == PS_MINUS && !a->paren && (a->kind == PS_N_INT || a->kind == PS_N_FLOAT)) {
    if (a->kind == PS_N_INT)
      a->neg = !a->neg; /* -5 is one literal */
    else
      a->f = -a->f;
    a->line = t->line;
    a->col = t->col;
    return a;
  }
  ps_node *n = ps_node_new(p, PS_N_UNARY, t);
  if (!n || !(n->args = ps_alloc(p, sizeof *n->args)))
    return NULL;
  n->op = t->kind;
  n->nargs = 1;
  n->args[0] = a;
  return seal(p, n);
}

static int binary_level(ps_tok_kind k) {
  switch (k) {
  case PS_OR:
    return 1;
  case PS_AND:
    return 2;
  case PS_EQ:
  case PS_NE:
  case PS_LT:
  case PS_LE:
  case PS_GT:
  case PS_GE:
    return 3;
  case PS_PLUS:
  case PS_MINUS:
    return 4;
  case PS_STAR:
  case PS_SLASH:
  case PS_FLOORDIV:
  case PS_PERCENT:
    return 5;
  default:
    return 0;
  }
}

/* Operators of level >= min, left-associative (precedence climbing). */
static ps_node *parse_binary(ps_parser *p, int min) {
  ps_node *l = min > 5 ? parse_unary(p) : parse_binary(p, min + 1);
  if (min > 5)
    return l;
  while (l && binary_level(ps_peek(p)->kind) == min) {
    ps_tok *t = ps_next(p);
    ps_node *r = parse_binary(p, min + 1);
    ps_node *n = r ? ps_node_new(p, PS_N_BINARY, t) : NULL;
    if (!n || !(n->args = ps_alloc(p, 2 * sizeof *n->args)))
      return NULL;
    n->op = t->kind;
    n->nargs = 2;
    n->args[0] = l;
    n->args[1] = r;
    l = seal(p, n);
  }
  return l;
}

ps_node *ps_parse_expr(ps_parser *p) {
  if (++p->depth > PS_MAX_DEPTH) {
    ps_error(p, ps_peek(p)->line, ps_peek(p)->col, TE_ERR_PARSE, "expression nested too deeply");
    return NULL;
  }
  ps_node *e = parse_binary(p, 1);
  p->depth--;
  return e;
}
