/* test_ops_elementwise.c — the element-wise operators of te/ops.h against plain C: binary
 * operators with NumPy broadcasting (ranks 1-3, stretched 1s, symbolic extents, mixed dtypes),
 * relu, bias_add on NCHW and NHWC, unary math through te_call, and casts.
 *
 * Every operator's result y = "t_op" feeds an identity consumer t = te_op_cast(y, dtype(y)), so
 * besides the default and the tiled schedule of the result, the operator's body is also checked
 * inlined into its consumer and computed at the consumer's outer loop.
 */
#include <math.h>

#include "test_ops_util.h"

TestSuite(ops_elementwise, .init = tt_setup, .fini = tt_teardown);

/* Runs y (named "t_op") through the four schedules: as the output (default, tiled), and inside
   the identity consumer t (inlined, computed at t's axis 0). */
static void check_ew(const char *what, te_tensor *y, int nin, te_tensor *const ins[],
                     tt_buf *const bins[], tt_buf *got, const tt_buf *ref) {
  te_tensor *ts[5];
  tt_buf *bs[5];
  for (int i = 0; i < nin; i++)
    ts[i] = ins[i], bs[i] = bins[i];
  ts[nin] = y;
  bs[nin] = got;
  ops_plan p = {0};
  int runs = ops_check(what, y, &p, nin + 1, ts, bs, got, ref, 1);
  te_tensor *t = TT_NN(te_op_cast(tt_ctx, y, te_tensor_dtype(y), "t"));
  ts[nin] = t;
  ops_plan q = {.inline_stages = {"op"}, .at = {{"op", NULL, 0}}};
  for (int kind = OPS_INLINE; kind <= OPS_AT; kind++) {
    tt_note("%s, schedule %s", what, ops_sched_name(kind));
    te_schedule *s = tt_schedule1(t);
    ops_apply(s, t, &q, kind);
    tt_check(s, nin + 1, ts, bs, 0, NULL, NULL, got, ref, 1);
    runs++;
  }
  cr_assert_eq(runs, 4);
}

typedef enum { ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM } binop;

static te_tensor *make_bin(binop op, te_tensor *a, te_tensor *b, const char *name) {
  switch (op) {
  case ADD:
    return te_op_add(tt_ctx, a, b, name);
  case SUB:
    return te_op_sub(tt_ctx, a, b, name);
  case MUL:
    return te_op_mul(tt_ctx, a, b, name);
  case DIV:
    return te_op_div(tt_ctx, a, b, name);
  case MAXIMUM:
    return te_op_maximum(tt_ctx, a, b, name);
  case MINIMUM:
    return te_op_minimum(tt_ctx, a, b, name);
  }
  return NULL;
}

static double apply_bin(binop op, double x, double y) {
  switch (op) {
  case ADD:
    return x + y;
  case SUB:
    return x - y;
  case MUL:
    return x * y;
  case DIV:
    return x / y;
  case MAXIMUM:
    return x > y ? x : y;
  case MINIMUM:
    return x < y ? x : y;
  }
  return 0;
}

/* Flat index into an operand of rank na (shape sa) for the output index idx of rank r. */
static int64_t bcast_flat(int r, const int64_t idx[], int na, const int64_t sa[]) {
  int64_t f = 0;
  for (int d = 0; d < na; d++) {
    int64_t i = idx[r - na + d];
    f = f * sa[d] + (sa[d] == 1 ? 0 : i);
  }
  return f;
}

