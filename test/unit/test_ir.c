/* test_ir.c — IR construction, hash-consing, sticky errors, type promotion, printing, the
 * mutator, substitution and the verifier (lib/ir). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/ctx_internal.h"
#include "schedule/sch.h"

static te_ctx *ctx;
static void setup(void) { ctx = te_ctx_new(); }
static void teardown(void) { te_ctx_free(ctx); }
TestSuite(ir, .init = setup, .fini = teardown);

/* The expression's text compared with want; frees the text. */
static void expect_text(te_expr *e, const char *want) {
  cr_assert_not_null(e, "NULL expression (error: %s)", te_last_error(ctx));
  char *s = te_expr_text(e);
  cr_expect_str_eq(s, want);
  te_free(s);
}

static void expect_stmt(ir_stmt *st, const char *want) {
  cr_assert_not_null(st, "NULL statement (error: %s)", te_last_error(ctx));
  char *s = ir_stmt_to_string(st);
  cr_expect_str_eq(s, want);
  te_free(s);
}

static void expect_error(te_expr *e, te_status st, const char *substr) {
  cr_expect_null(e);
  cr_expect_eq(te_last_status(ctx), st, "status %s, want %s (%s)",
               te_status_str(te_last_status(ctx)), te_status_str(st), te_last_error(ctx));
  cr_expect(strstr(te_last_error(ctx), substr) != NULL, "message '%s' lacks '%s'",
            te_last_error(ctx), substr);
  te_clear_error(ctx);
}

/* A tensor built by hand (the schedule module normally makes them). */
static te_tensor *fake_tensor(const char *name, te_dtype t, int ndim) {
  te_tensor *T = ir_alloc(ctx, sizeof *T);
  T->ctx = ctx;
  T->name = name;
  T->dtype = t;
  T->ndim = ndim;
  return T;
}

Test(ir, immediates_and_vars) {
  te_expr *a = te_int(ctx, 5);
  cr_expect(te_dtype_eq(te_expr_dtype(a), TE_I64));
  cr_expect_eq(te_expr_ctx(a), ctx);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "i");
  cr_expect_neq(i, j, "each te_var is a distinct variable");
  cr_expect_lt(i->u.var.id, j->u.var.id);
  cr_expect_eq(i->u.var.kind, IR_VAR_INDEX);
  te_expr *p = te_param(ctx, "alpha", TE_F32);
  cr_expect_eq(p->u.var.kind, IR_VAR_PARAM);
  cr_expect(te_dtype_eq(te_expr_dtype(p), TE_F32));
  cr_expect_eq(te_expr_dtype(NULL).bits, 0);
  cr_expect_null(te_expr_ctx(NULL));
  cr_expect_eq(ir_i64(ctx, 7), te_const(ctx, TE_I64, 7.0));
  cr_expect_eq(ir_int(ctx, TE_I8, 200)->u.i, -56, "immediates wrap to their width");
  cr_expect_eq(ir_int(ctx, TE_U8, -1)->u.i, 255);
  cr_expect_eq(te_last_status(ctx), TE_OK);
}

Test(ir, hash_consing) {
  te_expr *i = te_var(ctx, "i"), *k = te_var(ctx, "k");
  te_expr *a = te_add(te_mul(i, te_int(ctx, 32)), k);
  te_expr *b = te_add(te_mul(i, te_int(ctx, 32)), k);
  cr_expect_eq(a, b);
  cr_expect_neq(a, te_add(k, te_mul(i, te_int(ctx, 32))));
  cr_expect_neq(te_float(ctx, TE_F64, 0.0), te_float(ctx, TE_F64, -0.0), "floats compare by bits");
  cr_expect_eq(te_float(ctx, TE_F32, 1.5), te_float(ctx, TE_F32, 1.5));
  cr_expect_neq((void *)te_float(ctx, TE_F32, 1.5), (void *)te_float(ctx, TE_F64, 1.5));
  cr_expect_neq(ir_int(ctx, TE_I32, 1), ir_i64(ctx, 1));
  /* reductions compare by content */
  te_expr *r = ir_reduce_axis_new(ctx, "r", te_int(ctx, 0), te_int(ctx, 8));
  ir_reduce red = {IR_REDUCER_SUM, NULL, 1, &r, NULL, 0};
  te_expr *s1 = ir_reduce_make(ctx, TE_I64, &red, 1, &r);
  te_expr *s2 = ir_reduce_make(ctx, TE_I64, &red, 1, &r);
  cr_expect_eq(s1, s2);
  red.kind = IR_REDUCER_MAX;
  cr_expect_neq(s1, ir_reduce_make(ctx, TE_I64, &red, 1, &r));
}

