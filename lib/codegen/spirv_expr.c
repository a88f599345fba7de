/* spirv_expr.c — expressions to SPIR-V: arithmetic, comparisons, logic, select, loads, lets.
 *
 * Every expression is emitted into the current block; its value is cached for that block (by
 * node: expressions are hash-consed, so a repeated subexpression is computed once per block).
 * The cache is cleared whenever a new block opens, after a store or barrier (loads may change),
 * and when a variable is bound (a LET may rebind a variable an unrolled copy used before).
 *
 * i64 values carry their representation (spirv.h, "Index arithmetic"): a binary operation on
 * two narrow operands stays in 32 bits; any wide operand widens the other.
 *
 * Integer division follows the IR: FLOORDIV/FLOORMOD round towards -inf. They are built from
 * OpSDiv/OpSRem (C's truncation) with a branch-free fix-up where the remainder's sign differs
 * from the divisor's; OpSMod (which has the divisor's sign) is not used: Mesa's lavapipe computes
 * it as a truncated remainder. Float FLOORMOD is a - b * floor(a / b) for the same reason.
 *
 * A SELECT whose unchosen side may load (conv2d's padding: select(in_bounds, A[i - 1], 0)) is
 * emitted as a branch with an OpPhi, so no out-of-bounds address is ever read; other SELECTs are
 * OpSelect.
 */
#include "spirv.h"

static cg_spv_val spv_fail(void) { return (cg_spv_val){0, false}; }

static bool spv_is_i64(te_dtype t) { return ir_is_int(t) && t.bits == 64; }

void cg_spv_cache_clear(cg_spv *s) {
  if (s->cache && s->cache->count)
    s->cache = ir_map_new(s->ctx);
}

cg_spv_binding *cg_spv_bind(cg_spv *s, te_expr *var, cg_spv_binding *b) {
  cg_spv_binding *old = ir_map_get(s->vars, var);
  ir_map_put(s->vars, var, b);
  cg_spv_cache_clear(s);
  return old;
}

uint32_t cg_spv_val_type(cg_spv *s, te_dtype t, bool narrow) {
  if (narrow && spv_is_i64(t))
    return cg_spv_t_int(s, 32, true);
  return cg_spv_t_dtype(s, ir_elem(t));
}

static cg_spv_val spv_unsupported(cg_spv *s, te_expr *e, const char *what) {
  ir_error(s->ctx, TE_ERR_UNSUPPORTED,
           "te_build: kernel '%s': the SPIR-V back end does not emit %s (in '%s')", s->kernel, what,
           ir_expr_kind_name[e->kind]);
  return spv_fail();
}

static cg_spv_val spv_var(cg_spv *s, te_expr *e) {
  cg_spv_binding *b = ir_map_get(s->vars, e);
  if (!b) {
    ir_error(s->ctx, TE_ERR_INTERNAL,
             "internal: te_build: kernel '%s': variable '%s' is not bound in the SPIR-V body",
             s->kernel, e->u.var.name);
    return spv_fail();
  }
  if (!b->is_ptr)
    return (cg_spv_val){b->id, b->narrow};
  uint32_t t = cg_spv_val_type(s, e->dtype, b->narrow);
  return (cg_spv_val){cg_spv_inst(s, SpvOpLoad, t, 1, &b->id), b->narrow};
}

/* Both operands of a binary node, in one representation; *narrow says which. */
static bool spv_operands(cg_spv *s, te_expr *e, uint32_t *a, uint32_t *b, bool *narrow) {
  cg_spv_val x = cg_spv_expr(s, e->args[0]);
  cg_spv_val y = x.id ? cg_spv_expr(s, e->args[1]) : spv_fail();
  if (!y.id)
    return false;
  te_dtype t = e->args[0]->dtype;
  *narrow = spv_is_i64(t) && x.narrow && y.narrow;
  *a = *narrow ? x.id : cg_spv_widen(s, x, t);
  *b = *narrow ? y.id : cg_spv_widen(s, y, t);
  return *a && *b;
}

/* An integer constant in the representation of dtype t (narrow: 32 bits). */
static uint32_t spv_int_const(cg_spv *s, te_dtype t, bool narrow, int64_t v) {
  return narrow ? cg_spv_const_i32(s, (int32_t)v) : cg_spv_const_int(s, ir_elem(t), v);
}

