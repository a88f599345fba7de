/* spirv_kernel.c — one device kernel (gpu.h) as a Vulkan compute module: its interface and the
 * compile driver.
 *
 * Interface (spirv.h has the contract the host side follows):
 *   - buffer params: binding i of set 0, each an OpVariable in StorageBuffer of a Block struct
 *     { runtime array of the element's memory type } (Offset 0, ArrayStride = element bytes);
 *     NonWritable when the kernel only reads it;
 *   - scalar and size params: one PushConstant Block struct, members in params order at the
 *     offsets of cg_spv_push_layout; each is loaded once in the entry block;
 *   - index variables: WorkgroupId (blockIdx) and LocalInvocationId (threadIdx) components,
 *     bitcast to 32-bit signed (narrow i64, spirv.h);
 *   - shared buffers: Workgroup arrays; local buffers: Function arrays;
 *   - LocalSize: the block extents, which Vulkan needs as constants (TE_ERR_TARGET otherwise).
 */
#include <stdlib.h>
#include <string.h>

#include "spirv.h"

static te_dtype push_member_type(const lw_gpu_param *p) {
  if (p->kind == LW_GPU_PARAM_SIZE)
    return TE_I32;
  te_dtype t = ir_elem(p->var->dtype);
  if (ir_is_bool(t))
    return TE_U32;
  if (ir_is_intlike(t) && t.bits < 32)
    return ir_is_int(t) ? TE_I32 : TE_U32;
  return t;
}

te_status cg_spv_push_layout(te_ctx *ctx, const lw_gpu_kernel *k, cg_spv_push *out) {
  *out = (cg_spv_push){0};
  out->nmembers = k->nparams;
  out->offset = ir_alloc(ctx, sizeof *out->offset * (size_t)(k->nparams + 1));
  out->mtype = ir_alloc(ctx, sizeof *out->mtype * (size_t)(k->nparams + 1));
  if (!out->offset || !out->mtype)
    return TE_ERR_NOMEM;
  uint32_t at = 0;
  for (int i = 0; i < k->nparams; i++) {
    out->offset[i] = -1;
    if (k->params[i].kind == LW_GPU_PARAM_BUFFER)
      continue;
    te_dtype t = push_member_type(&k->params[i]);
    uint32_t size = (uint32_t)t.bits / 8;
    at = (at + size - 1) / size * size;
    out->offset[i] = (int)at;
    out->mtype[i] = t;
    at += size;
  }
  out->bytes = (at + 3) & ~3u;
  return TE_OK;
}

static te_status kernel_unsupported_dtype(cg_spv *s, const char *what, const char *name,
                                          te_dtype t) {
  char buf[32];
  return ir_error(s->ctx, TE_ERR_UNSUPPORTED,
                  "te_build: kernel '%s': %s '%s' has dtype %s, which the SPIR-V back end (vulkan "
                  "target) does not support%s",
                  s->kernel, what, name, ir_dtype_name(t, buf, sizeof buf),
                  t.code == kDLBfloat ? " (Vulkan has no bf16 type: use f16 or f32)"
                  : ir_is_half(t)     ? " as a push-constant scalar (pass it as f32)"
                                      : "");
}

/* f16 is a SPIR-V type (Float16, and 16-bit storage for buffers); bf16 has none in Vulkan 1.1
   (SPV_KHR_bfloat16 is not assumed). */
static bool dtype_ok(te_dtype t) {
  return ir_dtype_supported(t) && t.lanes == 1 && t.code != kDLBfloat;
}

