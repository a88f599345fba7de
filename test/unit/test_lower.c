/* test_lower.c — the lowering passes on hand-built statements, and lw_lower's argument checks.
 *
 * The passes are called directly on REALIZE / PROVIDE / FOR / IF statements built with the IR
 * constructors, so each pass is tested alone. Partitioning and unrolling are also checked for
 * meaning: a small interpreter (below) runs the loop nest before and after on integers and
 * records the sequence of stores (buffer, index), which must not change.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lower/lower.h"
#include "lower_util.h"

static te_ctx *ctx;

static void setup(void) { ctx = te_ctx_new(); }
static void teardown(void) { te_ctx_free(ctx); }

TestSuite(lower, .init = setup, .fini = teardown);

#define E(...) TE_EXPRS(__VA_ARGS__)
#define I(v) ir_i64(ctx, (v))

#define make_pass(...) lu_make_pass(ctx, __VA_ARGS__)

static ir_buffer *arg_buffer(lw_pass_ctx *p, te_tensor *t) {
  return ir_map_get(p->tensor_buffers, t);
}

static char *text(ir_stmt *s) {
  cr_assert_not_null(s, "pass failed: %s", te_last_error(ctx));
  return ir_stmt_to_string(s);
}

static void assert_text(ir_stmt *s, const char *want) {
  char *got = text(s);
  cr_assert_str_eq(got, want, "got:\n%s\nwant:\n%s", got, want);
  free(got);
}

/* ---------------------------------------------------------------- a tiny interpreter */

#define MAXV 16
typedef struct interp {
  te_expr *vars[MAXV];
  int64_t vals[MAXV];
  int nvars;
  int nstores;
  const ir_buffer *store_buf[4096];
  int64_t store_idx[4096];
} interp;

