/* test_vectorize.c — the vectorize pass (lib/lower/vectorize.c) on hand-built loops: the vector
 * code it writes (ramps, broadcasts, gathers, masks, per-lane buffers, loops vectorized
 * through) and each refusal, with its status and message, including those the public API
 * cannot reach (a store that every lane would make to one element).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "lower_util.h"

static te_ctx *ctx;

static void setup(void) { ctx = te_ctx_new(); }
static void teardown(void) { te_ctx_free(ctx); }

TestSuite(vectorize_pass, .init = setup, .fini = teardown);

#define E(...) TE_EXPRS(__VA_ARGS__)
#define I(v) ir_i64(ctx, (v))
#define F(v) ir_float(ctx, TE_F32, (v))

#define make_pass(...) lu_make_pass(ctx, __VA_ARGS__)

static te_tensor *vec1(const char *name, int64_t n) {
  return te_placeholder(ctx, name, TE_F32, 1, E(te_int(ctx, n)));
}

static ir_buffer *buf(lw_pass_ctx *p, te_tensor *t) { return ir_map_get(p->tensor_buffers, t); }

static ir_stmt *vfor(te_expr *x, te_expr *min, te_expr *ext, ir_stmt *body) {
  return ir_for(x, min, ext, IR_FOR_VECTORIZED, 0, body);
}

static void assert_text(ir_stmt *s, const char *want) {
  cr_assert_not_null(s, "pass failed: %s", te_last_error(ctx));
  char *got = ir_stmt_to_string(s);
  cr_assert_str_eq(got, want, "got:\n%s\nwant:\n%s", got, want);
  free(got);
}

static void assert_contains(ir_stmt *s, const char *const want[]) {
  cr_assert_not_null(s, "pass failed: %s", te_last_error(ctx));
  char *got = ir_stmt_to_string(s);
  for (int i = 0; want[i]; i++)
    cr_assert(strstr(got, want[i]) != NULL, "expected \"%s\" in:\n%s", want[i], got);
  free(got);
}

static void assert_error(ir_stmt *r, te_status st, const char *const want[]) {
  cr_assert_null(r, "the pass should have failed");
  cr_assert_eq(te_last_status(ctx), st, "status %s: %s", te_status_str(te_last_status(ctx)),
               te_last_error(ctx));
  for (int i = 0; want[i]; i++)
    cr_assert(strstr(te_last_error(ctx), want[i]) != NULL, "expected \"%s\" in \"%s\"", want[i],
              te_last_error(ctx));
}

/* ---------------------------------------------------------------- vector code */

/* for (x, 0, 8) vectorized { C[o*8 + x] = A[x*2] * 3 + B[o] }: a contiguous store, a stride-2
   gather, a broadcast scalar load. */
Test(vectorize_pass, ramps_gathers_broadcasts) {
  te_tensor *a = vec1("A", 16), *b = vec1("B", 4), *c = vec1("C", 32);
  lw_pass_ctx p = make_pass(3, (te_tensor *const[]){a, b, c}, 0, NULL);
  te_expr *o = te_var(ctx, "o"), *x = te_var(ctx, "x");
  te_expr *val = ir_add(ir_mul(ir_load(buf(&p, a), TE_F32, ir_mul(x, I(2))), F(3)),
                        ir_load(buf(&p, b), TE_F32, o));
  ir_stmt *s = ir_for(o, I(0), I(4), 0, 0,
                      vfor(x, I(0), I(8), ir_store(buf(&p, c), val, ir_add(ir_mul(o, I(8)), x))));
  assert_text(lw_vectorize(&p, s), "for (o, 0, 4) {\n"
                                   "  C[ramp(o*8, 1, 8)] = A[ramp(0, 2, 8)]*x8(3.0f) + x8(B[o])\n"
                                   "}\n");
}

/* A tail of symbolic extent at most 16: masked vector code of 16 lanes. */
Test(vectorize_pass, bounded_tail_is_masked) {
  te_expr *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 1, E(n));
  te_expr *o = te_var(ctx, "o"), *x = te_var(ctx, "x");
  te_expr *idx = ir_add(ir_mul(o, I(16)), x);
  te_expr *ext = ir_max(ir_min(ir_sub(n, ir_mul(o, I(16))), I(16)), I(0));
  ir_stmt *s = ir_for(o, I(0), I(3), 0, 0, vfor(x, I(0), ext, ir_store(buf(&p, a), F(1), idx)));
  assert_contains(lw_vectorize(&p, s),
                  (const char *const[]){"// attr vector_mask = ramp(0, 1, 16) < x16(",
                                        "A[ramp(o*16, 1, 16)] = x16(1.0f)", NULL});
}

