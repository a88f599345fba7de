/* llvm_mem.c — buffer loads and stores.
 *
 * A flat buffer is a pointer to its element 0 (cg->bufs); element i is at ptr + i elements
 * (an inbounds GEP on the element's memory type). Vector accesses (lanes > 1):
 *   - an index that is a ramp of stride 1 is one contiguous vector load/store;
 *   - a broadcast index (every lane reads one element) is a scalar load and a splat;
 *   - any other vector index is a gather/scatter (llvm.masked.gather/scatter of a vector of
 *     element pointers): AVX-512 and AVX2 have instructions for them, other targets get them
 *     scalarized by LLVM;
 *   - inside a vector_mask region (cg->mask, made by the vectorize pass for tails and for
 *     conditions that vary by lane) every vector access is masked: llvm.masked.load/store or a
 *     gather/scatter with that mask. Lanes whose mask is false touch no memory; masked loads give
 *     zero there.
 * Alignment: each access carries the alignment the analysis proves. The buffer's base is
 * 64-byte aligned for allocations (allocas are made 64-aligned, te_rt_alloc returns 64-aligned
 * blocks) and element-aligned for arguments (the entry checks only that: requiring more would
 * refuse ordinary arrays); the offset's alignment comes from ir_modular_of of the (base) index
 * times the element size. So a dense access at `i.o*16` of an f32 allocation is 64-byte
 * aligned, one at `i.o*16 + 1` is 4-byte aligned. Device code may know a base better
 * (cg->base_align: a CUDA kernel's arguments checked 16-byte aligned, ptx_vector.c). (On current
 * x86 an aligned vmovups costs the same as vmovaps; the facts mostly help LLVM combine accesses.)
 * Bools are i8 in memory: loads compare with zero, stores zero-extend.
 */
#include <string.h>

#include "llvm_cg.h"

enum { CG_ALLOC_ALIGN = 64 };

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

static uint64_t cg_gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

unsigned cg_index_align(cg_llvm *cg, te_expr *at, unsigned elem, unsigned base) {
  if (at->dtype.lanes != 1 || base <= elem)
    return elem;
  if (!cg->an && !(cg->an = ir_analyzer_new(cg->ctx)))
    return elem;
  ir_modular m = ir_modular_of(cg->an, at);
  uint64_t c = (uint64_t)(m.coeff < 0 ? -m.coeff : m.coeff) * elem;
  uint64_t b = (uint64_t)(m.base < 0 ? -m.base : m.base) * elem;
  uint64_t g = cg_gcd(c, b); /* the offset in bytes is a multiple of g (0: it is 0) */
  unsigned align = base;
  while (g != 0 && g % align != 0)
    align /= 2;
  return align < elem ? elem : align;
}

/* The alignment of &buf[at] (at scalar: the element index, or a dense ramp's base). */
static unsigned cg_access_align(cg_llvm *cg, ir_buffer *buf, te_expr *at) {
  unsigned elem = (unsigned)ir_dtype_bytes(buf->dtype);
  unsigned base = buf->arg_index >= 0 ? elem : CG_ALLOC_ALIGN;
  void *known = cg->base_align ? ir_map_get(cg->base_align, buf) : NULL;
  if (known)
    base = (unsigned)(uintptr_t)known;
  return cg_index_align(cg, at, elem, base);
}

static LLVMValueRef cg_elem_ptr(cg_llvm *cg, LLVMTypeRef elem, LLVMValueRef base,
                                LLVMValueRef index, te_dtype index_t) {
  LLVMValueRef i = index;
  if (index_t.lanes == 1) {
    i = cg_to_i64(cg, index, index_t);
  } else if (index_t.bits < 64) {
    LLVMTypeRef t = LLVMVectorType(cg->t_i64, index_t.lanes);
    i = index_t.code == kDLInt ? LLVMBuildSExt(cg->b, index, t, "")
                               : LLVMBuildZExt(cg->b, index, t, "");
  }
  return LLVMBuildInBoundsGEP2(cg->b, elem, base, &i, 1, "");
}