static int64_t ev(interp *in, te_expr *e) {
  switch (e->kind) {
  case IR_INT:
    return e->u.i;
  case IR_VAR:
    for (int i = in->nvars - 1; i >= 0; i--)
      if (in->vars[i] == e)
        return in->vals[i];
    cr_assert_fail("unbound variable %s", e->u.var.name);
    return 0;
  case IR_ADD:
    return ev(in, e->args[0]) + ev(in, e->args[1]);
  case IR_SUB:
    return ev(in, e->args[0]) - ev(in, e->args[1]);
  case IR_MUL:
    return ev(in, e->args[0]) * ev(in, e->args[1]);
  case IR_FLOORDIV: {
    int64_t a = ev(in, e->args[0]), b = ev(in, e->args[1]), q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
  case IR_FLOORMOD: {
    int64_t a = ev(in, e->args[0]), b = ev(in, e->args[1]), r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
  case IR_TRUNCDIV:
    return ev(in, e->args[0]) / ev(in, e->args[1]);
  case IR_TRUNCMOD:
    return ev(in, e->args[0]) % ev(in, e->args[1]);
  case IR_SELECT:
    return ev(in, e->args[0]) ? ev(in, e->args[1]) : ev(in, e->args[2]);
  case IR_MIN: {
    int64_t a = ev(in, e->args[0]), b = ev(in, e->args[1]);
    return a < b ? a : b;
  }
  case IR_MAX: {
    int64_t a = ev(in, e->args[0]), b = ev(in, e->args[1]);
    return a > b ? a : b;
  }
  case IR_LT:
    return ev(in, e->args[0]) < ev(in, e->args[1]);
  case IR_LE:
    return ev(in, e->args[0]) <= ev(in, e->args[1]);
  case IR_GT:
    return ev(in, e->args[0]) > ev(in, e->args[1]);
  case IR_GE:
    return ev(in, e->args[0]) >= ev(in, e->args[1]);
  case IR_EQ:
    return ev(in, e->args[0]) == ev(in, e->args[1]);
  case IR_NE:
    return ev(in, e->args[0]) != ev(in, e->args[1]);
  case IR_AND:
    return ev(in, e->args[0]) && ev(in, e->args[1]);
  case IR_OR:
    return ev(in, e->args[0]) || ev(in, e->args[1]);
  case IR_NOT:
    return !ev(in, e->args[0]);
  case IR_CALL:
    return ev(in, e->args[0]); /* likely(c) */
  default:
    cr_assert_fail("interp: unexpected %s", ir_expr_kind_name[e->kind]);
    return 0;
  }
}

static void run(interp *in, ir_stmt *s) {
  if (!s)
    return;
  switch (s->kind) {
  case IR_S_SEQ:
    for (uint32_t i = 0; i < s->nstmts; i++)
      run(in, s->stmts[i]);
    return;
  case IR_S_FOR: {
    int64_t lo = ev(in, IR_FOR_MIN(s)), n = ev(in, IR_FOR_EXTENT(s));
    cr_assert_lt(in->nvars, MAXV);
    in->vars[in->nvars++] = IR_FOR_VAR(s);
    for (int64_t v = lo; v < lo + n; v++) {
      in->vals[in->nvars - 1] = v;
      run(in, IR_FOR_BODY(s));
    }
    in->nvars--;
    return;
  }
  case IR_S_IF:
    if (ev(in, s->exprs[0]))
      run(in, s->stmts[0]);
    else if (s->nstmts > 1)
      run(in, s->stmts[1]);
    return;
  case IR_S_STORE:
    cr_assert_lt(in->nstores, 4096);
    in->store_buf[in->nstores] = s->u.buffer;
    in->store_idx[in->nstores++] = ev(in, s->exprs[1]);
    return;
  case IR_S_EVALUATE:
    return;
  default:
    cr_assert_fail("interp: unexpected statement %s", ir_stmt_kind_name[s->kind]);
  }
}

/* The two statements store to the same places in the same order. */
static void assert_same_stores(ir_stmt *a, ir_stmt *b) {
  static interp x, y;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  run(&x, a);
  run(&y, b);
  cr_assert_eq(x.nstores, y.nstores, "stores: %d before, %d after", x.nstores, y.nstores);
  for (int i = 0; i < x.nstores; i++) {
    cr_assert_eq(x.store_buf[i], y.store_buf[i]);
    cr_assert_eq(x.store_idx[i], y.store_idx[i], "store %d: index %lld before, %lld after", i,
                 (long long)x.store_idx[i], (long long)y.store_idx[i]);
  }
}

static int count_kind(ir_stmt *s, ir_stmt_kind k) {
  if (!s)
    return 0;
  int n = s->kind == k;
  for (uint32_t i = 0; i < s->nstmts; i++)
    n += count_kind(s->stmts[i], k);
  return n;
}

/* A loop variable (dotted names, as splits make them, are not te_var names). */
static te_expr *ivar(const char *name) { return ir_var_new(ctx, name, TE_I64, IR_VAR_INDEX); }

static te_tensor *vec(const char *name, int64_t n) {
  return te_placeholder(ctx, name, TE_F32, 1, E(I(n)));
}

/* ---------------------------------------------------------------- storage_flatten */

Test(lower, flatten_realize_and_arguments) {
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(I(4), I(6)));
  te_tensor *c = te_placeholder(ctx, "C", TE_F32, 2, E(I(4), I(6)));
  te_expr *u = te_var(ctx, "u"), *w = te_var(ctx, "w");
  te_tensor *t = te_compute(ctx, "T", 2, E(I(4), I(6)), E(u, w),
                            te_add(TE_AT(a, u, w), te_float(ctx, TE_F32, 1)));
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, c}, 0, NULL);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  ir_stmt *produce =
      ir_for(i, I(0), I(4), IR_FOR_SERIAL, 0,
             ir_for(j, I(2), I(6), IR_FOR_SERIAL, 0,
                    ir_provide(t, ir_access(a, 2, E(i, ir_sub(j, I(2)))), 2, E(i, j))));
  te_expr *i2 = te_var(ctx, "i"), *j2 = te_var(ctx, "j");
  ir_stmt *consume =
      ir_for(i2, I(0), I(4), IR_FOR_SERIAL, 0,
             ir_for(j2, I(0), I(6), IR_FOR_SERIAL, 0,
                    ir_provide(c, ir_access(t, 2, E(i2, ir_add(j2, I(2)))), 2, E(i2, j2))));
  ir_stmt *s = ir_realize(t, TE_SCOPE_GLOBAL, 2, E(I(0), I(2)), E(I(4), I(6)),
                          ir_seq2(ctx, produce, consume));
  ir_stmt *r = lw_storage_flatten(&p, s);
  assert_text(r, "allocate T[f32 * 4*6] global {\n"
                 "  for (i, 0, 4) {\n"
                 "    for (j, 2, 6) {\n"
                 "      T[i*6 + (j - 2)] = A[i*6 + (j - 2)]\n"
                 "    }\n"
                 "  }\n"
                 "  for (i_1, 0, 4) {\n"
                 "    for (j_1, 0, 6) {\n"
                 "      C[i_1*6 + j_1] = T[i_1*6 + (j_1 + 2 - 2)]\n"
                 "    }\n"
                 "  }\n"
                 "}\n");
  cr_assert_eq(r->u.buffer->arg_index, -1);
  cr_assert_eq(r->u.buffer->ndim, 2);
  cr_assert_eq(ir_verify_stmt(ctx, r, "storage_flatten", true), TE_OK, "%s", te_last_error(ctx));
}

