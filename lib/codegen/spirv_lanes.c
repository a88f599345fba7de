/* spirv_lanes.c — the vector code of vectorized loops (lib/lower/vectorize.c) as per-lane scalar
 * code, before a kernel's body is written in SPIR-V.
 *
 * Why scalar lanes rather than OpTypeVector values and a vec4 view of the storage buffers: GPUs
 * run SPIR-V as SIMT programs, one invocation a lane of the hardware, and their compilers split
 * vector arithmetic into scalar operations anyway (NIR's ALU scalarization), so vector types buy
 * no arithmetic; what a vectorized loop buys on a GPU is wide memory access, and drivers merge
 * the scalar accesses of consecutive addresses themselves (NIR's load/store vectorizer), where
 * a vec4-typed alias of a buffer would need every access proven 16-byte aligned and the alias
 * decorated. Per-lane code needs no alignment, works for gathers and scatters, for any lane
 * count up to CG_SPV_MAX_LANES and for every expression the scalar back end emits (f64 math,
 * integer operators, if_then_else), and is correct by construction: lane l of every vector
 * expression is a scalar expression of the IR, emitted by the same code as any other.
 *
 * The rewrite keeps the vector code's meaning (all lanes of a statement before the next one):
 *   - lane l of ramp(b, s) is b + s * l, of broadcast(v) v, of a load its load at lane l of
 *     the index, of any lane-wise operation the operation on lane l of its operands; a vector
 *     variable (of a LET) becomes one scalar variable per lane;
 *   - a vector store computes the value of every lane first (one LET each), then stores each;
 *   - `// attr vector_mask = m` regions (vectorized IFs and tails): a lane whose mask is false
 *     stores nothing and loads nothing — its stores are `if (m_l)`, its LET values
 *     if_then_else(m_l, v_l, 0) (only the chosen side is evaluated, spirv_expr.c);
 *   - loops inside the vector code (vectorized through) keep their bounds, their bodies
 *     rewritten.
 * Refused (TE_ERR_UNSUPPORTED): more than CG_SPV_MAX_LANES lanes, and the internal vector
 * instructions of te_tensorize (dot4_u8s8, interleave, ...), which no GPU schedule makes.
 */
#include <stdio.h>
#include <string.h>

#include "spirv.h"

typedef struct lanes_ctx {
  te_ctx *ctx;
  const char *kernel;
  ir_map *vars;                   /* vector VAR -> te_expr *[lanes]: its per-lane variables */
  ir_map *memo[CG_SPV_MAX_LANES]; /* per lane: vector expression -> its lane */
} lanes_ctx;

static int has_vector_cb(ir_visitor *v, te_expr *e) {
  (void)v;
  return e->dtype.lanes > 1 ? IR_ABORT : IR_CONTINUE;
}

static bool stmt_has_vector(ir_stmt *st) {
  ir_visitor v = {0};
  for (int k = 0; k < IR_EXPR_COUNT; k++)
    v.expr[k] = has_vector_cb;
  return ir_visit_stmt(&v, st) == IR_ABORT;
}

static bool lanes_check(lanes_ctx *L, int lanes) {
  if (lanes <= CG_SPV_MAX_LANES)
    return true;
  ir_error(L->ctx, TE_ERR_UNSUPPORTED,
           "te_build: kernel '%s': a vector of %d lanes in a Vulkan kernel (at most %d: each "
           "lane is written as scalar code); vectorize by a smaller factor",
           L->kernel, lanes, CG_SPV_MAX_LANES);
  return false;
}

/* The per-lane scalar variables of vector variable var (made on first use). */
static te_expr **lane_vars(lanes_ctx *L, te_expr *var) {
  te_expr **vs = ir_map_get(L->vars, var);
  if (vs)
    return vs;
  int n = var->dtype.lanes;
  vs = ir_alloc(L->ctx, (size_t)n * sizeof *vs);
  if (!vs)
    return NULL;
  for (int l = 0; l < n; l++) {
    char name[96];
    snprintf(name, sizeof name, "%s.lane%d", var->u.var.name, l);
    vs[l] = ir_var_new(L->ctx, name, ir_elem(var->dtype), var->u.var.kind);
    if (!vs[l])
      return NULL;
  }
  return ir_map_put(L->vars, var, vs) ? vs : NULL;
}

