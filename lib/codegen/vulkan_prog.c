/* vulkan_prog.c — host expressions of a vulkan module as small postfix programs.
 *
 * Launch dimensions, temporary sizes and the entry's checks (vulkan_entry.c) are IR expressions
 * over the symbolic sizes, scalar parameters, let variables and the tensors' DLTensor fields,
 * made in the build's scratch arena. A vulkan module evaluates them at every call, long after
 * that arena is gone, and without LLVM: so te_build turns each into a postfix program (integer
 * immediates, slot reads, DLTensor reads, the integer operators of the IR), kept in the
 * context's memory, and te_module_call runs it on a small stack. Semantics are the IR's: i64
 * arithmetic wrapping, FLOORDIV/FLOORMOD rounding towards -inf, comparisons giving 0/1; a handle
 * (a pointer) is its address as an integer, so isnull is a compare with 0 and ptr_add an add.
 */
#include <stdlib.h>
#include <string.h>

#include "vulkan_host.h"

typedef enum cg_vk_op {
  VK_CONST,
  VK_SLOT,
  VK_ADD,
  VK_SUB,
  VK_MUL,
  VK_FLOORDIV,
  VK_FLOORMOD,
  VK_TRUNCDIV,
  VK_TRUNCMOD,
  VK_MIN,
  VK_MAX,
  VK_EQ,
  VK_NE,
  VK_LT,
  VK_LE,
  VK_GT,
  VK_GE,
  VK_AND,
  VK_OR,
  VK_NOT,
  VK_SELECT,
  VK_WRAP, /* v = bits | signed << 8: wrap to a narrower integer (casts) */
  VK_DL    /* v = tensor | field << 16 | dim << 24: a DLTensor read (vk_dl_read) */
} cg_vk_op;

/* The DLTensor reads: the calling convention's intrinsics, and the handle itself. */
enum { VK_DL_HANDLE = IR_INTRIN_COUNT };

enum { VK_STACK = 64, VK_MAX_INS = 4096 };

typedef struct prog_builder {
  te_ctx *ctx;
  const char *kernel;
  const cg_vk_slots *slots;
  cg_vk_ins buf[VK_MAX_INS];
  int n;
} prog_builder;

static bool emit(prog_builder *b, cg_vk_op op, int64_t v) {
  if (b->n == VK_MAX_INS) {
    ir_error(b->ctx, TE_ERR_UNSUPPORTED, "te_build: kernel '%s': a launch size is too complex",
             b->kernel);
    return false;
  }
  b->buf[b->n++] = (cg_vk_ins){op, v};
  return true;
}

static int slot_of(const cg_vk_slots *s, te_expr *var) {
  for (int i = 0; i < s->nsizes + s->nscalars + s->nlets; i++)
    if (s->vars[i] == var)
      return i;
  return -1;
}

static bool prog_unsupported(prog_builder *b, te_expr *e) {
  char *txt = ir_expr_to_string(e);
  ir_error(b->ctx, TE_ERR_UNSUPPORTED,
           "te_build: kernel '%s': the host of a vulkan module cannot evaluate '%s' (launch "
           "sizes must be integer expressions of sizes and integer parameters)",
           b->kernel, txt ? txt : "?");
  free(txt);
  return false;
}

static int tensor_of(const cg_vk_slots *s, te_expr *handle) {
  for (int i = 0; i < s->ntensors; i++)
    if (s->handles[i] == handle)
      return i;
  return -1;
}

static bool is_dl_read(ir_intrin id) {
  return id >= IR_INTRIN_DL_DATA && id <= IR_INTRIN_DL_STRIDE;
}

static bool prog_expr(prog_builder *b, te_expr *e);

/* dl_*(A[, d]), isnull(h), ptr_add(h, n). */
static bool prog_abi_call(prog_builder *b, te_expr *e) {
  ir_intrin id = e->u.call;
  if (id == IR_INTRIN_ISNULL)
    return prog_expr(b, e->args[0]) && emit(b, VK_CONST, 0) && emit(b, VK_EQ, 0);
  if (id == IR_INTRIN_PTR_ADD)
    return prog_expr(b, e->args[0]) && prog_expr(b, e->args[1]) && emit(b, VK_ADD, 0);
  int t = tensor_of(b->slots, e->args[0]);
  int64_t d = 0;
  if (t < 0 || (e->nargs == 2 && (!ir_is_const_int(e->args[1], &d) || d < 0 || d >= TE_MAX_DIMS)))
    return prog_unsupported(b, e);
  return emit(b, VK_DL, (int64_t)t | (int64_t)id << 16 | d << 24);
}