Test(lower, flatten_zero_dim_and_three_dims) {
  te_tensor *s0 = te_placeholder(ctx, "S", TE_F32, 0, NULL);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 3, E(I(2), I(3), I(5)));
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){s0, a}, 0, NULL);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j"), *k = te_var(ctx, "k");
  ir_stmt *s = ir_provide(a, ir_access(s0, 0, NULL), 3, E(i, j, k));
  s = ir_for(i, I(0), I(2), 0, 0, ir_for(j, I(0), I(3), 0, 0, ir_for(k, I(0), I(5), 0, 0, s)));
  assert_text(lw_storage_flatten(&p, s), "for (i, 0, 2) {\n"
                                         "  for (j, 0, 3) {\n"
                                         "    for (k, 0, 5) {\n"
                                         "      A[(i*3 + j)*5 + k] = S[0]\n"
                                         "    }\n"
                                         "  }\n"
                                         "}\n");
}

Test(lower, flatten_unknown_tensor_is_internal_error) {
  te_tensor *a = vec("A", 8), *b = vec("B", 8);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *i = te_var(ctx, "i");
  ir_stmt *s = ir_for(i, I(0), I(8), 0, 0, ir_provide(a, ir_access(b, 1, E(i)), 1, E(i)));
  cr_assert_null(lw_storage_flatten(&p, s));
  cr_assert_eq(te_last_status(ctx), TE_ERR_INTERNAL);
  cr_assert_not_null(strstr(te_last_error(ctx), "'B'"), "%s", te_last_error(ctx));
}

/* ---------------------------------------------------------------- loop_partition */

/* for (xo, 0, ceil(n/f)) for (xi, 0, f) if (likely(xo*f + xi < n)) B[xo*f + xi] = A[...] */
static ir_stmt *split_copy(lw_pass_ctx *p, te_tensor *a, te_tensor *b, int64_t n, int64_t f) {
  te_expr *xo = ivar("x.o"), *xi = ivar("x.i");
  te_expr *x = ir_add(ir_mul(xo, I(f)), xi);
  ir_stmt *st = ir_store(arg_buffer(p, b), ir_load(arg_buffer(p, a), TE_F32, x), x);
  te_expr *cond = ir_lt(x, I(n));
  st = ir_if(ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &cond), st, NULL);
  return ir_for(xo, I(0), I((n + f - 1) / f), 0, 0, ir_for(xi, I(0), I(f), 0, 0, st));
}

Test(lower, partition_split_tail) {
  te_tensor *a = vec("A", 100), *b = vec("B", 100);
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, b}, 0, NULL);
  ir_stmt *s = split_copy(&p, a, b, 100, 32);
  ir_stmt *r = lw_loop_partition(&p, s);
  char *t = text(r);
  cr_assert_eq(r->kind, IR_S_SEQ, "%s", t);
  cr_assert_eq(r->nstmts, 2, "%s", t);
  ir_stmt *main_loop = r->stmts[0], *tail = r->stmts[1];
  int64_t v;
  cr_assert(ir_is_const_int(IR_FOR_EXTENT(main_loop), &v) && v == 3, "%s", t);
  cr_assert_eq(count_kind(main_loop, IR_S_IF), 0, "steady state has a guard:\n%s", t);
  cr_assert(ir_is_const_int(IR_FOR_MIN(tail), &v) && v == 3, "%s", t);
  cr_assert_eq(count_kind(r, IR_S_IF), 0, "the tail's inner loop should be cut to 4:\n%s", t);
  assert_same_stores(s, r);
  free(t);
}

