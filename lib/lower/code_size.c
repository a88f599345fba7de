/* code_size.c — the size of a lowered body, as the code a back end will make of it.
 *
 * A tuner must refuse a candidate that would take LLVM minutes before LLVM sees it (nested
 * te_unroll multiplies: 12 x 16 rows of 64-lane vectors is a straight-line block that GVN and
 * the register allocator take a minute on), and the lowered body is the cheapest place where
 * the unrolled size is known: lowering takes milliseconds where LLVM takes seconds. The count
 * is statements after unrolling, loops counted once (their bodies are code once), except what
 * LLVM widens itself:
 *   - a store of a vector counts one per 256 bits it writes (a 64-lane f32 store is 8 AVX2
 *     stores, each with the arithmetic that feeds it);
 *   - an innermost serial loop of constant extent counts its body once per 256 bits of its
 *     stores' elements over the extent: LLVM's loop vectorizer and full unroller turn 14 rows
 *     of `for (i, 0, 40)` scalar stores into 14 x 5 vector blocks, which took 43 s to compile
 *     at 760 statements counted once.
 */
#include "lower.h"

static int64_t store_bits(const ir_stmt *s) {
  te_dtype t = s->exprs[0]->dtype;
  return (int64_t)t.bits * (t.lanes > 0 ? t.lanes : 1);
}

static int64_t per_256(int64_t bits) { return bits > 256 ? (bits + 255) / 256 : 1; }

/* The widest scalar element that s stores at an index using var (what LLVM's vectorizer
   widens along var); 0 when s stores a vector or only at indices without var (a reduction's
   accumulator, which it keeps scalar without fast-math). */
static int64_t widened_bits(const ir_stmt *s, te_expr *var) {
  if (!s)
    return 0;
  if (s->kind == IR_S_STORE)
    return s->exprs[0]->dtype.lanes <= 1 && ir_expr_uses(s->exprs[1], var) ? store_bits(s) : 0;
  int64_t w = 0;
  for (uint32_t i = 0; i < s->nstmts; i++) {
    int64_t b = widened_bits(s->stmts[i], var);
    if (b < 0 || (s->stmts[i] && s->stmts[i]->kind == IR_S_STORE && b == 0))
      return -1; /* a vector store or one along another axis: LLVM leaves the loop alone */
    w = b > w ? b : w;
  }
  return w;
}

/* The size of s; *loops: whether s holds a loop. */
static int64_t size_of(ir_stmt *s, bool *loops) {
  if (!s)
    return 0;
  if (s->kind == IR_S_STORE)
    return per_256(store_bits(s));
  int64_t n = s->kind == IR_S_SEQ ? 0 : 1, inner = 0;
  bool inner_loops = false;
  for (uint32_t i = 0; i < s->nstmts; i++)
    inner += size_of(s->stmts[i], &inner_loops);
  int64_t e, bits;
  if (s->kind == IR_S_FOR && !inner_loops && s->u.loop.kind == IR_FOR_SERIAL &&
      ir_is_const_int(IR_FOR_EXTENT(s), &e) && e > 1 && e < (1 << 20) &&
      (bits = widened_bits(IR_FOR_BODY(s), IR_FOR_VAR(s))) > 0)
    inner *= per_256(bits * e);
  *loops = *loops || inner_loops || s->kind == IR_S_FOR;
  return n + inner;
}

int64_t lw_code_size(ir_stmt *body) {
  bool loops = false;
  return size_of(body, &loops);
}