Test(ir, scratch_arena_layers_over_context) {
  te_expr *i = te_var(ctx, "i");
  te_expr *outside = te_add(i, te_int(ctx, 1));
  ir_scratch_begin(ctx);
  cr_expect(ir_in_scratch(ctx));
  cr_expect_eq(te_add(i, te_int(ctx, 1)), outside, "look-ups fall through to the context");
  te_expr *inside = te_add(i, te_int(ctx, 2));
  cr_expect_eq(te_add(i, te_int(ctx, 2)), inside, "consed within the scratch arena");
  ir_scratch_begin(ctx);
  cr_expect_eq(te_add(i, te_int(ctx, 2)), inside, "nested scratch sees the outer one");
  ir_scratch_end(ctx);
  ir_scratch_end(ctx);
  cr_expect_not(ir_in_scratch(ctx));
  te_expr *again = te_add(i, te_int(ctx, 2));
  cr_expect_not_null(again);
  cr_expect_eq(again->args[0], i);
  cr_expect_eq(te_add(i, te_int(ctx, 2)), again);
}

Test(ir, sticky_errors_keep_the_first_message) {
  te_expr *b = te_lt(te_var(ctx, "i"), te_int(ctx, 3));
  te_expr *f = te_param(ctx, "x", TE_F32);
  te_expr *bad = te_add(f, b);
  expect_error(bad, TE_ERR_TYPE, "te_add: operand types f32 and bool cannot be combined");
  cr_expect_null(te_add(f, b));
  cr_expect_null(te_floordiv(f, f));
  cr_expect_eq(te_last_status(ctx), TE_ERR_TYPE);
  cr_expect(strstr(te_last_error(ctx), "te_add:") != NULL, "first message kept: %s",
            te_last_error(ctx));
  te_clear_error(ctx);
  cr_expect_eq(te_last_status(ctx), TE_OK);
  cr_expect_str_eq(te_last_error(ctx), "");
  /* a NULL operand with nothing recorded: TE_ERR_INVALID_ARG naming it, then it propagates */
  cr_expect_null(te_mul(te_add(NULL, f), te_int(ctx, 2)));
  cr_expect_null(te_call(ctx, "exp", 1, (te_expr *[]){NULL}));
  cr_expect_null(te_select(NULL, f, f));
  cr_expect_eq(te_last_status(ctx), TE_ERR_INVALID_ARG);
  cr_expect_str_eq(te_last_error(ctx), "te_add: left operand is NULL");
  cr_expect_str_eq(te_status_str(TE_ERR_SHAPE), "TE_ERR_SHAPE");
}

typedef struct promo_case {
  te_dtype a, b, want;
} promo_case;

