/* tensorize.c — loops marked by te_tensorize become one hardware dot-product instruction.
 *
 * Needs: vectorization is done (the data loop inside the marked loop is a vector update), loop
 * partitioning too (a steady-state loop has the split's constant extent), unrolling not yet.
 * Guarantees: no `attr tensorize` is left. Each instruction is declared by a tz_insn below: the
 * size G of the groups it sums, its accumulator and factor dtypes, the call it becomes and the
 * CPU features it needs. A marked loop
 *     for (q, 0, G) { C[v] = C[v] + accxN(a(q)) * accxN(b(q)) }      (any order of the factors)
 * becomes C[v] = call(C[v], A, B), where A (and B) is the G x N values with lane G l + q =
 * a(q)[l], made from a(0..G-1): one contiguous load when they are (the packed layout of b:
 * [K/G][N][G]), a load of G values standing for itself repeated (a broadcast of G consecutive
 * values: a row of A), or an interleave of the G vectors otherwise. Anything else under the
 * mark is TE_ERR_SCHEDULE naming the stage, the loop and what did not match; a target without
 * the instruction is TE_ERR_TARGET. Nothing is dropped silently (docs/low-precision.md).
 *
 *   vpdpbusd  (G 4, i32 += u8 x i8) dot4_u8s8: exact. A group of 4 products of u8 and s8 is at
 *             most 4 * 255 * 128 in magnitude, and the accumulation wraps as i32 addition
 *             does, so the result is the loop's.
 *   vdpbf16ps (G 2, f32 += bf16 x bf16) dot2_bf16: each bf16 product is exact in f32 (8 + 8
 *             significant bits), and the two additions round as the loop's do, but in the
 *             instruction's order (the odd k first) and with subnormals flushed to zero: the
 *             result is the loop's up to that reassociation, within f32 rounding of the sum.
 */
#include <stdio.h>
#include <string.h>

#include "ir/arith.h"
#include "lower.h"
#include "schedule/sch.h"
#include "target/target.h"

/* An instruction te_tensorize knows (ir_tensor_intrin). */
typedef struct tz_insn {
  const char *name;
  int group;           /* G: the products summed into each lane */
  te_dtype acc;        /* the accumulator's element dtype */
  ir_intrin call;      /* what the loop becomes */
  const char *update;  /* the update's shape, for messages */
  const char *factors; /* the factors it multiplies, for messages */
  const char *feat512; /* the CPU feature 16 lanes need */
  const char *needs;   /* the features, for messages */
} tz_insn;

static const tz_insn tz_insns[IR_TENSOR_INTRIN_COUNT] = {
    [IR_TENSOR_INTRIN_VPDPBUSD] = {"vpdpbusd", 4, TE_I32, IR_INTRIN_DOT4_U8S8,
                                   "C[v] = C[v] + i32(a) * i32(b)",
                                   "8-bit values widened to i32 "
                                   "(i32(a) * i32(b), a u8 and b i8)",
                                   "avx512vnni",
                                   "16 lanes need AVX512-VNNI; 8 or 4 lanes AVX-VNNI or "
                                   "AVX512-VNNI with VL"},
    [IR_TENSOR_INTRIN_VDPBF16PS] = {"vdpbf16ps", 2, TE_F32, IR_INTRIN_DOT2_BF16,
                                    "C[v] = C[v] + f32(a) * f32(b)",
                                    "bf16 values widened to f32 "
                                    "(f32(a) * f32(b), a and b bf16)",
                                    "avx512bf16",
                                    "16 lanes need AVX512-BF16; 8 or 4 lanes AVX512-BF16 with "
                                    "VL"},
};

typedef struct tz {
  lw_pass_ctx *p;
  ir_analyzer *an;
  const tz_insn *insn; /* of the loop being matched */
  bool failed;
} tz;

static ir_stmt *tz_refuse(tz *t, te_status st, te_iter *it, const char *fmt, const char *what) {
  if (!t->failed)
    ir_error(t->p->ctx, st, "%s: stage '%s': te_tensorize(%s, '%s'): %s%s", t->p->api,
             it->stage->name, it->name, t->insn->name, fmt, what ? what : "");
  t->failed = true;
  return NULL;
}

/* tz_refuse for the checks that answer true or false. */
static bool tz_fail(tz *t, te_status st, te_iter *it, const char *fmt, const char *what) {
  tz_refuse(t, st, it, fmt, what);
  return false;
}

