/* test_arith_interval.c — symbolic intervals (bound inference's arithmetic): exact answers on
 * split, tile, fuse and stencil index forms; unions; ranges; and a seeded soundness property
 * (every value of a random expression at a random point lies inside its interval). */
#include <stdio.h>

#include "arith_util.h"
#include "ir_eval.h"

ARITH_FIXTURE(interval);

#define IV(lo, hi) ((ir_interval){(lo), (hi)})

/* "[min, max]" of an interval, with "-inf"/"+inf" for NULL ends. */
static void expect_iv(ir_interval r, const char *want, int line) {
  char *a = r.min ? ir_expr_to_string(r.min) : NULL, *b = r.max ? ir_expr_to_string(r.max) : NULL;
  char got[512];
  snprintf(got, sizeof got, "[%s, %s]", a ? a : "-inf", b ? b : "+inf");
  cr_expect_str_eq(got, want, "line %d: got %s, want %s", line, got, want);
  free(a);
  free(b);
}
#define EXPECT_IV(r, want) expect_iv((r), (want), __LINE__)

static ir_interval relax(te_expr *e, int n, te_expr *const vars[], const ir_interval doms[]) {
  return ir_interval_of(an, e, n, vars, doms);
}

Test(interval, split) {
  te_expr *io = V("i.o"), *ii = V("i.i");
  te_expr *x = ADD(MUL(io, I(32)), ii);
  EXPECT_IV(relax(x, 1, (te_expr *[]){ii}, (ir_interval[]){IV(I(0), I(31))}),
            "[i.o*32, i.o*32 + 31]");
  EXPECT_IV(relax(x, 2, (te_expr *[]){io, ii}, (ir_interval[]){IV(I(0), I(3)), IV(I(0), I(31))}),
            "[0, 127]");
  /* the relaxation is scoped: nothing stays bound */
  ir_const_bound b = ir_const_bound_of(an, ii);
  cr_expect_eq(b.min, INT64_MIN);
}

Test(interval, tile) {
  te_expr *io = V("i.o"), *ii = V("i.i"), *k = V("k");
  te_expr *idx = ADD(MUL(ADD(MUL(io, I(32)), ii), I(1024)), k);
  EXPECT_IV(
      relax(idx, 2, (te_expr *[]){ii, k}, (ir_interval[]){IV(I(0), I(31)), IV(I(0), I(1023))}),
      "[i.o*32768, i.o*32768 + 32767]");
}

Test(interval, fuse) {
  te_expr *f = V("f");
  ir_interval d = IV(I(0), I(63));
  EXPECT_IV(relax(DIV(f, I(8)), 1, &f, &d), "[0, 7]");
  EXPECT_IV(relax(MOD(f, I(8)), 1, &f, &d), "[0, 7]");
  EXPECT_IV(relax(ADD(MUL(DIV(f, I(8)), I(8)), MOD(f, I(8))), 1, &f, &d), "[0, 63]");
  /* a split of the fused axis: f = fo*4 + fi; with fi relaxed, f // 8 is one value */
  te_expr *fo = V("fo"), *fi = V("fi");
  te_expr *ff = ADD(MUL(fo, I(4)), fi);
  EXPECT_IV(relax(DIV(ff, I(8)), 1, &fi, (ir_interval[]){IV(I(0), I(3))}), "[fo//2, fo//2]");
  EXPECT_IV(relax(MOD(ff, I(8)), 1, &fi, (ir_interval[]){IV(I(0), I(3))}), "[fo*4%8, fo*4%8 + 3]");
}

Test(interval, stencil) {
  te_expr *x = V("x"), *r = V("r");
  EXPECT_IV(relax(SUB(ADD(x, r), I(1)), 1, &r, (ir_interval[]){IV(I(0), I(2))}), "[x - 1, x + 1]");
  te_expr *n = V("n");
  EXPECT_IV(relax(SUB(ADD(x, r), I(1)), 2, (te_expr *[]){x, r},
                  (ir_interval[]){IV(I(0), SUB(n, I(1))), IV(I(0), I(2))}),
            "[-1, n]");
}

Test(interval, symbolic_and_signs) {
  te_expr *i = V("i"), *n = V("n");
  ir_interval d = IV(I(0), SUB(n, I(1)));
  EXPECT_IV(relax(ADD(MUL(i, I(2)), I(1)), 1, &i, &d), "[1, n*2 - 1]");
  EXPECT_IV(relax(MUL(i, I(-3)), 1, &i, &d), "[3 - n*3, 0]");
  EXPECT_IV(relax(SUB(I(10), i), 1, &i, &d), "[11 - n, 10]");
  EXPECT_IV(relax(MIN(i, I(5)), 1, &i, &d), "[0, min(n - 1, 5)]");
  EXPECT_IV(relax(MAX(i, I(5)), 1, &i, &d), "[5, max(n - 1, 5)]");
  ir_analyzer_assume_positive(an, n);
  EXPECT_IV(relax(MUL(i, n), 1, &i, &d), "[0, n*n - n]");
  EXPECT_IV(relax(DIV(i, n), 1, &i, &d), "[0, (n - 1)//n]");
  EXPECT_IV(relax(MOD(i, n), 1, &i, &d), "[0, n - 1]");
}