Test(lower, partition_dividing_split_is_untouched) {
  te_tensor *a = vec("A", 96), *b = vec("B", 96);
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, b}, 0, NULL);
  te_expr *i = te_var(ctx, "i");
  ir_stmt *s = ir_for(i, I(0), I(96), 0, 0,
                      ir_store(arg_buffer(&p, b), ir_load(arg_buffer(&p, a), TE_F32, i), i));
  cr_assert_eq(lw_loop_partition(&p, s), s);
}

/* for (x.o, 0, ceil(n/16)) kind { for (x.i, 0, 16) if (likely(x.o*16 + x.i < n)) B[x] = A[x] }
   over f32[n], n symbolic; *p gets the pass context. */
static ir_stmt *symbolic_split_copy(lw_pass_ctx *p, te_expr *n, ir_for_kind kind) {
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n)),
            *b = te_placeholder(ctx, "B", TE_F32, 1, E(n));
  te_expr **sizes = ir_alloc(ctx, sizeof *sizes); /* the pass keeps it: not a local */
  sizes[0] = n;
  *p = make_pass(2, (te_tensor *const[]){a, b}, 1, sizes);
  te_expr *xo = ivar("x.o"), *xi = ivar("x.i");
  te_expr *x = ir_add(ir_mul(xo, I(16)), xi);
  ir_stmt *st = ir_store(arg_buffer(p, b), ir_load(arg_buffer(p, a), TE_F32, x), x);
  te_expr *cond = ir_lt(x, n);
  st = ir_if(ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &cond), st, NULL);
  te_expr *ext = ir_floordiv(ir_add(n, I(15)), I(16));
  return ir_for(xo, I(0), ext, kind, 0, ir_for(xi, I(0), I(16), 0, 0, st));
}

/* s and r store the same values for several sizes n. */
static void assert_same_stores_for_sizes(te_expr *n, ir_stmt *s, ir_stmt *r) {
  for (int64_t nv = 1; nv <= 50; nv += 7) {
    ir_stmt *s1 = ir_substitute_stmt(ctx, s, 1, &n, E(I(nv)));
    ir_stmt *r1 = ir_substitute_stmt(ctx, r, 1, &n, E(I(nv)));
    assert_same_stores(s1, r1);
  }
}

Test(lower, partition_symbolic_size) {
  te_expr *n = te_var(ctx, "n");
  lw_pass_ctx p;
  ir_stmt *s = symbolic_split_copy(&p, n, IR_FOR_SERIAL);
  ir_stmt *r = lw_loop_partition(&p, s);
  char *t = text(r);
  cr_assert_eq(r->kind, IR_S_SEQ, "%s", t);
  cr_assert_eq(count_kind(r->stmts[0], IR_S_IF), 0, "steady state has a guard:\n%s", t);
  cr_assert_eq(count_kind(r, IR_S_IF), 0, "the tail runs only its live iterations:\n%s", t);
  free(t);
  /* run it for several n */
  assert_same_stores_for_sizes(n, s, r);
}

Test(lower, partition_two_guards_in_nest) {
  /* a 2-d tile: both dimensions non-dividing (50 by 16, 20 by 8) */
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(I(1000)));
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *io = ivar("i.o"), *jo = ivar("j.o"), *ii = ivar("i.i"), *ji = ivar("j.i");
  te_expr *i = ir_add(ir_mul(io, I(16)), ii), *j = ir_add(ir_mul(jo, I(8)), ji);
  te_expr *cond = ir_and(ir_lt(i, I(50)), ir_lt(j, I(20)));
  ir_stmt *st = ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 0), ir_add(ir_mul(i, I(20)), j));
  st = ir_if(ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &cond), st, NULL);
  ir_stmt *s = ir_for(io, I(0), I(4), 0, 0,
                      ir_for(jo, I(0), I(3), 0, 0,
                             ir_for(ii, I(0), I(16), 0, 0, ir_for(ji, I(0), I(8), 0, 0, st))));
  ir_stmt *r = lw_loop_partition(&p, s);
  char *t = text(r);
  cr_assert_eq(count_kind(r, IR_S_IF), 0, "every guard should be peeled:\n%s", t);
  cr_assert_eq(r->kind, IR_S_SEQ, "%s", t);
  assert_same_stores(s, r);
  free(t);
}