static bool prog_expr(prog_builder *b, te_expr *e) {
  static const cg_vk_op binop[IR_EXPR_COUNT] = {[IR_ADD] = VK_ADD,
                                                [IR_SUB] = VK_SUB,
                                                [IR_MUL] = VK_MUL,
                                                [IR_FLOORDIV] = VK_FLOORDIV,
                                                [IR_FLOORMOD] = VK_FLOORMOD,
                                                [IR_TRUNCDIV] = VK_TRUNCDIV,
                                                [IR_TRUNCMOD] = VK_TRUNCMOD,
                                                [IR_MIN] = VK_MIN,
                                                [IR_MAX] = VK_MAX,
                                                [IR_EQ] = VK_EQ,
                                                [IR_NE] = VK_NE,
                                                [IR_LT] = VK_LT,
                                                [IR_LE] = VK_LE,
                                                [IR_GT] = VK_GT,
                                                [IR_GE] = VK_GE,
                                                [IR_AND] = VK_AND,
                                                [IR_OR] = VK_OR};
  if (!e || e->dtype.lanes != 1 || ir_is_float(e->dtype))
    return prog_unsupported(b, e);
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    return emit(b, VK_CONST, e->u.i);
  case IR_VAR: {
    int s = slot_of(b->slots, e);
    if (s < 0 && tensor_of(b->slots, e) >= 0) /* a tensor's handle (isnull) */
      return emit(b, VK_DL, (int64_t)tensor_of(b->slots, e) | (int64_t)VK_DL_HANDLE << 16);
    return s >= 0 ? emit(b, VK_SLOT, s) : prog_unsupported(b, e);
  }
  case IR_NOT:
    return prog_expr(b, e->args[0]) && emit(b, VK_NOT, 0);
  case IR_SELECT:
    return prog_expr(b, e->args[0]) && prog_expr(b, e->args[1]) && prog_expr(b, e->args[2]) &&
           emit(b, VK_SELECT, 0);
  case IR_CAST: {
    te_dtype f = e->args[0]->dtype, t = e->dtype;
    if (!prog_expr(b, e->args[0]))
      return false;
    if (ir_is_bool(t))
      return emit(b, VK_CONST, 0) && emit(b, VK_NE, 0);
    if (t.bits < 64 && !(ir_is_bool(f)))
      return emit(b, VK_WRAP, t.bits | (ir_is_int(t) ? 256 : 0));
    return true;
  }
  case IR_CALL:
    if (e->u.call == IR_INTRIN_LIKELY)
      return prog_expr(b, e->args[0]);
    if (is_dl_read(e->u.call) || e->u.call == IR_INTRIN_ISNULL || e->u.call == IR_INTRIN_PTR_ADD)
      return prog_abi_call(b, e);
    return prog_unsupported(b, e);
  default:
    if (e->kind < IR_EXPR_COUNT && binop[e->kind] && e->nargs == 2 &&
        !ir_is_float(e->args[0]->dtype))
      return prog_expr(b, e->args[0]) && prog_expr(b, e->args[1]) && emit(b, binop[e->kind], 0);
    return prog_unsupported(b, e);
  }
}

te_status cg_vk_prog_make(te_ctx *ctx, const char *kernel, const cg_vk_slots *slots, te_expr *e,
                          cg_vk_prog *out) {
  *out = (cg_vk_prog){0};
  prog_builder *b = ir_malloc(ctx, sizeof *b);
  if (!b)
    return ir_error(ctx, TE_ERR_NOMEM, "te_build: out of memory");
  b->ctx = ctx, b->kernel = kernel, b->slots = slots, b->n = 0;
  te_status st = prog_expr(b, e) ? TE_OK : te_last_status(ctx);
  if (st == TE_OK) {
    out->ins = ir_alloc_persistent(ctx, sizeof *out->ins * (size_t)b->n);
    if (!out->ins)
      st = TE_ERR_NOMEM;
    else {
      memcpy(out->ins, b->buf, sizeof *out->ins * (size_t)b->n);
      out->n = b->n;
    }
  }
  free(b);
  return st == TE_OK ? TE_OK : st ? st : TE_ERR_INTERNAL;
}

static int64_t wrap(int64_t x, int64_t spec) {
  int bits = (int)(spec & 255);
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1, u = (uint64_t)x & mask;
  if ((spec & 256) && bits < 64 && (u >> (bits - 1)) & 1)
    u |= ~mask;
  return (int64_t)u;
}