/* Whether a narrow factor's element dtype is one the instruction multiplies. */
static bool narrow_dtype(const tz_insn *in, te_dtype d) {
  if (in->acc.code == kDLFloat)
    return d.code == kDLBfloat && d.bits == 16;
  return d.bits == 8 && ir_is_intlike(d);
}

/* A factor of the product as the narrow vector it widens: accxN(v) -> v, xN(acc(s)) -> xN(s);
   NULL when it is neither (a product of wide values). */
static te_expr *narrow_of(const tz_insn *in, te_expr *f, int lanes) {
  if (f->kind == IR_CAST && narrow_dtype(in, f->args[0]->dtype))
    return f->args[0];
  if (f->kind == IR_BROADCAST && f->args[0]->kind == IR_CAST) {
    te_expr *s = f->args[0]->args[0];
    if (narrow_dtype(in, s->dtype) && s->dtype.lanes == 1)
      return ir_broadcast(s, lanes);
  }
  return NULL;
}

/* True when b - a simplifies to the constant d. */
static bool differ_by(tz *t, te_expr *a, te_expr *b, int64_t d) {
  int64_t v;
  te_expr *diff = ir_simplify(t->an, ir_sub(b, a));
  return diff && ir_is_const_int(diff, &v) && v == d;
}

/* The G x N values of one side from its G vectors v[q] (N lanes each). */
static te_expr *pack_side(tz *t, te_expr *const v[4], int lanes) {
  te_dtype e = ir_elem(v[0]->dtype);
  int g = t->insn->group;
  bool packed = true, repeated = true;
  for (int q = 0; q < g; q++) {
    te_expr *x = v[q];
    int64_t stride;
    packed = packed && x->kind == IR_LOAD && x->u.buffer == v[0]->u.buffer &&
             x->args[0]->kind == IR_RAMP && ir_is_const_int(x->args[0]->args[1], &stride) &&
             stride == g && differ_by(t, v[0]->args[0]->args[0], x->args[0]->args[0], q);
    repeated = repeated && x->kind == IR_BROADCAST && x->args[0]->kind == IR_LOAD &&
               v[0]->kind == IR_BROADCAST && x->args[0]->u.buffer == v[0]->args[0]->u.buffer &&
               differ_by(t, v[0]->args[0]->args[0], x->args[0]->args[0], q);
  }
  te_ctx *ctx = t->p->ctx;
  if (packed) {
    te_expr *base = v[0]->args[0]->args[0];
    te_expr *idx = ir_ramp(base, ir_int(ctx, base->dtype, 1), g * lanes);
    return ir_load(v[0]->u.buffer, ir_with_lanes(e, g * lanes), idx);
  }
  if (repeated) {
    te_expr *base = v[0]->args[0]->args[0];
    return ir_load(v[0]->args[0]->u.buffer, ir_with_lanes(e, g),
                   ir_ramp(base, ir_int(ctx, base->dtype, 1), g));
  }
  return ir_call(ctx, g == 4 ? IR_INTRIN_INTERLEAVE4 : IR_INTRIN_INTERLEAVE2,
                 ir_with_lanes(e, g * lanes), g, v);
}

/* The side f (a narrow vector using the loop variable) at q = 0..G-1. */
static bool side_at(tz *t, ir_stmt *loop, te_expr *f, te_expr *out[4]) {
  te_expr *var = IR_FOR_VAR(loop);
  for (int q = 0; q < t->insn->group; q++) {
    te_expr *at = ir_add(IR_FOR_MIN(loop), ir_int(t->p->ctx, TE_I64, q));
    out[q] = ir_simplify(t->an, ir_substitute(t->p->ctx, f, 1, &var, &at));
    if (!out[q])
      return false;
  }
  return true;
}

static bool target_has(tz *t, int lanes) {
  const te_target *tg = t->p->target;
  if (!tg) /* te_lower_text: no code is made, the text shows the instruction */
    return true;
  if (tg_is_gpu(tg))
    return false;
  const char *f512 = t->insn->feat512;
  if (lanes == 16)
    return tg_has_feature(tg, f512);
  return (t->insn->call == IR_INTRIN_DOT4_U8S8 && tg_has_feature(tg, "avxvnni")) ||
         (tg_has_feature(tg, f512) && tg_has_feature(tg, "avx512vl"));
}