/* a // b or a % b, rounding towards -inf: q = a / b, r = a % b (truncating); when r != 0 and
   its sign differs from b's, q - 1 and r + b. A positive constant b needs only r < 0. */
static uint32_t spv_floor_divmod(cg_spv *s, te_expr *e, uint32_t type, bool narrow, uint32_t a,
                                 uint32_t b) {
  bool is_div = e->kind == IR_FLOORDIV;
  int64_t c;
  uint32_t zero = spv_int_const(s, e->dtype, narrow, 0);
  uint32_t r = cg_spv_inst(s, SpvOpSRem, type, 2, (uint32_t[]){a, b});
  uint32_t rneg = cg_spv_inst(s, SpvOpSLessThan, s->t_bool, 2, (uint32_t[]){r, zero});
  uint32_t fix = rneg;
  if (!(ir_is_const_int(e->args[1], &c) && c > 0)) {
    uint32_t bneg = cg_spv_inst(s, SpvOpSLessThan, s->t_bool, 2, (uint32_t[]){b, zero});
    uint32_t rnz = cg_spv_inst(s, SpvOpINotEqual, s->t_bool, 2, (uint32_t[]){r, zero});
    uint32_t diff = cg_spv_inst(s, SpvOpLogicalNotEqual, s->t_bool, 2, (uint32_t[]){rneg, bneg});
    fix = cg_spv_inst(s, SpvOpLogicalAnd, s->t_bool, 2, (uint32_t[]){rnz, diff});
  }
  if (is_div) {
    uint32_t q = cg_spv_inst(s, SpvOpSDiv, type, 2, (uint32_t[]){a, b});
    uint32_t one = spv_int_const(s, e->dtype, narrow, 1);
    uint32_t q1 = cg_spv_inst(s, SpvOpISub, type, 2, (uint32_t[]){q, one});
    return cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){fix, q1, q});
  }
  uint32_t rb = cg_spv_inst(s, SpvOpIAdd, type, 2, (uint32_t[]){r, b});
  return cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){fix, rb, r});
}

/* Float a // b = floor(a / b) and a % b = a - b * floor(a / b). */
static uint32_t spv_float_floor_divmod(cg_spv *s, bool is_div, uint32_t type, uint32_t a,
                                       uint32_t b) {
  uint32_t q = cg_spv_inst(s, SpvOpFDiv, type, 2, (uint32_t[]){a, b});
  uint32_t fq = cg_spv_glsl(s, type, GLSLstd450Floor, 1, &q);
  if (is_div)
    return fq;
  uint32_t bq = cg_spv_inst(s, SpvOpFMul, type, 2, (uint32_t[]){b, fq});
  return cg_spv_inst(s, SpvOpFSub, type, 2, (uint32_t[]){a, bq});
}

static cg_spv_val spv_arith(cg_spv *s, te_expr *e) {
  uint32_t a, b;
  bool narrow;
  if (!spv_operands(s, e, &a, &b, &narrow))
    return spv_fail();
  te_dtype t = e->dtype;
  uint32_t type = cg_spv_val_type(s, t, narrow);
  bool f = ir_is_float(t), sg = ir_is_int(t);
  uint32_t ab[2] = {a, b};
  SpvOp op;
  switch (e->kind) {
  case IR_ADD:
    op = f ? SpvOpFAdd : SpvOpIAdd;
    break;
  case IR_SUB:
    op = f ? SpvOpFSub : SpvOpISub;
    break;
  case IR_MUL:
    op = f ? SpvOpFMul : SpvOpIMul;
    break;
  case IR_DIV:
    op = f ? SpvOpFDiv : sg ? SpvOpSDiv : SpvOpUDiv;
    break;
  case IR_TRUNCDIV:
    op = sg ? SpvOpSDiv : SpvOpUDiv;
    break;
  case IR_TRUNCMOD:
    op = sg ? SpvOpSRem : SpvOpUMod;
    break;
  case IR_FLOORMOD:
  case IR_FLOORDIV:
    if (f)
      return (cg_spv_val){spv_float_floor_divmod(s, e->kind == IR_FLOORDIV, type, a, b), false};
    if (!sg) {
      op = e->kind == IR_FLOORDIV ? SpvOpUDiv : SpvOpUMod;
      break;
    }
    return (cg_spv_val){spv_floor_divmod(s, e, type, narrow, a, b), narrow};
  case IR_MIN:
  case IR_MAX: {
    bool mn = e->kind == IR_MIN;
    enum GLSLstd450 g = f    ? (mn ? GLSLstd450FMin : GLSLstd450FMax)
                        : sg ? (mn ? GLSLstd450SMin : GLSLstd450SMax)
                             : (mn ? GLSLstd450UMin : GLSLstd450UMax);
    return (cg_spv_val){cg_spv_glsl(s, type, g, 2, ab), narrow};
  }
  default:
    return spv_unsupported(s, e, "this arithmetic");
  }
  return (cg_spv_val){cg_spv_inst(s, op, type, 2, ab), narrow};
}

