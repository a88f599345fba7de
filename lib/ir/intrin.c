/* intrin.c — tables generated from nodes.def and intrinsics.def: kind names, argument counts,
 * intrinsic names and flags, loop kind names.
 */
#include <string.h>

#include "ir.h"

const char *const ir_expr_kind_name[IR_EXPR_COUNT] = {
#define IR_EXPR(K, name, n) name,
#define IR_STMT(K, name)
#include "nodes.def"
#undef IR_EXPR
#undef IR_STMT
};

const int ir_expr_kind_nargs[IR_EXPR_COUNT] = {
#define IR_EXPR(K, name, n) n,
#define IR_STMT(K, name)
#include "nodes.def"
#undef IR_EXPR
#undef IR_STMT
};

const char *const ir_stmt_kind_name[IR_STMT_COUNT] = {
#define IR_EXPR(K, name, n)
#define IR_STMT(K, name) name,
#include "nodes.def"
#undef IR_EXPR
#undef IR_STMT
};

const ir_intrin_info ir_intrin_table[IR_INTRIN_COUNT] = {
#define IR_INTRIN(ID, name, n, flags) {name, n, flags},
#include "intrinsics.def"
#undef IR_INTRIN
};

const char *const ir_for_kind_name[] = {"", "parallel", "vectorized", "unrolled", "thread"};

int ir_intrin_lookup(const char *name) {
  if (!name)
    return -1;
  for (int i = 0; i < IR_INTRIN_COUNT; i++)
    if (strcmp(ir_intrin_table[i].name, name) == 0)
      return i;
  return -1;
}

const char *const ir_tensor_intrin_name[IR_TENSOR_INTRIN_COUNT] = {"", "vpdpbusd", "vdpbf16ps",
                                                                   "mma_m16n8k16", "mma_m16n8k32"};

ir_tensor_intrin ir_tensor_intrin_lookup(const char *name) {
  for (int i = 1; name && i < IR_TENSOR_INTRIN_COUNT; i++)
    if (strcmp(ir_tensor_intrin_name[i], name) == 0)
      return (ir_tensor_intrin)i;
  return IR_TENSOR_INTRIN_NONE;
}