static void check_bin(binop op, te_dtype ta, int na, const int64_t sa[], te_dtype tb, int nb,
                      const int64_t sb[], te_dtype tout, int r, const int64_t so[]) {
  te_tensor *A = tt_placeholder("a", ta, na, sa), *B = tt_placeholder("b", tb, nb, sb);
  te_tensor *y = TT_NN(make_bin(op, A, B, "t_op"));
  char x1[16], x2[16];
  cr_assert(te_dtype_eq(te_tensor_dtype(y), tout), "dtype %s, expected %s",
            te_dtype_str(te_tensor_dtype(y), x1, sizeof x1), te_dtype_str(tout, x2, sizeof x2));
  cr_assert_eq(te_tensor_ndim(y), r);
  tt_buf *a = tt_alloc(ta, na, sa), *b = tt_alloc(tb, nb, sb);
  tt_buf *got = tt_alloc(tout, r, so), *ref = tt_alloc(tout, r, so);
  ops_fill(2, TT_BUFS(a, b), 101 + (uint64_t)op);
  for (int64_t f = 0; f < ref->numel; f++) {
    int64_t idx[TE_MAX_DIMS], rem = f;
    for (int d = r - 1; d >= 0; d--)
      idx[d] = rem % so[d], rem /= so[d];
    double v =
        apply_bin(op, tt_get(a, bcast_flat(r, idx, na, sa)), tt_get(b, bcast_flat(r, idx, nb, sb)));
    tt_set(ref, f, v);
  }
  char what[64];
  snprintf(what, sizeof what, "binary op %d, rank %d", (int)op, r);
  check_ew(what, y, 2, TT_TENSORS(A, B), TT_BUFS(a, b), got, ref);
}

Test(ops_elementwise, add_sub_broadcast) {
  check_bin(ADD, TE_F32, 3, TT_SHAPE(7, 1, 5), TE_F32, 2, TT_SHAPE(3, 1), TE_F32, 3,
            TT_SHAPE(7, 3, 5));
  check_bin(SUB, TE_F32, 2, TT_SHAPE(4, 6), TE_F32, 1, TT_SHAPE(6), TE_F32, 2, TT_SHAPE(4, 6));
  check_bin(SUB, TE_F64, 1, TT_SHAPE(9), TE_F64, 2, TT_SHAPE(5, 1), TE_F64, 2, TT_SHAPE(5, 9));
}

Test(ops_elementwise, mul_div_broadcast_and_promotion) {
  check_bin(MUL, TE_I32, 3, TT_SHAPE(2, 3, 4), TE_I32, 1, TT_SHAPE(1), TE_I32, 3,
            TT_SHAPE(2, 3, 4));
  check_bin(DIV, TE_F32, 2, TT_SHAPE(5, 7), TE_F32, 2, TT_SHAPE(5, 7), TE_F32, 2, TT_SHAPE(5, 7));
  /* an int meets a float: the int becomes that float */
  check_bin(DIV, TE_I32, 2, TT_SHAPE(3, 8), TE_F64, 1, TT_SHAPE(8), TE_F64, 2, TT_SHAPE(3, 8));
  check_bin(ADD, TE_I16, 1, TT_SHAPE(10), TE_I32, 1, TT_SHAPE(10), TE_I32, 1, TT_SHAPE(10));
}

Test(ops_elementwise, maximum_minimum) {
  check_bin(MAXIMUM, TE_I32, 2, TT_SHAPE(6, 1), TE_I32, 2, TT_SHAPE(1, 7), TE_I32, 2,
            TT_SHAPE(6, 7));
  check_bin(MINIMUM, TE_F32, 3, TT_SHAPE(3, 4, 5), TE_F32, 3, TT_SHAPE(3, 1, 5), TE_F32, 3,
            TT_SHAPE(3, 4, 5));
}

