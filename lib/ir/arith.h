/* arith.h — the analyzer: constant bounds, modular facts, symbolic intervals, simplification.
 *
 * One ir_analyzer serves bound inference, loop partitioning, vectorization and the simplify
 * pass (TVM's layering): it knows the ranges of the variables bound so far (loop variables,
 * symbolic sizes assumed >= 1) and answers questions about integer expressions with exact
 * arithmetic on the forms that splits, tiles and fuses produce:
 *   (i.o*32 + i.i) // 32  ->  i.o          when i.i in [0, 32)
 *   (i.o*32 + i.i) % 32   ->  i.i
 *   (x*4 + 2) % 2         ->  0            (modular analysis)
 *   i.o*32 + i.i < 100    ->  true         when i.o in [0, 3), i.i in [0, 32)... etc.
 *
 * Everything is allocated in the current arena (the build's scratch arena in lowering).
 */
#ifndef TE_IR_ARITH_H
#define TE_IR_ARITH_H

#include "ir.h"

/* Unbounded ends are INT64_MIN / INT64_MAX. */
typedef struct ir_const_bound {
  int64_t min, max; /* inclusive */
} ir_const_bound;

/* x = coeff * k + base for some integer k (coeff 0: x == base; coeff 1: nothing known). */
typedef struct ir_modular {
  int64_t coeff, base;
} ir_modular;

/* A symbolic closed interval [min, max]; NULL ends are unbounded. */
typedef struct ir_interval {
  te_expr *min, *max;
} ir_interval;

typedef struct ir_analyzer ir_analyzer;

ir_analyzer *ir_analyzer_new(te_ctx *);
/* var ranges over [min, min + extent). Binding again replaces the range (scoped use: push/pop). */
void ir_analyzer_bind(ir_analyzer *, te_expr *var, te_expr *min, te_expr *extent);
/* var is exactly value (LET). */
void ir_analyzer_bind_value(ir_analyzer *, te_expr *var, te_expr *value);
/* Forget var. */
void ir_analyzer_unbind(ir_analyzer *, te_expr *var);
/* Assume a size variable is >= 1 (all symbolic sizes are). */
void ir_analyzer_assume_positive(ir_analyzer *, te_expr *var);

ir_const_bound ir_const_bound_of(ir_analyzer *, te_expr *);
/* A constant upper bound of e (INT64_MAX: none), at most ir_const_bound_of's max: also sought
   with e's clamps taken off on the side where that can only make e larger (min(x*64 + 63, 999)
   - x*64 + 1 as x*64 + 63 - x*64 + 1 = 64, where interval arithmetic alone gives 1000): a
   consumer's region at its last, short tile. */
int64_t ir_const_upper_bound(ir_analyzer *, te_expr *);
ir_modular ir_modular_of(ir_analyzer *, te_expr *);

/* Simplify to a canonical form; value-preserving and idempotent. Returns NULL only on failure. */
te_expr *ir_simplify(ir_analyzer *, te_expr *);
/* Simplify a statement: binds loop and let variables while descending, folds constant
   conditions, drops empty loops and no-op stores. NULL with no error on the context: nothing
   is left (the generic mutator's "no statement"). */
ir_stmt *ir_simplify_stmt(ir_analyzer *, ir_stmt *);
/* True when cond (bool) is provably true under the current bindings. */
bool ir_can_prove(ir_analyzer *, te_expr *cond);

/* The interval e takes when each var in vars ranges over its interval in doms (other variables
   stay symbolic). Used by bound inference: relax the consumer's inner loops, keep the outer. */
ir_interval ir_interval_of(ir_analyzer *, te_expr *e, int n, te_expr *const vars[],
                           const ir_interval doms[]);
ir_interval ir_interval_union(ir_analyzer *, ir_interval a, ir_interval b);
/* [min, min + extent - 1] as an interval, and back: extent = max - min + 1 (simplified). */
ir_interval ir_interval_from_range(ir_analyzer *, te_expr *min, te_expr *extent);
te_expr *ir_interval_extent(ir_analyzer *, ir_interval);

#endif