/* A buffer parameter: binding, Block struct, variable. */
static te_status kernel_buffer(cg_spv *s, const lw_gpu_param *p, uint32_t binding) {
  ir_buffer *buf = p->buffer;
  if (!dtype_ok(buf->dtype))
    return kernel_unsupported_dtype(s, "buffer", buf->name, buf->dtype);
  cg_spv_buf *b = ir_alloc(s->ctx, sizeof *b);
  if (!b)
    return TE_ERR_NOMEM;
  b->sc = SpvStorageClassStorageBuffer;
  b->elem = buf->dtype;
  b->mem_type = cg_spv_t_mem(s, buf->dtype);
  int bytes = ir_dtype_bytes(buf->dtype);
  if (bytes == 1)
    s->features |= CG_SPV_STORAGE8;
  else if (bytes == 2)
    s->features |= CG_SPV_STORAGE16;
  /* one runtime array and Block struct per buffer: decorations stay with their own types */
  uint32_t rt = cg_spv_id(s), st = cg_spv_id(s), var = cg_spv_id(s);
  cg_spv_op(s, &s->globals, SpvOpTypeRuntimeArray, 2, (uint32_t[]){rt, b->mem_type});
  cg_spv_op(s, &s->globals, SpvOpTypeStruct, 2, (uint32_t[]){st, rt});
  uint32_t pst = cg_spv_t_ptr(s, SpvStorageClassStorageBuffer, st);
  cg_spv_op(s, &s->globals, SpvOpVariable, 3, (uint32_t[]){pst, var, SpvStorageClassStorageBuffer});
  cg_spv_decorate(s, rt, SpvDecorationArrayStride, 1, (uint32_t[]){(uint32_t)bytes});
  cg_spv_decorate(s, st, SpvDecorationBlock, 0, NULL);
  cg_spv_member_decorate(s, st, 0, SpvDecorationOffset, 0);
  cg_spv_decorate(s, var, SpvDecorationDescriptorSet, 1, (uint32_t[]){0});
  cg_spv_decorate(s, var, SpvDecorationBinding, 1, &binding);
  if (!p->written)
    cg_spv_decorate(s, var, SpvDecorationNonWritable, 0, NULL);
  cg_spv_name(s, var, buf->name);
  b->var = var;
  b->ptr_type = cg_spv_t_ptr(s, SpvStorageClassStorageBuffer, b->mem_type);
  return ir_map_put(s->bufs, buf, b) ? TE_OK : TE_ERR_NOMEM;
}

/* The push-constant block, and each scalar/size param loaded into its binding. */
static te_status kernel_push(cg_spv *s, const lw_gpu_kernel *k, const cg_spv_push *pl) {
  if (!pl->bytes)
    return TE_OK;
  uint32_t members[64], mem_idx[64];
  int n = 0;
  for (int i = 0; i < k->nparams; i++) {
    if (pl->offset[i] < 0)
      continue;
    if (n == 64)
      return ir_error(s->ctx, TE_ERR_UNSUPPORTED,
                      "te_build: kernel '%s': more than 64 scalar parameters and sizes", s->kernel);
    te_dtype st = k->params[i].var->dtype;
    if (k->params[i].kind == LW_GPU_PARAM_SCALAR && (!dtype_ok(st) || ir_is_half(st)))
      return kernel_unsupported_dtype(s, "scalar", k->params[i].var->u.var.name, st);
    mem_idx[n] = (uint32_t)i;
    members[n++] = cg_spv_t_dtype(s, pl->mtype[i]);
  }
  uint32_t st = cg_spv_id(s), var = cg_spv_id(s);
  uint32_t ops[65] = {st};
  for (int j = 0; j < n; j++)
    ops[1 + j] = members[j];
  cg_spv_op(s, &s->globals, SpvOpTypeStruct, 1 + n, ops);
  cg_spv_op(s, &s->globals, SpvOpVariable, 3,
            (uint32_t[]){cg_spv_t_ptr(s, SpvStorageClassPushConstant, st), var,
                         SpvStorageClassPushConstant});
  cg_spv_decorate(s, st, SpvDecorationBlock, 0, NULL);
  cg_spv_name(s, var, "params");
  for (int j = 0; j < n; j++) {
    const lw_gpu_param *p = &k->params[mem_idx[j]];
    te_dtype mt = pl->mtype[mem_idx[j]];
    cg_spv_member_decorate(s, st, (uint32_t)j, SpvDecorationOffset,
                           (uint32_t)pl->offset[mem_idx[j]]);
    uint32_t ptr =
        cg_spv_inst(s, SpvOpAccessChain, cg_spv_t_ptr(s, SpvStorageClassPushConstant, members[j]),
                    2, (uint32_t[]){var, cg_spv_const_i32(s, j)});
    uint32_t v = cg_spv_inst(s, SpvOpLoad, members[j], 1, &ptr);
    cg_spv_val val = {v, p->kind == LW_GPU_PARAM_SIZE};
    if (p->kind == LW_GPU_PARAM_SCALAR)
      val = cg_spv_cast(s, val, mt, p->var->dtype);
    cg_spv_binding *b = ir_alloc(s->ctx, sizeof *b);
    if (!b || !val.id)
      return TE_ERR_NOMEM;
    *b = (cg_spv_binding){val.id, val.narrow, false};
    cg_spv_bind(s, p->var, b);
    cg_spv_name(s, v, p->var->u.var.name);
  }
  return TE_OK;
}