/* [N, M] + [1, M] and [N, M] - [M] with symbolic N, M: one kernel, two sizes. */
Test(ops_elementwise, symbolic_broadcast) {
  te_expr *N = te_var(tt_ctx, "N"), *M = te_var(tt_ctx, "M");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "a", TE_F32, 2, TE_EXPRS(N, M)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "b", TE_F32, 2, TE_EXPRS(te_int(tt_ctx, 1), M)));
  te_tensor *C = TT_NN(te_placeholder(tt_ctx, "c", TE_F32, 1, TE_EXPRS(M)));
  te_tensor *y = TT_NN(te_op_sub(tt_ctx, TT_NN(te_op_add(tt_ctx, A, B, "y_add")), C, "y"));
  cr_assert(te_tensor_dim(y, 0) == N && te_tensor_dim(y, 1) == M);
  for (int kind = OPS_DEFAULT; kind <= OPS_INLINE; kind++) {
    te_schedule *s = tt_schedule1(y);
    ops_apply(s, y, &(ops_plan){.inline_stages = {"add"}}, kind);
    te_module *mod = tt_build(s, "k", 4, TT_TENSORS(A, B, C, y), 0, NULL);
    const int64_t sizes[2][2] = {{3, 7}, {8, 2}};
    for (int c = 0; c < 2; c++) {
      int64_t n = sizes[c][0], m = sizes[c][1];
      tt_note("symbolic broadcast %lldx%lld, schedule %s", (long long)n, (long long)m,
              ops_sched_name(kind));
      tt_buf *a = TT_ALLOC(TE_F32, n, m), *b = TT_ALLOC(TE_F32, 1, m), *cc = TT_ALLOC(TE_F32, m);
      tt_buf *got = TT_ALLOC(TE_F32, n, m), *ref = TT_ALLOC(TE_F32, n, m);
      ops_fill(3, TT_BUFS(a, b, cc), 111);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
          tt_set(ref, i * m + j, tt_get(a, i * m + j) + tt_get(b, j) - tt_get(cc, j));
      tt_call(mod, "k", 4, TT_BUFS(a, b, cc, got), 0, NULL);
      tt_assert_close(got, ref, 1);
    }
  }
}

Test(ops_elementwise, relu) {
  const te_dtype ts[2] = {TE_F32, TE_I32};
  for (int i = 0; i < 2; i++) {
    te_tensor *X = tt_placeholder("x", ts[i], 3, TT_SHAPE(3, 5, 7));
    te_tensor *y = TT_NN(te_op_relu(tt_ctx, X, "t_op"));
    tt_buf *x = TT_ALLOC(ts[i], 3, 5, 7), *got = TT_ALLOC(ts[i], 3, 5, 7),
           *ref = TT_ALLOC(ts[i], 3, 5, 7);
    tt_fill(x, 121);
    for (int64_t f = 0; f < ref->numel; f++)
      tt_set(ref, f, fmax(tt_get(x, f), 0));
    check_ew("relu", y, 1, TT_TENSORS(X), TT_BUFS(x), got, ref);
  }
}

/* NCHW conv output + bias[C] (axis 1) and NHWC + bias[C] (axis -1). */
Test(ops_elementwise, bias_add_nchw_nhwc) {
  const int64_t nchw[4] = {2, 5, 3, 7}, nhwc[4] = {2, 3, 7, 5};
  for (int l = 0; l < 2; l++) {
    const int64_t *s = l ? nhwc : nchw;
    int axis = l ? -1 : 1, ax = l ? 3 : 1;
    te_tensor *X = tt_placeholder("x", TE_F32, 4, s),
              *Bs = tt_placeholder("bias", TE_F32, 1, TT_SHAPE(5));
    te_tensor *y = TT_NN(te_op_bias_add(tt_ctx, X, Bs, axis, "t_op"));
    tt_buf *x = tt_alloc(TE_F32, 4, s), *b = TT_ALLOC(TE_F32, 5);
    tt_buf *got = tt_alloc(TE_F32, 4, s), *ref = tt_alloc(TE_F32, 4, s);
    ops_fill(2, TT_BUFS(x, b), 131);
    int64_t inner = 1;
    for (int d = ax + 1; d < 4; d++)
      inner *= s[d];
    for (int64_t f = 0; f < ref->numel; f++)
      tt_set(ref, f, tt_get(x, f) + tt_get(b, (f / inner) % 5));
    check_ew(l ? "bias_add nhwc" : "bias_add nchw", y, 2, TT_TENSORS(X, Bs), TT_BUFS(x, b), got,
             ref);
  }
}