/* a op b for the binary operators; false on division by zero. */
static bool binary(cg_vk_op op, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case VK_ADD:
    *r = (int64_t)(ua + ub);
    return true;
  case VK_SUB:
    *r = (int64_t)(ua - ub);
    return true;
  case VK_MUL:
    *r = (int64_t)(ua * ub);
    return true;
  case VK_MIN:
    *r = a < b ? a : b;
    return true;
  case VK_MAX:
    *r = a > b ? a : b;
    return true;
  case VK_EQ:
    *r = a == b;
    return true;
  case VK_NE:
    *r = a != b;
    return true;
  case VK_LT:
    *r = a < b;
    return true;
  case VK_LE:
    *r = a <= b;
    return true;
  case VK_GT:
    *r = a > b;
    return true;
  case VK_GE:
    *r = a >= b;
    return true;
  case VK_AND:
    *r = a && b;
    return true;
  case VK_OR:
    *r = a || b;
    return true;
  default:
    break;
  }
  if (b == 0 || (a == INT64_MIN && b == -1))
    return false;
  int64_t q = a / b, m = a % b;
  switch (op) {
  case VK_TRUNCDIV:
    *r = q;
    return true;
  case VK_TRUNCMOD:
    *r = m;
    return true;
  case VK_FLOORDIV:
    *r = ir_floordiv64(a, b);
    return true;
  case VK_FLOORMOD:
    *r = ir_floormod64(a, b);
    return true;
  default:
    return false;
  }
}

static int64_t addr(const void *p) { return (int64_t)(uintptr_t)p; }

/* A DLTensor read; the entry's checks order them so that each is valid when it runs. */
static bool vk_dl_read(DLTensor *const *tensors, int64_t v, int64_t *r) {
  const DLTensor *t = tensors ? tensors[v & 0xffff] : NULL;
  int id = (int)((v >> 16) & 0xff), d = (int)(v >> 24);
  if (id == VK_DL_HANDLE) {
    *r = addr(t);
    return true;
  }
  if (!t)
    return false;
  switch (id) {
  case IR_INTRIN_DL_DATA:
    *r = addr(t->data);
    return true;
  case IR_INTRIN_DL_SHAPE:
    *r = addr(t->shape);
    return true;
  case IR_INTRIN_DL_STRIDES:
    *r = addr(t->strides);
    return true;
  case IR_INTRIN_DL_NDIM:
    *r = t->ndim;
    return true;
  case IR_INTRIN_DL_DEVICE_TYPE:
    *r = (int64_t)t->device.device_type;
    return true;
  case IR_INTRIN_DL_DTYPE_CODE:
    *r = t->dtype.code;
    return true;
  case IR_INTRIN_DL_DTYPE_BITS:
    *r = t->dtype.bits;
    return true;
  case IR_INTRIN_DL_DTYPE_LANES:
    *r = t->dtype.lanes;
    return true;
  case IR_INTRIN_DL_DTYPE:
    *r = t->dtype.code | t->dtype.bits << 8 | (int64_t)t->dtype.lanes << 16;
    return true;
  case IR_INTRIN_DL_BYTE_OFFSET:
    *r = (int64_t)t->byte_offset;
    return true;
  case IR_INTRIN_DL_EXTENT:
    *r = t->shape[d];
    return true;
  case IR_INTRIN_DL_STRIDE:
    *r = t->strides[d];
    return true;
  default:
    return false;
  }
}

bool cg_vk_prog_eval(const cg_vk_prog *p, const int64_t *slots, DLTensor *const *tensors,
                     int64_t *out, const char **err) {
  int64_t st[VK_STACK];
  int sp = 0;
  *err = "malformed host program (a bug in te)";
  for (int i = 0; i < p->n; i++) {
    const cg_vk_ins *in = &p->ins[i];
    switch ((cg_vk_op)in->op) {
    case VK_CONST:
      if (sp == VK_STACK)
        return false;
      st[sp++] = in->v;
      break;
    case VK_SLOT:
      if (sp == VK_STACK)
        return false;
      st[sp++] = slots[in->v];
      break;
    case VK_NOT:
      if (sp < 1)
        return false;
      st[sp - 1] = !st[sp - 1];
      break;
    case VK_WRAP:
      if (sp < 1)
        return false;
      st[sp - 1] = wrap(st[sp - 1], in->v);
      break;
    case VK_DL:
      if (sp == VK_STACK || !vk_dl_read(tensors, in->v, &st[sp]))
        return false;
      sp++;
      break;
    case VK_SELECT:
      if (sp < 3)
        return false;
      st[sp - 3] = st[sp - 3] ? st[sp - 2] : st[sp - 1];
      sp -= 2;
      break;
    default:
      if (sp < 2)
        return false;
      if (!binary((cg_vk_op)in->op, st[sp - 2], st[sp - 1], &st[sp - 2])) {
        *err = "division by zero in a launch size";
        return false;
      }
      sp--;
    }
  }
  if (sp != 1)
    return false;
  *out = st[0];
  return true;
}
