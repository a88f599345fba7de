/* simplify_order.c — the total order on expressions that canonical forms sort by.
 *
 * Hash-consing makes equal expressions the same pointer, but pointers are not a deterministic
 * order: printed output must not depend on addresses. So terms are ordered by content: first by
 * the lowest variable id they use (variables are numbered by creation, so outer loop variables
 * and sizes made first come first; constants have none and come last), then by kind, dtype and
 * children. The order is total on distinct nodes of one context.
 */
#include <string.h>

#include "arith_internal.h"

#define NO_VAR UINT32_MAX

static uint32_t lead(ir_simp *s, te_expr *e) {
  if (e->kind == IR_VAR)
    return e->u.var.id;
  if (e->nargs == 0)
    return NO_VAR;
  void *hit = s && s->lead ? ir_map_get(s->lead, e) : NULL;
  if (hit)
    return (uint32_t)((uintptr_t)hit - 1);
  uint32_t m = NO_VAR;
  for (int i = 0; i < e->nargs; i++) {
    uint32_t l = lead(s, e->args[i]);
    if (l < m)
      m = l;
  }
  if (s && s->lead)
    ir_map_put(s->lead, e, (void *)((uintptr_t)m + 1));
  return m;
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int cmp_str(const char *a, const char *b) {
  int r = strcmp(a ? a : "", b ? b : "");
  return r < 0 ? -1 : r > 0;
}

static int cmp_dtype(te_dtype a, te_dtype b) {
  if (a.code != b.code)
    return cmp_u64(a.code, b.code);
  if (a.bits != b.bits)
    return cmp_u64(a.bits, b.bits);
  return cmp_u64(a.lanes, b.lanes);
}

/* Payload comparison for leaves and nodes that carry one. */
static int cmp_payload(te_expr *a, te_expr *b) {
  switch ((ir_expr_kind)a->kind) {
  case IR_VAR:
    return cmp_u64(a->u.var.id, b->u.var.id);
  case IR_INT:
    if (a->u.i != b->u.i)
      return a->u.i < b->u.i ? -1 : 1;
    return 0;
  case IR_FLOAT:
    if (a->u.f != b->u.f)
      return a->u.f < b->u.f ? -1 : 1;
    return 0;
  case IR_CALL:
    return cmp_u64(a->u.call, b->u.call);
  case IR_LOAD:
    return cmp_str(a->u.buffer->name, b->u.buffer->name);
  case IR_ACCESS:
    return cmp_str(a->u.tensor->name, b->u.tensor->name);
  default:
    return 0;
  }
}

int ir_simp_order(ir_simp *s, te_expr *a, te_expr *b) {
  if (a == b)
    return 0;
  uint32_t la = lead(s, a), lb = lead(s, b);
  if (la != lb)
    return la < lb ? -1 : 1;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  int r = cmp_dtype(a->dtype, b->dtype);
  if (!r)
    r = cmp_payload(a, b);
  if (!r && a->nargs != b->nargs)
    r = a->nargs < b->nargs ? -1 : 1;
  for (int i = 0; !r && i < a->nargs; i++)
    r = ir_simp_order(s, a->args[i], b->args[i]);
  if (!r)
    r = memcmp(&a->u, &b->u, sizeof a->u) < 0 ? -1 : 1; /* last resort: same content */
  return r;
}
