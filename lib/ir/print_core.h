/* print_core.h — what every printer of expressions shares: operator precedence, the spelling of
 * infix operators, where parentheses go, and literals. lib/ir/print_expr.c (the IR text,
 * docs/ir-text.md) and lib/parse/print_expr.c (the workload text, docs/workload-text.md) both
 * print through it, so the two texts agree wherever their languages share a construct.
 */
#ifndef TE_IR_PRINT_CORE_H
#define TE_IR_PRINT_CORE_H

#include "ir.h"

/* Precedence of an expression as an operand, loosest first: || < && < comparisons < + - <
 * / // % < unary (!, a negative literal that reads as a minus and a number) < atoms. */
enum {
  IR_PREC_OR = 1,
  IR_PREC_AND,
  IR_PREC_CMP,
  IR_PREC_ADD,
  IR_PREC_MUL,
  IR_PREC_UNARY,
  IR_PREC_ATOM
};
int ir_print_prec(const te_expr *);

/* The spelling of an infix operator with its spacing (" + ", "*", " && "), or NULL when the
   kind is not printed infix. */
const char *ir_print_infix_op(int kind);

/* Whether an infix node's left and right operands need parentheses: the fewest that keep the
   tree (a right operand of equal precedence, a - (b - c), and a comparison inside a comparison
   are parenthesized), so the text reads back to the same tree. */
bool ir_print_parens_left(const te_expr *e);
bool ir_print_parens_right(const te_expr *e);

/* Literals with their dtype unless it is the default: 5 (i64), i32(5), u64(18446744073709551615),
   true; 1.5 (f64), 1.5f (f32), nan, -inf, f32(inf), f32(nan). The shortest decimal that reads
   back to the same value of its width; NaN prints without its sign. */
void ir_print_int(ir_str *, te_dtype, int64_t);
void ir_print_float(ir_str *, te_dtype, double);

#endif
