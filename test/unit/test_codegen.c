/* test_codegen.c — the LLVM CPU back end on hand-built lowered functions.
 *
 * Each test builds an lw_func with the IR constructors (no schedule, no lowering), compiles it
 * with cg_llvm_compile into a module for the host, JITs it, runs it through te_module_call on
 * DLTensors and compares with plain C: serial and parallel loops, scalar parameters, symbolic
 * sizes, allocations on the stack and the heap, integer floor division, casts, math calls, bool
 * buffers, vector loads/stores and gathers, asserts (also inside parallel loops), the module's
 * texts and build times.
 */
#include "test_codegen_util.h"

TestSuite(codegen, .init = cg_setup, .fini = cg_teardown);

/* for (i, 0, n) kind { B[i] = A[i] * 2 + s } over f32[n] with n constant or symbolic */
static lw_func *scale_func(const char *name, ir_for_kind kind, te_expr *n) {
  te_expr *shape[1] = {n};
  ir_buffer *A = arg_buf("A", TE_F32, 1, shape, 0), *B = arg_buf("B", TE_F32, 1, shape, 1);
  te_expr *s = ir_var_new(ctx, "s", TE_F32, IR_VAR_PARAM);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *v = ir_add(ir_mul(ir_load(A, TE_F32, i), F32(2.0)), s);
  ir_stmt *body = ir_for(i, I64(0), n, kind, TE_THREAD_X, ir_store(B, v, i));
  lw_arg args[3] = {buf_arg(A), buf_arg(B), scalar_arg(s)};
  return make_func(name, 3, args, body);
}

static void run_scale(te_module *m, const char *name, int64_t n, float s) {
  float *a = malloc(sizeof(float) * (size_t)n), *b = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    a[i] = (float)i * 0.5f - 3.0f, b[i] = NAN;
  tens ta, tb;
  tens_init(&ta, a, TE_F32, 1, &n);
  tens_init(&tb, b, TE_F32, 1, &n);
  DLTensor *ts[2] = {&ta.t, &tb.t};
  const void *ss[1] = {&s};
  te_status st = te_module_call(m, name, 2, ts, 1, ss);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(ctx));
  for (int64_t i = 0; i < n; i++)
    cr_assert_float_eq(b[i], a[i] * 2 + s, 1e-6, "i=%ld", (long)i);
  free(a);
  free(b);
}

Test(codegen, serial_loop_with_scalar) {
  te_module *m = compile(scale_func("scale", IR_FOR_SERIAL, I64(16)));
  run_scale(m, "scale", 16, 1.25f);
  cr_assert_not_null(te_module_entry(m, "scale"));
  te_build_times bt = te_module_build_times(m);
  cr_expect(bt.llvm_s > 0 && bt.jit_s > 0);
}

Test(codegen, parallel_loop) {
  te_rt_set_num_threads(2);
  te_module *m = compile(scale_func("pscale", IR_FOR_PARALLEL, I64(1001)));
  run_scale(m, "pscale", 1001, -0.5f);
  cr_expect(strstr(te_module_source(m, "ll"), "te_rt_parallel_for") != NULL);
  te_rt_set_num_threads(1);
  run_scale(m, "pscale", 1001, 3.0f);
  te_rt_set_num_threads(0);
}

Test(codegen, symbolic_size_several_sizes) {
  te_expr *n = ir_var_new(ctx, "n", TE_I64, IR_VAR_INDEX);
  lw_func *f = scale_func("sym", IR_FOR_SERIAL, n);
  add_size(f, n, 0, 0);
  te_module *m = compile(f);
  run_scale(m, "sym", 1, 2.0f);
  run_scale(m, "sym", 37, 2.0f);
  run_scale(m, "sym", 1000, -1.0f);
}

