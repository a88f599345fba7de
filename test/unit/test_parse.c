/* test_parse.c — the workload language: what te_parse accepts, the canonical text
 * te_workload_text gives for it (before/after pairs), the key, and every error with its status,
 * line:column and message.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schedule/sch.h"

static te_ctx *ctx;

static void setup(void) { ctx = te_ctx_new(); }
static void teardown(void) { te_ctx_free(ctx); }

TestSuite(parse, .init = setup, .fini = teardown);

/* Parses text (which must succeed) and returns its canonical text (te_free it). */
static char *canon(const char *text, int *nout_out, te_tensor ***outs_out) {
  int n;
  te_tensor **o;
  te_status st = te_parse(ctx, text, &n, &o);
  cr_assert_eq(st, TE_OK, "te_parse(%s): %s: %s", text, te_status_str(st), te_last_error(ctx));
  char *t = te_workload_text(n, o);
  cr_assert_not_null(t, "te_workload_text: %s", te_last_error(ctx));
  if (nout_out)
    *nout_out = n;
  if (outs_out)
    *outs_out = o;
  return t;
}

/* text reads as want (the canonical text), and want reads as itself. */
static void expect_canon(const char *text, const char *want) {
  char *t = canon(text, NULL, NULL);
  cr_assert_str_eq(t, want, "for\n%s\ngot\n%s\nwant\n%s", text, t, want);
  te_free(t);
  t = canon(want, NULL, NULL);
  cr_assert_str_eq(t, want, "canonical text is not a fixed point:\n%s\nvs\n%s", want, t);
  te_free(t);
}

static void expect_error(const char *text, te_status st, const char *substr) {
  te_ctx *c = te_ctx_new();
  int n = 7;
  te_tensor **o = (te_tensor **)&n;
  te_status got = te_parse(c, text, &n, &o);
  cr_expect_eq(got, st, "te_parse(%s): got %s (%s), want %s", text, te_status_str(got),
               te_last_error(c), te_status_str(st));
  cr_expect_eq(te_last_status(c), st, "context status for %s", text);
  cr_expect(strstr(te_last_error(c), substr) != NULL, "te_parse(%s): message '%s' lacks '%s'", text,
            te_last_error(c), substr);
  cr_expect(n == 0 && o == NULL, "outputs not cleared on failure");
  te_ctx_free(c);
}

/* ---------------------------------------------------------------- the language */

Test(parse, brief_examples) {
  expect_canon("C[i, j] = sum(A[i, k] * B[k, j], k) where A: f32[M, K], B: f32[K, N], k: [0, K)",
               "C[i, j] = sum(A[i, k]*B[k, j], k)\n"
               "where A: f32[M, K], B: f32[K, N], C: [M, N], k: [0, K)\n");
  expect_canon("P[i, j] = A[i, j] * 2.0; C[i] = max(P[i, r], r) where A: f32[64, N], r: [0, N)",
               "P[i, j] = A[i, j]*2.0f;\nC[i] = max(P[i, r], r)\n"
               "where A: f32[64, N], P: [64, N], C: [64], r: [0, N)\n");
}

