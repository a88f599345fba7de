/* tensorize_mma.c — te_tensorize(stage, loop, "mma_m16n8k16"): a 16x8x16 tile of a GEMM
 * becomes one PTX mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32;
 * "mma_m16n8k32": a 16x8x32 tile of an 8-bit integer GEMM one
 * mma.sync.aligned.m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32.
 *
 * The declared description (the instruction's shape, checked here against the loop nest; the
 * integer tile's in brackets):
 *     for (x, 0, 16|8|16) for (y, ...) for (z, ...)          (the marked loop and two inside it)
 *       C[c] = C[c] + f32(A[a]) * f32(B[b])                  (either order of the sum)
 *       [C[c] = C[c] + i32(A[a]) * i32(B[b])]
 * where C is f32, A and B are both f16 or both bf16 [C i32, A and B each s8 or u8], and the
 * three loop variables play the roles
 *   m (extent 16): used by the indices of C and A, not B;
 *   n (extent 8):  used by C and B, not A;
 *   k (extent 16 [32]): used by A and B, not C (the reduction);
 * in any nesting order, each index affine in them: c = c0 + m*cm + n*cn, a = a0 + m*am + k*ak,
 * b = b0 + k*bk + n*bn (strides may be symbolic but may not depend on the tile's loops).
 * The nest becomes the store C[c0] = mma_m16n8k16(C[c0], cm, cn, A[a0], am, ak, B[b0], bk, bn)
 * [mma_m16n8k32(...)] (intrinsics.def), which stands for the store of the whole tile.
 *
 * The instruction is a warp's: 32 threads each hold a fragment of A, B and C. te's kernels are
 * written per thread, so a kernel holding the call runs a warp for each of its threads (the
 * pass gpu_warp, gpu_warp.c); the fragments are loaded, multiplied and stored by the PTX back
 * end (ptx_mma.c, the layout in codegen/ptx_mma.h). Anything else under the mark is
 * TE_ERR_SCHEDULE naming the stage, the loop and what did not match; a target without the
 * instruction (not cuda, or cuda below sm_80) is TE_ERR_TARGET. Nothing is dropped silently.
 *
 * Numerics: the products of f16 (or bf16) values are exact in f32, and the tensor core sums the
 * 16 of a tile in an order of its own, with at least f32 precision: the result differs from the
 * loop's f32 sum in rounding only (docs/low-precision.md). The integer tile is exact: its 32
 * products of 8-bit values and their sum wrap as the loop's i32 arithmetic does (the PTX
 * instruction without .satfinite).
 */
#include <stdio.h>
#include <string.h>

#include "ir/arith.h"
#include "lower.h"
#include "schedule/sch.h"
#include "target/target.h"

enum { MMA_M, MMA_N, MMA_K };
static const char *const mma_role[3] = {"m", "n", "k"};

/* A tensor-core tile te_tensorize knows. */
typedef struct mma_shape {
  const char *name;   /* te_tensorize's */
  int extent[3];      /* of the roles m, n, k */
  ir_intrin call;     /* what the nest becomes */
  te_dtype acc;       /* C's dtype (scalar) */
  bool integer;       /* 8-bit integer factors widened to i32, else 16-bit floats to f32 */
  const char *update; /* for messages */
  const char *ptx;    /* the instruction, for messages */
} mma_shape;

static const mma_shape mma_k16 = {
    "mma_m16n8k16",     {16, 8, 16}, IR_INTRIN_MMA_M16N8K16,
    {kDLFloat, 32, 1},  false,       "C[c] = C[c] + f32(A[a]) * f32(B[b])",
    "mma.sync m16n8k16"};
static const mma_shape mma_k32 = {
    "mma_m16n8k32",     {16, 8, 32}, IR_INTRIN_MMA_M16N8K32,
    {kDLInt, 32, 1},    true,        "C[c] = C[c] + i32(A[a]) * i32(B[b])",
    "mma.sync m16n8k32"};

typedef struct mz {
  const mma_shape *sh;
  lw_pass_ctx *p;
  ir_analyzer *an;
  te_iter *it;
  ir_stmt *loops[3]; /* nesting order */
  int role_of[3];    /* loops[i] plays role_of[i] */
  ir_stmt *by_role[3];
} mz;

static ir_stmt *mz_refuse(mz *z, te_status st, const char *what, const char *detail) {
  ir_error(z->p->ctx, st, "%s: stage '%s': te_tensorize(%s, '%s'): %s%s", z->p->api,
           z->it->stage->name, z->it->name, z->sh->name, what, detail ? detail : "");
  return NULL;
}

