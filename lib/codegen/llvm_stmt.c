/* llvm_stmt.c — statements of the lowered IR as LLVM control flow.
 *
 * Loops are header/body/latch blocks with an i64 (the loop variable's type) phi. The lowering
 * passes leave no vectorized loop (vectorize.c turns them into vector code; one reaching this
 * point is an internal error, never a silent serial loop) and no unrolled one (a hand-made
 * unrolled loop is emitted as a serial loop: unrolling is only a hint). Parallel loops are
 * outlined through the closure make_closures put around each (llvm_parallel.c); the entry's
 * buffer_bind and compute_scope are llvm_entry.c's. Thread-bound loops and barriers need a GPU
 * target.
 * `attr vector_mask = m { body }` (vectorize.c) makes m, ANDed with the enclosing mask, the
 * mask of every vector load and store in body (llvm_mem.c). With cg->mask_fast_path (CUDA
 * kernels) an outermost region is written twice: unmasked when every lane is live, else masked.
 *
 * Allocations of a constant size up to CG_STACK_MAX bytes are allocas in the function's entry
 * block (so LLVM can promote them to registers), while the function's allocas stay within
 * CG_STACK_FN_MAX; larger or symbolic ones come from te_rt_alloc and are freed at the end of
 * their scope. The limit is as high as an L1-sized tile: a producer computed at a tile of its
 * consumer (te_compute_at, as Halide's blur computes blur_x per tile) allocates its buffer once
 * per tile, and on the heap that is a malloc and a free per tile (te-bench's blur, 2048 tiles of
 * 34 KiB a call: 0.91x Halide with them, 0.935x without, by CPU time on one thread). Every
 * early return (a failed assert, an allocation that failed, a parallel loop whose body failed)
 * frees the heap allocations live at that point first: the function keeps them on a stack
 * (cg_fn.live) while it writes their scopes.
 */
#include <stdio.h>
#include <string.h>

#include "llvm_cg.h"

#include <llvm-c/DebugInfo.h>

/* 64 KiB: an L1 data cache's tile; the sum per function (a parallel loop's closure is a
   function of its own) stays far below a thread's stack (glibc's default is the stack rlimit,
   usually 8 MiB; OMP_STACKSIZE sets OpenMP workers'). */
enum { CG_STACK_MAX = 64 * 1024, CG_STACK_FN_MAX = 256 * 1024 };

LLVMBasicBlockRef cg_new_block(cg_llvm *cg, const char *name) {
  return LLVMAppendBasicBlockInContext(cg->lctx, cg->fn.fn, name);
}

void cg_fn_begin(cg_llvm *cg, LLVMValueRef fn) {
  cg->fn = (cg_fn){.fn = fn};
  cg->fn.alloca_block = cg_new_block(cg, "entry");
  LLVMBasicBlockRef body = cg_new_block(cg, "body");
  LLVMPositionBuilderAtEnd(cg->b, cg->fn.alloca_block);
  LLVMBuildBr(cg->b, body);
  LLVMPositionBuilderAtEnd(cg->b, body);
}

LLVMValueRef cg_alloca(cg_llvm *cg, LLVMTypeRef t, const char *name, unsigned align) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(cg->lctx);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(cg->fn.alloca_block));
  LLVMValueRef a = LLVMBuildAlloca(b, t, name);
  LLVMSetAlignment(a, align);
  LLVMDisposeBuilder(b);
  return a;
}

/* Frees the live heap allocations (innermost first) and returns code. */
static void cg_cleanup_ret(cg_llvm *cg, LLVMValueRef code) {
  for (int i = cg->fn.nlive - 1; i >= 0; i--)
    cg_rt_free(cg, cg->fn.live[i]);
  LLVMBuildRet(cg->b, code);
}

void cg_fail_if(cg_llvm *cg, LLVMValueRef cond, te_status code, const char *msg) {
  LLVMBasicBlockRef fail = cg_new_block(cg, "fail"), ok = cg_new_block(cg, "ok");
  LLVMBuildCondBr(cg->b, cond, fail, ok);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  LLVMValueRef c = LLVMConstInt(cg->t_i32, (unsigned)code, 0);
  cg_rt_error(cg, c, cg_str(cg, msg));
  cg_cleanup_ret(cg, c);
  LLVMPositionBuilderAtEnd(cg->b, ok);
}