Test(parse, outputs_and_shapes) {
  int n;
  te_tensor **o;
  char *t =
      canon("P[i] = A[i] + 1.0f; Q[i] = P[i]*2.0f; R[i] = P[i] - 1.0f where A: f32[8]", &n, &o);
  cr_assert_eq(n, 2); /* the statements nothing reads, in order */
  cr_assert_str_eq(te_tensor_name(o[0]), "Q");
  cr_assert_str_eq(te_tensor_name(o[1]), "R");
  cr_assert_eq(te_tensor_ndim(o[0]), 1);
  cr_assert_eq(te_tensor_dim(o[0], 0)->u.i, 8);
  cr_assert_eq(te_tensor_dtype(o[0]).bits, 32);
  cr_assert(strstr(t, "outputs") == NULL);
  te_free(t);
  t = canon("P[i] = A[i] + 1.0f; Q[i] = P[i]*2.0f where A: f32[8] outputs Q, P", &n, &o);
  cr_assert_eq(n, 2);
  cr_assert_str_eq(te_tensor_name(o[0]), "Q");
  cr_assert_str_eq(te_tensor_name(o[1]), "P");
  cr_assert(strstr(t, "\noutputs Q, P\n") != NULL, "%s", t);
  te_free(t);
  /* an extent comes from the first read indexed by the variable alone */
  expect_canon("T[j, i] = A[i + 1, j]*B[i] where A: f64[N, M], B: f64[K]",
               "T[j, i] = A[i + 1, j]*B[i]\nwhere A: f64[N, M], B: f64[K], T: [M, K]\n");
  /* a declared shape (with or without dtype) wins */
  expect_canon("S[i] = A[i] where A: i32[N], S: i32[N - 1]",
               "S[i] = A[i]\nwhere A: i32[N], S: [N - 1]\n");
  /* 0-d tensors, with or without brackets */
  expect_canon("S = sum(A[k], k) where A: f32[3], k: [0, 3)",
               "S[] = sum(A[k], k)\nwhere A: f32[3], S: [], k: [0, 3)\n");
  expect_canon("T[] = A[] * 2.0 where A: f64[]", "T[] = A[]*2.0\nwhere A: f64[], T: []\n");
}

Test(parse, declarations_in_any_order_placeholders_by_first_use) {
  expect_canon("# a comment\nC[i, j] = sum(A[i, k]*B[k, j], k)  # the product\n"
               "where k: [0, K), B: f32[K, N],\n      A: f32[M, K]\n",
               "C[i, j] = sum(A[i, k]*B[k, j], k)\n"
               "where A: f32[M, K], B: f32[K, N], C: [M, N], k: [0, K)\n");
}

Test(parse, literals) {
  expect_canon("C[i] = A[i] + 2 where A: f32[4]", "C[i] = A[i] + 2.0f\nwhere A: f32[4], C: [4]\n");
  expect_canon("C[i] = f64(A[i]) + 0.1 + 1e20 - 1.5e-7f64 where A: f32[4]",
               "C[i] = f64(A[i]) + 0.1 + 1e+20 - 1.5e-07\nwhere A: f32[4], C: [4]\n");
  expect_canon("C[i] = A[i] * 0.1f + 3f32 where A: f32[4]",
               "C[i] = A[i]*0.1f + 3.0f\nwhere A: f32[4], C: [4]\n");
  expect_canon("C[i] = A[i] + 5i32 - i32(-7) + 0u8 + 2 where A: i32[4]",
               "C[i] = A[i] + i32(5) - i32(-7) + i32(0) + i32(2)\nwhere A: i32[4], C: [4]\n");
  expect_canon(
      "C[i] = u64(A[i]) + u64(18446744073709551615) + 18446744073709551615u64 where A: u8[4]",
      "C[i] = u64(A[i]) + u64(18446744073709551615) + u64(18446744073709551615)\n"
      "where A: u8[4], C: [4]\n");
  expect_canon(
      "C[i] = select(A[i] > 0.0, inf, -inf) + select(true, nan, f64(-0.0)) where A: f64[4]",
      "C[i] = select(A[i] > 0.0, inf, -inf) + select(true, nan, -0.0)\nwhere A: f64[4], C: [4]\n");
  expect_canon("C[i] = max(A[i], f32(-inf)) + f32(inf) where A: f32[4]",
               "C[i] = max(A[i], f32(-inf)) + f32(inf)\nwhere A: f32[4], C: [4]\n");
  expect_canon("C[i] = i - -9223372036854775808 + -5 where A: f32[4], C: [4]",
               "C[i] = i - -9223372036854775808 + -5\nwhere C: [4]\n");
}

/* NaN and the infinities as operands, printed by the IR printer and by te_workload_text (one
   printer core, lib/ir/print_core.c), and read back by te_parse to the same values. */