Test(ir, promotion_table) {
  const promo_case cases[] = {
      {TE_I32, TE_F32, TE_F32}, {TE_F64, TE_I64, TE_F64}, {TE_I32, TE_I64, TE_I64},
      {TE_I8, TE_I16, TE_I16},  {TE_F32, TE_F64, TE_F64}, {TE_U32, TE_I32, TE_I32},
      {TE_I32, TE_U32, TE_I32}, {TE_U8, TE_I32, TE_I32},  {TE_U64, TE_I32, TE_U64},
      {TE_U8, TE_U16, TE_U16},  {TE_I64, TE_F32, TE_F32},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    te_expr *x = te_param(ctx, "x", cases[c].a), *y = te_param(ctx, "y", cases[c].b);
    te_expr *e = te_add(x, y);
    cr_assert_not_null(e, "case %zu: %s", c, te_last_error(ctx));
    char w[24], g[24];
    cr_expect(te_dtype_eq(te_expr_dtype(e), cases[c].want), "case %zu: got %s want %s", c,
              te_dtype_str(te_expr_dtype(e), g, sizeof g),
              te_dtype_str(cases[c].want, w, sizeof w));
    cr_expect(te_dtype_eq(te_expr_dtype(te_add(y, x)), cases[c].want), "case %zu commuted", c);
  }
  /* immediates take the other operand's type */
  te_expr *xf = te_param(ctx, "x", TE_F32), *xi = te_param(ctx, "n", TE_I32);
  cr_expect(te_dtype_eq(te_expr_dtype(te_mul(xf, te_int(ctx, 2))), TE_F32));
  cr_expect(te_dtype_eq(te_expr_dtype(te_add(xi, te_int(ctx, 1))), TE_I32));
  cr_expect(te_dtype_eq(te_expr_dtype(te_add(xf, te_float(ctx, TE_F64, 0.5))), TE_F32));
  cr_expect(te_dtype_eq(te_expr_dtype(te_add(xi, te_float(ctx, TE_F64, 0.5))), TE_F64),
            "a float immediate does not become an int");
  cr_expect(te_dtype_eq(te_expr_dtype(te_lt(xi, te_int(ctx, 1))), TE_BOOL));
  expect_text(te_add(xi, te_int(ctx, 1)), "n + i32(1)");
  expect_text(te_mul(xf, te_int(ctx, 2)), "x*2.0f");
  expect_text(te_div(xf, te_param(ctx, "y", TE_F64)), "f64(x)/y");
}

Test(ir, type_errors) {
  te_expr *i = te_var(ctx, "i"), *x = te_param(ctx, "x", TE_F32);
  te_expr *b = te_lt(i, te_int(ctx, 4));
  expect_error(te_div(i, te_int(ctx, 2)), TE_ERR_TYPE, "te_floordiv");
  expect_error(te_floormod(x, x), TE_ERR_TYPE, "te_floormod: needs integer operands");
  expect_error(te_add(b, b), TE_ERR_TYPE, "te_add:");
  expect_error(te_neg(b), TE_ERR_TYPE, "te_neg:");
  expect_error(te_and(b, i), TE_ERR_TYPE, "te_and: operands must be bool (got bool and i64)");
  expect_error(te_not(i), TE_ERR_TYPE, "te_not: operand must be bool (got i64)");
  expect_error(te_select(i, x, x), TE_ERR_TYPE, "te_select: condition must be bool (got i64)");
  expect_error(te_select(b, x, b), TE_ERR_TYPE, "te_select:");
  expect_error(te_call(ctx, "exp", 1, &i), TE_ERR_TYPE,
               "te_call: 'exp' needs a float argument (got i64): cast it first");
  expect_error(te_call(ctx, "expo", 1, &x), TE_ERR_NOT_FOUND, "te_call: unknown function 'expo'");
  expect_error(te_call(ctx, "likely", 1, &b), TE_ERR_NOT_FOUND, "'likely'");
  expect_error(te_call(ctx, "pow", 1, &x), TE_ERR_INVALID_ARG,
               "te_call: 'pow' takes 2 arguments (got 1)");
  expect_error(te_call(ctx, "abs", 1, &b), TE_ERR_TYPE, "'abs'");
  expect_error(te_cast(TE_DTYPE(kDLFloat, 8), x), TE_ERR_UNSUPPORTED, "te_cast: dtype f8");
  expect_error(te_cast(TE_DTYPE(kDLBfloat, 32), x), TE_ERR_UNSUPPORTED, "dtype(4,32)");
  expect_error(te_float(ctx, TE_I32, 1.0), TE_ERR_TYPE, "te_float: dtype i32");
  expect_error(te_const(ctx, TE_I32, 1.5), TE_ERR_INVALID_ARG, "te_const:");
  expect_error(te_var(ctx, "2x"), TE_ERR_INVALID_ARG, "te_var: name '2x' is not a C identifier");
  expect_error(te_var(ctx, NULL), TE_ERR_INVALID_ARG, "te_var:");
  expect_error(te_param(ctx, "h", TE_DTYPE(kDLFloat, 8)), TE_ERR_UNSUPPORTED, "te_param:");
  te_ctx *other = te_ctx_new();
  expect_error(te_add(i, te_var(other, "j")), TE_ERR_INVALID_ARG,
               "te_add: operands belong to different contexts");
  te_ctx_free(other);
}