static bool call_is_lanewise(ir_intrin id) {
  return id == IR_INTRIN_LIKELY || !(ir_intrin_table[id].flags & IR_INTRIN_INTERNAL);
}

static te_expr *lane_expr(lanes_ctx *L, te_expr *e, int l);

static te_expr *lane_uncached(lanes_ctx *L, te_expr *e, int l) {
  te_dtype elem = ir_elem(e->dtype);
  switch ((ir_expr_kind)e->kind) {
  case IR_VAR: {
    te_expr **vs = ir_map_get(L->vars, e);
    if (!vs)
      ir_error(L->ctx, TE_ERR_INTERNAL,
               "internal: te_build: kernel '%s': vector variable '%s' is not bound", L->kernel,
               e->u.var.name);
    return vs ? vs[l] : NULL;
  }
  case IR_RAMP: { /* a ramp of a kb-lane base: base[l % kb] + stride[l % kb] * (l / kb) */
    int kb = e->args[0]->dtype.lanes, i = l % kb, j = l / kb;
    te_expr *b = lane_expr(L, e->args[0], i);
    if (!b || j == 0)
      return b;
    te_expr *s = lane_expr(L, e->args[1], i);
    return s ? ir_binary(IR_ADD, b, ir_binary(IR_MUL, s, ir_int(L->ctx, ir_elem(s->dtype), j)))
             : NULL;
  }
  case IR_BROADCAST:
    return lane_expr(L, e->args[0], l % e->args[0]->dtype.lanes);
  case IR_LOAD: {
    te_expr *i = lane_expr(L, e->args[0], l);
    return i ? ir_load(e->u.buffer, elem, i) : NULL;
  }
  case IR_LET: {
    te_expr *var = e->args[0], *val = e->args[1];
    if (val->dtype.lanes > 1) {
      te_expr **vs = lane_vars(L, var);
      te_expr *v = vs ? lane_expr(L, val, l) : NULL;
      te_expr *body = v ? lane_expr(L, e->args[2], l) : NULL;
      return body ? ir_let(vs[l], v, body) : NULL;
    }
    te_expr *body = lane_expr(L, e->args[2], l);
    return body ? ir_let(var, val, body) : NULL;
  }
  case IR_CALL:
    if (!call_is_lanewise(e->u.call)) {
      ir_error(L->ctx, TE_ERR_UNSUPPORTED,
               "te_build: kernel '%s': the SPIR-V back end has no vector form of '%s'", L->kernel,
               ir_intrin_table[e->u.call].name);
      return NULL;
    }
    break;
  case IR_INT:
  case IR_FLOAT:
  case IR_ACCESS:
  case IR_REDUCE:
    ir_error(L->ctx, TE_ERR_INTERNAL,
             "internal: te_build: kernel '%s': a vector '%s' cannot reach SPIR-V generation",
             L->kernel, ir_expr_kind_name[e->kind]);
    return NULL;
  default:
    break;
  }
  /* lane-wise operations: arithmetic, comparisons, logic, select, casts, calls */
  te_expr *args[8];
  if (e->nargs > 8)
    return NULL;
  for (int i = 0; i < e->nargs; i++)
    if (!(args[i] = lane_expr(L, e->args[i], l)))
      return NULL;
  return ir_make(L->ctx, (ir_expr_kind)e->kind, elem, e->nargs, args, &e->u);
}

