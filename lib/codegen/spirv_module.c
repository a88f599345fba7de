/* spirv_module.c — the SPIR-V word buffer: sections, ids, deduplicated types and constants.
 *
 * A SPIR-V module must list its instructions in a fixed order of sections (capabilities,
 * extensions, ext-inst imports, memory model, entry points, execution modes, debug names,
 * annotations, types/constants/global variables, functions). Each section is its own growable
 * word array here, so the back end writes in whatever order is convenient and cg_spv_finish
 * concatenates them behind the header (whose id bound is known only then). Capabilities come
 * from the features the emitted types turned on (a 64-bit int type turns on Int64, ...).
 *
 * Types and constants are deduplicated, as the SPIR-V rules require for non-aggregate types:
 * each is keyed by its opcode and operand words in a small open-addressing table. Function-
 * storage variables go to their own section (fvars), placed at the start of the function's
 * first block as SPIR-V requires.
 */
#include <stdlib.h>
#include <string.h>

#include "spirv.h"

static void words_push(cg_spv *s, cg_spv_words *b, const uint32_t *w, size_t n) {
  if (s->oom)
    return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + n)
      cap *= 2;
    uint32_t *nw = ir_realloc(s->ctx, b->w, cap * sizeof *nw);
    if (!nw) {
      s->oom = true;
      ir_error(s->ctx, TE_ERR_NOMEM, "te_build: kernel '%s': out of memory writing SPIR-V",
               s->kernel);
      return;
    }
    b->w = nw, b->cap = cap;
  }
  memcpy(b->w + b->n, w, n * sizeof *w);
  b->n += n;
}

void cg_spv_init(cg_spv *s, te_ctx *ctx, const char *kernel) {
  memset(s, 0, sizeof *s);
  s->ctx = ctx;
  s->kernel = kernel;
  s->bound = 1;
  s->vars = ir_map_new(ctx);
  s->bufs = ir_map_new(ctx);
  s->cache = ir_map_new(ctx);
}

void cg_spv_free(cg_spv *s) {
  cg_spv_words *all[] = {&s->caps,  &s->exts,    &s->imports, &s->entry, &s->modes, &s->debug,
                         &s->annot, &s->globals, &s->fhead,   &s->fvars, &s->code,  &s->fns};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    free(all[i]->w);
  free(s->dkeys);
  free(s->dslots);
  free(s->dids);
}

uint32_t cg_spv_id(cg_spv *s) { return s->bound++; }

void cg_spv_op(cg_spv *s, cg_spv_words *b, SpvOp op, int n, const uint32_t *operands) {
  uint32_t head = ((uint32_t)(n + 1) << SpvWordCountShift) | (uint32_t)op;
  words_push(s, b, &head, 1);
  if (n)
    words_push(s, b, operands, (size_t)n);
}

/* Words of a nul-terminated, zero-padded literal string. */
static size_t str_words(const char *str, uint32_t *out, size_t max) {
  size_t len = strlen(str), n = len / 4 + 1;
  if (n > max)
    return 0;
  memset(out, 0, n * 4);
  memcpy(out, str, len);
  return n;
}

void cg_spv_op_str(cg_spv *s, cg_spv_words *b, SpvOp op, int n, const uint32_t *operands,
                   const char *str) {
  uint32_t buf[96];
  if (n > 32)
    return;
  if (n)
    memcpy(buf, operands, (size_t)n * 4);
  size_t sw = str_words(str, buf + n, 64);
  if (!sw)
    sw = str_words("", buf + n, 64); /* an over-long name is dropped, not fatal */
  cg_spv_op(s, b, op, n + (int)sw, buf);
}

uint32_t cg_spv_inst(cg_spv *s, SpvOp op, uint32_t type, int n, const uint32_t *operands) {
  uint32_t buf[16];
  uint32_t id = cg_spv_id(s);
  if (n > 14)
    return 0;
  buf[0] = type, buf[1] = id;
  if (n)
    memcpy(buf + 2, operands, (size_t)n * 4);
  cg_spv_op(s, &s->code, op, n + 2, buf);
  return id;
}