Test(ir, math_calls) {
  te_expr *x = te_param(ctx, "x", TE_F32), *y = te_param(ctx, "y", TE_F64),
          *n = te_param(ctx, "n", TE_I32);
  expect_text(te_call(ctx, "exp", 1, &x), "exp(x)");
  te_expr *p = te_call(ctx, "pow", 2, (te_expr *[]){x, te_float(ctx, TE_F64, 2.0)});
  cr_expect(te_dtype_eq(te_expr_dtype(p), TE_F32));
  expect_text(p, "pow(x, 2.0f)");
  te_expr *q = te_call(ctx, "pow", 2, (te_expr *[]){x, y});
  cr_expect(te_dtype_eq(te_expr_dtype(q), TE_F64));
  expect_text(te_call(ctx, "fma", 3, (te_expr *[]){x, x, x}), "fma(x, x, x)");
  expect_text(te_call(ctx, "abs", 1, &n), "abs(n)");
  expect_text(te_call(ctx, "sqrt", 1, (te_expr *[]){te_cast(TE_F32, n)}), "sqrt(f32(n))");
}

Test(ir, print_expressions) {
  te_expr *io = ir_var_new(ctx, "i.o", TE_I64, IR_VAR_INDEX),
          *ii = ir_var_new(ctx, "i.i", TE_I64, IR_VAR_INDEX);
  te_expr *k = te_var(ctx, "k"), *x = te_param(ctx, "x", TE_F32);
  expect_text(te_add(te_mul(te_add(te_mul(io, te_int(ctx, 32)), ii), te_int(ctx, 1024)), k),
              "(i.o*32 + i.i)*1024 + k");
  expect_text(te_sub(k, te_sub(k, te_int(ctx, 1))), "k - (k - 1)");
  expect_text(te_sub(te_sub(k, te_int(ctx, 1)), k), "k - 1 - k");
  expect_text(te_floordiv(te_add(k, te_int(ctx, 3)), te_int(ctx, 4)), "(k + 3)//4");
  expect_text(te_floormod(k, te_int(ctx, -4)), "k%-4");
  expect_text(te_or(te_and(te_lt(k, io), te_ge(ii, k)), te_not(te_eq(k, io))),
              "k < i.o && i.i >= k || !(k == i.o)");
  expect_text(te_and(te_or(te_lt(k, io), te_ne(ii, k)), te_lt(k, ii)),
              "(k < i.o || i.i != k) && k < i.i");
  expect_text(te_min(k, te_max(io, te_int(ctx, 0))), "min(k, max(i.o, 0))");
  expect_text(te_select(te_gt(k, io), x, te_float(ctx, TE_F32, 0.25)), "select(k > i.o, x, 0.25f)");
  expect_text(te_cast(TE_F32, k), "f32(k)");
  expect_text(te_float(ctx, TE_F64, 1.5), "1.5");
  expect_text(te_float(ctx, TE_F32, 0.1), "0.1f");
  expect_text(te_float(ctx, TE_F32, 3.0), "3.0f");
  expect_text(te_float(ctx, TE_F64, 1e20), "1e+20");
  expect_text(te_const(ctx, TE_BOOL, 1), "true");
  expect_text(te_const(ctx, TE_U8, 7), "u8(7)");
  expect_text(te_neg(k), "0 - k");
  expect_text(te_neg(x), "-1.0f*x");
  expect_text(ir_binary(IR_TRUNCDIV, k, te_int(ctx, 2)), "tdiv(k, 2)");
  expect_text(ir_ramp(k, te_int(ctx, 1), 16), "ramp(k, 1, 16)");
  expect_text(ir_broadcast(x, 16), "x16(x)");
  te_expr *t = te_var(ctx, "t");
  expect_text(ir_let(t, te_add(k, te_int(ctx, 1)), te_mul(t, t)), "(let t = k + 1 in t*t)");
  te_tensor *A = fake_tensor("A", TE_F32, 2);
  expect_text(te_mul(ir_access(A, 2, (te_expr *[]){k, io}), x), "A[k, i.o]*x");
  ir_buffer *B = ir_buffer_new(ctx, "B", TE_F32, 1, &k, TE_SCOPE_GLOBAL, NULL, 0);
  expect_text(ir_load(B, TE_F32, te_add(k, te_int(ctx, 1))), "B[k + 1]");
  te_expr *r = ir_reduce_axis_new(ctx, "r", te_int(ctx, 0), te_int(ctx, 8));
  te_expr *l = ir_reduce_axis_new(ctx, "l", te_int(ctx, 0), te_int(ctx, 8));
  te_expr *axes[2] = {r, l};
  ir_reduce red = {IR_REDUCER_SUM, NULL, 2, axes, NULL, 0};
  expect_text(ir_reduce_make(ctx, TE_I64, &red, 1, (te_expr *[]){te_mul(r, l)}),
              "sum(r*l, axes=[r, l])");
  red.naxes = 1;
  red.cond = te_lt(r, k);
  red.kind = IR_REDUCER_MAX;
  expect_text(ir_reduce_make(ctx, TE_I64, &red, 1, &r), "max(r, axes=[r], where=r < k)");
  /* two variables named k in one unit */
  te_expr *k2 = te_var(ctx, "k");
  expect_text(te_add(te_add(k2, k), k2), "k + k_1 + k");
}