/* Lane l of e (e itself when it is scalar: the same value in every lane). */
static te_expr *lane_expr(lanes_ctx *L, te_expr *e, int l) {
  if (!e || e->dtype.lanes == 1)
    return e;
  if (!lanes_check(L, e->dtype.lanes))
    return NULL;
  if (!L->memo[l] && !(L->memo[l] = ir_map_new(L->ctx)))
    return NULL;
  te_expr *r = ir_map_get(L->memo[l], e);
  if (r)
    return r;
  r = lane_uncached(L, e, l);
  if (r && !ir_map_put(L->memo[l], e, r))
    return NULL;
  return r;
}

static int lanes_of(te_expr *a, te_expr *b, te_expr *c) {
  int n = a ? a->dtype.lanes : 1;
  if (b && b->dtype.lanes > n)
    n = b->dtype.lanes;
  if (c && c->dtype.lanes > n)
    n = c->dtype.lanes;
  return n;
}

/* The scalar zero of dtype t (a masked-off lane's LET value). */
static te_expr *zero_of(lanes_ctx *L, te_dtype t) {
  return ir_is_float(t) ? ir_float(L->ctx, t, 0) : ir_int(L->ctx, t, 0);
}

/* v_l, or if_then_else(mask_l, v_l, 0) under a mask (the lane's loads run only when it is on). */
static te_expr *masked_value(lanes_ctx *L, te_expr *v, te_expr *mask, int l) {
  te_expr *vl = lane_expr(L, v, l);
  if (!vl || !mask)
    return vl;
  te_expr *ml = lane_expr(L, mask, l);
  if (!ml)
    return NULL;
  te_expr *args[3] = {ml, vl, zero_of(L, vl->dtype)};
  ir_intrin ite = IR_INTRIN_IF_THEN_ELSE;
  return ir_make(L->ctx, IR_CALL, vl->dtype, 3, args, &ite);
}

/* body wrapped in `if (mask_l)`, or body itself without a mask. */
static ir_stmt *masked_stmt(lanes_ctx *L, ir_stmt *body, te_expr *mask, int l) {
  if (!body || !mask)
    return body;
  te_expr *ml = lane_expr(L, mask, l);
  return ml ? ir_if(ml, body, NULL) : NULL;
}

/* A vector store: t_l = value_l for every lane, then buf[index_l] = t_l (under the mask). */
static ir_stmt *lanes_store(lanes_ctx *L, ir_stmt *st, te_expr *mask) {
  te_expr *value = st->exprs[0], *index = st->exprs[1];
  int n = lanes_of(value, index, mask);
  if (!lanes_check(L, n))
    return NULL;
  ir_stmt *stores[CG_SPV_MAX_LANES];
  te_expr *tmp[CG_SPV_MAX_LANES], *vals[CG_SPV_MAX_LANES];
  for (int l = 0; l < n; l++) {
    te_expr *i = lane_expr(L, index, l);
    vals[l] = masked_value(L, value, mask, l);
    tmp[l] = vals[l] ? ir_var_new(L->ctx, "lane", vals[l]->dtype, IR_VAR_PARAM) : NULL;
    stores[l] = i && tmp[l] ? masked_stmt(L, ir_store(st->u.buffer, tmp[l], i), mask, l) : NULL;
    if (!stores[l])
      return NULL;
  }
  ir_stmt *r = ir_seq(L->ctx, n, stores);
  for (int l = n - 1; l >= 0 && r; l--)
    r = ir_let_stmt(tmp[l], vals[l], r);
  return r;
}

static ir_stmt *lanes_stmt(lanes_ctx *L, ir_stmt *st, te_expr *mask);

/* A statement of scalar code under a mask runs when any lane is on. */
static ir_stmt *any_lane(lanes_ctx *L, ir_stmt *st, te_expr *mask) {
  te_expr *any = NULL;
  for (int l = 0; l < mask->dtype.lanes; l++) {
    te_expr *ml = lane_expr(L, mask, l);
    if (!ml)
      return NULL;
    any = any ? ir_binary(IR_OR, any, ml) : ml;
  }
  return ir_if(any, st, NULL);
}