void cg_fail_with_value(cg_llvm *cg, LLVMValueRef cond, te_status code, const char *msg,
                        LLVMValueRef got) {
  LLVMBasicBlockRef fail = cg_new_block(cg, "fail"), ok = cg_new_block(cg, "ok");
  LLVMBuildCondBr(cg->b, cond, fail, ok);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  cg_cleanup_ret(cg, cg_rt_arg_error(cg, code, msg, NULL, got));
  LLVMPositionBuilderAtEnd(cg->b, ok);
}

void cg_return_if_nonzero(cg_llvm *cg, LLVMValueRef code_value) {
  LLVMBasicBlockRef fail = cg_new_block(cg, "failed"), ok = cg_new_block(cg, "ok");
  LLVMValueRef nz = LLVMBuildICmp(cg->b, LLVMIntNE, code_value, LLVMConstNull(cg->t_i32), "");
  LLVMBuildCondBr(cg->b, nz, fail, ok);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  cg_cleanup_ret(cg, code_value);
  LLVMPositionBuilderAtEnd(cg->b, ok);
}

/* ---------------------------------------------------------------- loops */

typedef struct unroll_probe {
  int vector_bits; /* the target's */
  bool wide;       /* a store wider than one native vector */
} unroll_probe;

static int probe_loop(ir_visitor *v, ir_stmt *s) {
  (void)v;
  (void)s;
  return IR_ABORT;
}

static int probe_store(ir_visitor *v, ir_stmt *s) {
  unroll_probe *p = v->data;
  te_dtype t = s->exprs[0]->dtype;
  if (t.lanes > 1 && (int)t.lanes * t.bits > p->vector_bits)
    p->wide = true;
  return IR_CONTINUE;
}

/* Whether LLVM may unroll a loop with this body. Not when the body holds a loop (LLVM would
   copy whole tile loops: an SGEMM kernel's block loops, unswitched then unrolled, tripled its
   compile time and sped up nothing), nor when it stores vectors wider than the target's (te's
   64-lane vector is already 4 registers' work, but LLVM's size model counts it as one
   instruction and unrolls it as if it were small). Other loops, scalar or of native vectors,
   stay LLVM's to unroll: that helps stencils and convolutions (measured: blur 9.1 GB/s without,
   11.3 with). */
static bool llvm_may_unroll(cg_llvm *cg, ir_stmt *body) {
  unroll_probe p = {cg->target->vector_bits, false};
  ir_visitor v = {0};
  v.stmt[IR_S_FOR] = probe_loop;
  v.stmt[IR_S_STORE] = probe_store;
  v.data = &p;
  return ir_visit_stmt(&v, body) != IR_ABORT && !p.wide;
}

/* Marks the loop whose latch is br with llvm.loop.unroll.disable. */
static void no_llvm_unroll(cg_llvm *cg, LLVMValueRef br) {
  LLVMMetadataRef self = LLVMTemporaryMDNode(cg->lctx, NULL, 0);
  LLVMMetadataRef key = LLVMMDStringInContext2(cg->lctx, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(cg->lctx, &key, 1)};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(cg->lctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, loop); /* the loop id refers to itself */
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(cg->lctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(cg->lctx, loop));
}