/* WorkgroupId / LocalInvocationId components for the kernel's index variables. Returns the
   number of Input variables written to iface. */
static int kernel_builtins(cg_spv *s, const lw_gpu_kernel *k, uint32_t iface[4]) {
  uint32_t uvec3 = cg_spv_type(s, SpvOpTypeVector, 2, (uint32_t[]){s->t_u32, 3});
  uint32_t pin = cg_spv_t_ptr(s, SpvStorageClassInput, uvec3);
  int n = 0;
  for (int g = 0; g < 2; g++) { /* 0: blocks (WorkgroupId), 1: threads (LocalInvocationId) */
    bool used = false;
    for (int d = 0; d < 3; d++)
      used |= k->idx[g * 3 + d] != NULL;
    if (!used)
      continue;
    uint32_t var = cg_spv_id(s);
    cg_spv_op(s, &s->globals, SpvOpVariable, 3, (uint32_t[]){pin, var, SpvStorageClassInput});
    SpvBuiltIn bi = g == 0 ? SpvBuiltInWorkgroupId : SpvBuiltInLocalInvocationId;
    cg_spv_decorate(s, var, SpvDecorationBuiltIn, 1, (uint32_t[]){(uint32_t)bi});
    cg_spv_name(s, var, g == 0 ? "blockIdx" : "threadIdx");
    iface[n++] = var;
    uint32_t vec = cg_spv_inst(s, SpvOpLoad, uvec3, 1, &var);
    for (int d = 0; d < 3; d++) {
      te_expr *v = k->idx[g * 3 + d];
      if (!v)
        continue;
      uint32_t c =
          cg_spv_inst(s, SpvOpCompositeExtract, s->t_u32, 2, (uint32_t[]){vec, (uint32_t)d});
      uint32_t id = cg_spv_inst(s, SpvOpBitcast, s->t_i32, 1, &c);
      cg_spv_name(s, id, v->u.var.name);
      cg_spv_binding *b = ir_alloc(s->ctx, sizeof *b);
      if (!b)
        return -1;
      *b = (cg_spv_binding){id, true, false};
      cg_spv_bind(s, v, b);
    }
  }
  return n;
}