static cg_spv_val spv_compare(cg_spv *s, te_expr *e) {
  uint32_t a, b;
  bool narrow;
  if (!spv_operands(s, e, &a, &b, &narrow))
    return spv_fail();
  te_dtype t = e->args[0]->dtype;
  bool f = ir_is_float(t), bl = ir_is_bool(t), sg = ir_is_int(t);
  SpvOp op;
  switch (e->kind) {
  case IR_EQ:
    op = f ? SpvOpFOrdEqual : bl ? SpvOpLogicalEqual : SpvOpIEqual;
    break;
  case IR_NE:
    op = f ? SpvOpFUnordNotEqual : bl ? SpvOpLogicalNotEqual : SpvOpINotEqual;
    break;
  case IR_LT:
    op = f ? SpvOpFOrdLessThan : sg ? SpvOpSLessThan : SpvOpULessThan;
    break;
  case IR_LE:
    op = f ? SpvOpFOrdLessThanEqual : sg ? SpvOpSLessThanEqual : SpvOpULessThanEqual;
    break;
  case IR_GT:
    op = f ? SpvOpFOrdGreaterThan : sg ? SpvOpSGreaterThan : SpvOpUGreaterThan;
    break;
  case IR_GE:
    op = f ? SpvOpFOrdGreaterThanEqual : sg ? SpvOpSGreaterThanEqual : SpvOpUGreaterThanEqual;
    break;
  default:
    return spv_unsupported(s, e, "this comparison");
  }
  if (bl && e->kind != IR_EQ && e->kind != IR_NE) { /* false < true: unsigned op on 0/1 */
    uint32_t u = s->t_u32, one = cg_spv_const_u32(s, 1), zero = cg_spv_const_u32(s, 0);
    a = cg_spv_inst(s, SpvOpSelect, u, 3, (uint32_t[]){a, one, zero});
    b = cg_spv_inst(s, SpvOpSelect, u, 3, (uint32_t[]){b, one, zero});
  }
  return (cg_spv_val){cg_spv_inst(s, op, s->t_bool, 2, (uint32_t[]){a, b}), false};
}

static cg_spv_val spv_logic(cg_spv *s, te_expr *e) {
  if (e->kind == IR_NOT) {
    cg_spv_val a = cg_spv_expr(s, e->args[0]);
    return a.id ? (cg_spv_val){cg_spv_inst(s, SpvOpLogicalNot, s->t_bool, 1, &a.id), false}
                : spv_fail();
  }
  uint32_t a, b;
  bool narrow;
  if (!spv_operands(s, e, &a, &b, &narrow))
    return spv_fail();
  SpvOp op = e->kind == IR_AND ? SpvOpLogicalAnd : SpvOpLogicalOr;
  return (cg_spv_val){cg_spv_inst(s, op, s->t_bool, 2, (uint32_t[]){a, b}), false};
}

static int spv_has_load_cb(ir_visitor *v, te_expr *e) {
  (void)v;
  return e->kind == IR_LOAD ? IR_ABORT : IR_CONTINUE;
}

static bool spv_has_load(te_expr *e) {
  ir_visitor v = {0};
  v.expr[IR_LOAD] = spv_has_load_cb;
  return ir_visit_expr(&v, e) == IR_ABORT;
}

/* One side of a branchy select: its value in the representation rep_narrow, and the block it
   ends in (for the phi). */