Test(interval, select_and_unknowns) {
  te_expr *i = V("i"), *j = V("j");
  ir_interval d = IV(I(0), I(9));
  EXPECT_IV(relax(ir_select(LT(i, j), ADD(i, I(3)), I(-2)), 1, &i, &d), "[-2, 12]");
  EXPECT_IV(relax(i, 1, &i, (ir_interval[]){IV(I(0), NULL)}), "[0, +inf]");
  EXPECT_IV(relax(SUB(j, i), 1, &i, (ir_interval[]){IV(I(0), NULL)}), "[-inf, j]");
  EXPECT_IV(relax(MUL(i, j), 1, &i, &d), "[-inf, +inf]");
  BIND(j, 1, 4);
  EXPECT_IV(relax(MUL(i, j), 1, &i, &d), "[0, j*9]");
  EXPECT_IV(relax(ADD(i, j), 0, NULL, NULL), "[i + j, i + j]");
}

Test(interval, union_range_extent) {
  te_expr *x = V("x"), *y = V("y");
  EXPECT_IV(ir_interval_union(an, IV(I(0), I(5)), IV(I(3), I(9))), "[0, 9]");
  EXPECT_IV(ir_interval_union(an, IV(x, ADD(x, I(3))), IV(ADD(x, I(1)), ADD(x, I(5)))),
            "[x, x + 5]");
  EXPECT_IV(ir_interval_union(an, IV(x, x), IV(y, y)), "[min(x, y), max(x, y)]");
  EXPECT_IV(ir_interval_union(an, IV(NULL, x), IV(y, y)), "[-inf, max(x, y)]");
  EXPECT_IV(ir_interval_from_range(an, x, I(4)), "[x, x + 3]");
  EXPECT_TEXT(ir_interval_extent(an, IV(SUB(x, I(1)), ADD(x, I(1)))), "3");
  EXPECT_TEXT(ir_interval_extent(an, ir_interval_from_range(an, MUL(x, I(32)), y)), "y");
  cr_expect_null(ir_interval_extent(an, IV(NULL, x)));
}

/* ---------------------------------------------------------------- soundness property */

static uint64_t rng = 2024;
static int64_t rnd(int64_t lo, int64_t hi) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (int64_t)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

static te_expr *gen(te_expr *const v[], int depth) {
  if (depth <= 0 || rnd(0, 4) == 0)
    return rnd(0, 2) ? v[rnd(0, 2)] : I(rnd(-5, 5));
  te_expr *a = gen(v, depth - 1);
  switch (rnd(0, 7)) {
  case 0:
    return ADD(a, gen(v, depth - 1));
  case 1:
    return SUB(a, gen(v, depth - 1));
  case 2:
    return MUL(a, rnd(0, 3) ? I(rnd(-3, 4)) : gen(v, depth - 1));
  case 3:
    return DIV(a, I(rnd(0, 4) ? rnd(1, 9) : -rnd(1, 4)));
  case 4:
    return MOD(a, I(rnd(0, 4) ? rnd(1, 9) : -rnd(1, 4)));
  case 5:
    return MIN(a, gen(v, depth - 1));
  case 6:
    return MAX(a, gen(v, depth - 1));
  default:
    return ir_select(LT(a, gen(v, depth - 1)), gen(v, depth - 1), gen(v, depth - 1));
  }
}

Test(interval, random_soundness) {
  te_expr *v[3] = {V("a"), V("b"), V("c")}; /* a, b relaxed over [-4, 5], [0, 7]; c fixed */
  ir_interval doms[2] = {IV(I(-4), I(5)), IV(I(0), I(7))};
  int failures = 0, count = 1500;
  for (int n = 0; n < count && failures < 5; n++) {
    te_expr *e = gen(v, (int)rnd(1, 4));
    ir_interval r = relax(e, 2, v, doms);
    for (int p = 0; p < 16; p++) {
      ir_eval_val vals[3] = {{.i = rnd(-4, 5)}, {.i = rnd(0, 7)}, {.i = rnd(-6, 6)}};
      ir_eval_env env = {.n = 3, .vars = v, .vals = vals};
      int64_t x, lo = INT64_MIN, hi = INT64_MAX;
      if (!ir_eval_i64(&env, e, &x) || env.overflow)
        continue;
      bool ok =
          (!r.min || ir_eval_i64(&env, r.min, &lo)) && (!r.max || ir_eval_i64(&env, r.max, &hi));
      if (!ok || x < lo || x > hi) {
        char *es = ir_expr_to_string(e), *a = r.min ? ir_expr_to_string(r.min) : NULL,
             *b = r.max ? ir_expr_to_string(r.max) : NULL;
        cr_log_error("%lld outside [%s, %s] for %s at a=%lld b=%lld c=%lld", (long long)x,
                     a ? a : "-inf", b ? b : "+inf", es, (long long)vals[0].i, (long long)vals[1].i,
                     (long long)vals[2].i);
        free(es);
        free(a);
        free(b);
        failures++;
        break;
      }
    }
  }
  cr_expect_eq(failures, 0);
}