uint32_t cg_spv_glsl(cg_spv *s, uint32_t type, enum GLSLstd450 op, int n, const uint32_t *args) {
  uint32_t ops[8] = {s->glsl, (uint32_t)op};
  for (int i = 0; i < n && i < 6; i++)
    ops[2 + i] = args[i];
  return cg_spv_inst(s, SpvOpExtInst, type, 2 + n, ops);
}

void cg_spv_name(cg_spv *s, uint32_t id, const char *name) {
  if (name && *name)
    cg_spv_op_str(s, &s->debug, SpvOpName, 1, &id, name);
}

void cg_spv_decorate(cg_spv *s, uint32_t id, SpvDecoration d, int n, const uint32_t *extra) {
  uint32_t buf[8] = {id, (uint32_t)d};
  for (int i = 0; i < n && i < 6; i++)
    buf[2 + i] = extra[i];
  cg_spv_op(s, &s->annot, SpvOpDecorate, 2 + n, buf);
}

void cg_spv_member_decorate(cg_spv *s, uint32_t id, uint32_t member, SpvDecoration d, uint32_t v) {
  uint32_t buf[4] = {id, member, (uint32_t)d, v};
  cg_spv_op(s, &s->annot, SpvOpMemberDecorate, 4, buf);
}

/* ---- deduplication ---- */

static uint32_t key_hash(const uint32_t *k, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ k[i]) * 16777619u;
  return h;
}

static bool dedup_grow(cg_spv *s) {
  size_t cap = s->dcap ? s->dcap * 2 : 256;
  uint32_t *slots = ir_calloc(s->ctx, cap, sizeof *slots);
  uint32_t *ids = slots ? ir_calloc(s->ctx, cap, sizeof *ids) : NULL;
  if (!slots || !ids) {
    free(slots), free(ids);
    s->oom = true;
    ir_error(s->ctx, TE_ERR_NOMEM, "te_build: out of memory writing SPIR-V");
    return false;
  }
  for (size_t i = 0; i < s->dcap; i++) {
    if (!s->dslots[i])
      continue;
    const uint32_t *k = s->dkeys + s->dslots[i] - 1;
    size_t j = key_hash(k + 1, k[0]) & (cap - 1);
    while (slots[j])
      j = (j + 1) & (cap - 1);
    slots[j] = s->dslots[i], ids[j] = s->dids[i];
  }
  free(s->dslots), free(s->dids);
  s->dslots = slots, s->dids = ids, s->dcap = cap;
  return true;
}

/* The id stored for key, or 0; *slot gets where to insert it. */
static uint32_t dedup_find(cg_spv *s, const uint32_t *key, size_t n, size_t *slot) {
  if (s->dcount * 2 >= s->dcap && !dedup_grow(s))
    return 0;
  size_t j = key_hash(key, n) & (s->dcap - 1);
  for (; s->dslots[j]; j = (j + 1) & (s->dcap - 1)) {
    const uint32_t *k = s->dkeys + s->dslots[j] - 1;
    if (k[0] == n && !memcmp(k + 1, key, n * 4))
      return s->dids[j];
  }
  *slot = j;
  return 0;
}

static void dedup_put(cg_spv *s, size_t slot, const uint32_t *key, size_t n, uint32_t id) {
  if (s->dkeys_n + n + 1 > s->dkeys_cap) {
    size_t cap = s->dkeys_cap ? s->dkeys_cap * 2 : 1024;
    while (cap < s->dkeys_n + n + 1)
      cap *= 2;
    uint32_t *k = ir_realloc(s->ctx, s->dkeys, cap * sizeof *k);
    if (!k) {
      s->oom = true;
      return;
    }
    s->dkeys = k, s->dkeys_cap = cap;
  }
  s->dkeys[s->dkeys_n] = (uint32_t)n;
  memcpy(s->dkeys + s->dkeys_n + 1, key, n * 4);
  s->dslots[slot] = (uint32_t)s->dkeys_n + 1;
  s->dids[slot] = id;
  s->dkeys_n += n + 1;
  s->dcount++;
}

/* A deduplicated global instruction: key = opcode, operands (result id inserted at position
   pos: 0 for types, 1 for constants after the result type). */