/* A call of an llvm.masked.* intrinsic overloaded on (data type, pointer type), with the
   alignment as the attribute of its pointer operand (LLVM 22: no alignment operand). */
static LLVMValueRef cg_masked_call(cg_llvm *cg, const char *name, LLVMTypeRef data_t,
                                   LLVMTypeRef ptr_t, LLVMValueRef *args, unsigned nargs,
                                   unsigned ptr_arg, unsigned align) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef over[2] = {data_t, ptr_t};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, over, 2);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cg->lctx, id, over, 2);
  LLVMValueRef call = LLVMBuildCall2(cg->b, fty, fn, args, nargs, "");
  unsigned kind = LLVMGetEnumAttributeKindForName("align", 5);
  LLVMAddCallSiteAttribute(call, ptr_arg + 1, LLVMCreateEnumAttribute(cg->lctx, kind, align));
  return call;
}

static LLVMValueRef cg_all_lanes(cg_llvm *cg, unsigned lanes) {
  return cg_splat(cg, LLVMConstInt(cg->t_i1, 1, 0), (int)lanes);
}

/* The mask of a vector access of `lanes` lanes: the region's, or all lanes. */
static LLVMValueRef cg_access_mask(cg_llvm *cg, unsigned lanes) {
  if (cg->mask && LLVMGetVectorSize(LLVMTypeOf(cg->mask)) == lanes)
    return cg->mask;
  return NULL;
}

/* A load whose lanes all read one element (its index a broadcast, as a register tile's operand
   in a masked tail): one scalar load, splat, not a gather. Under a mask it is a one-element
   masked load, done when some lane is live, and masked-off lanes read zero as in any masked
   load. */
static LLVMValueRef cg_uniform_load(cg_llvm *cg, te_expr *e, LLVMValueRef base, LLVMTypeRef elem,
                                    LLVMTypeRef vt, LLVMValueRef mask) {
  te_expr *at = e->args[0]->args[0];
  LLVMValueRef i = cg_expr(cg, at);
  if (!i)
    return NULL;
  LLVMValueRef p = cg_elem_ptr(cg, elem, base, i, at->dtype);
  unsigned align = cg_access_align(cg, e->u.buffer, at);
  int lanes = (int)e->dtype.lanes;
  if (!mask) {
    LLVMValueRef x = LLVMBuildLoad2(cg->b, elem, p, "");
    LLVMSetAlignment(x, align);
    return cg_splat(cg, x, lanes);
  }
  LLVMTypeRef v1 = LLVMVectorType(elem, 1);
  LLVMValueRef zero32 = LLVMConstInt(cg->t_i32, 0, 0);
  LLVMValueRef any = cg_intrinsic(cg, "llvm.vector.reduce.or", LLVMTypeOf(mask), 1, &mask);
  if (!any)
    return NULL;
  LLVMValueRef m1 =
      LLVMBuildInsertElement(cg->b, LLVMGetUndef(LLVMVectorType(cg->t_i1, 1)), any, zero32, "");
  LLVMValueRef args[3] = {p, m1, LLVMConstNull(v1)};
  LLVMValueRef one = cg_masked_call(cg, "llvm.masked.load", v1, cg->t_ptr, args, 3, 0, align);
  LLVMValueRef x = LLVMBuildExtractElement(cg->b, one, zero32, "");
  return LLVMBuildSelect(cg->b, mask, cg_splat(cg, x, lanes), LLVMConstNull(vt), "");
}

