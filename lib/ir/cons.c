/* cons.c — hash-consing of expressions: hashing, structural equality of one node level, and the
 * cons tables of the context and of scratch arenas.
 *
 * Children are already consed, so equality of a node compares child pointers, the kind, the
 * dtype and the payload (FLOAT by bit pattern, so -0.0 and 0.0 stay apart and NaNs are equal to
 * themselves; REDUCE by content). While a scratch arena is open, a look-up tries the context's
 * table and then every open scratch table; a new node goes into the innermost scratch table, so
 * the context's table never points into memory that ir_scratch_end releases.
 */
#include <stdlib.h>
#include <string.h>

#include "base/ctx_internal.h"
#include "cons.h"

static uint32_t mix(uint32_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ULL;
  h ^= (uint32_t)(v >> 32) ^ (uint32_t)v;
  h *= 0x01000193u;
  return h ^ (h >> 15);
}

static uint32_t payload_hash(const te_expr *e) {
  uint32_t h = 0;
  switch (e->kind) {
  case IR_INT:
    return mix(h, (uint64_t)e->u.i);
  case IR_FLOAT: {
    uint64_t bits;
    memcpy(&bits, &e->u.f, sizeof bits);
    return mix(h, bits);
  }
  case IR_CALL:
    return mix(h, (uint64_t)e->u.call);
  case IR_ACCESS:
    return mix(h, (uint64_t)(uintptr_t)e->u.tensor);
  case IR_LOAD:
    return mix(h, (uint64_t)(uintptr_t)e->u.buffer);
  case IR_REDUCE: {
    const ir_reduce *r = e->u.reduce;
    h = mix(h, (uint64_t)r->kind);
    h = mix(h, (uint64_t)(uintptr_t)r->custom);
    h = mix(h, (uint64_t)(uintptr_t)r->cond);
    h = mix(h, (uint64_t)r->value_index);
    for (int i = 0; i < r->naxes; i++)
      h = mix(h, (uint64_t)(uintptr_t)r->axes[i]);
    return h;
  }
  default:
    return h;
  }
}

uint32_t ir_cons_hash(const te_expr *e) {
  uint32_t h = 0x811c9dc5u;
  h = mix(h, e->kind);
  h = mix(h, ((uint64_t)e->dtype.code << 32) | ((uint64_t)e->dtype.bits << 16) | e->dtype.lanes);
  h = mix(h, payload_hash(e));
  h = mix(h, e->nargs);
  for (int i = 0; i < e->nargs; i++)
    h = mix(h, (uint64_t)(uintptr_t)e->args[i]);
  return h;
}

static bool reduce_eq(const ir_reduce *a, const ir_reduce *b) {
  if (a == b)
    return true;
  if (a->kind != b->kind || a->custom != b->custom || a->cond != b->cond ||
      a->value_index != b->value_index || a->naxes != b->naxes)
    return false;
  for (int i = 0; i < a->naxes; i++)
    if (a->axes[i] != b->axes[i])
      return false;
  return true;
}

static bool payload_eq(const te_expr *a, const te_expr *b) {
  switch (a->kind) {
  case IR_INT:
    return a->u.i == b->u.i;
  case IR_FLOAT:
    return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
  case IR_CALL:
    return a->u.call == b->u.call;
  case IR_ACCESS:
    return a->u.tensor == b->u.tensor;
  case IR_LOAD:
    return a->u.buffer == b->u.buffer;
  case IR_REDUCE:
    return reduce_eq(a->u.reduce, b->u.reduce);
  case IR_VAR:
    return a == b;
  default:
    return true;
  }
}

bool ir_cons_eq(const te_expr *a, const te_expr *b) {
  if (a->hash != b->hash || a->kind != b->kind || a->nargs != b->nargs ||
      !ir_dtype_eq(a->dtype, b->dtype))
    return false;
  for (int i = 0; i < a->nargs; i++)
    if (a->args[i] != b->args[i])
      return false;
  return payload_eq(a, b);
}

static te_expr *table_find(const ir_cons_table *t, const te_expr *key) {
  if (!t->cap)
    return NULL;
  size_t mask = t->cap - 1;
  for (size_t i = key->hash & mask; t->slots[i]; i = (i + 1) & mask)
    if (ir_cons_eq(t->slots[i], key))
      return t->slots[i];
  return NULL;
}

te_expr *ir_cons_find(te_ctx *ctx, const te_expr *key) {
  te_expr *e = table_find(&ctx->cons, key);
  for (ir_scratch *s = ctx->scratch; !e && s; s = s->prev)
    e = table_find(&s->cons, key);
  return e;
}

static void place(ir_cons_table *t, te_expr *e) {
  size_t mask = t->cap - 1, i = e->hash & mask;
  while (t->slots[i])
    i = (i + 1) & mask;
  t->slots[i] = e;
  t->count++;
}

bool ir_cons_insert(te_ctx *ctx, te_expr *e) {
  ir_cons_table *t = ctx->scratch ? &ctx->scratch->cons : &ctx->cons;
  if ((t->count + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    te_expr **slots = ir_calloc(ctx, cap, sizeof *slots);
    if (!slots)
      return false;
    ir_cons_table n = {slots, cap, 0};
    for (size_t i = 0; i < t->cap; i++)
      if (t->slots[i])
        place(&n, t->slots[i]);
    free(t->slots);
    *t = n;
  }
  place(t, e);
  return true;
}
