/* vectorize.c — loops marked vectorized (te_vectorize) become straight-line vector code.
 *
 * Needs: loop partitioning is done, so the steady state of a split has the split's constant
 * factor as its extent and the tail a bounded one (`max(min(n - x.o*16, 16), 0)`).
 * Guarantees: no FOR of kind IR_FOR_VECTORIZED is left. A loop `for (x, min, L) vectorized B`
 * with a constant extent L becomes B once, widened to L lanes (as Halide's VectorizeLoops):
 *   - x becomes ramp(min, 1, L); an expression that uses a vector operand becomes a vector
 *     expression (its scalar operands broadcast), so arithmetic, comparisons, select, casts and
 *     math calls work lane by lane; ramp +- broadcast and ramp * scalar stay ramps;
 *   - a load or store whose index uses x gets a vector index: a ramp of stride 1 is one
 *     contiguous vector access, anything else a gather/scatter (codegen picks);
 *   - a store whose index does not use x while its value does (or whose value reads the element
 *     it updates) would make the iterations overwrite one element: TE_ERR_SCHEDULE naming the
 *     loop and the buffer (C[i] += A[i, k] with k vectorized; te_vectorize already refuses
 *     reduction axes, this is the general rule); a store of one value to one element stays a
 *     scalar store;
 *   - a buffer allocated inside the loop (a producer computed at or under it) gets one copy per
 *     lane, as each serial iteration had its own allocation; laid out interleaved (element i of
 *     lane l at i*L + l), so a per-lane scalar becomes a contiguous vector;
 *   - an inner loop whose bounds do not use x is kept, its body widened ("vectorized through");
 *     one whose min uses x runs from 0 with its variable rewritten as min + y; one whose extent
 *     uses x runs to a constant upper bound of the extent (from the analyzer) with its body
 *     masked to the lanes still inside; without such a bound it is an error;
 *   - an IF whose condition uses x becomes masked code: `// attr vector_mask = cond` around
 *     the then-branch (and `!cond` around the else-branch). Inside a vector_mask region code
 *     generation makes every vector load and store a masked one (lanes whose mask is false
 *     touch no memory), so guards that protect bounds stay safe; loads and stores that do not
 *     use x are widened there too (broadcast index), so that none of them runs for no lane.
 * Extents that are not constants: the tail that loop partitioning peels off a split keeps the
 * vectorized kind and a symbolic extent bounded by the split factor. It becomes vector code of
 * U lanes, U the analyzer's constant upper bound of the extent, masked to the lanes below the
 * extent (`ramp(0, 1, U) < x U(extent)`): masked vector code, never a silent serial loop. An
 * extent without a constant upper bound is TE_ERR_SCHEDULE ("has no constant extent (split it
 * by a constant first)"). Extents above LW_VECTOR_MAX lanes are refused the same way.
 *
 * Lanes: a loop of L lanes makes vectors of L elements whatever the target; LLVM splits vectors
 * wider than the machine's registers into several. The natural choice is the target's vector
 * width: te_target's vector_bits / element bits (16 f32 lanes on AVX-512, 8 on AVX2).
 *
 * Lanes that are not a power of two (CPU targets): LLVM keeps a vector of 24 floats in
 * registers only inside one basic block; a value that crosses blocks (an accumulator that LLVM
 * promotes out of memory over a reduction loop, a phi) it breaks into scalars, since its
 * register breakdown of a vector type whose length is not a power of two is element by element.
 * A 4 x 24 register tile ran at 4 GFLOP/s on AVX2 that way, against 56 for 6 x 16. So a constant
 * extent L = P * C, P the largest power of two dividing L and at least 4, becomes C unrolled
 * copies of P lanes (24: 3 x 8, 48: 3 x 16, 12: 3 x 4), each a vector LLVM splits into whole
 * registers: `for (x, min, L) vectorized B` is
 *   for (x.piece, 0, C) unrolled  for (x, min + x.piece * P, P) vectorized  B
 * and a masked tail bounded by L the same, each piece masked to what is left of the extent and
 * run only when some of it is. Extents with no power of two of at least 4 lanes in them (odd
 * ones, 6, 10) keep their one vector.
 *
 * A vectorized loop that contains another vectorized loop (two axes of one stage, or a producer
 * computed inside) is not widened twice: the inner loop is vectorized and the outer one becomes
 * an unrolled loop (copies of the inner vector code, what a two-dimensional vector compiles to).
 */
#include <inttypes.h>
#include <stdio.h>

#include "lower.h"

#define LW_VECTOR_MAX 1024
#define LW_VECTOR_MASK "vector_mask"