static uint32_t spv_select_side(cg_spv *s, te_expr *e, bool rep_narrow, uint32_t merge,
                                uint32_t *from) {
  cg_spv_val v = cg_spv_expr(s, e);
  if (!v.id)
    return 0;
  uint32_t id = rep_narrow ? v.id : cg_spv_widen(s, v, e->dtype);
  *from = s->block;
  cg_spv_branch(s, merge);
  return id;
}

/* select(c, t, f) with loads on a side, and if_then_else(c, t, f): if (c) t else f, a structured
   selection joined by an OpPhi, so only the chosen side runs. Both sides are emitted in the wide
   representation. */
cg_spv_val cg_spv_select_branchy(cg_spv *s, te_expr *e, uint32_t c) {
  uint32_t lt = cg_spv_id(s), lf = cg_spv_id(s), merge = cg_spv_id(s), bt = 0, bf = 0;
  cg_spv_op(s, &s->code, SpvOpSelectionMerge, 2, (uint32_t[]){merge, SpvSelectionControlMaskNone});
  cg_spv_op(s, &s->code, SpvOpBranchConditional, 3, (uint32_t[]){c, lt, lf});
  cg_spv_label(s, lt);
  uint32_t vt = spv_select_side(s, e->args[1], false, merge, &bt);
  if (!vt)
    return spv_fail();
  cg_spv_label(s, lf);
  uint32_t vf = spv_select_side(s, e->args[2], false, merge, &bf);
  if (!vf)
    return spv_fail();
  cg_spv_label(s, merge);
  uint32_t type = cg_spv_val_type(s, e->dtype, false);
  return (cg_spv_val){cg_spv_inst(s, SpvOpPhi, type, 4, (uint32_t[]){vt, bt, vf, bf}), false};
}

static cg_spv_val spv_select(cg_spv *s, te_expr *e) {
  cg_spv_val c = cg_spv_expr(s, e->args[0]);
  if (!c.id)
    return spv_fail();
  if (spv_has_load(e->args[1]) || spv_has_load(e->args[2]))
    return cg_spv_select_branchy(s, e, c.id);
  cg_spv_val t = cg_spv_expr(s, e->args[1]);
  cg_spv_val f = t.id ? cg_spv_expr(s, e->args[2]) : spv_fail();
  if (!f.id)
    return spv_fail();
  bool narrow = spv_is_i64(e->dtype) && t.narrow && f.narrow;
  uint32_t a = narrow ? t.id : cg_spv_widen(s, t, e->dtype);
  uint32_t b = narrow ? f.id : cg_spv_widen(s, f, e->dtype);
  uint32_t type = cg_spv_val_type(s, e->dtype, narrow);
  return (cg_spv_val){cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){c.id, a, b}), narrow};
}

uint32_t cg_spv_index(cg_spv *s, te_expr *e) {
  cg_spv_val v = cg_spv_expr(s, e);
  if (!v.id)
    return 0;
  if (e->dtype.bits == 64)
    return ir_is_int(e->dtype) ? cg_spv_narrow(s, v)
                               : cg_spv_inst(s, SpvOpUConvert, s->t_u32, 1, &v.id);
  return v.id; /* any 8/16/32-bit integer indexes an access chain */
}

uint32_t cg_spv_elem_ptr(cg_spv *s, ir_buffer *buf, uint32_t index, cg_spv_buf **out) {
  cg_spv_buf *b = ir_map_get(s->bufs, buf);
  if (!b) {
    ir_error(s->ctx, TE_ERR_INTERNAL,
             "internal: te_build: kernel '%s': buffer '%s' is not a parameter, shared or local "
             "buffer of the kernel",
             s->kernel, buf->name);
    return 0;
  }
  *out = b;
  if (b->sc == SpvStorageClassStorageBuffer)
    return cg_spv_inst(s, SpvOpAccessChain, b->ptr_type, 3,
                       (uint32_t[]){b->var, cg_spv_const_i32(s, 0), index});
  return cg_spv_inst(s, SpvOpAccessChain, b->ptr_type, 2, (uint32_t[]){b->var, index});
}

