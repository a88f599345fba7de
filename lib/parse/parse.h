/* parse.h — the workload parser and printer (internal, prefix ps_); te/parse.h is the API.
 *
 * te_parse runs in three steps, each in its own file:
 *   lex.c     text -> tokens (line:column kept for messages);
 *   syntax.c  tokens -> syntax tree (recursive descent; docs/workload-text.md has the grammar);
 *   build.c, build_expr.c   syntax tree -> te_* objects: names resolved, shapes inferred, every
 *             node made by the public constructors so their type rules and messages apply.
 * te_workload_text is print.c (what to print, and the names) and print_expr.c (expressions).
 * The syntax tree and the tokens live in malloc'd memory owned by ps_parser, freed when
 * te_parse returns; only the te_* objects stay in the context.
 */
#ifndef TE_PS_PARSE_H
#define TE_PS_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* ---------------------------------------------------------------- tokens (lex.c) */

typedef enum ps_tok_kind {
  PS_EOF,
  PS_NAME,
  PS_INT,
  PS_FLOAT,
  PS_LPAREN,
  PS_RPAREN,
  PS_LBRACK,
  PS_RBRACK,
  PS_COMMA,
  PS_SEMI,
  PS_COLON,
  PS_ASSIGN,
  PS_EQ,
  PS_NE,
  PS_LT,
  PS_LE,
  PS_GT,
  PS_GE,
  PS_PLUS,
  PS_MINUS,
  PS_STAR,
  PS_SLASH,
  PS_FLOORDIV,
  PS_PERCENT,
  PS_AND,
  PS_OR,
  PS_NOT
} ps_tok_kind;

typedef struct ps_tok {
  ps_tok_kind kind;
  int line, col;
  const char *start; /* the token's text in the source */
  int len;
  uint64_t u; /* PS_INT: the value */
  double f;   /* PS_FLOAT: the value */
  bool typed; /* a literal with a dtype suffix (1.5f, 2i32, 0.5f64) */
  te_dtype dtype;
} ps_tok;

/* ---------------------------------------------------------------- syntax tree (syntax.c) */

typedef enum ps_node_kind {
  PS_N_INT,
  PS_N_FLOAT,
  PS_N_BOOL,
  PS_N_NAME,
  PS_N_UNARY,
  PS_N_BINARY,
  PS_N_CALL,
  PS_N_INDEX,
  PS_N_TUPLE
} ps_node_kind;

typedef struct ps_node ps_node;
struct ps_node {
  ps_node_kind kind;
  int line, col;
  bool paren;       /* written inside parentheses */
  int depth;        /* height of the tree below (nesting limit) */
  ps_tok_kind op;   /* UNARY, BINARY: the operator */
  const char *name; /* NAME; CALL and INDEX: the function or tensor */
  uint64_t mag;     /* INT: magnitude; BOOL: 0 or 1 */
  bool neg;         /* INT: negative */
  double f;         /* FLOAT */
  bool typed;       /* INT, FLOAT: dtype given by a suffix */
  te_dtype dtype;
  int nargs;
  ps_node **args; /* UNARY (1), BINARY (2), CALL, INDEX, TUPLE */
  int naxes;      /* CALL: axes=[...] (-1 when not written) */
  ps_node **axes; /* NAME nodes */
  ps_node *cond;  /* CALL: `where cond` (NULL when none) */
};

typedef struct ps_stmt {
  ps_node *lhs; /* an INDEX node of NAME nodes (the index variables) */
  ps_node *body;
} ps_stmt;

typedef enum ps_decl_kind {
  PS_D_TENSOR, /* A: f32[M, K] (placeholder) or C: [M, N] / C: f32[M, N] (a statement's) */
  PS_D_RANGE,  /* k: [lo, hi) */
  PS_D_PARAM,  /* alpha: f32 */
  PS_D_SIZE,   /* N: size */
  PS_D_REDUCER /* R: reducer (a: f32) (b: f32) = (a + b) identity (0.0f) */
} ps_decl_kind;