/* acc(X[i]) with X a buffer of the tile's narrow dtypes (f16 or bf16; s8 or u8): the load,
   else NULL. */
static te_expr *widened_load(const mma_shape *sh, te_expr *f) {
  if (f->kind != IR_CAST || !ir_dtype_eq(f->dtype, sh->acc))
    return NULL;
  te_expr *x = f->args[0];
  bool narrow = sh->integer ? (ir_is_int(x->dtype) || ir_is_uint(x->dtype)) && x->dtype.bits == 8
                            : ir_is_half(x->dtype);
  return x->kind == IR_LOAD && narrow && x->dtype.lanes == 1 ? x : NULL;
}

/* The three loops of the tile, constant extents, serial. */
static bool mz_loops(mz *z, ir_stmt *loop) {
  char buf[80];
  ir_stmt *s = loop;
  for (int i = 0; i < 3; i++) {
    if (!s || s->kind != IR_S_FOR)
      return mz_refuse(z, TE_ERR_SCHEDULE,
                       i == 0 ? "the loop is not there after lowering"
                              : "the instruction needs three perfectly nested loops (m, n and k "
                                "of its tile) from the marked one inwards; inside loop ",
                       i == 0 ? NULL : IR_FOR_VAR(z->loops[i - 1])->u.var.name) != NULL;
    int64_t ext;
    if (!ir_is_const_int(IR_FOR_EXTENT(s), &ext)) {
      char *e = ir_expr_to_string(IR_FOR_EXTENT(s));
      snprintf(buf, sizeof buf, "'%s' has the extent %s", IR_FOR_VAR(s)->u.var.name, e ? e : "?");
      te_free(e);
      return mz_refuse(z, TE_ERR_SCHEDULE,
                       "the tile's loops need constant extents (split by the tile's m, n and k, "
                       "with the sizes multiples of them): loop ",
                       buf) != NULL;
    }
    if (s->u.loop.kind != IR_FOR_SERIAL && s->u.loop.kind != IR_FOR_UNROLLED)
      return mz_refuse(z, TE_ERR_SCHEDULE, "the tile's loops must be serial; one is ",
                       ir_for_kind_name[s->u.loop.kind]) != NULL;
    z->loops[i] = s;
    s = IR_FOR_BODY(s);
  }
  return true;
}

/* Which tile loops index e uses, as a bit set over loops[]. */
static int uses_of(mz *z, te_expr *e) {
  int u = 0;
  for (int i = 0; i < 3; i++)
    if (ir_expr_uses(e, IR_FOR_VAR(z->loops[i])))
      u |= 1 << i;
  return u;
}

/* The constant extent of the one tile loop in the bit set uses, -1 when it is not one loop. */
static int64_t own_extent(mz *z, int uses) {
  int64_t ext = -1;
  for (int i = 0; i < 3; i++)
    if (uses == 1 << i && !ir_is_const_int(IR_FOR_EXTENT(z->loops[i]), &ext))
      ext = -1;
  return ext;
}

/* Index e as origin + sum of stride[r] * (loop of role r - its min) over the two roles it uses;
   false when it is not affine in them (the difference does not simplify to 0). */
static bool affine(mz *z, te_expr *e, const int roles[2], te_expr **origin, te_expr *stride[2]) {
  te_ctx *ctx = z->p->ctx;
  te_expr *vars[3], *mins[3], *ones[3];
  for (int i = 0; i < 3; i++) {
    vars[i] = IR_FOR_VAR(z->loops[i]);
    mins[i] = IR_FOR_MIN(z->loops[i]);
  }
  if (!(*origin = ir_simplify(z->an, ir_substitute(ctx, e, 3, vars, mins))))
    return false;
  te_expr *model = *origin;
  for (int r = 0; r < 2; r++) {
    ir_stmt *l = z->by_role[roles[r]];
    for (int i = 0; i < 3; i++)
      ones[i] = z->loops[i] == l ? ir_add(mins[i], ir_i64(ctx, 1)) : mins[i];
    te_expr *at1 = ir_substitute(ctx, e, 3, vars, ones);
    if (!at1 || !(stride[r] = ir_simplify(z->an, ir_sub(at1, *origin))))
      return false;
    if (uses_of(z, stride[r]))
      return false;
    model = ir_add(model, ir_mul(stride[r], ir_sub(IR_FOR_VAR(l), IR_FOR_MIN(l))));
  }
  int64_t d;
  te_expr *diff = ir_simplify(z->an, ir_sub(e, model));
  return diff && ir_is_const_int(diff, &d) && d == 0;
}

