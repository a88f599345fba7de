/* llvm_mem.c — buffer loads and stores.
 *
 * A flat buffer is a pointer to its element 0 (cg->bufs); element i is at ptr + i elements
 * (an inbounds GEP on the element's memory type). A vector access whose index is a ramp of
 * stride 1 is one vector load/store of the element type; any other vector index is done lane
 * by lane (a gather/scatter; issue 4 makes these masked gathers where it pays). Accesses carry
 * the element's natural alignment — nothing stronger is known yet. Bools are i8 in memory:
 * loads compare with zero, stores zero-extend.
 */
#include "llvm_cg.h"

static LLVMValueRef cg_buffer_ptr(cg_llvm *cg, ir_buffer *buf) {
  LLVMValueRef p = buf ? ir_map_get(cg->bufs, buf) : NULL;
  if (!p)
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': buffer '%s' is not bound",
             cg->kernel, buf && buf->name ? buf->name : "?");
  return p;
}

/* The scalar base of a stride-1 ramp index, or NULL. */
static te_expr *cg_dense_base(te_expr *idx) {
  int64_t stride;
  if (idx->kind == IR_RAMP && ir_is_const_int(idx->args[1], &stride) && stride == 1)
    return idx->args[0];
  return NULL;
}

static LLVMValueRef cg_elem_ptr(cg_llvm *cg, LLVMTypeRef elem, LLVMValueRef base,
                                LLVMValueRef index, te_dtype index_t) {
  LLVMValueRef i = cg_to_i64(cg, index, ir_elem(index_t));
  return LLVMBuildInBoundsGEP2(cg->b, elem, base, &i, 1, "");
}

static LLVMValueRef cg_load_at(cg_llvm *cg, LLVMTypeRef t, LLVMValueRef p, unsigned align) {
  LLVMValueRef v = LLVMBuildLoad2(cg->b, t, p, "");
  LLVMSetAlignment(v, align);
  return v;
}

static void cg_store_at(cg_llvm *cg, LLVMValueRef v, LLVMValueRef p, unsigned align) {
  LLVMValueRef s = LLVMBuildStore(cg->b, v, p);
  LLVMSetAlignment(s, align);
}

LLVMValueRef cg_load(cg_llvm *cg, te_expr *e) {
  ir_buffer *buf = e->u.buffer;
  te_dtype t = e->dtype;
  te_expr *idx = e->args[0];
  LLVMValueRef base = cg_buffer_ptr(cg, buf);
  LLVMTypeRef elem = cg_mem_type(cg, ir_elem(t));
  LLVMTypeRef vt = cg_mem_type(cg, t);
  if (!base || !elem || !vt)
    return NULL;
  unsigned align = (unsigned)ir_dtype_bytes(t);
  te_expr *dense = t.lanes > 1 ? cg_dense_base(idx) : NULL;
  LLVMValueRef v;
  if (t.lanes == 1 || dense) {
    te_expr *at = dense ? dense : idx;
    LLVMValueRef i = cg_expr(cg, at);
    if (!i)
      return NULL;
    v = cg_load_at(cg, vt, cg_elem_ptr(cg, elem, base, i, at->dtype), align);
  } else {
    LLVMValueRef iv = cg_expr(cg, idx);
    if (!iv)
      return NULL;
    v = LLVMGetPoison(vt);
    for (unsigned l = 0; l < t.lanes; l++) {
      LLVMValueRef li = LLVMConstInt(cg->t_i32, l, 0);
      LLVMValueRef il = LLVMBuildExtractElement(cg->b, iv, li, "");
      LLVMValueRef x = cg_load_at(cg, elem, cg_elem_ptr(cg, elem, base, il, idx->dtype), align);
      v = LLVMBuildInsertElement(cg->b, v, x, li, "");
    }
  }
  if (ir_is_bool(t))
    v = LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(vt), "");
  return v;
}

bool cg_store(cg_llvm *cg, ir_stmt *s) {
  ir_buffer *buf = s->u.buffer;
  te_expr *value = s->exprs[0], *idx = s->exprs[1];
  te_dtype t = value->dtype;
  LLVMValueRef base = cg_buffer_ptr(cg, buf);
  LLVMTypeRef elem = cg_mem_type(cg, ir_elem(t));
  LLVMTypeRef vt = cg_mem_type(cg, t);
  LLVMValueRef v = base && elem && vt ? cg_expr(cg, value) : NULL;
  if (!v)
    return false;
  if (ir_is_bool(t))
    v = LLVMBuildZExt(cg->b, v, vt, "");
  unsigned align = (unsigned)ir_dtype_bytes(t);
  te_expr *dense = t.lanes > 1 ? cg_dense_base(idx) : NULL;
  if (t.lanes == 1 || dense) {
    te_expr *at = dense ? dense : idx;
    LLVMValueRef i = cg_expr(cg, at);
    if (!i)
      return false;
    cg_store_at(cg, v, cg_elem_ptr(cg, elem, base, i, at->dtype), align);
    return true;
  }
  LLVMValueRef iv = cg_expr(cg, idx);
  if (!iv)
    return false;
  for (unsigned l = 0; l < t.lanes; l++) {
    LLVMValueRef li = LLVMConstInt(cg->t_i32, l, 0);
    LLVMValueRef il = LLVMBuildExtractElement(cg->b, iv, li, "");
    LLVMValueRef x = LLVMBuildExtractElement(cg->b, v, li, "");
    cg_store_at(cg, x, cg_elem_ptr(cg, elem, base, il, idx->dtype), align);
  }
  return true;
}