/* The marked loop's body when the loop has the instruction's group extent, is serial and holds
   one store; NULL (refused) otherwise. */
static ir_stmt *tz_loop_body(tz *t, te_iter *it, ir_stmt *loop) {
  const tz_insn *in = t->insn;
  char buf[32], msg[200];
  int64_t ext = 0;
  if (!loop || loop->kind != IR_S_FOR)
    return tz_refuse(t, TE_ERR_SCHEDULE, it, "the loop is not there after lowering", NULL);
  if (!ir_is_const_int(IR_FOR_EXTENT(loop), &ext) || ext != in->group) {
    char *e = ir_expr_to_string(IR_FOR_EXTENT(loop));
    snprintf(buf, sizeof buf, "%s", e ? e : "?");
    te_free(e);
    snprintf(msg, sizeof msg,
             "the instruction sums groups of %d: the loop must have the constant extent %d (a "
             "split of the reduce axis by %d, with K a multiple of %d); its extent is ",
             in->group, in->group, in->group, in->group);
    return tz_refuse(t, TE_ERR_SCHEDULE, it, msg, buf);
  }
  if (loop->u.loop.kind != IR_FOR_SERIAL && loop->u.loop.kind != IR_FOR_UNROLLED)
    return tz_refuse(t, TE_ERR_SCHEDULE, it, "the loop must be serial, it is ",
                     ir_for_kind_name[loop->u.loop.kind]);
  ir_stmt *body = IR_FOR_BODY(loop);
  if (!body || body->kind != IR_S_STORE) {
    snprintf(msg, sizeof msg, "its body is not one vector update %s; it is a ", in->update);
    return tz_refuse(t, TE_ERR_SCHEDULE, it,
                     body && body->kind == IR_S_FOR
                         ? "its body is a loop, not one vector update: vectorize the data loop "
                           "inside it (16, 8 or 4 lanes)"
                         : msg,
                     body && body->kind != IR_S_FOR ? ir_stmt_kind_name[body->kind] : NULL);
  }
  return body;
}

/* The store body as C[v] = C[v] + prod with C of the accumulator dtype in 16, 8 or 4 lanes and
   v independent of the loop: *acc is the load of C[v], *prod the product. */
static bool tz_update(tz *t, te_iter *it, ir_stmt *loop, ir_stmt *body, te_expr **acc,
                      te_expr **prod) {
  const tz_insn *in = t->insn;
  char buf[32], msg[200], accs[24];
  te_expr *value = body->exprs[0], *index = body->exprs[1];
  te_dtype vt = value->dtype;
  te_dtype_str(in->acc, accs, sizeof accs);
  if (vt.code != in->acc.code || vt.bits != in->acc.bits) {
    snprintf(msg, sizeof msg, "the accumulator must be %s, it is ", accs);
    return tz_fail(t, TE_ERR_SCHEDULE, it, msg, te_dtype_str(vt, buf, sizeof buf));
  }
  if (vt.lanes != 16 && vt.lanes != 8 && vt.lanes != 4) {
    snprintf(msg, sizeof msg,
             "the update must be a vector of 16, 8 or 4 %s lanes (vectorize the data loop "
             "inside); it is ",
             accs);
    return tz_fail(t, TE_ERR_SCHEDULE, it, msg, te_dtype_str(vt, buf, sizeof buf));
  }
  if (ir_expr_uses(index, IR_FOR_VAR(loop)))
    return tz_fail(t, TE_ERR_SCHEDULE, it,
                   "the accumulator's index depends on the loop: it must sum into the same "
                   "elements",
                   NULL);
  *acc = *prod = NULL;
  if (value->kind == IR_ADD)
    for (int s = 0; s < 2 && !*acc; s++) {
      te_expr *x = value->args[s];
      if (x->kind == IR_LOAD && x->u.buffer == body->u.buffer && x->args[0] == index)
        *acc = x, *prod = value->args[1 - s];
    }
  if (!*acc || (*prod)->kind != IR_MUL)
    return tz_fail(t, TE_ERR_SCHEDULE, it,
                   "the update is not C[v] = C[v] + a * b (a sum of products into its own "
                   "elements)",
                   NULL);
  return true;
}

/* The product's two narrow factors in the instruction's operand order (vpdpbusd: the u8 side
   first; vdpbf16ps: both bf16, as written). */