/* A parallel loop keeps its iterations: the tail becomes a branch of its body, with x.o replaced
   by its value there (so the tail's inner loop is cut to 4 without a guard). */
Test(lower, partition_parallel_tail_is_a_branch) {
  te_tensor *a = vec("A", 100), *b = vec("B", 100);
  lw_pass_ctx p = make_pass(2, (te_tensor *const[]){a, b}, 0, NULL);
  ir_stmt *s = split_copy(&p, a, b, 100, 32);
  s = ir_for(IR_FOR_VAR(s), IR_FOR_MIN(s), IR_FOR_EXTENT(s), IR_FOR_PARALLEL, 0, IR_FOR_BODY(s));
  ir_stmt *r = lw_loop_partition(&p, s);
  char *t = text(r);
  cr_assert_eq(r->kind, IR_S_FOR, "%s", t);
  cr_assert_eq(r->u.loop.kind, IR_FOR_PARALLEL, "%s", t);
  int64_t v;
  cr_assert(ir_is_const_int(IR_FOR_EXTENT(r), &v) && v == 4, "%s", t);
  cr_assert(strstr(t, "if (x.o < 3) {"), "%s", t);
  cr_assert(strstr(t, "for (x.i, 0, 4)"), "%s", t);
  cr_assert_eq(count_kind(r, IR_S_IF), 1, "only the branch is left:\n%s", t);
  assert_same_stores(s, r);
  free(t);
}

Test(lower, partition_parallel_symbolic_size) {
  te_expr *n = te_var(ctx, "n");
  lw_pass_ctx p;
  ir_stmt *s = symbolic_split_copy(&p, n, IR_FOR_PARALLEL);
  ir_stmt *r = lw_loop_partition(&p, s);
  char *t = text(r);
  cr_assert_eq(r->kind, IR_S_FOR, "%s", t);
  cr_assert_eq(count_kind(r, IR_S_FOR), 3,
               "one parallel loop, the steady and tail inner loops:\n%s", t);
  assert_same_stores_for_sizes(n, s, r);
  free(t);
}

Test(lower, partition_keeps_unsolvable_guard) {
  /* a guard that is not linear in the loop variable stays, and the loop is not split */
  te_tensor *a = vec("A", 64);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  te_expr *cond = ir_lt(ir_floormod(ir_mul(x, x), I(7)), I(3));
  ir_stmt *st = ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 0), x);
  st = ir_if(ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &cond), st, NULL);
  ir_stmt *s = ir_for(x, I(0), I(64), 0, 0, st);
  ir_stmt *r = lw_loop_partition(&p, s);
  cr_assert_eq(count_kind(r, IR_S_IF), 1);
  cr_assert_eq(count_kind(r, IR_S_FOR), 1);
  assert_same_stores(s, r);
}

/* ---------------------------------------------------------------- unroll, remove_likely */

Test(lower, unroll_constant_extent) {
  te_tensor *a = vec("A", 8);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s = ir_for(x, I(2), I(4), IR_FOR_UNROLLED, 0,
                      ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 1), x));
  ir_stmt *r = lw_unroll(&p, s);
  assert_text(r, "A[2] = 1.0f\nA[3] = 1.0f\nA[4] = 1.0f\nA[5] = 1.0f\n");
  assert_same_stores(s, r);
}

Test(lower, unroll_nested_and_serial_kept) {
  te_tensor *a = vec("A", 64);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x"), *y = te_var(ctx, "y");
  ir_stmt *st = ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 1), ir_add(ir_mul(x, I(8)), y));
  ir_stmt *s =
      ir_for(x, I(0), I(8), IR_FOR_SERIAL, 0, ir_for(y, I(0), I(2), IR_FOR_UNROLLED, 0, st));
  ir_stmt *r = lw_unroll(&p, s);
  cr_assert_eq(count_kind(r, IR_S_FOR), 1);
  cr_assert_eq(count_kind(r, IR_S_STORE), 2);
  assert_same_stores(s, r);
}