Test(ir, print_statements) {
  te_expr *io = ir_var_new(ctx, "i.o", TE_I64, IR_VAR_INDEX),
          *ii = ir_var_new(ctx, "i.i", TE_I64, IR_VAR_INDEX);
  te_expr *n = te_var(ctx, "n"), *x = te_param(ctx, "x", TE_F32);
  te_expr *zero = te_int(ctx, 0);
  ir_buffer *C = ir_buffer_new(ctx, "C", TE_F32, 1, &n, TE_SCOPE_GLOBAL, NULL, 0);
  te_expr *idx = te_add(te_mul(io, te_int(ctx, 32)), ii);
  ir_stmt *store = ir_store(C, te_add(ir_load(C, TE_F32, idx), x), idx);
  ir_stmt *inner =
      ir_for(ii, zero, te_int(ctx, 32), IR_FOR_UNROLLED, 0, ir_if(te_lt(idx, n), store, NULL));
  ir_stmt *outer = ir_for(io, zero, te_int(ctx, 4), IR_FOR_PARALLEL, 0, inner);
  expect_stmt(outer, "for (i.o, 0, 4) parallel {\n"
                     "  for (i.i, 0, 32) unrolled {\n"
                     "    if (i.o*32 + i.i < n) {\n"
                     "      C[i.o*32 + i.i] = C[i.o*32 + i.i] + x\n"
                     "    }\n"
                     "  }\n"
                     "}\n");
  te_tensor *T = fake_tensor("T", TE_F32, 2);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  ir_stmt *prov = ir_provide(T, x, 2, (te_expr *[]){i, j});
  ir_stmt *loops = ir_for(i, zero, te_int(ctx, 64), IR_FOR_SERIAL, 0,
                          ir_for(j, zero, n, IR_FOR_THREAD, TE_THREAD_X, prov));
  ir_stmt *real =
      ir_realize(T, TE_SCOPE_GLOBAL, 2, (te_expr *[]){zero, zero},
                 (te_expr *[]){te_int(ctx, 64), n}, ir_attr(ctx, "produce", T, zero, loops));
  expect_stmt(real, "realize T([0, 64], [0, n]) {\n"
                    "  produce T {\n"
                    "    for (i, 0, 64) {\n"
                    "      for (j, 0, n) thread(threadIdx.x) {\n"
                    "        T[i, j] = x\n"
                    "      }\n"
                    "    }\n"
                    "  }\n"
                    "}\n");
  te_expr *t = te_var(ctx, "t");
  ir_buffer *L = ir_buffer_new(ctx, "L", TE_F32, 1, &n, TE_SCOPE_LOCAL, NULL, -1);
  ir_stmt *body = ir_seq(
      ctx, 3,
      (ir_stmt *[]){ir_store(L, x, t), ir_if(te_lt(t, n), ir_evaluate(x), ir_barrier(ctx)),
                    ir_assert(te_gt(n, zero), TE_ERR_SHAPE, "n \"must\" be > 0", ir_evaluate(t))});
  ir_stmt *s = ir_let_stmt(t, te_add(n, te_int(ctx, 1)),
                           ir_allocate(ctx, L, te_int(ctx, 4096),
                                       ir_attr(ctx, "pragma_unroll", NULL, te_int(ctx, 4), body)));
  expect_stmt(s, "let t = n + 1\n"
                 "allocate L[f32 * 4096] local {\n"
                 "  // attr pragma_unroll = 4\n"
                 "  {\n"
                 "    L[t] = x\n"
                 "    if (t < n) {\n"
                 "      x\n"
                 "    } else {\n"
                 "      barrier()\n"
                 "    }\n"
                 "    assert(n > 0, \"n \\\"must\\\" be > 0\")\n"
                 "    t\n"
                 "  }\n"
                 "}\n");
}

