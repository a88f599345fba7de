/* build.h — the builder's state, shared by build.c (declarations, statements, outputs) and
 * build_expr.c (expressions). Internal to lib/parse.
 *
 * Names live in one table. Global names (tensors, reduce axes, scalar parameters, symbolic
 * sizes, reducers) are unique and visible everywhere; a statement's index variables and a
 * reducer's variables are pushed while it is built and popped after; they may share a name with
 * a tensor or a reducer (those are only named before '[' or '('), not with another variable.
 */
#ifndef TE_PS_BUILD_H
#define TE_PS_BUILD_H

#include "ir/arith.h"
#include "parse.h"

typedef enum ps_sym_kind {
  PS_S_TENSOR,  /* a placeholder, or the tensor a statement defines */
  PS_S_MULTI,   /* a statement with several outputs (they are NAME_v0, NAME_v1, ...) */
  PS_S_AXIS,    /* a reduce axis */
  PS_S_PARAM,   /* a scalar parameter */
  PS_S_SIZE,    /* a symbolic size */
  PS_S_REDUCER, /* a custom reducer */
  PS_S_INDEX,   /* an index variable of the statement being built */
  PS_S_RVAR     /* a variable of the reducer being built */
} ps_sym_kind;

typedef struct ps_sym {
  const char *name;
  ps_sym_kind kind;
  const ps_node *at;   /* where it was declared (for messages) */
  const ps_decl *decl; /* its declaration in the where clause, if any */
  int stmt;            /* TENSOR, MULTI: the defining statement (-1: placeholder) */
  int owner;           /* TENSOR: the MULTI symbol it is an output of (-1: none) */
  bool read;           /* TENSOR, MULTI: read by some statement */
  te_tensor *tensor;   /* TENSOR once built; MULTI: its first output */
  te_expr *var;        /* AXIS, PARAM, SIZE, INDEX, RVAR */
  te_reducer *red;     /* REDUCER */
  int nvals;           /* REDUCER: values; MULTI: outputs */
  te_expr **shape;     /* TENSOR with a declaration: the declared shape, once built */
} ps_sym;

typedef struct ps_builder {
  ps_parser *p;
  te_ctx *ctx;
  const ps_workload *w;
  ps_sym *syms;
  int nsym, cap;
  bool shape_scope; /* building a shape or range: unknown names become symbolic sizes */
  ir_analyzer *an;  /* made on first use (ranges whose low end is not 0) */
} ps_builder;

/* The symbol called name, or NULL: ps_lookup for a bare name (variables of the statement or
   reducer being built first), ps_lookup_global for tensors, reducers and declarations. */
ps_sym *ps_lookup(ps_builder *, const char *name);
ps_sym *ps_lookup_global(ps_builder *, const char *name);
/* Adds a symbol (checks nothing); NULL on NOMEM. */
ps_sym *ps_add_sym(ps_builder *, const char *name, ps_sym_kind, const ps_node *at);
/* "tensor", "reduce axis", ...: for messages. */
const char *ps_sym_kind_name(ps_sym_kind);

/* Records where a te_* call failed (the first one) and passes its result through. */
te_expr *ps_chk(ps_builder *, const ps_node *at, te_expr *e);

/* A scalar expression (tuples and reductions of several values are refused). */
te_expr *ps_build_expr(ps_builder *, const ps_node *);
/* A statement's body: one expression, a tuple, or a reduction of several values. Returns the
   number of bodies written to out (at most max), 0 on failure. */
int ps_build_body(ps_builder *, const ps_node *, te_expr **out, int max);

#endif