static LLVMValueRef cg_vector_load(cg_llvm *cg, te_expr *e, LLVMValueRef base, LLVMTypeRef elem,
                                   LLVMTypeRef vt) {
  te_expr *idx = e->args[0], *dense = cg_dense_base(idx);
  unsigned lanes = e->dtype.lanes;
  LLVMValueRef mask = cg_access_mask(cg, lanes);
  if (idx->kind == IR_BROADCAST)
    return cg_uniform_load(cg, e, base, elem, vt, mask);
  LLVMValueRef i = cg_expr(cg, dense ? dense : idx);
  if (!i)
    return NULL;
  LLVMValueRef p = cg_elem_ptr(cg, elem, base, i, (dense ? dense : idx)->dtype);
  LLVMValueRef zero = LLVMConstNull(vt);
  if (dense) {
    unsigned align = cg_access_align(cg, e->u.buffer, dense);
    if (!mask) {
      LLVMValueRef v = LLVMBuildLoad2(cg->b, vt, p, "");
      LLVMSetAlignment(v, align);
      return v;
    }
    LLVMValueRef args[3] = {p, mask, zero};
    return cg_masked_call(cg, "llvm.masked.load", vt, cg->t_ptr, args, 3, 0, align);
  }
  LLVMValueRef args[3] = {p, mask ? mask : cg_all_lanes(cg, lanes), zero};
  return cg_masked_call(cg, "llvm.masked.gather", vt, LLVMTypeOf(p), args, 3, 0,
                        (unsigned)ir_dtype_bytes(e->dtype));
}

/* prefetch(B[i]): llvm.prefetch of &B[i] (read, high locality, data cache); never faults. A
   prefetch inside a vectorized loop has a vector index (the vectorizer widens its load like any
   other): each lane's address is prefetched. */
LLVMValueRef cg_prefetch(cg_llvm *cg, te_expr *load) {
  ir_buffer *buf = load->u.buffer;
  LLVMValueRef base = cg_buffer_ptr(cg, buf);
  LLVMTypeRef elem = cg_mem_type(cg, ir_elem(load->dtype));
  LLVMValueRef i = base && elem ? cg_expr(cg, load->args[0]) : NULL;
  if (!i)
    return NULL;
  te_dtype it = load->args[0]->dtype;
  LLVMValueRef p = cg_elem_ptr(cg, elem, base, i, it);
  LLVMTypeRef params[4] = {cg->t_ptr, cg->t_i32, cg->t_i32, cg->t_i32};
  for (int lane = 0; lane < (int)it.lanes; lane++) {
    LLVMValueRef at =
        it.lanes == 1
            ? p
            : LLVMBuildExtractElement(cg->b, p, LLVMConstInt(cg->t_i32, (unsigned)lane, 0), "");
    LLVMValueRef args[4] = {at, LLVMConstInt(cg->t_i32, 0, 0), LLVMConstInt(cg->t_i32, 3, 0),
                            LLVMConstInt(cg->t_i32, 1, 0)};
    cg_call_fn(cg, "llvm.prefetch.p0", cg->t_void, 4, params, args);
  }
  return LLVMGetUndef(cg_type(cg, load->dtype));
}

LLVMValueRef cg_load(cg_llvm *cg, te_expr *e) {
  ir_buffer *buf = e->u.buffer;
  te_dtype t = e->dtype;
  LLVMValueRef base = cg_buffer_ptr(cg, buf);
  LLVMTypeRef elem = cg_mem_type(cg, ir_elem(t));
  LLVMTypeRef vt = cg_mem_type(cg, t);
  if (!base || !elem || !vt)
    return NULL;
  LLVMValueRef v;
  if (t.lanes > 1) {
    v = cg_vector_load(cg, e, base, elem, vt);
  } else {
    LLVMValueRef i = cg_expr(cg, e->args[0]);
    if (!i)
      return NULL;
    v = LLVMBuildLoad2(cg->b, vt, cg_elem_ptr(cg, elem, base, i, e->args[0]->dtype), "");
    LLVMSetAlignment(v, cg_access_align(cg, buf, e->args[0]));
  }
  if (v && ir_is_bool(t))
    v = LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstNull(vt), "");
  return v;
}