static uint32_t dedup_global(cg_spv *s, SpvOp op, int n, const uint32_t *operands, int pos) {
  uint32_t key[24];
  if (n > 22 || s->oom)
    return 0;
  key[0] = (uint32_t)op;
  if (n) /* operands may be NULL when there are none */
    memcpy(key + 1, operands, (size_t)n * 4);
  size_t slot = 0;
  uint32_t id = dedup_find(s, key, (size_t)n + 1, &slot);
  if (id || s->oom)
    return id;
  id = cg_spv_id(s);
  uint32_t buf[24];
  for (int i = 0; i < n; i++)
    buf[i < pos ? i : i + 1] = operands[i];
  buf[pos] = id;
  cg_spv_op(s, &s->globals, op, n + 1, buf);
  dedup_put(s, slot, key, (size_t)n + 1, id);
  return id;
}

uint32_t cg_spv_type(cg_spv *s, SpvOp op, int n, const uint32_t *operands) {
  return dedup_global(s, op, n, operands, 0);
}

uint32_t cg_spv_t_int(cg_spv *s, int bits, bool is_signed) {
  if (bits == 64)
    s->features |= CG_SPV_INT64;
  else if (bits == 16)
    s->features |= CG_SPV_INT16;
  else if (bits == 8)
    s->features |= CG_SPV_INT8;
  return cg_spv_type(s, SpvOpTypeInt, 2, (uint32_t[]){(uint32_t)bits, is_signed ? 1u : 0u});
}

uint32_t cg_spv_t_float(cg_spv *s, int bits) {
  if (bits == 64)
    s->features |= CG_SPV_FLOAT64;
  else if (bits == 16)
    s->features |= CG_SPV_FLOAT16;
  return cg_spv_type(s, SpvOpTypeFloat, 1, (uint32_t[]){(uint32_t)bits});
}

uint32_t cg_spv_t_ptr(cg_spv *s, SpvStorageClass sc, uint32_t pointee) {
  return cg_spv_type(s, SpvOpTypePointer, 2, (uint32_t[]){(uint32_t)sc, pointee});
}

uint32_t cg_spv_t_dtype(cg_spv *s, te_dtype t) {
  if (ir_is_bool(t))
    return cg_spv_type(s, SpvOpTypeBool, 0, NULL);
  if (ir_is_float(t))
    return cg_spv_t_float(s, t.bits);
  return cg_spv_t_int(s, t.bits, ir_is_int(t));
}

uint32_t cg_spv_t_mem(cg_spv *s, te_dtype t) {
  return ir_is_bool(t) ? cg_spv_t_int(s, 8, false) : cg_spv_t_dtype(s, t);
}

uint32_t cg_spv_const(cg_spv *s, uint32_t type, int nwords, const uint32_t *words) {
  uint32_t ops[4] = {type, words[0], nwords > 1 ? words[1] : 0};
  return dedup_global(s, SpvOpConstant, 1 + nwords, ops, 1);
}

uint32_t cg_spv_const_i32(cg_spv *s, int32_t v) {
  return cg_spv_const(s, cg_spv_t_int(s, 32, true), 1, (uint32_t[]){(uint32_t)v});
}

uint32_t cg_spv_const_u32(cg_spv *s, uint32_t v) {
  return cg_spv_const(s, cg_spv_t_int(s, 32, false), 1, &v);
}

uint32_t cg_spv_const_bool(cg_spv *s, bool v) {
  uint32_t t = cg_spv_type(s, SpvOpTypeBool, 0, NULL);
  return dedup_global(s, v ? SpvOpConstantTrue : SpvOpConstantFalse, 1, &t, 1);
}

uint32_t cg_spv_const_int(cg_spv *s, te_dtype t, int64_t v) {
  if (ir_is_bool(t))
    return cg_spv_const_bool(s, v != 0);
  uint32_t type = cg_spv_t_dtype(s, ir_elem(t));
  uint64_t u = (uint64_t)v;
  if (t.bits < 32) /* narrow literals are sign- or zero-extended to 32 bits */
    u = ir_is_int(t) ? (uint64_t)(int64_t)((int32_t)((uint32_t)u << (32 - t.bits)) >> (32 - t.bits))
                     : u & ((1u << t.bits) - 1);
  uint32_t w[2] = {(uint32_t)u, (uint32_t)(u >> 32)};
  return cg_spv_const(s, type, t.bits == 64 ? 2 : 1, w);
}