typedef struct vec {
  lw_pass_ctx *p;
  te_ctx *ctx;
  ir_analyzer *an;
  /* the loop being widened */
  const char *loop; /* its variable's name, for messages */
  int lanes;
  ir_map *vars;        /* VAR -> its value in the vector code (NULL: itself) */
  ir_map *bufs;        /* buffer allocated inside the loop -> its copy with one element per lane */
  ir_map *memo;        /* widened expressions, for the current vars */
  te_expr *mask;       /* the lanes live in the current region (NULL: all) */
  ir_buffer *conflict; /* first buffer that all lanes would store to one element of */
  bool failed;
} vec;

/* ---------------------------------------------------------------- helpers */

static bool is_vec(const te_expr *e) { return e && e->dtype.lanes > 1; }

static te_expr *bcast(vec *v, te_expr *e) {
  return e && e->dtype.lanes == 1 ? ir_broadcast(e, v->lanes) : e;
}

static te_expr *fail(vec *v) {
  v->failed = true;
  return NULL;
}

/* Binds var to value in the vector code (NULL unbinds); widened expressions are forgotten. */
static void bind(vec *v, te_expr *var, te_expr *value) {
  if (!ir_map_put(v->vars, var, value) || !(v->memo = ir_map_new(v->ctx)))
    v->failed = true;
}

static te_expr *simp(vec *v, te_expr *e) {
  te_expr *r = e ? ir_simplify(v->an, e) : NULL;
  if (!r)
    v->failed = true;
  return r;
}

static char *expr_text(te_expr *e) { return e ? ir_expr_to_string(e) : NULL; }

/* Constant bounds of an extent, simplified first (bound inference's clamps such as
   x - max(x, 0) + 1 are 1 once the analyzer knows x >= 0), the upper one also through the
   clamps of a short last tile (min(x*64 + 63, 999) - x*64 + 1 is at most 64 lanes, not 1000). */
static ir_const_bound bound_of(vec *v, te_expr *e) {
  te_expr *s = ir_simplify(v->an, e);
  ir_const_bound b = ir_const_bound_of(v->an, s ? s : e);
  int64_t up = ir_const_upper_bound(v->an, s ? s : e);
  if (up < b.max)
    b.max = up < b.min ? b.min : up;
  return b;
}

/* ---------------------------------------------------------------- expressions */

static te_expr *wide(vec *v, te_expr *e);

/* ramp +- scalar, scalar + ramp, ramp +- ramp, ramp * scalar, scalar * ramp as ramps (integer
   index arithmetic); NULL when the operands have no such form. a and b are widened, unbroadcast. */
static te_expr *ramp_arith(vec *v, ir_expr_kind k, te_expr *a, te_expr *b) {
  bool ra = a->kind == IR_RAMP, rb = b->kind == IR_RAMP;
  if (!(ra || rb) || (is_vec(a) && !ra) || (is_vec(b) && !rb))
    return NULL;
  te_expr *zero = ir_int(v->ctx, ir_elem(ra ? a->dtype : b->dtype), 0);
  te_expr *a0 = ra ? a->args[0] : a, *a1 = ra ? a->args[1] : zero;
  te_expr *b0 = rb ? b->args[0] : b, *b1 = rb ? b->args[1] : zero;
  switch (k) {
  case IR_ADD:
  case IR_SUB:
    return ir_ramp(ir_binary(k, a0, b0), ir_binary(k, a1, b1), v->lanes);
  case IR_MUL:
    if (ra && rb)
      return NULL;
    return ra ? ir_ramp(ir_mul(a0, b), ir_mul(a1, b), v->lanes)
              : ir_ramp(ir_mul(a, b0), ir_mul(a, b1), v->lanes);
  default:
    return NULL;
  }
}

/* A region whose live lanes are m (and the enclosing ones): widened loads depend on the mask,
   so the memo is fresh inside; mask_leave restores both. */
typedef struct mask_scope {
  te_expr *mask;
  ir_map *memo;
} mask_scope;

static bool mask_enter(vec *v, te_expr *m, mask_scope *saved) {
  *saved = (mask_scope){v->mask, v->memo};
  v->mask = saved->mask ? ir_and(saved->mask, m) : m;
  if ((v->memo = ir_map_new(v->ctx)))
    return true;
  fail(v);
  return false;
}

static void mask_leave(vec *v, const mask_scope *saved) {
  v->mask = saved->mask;
  v->memo = saved->memo;
}