static bool cg_vector_store(cg_llvm *cg, ir_stmt *s, LLVMValueRef v, LLVMValueRef base,
                            LLVMTypeRef elem) {
  te_expr *idx = s->exprs[1], *dense = cg_dense_base(idx);
  unsigned lanes = s->exprs[0]->dtype.lanes;
  LLVMValueRef mask = cg_access_mask(cg, lanes);
  LLVMValueRef i = cg_expr(cg, dense ? dense : idx);
  if (!i)
    return false;
  LLVMValueRef p = cg_elem_ptr(cg, elem, base, i, (dense ? dense : idx)->dtype);
  if (dense) {
    unsigned align = cg_access_align(cg, s->u.buffer, dense);
    if (!mask) {
      LLVMValueRef st = LLVMBuildStore(cg->b, v, p);
      LLVMSetAlignment(st, align);
      cg_mark_nontemporal(cg, s->u.buffer, st);
      return true;
    }
    LLVMValueRef args[3] = {v, p, mask};
    cg_masked_call(cg, "llvm.masked.store", LLVMTypeOf(v), cg->t_ptr, args, 3, 1, align);
    return true;
  }
  LLVMValueRef args[3] = {v, p, mask ? mask : cg_all_lanes(cg, lanes)};
  cg_masked_call(cg, "llvm.masked.scatter", LLVMTypeOf(v), LLVMTypeOf(p), args, 3, 1,
                 (unsigned)ir_dtype_bytes(s->exprs[0]->dtype));
  return true;
}

bool cg_store(cg_llvm *cg, ir_stmt *s) {
  ir_buffer *buf = s->u.buffer;
  te_expr *value = s->exprs[0], *idx = s->exprs[1];
  if (ir_is_mma_call(value)) {
    if (cg->tensor_store)
      return cg->tensor_store(cg, s);
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: an mma outside CUDA code");
    return false;
  }
  te_dtype t = value->dtype;
  LLVMValueRef base = cg_buffer_ptr(cg, buf);
  LLVMTypeRef elem = cg_mem_type(cg, ir_elem(t));
  LLVMTypeRef vt = cg_mem_type(cg, t);
  LLVMValueRef v = base && elem && vt ? cg_expr(cg, value) : NULL;
  if (!v)
    return false;
  if (ir_is_bool(t))
    v = LLVMBuildZExt(cg->b, v, vt, "");
  if (t.lanes > 1)
    return cg_vector_store(cg, s, v, base, elem);
  LLVMValueRef i = cg_expr(cg, idx);
  if (!i)
    return false;
  LLVMValueRef st = LLVMBuildStore(cg->b, v, cg_elem_ptr(cg, elem, base, i, idx->dtype));
  LLVMSetAlignment(st, cg_access_align(cg, buf, idx));
  cg_mark_nontemporal(cg, buf, st);
  return true;
}

LLVMValueRef cg_bases_aligned(cg_llvm *cg, int n, const ir_buffer *const bufs[], unsigned align,
                              const char *name) {
  LLVMValueRef any = LLVMConstInt(cg->t_i64, 0, 0);
  for (int i = 0; i < n; i++) {
    LLVMValueRef p = ir_map_get(cg->bufs, bufs[i]);
    if (!p) {
      ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': buffer '%s' unbound",
               cg->kernel, bufs[i]->name);
      return NULL;
    }
    any = LLVMBuildOr(cg->b, any, LLVMBuildPtrToInt(cg->b, p, cg->t_i64, ""), "");
  }
  LLVMValueRef low = LLVMBuildAnd(cg->b, any, LLVMConstInt(cg->t_i64, align - 1, 0), "");
  return LLVMBuildICmp(cg->b, LLVMIntEQ, low, LLVMConstInt(cg->t_i64, 0, 0), name);
}