typedef struct unary_case {
  const char *fn;
  double (*ref)(double);
  double lo, hi;
} unary_case;

static double neg(double x) { return -x; }
static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

Test(ops_elementwise, unary_functions) {
  const unary_case cases[] = {{"exp", exp, -3, 3},         {"tanh", tanh, -3, 3},
                              {"sqrt", sqrt, 0.1, 9},      {"log", log, 0.1, 9},
                              {"sigmoid", sigmoid, -4, 4}, {"abs", fabs, -5, 5},
                              {"neg", neg, -5, 5},         {"floor", floor, -5, 5}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    te_tensor *X = tt_placeholder("x", TE_F32, 2, TT_SHAPE(6, 11));
    te_tensor *y = TT_NN(te_op_unary(tt_ctx, X, cases[c].fn, "t_op"));
    tt_buf *x = TT_ALLOC(TE_F32, 6, 11), *got = TT_ALLOC(TE_F32, 6, 11),
           *ref = TT_ALLOC(TE_F32, 6, 11);
    tt_fill_range(x, 141 + c, cases[c].lo, cases[c].hi);
    for (int64_t f = 0; f < ref->numel; f++)
      tt_set(ref, f, cases[c].ref(tt_get(x, f)));
    check_ew(cases[c].fn, y, 1, TT_TENSORS(X), TT_BUFS(x), got, ref);
  }
}

Test(ops_elementwise, unary_integer_abs_neg_and_default_name) {
  te_tensor *X = tt_placeholder("x", TE_I32, 1, TT_SHAPE(13));
  te_tensor *d = TT_NN(te_op_unary(tt_ctx, X, "abs", NULL));
  cr_assert_str_eq(te_tensor_name(d), "abs");
  const char *fns[2] = {"abs", "neg"};
  for (int i = 0; i < 2; i++) {
    te_tensor *y = TT_NN(te_op_unary(tt_ctx, X, fns[i], "t_op"));
    tt_buf *x = TT_ALLOC(TE_I32, 13), *got = TT_ALLOC(TE_I32, 13), *ref = TT_ALLOC(TE_I32, 13);
    tt_fill(x, 151);
    for (int64_t f = 0; f < 13; f++)
      tt_seti(ref, f, i ? -tt_geti(x, f) : llabs(tt_geti(x, f)));
    check_ew(fns[i], y, 1, TT_TENSORS(X), TT_BUFS(x), got, ref);
  }
}

Test(ops_elementwise, casts) {
  te_tensor *X = tt_placeholder("x", TE_F32, 2, TT_SHAPE(4, 9));
  te_tensor *y = TT_NN(te_op_cast(tt_ctx, X, TE_I32, "t_op"));
  cr_assert(te_dtype_eq(te_tensor_dtype(y), TE_I32));
  tt_buf *x = TT_ALLOC(TE_F32, 4, 9), *got = TT_ALLOC(TE_I32, 4, 9), *ref = TT_ALLOC(TE_I32, 4, 9);
  tt_fill_range(x, 161, -50, 50);
  for (int64_t f = 0; f < 36; f++)
    tt_seti(ref, f, (int64_t)tt_get(x, f)); /* truncation */
  check_ew("cast f32->i32", y, 1, TT_TENSORS(X), TT_BUFS(x), got, ref);

  te_tensor *Xi = tt_placeholder("xi", TE_I16, 1, TT_SHAPE(17));
  te_tensor *yd = TT_NN(te_op_cast(tt_ctx, Xi, TE_F64, "t_op"));
  tt_buf *xi = TT_ALLOC(TE_I16, 17), *gd = TT_ALLOC(TE_F64, 17), *rd = TT_ALLOC(TE_F64, 17);
  tt_fill(xi, 162);
  for (int64_t f = 0; f < 17; f++)
    tt_set(rd, f, (double)tt_geti(xi, f));
  check_ew("cast i16->f64", yd, 1, TT_TENSORS(Xi), TT_BUFS(xi), gd, rd);
}
