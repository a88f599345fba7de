/* arith_internal.h — what the analyzer's files (analyzer.c, const_bound.c, modular.c,
 * simplify*.c, interval.c) share; nothing outside lib/ir/ includes it.
 *
 * Assumption shared by every rule here (as in TVM): i64 index arithmetic does not overflow.
 * Rewrites that would be wrong under wraparound (division and comparison rules) are applied to
 * i64 only; narrower signed ints get the ring rewrites (+ - * reassociation, exact mod 2^bits)
 * and decisions from constant bounds, which clamp to the type's range when they might wrap.
 */
#ifndef TE_IR_ARITH_INTERNAL_H
#define TE_IR_ARITH_INTERNAL_H

#include "arith.h"

#define IR_NEG_INF INT64_MIN
#define IR_POS_INF INT64_MAX

/* What the analyzer knows about one variable. Records are immutable: a new binding makes a new
   record, so saving and restoring a scope is keeping a pointer. */
typedef struct ir_binding {
  te_expr *min, *extent; /* range [min, min + extent), or NULL */
  te_expr *value;        /* exact value (LET), or NULL */
  bool positive;         /* a symbolic size: >= 1 */
} ir_binding;

struct ir_analyzer {
  te_ctx *ctx;
  ir_map *vars;        /* var -> ir_binding * (NULL: nothing known) */
  ir_map *bound_cache; /* expr -> ir_bound_entry *, valid while its gen matches */
  uint32_t gen;        /* bumped by every binding change */
  int depth;           /* recursion guard through variable bindings */
  int sym_depth;       /* > 0 while a symbolic bound is being computed (no nesting) */
};

/* Scoped rebinding for passes: save the record, bind, ..., restore it (NULL: unbound). */
const ir_binding *ir_analyzer_lookup(ir_analyzer *, te_expr *var);
void ir_analyzer_restore(ir_analyzer *, te_expr *var, const ir_binding *saved);

/* Saturating arithmetic on bound ends (INT64_MIN/MAX are -inf/+inf). */
int64_t ir_sat_add(int64_t a, int64_t b);
int64_t ir_sat_mul(int64_t a, int64_t b);
/* Floor division and modulo on plain integers (b != 0). */
int64_t ir_gcd64(int64_t a, int64_t b); /* >= 0; gcd(0, x) = |x| */
static inline int64_t ir_neg_wrap(int64_t v) { return (int64_t)(0 - (uint64_t)v); }
/* The range of an integer dtype's values ([-inf, +inf] for i64 and u64). */
ir_const_bound ir_dtype_bound(te_dtype);

/* True for scalar signed ints (the types the canonical form is for), and for i64 scalars
   (the types the division and comparison rules are for). */
static inline bool ir_arith_sint(te_dtype t) { return t.code == kDLInt && t.lanes == 1; }
static inline bool ir_arith_index(te_dtype t) { return ir_arith_sint(t) && t.bits == 64; }

/* ---------------------------------------------------------------- simplifier internals */

typedef struct ir_simp {
  ir_analyzer *an;
  te_ctx *ctx;
  ir_map *memo; /* expr -> simplified expr, for this ir_simplify call */
  ir_map *lead; /* expr -> lowest variable id + 1 (term ordering cache) */
  ir_map *sym;  /* difference -> ir_const_bound * from symbolic ranges (simplify_cmp.c) */
} ir_simp;

/* Simplify e (recursive entry with memo). NULL on failure. */
te_expr *ir_simp_expr(ir_simp *, te_expr *);
/* The simplified form of a binary node k(a, b) whose operands are already simplified. */
te_expr *ir_simp_binary(ir_simp *, ir_expr_kind, te_expr *a, te_expr *b);
/* ramp(base, stride, lanes), or broadcast(base) when the stride is 0. */
te_expr *ir_simp_ramp(ir_simp *, te_expr *base, te_expr *stride, int lanes);

/* A total order on expressions for canonical forms: by lowest variable id (constants last),
   then kind, then children. 0 only for the same node. */
