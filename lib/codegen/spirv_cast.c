/* spirv_cast.c — casts between IR dtypes, and the two forms of i64 values.
 *
 * An i64 value is either narrow (held in a signed 32-bit register: indices, sizes, loop
 * variables and what is computed from them) or wide (a real 64-bit integer: 64-bit data); see
 * spirv.h. Casts keep values narrow where that is exact: a signed int of at most 32 bits, an
 * unsigned one of fewer than 32 bits or a bool becomes a narrow i64; an u32, a float or a wide
 * value becomes a wide one. A narrow i64 cast to anything behaves as the signed 32-bit value it
 * holds, which is the i64 value.
 *
 * Integer conversions follow C: truncation keeps the low bits; extension follows the source's
 * signedness; same width is a bitcast. SPIR-V's rule that OpUConvert makes an unsigned type is
 * kept by converting in the source's signedness and bitcasting afterwards.
 */
#include "spirv.h"

static bool cast_is_i64(te_dtype t) { return ir_is_int(t) && t.bits == 64; }

uint32_t cg_spv_widen(cg_spv *s, cg_spv_val v, te_dtype t) {
  if (!v.narrow || !cast_is_i64(t))
    return v.id;
  return cg_spv_inst(s, SpvOpSConvert, cg_spv_t_int(s, 64, true), 1, &v.id);
}

uint32_t cg_spv_narrow(cg_spv *s, cg_spv_val v) {
  if (v.narrow)
    return v.id;
  return cg_spv_inst(s, SpvOpSConvert, s->t_i32, 1, &v.id);
}

/* An integer of (sb bits, ssigned) to (tb bits, tsigned), C semantics. */
static uint32_t cast_int(cg_spv *s, uint32_t v, int sb, bool ssigned, int tb, bool tsigned) {
  if (sb == tb)
    return ssigned == tsigned ? v
                              : cg_spv_inst(s, SpvOpBitcast, cg_spv_t_int(s, tb, tsigned), 1, &v);
  if (tb < sb) /* truncation: the low bits, whichever opcode */
    return cg_spv_inst(s, tsigned ? SpvOpSConvert : SpvOpUConvert, cg_spv_t_int(s, tb, tsigned), 1,
                       &v);
  uint32_t x =
      cg_spv_inst(s, ssigned ? SpvOpSConvert : SpvOpUConvert, cg_spv_t_int(s, tb, ssigned), 1, &v);
  return ssigned == tsigned ? x : cg_spv_inst(s, SpvOpBitcast, cg_spv_t_int(s, tb, tsigned), 1, &x);
}

static cg_spv_val cast_from_bool(cg_spv *s, uint32_t v, te_dtype to) {
  if (cast_is_i64(to)) /* 0 or 1: narrow */
    return (cg_spv_val){
        cg_spv_inst(s, SpvOpSelect, s->t_i32, 3,
                    (uint32_t[]){v, cg_spv_const_i32(s, 1), cg_spv_const_i32(s, 0)}),
        true};
  uint32_t one = ir_is_float(to) ? cg_spv_const_float(s, to, 1) : cg_spv_const_int(s, to, 1);
  uint32_t zero = ir_is_float(to) ? cg_spv_const_float(s, to, 0) : cg_spv_const_int(s, to, 0);
  return (cg_spv_val){
      cg_spv_inst(s, SpvOpSelect, cg_spv_t_dtype(s, to), 3, (uint32_t[]){v, one, zero}), false};
}

static cg_spv_val cast_to_bool(cg_spv *s, cg_spv_val v, te_dtype from) {
  uint32_t zero;
  SpvOp op = SpvOpINotEqual;
  if (ir_is_float(from)) {
    zero = cg_spv_const_float(s, from, 0);
    op = SpvOpFUnordNotEqual; /* (bool)NaN is true, as in C */
  } else {
    zero = v.narrow ? cg_spv_const_i32(s, 0) : cg_spv_const_int(s, from, 0);
  }
  return (cg_spv_val){cg_spv_inst(s, op, s->t_bool, 2, (uint32_t[]){v.id, zero}), false};
}

/* int -> int where either side may be a (narrow or wide) i64. */
static cg_spv_val cast_int_int(cg_spv *s, cg_spv_val v, te_dtype from, te_dtype to) {
  int sb = v.narrow ? 32 : from.bits;
  bool ssg = v.narrow || ir_is_int(from);
  if (cast_is_i64(to) && (ssg ? sb <= 32 : sb < 32)) /* exact in 32 signed bits: narrow */
    return (cg_spv_val){cast_int(s, v.id, sb, ssg, 32, true), true};
  return (cg_spv_val){cast_int(s, v.id, sb, ssg, to.bits, ir_is_int(to)), false};
}

cg_spv_val cg_spv_cast(cg_spv *s, cg_spv_val v, te_dtype from, te_dtype to) {
  from = ir_elem(from), to = ir_elem(to);
  if (ir_dtype_eq(from, to))
    return v;
  if (ir_is_bool(to))
    return cast_to_bool(s, v, from);
  if (ir_is_bool(from))
    return cast_from_bool(s, v.id, to);
  if (ir_is_intlike(from) && ir_is_intlike(to))
    return cast_int_int(s, v, from, to);
  uint32_t tt = cg_spv_t_dtype(s, to);
  if (ir_is_float(from) && ir_is_float(to))
    return (cg_spv_val){cg_spv_inst(s, SpvOpFConvert, tt, 1, &v.id), false};
  if (ir_is_float(to)) {
    bool sg = v.narrow || ir_is_int(from);
    return (cg_spv_val){cg_spv_inst(s, sg ? SpvOpConvertSToF : SpvOpConvertUToF, tt, 1, &v.id),
                        false};
  }
  /* float -> int: to a wide i64, or the target's own type */
  SpvOp op = ir_is_int(to) ? SpvOpConvertFToS : SpvOpConvertFToU;
  return (cg_spv_val){cg_spv_inst(s, op, tt, 1, &v.id), false};
}