/* An unbounded unrolled loop is refused by the schedule (ops_to_loops.c); what reaches the pass
   is a partition tail, which stays a serial loop. */
Test(lower, unroll_unbounded_tail_stays_serial) {
  te_expr *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 1, E(n));
  te_expr *x = te_var(ctx, "x");
  ir_stmt *s = ir_for(x, I(0), n, IR_FOR_UNROLLED, 0,
                      ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 1), x));
  ir_stmt *r = lw_unroll(&p, s);
  cr_assert_not_null(r, "%s", te_last_error(ctx));
  cr_assert_eq(r->kind, IR_S_FOR);
  cr_assert_eq(r->u.loop.kind, IR_FOR_SERIAL);
  cr_assert_eq(te_last_status(ctx), TE_OK);
}

Test(lower, unroll_bounded_extent_is_guarded) {
  te_tensor *a = vec("A", 8);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *o = te_var(ctx, "o"), *x = te_var(ctx, "x");
  te_expr *ext = ir_min(I(3), ir_sub(I(8), o)); /* at most 3 */
  ir_stmt *st = ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 1), ir_add(o, x));
  ir_stmt *s = ir_for(o, I(4), I(4), 0, 0, ir_for(x, I(0), ext, IR_FOR_UNROLLED, 0, st));
  ir_stmt *r = lw_unroll(&p, s);
  cr_assert_not_null(r, "%s", te_last_error(ctx));
  cr_assert_eq(count_kind(r, IR_S_STORE), 3);
  assert_same_stores(s, r);
}

Test(lower, remove_likely) {
  te_tensor *a = vec("A", 8);
  lw_pass_ctx p = make_pass(1, (te_tensor *const[]){a}, 0, NULL);
  te_expr *x = te_var(ctx, "x");
  te_expr *cond = ir_lt(x, I(5));
  ir_stmt *st = ir_if(ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &cond),
                      ir_store(arg_buffer(&p, a), ir_float(ctx, TE_F32, 1), x), NULL);
  assert_text(lw_remove_likely(&p, ir_for(x, I(0), I(8), 0, 0, st)),
              "for (x, 0, 8) {\n  if (x < 5) {\n    A[x] = 1.0f\n  }\n}\n");
}

/* ---------------------------------------------------------------- lw_lower: arguments */

typedef struct add_kernel {
  te_tensor *a, *b, *c;
  te_schedule *s;
} add_kernel;

static add_kernel make_add(te_expr *m, te_expr *n) {
  add_kernel k;
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  k.a = te_placeholder(ctx, "A", TE_F32, 2, E(m, n));
  k.b = te_placeholder(ctx, "B", TE_F32, 2, E(m, n));
  k.c = te_compute(ctx, "C", 2, E(m, n), E(i, j), te_add(TE_AT(k.a, i, j), TE_AT(k.b, i, j)));
  k.s = k.c ? te_schedule_new(ctx, 1, (te_tensor *const[]){k.c}) : NULL;
  cr_assert_not_null(k.s, "%s", te_last_error(ctx));
  return k;
}

static void assert_error(char *text_result, te_status st, const char *substr) {
  cr_assert_null(text_result);
  cr_assert_eq(te_last_status(ctx), st, "status %s: %s", te_status_str(te_last_status(ctx)),
               te_last_error(ctx));
  cr_assert_not_null(strstr(te_last_error(ctx), substr), "message: %s", te_last_error(ctx));
}

Test(lower, args_ok_prints_signature) {
  add_kernel k = make_add(I(4), I(3));
  char *t = te_lower_text(k.s, 3, (te_tensor *const[]){k.a, k.b, k.c}, 0, NULL);
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  const char *want = "func main(A: f32[4, 3], B: f32[4, 3], C: f32[4, 3]) {\n";
  cr_assert(strncmp(t, want, strlen(want)) == 0, "%s", t);
  te_free(t);
}