Test(ir, seq_flattening) {
  ir_stmt *a = ir_evaluate(te_int(ctx, 1)), *b = ir_evaluate(te_int(ctx, 2)),
          *c = ir_evaluate(te_int(ctx, 3));
  cr_expect_null(ir_seq(ctx, 2, (ir_stmt *[]){NULL, NULL}));
  cr_expect_eq(ir_seq(ctx, 2, (ir_stmt *[]){NULL, a}), a);
  ir_stmt *ab = ir_seq2(ctx, a, b);
  cr_expect_eq(ab->kind, IR_S_SEQ);
  ir_stmt *abc = ir_seq(ctx, 3, (ir_stmt *[]){ab, NULL, c});
  cr_expect_eq(abc->nstmts, 3);
  cr_expect_eq(abc->stmts[0], a);
  cr_expect_eq(abc->stmts[2], c);
}

static te_expr *double_ints(ir_mutator *m, te_expr *e) {
  (void)m;
  return ir_is_const_int(e, NULL) && e->u.i == 7 ? ir_i64(e->ctx, 14) : e;
}

static ir_stmt *drop_evaluate(ir_mutator *m, ir_stmt *s) {
  (void)m;
  (void)s;
  return NULL;
}

Test(ir, mutator_rebuilds_only_on_change) {
  te_expr *i = te_var(ctx, "i"), *k = te_var(ctx, "k");
  te_expr *left = te_mul(i, te_int(ctx, 3));
  te_expr *e = te_add(left, te_add(k, te_int(ctx, 7)));
  ir_mutator m = {0};
  m.ctx = ctx;
  cr_expect_eq(ir_mutate_expr(&m, e), e, "identity mutator returns the same node");
  m.expr[IR_INT] = double_ints;
  te_expr *r = ir_mutate_expr(&m, e);
  cr_expect_neq(r, e);
  cr_expect_eq(r->args[0], left, "untouched subtrees are shared");
  expect_text(r, "i*3 + (k + 14)");
  ir_buffer *B = ir_buffer_new(ctx, "B", TE_I64, 1, &k, TE_SCOPE_GLOBAL, NULL, 0);
  ir_stmt *st = ir_store(B, i, k);
  ir_stmt *loop = ir_for(i, te_int(ctx, 0), k, IR_FOR_SERIAL, 0, ir_seq2(ctx, st, ir_evaluate(e)));
  ir_mutator m2 = {0};
  m2.ctx = ctx;
  cr_expect_eq(ir_mutate_stmt(&m2, loop), loop);
  m2.stmt[IR_S_EVALUATE] = drop_evaluate;
  ir_stmt *r2 = ir_mutate_stmt(&m2, loop);
  cr_assert_not_null(r2);
  cr_expect_eq(IR_FOR_BODY(r2), st, "an emptied statement is dropped from its sequence");
  cr_expect_eq(te_last_status(ctx), TE_OK);
}