/* A condition that varies by lane becomes a mask around the then-branch; one that does not
   stays an if. */
Test(vectorize_pass, lane_varying_condition_is_masked) {
  te_tensor *a = vec1("A", 64);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *o = te_var(ctx, "o"), *x = te_var(ctx, "x");
  ir_stmt *st = ir_store(buf(&p, a), F(2), ir_add(ir_mul(o, I(8)), x));
  ir_stmt *inner = ir_if(ir_lt(ir_floormod(x, I(3)), I(1)), st, NULL);
  ir_stmt *s = ir_for(o, I(0), I(8), 0, 0, vfor(x, I(0), I(8), ir_if(ir_lt(o, I(5)), inner, NULL)));
  assert_contains(lw_vectorize(&p, s),
                  (const char *const[]){"if (o < 5)",
                                        "// attr vector_mask = ramp(0, 1, 8)%x8(3) < x8(1)",
                                        "A[ramp(o*8, 1, 8)] = x8(2.0f)", NULL});
}

/* A buffer allocated inside the loop and written at an index that does not vary: one copy per
   lane, interleaved (element i of lane l at i*8 + l). */
Test(vectorize_pass, local_buffer_gets_a_copy_per_lane) {
  te_tensor *a = vec1("A", 8), *c = vec1("C", 8);
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, c}, 0, NULL);
  ir_buffer *t = ir_buffer_new(ctx, "T", TE_F32, 1, E(I(2)), TE_SCOPE_LOCAL, NULL, -1);
  te_expr *x = te_var(ctx, "x");
  ir_stmt *body = ir_seq2(ctx, ir_store(t, ir_load(buf(&p, a), TE_F32, x), I(1)),
                          ir_store(buf(&p, c), ir_load(t, TE_F32, I(1)), x));
  ir_stmt *s = vfor(x, I(0), I(8), ir_allocate(ctx, t, I(2), body));
  assert_text(lw_vectorize(&p, s), "allocate T[f32 * 16] local {\n"
                                   "  T[ramp(8, 1, 8)] = A[ramp(0, 1, 8)]\n"
                                   "  C[ramp(0, 1, 8)] = T[ramp(8, 1, 8)]\n"
                                   "}\n");
}

/* An inner loop whose bounds do not use x is kept; one whose min does runs from 0. */
Test(vectorize_pass, inner_loops_vectorized_through) {
  te_tensor *a = vec1("A", 256), *c = vec1("C", 16);
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, c}, 0, NULL);
  te_expr *x = te_var(ctx, "x"), *k = te_var(ctx, "k"), *y = te_var(ctx, "y");
  ir_buffer *bc = buf(&p, c), *ba = buf(&p, a);
  ir_stmt *acc = ir_store(
      bc, ir_add(ir_load(bc, TE_F32, x), ir_load(ba, TE_F32, ir_add(ir_mul(k, I(16)), x))), x);
  ir_stmt *shifted = ir_store(bc, ir_load(ba, TE_F32, y), x);
  ir_stmt *s =
      vfor(x, I(0), I(16),
           ir_seq2(ctx, ir_for(k, I(0), I(16), 0, 0, acc), ir_for(y, x, I(2), 0, 0, shifted)));
  assert_contains(
      lw_vectorize(&p, s),
      (const char *const[]){"for (k, 0, 16) {",
                            "C[ramp(0, 1, 16)] = C[ramp(0, 1, 16)] + A[ramp(k*16, 1, 16)]",
                            "for (y, 0, 2) {", "C[ramp(0, 1, 16)] = A[ramp(y, 1, 16)]", NULL});
}

/* Two nested vectorized loops: the inner one is vectorized, the outer one becomes unrolled. */
Test(vectorize_pass, nested_vectorized_outer_unrolled) {
  te_tensor *a = vec1("A", 32);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x"), *y = te_var(ctx, "y");
  ir_stmt *s = vfor(y, I(0), I(4),
                    vfor(x, I(0), I(8), ir_store(buf(&p, a), F(1), ir_add(ir_mul(y, I(8)), x))));
  ir_stmt *r = lw_vectorize(&p, s);
  assert_text(r, "for (y, 0, 4) unrolled {\n  A[ramp(y*8, 1, 8)] = x8(1.0f)\n}\n");
}

/* ---------------------------------------------------------------- refusals */