/* Shared (Workgroup) and local (Function) arrays. */
static te_status kernel_alloc(cg_spv *s, const lw_gpu_alloc *a, bool shared) {
  ir_buffer *buf = a->buffer;
  if (!dtype_ok(buf->dtype))
    return kernel_unsupported_dtype(s, shared ? "shared buffer" : "local buffer", buf->name,
                                    buf->dtype);
  if (a->count < 1 || a->count > INT32_MAX)
    return ir_error(s->ctx, TE_ERR_UNSUPPORTED,
                    "te_build: kernel '%s': buffer '%s' has %lld elements", s->kernel, buf->name,
                    (long long)a->count);
  cg_spv_buf *b = ir_alloc(s->ctx, sizeof *b);
  if (!b)
    return TE_ERR_NOMEM;
  SpvStorageClass sc = shared ? SpvStorageClassWorkgroup : SpvStorageClassFunction;
  b->sc = sc;
  b->elem = buf->dtype;
  b->mem_type = cg_spv_t_mem(s, buf->dtype);
  uint32_t arr = cg_spv_type(s, SpvOpTypeArray, 2,
                             (uint32_t[]){b->mem_type, cg_spv_const_u32(s, (uint32_t)a->count)});
  b->var = cg_spv_id(s);
  cg_spv_op(s, shared ? &s->globals : &s->fvars, SpvOpVariable, 3,
            (uint32_t[]){cg_spv_t_ptr(s, sc, arr), b->var, (uint32_t)sc});
  b->ptr_type = cg_spv_t_ptr(s, sc, b->mem_type);
  cg_spv_name(s, b->var, buf->name);
  return ir_map_put(s->bufs, buf, b) ? TE_OK : TE_ERR_NOMEM;
}

static te_status kernel_local_size(te_ctx *ctx, const lw_gpu_kernel *k, int64_t local[3]) {
  static const char axis[3] = {'x', 'y', 'z'};
  for (int d = 0; d < 3; d++) {
    if (!ir_is_const_int(k->block[d], &local[d])) {
      char *txt = k->block[d] ? ir_expr_to_string(k->block[d]) : NULL;
      te_status st = ir_error(ctx, TE_ERR_TARGET,
                              "te_build: kernel '%s': Vulkan needs constant thread extents (the "
                              "workgroup size), but threads on axis %c number '%s'",
                              k->name, axis[d], txt ? txt : "?");
      free(txt);
      return st;
    }
    if (local[d] < 1 || local[d] > INT32_MAX)
      return ir_error(ctx, TE_ERR_TARGET,
                      "te_build: kernel '%s': thread extent %lld on axis %c is out of range",
                      k->name, (long long)local[d], axis[d]);
  }
  return TE_OK;
}

/* Everything up to the body: types, interface, the function's entry block. */
static te_status kernel_prologue(cg_spv *s, const lw_gpu_kernel *k, cg_spv_kernel *out,
                                 uint32_t iface[4], int *niface) {
  s->t_void = cg_spv_type(s, SpvOpTypeVoid, 0, NULL);
  s->t_bool = cg_spv_type(s, SpvOpTypeBool, 0, NULL);
  s->t_i32 = cg_spv_t_int(s, 32, true);
  s->t_u32 = cg_spv_t_int(s, 32, false);
  s->glsl = cg_spv_id(s);
  cg_spv_op_str(s, &s->imports, SpvOpExtInstImport, 1, &s->glsl, "GLSL.std.450");
  uint32_t fnty = cg_spv_type(s, SpvOpTypeFunction, 1, &s->t_void);
  s->fn = cg_spv_id(s);
  uint32_t entry = cg_spv_id(s);
  cg_spv_op(s, &s->fhead, SpvOpFunction, 4,
            (uint32_t[]){s->t_void, s->fn, SpvFunctionControlMaskNone, fnty});
  cg_spv_op(s, &s->fhead, SpvOpLabel, 1, &entry);
  s->block = entry;
  cg_spv_name(s, s->fn, k->name);

  te_status st = TE_OK;
  uint32_t binding = 0;
  for (int i = 0; i < k->nparams && st == TE_OK; i++)
    if (k->params[i].kind == LW_GPU_PARAM_BUFFER)
      st = kernel_buffer(s, &k->params[i], binding++);
  if (st == TE_OK)
    st = cg_spv_push_layout(s->ctx, k, &out->push);
  if (st == TE_OK)
    st = kernel_push(s, k, &out->push);
  for (int i = 0; i < k->nshared && st == TE_OK; i++)
    st = kernel_alloc(s, &k->shared[i], true);
  for (int i = 0; i < k->nlocal && st == TE_OK; i++)
    st = kernel_alloc(s, &k->local[i], false);
  if (st != TE_OK)
    return st;
  *niface = kernel_builtins(s, k, iface);
  return *niface < 0 ? TE_ERR_NOMEM : TE_OK;
}

