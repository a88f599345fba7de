/* printer.h — printer state shared by print_expr.c and print_stmt.c (lib/ir only). */
#ifndef TE_IR_PRINTER_H
#define TE_IR_PRINTER_H

#include "ir.h"

/* One printed unit: the output and the names given to variables so far. The tables are malloc'd
   (printing never grows the context's arenas) and freed by ir_printer_done. */
struct ir_printer {
  ir_str *out;
  size_t nvars, cap; /* open addressing: vars[i] -> names[i] */
  const te_expr **vars;
  char **names;
};

void ir_printer_init(ir_printer *, ir_str *out);
void ir_printer_done(ir_printer *);
/* The unique display name of a variable in this unit. */
const char *ir_printer_var_name(ir_printer *, const te_expr *var);
void ir_printer_expr(ir_printer *, te_expr *);
void ir_printer_stmt(ir_printer *, ir_stmt *, int indent);
/* The name of a te_tensor (for ACCESS, PROVIDE, REALIZE and "produce"). */
const char *ir_printer_tensor_name(const te_tensor *);

#endif