static bool target_has_mma(const te_target *tg) {
  return !tg /* te_lower_text: the text shows the call */ ||
         (tg->kind == TG_CUDA && tg->gpu_arch >= 80);
}

/* Assigns the roles from the loops each operand's index uses. */
static bool mz_roles(mz *z, int uc, int ua, int ub) {
  char buf[120];
  for (int i = 0; i < 3; i++) {
    int bit = 1 << i;
    bool c = uc & bit, a = ua & bit, b = ub & bit;
    const char *name = IR_FOR_VAR(z->loops[i])->u.var.name;
    z->role_of[i] = c && a && !b ? MMA_M : c && b && !a ? MMA_N : a && b && !c ? MMA_K : -1;
    if (z->role_of[i] < 0) {
      snprintf(buf, sizeof buf, "loop '%s' is used by%s%s%s", name, c ? " C" : "", a ? " A" : "",
               b ? " B" : "");
      return mz_refuse(z, TE_ERR_SCHEDULE,
                       "each tile loop must be m (used by C and A), n (C and B) or k (A and B): ",
                       buf) != NULL;
    }
    if (z->by_role[z->role_of[i]]) {
      snprintf(buf, sizeof buf, "'%s' and '%s' are both %s",
               IR_FOR_VAR(z->by_role[z->role_of[i]])->u.var.name, name, mma_role[z->role_of[i]]);
      return mz_refuse(z, TE_ERR_SCHEDULE, "the tile needs one m, one n and one k loop: ", buf) !=
             NULL;
    }
    z->by_role[z->role_of[i]] = z->loops[i];
    int64_t ext = 0;
    ir_is_const_int(IR_FOR_EXTENT(z->loops[i]), &ext);
    const int *want = z->sh->extent;
    if (ext != want[z->role_of[i]]) {
      snprintf(buf, sizeof buf,
               "the tile is m%d n%d k%d: loop '%s' (%s) has %lld, the "
               "instruction's %s is %d",
               want[0], want[1], want[2], name, mma_role[z->role_of[i]], (long long)ext,
               mma_role[z->role_of[i]], want[z->role_of[i]]);
      return mz_refuse(z, TE_ERR_SCHEDULE, buf, NULL) != NULL;
    }
  }
  return true;
}

static bool scope_ok(mz *z, const ir_buffer *b) {
  if (b->scope != TE_SCOPE_LOCAL)
    return true;
  return mz_refuse(z, TE_ERR_SCHEDULE,
                   "the operands must be in global or shared memory (a warp reads and writes "
                   "them together); local buffer ",
                   b->name) != NULL;
}

/* The reduction's initialization: the marked loop's copy in the init nest (te puts the loop
   marked at the tile's m into both nests), for (m) for (n) C[c] = value not reading C. It stays
   ordinary code (the warp's lane 0 stores it, gpu_warp.c). */
static bool is_init_nest(ir_stmt *loop) {
  ir_stmt *inner = loop && loop->kind == IR_S_FOR ? IR_FOR_BODY(loop) : NULL;
  ir_stmt *st = inner && inner->kind == IR_S_FOR ? IR_FOR_BODY(inner) : NULL;
  if (!st || st->kind != IR_S_STORE)
    return false;
  te_expr *v = st->exprs[0];
  return v->kind == IR_FLOAT || v->kind == IR_INT; /* the reduction's identity */
}