static bool tz_factors(tz *t, te_iter *it, te_expr *prod, int lanes, te_expr **u, te_expr **s) {
  const tz_insn *in = t->insn;
  char msg[200];
  te_expr *f0 = narrow_of(in, prod->args[0], lanes), *f1 = narrow_of(in, prod->args[1], lanes);
  if (!f0 || !f1) {
    snprintf(msg, sizeof msg, "the factors must be %s", in->factors);
    return tz_fail(t, TE_ERR_SCHEDULE, it, msg, NULL);
  }
  *u = f0, *s = f1;
  if (in->call != IR_INTRIN_DOT4_U8S8)
    return true;
  *u = ir_is_uint(f0->dtype) ? f0 : f1, *s = *u == f0 ? f1 : f0;
  if (!ir_is_uint((*u)->dtype) || !ir_is_int((*s)->dtype)) {
    char a[24], b[24], m[80];
    snprintf(m, sizeof m, "%s and %s", te_dtype_str(ir_elem(f0->dtype), a, sizeof a),
             te_dtype_str(ir_elem(f1->dtype), b, sizeof b));
    return tz_fail(t, TE_ERR_SCHEDULE, it, "the instruction multiplies u8 by i8; the factors are ",
                   m);
  }
  return true;
}

static ir_stmt *tz_match(tz *t, te_iter *it, ir_stmt *loop) {
  const tz_insn *in = t->insn;
  te_expr *acc, *prod, *u, *s;
  ir_stmt *body = tz_loop_body(t, it, loop);
  if (!body || !tz_update(t, it, loop, body, &acc, &prod))
    return NULL;
  te_dtype vt = body->exprs[0]->dtype;
  int lanes = vt.lanes;
  if (!tz_factors(t, it, prod, lanes, &u, &s))
    return NULL;
  if (!target_has(t, lanes)) {
    const te_target *tg = t->p->target;
    char buf[32], msg[200];
    snprintf(buf, sizeof buf, "%s", tg && tg->cpu ? tg->cpu : tg_is_gpu(tg) ? "a GPU" : "?");
    snprintf(msg, sizeof msg, "%s, which the target lacks (%d lanes): CPU ", in->needs, lanes);
    return tz_refuse(t, TE_ERR_TARGET, it, msg, buf);
  }
  te_expr *uq[4], *sq[4];
  if (!side_at(t, loop, u, uq) || !side_at(t, loop, s, sq))
    return NULL;
  te_expr *args[3] = {acc, pack_side(t, uq, lanes), pack_side(t, sq, lanes)};
  if (!args[1] || !args[2])
    return NULL;
  te_expr *dot = ir_call(t->p->ctx, in->call, vt, 3, args);
  return dot ? ir_store(body->u.buffer, dot, body->exprs[1]) : NULL;
}

static ir_stmt *tz_attr(ir_mutator *m, ir_stmt *s) {
  tz *t = m->data;
  if (strcmp(s->u.attr.key, "tensorize") != 0)
    return ir_mutate_stmt_children(m, s);
  te_iter *it = s->u.attr.node;
  int64_t id = 0;
  if (ir_is_const_int(s->exprs[0], &id) && ir_tensor_intrin_is_mma(id)) {
    ir_stmt *r = lw_tensorize_mma(t->p, t->an, it, (ir_tensor_intrin)id, s->stmts[0]);
    t->failed = t->failed || !r;
    return r;
  }
  if (!ir_is_const_int(s->exprs[0], &id) || id <= IR_TENSOR_INTRIN_NONE ||
      id >= IR_TENSOR_INTRIN_COUNT || !tz_insns[id].name) {
    ir_error(m->ctx, TE_ERR_INTERNAL, "internal: tensorize: unknown instruction %lld",
             (long long)id);
    t->failed = true;
    return NULL;
  }
  t->insn = &tz_insns[id];
  return tz_match(t, it, s->stmts[0]);
}

ir_stmt *lw_tensorize(lw_pass_ctx *p, ir_stmt *s) {
  tz t = {p, lw_analyzer_new(p), NULL, false};
  if (!t.an)
    return NULL;
  ir_mutator m = {.ctx = p->ctx, .data = &t};
  m.stmt[IR_S_ATTR] = tz_attr;
  ir_stmt *r = ir_mutate_stmt(&m, s);
  return t.failed ? NULL : r;
}