Test(codegen, parallel_2d_symbolic) {
  /* for (i, 0, R) parallel { for (j, 0, W) { B[i*W + j] = A[i*W + j] + s } } */
  te_expr *W = ir_var_new(ctx, "W", TE_I64, IR_VAR_INDEX);
  te_expr *shape[2] = {I64(64), W};
  ir_buffer *A = arg_buf("A", TE_F64, 2, shape, 0), *B = arg_buf("B", TE_F64, 2, shape, 1);
  te_expr *s = ir_var_new(ctx, "s", TE_F64, IR_VAR_PARAM);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX),
          *j = ir_var_new(ctx, "j", TE_I64, IR_VAR_INDEX);
  te_expr *idx = ir_add(ir_mul(i, W), j);
  ir_stmt *inner = ir_for(j, I64(0), W, IR_FOR_SERIAL, TE_THREAD_X,
                          ir_store(B, ir_add(ir_load(A, TE_F64, idx), s), idx));
  ir_stmt *body = ir_for(i, I64(0), I64(64), IR_FOR_PARALLEL, TE_THREAD_X, inner);
  lw_arg args[3] = {buf_arg(A), buf_arg(B), scalar_arg(s)};
  lw_func *f = make_func("p2d", 3, args, body);
  add_size(f, W, 0, 1);
  te_module *m = compile(f);
  te_rt_set_num_threads(2);
  for (int64_t w = 1; w <= 33; w += 16) {
    int64_t sh[2] = {64, w};
    double *a = malloc(sizeof(double) * (size_t)(64 * w)),
           *b = malloc(sizeof(double) * (size_t)(64 * w));
    for (int64_t k = 0; k < 64 * w; k++)
      a[k] = (double)k, b[k] = -1;
    tens ta, tb;
    tens_init(&ta, a, TE_F64, 2, sh);
    tens_init(&tb, b, TE_F64, 2, sh);
    DLTensor *ts[2] = {&ta.t, &tb.t};
    double sv = 0.25;
    const void *ss[1] = {&sv};
    cr_assert_eq(te_module_call(m, "p2d", 2, ts, 1, ss), TE_OK, "%s", te_last_error(ctx));
    for (int64_t k = 0; k < 64 * w; k++)
      cr_assert_eq(b[k], a[k] + 0.25);
    free(a);
    free(b);
  }
  te_rt_set_num_threads(0);
}

/* allocate T[count] { for i: T[i] = A[i] * 3 }; for i: B[i] = T[i] + 1; T on the heap (a call
   of te_rt_alloc in the module) when heap, else on the stack */