static ir_stmt *lanes_children(lanes_ctx *L, ir_stmt *st, te_expr *mask) {
  ir_stmt *kids[64];
  if (st->nstmts > 64)
    return NULL;
  for (uint32_t i = 0; i < st->nstmts; i++) {
    kids[i] = st->stmts[i] ? lanes_stmt(L, st->stmts[i], mask) : NULL;
    if (st->stmts[i] && !kids[i])
      return NULL;
  }
  return ir_stmt_with_children(L->ctx, st, st->exprs, kids);
}

static ir_stmt *lanes_let_stmt(lanes_ctx *L, ir_stmt *st, te_expr *mask) {
  te_expr *var = st->exprs[0], *val = st->exprs[1];
  if (val->dtype.lanes == 1)
    return lanes_children(L, st, mask);
  if (!lanes_check(L, val->dtype.lanes))
    return NULL;
  te_expr **vs = lane_vars(L, var);
  ir_stmt *r = vs ? lanes_stmt(L, st->stmts[0], mask) : NULL;
  for (int l = val->dtype.lanes - 1; l >= 0 && r; l--) {
    te_expr *v = masked_value(L, val, mask, l);
    r = v ? ir_let_stmt(vs[l], v, r) : NULL;
  }
  return r;
}

static ir_stmt *lanes_stmt(lanes_ctx *L, ir_stmt *st, te_expr *mask) {
  if (!stmt_has_vector(st))
    return mask && st->kind == IR_S_STORE ? any_lane(L, st, mask) : st;
  switch ((ir_stmt_kind)st->kind) {
  case IR_S_STORE:
    return lanes_store(L, st, mask);
  case IR_S_LET_STMT:
    return lanes_let_stmt(L, st, mask);
  case IR_S_ATTR:
    if (!strcmp(st->u.attr.key, "vector_mask")) {
      te_expr *m = mask ? ir_binary(IR_AND, mask, st->exprs[0]) : st->exprs[0];
      return m ? lanes_stmt(L, st->stmts[0], m) : NULL;
    }
    return lanes_children(L, st, mask);
  case IR_S_IF:
    if (st->exprs[0]->dtype.lanes > 1) { /* a vector condition: the two sides masked */
      te_expr *c = st->exprs[0], *nc = ir_not(c);
      ir_stmt *t = lanes_stmt(L, st->stmts[0], mask ? ir_binary(IR_AND, mask, c) : c);
      ir_stmt *f = st->stmts[1] && t
                       ? lanes_stmt(L, st->stmts[1], mask ? ir_binary(IR_AND, mask, nc) : nc)
                       : NULL;
      return t && st->stmts[1] ? (f ? ir_seq2(L->ctx, t, f) : NULL) : t;
    }
    return lanes_children(L, st, mask);
  case IR_S_SEQ:
  case IR_S_FOR:
    for (int i = 0; i < st->nexprs; i++)
      if (st->exprs[i]->dtype.lanes > 1)
        goto unsupported;
    return lanes_children(L, st, mask);
  case IR_S_EVALUATE: {
    int n = st->exprs[0]->dtype.lanes;
    ir_stmt *ev[CG_SPV_MAX_LANES];
    if (!lanes_check(L, n))
      return NULL;
    for (int l = 0; l < n; l++) {
      te_expr *e = masked_value(L, st->exprs[0], mask, l);
      if (!e || !(ev[l] = ir_evaluate(e)))
        return NULL;
    }
    return ir_seq(L->ctx, n, ev);
  }
  default:
    break;
  }
unsupported:
  ir_error(L->ctx, TE_ERR_UNSUPPORTED,
           "te_build: kernel '%s': the SPIR-V back end has no vector form of a '%s' statement",
           L->kernel, ir_stmt_kind_name[st->kind]);
  return NULL;
}

ir_stmt *cg_spv_scalarize(te_ctx *ctx, const char *kernel, ir_stmt *body) {
  if (!body || !stmt_has_vector(body))
    return body;
  lanes_ctx L = {.ctx = ctx, .kernel = kernel, .vars = ir_map_new(ctx)};
  return L.vars ? lanes_stmt(&L, body, NULL) : NULL;
}