Test(ir, substitution) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *n = te_var(ctx, "n");
  te_expr *e = te_add(te_mul(i, n), te_mul(i, n));
  te_expr *r = ir_substitute(ctx, e, 1, &i, (te_expr *[]){te_add(j, te_int(ctx, 1))});
  expect_text(r, "(j + 1)*n + (j + 1)*n");
  cr_expect(ir_expr_uses(e, i));
  cr_expect_not(ir_expr_uses(r, i));
  cr_expect(ir_expr_uses_any(r, 2, (te_expr *[]){i, j}));
  cr_expect_eq(ir_substitute(ctx, e, 1, &j, &n), e, "no use: same node");
  /* a reduction's condition and axes are substituted too */
  te_expr *k = ir_reduce_axis_new(ctx, "k", te_int(ctx, 0), n);
  te_expr *k2 = ir_reduce_axis_new(ctx, "k", te_int(ctx, 0), n);
  ir_reduce red = {IR_REDUCER_SUM, NULL, 1, &k, te_lt(k, i), 0};
  te_expr *s = ir_reduce_make(ctx, TE_I64, &red, 1, &k);
  te_expr *s2 = ir_substitute(ctx, s, 2, (te_expr *[]){k, i}, (te_expr *[]){k2, j});
  cr_expect_eq(s2->u.reduce->axes[0], k2);
  expect_text(s2, "sum(k, axes=[k], where=k < j)");
  ir_buffer *B = ir_buffer_new(ctx, "B", TE_I64, 1, &n, TE_SCOPE_GLOBAL, NULL, 0);
  ir_stmt *st = ir_store(B, e, i);
  cr_expect(ir_stmt_uses(st, n));
  ir_stmt *st2 = ir_substitute_stmt(ctx, st, 1, &i, &j);
  cr_expect_not(ir_stmt_uses(st2, i));
  cr_expect(ir_stmt_uses(st2, j));
}