Test(lower, args_missing_input) {
  add_kernel k = make_add(I(4), I(3));
  assert_error(
      te_lower_text(k.s, 2, (te_tensor *const[]){k.a, k.c}, 0, NULL), TE_ERR_INVALID_ARG,
      "te_lower_text: tensor 'B' is read by the computation but is not among the kernel's tensors");
}

Test(lower, args_missing_output) {
  add_kernel k = make_add(I(4), I(3));
  assert_error(te_lower_text(k.s, 2, (te_tensor *const[]){k.a, k.b}, 0, NULL), TE_ERR_INVALID_ARG,
               "output 'C'");
}

Test(lower, args_twice_null_and_counts) {
  add_kernel k = make_add(I(4), I(3));
  assert_error(te_lower_text(k.s, 4, (te_tensor *const[]){k.a, k.b, k.c, k.a}, 0, NULL),
               TE_ERR_INVALID_ARG, "tensor 'A' is listed twice");
  te_clear_error(ctx);
  assert_error(te_lower_text(k.s, 3, (te_tensor *const[]){k.a, NULL, k.c}, 0, NULL),
               TE_ERR_INVALID_ARG, "tensors[1] is NULL");
  te_clear_error(ctx);
  assert_error(te_lower_text(k.s, -1, NULL, 0, NULL), TE_ERR_INVALID_ARG, "ntensors must be >= 0");
  te_clear_error(ctx);
  assert_error(te_lower_text(k.s, 3, NULL, 0, NULL), TE_ERR_INVALID_ARG, "tensors is NULL");
  te_clear_error(ctx);
  assert_error(te_lower_text(k.s, 3, (te_tensor *const[]){k.a, k.b, k.c}, 1, NULL),
               TE_ERR_INVALID_ARG, "scalars is NULL");
  cr_assert_null(te_lower_text(NULL, 0, NULL, 0, NULL));
}

Test(lower, args_intermediate_tensor) {
  te_expr *i = te_var(ctx, "i");
  te_tensor *a = vec("A", 8);
  te_tensor *t =
      te_compute(ctx, "T", 1, E(I(8)), E(i), te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2)));
  te_expr *i2 = te_var(ctx, "i");
  te_tensor *c =
      te_compute(ctx, "C", 1, E(I(8)), E(i2), te_add(TE_AT(t, i2), te_float(ctx, TE_F32, 1)));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){c});
  assert_error(te_lower_text(s, 3, (te_tensor *const[]){a, t, c}, 0, NULL), TE_ERR_INVALID_ARG,
               "tensor 'T' (tensors[1]) is neither a placeholder nor an output");
}

Test(lower, args_kernel_name) {
  add_kernel k = make_add(I(4), I(3));
  ir_scratch_begin(ctx);
  lw_func *f;
  cr_assert_eq(lw_lower(k.s, "1abc", 3, (te_tensor *const[]){k.a, k.b, k.c}, 0, NULL, NULL, &f),
               TE_ERR_INVALID_ARG);
  ir_scratch_end(ctx);
  cr_assert_not_null(
      strstr(te_last_error(ctx), "te_build: kernel name '1abc' is not a C identifier"));
}

