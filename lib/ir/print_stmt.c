/* print_stmt.c — statements as text, variable naming, and the ir_print_* entry points.
 *
 * One statement a line, two spaces of indent per level, blocks closed by "}" (see
 * docs/ir-text.md). LET_STMT and ASSERT print their body at the same indent (Halide style).
 * Each ir_print_* call is one printed unit: distinct variables that share a name are told apart
 * by suffixes (i, i_1, i_2, ...) in order of first appearance, so the text is deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printer.h"

/* ---------------------------------------------------------------- naming */

void ir_printer_init(ir_printer *p, ir_str *out) { *p = (ir_printer){.out = out}; }

void ir_printer_done(ir_printer *p) {
  for (size_t i = 0; i < p->cap; i++)
    free(p->names[i]);
  free(p->vars);
  free(p->names);
  *p = (ir_printer){.out = p->out};
}

static size_t slot_of(const ir_printer *p, const te_expr *v) {
  size_t mask = p->cap - 1, i = ((uintptr_t)v >> 4) * 0x9e3779b97f4a7c15ULL & mask;
  while (p->vars[i] && p->vars[i] != v)
    i = (i + 1) & mask;
  return i;
}

static bool name_taken(const ir_printer *p, const char *s) {
  for (size_t i = 0; i < p->cap; i++)
    if (p->names[i] && strcmp(p->names[i], s) == 0)
      return true;
  return false;
}

static bool grow(ir_printer *p) {
  size_t cap = p->cap ? p->cap * 2 : 32;
  ir_printer n = {.out = p->out, .cap = cap};
  te_ctx *ctx = p->out ? p->out->ctx : NULL;
  n.vars = ir_calloc(ctx, cap, sizeof *n.vars);
  n.names = n.vars ? ir_calloc(ctx, cap, sizeof *n.names) : NULL;
  if (!n.vars || !n.names) {
    free(n.vars);
    if (p->out) /* names would be wrong: the text is dropped */
      p->out->oom = true;
    return false;
  }
  for (size_t i = 0; i < p->cap; i++)
    if (p->vars[i]) {
      size_t j = slot_of(&n, p->vars[i]);
      n.vars[j] = p->vars[i];
      n.names[j] = p->names[i];
    }
  n.nvars = p->nvars;
  free(p->vars);
  free(p->names);
  *p = n;
  return true;
}

const char *ir_printer_var_name(ir_printer *p, const te_expr *v) {
  const char *base = v->u.var.name ? v->u.var.name : "v";
  if ((p->nvars + 1) * 2 > p->cap && !grow(p))
    return base;
  size_t i = slot_of(p, v);
  if (p->vars[i])
    return p->names[i];
  size_t n = strlen(base) + 24;
  char *s = ir_malloc(p->out ? p->out->ctx : NULL, n);
  if (!s) {
    if (p->out)
      p->out->oom = true;
    return base;
  }
  strcpy(s, base);
  for (int k = 1; name_taken(p, s); k++)
    snprintf(s, n, "%s_%d", base, k);
  p->vars[i] = v;
  p->names[i] = s;
  p->nvars++;
  return s;
}

/* ---------------------------------------------------------------- statements */

/* The word of an enumerator; "?" for a value that is none (a bug the printer still shows). */
static const char *word_of(const ir_enum_words *words, int value) {
  const char *w = ir_enum_word(words, value);
  return w ? w : "?";
}
static const char *scope_name(te_scope s) { return word_of(&ir_scope_words, (int)s); }

static void line_start(ir_printer *p, int indent) {
  for (int i = 0; i < indent; i++)
    ir_str_puts(p->out, "  ");
}

static void block(ir_printer *p, ir_stmt *body, int indent) {
  ir_str_puts(p->out, " {\n");
  ir_printer_stmt(p, body, indent + 1);
  line_start(p, indent);
  ir_str_puts(p->out, "}\n");
}

static void print_for(ir_printer *p, ir_stmt *s, int indent) {
  ir_str_puts(p->out, "for (");
  ir_printer_expr(p, IR_FOR_VAR(s));
  ir_str_puts(p->out, ", ");
  ir_printer_expr(p, IR_FOR_MIN(s));
  ir_str_puts(p->out, ", ");
  ir_printer_expr(p, IR_FOR_EXTENT(s));
  ir_str_puts(p->out, ")");
  ir_loop_info l = s->u.loop;
  if (l.kind == IR_FOR_THREAD)
    ir_str_printf(p->out, " thread(%s)", word_of(&ir_thread_tag_words, (int)l.tag));
  else if (l.kind != IR_FOR_SERIAL && (unsigned)l.kind <= IR_FOR_THREAD)
    ir_str_printf(p->out, " %s", ir_for_kind_name[l.kind]);
  block(p, IR_FOR_BODY(s), indent);
}