uint32_t cg_spv_const_float(cg_spv *s, te_dtype t, double v) {
  uint32_t type = cg_spv_t_float(s, t.bits);
  if (t.bits == 64) {
    uint64_t u;
    memcpy(&u, &v, 8);
    return cg_spv_const(s, type, 2, (uint32_t[]){(uint32_t)u, (uint32_t)(u >> 32)});
  }
  if (t.bits == 16) { /* the f16 bits in the low half of the word, the rest 0 (SPIR-V 2.2.1) */
    uint32_t h = ir_half_bits(TE_F16, v);
    return cg_spv_const(s, type, 1, &h);
  }
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return cg_spv_const(s, type, 1, &u);
}

/* ---- blocks ---- */

void cg_spv_label(cg_spv *s, uint32_t label) {
  cg_spv_op(s, &s->code, SpvOpLabel, 1, &label);
  s->block = label;
  cg_spv_cache_clear(s);
}

void cg_spv_branch(cg_spv *s, uint32_t target) {
  cg_spv_op(s, &s->code, SpvOpBranch, 1, &target);
  s->block = 0;
}

/* ---- the module ---- */

static void add_capability(cg_spv *s, SpvCapability c) {
  cg_spv_op(s, &s->caps, SpvOpCapability, 1, (uint32_t[]){(uint32_t)c});
}

uint32_t *cg_spv_finish(cg_spv *s, size_t *nwords) {
  add_capability(s, SpvCapabilityShader);
  unsigned f = s->features;
  if (f & CG_SPV_INT64)
    add_capability(s, SpvCapabilityInt64);
  if (f & CG_SPV_FLOAT64)
    add_capability(s, SpvCapabilityFloat64);
  if (f & CG_SPV_INT16)
    add_capability(s, SpvCapabilityInt16);
  if (f & CG_SPV_FLOAT16)
    add_capability(s, SpvCapabilityFloat16);
  if (f & CG_SPV_INT8)
    add_capability(s, SpvCapabilityInt8);
  if (f & CG_SPV_STORAGE16)
    add_capability(s, SpvCapabilityStorageBuffer16BitAccess);
  if (f & CG_SPV_SUBGROUP) {
    add_capability(s, SpvCapabilityGroupNonUniform);
    add_capability(s, SpvCapabilityGroupNonUniformArithmetic);
  }
  if (f & CG_SPV_STORAGE8) {
    add_capability(s, SpvCapabilityStorageBuffer8BitAccess);
    cg_spv_op_str(s, &s->exts, SpvOpExtension, 0, NULL, "SPV_KHR_8bit_storage");
  }
  cg_spv_words mm = {0};
  cg_spv_op(s, &mm, SpvOpMemoryModel, 2,
            (uint32_t[]){SpvAddressingModelLogical, SpvMemoryModelGLSL450});
  cg_spv_words *order[] = {&s->caps,  &s->exts,  &s->imports, &mm,         &s->entry,
                           &s->modes, &s->debug, &s->annot,   &s->globals, &s->fhead,
                           &s->fvars, &s->code,  &s->fns};
  size_t n = 5;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    n += order[i]->n;
  uint32_t *w = s->oom ? NULL : ir_malloc(s->ctx, n * sizeof *w);
  if (!w) {
    free(mm.w);
    if (!s->oom)
      ir_error(s->ctx, TE_ERR_NOMEM, "te_build: out of memory writing SPIR-V");
    return NULL;
  }
  w[0] = SpvMagicNumber;
  w[1] = 0x00010300; /* SPIR-V 1.3: Vulkan 1.1 */
  w[2] = 0;          /* generator: unregistered */
  w[3] = s->bound;
  w[4] = 0;
  size_t at = 5;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (order[i]->n)
      memcpy(w + at, order[i]->w, order[i]->n * 4);
    at += order[i]->n;
  }
  free(mm.w);
  *nwords = n;
  return w;
}