Test(lower, args_symbolic_sizes) {
  te_expr *m = te_var(ctx, "m"), *n = te_var(ctx, "n");
  add_kernel k = make_add(m, n);
  ir_scratch_begin(ctx);
  lw_func *f;
  cr_assert_eq(lw_lower(k.s, "add", 3, (te_tensor *const[]){k.a, k.b, k.c}, 0, NULL, NULL, &f),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(f->nsizes, 2);
  cr_assert_eq(f->size_vars[0], m);
  cr_assert_eq(f->size_arg[0], 0);
  cr_assert_eq(f->size_dim[0], 0);
  cr_assert_eq(f->size_vars[1], n);
  cr_assert_eq(f->size_dim[1], 1);
  cr_assert_eq(f->args[2].buffer->arg_index, 2);
  ir_scratch_end(ctx);
}

Test(lower, args_size_not_bare) {
  te_expr *n = te_var(ctx, "n");
  add_kernel k = make_add(I(4), te_mul(n, I(2)));
  assert_error(te_lower_text(k.s, 3, (te_tensor *const[]){k.a, k.b, k.c}, 0, NULL), TE_ERR_SHAPE,
               "symbolic size 'n' must be the extent of some dimension of a kernel argument");
}

Test(lower, args_scalars) {
  te_expr *i = te_var(ctx, "i"), *n = te_var(ctx, "n");
  te_expr *alpha = te_param(ctx, "alpha", TE_F32);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_mul(alpha, TE_AT(a, i)));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){c});
  cr_assert_not_null(s, "%s", te_last_error(ctx));
  te_tensor *const ts[] = {a, c};
  assert_error(
      te_lower_text(s, 2, ts, 0, NULL), TE_ERR_INVALID_ARG,
      "scalar parameter 'alpha' is used by the computation but is not among the kernel's scalars");
  te_clear_error(ctx);
  assert_error(te_lower_text(s, 2, ts, 1, E(te_add(alpha, alpha))), TE_ERR_INVALID_ARG,
               "scalars[0] is not a parameter variable");
  te_clear_error(ctx);
  assert_error(te_lower_text(s, 2, ts, 2, E(alpha, n)), TE_ERR_INVALID_ARG,
               "scalar 'n' is a symbolic size");
  te_clear_error(ctx);
  assert_error(te_lower_text(s, 2, ts, 2, E(alpha, alpha)), TE_ERR_INVALID_ARG,
               "scalar 'alpha' is listed twice");
  te_clear_error(ctx);
  char *t = te_lower_text(s, 2, ts, 1, E(alpha));
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  const char *want = "func main(A: f32[n], C: f32[n], alpha: f32) {\n";
  cr_assert(strncmp(t, want, strlen(want)) == 0, "%s", t);
  te_free(t);
}

/* ---------------------------------------------------------------- the pipeline driver */

Test(lower, pipeline_table) {
  cr_assert_eq(lw_pass_index("schedule_to_loops"), 0);
  cr_assert_gt(lw_pass_index("storage_flatten"), 0);
  cr_assert_lt(lw_pass_index("storage_flatten"), lw_pass_index("loop_partition"));
  cr_assert_eq(lw_pass_index("make_entry"), lw_pipeline_count - 1);
  cr_assert_eq(lw_pass_index("nontemporal"), lw_pass_index("simplify_final") + 1);
  cr_assert_eq(lw_pass_index("make_closures"), lw_pass_index("nontemporal") + 1);
  cr_assert_str_eq(lw_last_compute_pass(), "nontemporal");
  cr_assert_eq(lw_pass_index("nope"), -1);
}

Test(lower, stop_after) {
  add_kernel k = make_add(I(4), I(3));
  te_tensor *const ts[] = {k.a, k.b, k.c};
  char *t = lw_lower_text(k.s, "te_lower_text", "add", 3, ts, 0, NULL, "schedule_to_loops");
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  cr_assert_not_null(strstr(t, "C[i, j] = A[i, j] + B[i, j]"), "%s", t);
  te_free(t);
  t = lw_lower_text(k.s, "te_lower_text", "add", 3, ts, 0, NULL, "bogus");
  assert_error(t, TE_ERR_INVALID_ARG, "stop after 'bogus': no pass has that name");
}

/* Runs the lowering of a small kernel with TE_DUMP set, capturing stderr in a temporary file. */
Test(lower, dump_env) {
  add_kernel k = make_add(I(4), I(3));
  FILE *tmp = tmpfile();
  cr_assert_not_null(tmp);
  fflush(stderr);
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  setenv("TE_DUMP", "storage_flatten,unroll", 1);
  char *t = te_lower_text(k.s, 3, (te_tensor *const[]){k.a, k.b, k.c}, 0, NULL);
  unsetenv("TE_DUMP");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  te_free(t);
  static char buf[16384];
  rewind(tmp);
  size_t n = fread(buf, 1, sizeof buf - 1, tmp);
  buf[n] = '\0';
  fclose(tmp);
  cr_assert_not_null(strstr(buf, "=== after storage_flatten ===\nfunc main("), "%s", buf);
  cr_assert_not_null(strstr(buf, "=== after unroll ===\n(unchanged)\n"), "%s", buf);
  cr_assert_null(strstr(buf, "=== after simplify ==="), "%s", buf);
}