static bool cg_serial_for(cg_llvm *cg, ir_stmt *s) {
  te_expr *var = IR_FOR_VAR(s);
  LLVMValueRef min = cg_expr(cg, IR_FOR_MIN(s));
  LLVMValueRef ext = min ? cg_expr(cg, IR_FOR_EXTENT(s)) : NULL;
  if (!ext)
    return false;
  LLVMValueRef end = LLVMBuildAdd(cg->b, min, ext, "end");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(cg->b);
  LLVMBasicBlockRef head = cg_new_block(cg, "for.head"), body = cg_new_block(cg, "for.body");
  LLVMBasicBlockRef exit = cg_new_block(cg, "for.end");
  LLVMBuildBr(cg->b, head);
  LLVMPositionBuilderAtEnd(cg->b, head);
  LLVMValueRef i = LLVMBuildPhi(cg->b, LLVMTypeOf(min), var->u.var.name ? var->u.var.name : "i");
  LLVMAddIncoming(i, &min, &pre, 1);
  LLVMBuildCondBr(cg->b, LLVMBuildICmp(cg->b, LLVMIntSLT, i, end, ""), body, exit);
  LLVMPositionBuilderAtEnd(cg->b, body);
  LLVMValueRef prev = cg_bind(cg, var, i);
  bool ok = cg_stmt(cg, IR_FOR_BODY(s));
  cg_bind(cg, var, prev);
  if (!ok)
    return false;
  LLVMValueRef next = LLVMBuildNSWAdd(cg->b, i, LLVMConstInt(LLVMTypeOf(i), 1, 0), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(cg->b);
  LLVMValueRef back = LLVMBuildBr(cg->b, head);
  if (!llvm_may_unroll(cg, IR_FOR_BODY(s)))
    no_llvm_unroll(cg, back);
  LLVMAddIncoming(i, &next, &latch, 1);
  LLVMPositionBuilderAtEnd(cg->b, exit);
  return true;
}

static bool cg_for(cg_llvm *cg, ir_stmt *s) {
  switch (s->u.loop.kind) {
  case IR_FOR_PARALLEL: /* reached only through its closure (llvm_parallel.c) */
    ir_error(cg->ctx, TE_ERR_INTERNAL,
             "internal: codegen: kernel '%s': parallel loop '%s' has no closure (the "
             "make_closures pass must run first)",
             cg->kernel, IR_FOR_VAR(s)->u.var.name);
    return false;
  case IR_FOR_VECTORIZED:
    ir_error(cg->ctx, TE_ERR_INTERNAL,
             "internal: codegen: kernel '%s': loop '%s' is still marked vectorized (the "
             "vectorize pass must run first)",
             cg->kernel, IR_FOR_VAR(s)->u.var.name);
    return false;
  case IR_FOR_THREAD:
    ir_error(cg->ctx, TE_ERR_TARGET,
             "te_build: kernel '%s': loop '%s' is bound to a GPU thread index; that needs a GPU "
             "target (cuda, vulkan), not '%s'",
             cg->kernel, IR_FOR_VAR(s)->u.var.name, cg->target->str);
    return false;
  default:
    return cg_serial_for(cg, s);
  }
}

static bool cg_heap_scope(cg_llvm *cg, ir_stmt *s, LLVMValueRef count, int elem_bytes) {
  ir_buffer *buf = s->u.buffer;
  LLVMValueRef n = cg_to_i64(cg, count, s->exprs[0]->dtype);
  LLVMValueRef bytes = LLVMBuildMul(cg->b, n, LLVMConstInt(cg->t_i64, (unsigned)elem_bytes, 0), "");
  LLVMValueRef p = cg_rt_alloc(cg, bytes);
  char msg[256];
  snprintf(msg, sizeof msg, "kernel '%s': out of memory allocating buffer '%s'", cg->kernel,
           buf->name);
  cg_fail_if(cg, LLVMBuildIsNull(cg->b, p, ""), TE_ERR_NOMEM, msg);
  if (cg->fn.nlive == cg->fn.cap) {
    int cap = cg->fn.cap ? 2 * cg->fn.cap : 8;
    LLVMValueRef *live = ir_alloc(cg->ctx, sizeof *live * (size_t)cap);
    if (!live)
      return false;
    for (int i = 0; i < cg->fn.nlive; i++)
      live[i] = cg->fn.live[i];
    cg->fn.live = live, cg->fn.cap = cap;
  }
  cg->fn.live[cg->fn.nlive++] = p;
  ir_map_put(cg->bufs, buf, p);
  bool ok = cg_stmt(cg, s->stmts[0]);
  cg->fn.nlive--;
  ir_map_put(cg->bufs, buf, NULL);
  if (ok)
    cg_rt_free(cg, p);
  return ok;
}

static bool cg_allocate(cg_llvm *cg, ir_stmt *s) {
  ir_buffer *buf = s->u.buffer;
  LLVMTypeRef elem = cg_mem_type(cg, buf->dtype);
  if (!elem)
    return false;
  int elem_bytes = ir_dtype_bytes(buf->dtype);
  int64_t n;
  if (ir_is_const_int(s->exprs[0], &n) && n >= 0 && n <= CG_STACK_MAX / elem_bytes &&
      cg->fn.stack_bytes + n * elem_bytes <= CG_STACK_FN_MAX) {
    cg->fn.stack_bytes += n * elem_bytes;
    LLVMValueRef a = cg_alloca(cg, LLVMArrayType2(elem, n > 0 ? (uint64_t)n : 1), buf->name, 64);
    ir_map_put(cg->bufs, buf, a);
    bool ok = cg_stmt(cg, s->stmts[0]);
    ir_map_put(cg->bufs, buf, NULL);
    return ok;
  }
  LLVMValueRef count = cg_expr(cg, s->exprs[0]);
  return count && cg_heap_scope(cg, s, count, elem_bytes);
}

static bool cg_if(cg_llvm *cg, ir_stmt *s) {
  LLVMValueRef c = cg_expr(cg, s->exprs[0]);
  if (!c)
    return false;
  ir_stmt *else_s = s->nstmts > 1 ? s->stmts[1] : NULL;
  LLVMBasicBlockRef then_bb = cg_new_block(cg, "then");
  LLVMBasicBlockRef else_bb = else_s ? cg_new_block(cg, "else") : NULL;
  LLVMBasicBlockRef end = cg_new_block(cg, "endif");
  LLVMBuildCondBr(cg->b, c, then_bb, else_bb ? else_bb : end);
  LLVMPositionBuilderAtEnd(cg->b, then_bb);
  if (!cg_stmt(cg, s->stmts[0]))
    return false;
  LLVMBuildBr(cg->b, end);
  if (else_s) {
    LLVMPositionBuilderAtEnd(cg->b, else_bb);
    if (!cg_stmt(cg, else_s))
      return false;
    LLVMBuildBr(cg->b, end);
  }
  LLVMPositionBuilderAtEnd(cg->b, end);
  return true;
}

/* assert(cond, msg[, values]): if (!cond) { te_rt_*error(code, msg[, values]); cleanup; return
   code; }. The branch tests the condition itself (a NOT flips the targets instead of making an
   xor): LLVM's interprocedural passes, which run before instcombine, then learn from the
   entry's checks what they imply (a size >= 1 becomes a range on NAME_impl's parameter). The
   values are computed on the failing path only. */
static bool cg_assert(cg_llvm *cg, ir_stmt *s) {
  te_expr *cond = s->exprs[0];
  bool negated = false;
  while (cond->kind == IR_NOT)
    cond = cond->args[0], negated = !negated;
  LLVMValueRef c = cg_expr(cg, cond);
  if (!c)
    return false;
  char msg[1024];
  snprintf(msg, sizeof msg, "kernel '%s': %s", cg->kernel,
           s->u.assert_.message ? s->u.assert_.message : "assertion failed");
  te_status st = s->u.assert_.status != TE_OK ? s->u.assert_.status : TE_ERR_RUNTIME;
  bool values = s->nexprs > 1;
  LLVMBasicBlockRef fail = cg_new_block(cg, values ? "bad_arg" : "fail"),
                    ok = cg_new_block(cg, "ok");
  LLVMBuildCondBr(cg->b, c, negated ? fail : ok, negated ? ok : fail);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  LLVMValueRef v[2] = {NULL, NULL}, r;
  for (int i = 1; i < s->nexprs; i++)
    if (!(v[i - 1] = cg_expr(cg, s->exprs[i])))
      return false;
  if (!values) {
    r = LLVMConstInt(cg->t_i32, (unsigned)st, 0);
    cg_rt_error(cg, r, cg_str(cg, msg));
  } else {
    r = s->nexprs == 3 ? cg_rt_arg_error(cg, st, msg, v[0], v[1])
                       : cg_rt_arg_error(cg, st, msg, NULL, v[0]);
  }
  cg_cleanup_ret(cg, r);
  LLVMPositionBuilderAtEnd(cg->b, ok);
  return s->nstmts == 0 || cg_stmt(cg, s->stmts[0]);
}

/* An outermost mask region where masked accesses cost a branch a lane (NVPTX scalarizes them):
   `if (all lanes of m) body unmasked; else body masked by m`. Only outermost regions split (the
   masked copy's inner regions do not), so d nested regions make d + 1 copies, not 2^d. */
static bool cg_mask_both_ways(cg_llvm *cg, ir_stmt *s, LLVMValueRef m) {
  LLVMValueRef all = cg_intrinsic(cg, "llvm.vector.reduce.and", LLVMTypeOf(m), 1, &m);
  if (!all)
    return false;
  LLVMBasicBlockRef full = cg_new_block(cg, "all_lanes"), part = cg_new_block(cg, "some_lanes"),
                    join = cg_new_block(cg, "lanes_done");
  LLVMBuildCondBr(cg->b, all, full, part);
  LLVMPositionBuilderAtEnd(cg->b, full);
  if (!cg_stmt(cg, s->stmts[0]))
    return false;
  LLVMBuildBr(cg->b, join);
  LLVMPositionBuilderAtEnd(cg->b, part);
  cg->mask = m;
  bool ok = cg_stmt(cg, s->stmts[0]);
  cg->mask = NULL;
  if (!ok)
    return false;
  LLVMBuildBr(cg->b, join);
  LLVMPositionBuilderAtEnd(cg->b, join);
  return true;
}

/* attr vector_mask = m { body }: body with m (and the enclosing mask) as the live lanes. */
static bool cg_mask_attr(cg_llvm *cg, ir_stmt *s) {
  te_expr *me = s->exprs[0];
  LLVMValueRef m = cg_expr(cg, me);
  if (!m)
    return false;
  if (me->dtype.lanes == 1 || !ir_is_bool(me->dtype)) {
    ir_error(cg->ctx, TE_ERR_INTERNAL,
             "internal: codegen: kernel '%s': a vector mask must be a "
             "vector of bools",
             cg->kernel);
    return false;
  }
  LLVMValueRef saved = cg->mask;
  if (saved && LLVMGetVectorSize(LLVMTypeOf(saved)) == me->dtype.lanes)
    m = LLVMBuildAnd(cg->b, saved, m, "mask");
  if (cg->mask_fast_path && !saved && s->nstmts > 0)
    return cg_mask_both_ways(cg, s, m);
  cg->mask = m;
  bool ok = s->nstmts == 0 || cg_stmt(cg, s->stmts[0]);
  cg->mask = saved;
  return ok;
}

static bool cg_let_stmt(cg_llvm *cg, ir_stmt *s) {
  LLVMValueRef v = cg_expr(cg, s->exprs[1]);
  if (!v)
    return false;
  LLVMValueRef prev = cg_bind(cg, s->exprs[0], v);
  bool ok = cg_stmt(cg, s->stmts[0]);
  cg_bind(cg, s->exprs[0], prev);
  return ok;
}

bool cg_stmt(cg_llvm *cg, ir_stmt *s) {
  if (!s)
    return true;
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_FOR:
    return cg_for(cg, s);
  case IR_S_STORE:
    return cg_store(cg, s);
  case IR_S_ALLOCATE:
    return cg_allocate(cg, s);
  case IR_S_LET_STMT:
    return cg_let_stmt(cg, s);
  case IR_S_IF:
    return cg_if(cg, s);
  case IR_S_SEQ:
    for (uint32_t i = 0; i < s->nstmts; i++)
      if (!cg_stmt(cg, s->stmts[i]))
        return false;
    return true;
  case IR_S_EVALUATE:
    return cg_expr(cg, s->exprs[0]) != NULL;
  case IR_S_ATTR:
    if (strcmp(s->u.attr.key, "vector_mask") == 0)
      return cg_mask_attr(cg, s);
    if (strcmp(s->u.attr.key, "closure") == 0)
      return cg_parallel_closure(cg, s);
    if (strcmp(s->u.attr.key, "buffer_bind") == 0)
      return cg_buffer_bind(cg, s);
    if (strcmp(s->u.attr.key, "compute_scope") == 0)
      return cg_compute_scope(cg, s);
    if (strcmp(s->u.attr.key, "nontemporal") == 0)
      return cg_nontemporal_attr(cg, s);
    return s->nstmts == 0 || cg_stmt(cg, s->stmts[0]);
  case IR_S_ASSERT:
    return cg_assert(cg, s);
  case IR_S_CALL_EXTERN:
    return cg_call_extern(cg, s);
  case IR_S_BARRIER:
    if (cg->barrier) /* device code (ptx_kernel.c) */
      return cg->barrier(cg);
    ir_error(cg->ctx, TE_ERR_TARGET,
             "te_build: kernel '%s': a thread barrier needs a GPU target, not '%s'", cg->kernel,
             cg->target->str);
    return false;
  default:
    break;
  }
  ir_error(cg->ctx, TE_ERR_INTERNAL,
           "internal: codegen: kernel '%s': '%s' statement cannot reach code generation",
           cg->kernel, ir_stmt_kind_name[s->kind]);
  return false;
}