static void check_allocate(te_expr *count, int64_t n, bool symbolic, bool heap) {
  te_expr *nv = symbolic ? ir_var_new(ctx, "n", TE_I64, IR_VAR_INDEX) : I64(n);
  if (symbolic)
    count = nv;
  te_expr *shape[1] = {nv};
  ir_buffer *A = arg_buf("A", TE_I32, 1, shape, 0), *B = arg_buf("B", TE_I32, 1, shape, 1);
  ir_buffer *T = ir_buffer_new(ctx, "T", TE_I32, 1, shape, TE_SCOPE_GLOBAL, NULL, -1);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX),
          *k = ir_var_new(ctx, "k", TE_I64, IR_VAR_INDEX);
  ir_stmt *l1 = ir_for(i, I64(0), nv, IR_FOR_SERIAL, TE_THREAD_X,
                       ir_store(T, ir_mul(ir_load(A, TE_I32, i), ir_int(ctx, TE_I32, 3)), i));
  ir_stmt *l2 = ir_for(k, I64(0), nv, IR_FOR_PARALLEL, TE_THREAD_X,
                       ir_store(B, ir_add(ir_load(T, TE_I32, k), ir_int(ctx, TE_I32, 1)), k));
  ir_stmt *body = ir_allocate(ctx, T, count, ir_seq2(ctx, l1, l2));
  lw_arg args[2] = {buf_arg(A), buf_arg(B)};
  lw_func *f = make_func("alloc", 2, args, body);
  if (symbolic)
    add_size(f, nv, 0, 0);
  te_module *m = compile(f);
  const char *ll = te_module_source(m, "ll");
  cr_assert_not_null(ll);
  cr_expect_eq(strstr(ll, "te_rt_alloc") != NULL, heap, "T of %lld i32 %s", (long long)n,
               heap ? "should be on the heap" : "should be an alloca");
  int32_t *a = malloc(sizeof(int32_t) * (size_t)n), *b = malloc(sizeof(int32_t) * (size_t)n);
  for (int64_t x = 0; x < n; x++)
    a[x] = (int32_t)(x * 7 - 100), b[x] = 0;
  tens ta, tb;
  tens_init(&ta, a, TE_I32, 1, &n);
  tens_init(&tb, b, TE_I32, 1, &n);
  DLTensor *ts[2] = {&ta.t, &tb.t};
  cr_assert_eq(te_module_call(m, "alloc", 2, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  for (int64_t x = 0; x < n; x++)
    cr_assert_eq(b[x], a[x] * 3 + 1);
  free(a);
  free(b);
}

Test(codegen, allocate_stack) { check_allocate(I64(16), 16, false, false); }
/* 32 KiB: a tile a producer computed at its consumer's tile fills (blur's bx per 256 x 32 tile)
   is an alloca, not a malloc per tile */
Test(codegen, allocate_tile_on_the_stack) { check_allocate(I64(8192), 8192, false, false); }
Test(codegen, allocate_heap) { check_allocate(I64(20000), 20000, false, true); }
Test(codegen, allocate_symbolic) { check_allocate(NULL, 777, true, true); }

static int32_t floordiv_ref(int32_t a, int32_t b) {
  int32_t q = a / b;
  return (a % b != 0 && ((a % b < 0) != (b < 0))) ? q - 1 : q;
}
static int32_t floormod_ref(int32_t a, int32_t b) { return a - floordiv_ref(a, b) * b; }

Test(codegen, integer_division_and_casts) {
  /* out[k*n + i] for k: floordiv, floormod, truncdiv, truncmod, min, max, cast(i8) */
  int64_t n = 12;
  te_expr *s1[1] = {I64(n)}, *s2[1] = {I64(7 * n)};
  ir_buffer *X = arg_buf("X", TE_I32, 1, s1, 0), *O = arg_buf("O", TE_I32, 1, s2, 1);
  te_expr *d = ir_var_new(ctx, "d", TE_I32, IR_VAR_PARAM);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *x = ir_load(X, TE_I32, i);
  te_expr *vals[7] = {ir_floordiv(x, d),
                      ir_floormod(x, d),
                      ir_binary(IR_TRUNCDIV, x, d),
                      ir_binary(IR_TRUNCMOD, x, d),
                      ir_min(x, d),
                      ir_max(x, d),
                      ir_cast(TE_I32, ir_cast(TE_I8, x))};
  ir_stmt *stores[7];
  for (int k = 0; k < 7; k++)
    stores[k] = ir_store(O, vals[k], ir_add(I64(k * n), i));
  ir_stmt *body = ir_for(i, I64(0), I64(n), IR_FOR_SERIAL, TE_THREAD_X, ir_seq(ctx, 7, stores));
  lw_arg args[3] = {buf_arg(X), buf_arg(O), scalar_arg(d)};
  te_module *m = compile(make_func("idiv", 3, args, body));
  int32_t xs[12] = {-7, -6, -5, -1, 0, 1, 5, 6, 7, 300, -300, 129};
  int32_t out[84];
  tens tx, to;
  int64_t on = 7 * n;
  tens_init(&tx, xs, TE_I32, 1, &n);
  tens_init(&to, out, TE_I32, 1, &on);
  DLTensor *ts[2] = {&tx.t, &to.t};
  for (int32_t dv = -3; dv <= 3; dv += 6) {
    const void *ss[1] = {&dv};
    cr_assert_eq(te_module_call(m, "idiv", 2, ts, 1, ss), TE_OK, "%s", te_last_error(ctx));
    for (int k = 0; k < n; k++) {
      int32_t a = xs[k];
      cr_expect_eq(out[0 * n + k], floordiv_ref(a, dv), "floordiv(%d, %d)", a, dv);
      cr_expect_eq(out[1 * n + k], floormod_ref(a, dv), "floormod(%d, %d)", a, dv);
      cr_expect_eq(out[2 * n + k], a / dv);
      cr_expect_eq(out[3 * n + k], a % dv);
      cr_expect_eq(out[4 * n + k], a < dv ? a : dv);
      cr_expect_eq(out[5 * n + k], a > dv ? a : dv);
      cr_expect_eq(out[6 * n + k], (int32_t)(int8_t)a);
    }
  }
}

typedef double (*ref_fn)(double);
static double sigmoid_ref(double x) { return 1 / (1 + exp(-x)); }
static double rsqrt_ref(double x) { return 1 / sqrt(fabs(x) + 1); }
static double logp_ref(double x) { return log(fabs(x) + 1); }
static double sqrta_ref(double x) { return sqrt(fabs(x)); }
static double pow_ref(double x) { return pow(fabs(x), 1.5); }
static double fma_ref(double x) { return x * 2 + 1; }
static double trunc_i_ref(double x) { return (double)(int32_t)x; }
static double sel_ref(double x) { return x < 0 ? -x : x * 2; }
static double min_ref(double x) { return x < 0.5 ? x : 0.5; }

static te_expr *call1(ir_intrin id, te_expr *x) { return ir_call(ctx, id, x->dtype, 1, &x); }

Test(codegen, float_math_calls) {
  enum { N = 9, NF = 20 };
  te_expr *s1[1] = {I64(N)}, *s2[1] = {I64(NF * N)};
  ir_buffer *X = arg_buf("X", TE_F32, 1, s1, 0), *O = arg_buf("O", TE_F32, 1, s2, 1);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *x = ir_load(X, TE_F32, i);
  te_expr *ax = call1(IR_INTRIN_ABS, x), *ax1 = ir_add(ax, F32(1));
  te_expr *pa[2] = {ax, F32(1.5)}, *fa[3] = {x, F32(2), F32(1)};
  te_expr *vals[NF] = {call1(IR_INTRIN_EXP, x),
                       call1(IR_INTRIN_LOG, ax1),
                       call1(IR_INTRIN_SQRT, ax),
                       call1(IR_INTRIN_RSQRT, ax1),
                       call1(IR_INTRIN_SIN, x),
                       call1(IR_INTRIN_COS, x),
                       call1(IR_INTRIN_TAN, x),
                       call1(IR_INTRIN_TANH, x),
                       call1(IR_INTRIN_SIGMOID, x),
                       call1(IR_INTRIN_ERF, x),
                       call1(IR_INTRIN_FLOOR, x),
                       call1(IR_INTRIN_CEIL, x),
                       call1(IR_INTRIN_ROUND, x),
                       call1(IR_INTRIN_TRUNC, x),
                       ir_call(ctx, IR_INTRIN_POW, TE_F32, 2, pa),
                       ir_call(ctx, IR_INTRIN_FMA, TE_F32, 3, fa),
                       ax,
                       ir_cast(TE_F32, ir_cast(TE_I32, x)),
                       ir_select(ir_lt(x, F32(0)), ir_sub(F32(0), x), ir_mul(x, F32(2))),
                       ir_min(x, F32(0.5))};
  ref_fn refs[NF] = {exp,     logp_ref,    sqrta_ref, rsqrt_ref,   sin,     cos,    tan,
                     tanh,    sigmoid_ref, erf,       floor,       ceil,    round,  trunc,
                     pow_ref, fma_ref,     fabs,      trunc_i_ref, sel_ref, min_ref};
  ir_stmt *stores[NF];
  for (int k = 0; k < NF; k++) {
    cr_assert_not_null(vals[k], "value %d: %s", k, te_last_error(ctx));
    stores[k] = ir_store(O, vals[k], ir_add(I64(k * N), i));
  }
  ir_stmt *body = ir_for(i, I64(0), I64(N), IR_FOR_SERIAL, TE_THREAD_X, ir_seq(ctx, NF, stores));
  lw_arg args[2] = {buf_arg(X), buf_arg(O)};
  te_module *m = compile(make_func("fmath", 2, args, body));
  float xs[N] = {-2.5f, -1.5f, -0.7f, -0.2f, 0.0f, 0.3f, 0.5f, 1.5f, 2.75f}, out[NF * N];
  int64_t n = N, on = NF * N;
  tens tx, to;
  tens_init(&tx, xs, TE_F32, 1, &n);
  tens_init(&to, out, TE_F32, 1, &on);
  DLTensor *ts[2] = {&tx.t, &to.t};
  cr_assert_eq(te_module_call(m, "fmath", 2, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  for (int k = 0; k < NF; k++)
    for (int j = 0; j < N; j++) {
      double want = refs[k](xs[j]);
      cr_expect(fabs(out[k * N + j] - want) <= 1e-5 * (1 + fabs(want)), "fn %d x=%g: %g vs %g", k,
                xs[j], out[k * N + j], want);
    }
}

Test(codegen, bool_buffers) {
  /* M[i] = X[i] > 0;  Y[i] = select(M[i] && !(X[i] > 10), X[i], 0) */
  int64_t n = 6;
  te_expr *shape[1] = {I64(n)};
  ir_buffer *X = arg_buf("X", TE_I64, 1, shape, 0), *M = arg_buf("M", TE_BOOL, 1, shape, 1);
  ir_buffer *Y = arg_buf("Y", TE_I64, 1, shape, 2);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *x = ir_load(X, TE_I64, i);
  ir_stmt *s1 = ir_store(M, ir_binary(IR_GT, x, I64(0)), i);
  te_expr *c = ir_and(ir_load(M, TE_BOOL, i), ir_not(ir_binary(IR_GT, x, I64(10))));
  ir_stmt *s2 = ir_store(Y, ir_select(c, x, I64(0)), i);
  ir_stmt *body = ir_for(i, I64(0), I64(n), IR_FOR_SERIAL, TE_THREAD_X, ir_seq2(ctx, s1, s2));
  lw_arg args[3] = {buf_arg(X), buf_arg(M), buf_arg(Y)};
  te_module *m = compile(make_func("bools", 3, args, body));
  int64_t xs[6] = {-3, 0, 4, 11, 10, 1}, ys[6];
  uint8_t ms[6];
  DLDataType layouts[3] = {{kDLUInt, 8, 1}, {6 /* kDLBool */, 8, 1}, {kDLUInt, 1, 1}};
  for (int l = 0; l < 3; l++) {
    tens tx, tm, ty;
    tens_init(&tx, xs, TE_I64, 1, &n);
    tens_init(&tm, ms, layouts[l], 1, &n);
    tens_init(&ty, ys, TE_I64, 1, &n);
    memset(ms, 7, sizeof ms);
    DLTensor *ts[3] = {&tx.t, &tm.t, &ty.t};
    cr_assert_eq(te_module_call(m, "bools", 3, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
    for (int k = 0; k < n; k++) {
      cr_expect_eq(ms[k], xs[k] > 0 ? 1 : 0);
      cr_expect_eq(ys[k], xs[k] > 0 && xs[k] <= 10 ? xs[k] : 0);
    }
  }
  tens tx, tm, ty;
  tens_init(&tx, xs, TE_I64, 1, &n);
  tens_init(&tm, ms, TE_I8, 1, &n);
  tens_init(&ty, ys, TE_I64, 1, &n);
  DLTensor *ts[3] = {&tx.t, &tm.t, &ty.t};
  expect_call_error(m, "bools", 3, ts, 0, NULL, TE_ERR_TYPE, "argument 'M' (#1) must be bool");
}

Test(codegen, vectors_dense_and_gather) {
  /* for (i, 0, 4) { B[ramp(i*4, 1, 4)] = A[ramp(i*4, 1, 4)] * x4(2);
                     C[ramp(i*4, 1, 4)] = A[ramp(i, 4, 4)] }   (C = transpose of 4x4 A) */
  te_expr *shape[1] = {I64(16)};
  ir_buffer *A = arg_buf("A", TE_F32, 1, shape, 0), *B = arg_buf("B", TE_F32, 1, shape, 1);
  ir_buffer *C = arg_buf("C", TE_F32, 1, shape, 2);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_dtype v4 = ir_with_lanes(TE_F32, 4);
  te_expr *dense = ir_ramp(ir_mul(i, I64(4)), I64(1), 4);
  te_expr *strided = ir_ramp(i, I64(4), 4);
  ir_stmt *s1 = ir_store(B, ir_mul(ir_load(A, v4, dense), ir_broadcast(F32(2), 4)), dense);
  ir_stmt *s2 = ir_store(C, ir_load(A, v4, strided), dense);
  ir_stmt *body = ir_for(i, I64(0), I64(4), IR_FOR_SERIAL, TE_THREAD_X, ir_seq2(ctx, s1, s2));
  lw_arg args[3] = {buf_arg(A), buf_arg(B), buf_arg(C)};
  te_module *m = compile(make_func("vec", 3, args, body));
  float a[16], b[16], c[16];
  for (int k = 0; k < 16; k++)
    a[k] = (float)k + 0.5f;
  int64_t n = 16;
  tens ta, tb, tc;
  tens_init(&ta, a, TE_F32, 1, &n);
  tens_init(&tb, b, TE_F32, 1, &n);
  tens_init(&tc, c, TE_F32, 1, &n);
  DLTensor *ts[3] = {&ta.t, &tb.t, &tc.t};
  cr_assert_eq(te_module_call(m, "vec", 3, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  for (int r = 0; r < 4; r++)
    for (int q = 0; q < 4; q++) {
      cr_expect_eq(b[r * 4 + q], a[r * 4 + q] * 2);
      cr_expect_eq(c[r * 4 + q], a[q * 4 + r]);
    }
}

/* for (i, 0, n) kind { assert(A[i] >= 0, BOUNDS, "negative input"); B[i] = A[i] } */
static te_module *assert_kernel(const char *name, ir_for_kind kind) {
  te_expr *shape[1] = {I64(100)};
  ir_buffer *A = arg_buf("A", TE_F32, 1, shape, 0), *B = arg_buf("B", TE_F32, 1, shape, 1);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *a = ir_load(A, TE_F32, i);
  ir_stmt *st =
      ir_assert(ir_binary(IR_GE, a, F32(0)), TE_ERR_BOUNDS, "negative input", ir_store(B, a, i));
  /* a heap allocation live around the loop: the early return must free it (ASan checks) */
  ir_buffer *T = ir_buffer_new(ctx, "T", TE_F32, 1, shape, TE_SCOPE_GLOBAL, NULL, -1);
  ir_stmt *loop = ir_for(i, I64(0), I64(100), kind, TE_THREAD_X, st);
  ir_stmt *body = ir_allocate(ctx, T, I64(100000), loop);
  lw_arg args[2] = {buf_arg(A), buf_arg(B)};
  return compile(make_func(name, 2, args, body));
}

static void check_assert(te_module *m, const char *name) {
  float a[100], b[100];
  int64_t n = 100;
  for (int k = 0; k < 100; k++)
    a[k] = (float)k;
  tens ta, tb;
  tens_init(&ta, a, TE_F32, 1, &n);
  tens_init(&tb, b, TE_F32, 1, &n);
  DLTensor *ts[2] = {&ta.t, &tb.t};
  cr_assert_eq(te_module_call(m, name, 2, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  a[77] = -1;
  char want[64];
  snprintf(want, sizeof want, "kernel '%s': negative input", name);
  expect_call_error(m, name, 2, ts, 0, NULL, TE_ERR_BOUNDS, want);
}

Test(codegen, assert_serial) { check_assert(assert_kernel("chk", IR_FOR_SERIAL), "chk"); }
Test(codegen, assert_in_parallel_loop) {
  te_rt_set_num_threads(2);
  check_assert(assert_kernel("pchk", IR_FOR_PARALLEL), "pchk");
  te_rt_set_num_threads(0);
}

Test(codegen, module_texts) {
  te_module *m = compile(scale_func("scale", IR_FOR_SERIAL, I64(16)));
  const char *ll = te_module_source(m, "ll");
  cr_assert_not_null(ll);
  cr_expect(strstr(ll, "define i32 @scale(ptr") != NULL, "%s", ll);
  cr_expect(strstr(ll, "prefer-vector-width") != NULL);
  const char *as = te_module_source(m, "asm");
  cr_assert_not_null(as, "%s", te_last_error(ctx));
  cr_expect(strstr(as, "scale:") != NULL);
  cr_expect_eq(te_module_source(m, "asm"), as, "asm is made once");
  te_clear_error(ctx);
  cr_expect_null(te_module_source(m, "ptx"));
  cr_expect_eq(te_last_status(ctx), TE_ERR_NOT_FOUND);
  te_clear_error(ctx);
  cr_expect_eq(te_module_save(m, "/tmp/x", TE_SAVE_PTX), TE_ERR_TARGET, "a CPU module has no PTX");
}

/* A loop holding a loop is marked llvm.loop.unroll.disable (LLVM would copy whole tiles); a
   loop of scalar code is left to LLVM. */
Test(codegen, outer_loops_not_unrolled_by_llvm) {
  te_expr *n = ir_var_new(ctx, "n", TE_I64, IR_VAR_INDEX), *shape[1] = {n};
  ir_buffer *A = arg_buf("A", TE_F32, 1, shape, 0), *B = arg_buf("B", TE_F32, 1, shape, 1);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *j = ir_var_new(ctx, "j", TE_I64, IR_VAR_INDEX);
  te_expr *at = ir_add(ir_mul(i, I64(7)), j);
  ir_stmt *inner = ir_for(j, I64(0), I64(7), IR_FOR_SERIAL, 0,
                          ir_store(B, ir_mul(ir_load(A, TE_F32, at), F32(2.0)), at));
  ir_stmt *nest = ir_for(i, I64(0), ir_floordiv(n, I64(7)), IR_FOR_SERIAL, 0, inner);
  lw_arg args[2] = {buf_arg(A), buf_arg(B)};
  lw_func *f = make_func("nest", 2, args, nest);
  add_size(f, n, 0, 0);
  te_module *m = compile(f);
  const char *ll = te_module_source(m, "ll");
  cr_assert_not_null(ll, "%s", te_last_error(ctx));
  cr_expect(strstr(ll, "!\"llvm.loop.unroll.disable\"") != NULL, "%s", ll);
  lw_func *g = scale_func("scale", IR_FOR_SERIAL, n);
  add_size(g, n, 0, 0);
  te_module *flat = compile(g);
  const char *ll2 = te_module_source(flat, "ll");
  cr_assert_not_null(ll2, "%s", te_last_error(ctx));
  cr_expect(strstr(ll2, "!\"llvm.loop.unroll.disable\"") == NULL, "%s", ll2);
}

Test(codegen, thread_loop_needs_gpu) {
  te_module *m = cg_module_new(ctx, host);
  te_status st = cg_llvm_compile(m, entered(host, scale_func("thr", IR_FOR_THREAD, I64(16))));
  cr_expect_eq(st, TE_ERR_TARGET, "%s", te_status_str(st));
  cr_expect(strstr(te_last_error(ctx), "GPU") != NULL, "%s", te_last_error(ctx));
}

Test(codegen, one_kernel_a_module) {
  te_module *m = compile(scale_func("k1", IR_FOR_SERIAL, I64(4)));
  cr_expect_eq(cg_llvm_compile(m, entered(host, scale_func("k2", IR_FOR_SERIAL, I64(4)))),
               TE_ERR_UNSUPPORTED);
}

Test(codegen, cross_target_compiles_but_does_not_run) {
  te_target *arm = te_target_parse(ctx, "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1");
  cr_assert_not_null(arm, "%s", te_last_error(ctx));
  te_module *m = compile_for(arm, scale_func("ascale", IR_FOR_PARALLEL, I64(64)));
  const char *as = te_module_source(m, "asm");
  cr_assert_not_null(as, "%s", te_last_error(ctx));
  cr_expect(strstr(as, "ascale:") != NULL);
  cr_expect(strstr(as, "fadd\ts") != NULL, "aarch64 float code expected:\n%s", as);
  float a[64], b[64], s = 1;
  int64_t n = 64;
  tens ta, tb;
  tens_init(&ta, a, TE_F32, 1, &n);
  tens_init(&tb, b, TE_F32, 1, &n);
  DLTensor *ts[2] = {&ta.t, &tb.t};
  const void *ss[1] = {&s};
  expect_call_error(m, "ascale", 2, ts, 1, ss, TE_ERR_TARGET, "not for this host");
  cr_expect_null(te_module_entry(m, "ascale"));
}

Test(codegen, scalar_parameter_dtypes) {
  /* O[k] = cast(f64, s_k) for one scalar of each dtype, through libffi */
  te_dtype dts[9] = {TE_I8, TE_I16, TE_I32, TE_I64, TE_U8, TE_U32, TE_F32, TE_F64, TE_BOOL};
  te_expr *shape[1] = {I64(9)};
  ir_buffer *O = arg_buf("O", TE_F64, 1, shape, 0);
  lw_arg args[10];
  ir_stmt *stores[9];
  args[0] = buf_arg(O);
  for (int k = 0; k < 9; k++) {
    te_expr *v = ir_var_new(ctx, "s", dts[k], IR_VAR_PARAM);
    args[k + 1] = scalar_arg(v);
    stores[k] = ir_store(O, ir_cast(TE_F64, v), I64(k));
  }
  te_module *m = compile(make_func("scalars", 10, args, ir_seq(ctx, 9, stores)));
  int8_t a = -5;
  int16_t b = -300;
  int32_t c = 70000;
  int64_t d = -((int64_t)1 << 40);
  uint8_t e = 250;
  uint32_t f = 4000000000u;
  float g = 1.5f;
  double h = -2.25;
  uint8_t bo = 1;
  const void *ss[9] = {&a, &b, &c, &d, &e, &f, &g, &h, &bo};
  double out[9], want[9] = {-5, -300, 70000, (double)d, 250, 4000000000.0, 1.5, -2.25, 1};
  int64_t n = 9;
  tens to;
  tens_init(&to, out, TE_F64, 1, &n);
  DLTensor *ts[1] = {&to.t};
  cr_assert_eq(te_module_call(m, "scalars", 1, ts, 9, ss), TE_OK, "%s", te_last_error(ctx));
  for (int k = 0; k < 9; k++)
    cr_expect_eq(out[k], want[k], "scalar %d: %g", k, out[k]);
}

Test(codegen, control_flow_lets_and_attrs) {
  /* for i: attr "pragma" { let t = X[i] * 2 in
       if (t > 5) { O[i] = let u = t + 1 in u * u } else { O[i] = abs(t) - 1 }; evaluate(t) } */
  int64_t n = 8;
  te_expr *shape[1] = {I64(n)};
  ir_buffer *X = arg_buf("X", TE_I32, 1, shape, 0), *O = arg_buf("O", TE_I32, 1, shape, 1);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  te_expr *t = ir_var_new(ctx, "t", TE_I32, IR_VAR_INDEX);
  te_expr *u = ir_var_new(ctx, "u", TE_I32, IR_VAR_INDEX);
  te_expr *c1 = ir_int(ctx, TE_I32, 1);
  te_expr *sq = ir_let(u, ir_add(t, c1), ir_mul(u, u));
  ir_stmt *then_s = ir_store(O, sq, i);
  ir_stmt *else_s = ir_store(O, ir_sub(call1(IR_INTRIN_ABS, t), c1), i);
  ir_stmt *ifs = ir_if(ir_binary(IR_GT, t, ir_int(ctx, TE_I32, 5)), then_s, else_s);
  ir_stmt *let = ir_let_stmt(t, ir_mul(ir_load(X, TE_I32, i), ir_int(ctx, TE_I32, 2)),
                             ir_seq2(ctx, ifs, ir_evaluate(t)));
  ir_stmt *body = ir_for(i, I64(0), I64(n), IR_FOR_UNROLLED, TE_THREAD_X,
                         ir_attr(ctx, "pragma_test", NULL, I64(1), let));
  lw_arg args[2] = {buf_arg(X), buf_arg(O)};
  te_module *m = compile(make_func("cf", 2, args, body));
  int32_t xs[8] = {-4, -1, 0, 1, 2, 3, 4, 100}, out[8];
  tens tx, to;
  tens_init(&tx, xs, TE_I32, 1, &n);
  tens_init(&to, out, TE_I32, 1, &n);
  DLTensor *ts[2] = {&tx.t, &to.t};
  cr_assert_eq(te_module_call(m, "cf", 2, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  for (int k = 0; k < n; k++) {
    int32_t tv = xs[k] * 2;
    cr_expect_eq(out[k], tv > 5 ? (tv + 1) * (tv + 1) : abs(tv) - 1, "x=%d", xs[k]);
  }
}