/* A loop or let inside the loop: the analyzer learns its variable's range or value there, so
   what is widened (and simplified) inside holds only inside, and gets a memo of its own;
   fact_leave restores the enclosing one. Loop partitioning copies a body into a steady-state
   loop and a tail with the same variables: a memo shared by both gave the tail the steady
   state's simplifications (min(i + 1, 8) dropped where i reaches 8: the property test, run
   seed 412915428). */
static ir_map *fact_enter(vec *v) {
  ir_map *saved = v->memo;
  if (!(v->memo = ir_map_new(v->ctx)))
    fail(v);
  return saved;
}

static void fact_leave(vec *v, ir_map *saved) { v->memo = saved; }

/* One side of if_then_else widened with the lanes m live: its loads are masked in code
   generation, and a load of one element for all lanes becomes a broadcast vector load so that
   it is masked too. */
static te_expr *wide_side(vec *v, te_expr *m, te_expr *e) {
  mask_scope saved;
  te_expr *r = mask_enter(v, m, &saved) ? wide(v, e) : NULL;
  mask_leave(v, &saved);
  return r;
}

/* if_then_else(c, t, f): with a condition that varies by lane each side is widened under its
   lanes (wide_side); with a uniform one code generation branches, as in scalar code. */
static te_expr *wide_if_then_else(vec *v, te_expr *e) {
  te_expr *c = wide(v, e->args[0]);
  if (!c)
    return NULL;
  te_expr *t, *f;
  if (is_vec(c)) {
    t = wide_side(v, c, e->args[1]);
    f = t ? wide_side(v, ir_not(c), e->args[2]) : NULL;
  } else {
    t = wide(v, e->args[1]);
    f = t ? wide(v, e->args[2]) : NULL;
  }
  if (!f)
    return NULL;
  if (!is_vec(c) && !is_vec(t) && !is_vec(f))
    return c == e->args[0] && t == e->args[1] && f == e->args[2]
               ? e
               : ir_call(v->ctx, IR_INTRIN_IF_THEN_ELSE, e->dtype, 3, (te_expr *[]){c, t, f});
  te_expr *args[3] = {c, bcast(v, t), bcast(v, f)};
  return ir_call(v->ctx, IR_INTRIN_IF_THEN_ELSE, ir_with_lanes(e->dtype, v->lanes), 3, args);
}

/* Operators, selects, casts and calls: widened operands; scalars broadcast when one is a
   vector. likely() of a vector condition is dropped (it is a hint for scalar guards). */
static te_expr *wide_op(vec *v, te_expr *e) {
  if (e->kind == IR_CALL && e->u.call == IR_INTRIN_IF_THEN_ELSE)
    return wide_if_then_else(v, e);
  te_expr *small[4], **args = small;
  if (e->nargs > 4 && !(args = ir_alloc(v->ctx, sizeof *args * e->nargs)))
    return fail(v);
  bool changed = false, any_vec = false;
  for (int i = 0; i < e->nargs; i++) {
    if (!(args[i] = wide(v, e->args[i])))
      return NULL;
    changed |= args[i] != e->args[i];
    any_vec |= is_vec(args[i]);
  }
  if (!changed)
    return e;
  if (e->kind == IR_CALL && e->u.call == IR_INTRIN_LIKELY && any_vec)
    return args[0];
  if (e->kind >= IR_ADD && e->kind <= IR_MUL && any_vec) {
    te_expr *r = ramp_arith(v, (ir_expr_kind)e->kind, args[0], args[1]);
    if (r)
      return simp(v, r);
  }
  int lanes = any_vec ? v->lanes : 1;
  for (int i = 0; i < e->nargs && any_vec; i++)
    args[i] = bcast(v, args[i]);
  switch (e->kind) {
  case IR_NOT:
    return ir_not(args[0]);
  case IR_SELECT:
    return ir_select(args[0], args[1], args[2]);
  case IR_CAST:
    return ir_cast(ir_with_lanes(e->dtype, lanes), args[0]);
  case IR_CALL:
    return ir_call(v->ctx, e->u.call, ir_with_lanes(e->dtype, lanes), e->nargs, args);
  default:
    return ir_binary((ir_expr_kind)e->kind, args[0], args[1]);
  }
}

/* The index of lane l's copy of element idx in a widened buffer: idx * lanes + l. */
static te_expr *lane_index(vec *v, te_expr *idx) {
  te_expr *w = ir_int(v->ctx, ir_elem(idx->dtype), v->lanes);
  if (!is_vec(idx))
    return ir_ramp(ir_mul(idx, w), ir_int(v->ctx, idx->dtype, 1), v->lanes);
  te_expr *lane = ir_ramp(ir_int(v->ctx, ir_elem(idx->dtype), 0),
                          ir_int(v->ctx, ir_elem(idx->dtype), 1), v->lanes);
  return ir_add(ir_mul(idx, ir_broadcast(w, v->lanes)), lane);
}

