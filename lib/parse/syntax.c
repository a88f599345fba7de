/* syntax.c — recursive descent over statements, declarations and the outputs clause, giving
 * the syntax tree of a whole workload (expressions are syntax_expr.c's).
 */
#include <stdlib.h>
#include <string.h>

#include "syntax.h"

/* ---------------------------------------------------------------- statements */

/* NAME ['[' [NAME {',' NAME}] ']'] '=' expr */
static bool parse_stmt(ps_parser *p, ps_stmt *s) {
  ps_tok *t = ps_peek(p);
  if (t->kind != PS_NAME || ps_tok_is(t, "where"))
    return ps_expected(p, "a statement such as 'C[i] = ...'"), false;
  ps_next(p);
  ps_node *lhs = ps_node_new(p, PS_N_INDEX, t);
  if (!lhs || !(lhs->name = ps_strndup(p, t->start, (size_t)t->len)))
    return false;
  ps_vec idx = {0};
  bool ok = true;
  if (ps_accept(p, PS_LBRACK)) {
    if (ps_peek(p)->kind != PS_RBRACK)
      do {
        if (ps_peek(p)->kind != PS_NAME) {
          ps_expected(p, "an index variable name");
          ok = false;
          break;
        }
        ok = ps_vec_push(p, &idx, ps_name_node(p, ps_next(p)));
      } while (ok && ps_accept(p, PS_COMMA));
    ok = ok && ps_expect(p, PS_RBRACK, "']' after the index variables");
  }
  lhs->args = ps_vec_take(p, &idx, sizeof *lhs->args, &lhs->nargs);
  if (!ok || !lhs->args || !ps_expect(p, PS_ASSIGN, "'=' after the defined tensor"))
    return false;
  s->lhs = lhs;
  s->body = ps_parse_expr(p);
  return s->body != NULL;
}

/* '(' item {',' item} ')' where item is NAME ':' DTYPE (reducer variables) */
static bool parse_rvars(ps_parser *p, ps_vec *out) {
  if (!ps_expect(p, PS_LPAREN, "'(' before the reducer's variables"))
    return false;
  do {
    if (ps_peek(p)->kind != PS_NAME)
      return ps_expected(p, "a variable name"), false;
    ps_node *n = ps_name_node(p, ps_next(p));
    if (!ps_vec_push(p, out, n) || !ps_expect(p, PS_COLON, "':' after the variable name"))
      return false;
    ps_tok *d = ps_peek(p);
    if (d->kind != PS_NAME || !ps_dtype_named(d->start, (size_t)d->len, &n->dtype))
      return ps_expected(p, "a dtype"), false;
    ps_next(p);
  } while (ps_accept(p, PS_COMMA));
  return ps_expect(p, PS_RPAREN, "')' after the reducer's variables");
}

static bool parse_tuple(ps_parser *p, const char *what, int *n, ps_node ***items) {
  if (!ps_expect(p, PS_LPAREN, what))
    return false;
  ps_vec v = {0};
  bool ok = ps_parse_list(p, PS_RPAREN, &v) && ps_expect(p, PS_RPAREN, "')'");
  if (ok && v.n == 0)
    ok = (ps_expected(p, "an expression"), false);
  *items = ps_vec_take(p, &v, sizeof **items, n);
  return ok && *items;
}

/* reducer (a: f32, ...) (b: f32, ...) = (results) identity (values) */
static bool parse_reducer(ps_parser *p, ps_decl *d) {
  ps_vec lhs = {0}, rhs = {0};
  bool ok = parse_rvars(p, &lhs) && parse_rvars(p, &rhs);
  int nl, nr;
  d->lhs = ps_vec_take(p, &lhs, sizeof *d->lhs, &nl);
  d->rhs = ps_vec_take(p, &rhs, sizeof *d->rhs, &nr);
  if (!ok || !d->lhs || !d->rhs)
    return false;
  if (nl != nr)
    return ps_error(p, d->name->line, d->name->col, TE_ERR_PARSE,
                    "reducer '%s': %d accumulated but %d incoming variables", d->name->name, nl,
                    nr),
           false;
  d->nvals = nl;
  int n1, n2;
  if (!ps_expect(p, PS_ASSIGN, "'=' after the reducer's variables") ||
      !parse_tuple(p, "'(' before the reducer's results", &n1, &d->results))
    return false;
  if (!ps_tok_is(ps_peek(p), "identity"))
    return ps_expected(p, "'identity' after the reducer's results"), false;
  ps_next(p);
  if (!parse_tuple(p, "'(' before the identity values", &n2, &d->identity))
    return false;
  if (n1 != nl || n2 != nl)
    return ps_error(p, d->name->line, d->name->col, TE_ERR_PARSE,
                    "reducer '%s': %d values but %d results and %d identity values", d->name->name,
                    nl, n1, n2),
           false;
  return true;
}