/* C[0] = C[0] + A[x]: every lane would update one element. */
Test(vectorize_pass, store_not_varying_is_an_error) {
  te_tensor *a = vec1("A", 16), *c = vec1("C", 1);
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, c}, 0, NULL);
  te_expr *x = ir_var_new(ctx, "j.i", TE_I64, IR_VAR_INDEX);
  ir_buffer *bc = buf(&p, c);
  ir_stmt *s =
      vfor(x, I(0), I(16),
           ir_store(bc, ir_add(ir_load(bc, TE_F32, I(0)), ir_load(buf(&p, a), TE_F32, x)), I(0)));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"te_vectorize: loop 'j.i': the store to 'C' does not depend "
                                     "on the loop variable; iterations would overwrite each other",
                                     NULL});
}

/* C[0] = C[0] + 1: the value does not vary, but every iteration updates the element. */
Test(vectorize_pass, uniform_update_is_an_error) {
  te_tensor *c = vec1("C", 1);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){c}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  ir_buffer *bc = buf(&p, c);
  ir_stmt *s = vfor(x, I(0), I(4), ir_store(bc, ir_add(ir_load(bc, TE_F32, I(0)), F(1)), I(0)));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"loop 'x': the store to 'C' does not depend", NULL});
}

/* The same value stored to one element by every lane is fine (a scalar store). */
Test(vectorize_pass, uniform_store_is_kept_scalar) {
  te_tensor *c = vec1("C", 1);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){c}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s = vfor(x, I(0), I(4), ir_store(buf(&p, c), F(5), I(0)));
  assert_text(lw_vectorize(&p, s), "C[0] = 5.0f\n");
}

Test(vectorize_pass, symbolic_extent_is_an_error) {
  te_expr *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 1, E(n));
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s = vfor(x, I(0), n, ir_store(buf(&p, a), F(1), x));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"te_vectorize: loop 'x' has no constant extent (split it by "
                                     "a constant first)",
                                     "its extent is n", NULL});
}

Test(vectorize_pass, too_many_lanes_is_an_error) {
  te_tensor *a = vec1("A", 4096);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s = vfor(x, I(0), I(4096), ir_store(buf(&p, a), F(1), x));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"loop 'x' has extent 4096", "limited to 1024 lanes", NULL});
}

/* An inner loop whose extent depends on x without a constant bound. */
Test(vectorize_pass, inner_extent_without_bound_is_an_error) {
  te_expr *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 1, E(n));
  te_expr *x = te_var(ctx, "x"), *y = te_var(ctx, "y");
  ir_stmt *s =
      vfor(x, I(0), I(8), ir_for(y, I(0), ir_add(n, x), 0, 0, ir_store(buf(&p, a), F(1), x)));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"te_vectorize: loop 'x': the extent of the inner loop 'y'",
                                     "no constant upper bound", NULL});
}

/* An inner loop whose extent depends on x with a constant bound runs to it, masked. */
Test(vectorize_pass, inner_extent_with_bound_is_masked) {
  te_tensor *a = vec1("A", 64);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x"), *y = te_var(ctx, "y");
  ir_stmt *s = vfor(x, I(0), I(8),
                    ir_for(y, I(0), ir_add(x, I(1)), 0, 0,
                           ir_store(buf(&p, a), F(1), ir_add(ir_mul(y, I(8)), x))));
  assert_contains(lw_vectorize(&p, s),
                  (const char *const[]){"for (y, 0, 8) {",
                                        "// attr vector_mask = x8(y) < ramp(1, 1, 8)",
                                        "A[ramp(y*8, 1, 8)] = x8(1.0f)", NULL});
}

Test(vectorize_pass, allocation_size_varying_is_an_error) {
  te_tensor *a = vec1("A", 8);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  ir_buffer *t = ir_buffer_new(ctx, "T", TE_F32, 1, E(I(8)), TE_SCOPE_LOCAL, NULL, -1);
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s =
      vfor(x, I(0), I(8), ir_allocate(ctx, t, ir_add(x, I(1)), ir_store(buf(&p, a), F(1), x)));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"te_vectorize: loop 'x': the size of buffer 'T'", NULL});
}

Test(vectorize_pass, varying_assertion_is_an_error) {
  te_tensor *a = vec1("A", 8);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s =
      vfor(x, I(0), I(8),
           ir_assert(ir_lt(x, I(7)), TE_ERR_RUNTIME, "x < 7", ir_store(buf(&p, a), F(1), x)));
  assert_error(lw_vectorize(&p, s), TE_ERR_SCHEDULE,
               (const char *const[]){"an assertion inside it depends on the loop variable", NULL});
}