static te_expr *wide_load(vec *v, te_expr *e) {
  ir_buffer *buf = e->u.buffer, *nb = ir_map_get(v->bufs, buf);
  te_expr *idx = wide(v, e->args[0]);
  if (!idx)
    return NULL;
  if (nb) {
    idx = lane_index(v, idx);
    buf = nb;
  } else if (!is_vec(idx)) {
    if (!v->mask) /* the same element for every lane: a scalar load */
      return idx == e->args[0] ? e : ir_load(buf, e->dtype, idx);
    idx = bcast(v, idx); /* masked: it must not run for no lane */
  }
  return ir_load(buf, ir_with_lanes(e->dtype, v->lanes), simp(v, idx));
}

static te_expr *wide_let(vec *v, te_expr *e) {
  te_expr *var = e->args[0], *value = wide(v, e->args[1]);
  if (!value)
    return NULL;
  te_expr *nv = var;
  if (is_vec(value)) {
    nv = ir_var_new(v->ctx, var->u.var.name, value->dtype, var->u.var.kind);
    bind(v, var, nv);
  }
  te_expr *body = nv ? wide(v, e->args[2]) : NULL;
  if (nv != var)
    bind(v, var, NULL);
  if (!body)
    return NULL;
  if (nv == var && value == e->args[1] && body == e->args[2])
    return e;
  return ir_let(nv, value, body);
}

static te_expr *wide_uncached(vec *v, te_expr *e) {
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
  case IR_FLOAT:
    return e;
  case IR_VAR: {
    te_expr *r = ir_map_get(v->vars, e);
    return r ? r : e;
  }
  case IR_LOAD:
    return wide_load(v, e);
  case IR_LET:
    return wide_let(v, e);
  case IR_RAMP:
  case IR_BROADCAST:
  case IR_ACCESS:
  case IR_REDUCE:
    ir_error(v->ctx, TE_ERR_INTERNAL, "internal: vectorize: loop '%s': unexpected '%s'", v->loop,
             ir_expr_kind_name[e->kind]);
    return fail(v);
  default:
    return wide_op(v, e);
  }
}

static te_expr *wide(vec *v, te_expr *e) {
  if (!e || v->failed)
    return NULL;
  te_expr *r = ir_map_get(v->memo, e);
  if (r)
    return r;
  r = wide_uncached(v, e);
  if (!r)
    return fail(v);
  if (!ir_map_put(v->memo, e, r))
    return fail(v);
  return r;
}

/* ---------------------------------------------------------------- statements */

static ir_stmt *wide_stmt(vec *v, ir_stmt *s);

/* s widened under the mask m (and the enclosing one), inside `// attr vector_mask = m`. */
static ir_stmt *masked(vec *v, te_expr *m, ir_stmt *s) {
  mask_scope saved;
  ir_stmt *r = mask_enter(v, m, &saved) ? wide_stmt(v, s) : NULL;
  mask_leave(v, &saved);
  return r ? ir_attr(v->ctx, LW_VECTOR_MASK, NULL, m, r) : NULL;
}

static int find_load(ir_visitor *vis, te_expr *e) {
  if (e->u.buffer != ((ir_stmt *)vis->data)->u.buffer)
    return IR_CONTINUE;
  vis->data = NULL;
  return IR_ABORT;
}

/* True when value reads the buffer that s stores to. */
static bool reads_own_buffer(ir_stmt *s, te_expr *value) {
  ir_visitor vis = {.data = s};
  vis.expr[IR_LOAD] = find_load;
  ir_visit_expr(&vis, value);
  return vis.data == NULL;
}

static ir_stmt *wide_store(vec *v, ir_stmt *s) {
  te_expr *value = wide(v, s->exprs[0]), *idx = wide(v, s->exprs[1]);
  if (!value || !idx)
    return NULL;
  ir_buffer *buf = s->u.buffer, *nb = ir_map_get(v->bufs, buf);
  if (nb) {
    idx = lane_index(v, idx);
    buf = nb;
  } else if (!is_vec(idx)) {
    /* every lane would write one element: with values that differ, or each updating it */
    if (is_vec(value) || reads_own_buffer(s, value)) {
      if (!v->conflict)
        v->conflict = buf;
      return s;
    }
    if (!v->mask)
      return value == s->exprs[0] && idx == s->exprs[1] ? s : ir_store(buf, value, idx);
    idx = bcast(v, idx);
  }
  idx = simp(v, idx);
  return idx ? ir_store(buf, bcast(v, value), idx) : NULL;
}