static void print_if(ir_printer *p, ir_stmt *s, int indent) {
  for (;;) {
    ir_str_puts(p->out, "if (");
    ir_printer_expr(p, s->exprs[0]);
    ir_str_puts(p->out, ") {\n");
    ir_printer_stmt(p, s->stmts[0], indent + 1);
    line_start(p, indent);
    ir_stmt *e = s->nstmts > 1 ? s->stmts[1] : NULL;
    if (!e)
      break;
    if (e->kind != IR_S_IF) {
      ir_str_puts(p->out, "} else");
      block(p, e, indent);
      return;
    }
    ir_str_puts(p->out, "} else ");
    s = e;
  }
  ir_str_puts(p->out, "}\n");
}

static void print_quoted(ir_str *out, const char *m) {
  ir_str_puts(out, "\"");
  for (; *m; m++) {
    if (*m == '"' || *m == '\\')
      ir_str_printf(out, "\\%c", *m);
    else if (*m == '\n')
      ir_str_puts(out, "\\n");
    else
      ir_str_printf(out, "%c", *m);
  }
  ir_str_puts(out, "\"");
}

/* call_extern E = SYMBOL(A[extents; strides], ...) -> E[extents; strides]; a function
   without a symbol prints as <fn>. */
static void print_call_extern(ir_printer *p, ir_stmt *s) {
  const ir_extern_call *c = s->u.ext;
  ir_str_printf(p->out, "call_extern %s = %s(", c->stage, c->symbol ? c->symbol : "<fn>");
  int e = 0;
  for (int a = 0; a < c->nargs; a++) {
    const char *name = c->buffers ? c->buffers[a]->name : ir_printer_tensor_name(c->tensors[a]);
    int nd = c->buffers ? c->buffers[a]->ndim : c->tensors[a]->ndim;
    if (a == c->nargs - 1)
      ir_str_puts(p->out, ") -> ");
    else if (a > 0)
      ir_str_puts(p->out, ", ");
    ir_str_printf(p->out, "%s[", name);
    for (int k = 0; k < 2 * nd && e < s->nexprs; k++, e++) {
      ir_str_puts(p->out, k == 0 ? "" : k == nd ? "; " : ", ");
      ir_printer_expr(p, s->exprs[e]);
    }
    ir_str_puts(p->out, "]");
  }
}

static void print_realize(ir_printer *p, ir_stmt *s, int indent) {
  ir_str_printf(p->out, "realize %s(", ir_printer_tensor_name(s->u.realize.tensor));
  for (int i = 0; i + 1 < s->nexprs; i += 2) {
    ir_str_puts(p->out, i ? ", [" : "[");
    ir_printer_expr(p, s->exprs[i]);
    ir_str_puts(p->out, ", ");
    ir_printer_expr(p, s->exprs[i + 1]);
    ir_str_puts(p->out, "]");
  }
  ir_str_puts(p->out, ")");
  if (s->u.realize.scope != TE_SCOPE_GLOBAL)
    ir_str_printf(p->out, " %s", scope_name(s->u.realize.scope));
  /* storage(1, 0): dims by index; a split dim d by f prints as d/f (outer) and d%f (inner) */
  const ir_realize_info *ri = &s->u.realize;
  for (int i = 0; i < ri->norder; i++) {
    int o = ri->order[i], d = o % IR_STORAGE_INNER;
    ir_str_printf(p->out, "%s%d", i ? ", " : " storage(", d);
    if (ri->split[d] > 0)
      ir_str_printf(p->out, "%s%lld", o >= IR_STORAGE_INNER ? "%" : "/", (long long)ri->split[d]);
    ir_str_puts(p->out, i + 1 == ri->norder ? ")" : "");
  }
  block(p, s->stmts[0], indent);
}

/* `compute_scope NAME(captures) {` or `closure NAME(captures) {`: an outlined function. */
static void print_closure(ir_printer *p, ir_stmt *s, int indent) {
  const ir_closure *c = s->u.attr.node;
  ir_str_printf(p->out, "%s %s(", s->u.attr.key, c && c->name ? c->name : "?");
  for (int i = 0; c && i < c->ncaptures; i++) {
    if (i)
      ir_str_puts(p->out, ", ");
    const ir_capture *k = &c->captures[i];
    ir_str_puts(p->out, k->var      ? ir_printer_var_name(p, k->var)
                        : k->buffer ? k->buffer->name
                                    : "?");
  }
  ir_str_puts(p->out, ")");
  block(p, s->stmts[0], indent);
}