typedef struct ps_decl {
  ps_decl_kind kind;
  ps_node *name;  /* NAME node */
  bool has_dtype; /* TENSOR, PARAM */
  te_dtype dtype;
  int nshape; /* TENSOR: extents; RANGE: 2 (lo, hi) */
  ps_node **shape;
  int nvals; /* REDUCER: values; lhs/rhs are NAME nodes with their dtype */
  ps_node **lhs, **rhs, **results, **identity;
} ps_decl;

typedef struct ps_workload {
  int nstmt, ndecl, nout;
  ps_stmt *stmts;
  ps_decl *decls;
  ps_node **outs; /* NAME nodes of the `outputs` clause (nout == 0: none) */
} ps_workload;

/* ---------------------------------------------------------------- parser state */

typedef struct ps_block ps_block;

typedef struct ps_parser {
  te_ctx *ctx;
  ps_tok *toks;
  int ntok, cap, pos;
  ps_block *blocks;      /* malloc'd memory of the tree */
  te_status status;      /* the first failure of this parse (TE_OK while none) */
  int err_line, err_col; /* where a te_* constructor failed (0: not yet) */
  int depth;             /* recursion depth of the syntax parser */
} ps_parser;

enum { PS_MAX_DEPTH = 256 }; /* nesting of parentheses, calls and operator chains */

/* Zeroed memory owned by the parser (NULL and TE_ERR_NOMEM on failure). */
void *ps_alloc(ps_parser *, size_t size);
char *ps_strndup(ps_parser *, const char *s, size_t n);
void ps_parser_free(ps_parser *);
/* Records "te_parse: LINE:COL: message" (the first failure wins) and returns the status. */
te_status ps_error(ps_parser *, int line, int col, te_status, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* "',' " / "name 'foo'" / "end of input": a token for messages. */
const char *ps_tok_desc(const ps_tok *, char *buf, size_t size);

/* The dtype called name (i8 ... u64, f32, f64, bool, also f16/bf16 which te refuses later). */
bool ps_dtype_named(const char *name, size_t len, te_dtype *out);

te_status ps_lex(ps_parser *, const char *text);
te_status ps_parse_workload(ps_parser *, ps_workload *out);
/* Builds the parsed workload's tensors; *outs in the context's arena. */
te_status ps_build(ps_parser *, const ps_workload *, int *nout, te_tensor ***outs);

/* ---------------------------------------------------------------- printing (print_expr.c) */

/* The names print.c gives to the objects of one computation. */
typedef struct ps_names ps_names;
/* The name of a variable or tensor (NULL when it has none: a node the text cannot express). */
const char *ps_names_var(const ps_names *, const te_expr *var);
const char *ps_names_tensor(const ps_names *, const te_tensor *);
const char *ps_names_reducer(const ps_names *, const ir_custom_reducer *);
/* True when the variable prints as a reduce axis declared in the where clause. */
bool ps_names_is_axis(const ps_names *, const te_expr *var);

/* Appends e in the workload syntax; false (and the node recorded in *bad) when e holds a node
   the syntax cannot express. index: e is a tensor index or a range bound, whose outer i64
   cast te_at / te_reduce_axis put back, so it is not printed. */
bool ps_print_expr(ir_str *, const ps_names *, te_expr *e, te_expr **bad);
bool ps_print_index(ir_str *, const ps_names *, te_expr *e, te_expr **bad);
/* The reduction e (a REDUCE node) as sum(...)/R(...) with all values of a tuple reduction. */
bool ps_print_reduce(ir_str *, const ps_names *, te_expr *e, te_expr **bad);
/* The end of a range [lo, lo + ext) as `lo + ext` (te_parse reads the extent back exactly). */
bool ps_print_range_end(ir_str *, const ps_names *, te_expr *lo, te_expr *ext, te_expr **bad);

/* Words that are never names (where, true, false, inf, nan). */
bool ps_is_keyword(const char *name);
/* Names a call can have without being a reducer (casts, select, min, max, sum, prod, math). */
bool ps_is_builtin_fn(const char *name);

#endif