/* An inner loop whose bounds use the vectorized variable: for (y', 0, U) with y = min + y',
   masked to y' < extent when the extent varies (U its constant upper bound). */
static ir_stmt *wide_varying_for(vec *v, ir_stmt *s, te_expr *min, te_expr *ext) {
  te_expr *var = IR_FOR_VAR(s);
  te_expr *ny = ir_var_new(v->ctx, var->u.var.name, var->dtype, var->u.var.kind);
  te_expr *extent = ext, *m = NULL;
  if (!ny)
    return NULL;
  if (is_vec(ext)) {
    ir_const_bound b = bound_of(v, IR_FOR_EXTENT(s));
    if (b.max == INT64_MAX || b.max > INT32_MAX) {
      char *t = expr_text(IR_FOR_EXTENT(s));
      ir_error(v->ctx, TE_ERR_SCHEDULE,
               "te_vectorize: loop '%s': the extent of the inner loop '%s' (%s) depends on it and "
               "has no constant upper bound",
               v->loop, var->u.var.name, t ? t : "?");
      te_free(t);
      return NULL;
    }
    extent = ir_int(v->ctx, ext->dtype.lanes > 1 ? ir_elem(ext->dtype) : ext->dtype, b.max);
    m = ir_lt(ir_broadcast(ny, v->lanes), ext);
  }
  te_expr *val = is_vec(min) ? ir_add(min, ir_broadcast(ny, v->lanes)) : ir_add(min, ny);
  bind(v, var, val);
  ir_stmt *body = m ? masked(v, m, IR_FOR_BODY(s)) : wide_stmt(v, IR_FOR_BODY(s));
  bind(v, var, NULL);
  if (body && s->u.loop.kind == IR_FOR_PARALLEL && v->mask) /* codegen outlines the body */
    body = ir_attr(v->ctx, LW_VECTOR_MASK, NULL, v->mask, body);
  return body ? ir_for(ny, ir_int(v->ctx, extent->dtype, 0), extent, s->u.loop.kind, s->u.loop.tag,
                       body)
              : NULL;
}

static ir_stmt *wide_for(vec *v, ir_stmt *s) {
  if (s->u.loop.kind == IR_FOR_THREAD) {
    ir_error(v->ctx, TE_ERR_SCHEDULE,
             "te_vectorize: loop '%s' contains the GPU-thread-bound loop '%s'", v->loop,
             IR_FOR_VAR(s)->u.var.name);
    return NULL;
  }
  te_expr *min = wide(v, IR_FOR_MIN(s)), *ext = wide(v, IR_FOR_EXTENT(s));
  if (!min || !ext)
    return NULL;
  ir_analyzer_bind(v->an, IR_FOR_VAR(s), IR_FOR_MIN(s), IR_FOR_EXTENT(s));
  ir_map *outer = fact_enter(v);
  ir_stmt *r;
  if (is_vec(min) || is_vec(ext)) {
    r = wide_varying_for(v, s, min, ext);
  } else {
    ir_stmt *body = wide_stmt(v, IR_FOR_BODY(s));
    if (body && s->u.loop.kind == IR_FOR_PARALLEL && v->mask)
      body = ir_attr(v->ctx, LW_VECTOR_MASK, NULL, v->mask, body);
    r = !body ? NULL
        : body == IR_FOR_BODY(s) && min == IR_FOR_MIN(s) && ext == IR_FOR_EXTENT(s)
            ? s
            : ir_for(IR_FOR_VAR(s), min, ext, s->u.loop.kind, s->u.loop.tag, body);
  }
  fact_leave(v, outer);
  ir_analyzer_unbind(v->an, IR_FOR_VAR(s));
  return r;
}

static ir_stmt *wide_if(vec *v, ir_stmt *s) {
  te_expr *c = wide(v, s->exprs[0]);
  ir_stmt *else_s = s->nstmts > 1 ? s->stmts[1] : NULL;
  if (!c)
    return NULL;
  if (is_vec(c)) {
    ir_stmt *t = masked(v, c, s->stmts[0]);
    ir_stmt *f = t && else_s ? masked(v, ir_not(c), else_s) : NULL;
    return t ? ir_seq2(v->ctx, t, f) : NULL;
  }
  ir_stmt *t = wide_stmt(v, s->stmts[0]);
  ir_stmt *f = t && else_s ? wide_stmt(v, else_s) : NULL;
  if (!t || (else_s && !f))
    return NULL;
  if (c == s->exprs[0] && t == s->stmts[0] && f == else_s)
    return s;
  return ir_if(c, t, f);
}