/* OpEntryPoint GLCompute %fn "name" <Input variables> */
static void kernel_entry_point(cg_spv *s, const char *name, const uint32_t *iface, int niface) {
  uint32_t w[96] = {SpvExecutionModelGLCompute, s->fn};
  size_t len = strlen(name) / 4 + 1;
  if (len > 80)
    len = 2, name = "main"; /* never: kernel names are at most ~210 characters */
  memset(w + 2, 0, len * 4);
  memcpy(w + 2, name, strlen(name));
  for (int i = 0; i < niface; i++)
    w[2 + len + (size_t)i] = iface[i];
  cg_spv_op(s, &s->entry, SpvOpEntryPoint, 2 + (int)len + niface, w);
}

/* One module of the kernel: with subgroups, the then-side of each has_subgroup_ops() IF. */
static te_status compile_one(te_ctx *ctx, const lw_gpu_kernel *k, bool validate, bool subgroups,
                             cg_spv_kernel *out) {
  *out = (cg_spv_kernel){0};
  te_status st = kernel_local_size(ctx, k, out->local);
  if (st != TE_OK)
    return st;
  cg_spv s;
  cg_spv_init(&s, ctx, k->name);
  s.subgroups = subgroups;
  uint32_t iface[4];
  int niface = 0;
  st = kernel_prologue(&s, k, out, iface, &niface);
  ir_stmt *body = st == TE_OK ? cg_spv_scalarize(ctx, k->name, k->body) : NULL;
  if (st == TE_OK && (!body || !cg_spv_stmt(&s, body)))
    st = te_last_status(ctx) != TE_OK ? te_last_status(ctx) : TE_ERR_INTERNAL;
  if (st == TE_OK) {
    if (s.block)
      cg_spv_op(&s, &s.code, SpvOpReturn, 0, NULL);
    cg_spv_op(&s, &s.code, SpvOpFunctionEnd, 0, NULL);
    if (s.subgroup_id_var)
      iface[niface++] = s.subgroup_id_var;
    if (s.num_subgroups_var)
      iface[niface++] = s.num_subgroups_var;
    kernel_entry_point(&s, k->name, iface, niface);
    cg_spv_op(&s, &s.modes, SpvOpExecutionMode, 5,
              (uint32_t[]){s.fn, SpvExecutionModeLocalSize, (uint32_t)out->local[0],
                           (uint32_t)out->local[1], (uint32_t)out->local[2]});
    out->features = s.features;
    out->words = cg_spv_finish(&s, &out->nwords);
    if (!out->words)
      st = TE_ERR_NOMEM;
  }
  cg_spv_free(&s);
#ifdef TE_DEBUG
  validate = true;
#endif
  if (st == TE_OK && validate)
    st = cg_spv_validate(ctx, k->name, out->words, out->nwords);
  if (st != TE_OK) {
    free(out->words);
    out->words = NULL;
  }
  return st;
}

static int find_has_subgroup_ops(ir_visitor *v, te_expr *e) {
  if (e->u.call != IR_INTRIN_HAS_SUBGROUP_OPS)
    return IR_CONTINUE;
  *(bool *)v->data = true;
  return IR_ABORT;
}

te_status cg_spv_compile_kernel(te_ctx *ctx, const lw_gpu_kernel *k, bool validate,
                                cg_spv_kernel *out) {
  bool two = false;
  ir_visitor v = {.data = &two};
  v.expr[IR_CALL] = find_has_subgroup_ops;
  ir_visit_stmt(&v, k->body);
  te_status st = compile_one(ctx, k, validate, two, out);
  if (st != TE_OK || !two)
    return st;
  cg_spv_kernel plain;
  st = compile_one(ctx, k, validate, false, &plain);
  if (st != TE_OK) {
    free(out->words);
    out->words = NULL;
    return st;
  }
  out->plain_words = plain.words, out->plain_nwords = plain.nwords;
  out->plain_features = plain.features;
  return TE_OK;
}
