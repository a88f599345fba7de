/* cons.h — hash-consing internals shared by expr.c and cons.c (lib/ir only). */
#ifndef TE_IR_CONS_H
#define TE_IR_CONS_H

#include "ir.h"

uint32_t ir_cons_hash(const te_expr *);
bool ir_cons_eq(const te_expr *, const te_expr *);
/* The consed node equal to key (key->hash set), or NULL. */
te_expr *ir_cons_find(te_ctx *, const te_expr *key);
/* Adds e to the current table; false (TE_ERR_NOMEM recorded) when the table cannot grow. */
bool ir_cons_insert(te_ctx *, te_expr *);

#endif