static ir_stmt *wide_let_stmt(vec *v, ir_stmt *s) {
  te_expr *var = s->exprs[0], *value = wide(v, s->exprs[1]);
  if (!value)
    return NULL;
  te_expr *nv = var;
  if (is_vec(value)) {
    if (!(nv = ir_var_new(v->ctx, var->u.var.name, value->dtype, var->u.var.kind)))
      return NULL;
    bind(v, var, nv);
  }
  ir_analyzer_bind_value(v->an, var, s->exprs[1]);
  ir_map *outer = fact_enter(v);
  ir_stmt *body = wide_stmt(v, s->stmts[0]);
  fact_leave(v, outer);
  ir_analyzer_unbind(v->an, var);
  if (nv != var)
    bind(v, var, NULL);
  if (!body)
    return NULL;
  if (nv == var && value == s->exprs[1] && body == s->stmts[0])
    return s;
  return ir_let_stmt(nv, value, body);
}

/* An allocation inside the loop: each iteration of the serial loop had a fresh one, so each lane
   gets its own copy (element i of lane l at i * lanes + l: a per-lane scalar is a contiguous
   vector). Lanes sharing one buffer could see each other's writes. */
static ir_stmt *wide_allocate(vec *v, ir_stmt *s) {
  ir_buffer *buf = s->u.buffer;
  te_expr *count = wide(v, s->exprs[0]);
  if (!count)
    return NULL;
  if (is_vec(count)) {
    ir_error(v->ctx, TE_ERR_SCHEDULE,
             "te_vectorize: loop '%s': the size of buffer '%s' allocated inside it depends on the "
             "loop variable",
             v->loop, buf->name);
    return NULL;
  }
  ir_buffer *nb = ir_buffer_new(v->ctx, buf->name, buf->dtype, buf->ndim, buf->shape, buf->scope,
                                buf->tensor, -1);
  if (!nb || !ir_map_put(v->bufs, buf, nb) || !(v->memo = ir_map_new(v->ctx)))
    return NULL;
  ir_stmt *body = wide_stmt(v, s->stmts[0]);
  count = simp(v, ir_mul(count, ir_int(v->ctx, count->dtype, v->lanes)));
  return body && count ? ir_allocate(v->ctx, nb, count, body) : NULL;
}

static ir_stmt *wide_children(vec *v, ir_stmt *s) {
  ir_stmt **kids = s->nstmts ? ir_alloc(v->ctx, s->nstmts * sizeof *kids) : NULL;
  te_expr **exprs = s->nexprs ? ir_alloc(v->ctx, s->nexprs * sizeof *exprs) : NULL;
  if ((s->nstmts && !kids) || (s->nexprs && !exprs))
    return NULL;
  bool changed = false;
  for (int i = 0; i < s->nexprs; i++) {
    if (!(exprs[i] = wide(v, s->exprs[i])))
      return NULL;
    changed |= exprs[i] != s->exprs[i];
  }
  for (uint32_t i = 0; i < s->nstmts; i++) {
    kids[i] = s->stmts[i] ? wide_stmt(v, s->stmts[i]) : NULL;
    if (v->failed)
      return NULL;
    changed |= kids[i] != s->stmts[i];
  }
  if (!changed)
    return s;
  if (s->kind == IR_S_SEQ)
    return ir_seq(v->ctx, (int)s->nstmts, kids);
  return ir_stmt_with_children(v->ctx, s, exprs, kids);
}

static ir_stmt *wide_stmt_kind(vec *v, ir_stmt *s) {
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_STORE:
    return wide_store(v, s);
  case IR_S_FOR:
    return wide_for(v, s);
  case IR_S_IF:
    return wide_if(v, s);
  case IR_S_LET_STMT:
    return wide_let_stmt(v, s);
  case IR_S_ALLOCATE:
    return wide_allocate(v, s);
  case IR_S_ASSERT: {
    te_expr *c = wide(v, s->exprs[0]);
    if (c && is_vec(c)) {
      ir_error(v->ctx, TE_ERR_SCHEDULE,
               "te_vectorize: loop '%s': an assertion inside it depends on the loop variable",
               v->loop);
      return NULL;
    }
    return c ? wide_children(v, s) : NULL;
  }
  case IR_S_PROVIDE:
  case IR_S_REALIZE:
    ir_error(v->ctx, TE_ERR_INTERNAL, "internal: vectorize: loop '%s': unflattened '%s'", v->loop,
             ir_stmt_kind_name[s->kind]);
    return NULL;
  default:
    return wide_children(v, s);
  }
}

