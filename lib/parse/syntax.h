/* syntax.h — helpers shared by the two halves of the syntax parser: syntax_expr.c
 * (expressions, and these helpers) and syntax.c (statements and declarations). Internal.
 */
#ifndef TE_PS_SYNTAX_H
#define TE_PS_SYNTAX_H

#include "parse.h"

/* The current token, the one k ahead (the last, EOF, past the end), and consuming one. */
ps_tok *ps_peek(ps_parser *);
ps_tok *ps_peek_at(ps_parser *, int k);
ps_tok *ps_next(ps_parser *);
/* A name token spelling word. */
bool ps_tok_is(const ps_tok *, const char *word);
/* Consumes a token of kind k if it is next. */
bool ps_accept(ps_parser *, ps_tok_kind k);
/* Records "expected WHAT, got TOKEN" at the current token. */
te_status ps_expected(ps_parser *, const char *what);
/* ps_accept, else ps_expected(what) and false. */
bool ps_expect(ps_parser *, ps_tok_kind k, const char *what);

/* A growable list of pointers (malloc'd until ps_vec_take moves it into the parser's memory). */
typedef struct ps_vec {
  void **v;
  int n, cap;
} ps_vec;
bool ps_vec_push(ps_parser *, ps_vec *, void *x); /* false when x is NULL or on NOMEM */
void *ps_vec_take(ps_parser *, ps_vec *, size_t elem, int *n);

ps_node *ps_node_new(ps_parser *, ps_node_kind, const ps_tok *at);
ps_node *ps_name_node(ps_parser *, const ps_tok *name);
/* expr {',' expr} up to (not including) the close token; empty when close comes first. */
bool ps_parse_list(ps_parser *, ps_tok_kind close, ps_vec *out);
ps_node *ps_parse_expr(ps_parser *);

#endif