static void print_attr(ir_printer *p, ir_stmt *s, int indent) {
  if (strcmp(s->u.attr.key, "produce") == 0) {
    ir_str_printf(p->out, "produce %s", ir_printer_tensor_name(s->u.attr.node));
    block(p, s->stmts[0], indent);
    return;
  }
  if (strcmp(s->u.attr.key, "compute_scope") == 0 || strcmp(s->u.attr.key, "closure") == 0) {
    print_closure(p, s, indent);
    return;
  }
  if (strcmp(s->u.attr.key, "buffer_bind") == 0) { /* like a let: the body at the same indent */
    const ir_buffer *b = s->u.attr.node;
    ir_str_printf(p->out, "bind %s = ", b && b->name ? b->name : "?");
    ir_printer_expr(p, s->exprs[0]);
    ir_str_puts(p->out, "\n");
    ir_printer_stmt(p, s->stmts[0], indent);
    return;
  }
  ir_str_printf(p->out, "// attr %s = ", s->u.attr.key);
  ir_printer_expr(p, s->exprs[0]);
  ir_str_puts(p->out, "\n");
  line_start(p, indent);
  ir_str_puts(p->out, "{\n");
  ir_printer_stmt(p, s->stmts[0], indent + 1);
  line_start(p, indent);
  ir_str_puts(p->out, "}\n");
}

/* Statements whose body prints at the same indent after their own line. */
static void print_inline_head(ir_printer *p, ir_stmt *s, int indent) {
  if (s->kind == IR_S_LET_STMT) {
    ir_str_printf(p->out, "let %s = ", ir_printer_var_name(p, s->exprs[0]));
    ir_printer_expr(p, s->exprs[1]);
  } else {
    ir_str_puts(p->out, "assert(");
    ir_printer_expr(p, s->exprs[0]);
    ir_str_puts(p->out, ", ");
    print_quoted(p->out, s->u.assert_.message);
    for (int i = 1; i < s->nexprs; i++) { /* the values completing the message */
      ir_str_puts(p->out, ", ");
      ir_printer_expr(p, s->exprs[i]);
    }
    ir_str_puts(p->out, ")");
  }
  ir_str_puts(p->out, "\n");
  if (s->nstmts)
    ir_printer_stmt(p, s->stmts[0], indent);
}

void ir_printer_stmt(ir_printer *p, ir_stmt *s, int indent) {
  if (!s)
    return;
  if (s->kind == IR_S_SEQ) {
    for (uint32_t i = 0; i < s->nstmts; i++)
      ir_printer_stmt(p, s->stmts[i], indent);
    return;
  }
  line_start(p, indent);
  char name[24];
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_FOR:
    print_for(p, s, indent);
    return;
  case IR_S_IF:
    print_if(p, s, indent);
    return;
  case IR_S_REALIZE:
    print_realize(p, s, indent);
    return;
  case IR_S_ATTR:
    print_attr(p, s, indent);
    return;
  case IR_S_LET_STMT:
  case IR_S_ASSERT:
    print_inline_head(p, s, indent);
    return;
  case IR_S_STORE:
    ir_str_printf(p->out, "%s[", s->u.buffer->name);
    ir_printer_expr(p, s->exprs[1]);
    ir_str_puts(p->out, "] = ");
    ir_printer_expr(p, s->exprs[0]);
    break;
  case IR_S_PROVIDE:
    ir_str_printf(p->out, "%s[", ir_printer_tensor_name(s->u.tensor));
    for (int i = 1; i < s->nexprs; i++) {
      if (i > 1)
        ir_str_puts(p->out, ", ");
      ir_printer_expr(p, s->exprs[i]);
    }
    ir_str_puts(p->out, "] = ");
    ir_printer_expr(p, s->exprs[0]);
    break;
  case IR_S_ALLOCATE:
    ir_str_printf(p->out, "allocate %s[%s * ", s->u.buffer->name,
                  te_dtype_str(s->u.buffer->dtype, name, sizeof name));
    ir_printer_expr(p, s->exprs[0]);
    ir_str_printf(p->out, "] %s", scope_name(s->u.buffer->scope));
    block(p, s->stmts[0], indent);
    return;
  case IR_S_EVALUATE:
    ir_printer_expr(p, s->exprs[0]);
    break;
  case IR_S_BARRIER:
    ir_str_puts(p->out, "barrier()");
    break;
  case IR_S_CALL_EXTERN:
    print_call_extern(p, s);
    break;
  default:
    ir_str_printf(p->out, "<%s>", ir_stmt_kind_name[s->kind]);
    break;
  }
  ir_str_puts(p->out, "\n");
}

/* ---------------------------------------------------------------- entry points */

void ir_print_expr(ir_str *out, te_expr *e) {
  ir_printer p;
  ir_printer_init(&p, out);
  ir_printer_expr(&p, e);
  ir_printer_done(&p);
}

void ir_print_stmt(ir_str *out, ir_stmt *s, int indent) {
  ir_printer p;
  ir_printer_init(&p, out);
  ir_printer_stmt(&p, s, indent);
  ir_printer_done(&p);
}

char *ir_expr_to_string(te_expr *e) {
  ir_str s = {.ctx = e ? e->ctx : NULL};
  ir_print_expr(&s, e);
  return ir_str_take(&s);
}

char *ir_stmt_to_string(ir_stmt *st) {
  ir_str s = {0};
  ir_print_stmt(&s, st, 0);
  return ir_str_take(&s);
}