static ir_stmt *wide_stmt(vec *v, ir_stmt *s) {
  if (!s || v->failed)
    return NULL;
  ir_stmt *r = wide_stmt_kind(v, s);
  if (!r)
    v->failed = true;
  return r;
}

/* ---------------------------------------------------------------- the vectorized loop */

static int has_vectorized(ir_visitor *vis, ir_stmt *s) {
  if (s->u.loop.kind != IR_FOR_VECTORIZED)
    return IR_CONTINUE;
  *(bool *)vis->data = true;
  return IR_ABORT;
}

static bool contains_vectorized(ir_stmt *body) {
  bool found = false;
  ir_visitor vis = {.data = &found};
  vis.stmt[IR_S_FOR] = has_vectorized;
  ir_visit_stmt(&vis, body);
  return found;
}

/* The number of lanes: the constant extent, or the constant upper bound of a tail's extent
   (*masked_out set). False after an error. */
static bool loop_lanes(vec *v, ir_stmt *s, int64_t *lanes, bool *masked_out) {
  const char *name = IR_FOR_VAR(s)->u.var.name;
  *masked_out = false;
  if (!ir_is_const_int(IR_FOR_EXTENT(s), lanes)) {
    *lanes = bound_of(v, IR_FOR_EXTENT(s)).max;
    *masked_out = true;
    if (*lanes == INT64_MAX) {
      char *t = expr_text(IR_FOR_EXTENT(s));
      ir_error(v->ctx, TE_ERR_SCHEDULE,
               "te_vectorize: loop '%s' has no constant extent (split it by a constant first): "
               "its extent is %s, with no constant upper bound",
               name, t ? t : "?");
      te_free(t);
      return false;
    }
  }
  if (*lanes > LW_VECTOR_MAX) {
    ir_error(v->ctx, TE_ERR_SCHEDULE,
             "te_vectorize: loop '%s' has extent %" PRId64 "; vectors are limited to %d lanes "
             "(split it by the target's vector width and vectorize the inner loop)",
             name, *lanes, LW_VECTOR_MAX);
    return false;
  }
  return true;
}

static ir_stmt *vectorize_loop(vec *v, ir_stmt *s) {
  te_ctx *ctx = v->ctx;
  te_expr *var = IR_FOR_VAR(s), *min = IR_FOR_MIN(s), *ext = IR_FOR_EXTENT(s);
  bool is_masked;
  int64_t lanes;
  if (!loop_lanes(v, s, &lanes, &is_masked))
    return NULL;
  if (lanes <= 0)
    return NULL;    /* no iteration: no statement */
  if (lanes == 1) { /* one lane: the body at x = min (when the extent is not 0) */
    ir_stmt *b = ir_substitute_stmt(ctx, IR_FOR_BODY(s), 1, &var, &min);
    return is_masked && b ? ir_if(ir_lt(ir_int(ctx, ext->dtype, 0), ext), b, NULL) : b;
  }
  v->loop = var->u.var.name;
  v->lanes = (int)lanes;
  v->vars = ir_map_new(ctx);
  v->bufs = ir_map_new(ctx);
  v->mask = NULL;
  v->conflict = NULL;
  v->failed = !v->vars || !v->bufs;
  te_expr *ramp = ir_ramp(min, ir_int(ctx, min->dtype, 1), v->lanes);
  if (v->failed || !ramp)
    return NULL;
  bind(v, var, ramp);
  te_expr *m = NULL;
  if (is_masked) {
    te_expr *lane = ir_ramp(ir_int(ctx, ext->dtype, 0), ir_int(ctx, ext->dtype, 1), v->lanes);
    m = ir_lt(lane, ir_broadcast(ext, v->lanes));
  }
  ir_analyzer_bind(v->an, var, min, ext);
  ir_stmt *body = m ? masked(v, m, IR_FOR_BODY(s)) : wide_stmt(v, IR_FOR_BODY(s));
  ir_analyzer_unbind(v->an, var);
  if (body && v->conflict) {
    ir_error(ctx, TE_ERR_SCHEDULE,
             "te_vectorize: loop '%s': the store to '%s' does not depend on the loop variable; "
             "iterations would overwrite each other",
             v->loop, v->conflict->name);
    return NULL;
  }
  if (!body && !ir_failed(ctx))
    ir_error(ctx, TE_ERR_INTERNAL, "internal: vectorize: loop '%s' could not be widened", v->loop);
  return body;
}