/* NAME ':' (DTYPE ['[' shape ']'] | '[' shape ']' | '[' lo ',' hi ')' | size | reducer ...) */
static bool parse_decl(ps_parser *p, ps_decl *d) {
  if (ps_peek(p)->kind != PS_NAME)
    return ps_expected(p, "a declaration such as 'A: f32[N]'"), false;
  d->name = ps_name_node(p, ps_next(p));
  if (!d->name || !ps_expect(p, PS_COLON, "':' after the declared name"))
    return false;
  ps_tok *t = ps_peek(p);
  if (ps_tok_is(t, "size")) {
    ps_next(p);
    d->kind = PS_D_SIZE;
    return true;
  }
  if (ps_tok_is(t, "reducer") && ps_peek_at(p, 1)->kind == PS_LPAREN) {
    ps_next(p);
    d->kind = PS_D_REDUCER;
    return parse_reducer(p, d);
  }
  if (t->kind == PS_NAME && ps_dtype_named(t->start, (size_t)t->len, &d->dtype)) {
    ps_next(p);
    d->has_dtype = true;
    if (ps_peek(p)->kind != PS_LBRACK) {
      d->kind = PS_D_PARAM;
      return true;
    }
  } else if (t->kind != PS_LBRACK) {
    return ps_expected(p, "a dtype, '[', 'size' or 'reducer' after ':'"), false;
  }
  ps_next(p); /* [ */
  ps_vec ext = {0};
  bool ok = ps_parse_list(p, PS_RBRACK, &ext);
  d->shape = ps_vec_take(p, &ext, sizeof *d->shape, &d->nshape);
  if (!ok || !d->shape)
    return false;
  d->kind = PS_D_TENSOR;
  if (!d->has_dtype && d->nshape == 2 && ps_accept(p, PS_RPAREN)) {
    d->kind = PS_D_RANGE;
    return true;
  }
  if (!ps_accept(p, PS_RBRACK)) {
    if (!d->has_dtype && d->nshape == 2)
      return ps_expected(p, "']' or ')' after '[lo, hi'"), false;
    return ps_expected(p, "']' after the shape"), false;
  }
  return true;
}

/* The `outputs` clause starts a line such as `outputs C, D` (a name after the word). */
static bool at_outputs(ps_parser *p) {
  return ps_tok_is(ps_peek(p), "outputs") && ps_peek_at(p, 1)->kind == PS_NAME;
}

static bool parse_outputs(ps_parser *p, ps_workload *w) {
  ps_next(p); /* outputs */
  ps_vec outs = {0};
  bool ok = true;
  do {
    if (ps_peek(p)->kind != PS_NAME) {
      ps_expected(p, "a tensor name");
      ok = false;
      break;
    }
    ok = ps_vec_push(p, &outs, ps_name_node(p, ps_next(p)));
  } while (ok && ps_accept(p, PS_COMMA));
  w->outs = ps_vec_take(p, &outs, sizeof *w->outs, &w->nout);
  return ok && w->outs;
}

te_status ps_parse_workload(ps_parser *p, ps_workload *w) {
  memset(w, 0, sizeof *w);
  ps_stmt *stmts = NULL;
  int cap = 0;
  for (;;) {
    if (w->nstmt == cap) {
      cap = cap ? 2 * cap : 8;
      ps_stmt *s = ir_realloc(p->ctx, stmts, sizeof *s * (size_t)cap);
      if (!s) {
        free(stmts);
        return ps_error(p, 0, 0, TE_ERR_NOMEM, "out of memory");
      }
      stmts = s;
    }
    if (!parse_stmt(p, &stmts[w->nstmt++]))
      break;
    if (!ps_accept(p, PS_SEMI))
      break;
    if (ps_peek(p)->kind == PS_EOF || ps_tok_is(ps_peek(p), "where") || at_outputs(p))
      break;
  }
  w->stmts = ps_alloc(p, sizeof *stmts * (size_t)w->nstmt);
  if (w->stmts)
    memcpy(w->stmts, stmts, sizeof *stmts * (size_t)w->nstmt);
  free(stmts);
  if (p->status != TE_OK)
    return p->status;
  if (ps_tok_is(ps_peek(p), "where")) {
    ps_next(p);
    ps_vec decls = {0};
    do {
      ps_decl *d = ps_alloc(p, sizeof *d);
      if (!d || !parse_decl(p, d) || !ps_vec_push(p, &decls, d))
        break;
    } while (ps_accept(p, PS_COMMA));
    ps_decl **dv = ps_vec_take(p, &decls, sizeof *dv, &w->ndecl);
    if (p->status != TE_OK)
      return p->status;
    if (!(w->decls = ps_alloc(p, sizeof *w->decls * (size_t)(w->ndecl ? w->ndecl : 1))))
      return p->status;
    for (int i = 0; i < w->ndecl; i++)
      w->decls[i] = *dv[i];
    if (ps_peek(p)->kind != PS_EOF && !at_outputs(p))
      return ps_expected(p, "',', 'outputs' or the end of the text after the declaration");
  }
  if (at_outputs(p) && !parse_outputs(p, w))
    return p->status;
  if (ps_peek(p)->kind != PS_EOF)
    return ps_expected(p, w->ndecl || w->nout
                              ? "the end of the text"
                              : "';', 'where' or the end of the text after the statement");
  return TE_OK;
}