Test(ir, verifier) {
  te_expr *i = te_var(ctx, "i"), *n = te_var(ctx, "n"), *zero = te_int(ctx, 0);
  ir_buffer *B = ir_buffer_new(ctx, "B", TE_I64, 1, &n, TE_SCOPE_GLOBAL, NULL, 0);
  ir_stmt *ok = ir_for(i, zero, n, IR_FOR_SERIAL, 0, ir_store(B, te_add(i, n), i));
  cr_expect_eq(ir_verify_stmt(ctx, ok, "test", true), TE_OK, "%s", te_last_error(ctx));
  ir_stmt *twice = ir_for(i, zero, n, IR_FOR_SERIAL, 0, ok);
  cr_expect_eq(ir_verify_stmt(ctx, twice, "split", true), TE_ERR_INTERNAL);
  cr_expect(strstr(te_last_error(ctx),
                   "internal: IR invalid after pass 'split': loop variable bound twice"),
            "%s", te_last_error(ctx));
  te_clear_error(ctx);
  te_expr *k = ir_reduce_axis_new(ctx, "k", zero, n);
  cr_expect_eq(ir_verify_stmt(ctx, ir_store(B, k, i), "p", false), TE_ERR_INTERNAL);
  cr_expect(strstr(te_last_error(ctx), "reduce axis used outside its reduction"), "%s",
            te_last_error(ctx));
  te_clear_error(ctx);
  te_tensor *A = fake_tensor("A", TE_I64, 1);
  ir_stmt *acc = ir_store(B, ir_access(A, 1, &i), i);
  cr_expect_eq(ir_verify_stmt(ctx, acc, "p", false), TE_OK);
  cr_expect_eq(ir_verify_stmt(ctx, acc, "storage_flatten", true), TE_ERR_INTERNAL);
  cr_expect(strstr(te_last_error(ctx), "ACCESS after flattening"), "%s", te_last_error(ctx));
  te_clear_error(ctx);
  /* a node built around the checks (ir_make does no typing) */
  te_expr *bad =
      ir_make(ctx, IR_ADD, TE_I64, 2, (te_expr *[]){i, te_param(ctx, "x", TE_F32)}, NULL);
  cr_expect_eq(ir_verify_stmt(ctx, ir_evaluate(bad), "p", false), TE_ERR_INTERNAL);
  cr_expect(strstr(te_last_error(ctx), "binary operands of different dtypes"), "%s",
            te_last_error(ctx));
}

Test(ir, internal_checks_do_not_abort) {
  te_expr *i = te_var(ctx, "i"), *x = te_param(ctx, "x", TE_F32);
  cr_expect_null(ir_binary(IR_ADD, i, x));
  cr_expect_eq(te_last_status(ctx), TE_ERR_INTERNAL);
  cr_expect(strstr(te_last_error(ctx), "internal: ir_binary"), "%s", te_last_error(ctx));
}

Test(ir, maps_and_strings) {
  ir_map *m = ir_map_new(ctx);
  int keys[100];
  for (int i = 0; i < 100; i++)
    cr_assert(ir_map_put(m, &keys[i], &keys[99 - i]));
  for (int i = 0; i < 100; i++)
    cr_expect_eq(ir_map_get(m, &keys[i]), &keys[99 - i]);
  cr_expect_not(ir_map_has(m, &m));
  ir_str s = {0};
  for (int i = 0; i < 100; i++)
    ir_str_printf(&s, "%d,", i);
  char *t = ir_str_take(&s);
  cr_expect_eq(strlen(t), 290);
  free(t);
  char buf[24];
  cr_expect_str_eq(te_dtype_str(ir_with_lanes(TE_F32, 16), buf, sizeof buf), "f32x16");
  cr_expect_str_eq(te_dtype_str(TE_BOOL, buf, sizeof buf), "bool");
  cr_expect_str_eq(te_dtype_str(TE_U8, buf, sizeof buf), "u8");
  cr_expect(ir_dtype_supported(TE_I8));
  cr_expect(ir_dtype_supported(TE_F16));
  cr_expect(ir_dtype_supported(TE_BF16));
  cr_expect_not(ir_dtype_supported(TE_DTYPE(kDLFloat, 8)));
  cr_expect_not(ir_dtype_supported(TE_DTYPE(kDLBfloat, 32)));
}