int ir_simp_order(ir_simp *, te_expr *a, te_expr *b);

/* Constant folding (simplify_fold.c): the folded value, or NULL when an operand is not a
   constant or the operation has no defined result (division by zero, NaN-sensitive cases). */
te_expr *ir_fold_binary(te_ctx *, ir_expr_kind, te_expr *a, te_expr *b);
te_expr *ir_fold_not(te_ctx *, te_expr *a);
te_expr *ir_fold_cast(te_ctx *, te_dtype, te_expr *a);
te_expr *ir_fold_call(te_ctx *, te_expr *call);
bool ir_is_const_value(te_expr *e, double v); /* INT/FLOAT (or BROADCAST of one) equal to v */
te_expr *ir_const_like(te_ctx *, te_dtype, int64_t v); /* scalar or broadcast constant */

/* Canonical sums (simplify_sum.c): ADD/SUB/MUL of scalar signed ints. a and b simplified. */
te_expr *ir_simp_sum(ir_simp *, ir_expr_kind, te_expr *a, te_expr *b);

/* A linear combination of monomials: sum(coeff_i * term_i) + c. A term is a canonical product
   of atoms (anything that is not + - * or a constant). */
typedef struct ir_mono {
  te_expr *term;
  int64_t coeff;
} ir_mono;
typedef struct ir_lin {
  te_dtype t;
  int n, cap;
  ir_mono *m; /* malloc'd */
  int64_t c;
  bool oom;
} ir_lin;
void ir_lin_init(ir_lin *, te_dtype);
void ir_lin_free(ir_lin *);
/* Adds scale * e, where e is in canonical form. */
void ir_lin_add(ir_simp *, ir_lin *, te_expr *e, int64_t scale);
void ir_lin_push(ir_lin *, te_expr *term, int64_t coeff);
/* Merges like terms, drops zero terms, applies the div/mod recombinations. */
bool ir_lin_normalize(ir_simp *, ir_lin *);
/* The canonical expression of a normalized combination. */
te_expr *ir_lin_build(ir_simp *, ir_lin *);
/* Normalize + build: the canonical expression of a combination (frees nothing). */
te_expr *ir_lin_to_expr(ir_simp *, ir_lin *);

/* Division rules (simplify_div.c): a and b simplified, same scalar int dtype. */
te_expr *ir_simp_floordiv(ir_simp *, te_expr *a, te_expr *b);
te_expr *ir_simp_floormod(ir_simp *, te_expr *a, te_expr *b);

/* Comparison, logic, min/max rules (simplify_cmp.c). */
te_expr *ir_simp_cmp(ir_simp *, ir_expr_kind, te_expr *a, te_expr *b);
te_expr *ir_simp_minmax(ir_simp *, ir_expr_kind, te_expr *a, te_expr *b);
te_expr *ir_simp_logic(ir_simp *, ir_expr_kind, te_expr *a, te_expr *b);
te_expr *ir_simp_not(ir_simp *, te_expr *a);
/* 1: a <= b provably, 0: a > b provably, -1: unknown (scalar signed ints). */
int ir_simp_le(ir_simp *, te_expr *a, te_expr *b);

/* Bounds through symbolic loop ranges (sym_bound.c). ir_sym_bound: b tightened for a
   canonical d, cached in the ir_simp. ir_sym_tighten: the same for any e (public entry). */
ir_const_bound ir_sym_bound(ir_simp *, te_expr *d, ir_const_bound b);
ir_const_bound ir_sym_tighten(ir_analyzer *, te_expr *e, ir_const_bound b);
/* Constant bounds without the symbolic tightening (what the rules use: cheap). */
ir_const_bound ir_const_bound_raw(ir_analyzer *, te_expr *);

/* Vector rules (simplify_vec.c): NULL when no rule applies (not a failure: check ir_failed). */
te_expr *ir_simp_vector(ir_simp *, ir_expr_kind, te_expr *a, te_expr *b);

#endif
