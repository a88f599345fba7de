/* llvm_stream.c — streaming (non-temporal) stores: `attr nontemporal` around one iteration of
 * a loop's body (te_pragma(stage, x, "nontemporal", 1); lower/nontemporal.c moved it there).
 *
 * A streaming store (LLVM's !nontemporal: x86's movntps, movntdq, movnti) writes around the
 * caches: the line is not read first (write-allocate) and does not evict what the kernel still
 * reads. That is what a kernel writing a large output once wants: a layer norm of 4096 x 4096
 * f32 reads 64 MiB and writes 64 MiB, and with plain stores each output line is read before it
 * is written, 192 MiB of traffic instead of 128.
 *
 * x86's vector forms need the store's width in alignment (LLVM splits an under-aligned one into
 * 8-byte movnti/movntsd pieces, slower than a plain store), and an argument's pointer is only
 * known element-aligned (a DLTensor with a byte offset, a slice). So the body is written twice:
 * the iteration checks that every argument buffer it stores densely with vectors is 64-byte
 * aligned, and takes the copy that knows it (cg->base_align) and streams its unmasked stores to
 * argument buffers, or else the plain copy. Streaming stores are weakly ordered: the streaming
 * copy ends with a fence (seq_cst: mfence on x86), so the iteration's writes are visible before
 * a parallel-for's join or the kernel's return lets anyone read them; hence the pragma belongs on
 * a loop whose iteration writes a lot (a row), not on an inner one. Stores to temporaries (a
 * row's statistics, a local tile) stay plain: they are read again soon.
 */
#include <string.h>

#include "llvm_cg.h"

enum { STREAM_ALIGN = 64 }; /* a cache line: every vector width up to zmm divides it */

typedef struct stream_bufs {
  ir_map *args;      /* argument buffer -> STREAM_ALIGN: those the aligned copy knows aligned */
  ir_buffer **order; /* the same buffers in the order of their first store (the code's order) */
  int n, cap;
  bool nomem;
} stream_bufs;

static int collect_store(ir_visitor *v, ir_stmt *s) {
  stream_bufs *sb = v->data;
  ir_buffer *b = s->u.buffer;
  int64_t stride;
  te_expr *idx = s->exprs[1];
  if (s->exprs[0]->dtype.lanes == 1 || b->arg_index < 0 || idx->kind != IR_RAMP ||
      !ir_is_const_int(idx->args[1], &stride) || stride != 1 || ir_map_has(sb->args, b))
    return IR_CONTINUE;
  if (sb->n == sb->cap) {
    int cap = sb->cap ? 2 * sb->cap : 4;
    ir_buffer **o = ir_alloc(sb->args->ctx, sizeof(ir_buffer *) * (size_t)cap);
    if (!o) {
      sb->nomem = true;
      return IR_ABORT;
    }
    for (int i = 0; i < sb->n; i++)
      o[i] = sb->order[i];
    sb->order = o;
    sb->cap = cap;
  }
  if (!ir_map_put(sb->args, b, (void *)(uintptr_t)STREAM_ALIGN)) {
    sb->nomem = true; /* ir_map_put recorded TE_ERR_NOMEM */
    return IR_ABORT;
  }
  sb->order[sb->n++] = b;
  return IR_CONTINUE;
}

/* x86: sfence, the fence that orders streaming stores (LLVM writes a seq_cst fence as a locked
   instruction there, which the architecture does not promise orders them); elsewhere a seq_cst
   fence (AArch64: dmb ish, which does). */
static void store_fence(cg_llvm *cg) {
  const char *triple = cg->target->triple;
  if (triple && (!strncmp(triple, "x86_64", 6) || !strncmp(triple, "i686", 4))) {
    static const char name[] = "llvm.x86.sse.sfence";
    unsigned id = LLVMLookupIntrinsicID(name, sizeof name - 1);
    if (id) {
      LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, NULL, 0);
      LLVMBuildCall2(cg->b, LLVMIntrinsicGetType(cg->lctx, id, NULL, 0), fn, NULL, 0, "");
      return;
    }
  }
  LLVMBuildFence(cg->b, LLVMAtomicOrderingSequentiallyConsistent, 0, "");
}

/* The body with streaming stores, then the fence. */
static bool streaming_body(cg_llvm *cg, ir_stmt *body, ir_map *aligned) {
  ir_map *outer = cg->base_align;
  cg->base_align = aligned;
  cg->nontemporal = true;
  bool ok = cg_stmt(cg, body);
  cg->nontemporal = false;
  cg->base_align = outer;
  if (ok)
    store_fence(cg);
  return ok;
}

bool cg_nontemporal_attr(cg_llvm *cg, ir_stmt *s) {
  ir_stmt *body = s->nstmts ? s->stmts[0] : NULL;
  if (!body)
    return true;
  if (cg->nontemporal || cg->base_align) /* nested, or device code: the inner one adds nothing */
    return cg_stmt(cg, body);
  stream_bufs sb = {.args = ir_map_new(cg->ctx)};
  if (!sb.args)
    return false;
  ir_visitor v = {.data = &sb};
  v.stmt[IR_S_STORE] = collect_store;
  ir_visit_stmt(&v, body);
  if (sb.nomem)
    return false;
  if (sb.n == 0) /* scalar stores only: movnti needs no alignment beyond the element */
    return streaming_body(cg, body, NULL);
  LLVMValueRef aligned = cg_bases_aligned(cg, sb.n, (const ir_buffer *const *)sb.order,
                                          STREAM_ALIGN, "stream_aligned");
  if (!aligned)
    return false;
  LLVMBasicBlockRef fast = cg_new_block(cg, "stream"), plain = cg_new_block(cg, "plain"),
                    join = cg_new_block(cg, "stream_join");
  LLVMBuildCondBr(cg->b, aligned, fast, plain);
  LLVMPositionBuilderAtEnd(cg->b, fast);
  if (!streaming_body(cg, body, sb.args))
    return false;
  LLVMBuildBr(cg->b, join);
  LLVMPositionBuilderAtEnd(cg->b, plain);
  if (!cg_stmt(cg, body))
    return false;
  LLVMBuildBr(cg->b, join);
  LLVMPositionBuilderAtEnd(cg->b, join);
  return true;
}

void cg_mark_nontemporal(cg_llvm *cg, const ir_buffer *buf, LLVMValueRef store) {
  if (!cg->nontemporal || buf->arg_index < 0 || !store)
    return;
  LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(cg->t_i32, 1, 0));
  LLVMValueRef node = LLVMMetadataAsValue(cg->lctx, LLVMMDNodeInContext2(cg->lctx, &one, 1));
  LLVMSetMetadata(store, LLVMGetMDKindIDInContext(cg->lctx, "nontemporal", 11), node);
}
