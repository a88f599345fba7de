/* api.c — the public entry points of te/parse.h: te_parse (lex, parse, build) and
 * te_workload_hash. te_workload_text is in print.c.
 */
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* A te_* constructor refused part of the text: its message gets the line:column in front. */
static void locate_message(ps_parser *p) {
  const char *msg = te_last_error(p->ctx);
  if (p->err_line <= 0 || !strncmp(msg, "te_parse:", 9))
    return;
  te_status st = te_last_status(p->ctx);
  char *copy = ir_strdup_malloc(p->ctx, msg);
  if (!copy)
    return;
  te_clear_error(p->ctx);
  ir_error(p->ctx, st, "te_parse: %d:%d: %s", p->err_line, p->err_col, copy);
  free(copy);
}

static te_status parse_impl(te_ctx *ctx, const char *text, int *nout, te_tensor ***outs) {
  if (nout)
    *nout = 0;
  if (outs)
    *outs = NULL;
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  if (!text || !nout || !outs)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_parse: %s is NULL",
                    !text   ? "text"
                    : !nout ? "nout"
                            : "outs");
  bool clean = !ir_failed(ctx); /* only then is the context's message this parse's */
  ps_parser p = {0};
  p.ctx = ctx;
  ps_workload w;
  int n = 0;
  te_tensor **o = NULL;
  te_status st = ps_lex(&p, text);
  if (st == TE_OK)
    st = ps_parse_workload(&p, &w);
  if (st == TE_OK)
    st = ps_build(&p, &w, &n, &o);
  if (st != TE_OK && clean)
    locate_message(&p);
  ps_parser_free(&p);
  if (st != TE_OK)
    return st;
  *nout = n;
  *outs = o;
  return TE_OK;
}

te_status te_parse(te_ctx *ctx, const char *text, int *nout, te_tensor ***outs) {
  return IR_PUBLIC_CALL(ctx, parse_impl(ctx, text, nout, outs));
}

uint64_t te_workload_hash(const char *s) { return ir_str_hash(s); }