static cg_spv_val spv_load(cg_spv *s, te_expr *e) {
  uint32_t idx = cg_spv_index(s, e->args[0]);
  cg_spv_buf *b = NULL;
  uint32_t ptr = idx ? cg_spv_elem_ptr(s, e->u.buffer, idx, &b) : 0;
  if (!ptr)
    return spv_fail();
  uint32_t v = cg_spv_inst(s, SpvOpLoad, b->mem_type, 1, &ptr);
  if (ir_is_bool(e->dtype)) /* bool is one byte in memory */
    v = cg_spv_inst(s, SpvOpINotEqual, s->t_bool, 2,
                    (uint32_t[]){v, cg_spv_const_int(s, (te_dtype){kDLUInt, 8, 1}, 0)});
  return (cg_spv_val){v, false};
}

static cg_spv_val spv_let(cg_spv *s, te_expr *e) {
  cg_spv_val v = cg_spv_expr(s, e->args[1]);
  if (!v.id)
    return spv_fail();
  cg_spv_binding *b = ir_alloc(s->ctx, sizeof *b);
  if (!b)
    return spv_fail();
  *b = (cg_spv_binding){v.id, v.narrow, false};
  cg_spv_binding *old = cg_spv_bind(s, e->args[0], b);
  cg_spv_val r = cg_spv_expr(s, e->args[2]);
  ir_map_put(s->vars, e->args[0], old);
  return r;
}

static cg_spv_val spv_expr_uncached(cg_spv *s, te_expr *e) {
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    if (spv_is_i64(e->dtype) && e->u.i >= INT32_MIN && e->u.i <= INT32_MAX)
      return (cg_spv_val){cg_spv_const_i32(s, (int32_t)e->u.i), true};
    return (cg_spv_val){cg_spv_const_int(s, e->dtype, e->u.i), false};
  case IR_FLOAT:
    return (cg_spv_val){cg_spv_const_float(s, e->dtype, e->u.f), false};
  case IR_VAR:
    return spv_var(s, e);
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_DIV:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
  case IR_MIN:
  case IR_MAX:
    return spv_arith(s, e);
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
    return spv_compare(s, e);
  case IR_AND:
  case IR_OR:
  case IR_NOT:
    return spv_logic(s, e);
  case IR_SELECT:
    return spv_select(s, e);
  case IR_CAST: {
    cg_spv_val v = cg_spv_expr(s, e->args[0]);
    return v.id ? cg_spv_cast(s, v, e->args[0]->dtype, e->dtype) : spv_fail();
  }
  case IR_CALL:
    return cg_spv_call(s, e);
  case IR_LOAD:
    return spv_load(s, e);
  case IR_LET:
    return spv_let(s, e);
  default:
    break;
  }
  ir_error(s->ctx, TE_ERR_INTERNAL,
           "internal: te_build: kernel '%s': '%s' expression cannot reach SPIR-V generation",
           s->kernel, ir_expr_kind_name[e->kind]);
  return spv_fail();
}

cg_spv_val cg_spv_expr(cg_spv *s, te_expr *e) {
  if (!e)
    return spv_fail();
  if (e->dtype.lanes != 1) { /* cg_spv_scalarize rewrote the kernel's vector code */
    ir_error(s->ctx, TE_ERR_INTERNAL,
             "internal: te_build: kernel '%s': a vector '%s' reached SPIR-V generation", s->kernel,
             ir_expr_kind_name[e->kind]);
    return spv_fail();
  }
  if (e->dtype.code == kDLBfloat) { /* no bf16 type in Vulkan 1.1's SPIR-V */
    char buf[24];
    ir_error(s->ctx, TE_ERR_UNSUPPORTED,
             "te_build: kernel '%s': dtype %s is not supported by the SPIR-V back end (vulkan "
             "target; Vulkan has no bf16 type): compute in f16 or f32 for this target",
             s->kernel, ir_dtype_name(e->dtype, buf, sizeof buf));
    return spv_fail();
  }
  cg_spv_val *c = ir_map_get(s->cache, e);
  if (c)
    return *c;
  uint32_t block = s->block;
  cg_spv_val v = spv_expr_uncached(s, e);
  if (v.id && block == s->block && e->kind != IR_LET) {
    cg_spv_val *slot = ir_alloc(s->ctx, sizeof *slot);
    if (slot) {
      *slot = v;
      ir_map_put(s->cache, e, slot);
    }
  }
  return v;
}