/* ---------------------------------------------------------------- the pass */

enum { LW_MIN_PIECE = 4 }; /* the fewest lanes of a piece (a power of two) */

/* Vectorized loop s as unrolled pieces of a power of two lanes (the header: lanes that are not
   a power of two), or s itself when it keeps one vector. NULL when out of memory. A masked tail
   (an extent bounded by L) becomes pieces masked to what is left of it, each under a test that
   some lane is, so a short tail runs only its first pieces. */
static ir_stmt *power_of_two_pieces(vec *v, ir_stmt *s) {
  if (tg_is_gpu(v->p->target))
    return s;
  te_expr *ext = IR_FOR_EXTENT(s);
  int64_t lanes;
  bool is_tail = !ir_is_const_int(ext, &lanes);
  if (is_tail)
    lanes = bound_of(v, ext).max;
  if (lanes <= 0 || lanes > LW_VECTOR_MAX)
    return s;                     /* no iteration, or the error vectorize_loop reports */
  int64_t piece = lanes & -lanes; /* the largest power of two dividing lanes */
  if (piece == lanes || piece < LW_MIN_PIECE)
    return s; /* one vector */
  te_ctx *ctx = v->ctx;
  te_expr *var = IR_FOR_VAR(s);
  te_dtype t = var->dtype;
  char name[128];
  snprintf(name, sizeof name, "%s.piece", var->u.var.name);
  te_expr *pv = ir_var_new(ctx, name, t, IR_VAR_INDEX);
  te_expr *start = pv ? ir_mul(pv, ir_int(ctx, t, piece)) : NULL; /* within the loop */
  te_expr *min = start ? ir_add(IR_FOR_MIN(s), start) : NULL;
  te_expr *pext = ir_int(ctx, t, piece);
  if (is_tail && start)
    pext = ir_max(ir_min(ir_sub(ext, start), pext), ir_int(ctx, t, 0));
  ir_stmt *inner =
      min && pext ? ir_for(var, min, pext, IR_FOR_VECTORIZED, s->u.loop.tag, IR_FOR_BODY(s)) : NULL;
  if (is_tail && inner)
    inner = ir_if(ir_lt(start, ext), inner, NULL);
  return inner ? ir_for(pv, ir_int(ctx, t, 0), ir_int(ctx, t, lanes / piece), IR_FOR_UNROLLED,
                        s->u.loop.tag, inner)
               : NULL;
}

static ir_stmt *vec_for(ir_mutator *m, ir_stmt *s) {
  vec *v = m->data;
  if (s->u.loop.kind == IR_FOR_VECTORIZED && !contains_vectorized(IR_FOR_BODY(s))) {
    ir_stmt *pieces = power_of_two_pieces(v, s);
    if (pieces != s)
      return pieces ? ir_mutate_stmt(m, pieces) : NULL;
    return vectorize_loop(v, s);
  }
  te_expr *var = IR_FOR_VAR(s);
  ir_analyzer_bind(v->an, var, IR_FOR_MIN(s), IR_FOR_EXTENT(s));
  ir_stmt *body = ir_mutate_stmt(m, IR_FOR_BODY(s));
  ir_analyzer_unbind(v->an, var);
  if (!body)
    return NULL;
  ir_for_kind kind = s->u.loop.kind == IR_FOR_VECTORIZED ? IR_FOR_UNROLLED : s->u.loop.kind;
  if (body == IR_FOR_BODY(s) && kind == s->u.loop.kind)
    return s;
  return ir_for(var, IR_FOR_MIN(s), IR_FOR_EXTENT(s), kind, s->u.loop.tag, body);
}

static ir_stmt *vec_let(ir_mutator *m, ir_stmt *s) {
  vec *v = m->data;
  ir_analyzer_bind_value(v->an, s->exprs[0], s->exprs[1]);
  ir_stmt *r = ir_mutate_stmt_children(m, s);
  ir_analyzer_unbind(v->an, s->exprs[0]);
  return r;
}

ir_stmt *lw_vectorize(lw_pass_ctx *p, ir_stmt *s) {
  vec v = {.p = p, .ctx = p->ctx, .an = lw_analyzer_new(p)};
  if (!v.an)
    return NULL;
  ir_mutator m = {.ctx = p->ctx, .data = &v};
  m.stmt[IR_S_FOR] = vec_for;
  m.stmt[IR_S_LET_STMT] = vec_let;
  return ir_mutate_stmt(&m, s);
}
