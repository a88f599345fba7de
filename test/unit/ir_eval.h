/* ir_eval.h — a reference interpreter of IR expressions, for tests.
 *
 * Evaluates one lane of an expression on given variable values, with the semantics of ir.h
 * written out independently of the simplifier's constant folding (so property tests compare
 * two implementations): integers wrap at their width, floordiv/floormod round towards -inf,
 * f32 arithmetic is done in float, select evaluates both branches (a division by zero in
 * either makes the result undefined, as it may in generated code), if_then_else only the side
 * its condition takes, a cast to bool is != 0.
 *
 * With an access callback it also evaluates compute bodies: tensor reads (ACCESS) and
 * reductions (REDUCE: sum, prod, min, max and custom reducers, over the axes' domains in
 * lexicographic order, restricted to the points where the condition holds), so that a test can
 * compute any computation element by element as a reference (test/fuzz/fuzz_schedule.c).
 */
#ifndef TE_TEST_IR_EVAL_H
#define TE_TEST_IR_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

/* Ints normalised to their dtype (sign- or zero-extended; bool 0/1); floats as double (f32
   values are exactly representable floats). */
typedef union ir_eval_val {
  int64_t i;
  double f;
} ir_eval_val;

typedef struct ir_eval_env {
  int n; /* variables and their values */
  te_expr *const *vars;
  const ir_eval_val *vals;
  /* Optional: the value of element index of a buffer (LOAD); false: undefined. */
  bool (*load)(void *user, ir_buffer *, int64_t index, ir_eval_val *out);
  /* Optional: element idx[0..n) of tensor t (ACCESS); false: undefined (out of its bounds). */
  bool (*access)(void *user, te_tensor *t, int n, const int64_t idx[], ir_eval_val *out);
  void *user;
  bool overflow; /* set when a signed i64 + - * overflowed (tests skip such points) */
} ir_eval_env;

/* Lane `lane` of e (0 for scalars). False when the value is undefined (division by zero,
   float-to-int out of range) or e holds what the interpreter cannot evaluate (an unbound
   variable, an ACCESS without an access callback, a LOAD without a load callback). */
bool ir_eval(ir_eval_env *, te_expr *e, int lane, ir_eval_val *out);

/* Shorthands for scalar expressions. */
bool ir_eval_i64(ir_eval_env *, te_expr *e, int64_t *out);
bool ir_eval_f64(ir_eval_env *, te_expr *e, double *out);

#endif