ir_stmt *lw_tensorize_mma(lw_pass_ctx *p, ir_analyzer *an, te_iter *it, ir_tensor_intrin id,
                          ir_stmt *loop) {
  const mma_shape *sh = id == IR_TENSOR_INTRIN_MMA_M16N8K32 ? &mma_k32 : &mma_k16;
  mz z = {.sh = sh, .p = p, .an = an, .it = it};
  char buf[96];
  if (is_init_nest(loop))
    return loop;
  if (!mz_loops(&z, loop))
    return NULL;
  ir_stmt *body = IR_FOR_BODY(z.loops[2]);
  if (!body || body->kind != IR_S_STORE) {
    snprintf(buf, sizeof buf, "the innermost tile loop's body must be one update %s; it is a ",
             sh->update);
    return mz_refuse(&z, TE_ERR_SCHEDULE, buf, body ? ir_stmt_kind_name[body->kind] : "nothing");
  }
  te_expr *value = body->exprs[0], *cidx = body->exprs[1];
  if (!ir_dtype_eq(value->dtype, sh->acc))
    return mz_refuse(&z, TE_ERR_SCHEDULE,
                     sh->integer ? "the accumulator must be scalar i32, it is "
                                 : "the accumulator must be scalar f32, it is ",
                     te_dtype_str(value->dtype, buf, sizeof buf));
  te_expr *prod = NULL;
  if (value->kind == IR_ADD)
    for (int s = 0; s < 2 && !prod; s++) {
      te_expr *x = value->args[s];
      if (x->kind == IR_LOAD && x->u.buffer == body->u.buffer && x->args[0] == cidx)
        prod = value->args[1 - s];
    }
  if (!prod || prod->kind != IR_MUL)
    return mz_refuse(&z, TE_ERR_SCHEDULE,
                     "the update is not C[c] = C[c] + a * b (a sum of products into its own "
                     "element)",
                     NULL);
  te_expr *la = widened_load(sh, prod->args[0]), *lb = widened_load(sh, prod->args[1]);
  if (!la || !lb)
    return mz_refuse(&z, TE_ERR_SCHEDULE,
                     sh->integer ? "the factors must be s8 or u8 elements widened to i32 "
                                   "(i32(A[..]) * i32(B[..]))"
                                 : "the factors must be f16 or bf16 elements widened to f32 "
                                   "(f32(A[..]) * f32(B[..]))",
                     NULL);
  if (!sh->integer && !ir_dtype_eq(la->dtype, lb->dtype)) {
    char a[16], b[16], m[40];
    snprintf(m, sizeof m, "%s and %s", te_dtype_str(la->dtype, a, sizeof a),
             te_dtype_str(lb->dtype, b, sizeof b));
    return mz_refuse(&z, TE_ERR_SCHEDULE, "A and B must have one dtype (f16 or bf16); they are ",
                     m);
  }
  /* Which factor is A (m by k) and which B (k by n): A's index uses a loop that C uses and B's
     does not, of the tile's m extent (16, where n is 8; the simplifier may have put B first). */
  int uc = uses_of(&z, cidx), u0 = uses_of(&z, la->args[0]), u1 = uses_of(&z, lb->args[0]);
  int64_t e0 = own_extent(&z, u0 & uc & ~u1), e1 = own_extent(&z, u1 & uc & ~u0);
  if (((u1 & uc & ~u0) && !(u0 & uc & ~u1)) ||
      (e0 != sh->extent[MMA_M] && e1 == sh->extent[MMA_M])) {
    te_expr *t = la;
    la = lb, lb = t;
    int tu = u0;
    u0 = u1, u1 = tu;
  }
  if (!mz_roles(&z, uc, u0, u1))
    return NULL;
  if (!scope_ok(&z, body->u.buffer) || !scope_ok(&z, la->u.buffer) || !scope_ok(&z, lb->u.buffer))
    return NULL;
  te_expr *c0, *a0, *b0, *cs[2], *as[2], *bs[2];
  static const int c_roles[2] = {MMA_M, MMA_N}, a_roles[2] = {MMA_M, MMA_K},
                   b_roles[2] = {MMA_K, MMA_N};
  const char *bad = !affine(&z, cidx, c_roles, &c0, cs)          ? "C"
                    : !affine(&z, la->args[0], a_roles, &a0, as) ? "A"
                    : !affine(&z, lb->args[0], b_roles, &b0, bs) ? "B"
                                                                 : NULL;
  if (bad)
    return mz_refuse(&z, TE_ERR_SCHEDULE,
                     "an index is not affine in the tile's loops (origin + m*stride + ...): the "
                     "index of ",
                     bad);
  if (!target_has_mma(p->target)) {
    const te_target *tg = p->target;
    char what[160];
    snprintf(what, sizeof what,
             "%s needs an NVIDIA GPU of sm_80 or newer (target \"cuda -arch=sm_80\" or above); "
             "the target is ",
             sh->ptx);
    snprintf(buf, sizeof buf, "%s", tg->kind == TG_CUDA ? "a CUDA GPU below sm_80" : tg->str);
    return mz_refuse(&z, TE_ERR_TARGET, what, buf);
  }
  te_expr *args[9] = {ir_load(body->u.buffer, value->dtype, c0), cs[0], cs[1],
                      ir_load(la->u.buffer, la->dtype, a0),      as[0], as[1],
                      ir_load(lb->u.buffer, lb->dtype, b0),      bs[0], bs[1]};
  te_expr *call = ir_call(p->ctx, sh->call, value->dtype, 9, args);
  return call ? ir_store(body->u.buffer, call, c0) : NULL;
}