Test(parse, nonfinite_literals_in_both_printers) {
  const struct {
    te_dtype t;
    double v;
    const char *ir, *text;
  } cases[] = {
      {TE_F64, NAN, "A[i] - nan", "C[i] = A[i] - nan\nwhere A: f64[4], C: [4]\n"},
      {TE_F64, -NAN, "A[i] - nan", "C[i] = A[i] - nan\nwhere A: f64[4], C: [4]\n"},
      {TE_F64, INFINITY, "A[i] - inf", "C[i] = A[i] - inf\nwhere A: f64[4], C: [4]\n"},
      {TE_F64, -INFINITY, "A[i] - -inf", "C[i] = A[i] - -inf\nwhere A: f64[4], C: [4]\n"},
      {TE_F32, NAN, "A[i] - f32(nan)", "C[i] = A[i] - f32(nan)\nwhere A: f32[4], C: [4]\n"},
      {TE_F32, INFINITY, "A[i] - f32(inf)", "C[i] = A[i] - f32(inf)\nwhere A: f32[4], C: [4]\n"},
      {TE_F32, -INFINITY, "A[i] - f32(-inf)", "C[i] = A[i] - f32(-inf)\nwhere A: f32[4], C: [4]\n"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    te_expr *i = te_var(ctx, "i"), *n4 = te_int(ctx, 4);
    te_tensor *A = te_placeholder(ctx, "A", cases[k].t, 1, &n4);
    te_expr *body = te_sub(te_at(A, 1, &i), te_float(ctx, cases[k].t, cases[k].v));
    char *ir = te_expr_text(body);
    cr_expect_str_eq(ir, cases[k].ir);
    te_free(ir);
    te_tensor *C = te_compute(ctx, "C", 1, &n4, &i, body);
    char *text = te_workload_text(1, &C);
    cr_assert_not_null(text, "%s", te_last_error(ctx));
    cr_expect_str_eq(text, cases[k].text);
    /* read back: the same text, and a literal of the same dtype and value */
    int n;
    te_tensor **outs;
    cr_assert_eq(te_parse(ctx, text, &n, &outs), TE_OK, "%s: %s", text, te_last_error(ctx));
    char *again = te_workload_text(n, outs);
    cr_expect_str_eq(again, text);
    te_expr *lit = outs[0]->op->body[0]->args[1];
    cr_assert_eq(lit->kind, IR_FLOAT, "%s", text);
    cr_expect(te_dtype_eq(lit->dtype, cases[k].t), "%s", text);
    if (isnan(cases[k].v))
      cr_expect(isnan(lit->u.f), "%s", text);
    else
      cr_expect_eq(lit->u.f, cases[k].v, "%s", text);
    te_free(again);
    te_free(text);
  }
}

Test(parse, operators_and_parentheses) {
  expect_canon("C[i] = (A[i] - (A[i] - 1.0f)) * (A[i] + 2.0f) / 3.0f where A: f32[4]",
               "C[i] = (A[i] - (A[i] - 1.0f))*(A[i] + 2.0f)/3.0f\nwhere A: f32[4], C: [4]\n");
  expect_canon(
      "C[i] = select(!(i < 2) || i >= 3 && (i == 1) != (i % 2 != 0), i // 2, -(i)) where C: [4]",
      "C[i] = select(!(i < 2) || i >= 3 && (i == 1) != (i%2 != 0), i//2, 0 - i)\nwhere C: [4]\n");
  expect_canon("C[i] = -A[i] where A: f32[4]", "C[i] = -1.0f*A[i]\nwhere A: f32[4], C: [4]\n");
}

Test(parse, calls_casts_min_max) {
  expect_canon("C[i] = exp(A[i]) + sqrt(abs(A[i])) + pow(A[i], 2.0f) + fma(A[i], A[i], 1.0f) + "
               "min(A[i], 0.5f) + max(A[i], A[i]) where A: f32[4]",
               "C[i] = exp(A[i]) + sqrt(abs(A[i])) + pow(A[i], 2.0f) + fma(A[i], A[i], 1.0f) + "
               "min(A[i], 0.5f) + max(A[i], A[i])\nwhere A: f32[4], C: [4]\n");
  expect_canon("C[i] = i32(A[i]) + i32(bool(A[i] > 0.0f)) where A: f32[4]",
               "C[i] = i32(A[i]) + i32(A[i] > 0.0f)\nwhere A: f32[4], C: [4]\n");
  /* element-wise max with a reduce axis as operand: (k) keeps it element-wise */
  expect_canon("C[i] = sum(max(A[i, k], (k)), k) where A: i64[4, 5], k: [0, 5)",
               "C[i] = sum(max(A[i, k], (k)), k)\nwhere A: i64[4, 5], C: [4], k: [0, 5)\n");
}

Test(parse, reductions) {
  expect_canon(
      "C[i] = sum(A[i, k, l], k, l) where A: f32[2, 3, 4], k: [0, 3), l: [0, 4), C: [2]",
      "C[i] = sum(A[i, k, l], k, l)\nwhere A: f32[2, 3, 4], C: [2], k: [0, 3), l: [0, 4)\n");
}

Test(parse, reduction_forms) {
  const char *want =
      "C[i] = prod(A[i, k], k where k <= i)\nwhere A: f32[4, 4], C: [4], k: [0, 4)\n";
  expect_canon("C[i] = prod(A[i, k], k where k <= i) where A: f32[4, 4], k: [0, 4)", want);
  expect_canon("C[i] = prod(A[i, k], axes=[k], where=k <= i) where A: f32[4, 4], k: [0, 4)", want);
  expect_canon("C[i] = min(A[i, k], k) where A: u16[4, 4], k: [0, 4)",
               "C[i] = min(A[i, k], k)\nwhere A: u16[4, 4], C: [4], k: [0, 4)\n");
  /* a reduction with a condition is a REDUCE node with cond */
  te_tensor **o;
  int n;
  char *t = canon("C[i] = sum(A[i, k], k where k <= i) where A: f32[4, 4], k: [0, 4)", &n, &o);
  te_expr *b = o[0]->op->body[0];
  cr_assert_eq(b->kind, IR_REDUCE);
  cr_assert_eq(b->u.reduce->kind, IR_REDUCER_SUM);
  cr_assert_not_null(b->u.reduce->cond);
  te_free(t);
}

Test(parse, ranges) {
  expect_canon("C[] = sum(A[k], k) where A: f32[N], k: [2, 7)",
               "C[] = sum(A[k], k)\nwhere A: f32[N], C: [], k: [2, 2 + 5)\n");
  expect_canon("C[] = sum(A[k], k) where A: f32[N], k: [M, M + N)",
               "C[] = sum(A[k], k)\nwhere A: f32[N], C: [], k: [M, M + N)\n");
  /* two statements share one declaration; a same-named axis of another domain is renamed */
  expect_canon(
      "S[i] = sum(A[i, k], k); T[i] = sum(B[i, k], k) where A: f32[4, 8], B: f32[4, 8], k: [0, 8)",
      "S[i] = sum(A[i, k], k);\nT[i] = sum(B[i, k], k)\n"
      "where A: f32[4, 8], B: f32[4, 8], S: [4], T: [4], k: [0, 8)\n");
}

Test(parse, custom_reducer_and_tuples) {
  const char *argmax = "M[i] = reducer((k, A[i, k]), k)\n"
                       "where A: f32[N, K], M: [N], k: [0, K), reducer: reducer (li: i64, lv: f32) "
                       "(ri: i64, rv: f32) "
                       "= (select(rv > lv, ri, li), max(lv, rv)) identity (-1, f32(-inf))\n";
  expect_canon("M[i] = argmax((i64(k), A[i, k]), k) where A: f32[N, K], k: [0, K), "
               "argmax: reducer (li: i64, lv: f32) (ri: i64, rv: f32) = "
               "(select(rv > lv, ri, li), max(lv, rv)) identity (-1, f32(-inf))",
               argmax);
  int n;
  te_tensor **o;
  char *t = canon(argmax, &n, &o);
  cr_assert_eq(n, 2);
  cr_assert_str_eq(te_tensor_name(o[0]), "M_v0");
  cr_assert_str_eq(te_tensor_name(o[1]), "M_v1");
  cr_assert_eq(te_tensor_dtype(o[0]).code, kDLInt);
  te_free(t);
  expect_canon(
      "S[i] = add(A[i, k], k where A[i, k] > 0.0) where A: f64[3, 3], k: [0, 3), "
      "add: reducer (a: f64) (b: f64) = (a + b) identity (0.0)",
      "S[i] = reducer(A[i, k], k where A[i, k] > 0.0)\n"
      "where A: f64[3, 3], S: [3], k: [0, 3), reducer: reducer (a: f64) (b: f64) = (a + b) "
      "identity (0.0)\n");
  expect_canon(
      "M[i] = (A[i] + 1.0f, A[i] * alpha); D[i] = M_v0[i] - M_v1[i] where A: f32[5], alpha: f32",
      "M[i] = (A[i] + 1.0f, A[i]*alpha);\nD[i] = M_v0[i] - M_v1[i]\n"
      "where A: f32[5], alpha: f32, M: [5], D: [5]\n");
}

Test(parse, names) {
  /* an index variable may share a tensor's name; a size used only in bodies is declared */
  expect_canon("y[x] = x[x]*f32(n) where x: f32[N], n: size",
               "y[x] = x[x]*f32(n)\nwhere x: f32[N], n: size, y: [N]\n");
  /* the names of a statement are its own: the same i in two statements */
  expect_canon("B[i] = A[i]; C[i] = B[i] where A: i8[3]",
               "B[i] = A[i];\nC[i] = B[i]\nwhere A: i8[3], B: [3], C: [3]\n");
}

Test(parse, hash) {
  cr_assert_eq(te_workload_hash(""), 0xcbf29ce484222325ull);
  cr_assert_eq(te_workload_hash(NULL), 0xcbf29ce484222325ull);
  cr_assert_eq(te_workload_hash("a"), 0xaf63dc4c8601ec8cull); /* FNV-1a test vector */
  cr_assert_eq(te_workload_hash("foobar"), 0x85944171f73967e8ull);
  char *a = canon("C[i] = A[i]*2.0f where A: f32[N]", NULL, NULL);
  char *b = canon("C[j]=A[j] * 2.0f where A:f32[N]", NULL, NULL);
  char *c = canon("C[i] = A[i]*3.0f where A: f32[N]", NULL, NULL);
  cr_assert_str_neq(a, b); /* variable names are part of the computation */
  cr_assert_neq(te_workload_hash(a), te_workload_hash(c));
  te_free(a);
  te_free(b);
  te_free(c);
}

/* ---------------------------------------------------------------- errors */

Test(parse, syntax_errors) {
  expect_error("C[i, j] = A[i, j", TE_ERR_PARSE,
               "te_parse: 1:17: expected ']' after the indices, got end of input");
  expect_error("C[i, j] = A[i j]", TE_ERR_PARSE,
               "1:15: expected ']' after the indices, got name 'j'");
  expect_error("", TE_ERR_PARSE, "1:1: expected a statement");
  expect_error("C[i] = A[i] $ 2", TE_ERR_PARSE, "1:13: unexpected character '$'");
  expect_error("C[i] = \x01", TE_ERR_PARSE, "unexpected byte 0x01");
  expect_error("C[i] = (A[i]", TE_ERR_PARSE, "expected ')'");
  expect_error("C[i] = ()", TE_ERR_PARSE, "expected an expression");
  expect_error("C[i] = A[i] B[i]", TE_ERR_PARSE, "1:13: expected ';', 'where' or the end");
  expect_error("C[i] A[i]", TE_ERR_PARSE,
               "1:6: expected '=' after the defined tensor, got name 'A'");
  expect_error("C[i] = A[i]\nwhere A f32[4]", TE_ERR_PARSE,
               "2:9: expected ':' after the declared name");
  expect_error("C[i] = A[i] where A: [0, 4]]", TE_ERR_PARSE, "expected ',', 'outputs' or the end");
  expect_error("C[i] = A[i] where A: foo", TE_ERR_PARSE,
               "expected a dtype, '[', 'size' or 'reducer'");
  expect_error("C[i] = 99999999999999999999999", TE_ERR_PARSE, "is too large");
  expect_error("C[i] = 1.5i32", TE_ERR_PARSE, "has a fraction but an integer suffix");
  expect_error("C[i] = 2xyz", TE_ERR_PARSE, "unknown suffix 'xyz'");
  expect_error("C[i] = 9223372036854775808", TE_ERR_PARSE, "does not fit in i64");
  expect_error("C[where] = 1", TE_ERR_PARSE, "'where' is a keyword");
  expect_error(
      "C[i] = A[i] where A: f32[4], R: reducer (a: f32) (b: f32, c: f32) = (a) identity (0.0f)",
      TE_ERR_PARSE, "1 accumulated but 2 incoming");
  char deep[3000] = "C[] = ";
  memset(deep + 6, '(', 1200);
  strcpy(deep + 1206, "1");
  expect_error(deep, TE_ERR_PARSE, "nested too deeply");
  char *chain = malloc(20000);
  strcpy(chain, "C[] = 1");
  for (int i = 0; i < 1500; i++)
    strcat(chain, " + 1");
  expect_error(chain, TE_ERR_PARSE, "nested too deeply");
  free(chain);
}

Test(parse, name_errors) {
  expect_error("C[i] = A[i] + B[i] where A: f32[N]", TE_ERR_NOT_FOUND, "1:15: unknown tensor 'B'");
  expect_error("C[i] = A[i] * z where A: f32[N]", TE_ERR_NOT_FOUND, "1:15: unknown name 'z'");
  expect_error("C[i] = foo(A[i]) where A: f32[N]", TE_ERR_NOT_FOUND, "1:8: unknown function 'foo'");
  expect_error("C[i] = sum(A[i, k], k) where A: f32[N, N]", TE_ERR_NOT_FOUND, "unknown name 'k'");
  expect_error("C[i] = A[i] where A: f32[N], A: f32[M]", TE_ERR_PARSE,
               "1:30: 'A' is already declared as a tensor at 1:19");
  expect_error("C[i] = A[i]; C[i] = A[i] where A: f32[N]", TE_ERR_PARSE, "'C' is already declared");
  expect_error("C[i, i] = A[i] where A: f32[N]", TE_ERR_PARSE,
               "'i' is already declared as an index variable");
  expect_error("C[N] = A[N] where A: f32[N]", TE_ERR_PARSE,
               "'N' is already declared as a symbolic size");
  expect_error("C[i] = D[i]; D[i] = A[i] where A: f32[N]", TE_ERR_PARSE,
               "1:8: tensor 'D' is read before the statement that defines it");
  expect_error("C[i] = A where A: f32[N]", TE_ERR_PARSE, "'A' is a tensor, not a value");
  expect_error("C[i] = k[i] where k: [0, 4)", TE_ERR_PARSE, "'k' is a reduce axis, not a tensor");
  expect_error("C[i] = A[i] where A: f32[N] outputs Q", TE_ERR_NOT_FOUND, "unknown tensor 'Q'");
  expect_error("C[i] = A[i] where A: f32[k], k: [0, 4)", TE_ERR_PARSE,
               "reduce axis 'k' cannot be used in a shape");
  expect_error("C[i] = A[i] where A: f32[B[0]], B: i64[1]", TE_ERR_PARSE, "cannot read tensor 'B'");
  expect_error("C[i] = A[i] where X: [4], A: f32[4]", TE_ERR_PARSE, "'X' has a shape but no dtype");
  expect_error("M[i] = (A[i], A[i]); D[i] = M[i] where A: f32[4]", TE_ERR_PARSE,
               "'M' has several outputs: read them as M_v0, M_v1");
  expect_error("C[i] = sum(A[i, k], j) where A: f32[4, 4], k: [0, 4)", TE_ERR_NOT_FOUND,
               "'sum' takes reduce axes after its first operand");
  expect_error("C[i] = sum(A[i, k]) where A: f32[4, 4], k: [0, 4)", TE_ERR_PARSE,
               "'sum' needs at least one reduce axis");
  expect_error("C[i] = exp(A[i], k) where A: f32[4, 4], k: [0, 4)", TE_ERR_INVALID_ARG,
               "'exp' takes 1 argument (got 2)");
  expect_error("C[i] = (A[i], A[i]) + 1.0f where A: f32[4]", TE_ERR_PARSE,
               "a tuple is allowed only");
  expect_error(
      "C[i] = A[i] where A: f32[4], exp: reducer (a: f32) (b: f32) = (a + b) identity (0.0f)",
      TE_ERR_PARSE, "reducer 'exp' has the name of a built-in function");
}

Test(parse, shape_and_type_errors) {
  expect_error("C[i] = sum(A[k], k) where A: f32[N], k: [0, N)", TE_ERR_SHAPE,
               "1:3: cannot infer the extent of 'i' in 'C'");
  expect_error("C[i, j] = A[i] where A: f32[4], C: [4]", TE_ERR_SHAPE,
               "tensor 'C' is declared with 1 extents but defined with 2 indices");
  expect_error("C[i] = A[i] where A: f32[N], C: f64[N]", TE_ERR_TYPE,
               "1:30: tensor 'C' is declared f64 but its body is f32");
  expect_error("C[i] = A[i] && 1.0 where A: f32[N]", TE_ERR_TYPE,
               "te_parse: 1:13: te_and: operands must be bool (got f32 and f64)");
  expect_error("C[i] = exp(A[i]) where A: i32[N]", TE_ERR_TYPE,
               "1:8: te_call: 'exp' needs a float argument");
  expect_error("C[i] = A[i, i] where A: f32[N]", TE_ERR_SHAPE,
               "1:8: te_at: tensor 'A' has rank 1 but 2 indices");
  expect_error("C[i] = A[i] where A: f8[N]", TE_ERR_PARSE, "f8");
  expect_error("C[i] = A[i] where A: f32[0]", TE_ERR_SHAPE, "extent 0 must be > 0");
  /* found by fuzzing: te_placeholder checks constants before they are folded */
  expect_error("C[i] = A[i] where A: f32[4, 1 - 12]", TE_ERR_SHAPE,
               "1:31: tensor 'A': extent 1 must be > 0 (got -11)");
  expect_error("C[] = sum(A[k], k) where A: f32[4], k: [0, 2 - 2)", TE_ERR_SHAPE,
               "reduce axis 'k': extent must be > 0 (got 0)");
  expect_error("C[i] = A[i, k] + sum(A[i, k], k) where A: f32[4, 4], k: [0, 4)", TE_ERR_INVALID_ARG,
               "te_compute: tensor 'C': reduce axis 'k' is used outside a reduction over it");
  expect_error("C[i] = sum(A[i, k], k where A[i, k]) where A: f32[4, 4], k: [0, 4)", TE_ERR_TYPE,
               "the where condition of 'sum' must be bool (got f32)");
  expect_error("C[i] = A[i] / 2 where A: i32[4]", TE_ERR_TYPE, "te_div: integer operands");
  expect_error("C[i] = R(A[i, k], k) where A: f32[4, 4], k: [0, 4), "
               "R: reducer (a: f32) (b: f32) = (a + b) identity (0)",
               TE_ERR_TYPE, "te_reducer_new");
}

/* te_parse reports its own outcome (core.h): an earlier failure neither stops a valid parse nor
   hides the parse's own message. */
Test(parse, earlier_errors_do_not_matter) {
  te_ctx *c = te_ctx_new();
  te_tensor *bad = te_placeholder(c, "1x", TE_F32, 0, NULL); /* an earlier failure */
  cr_assert_null(bad);
  int n;
  te_tensor **o;
  cr_assert_eq(te_parse(c, "C[i] = A[i] where A: f32[4]", &n, &o), TE_OK, "%s", te_last_error(c));
  cr_assert_eq(n, 1);
  cr_assert(strstr(te_last_error(c), "te_placeholder") != NULL, "kept: %s", te_last_error(c));
  cr_assert_eq(te_parse(c, "C[i] = A[i", &n, &o), TE_ERR_PARSE);
  cr_assert_eq(te_last_status(c), TE_ERR_PARSE);
  cr_assert(strstr(te_last_error(c), "te_parse: 1:") != NULL, "%s", te_last_error(c));
  te_ctx_free(c);
}

Test(parse, null_arguments) {
  int n;
  te_tensor **o;
  cr_assert_eq(te_parse(NULL, "C[] = 1", &n, &o), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_parse(ctx, NULL, &n, &o), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "te_parse: text is NULL") != NULL);
  te_clear_error(ctx);
  cr_assert_eq(te_parse(ctx, "C[] = 1", NULL, &o), TE_ERR_INVALID_ARG);
  te_clear_error(ctx);
  cr_assert_eq(te_parse(ctx, "C[] = 1", &n, NULL), TE_ERR_INVALID_ARG);
}

Test(parse, workload_inputs) {
  int n, nin, np;
  te_tensor **o, **in;
  te_expr **pa;
  cr_assert_eq(te_parse(ctx,
                        "C[i] = A[i]*alpha + B[i]*beta + f32(n) where B: f32[N], A: f32[N], "
                        "beta: f32, alpha: f32, n: size",
                        &n, &o),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(te_workload_inputs(n, o, &nin, &in, &np, &pa), TE_OK);
  cr_assert_eq(nin, 2);
  cr_assert_str_eq(te_tensor_name(in[0]), "A");
  cr_assert_str_eq(te_tensor_name(in[1]), "B");
  cr_assert_eq(np, 2);
  char *pt = te_expr_text(pa[0]);
  cr_assert_str_eq(pt, "alpha");
  te_free(pt);
  cr_assert_eq(te_expr_dtype(pa[1]).bits, 32);
  cr_assert_eq(te_workload_inputs(n, o, &nin, &in, NULL, NULL), TE_OK);
  cr_assert_eq(te_workload_inputs(n, o, NULL, &in, NULL, NULL), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "te_workload_inputs: nin or ins is NULL") != NULL);
  cr_assert_eq(te_workload_inputs(0, o, &nin, &in, NULL, NULL), TE_ERR_INVALID_ARG);
  cr_assert_eq(nin, 0);
  cr_assert_null(in);
}

Test(parse, workload_text_errors) {
  cr_assert_null(te_workload_text(0, NULL));
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 1, TE_EXPRS(te_int(ctx, 4)));
  cr_assert_null(te_workload_text(0, &A));
  cr_assert_null(te_workload_text(1, &A));
  cr_assert_eq(te_last_status(ctx), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "compute nothing") != NULL, "%s", te_last_error(ctx));
  te_clear_error(ctx);
  cr_assert_null(te_workload_text(2, (te_tensor *const[]){A, NULL}));
  cr_assert(strstr(te_last_error(ctx), "outs[1] is NULL") != NULL, "%s", te_last_error(ctx));
  te_clear_error(ctx);
  te_ctx *c2 = te_ctx_new();
  te_tensor *B = te_placeholder(c2, "B", TE_F32, 1, TE_EXPRS(te_int(c2, 4)));
  cr_assert_null(te_workload_text(2, (te_tensor *const[]){A, B}));
  cr_assert(strstr(te_last_error(ctx), "belongs to another context") != NULL);
  te_ctx_free(c2);
}
