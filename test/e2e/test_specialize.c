/* test_specialize.c — te_specialize: one kernel holding several schedules of a computation, the
 * branch chosen at run time by a condition over sizes, strides and parameters. Each branch is
 * checked against plain C at sizes that meet and miss its condition (sizes the splits do not
 * divide, outputs poisoned); the lowered IR shows what each branch learnt (no tail under
 * N % 16 == 0, contiguous ramps under a stride of 1), the LLVM IR a contiguous vector load;
 * conditions that fold to a constant; the trace round trip.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(specialize, .init = tt_setup, .fini = tt_teardown);

typedef struct axpb {
  te_expr *M, *N, *rs, *cs;
  te_tensor *A, *B, *C;
} axpb;

/* C[i, j] = A[i, j] * 3 + B[i, j], M x N symbolic; A strided (rs, cs) when strided. */
static axpb make_axpb(bool strided) {
  axpb w;
  w.M = te_var(tt_ctx, "M"), w.N = te_var(tt_ctx, "N");
  w.rs = te_var(tt_ctx, "rs"), w.cs = te_var(tt_ctx, "cs");
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  w.A = strided ? TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(w.M, w.N),
                                               TE_EXPRS(w.rs, w.cs)))
                : TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(w.M, w.N)));
  w.B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(w.M, w.N)));
  te_expr *body = te_add(te_mul(tt_at2(w.A, i, j), te_float(tt_ctx, TE_F32, 3)), tt_at2(w.B, i, j));
  w.C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(w.M, w.N), TE_EXPRS(i, j), body));
  return w;
}

/* The stage's j split by factor, the inner loop vectorized. */
static void split_vectorize(te_schedule *s, te_tensor *C, int leaf, int64_t factor) {
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split(st, te_leaf(st, leaf), factor, &o, &in));
  TT_OK(te_vectorize(st, in));
}

static te_expr *i64(int64_t v) { return te_int(tt_ctx, v); }

/* general: j split by 8, vectorized, i parallel; N % 16 == 0: j split by 16 then 4 unrolled
   and vectorized by 4; N < 8: j vectorized by 8 (masked). */
static te_schedule *three_ways(axpb *w) {
  te_schedule *s = tt_schedule1(w->C);
  split_vectorize(s, w->C, 1, 8);
  te_schedule *b16, *small;
  TT_OK(te_specialize(s, te_eq(te_floormod(w->N, i64(16)), i64(0)), &b16));
  TT_OK(te_specialize(s, te_lt(w->N, i64(8)), &small));
  te_stage *st = tt_stage(b16, w->C); /* a copy: j is split by 8 already */
  te_iter *o, *in;
  TT_OK(te_split(st, te_leaf(st, 1), 2, &o, &in));
  TT_OK(te_unroll(st, in));
  TT_OK(te_parallel(tt_stage(s, w->C), te_axis(tt_stage(s, w->C), 0)));
  return s;
}

static void run_axpb(te_module *m, int64_t h, int64_t wd) {
  tt_note("M x N = %lld x %lld", (long long)h, (long long)wd);
  tt_buf *a = TT_ALLOC(TE_F32, h, wd), *b = TT_ALLOC(TE_F32, h, wd);
  tt_buf *got = TT_ALLOC(TE_F32, h, wd), *ref = TT_ALLOC(TE_F32, h, wd);
  tt_fill(a, (uint64_t)(h * 7 + wd));
  tt_fill(b, (uint64_t)(h * 11 + wd));
  for (int64_t p = 0; p < h * wd; p++)
    tt_set(ref, p, tt_get(a, p) * 3 + tt_get(b, p));
  tt_poison(got);
  tt_call(m, "axpb", 3, TT_BUFS(a, b, got), 0, NULL);
  tt_assert_close(got, ref, 1);
}

/* Every branch taken: N = 32, 16 (the multiple of 16), 5, 1 (small), 21, 8, 9 (general). */
Test(specialize, each_branch_matches_c) {
  axpb w = make_axpb(false);
  te_module *m = tt_build(three_ways(&w), "axpb", 3, TT_TENSORS(w.A, w.B, w.C), 0, NULL);
  static const int64_t shapes[][2] = {{3, 32}, {1, 16}, {5, 5}, {2, 1}, {7, 21}, {4, 8}, {3, 9}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
    run_axpb(m, shapes[k][0], shapes[k][1]);
}

/* The text of a branch: from its "if (COND) {" / "} else if (COND) {" line to the next branch
   line at the same depth (malloc'd). */
static char *branch_text(const char *ir, const char *head) {
  const char *b = strstr(ir, head);
  cr_assert(b, "no branch '%s' in\n%s", head, ir);
  const char *e = strstr(b + strlen(head), "} else");
  size_t n = e ? (size_t)(e - b) : strlen(b);
  char *out = malloc(n + 1);
  memcpy(out, b, n);
  out[n] = '\0';
  return out;
}

/* Under N % 16 == 0 the split by 8 (and then by 2) has no tail: no vector mask, no tail loop;
   the general schedule keeps its masked tail. */
Test(specialize, multiple_of_16_loses_the_tail) {
  axpb w = make_axpb(false);
  te_schedule *s = three_ways(&w);
  char *ir = TT_NN(te_lower_text(s, 3, TT_TENSORS(w.A, w.B, w.C), 0, NULL));
  char *b16 = branch_text(ir, "if (N%16 == 0) {");
  char *general = branch_text(ir, "} else {");
  cr_expect(strstr(b16, "let N_div16 = N//16"), "%s", b16);
  cr_expect(!strstr(b16, "vector_mask") && !strstr(b16, "likely") && !strstr(b16, "x7("),
            "the N %% 16 == 0 branch kept a tail:\n%s", b16);
  cr_expect(strstr(general, "vector_mask"), "the general schedule lost its tail:\n%s", general);
  char *small = branch_text(ir, "} else if (N < 8) {");
  cr_expect(strstr(small, "vector_mask") && !strstr(small, "for (j.o"),
            "N < 8: one masked vector per row expected:\n%s", small);
  free(b16), free(general), free(small), te_free(ir);
}

/* A symbolic innermost stride: under cs == 1 the loads of A are contiguous ramps (the LLVM IR
   has a <8 x float> load of A), the general path gathers with stride cs. */
Test(specialize, unit_stride_gives_contiguous_loads) {
  axpb w = make_axpb(true);
  te_tensor *ts[] = {w.A, w.B, w.C};
  te_schedule *s = tt_schedule1(w.C), *unit;
  split_vectorize(s, w.C, 1, 8);
  TT_OK(te_specialize(s, te_eq(w.cs, i64(1)), &unit));
  char *ir = TT_NN(te_lower_text(s, 3, ts, 0, NULL));
  char *fast = branch_text(ir, "if (cs == 1) {"), *general = branch_text(ir, "} else {");
  /* A's load, then its multiply (the loop variables print with suffixes: two schedules' j.o) */
  cr_expect(strstr(fast, " + i*rs, 1, 8)]*x8(3.0f)") && !strstr(fast + 14, "cs"), "%s", fast);
  cr_expect(strstr(general, " + i*rs, cs, 8)]*x8(3.0f)"), "%s", general);
  free(fast), free(general), te_free(ir);

  te_module *m = tt_build(s, "axpb", 3, ts, 0, NULL);
  te_schedule *plain = tt_schedule1(w.C);
  split_vectorize(plain, w.C, 1, 8);
  te_module *mp = tt_build(plain, "axpb", 3, ts, 0, NULL);
  const char *ll = te_module_source(m, "ll"), *llp = te_module_source(mp, "ll");
  cr_assert(ll && llp);
  /* B's loads are contiguous in both; count the vector loads: the specialized kernel has A's too */
  int nspec = 0, nplain = 0;
  for (const char *p = ll; (p = strstr(p, "load <8 x float>")); p++)
    nspec++;
  for (const char *p = llp; (p = strstr(p, "load <8 x float>")); p++)
    nplain++;
  cr_expect(nspec > nplain, "contiguous <8 x float> loads: %d specialized, %d general", nspec,
            nplain);

  /* numbers through both paths: a crop (cs = 1) and a transposed view (cs = M) */
  int64_t H = 6, W = 13;
  tt_buf *base = TT_ALLOC(TE_F32, H, W);
  tt_fill(base, 3);
  for (int path = 0; path < 2; path++) {
    int64_t h = path ? W : 4, wd = path ? H : 11; /* crop: rows 1.., columns 2..; transpose */
    DLTensor av = base->dl;
    int64_t shape[2] = {h, wd}, strides[2] = {path ? 1 : W, path ? W : 1};
    av.shape = shape;
    av.strides = strides;
    av.byte_offset = path ? 0 : (uint64_t)(W + 2) * 4;
    tt_buf *b = TT_ALLOC(TE_F32, h, wd), *got = TT_ALLOC(TE_F32, h, wd);
    tt_buf *ref = TT_ALLOC(TE_F32, h, wd);
    tt_fill(b, 9);
    for (int64_t p = 0; p < h; p++)
      for (int64_t q = 0; q < wd; q++) {
        int64_t at = (int64_t)(av.byte_offset / 4) + p * strides[0] + q * strides[1];
        tt_set(ref, p * wd + q, tt_get(base, at) * 3 + tt_get(b, p * wd + q));
      }
    tt_poison(got);
    DLTensor *args[3] = {&av, &b->dl, &got->dl};
    tt_note("%s", path ? "transposed view (cs = M)" : "crop (cs = 1)");
    TT_OK(te_module_call(m, "axpb", 3, args, 0, NULL));
    tt_assert_close(got, ref, 1);
  }
}

/* A condition over a scalar parameter: alpha_is_one selects a branch that does not multiply. */
Test(specialize, integer_parameter) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_expr *k = te_param(tt_ctx, "k", TE_I64);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_mul(tt_at1(A, i), te_cast(TE_F32, k))));
  te_schedule *s = tt_schedule1(C), *b;
  TT_OK(te_specialize(s, te_eq(k, i64(1)), &b));
  te_tensor *ts[] = {A, C};
  char *ir = TT_NN(te_lower_text(s, 2, ts, 1, TE_EXPRS(k)));
  char *one = branch_text(ir, "if (k == 1) {");
  cr_expect(strstr(one, "C[i] = A[i]\n"), "k == 1 should leave a copy:\n%s", one);
  free(one), te_free(ir);
  te_module *m = tt_build(s, "scale", 2, ts, 1, TE_EXPRS(k));
  for (int64_t kv = 0; kv < 3; kv++) {
    tt_buf *a = TT_ALLOC(TE_F32, 19), *got = TT_ALLOC(TE_F32, 19), *ref = TT_ALLOC(TE_F32, 19);
    tt_fill(a, 5);
    for (int p = 0; p < 19; p++)
      tt_set(ref, p, tt_get(a, p) * (double)kv);
    tt_poison(got);
    tt_note("k = %lld", (long long)kv);
    tt_call(m, "scale", 2, TT_BUFS(a, got), 1, (const void *const[]){&kv});
    tt_assert_close(got, ref, 1);
  }
}

/* N >= 1 always holds (a size): the branch is the whole kernel; N < 1 never: it is dropped. */
Test(specialize, constant_conditions) {
  axpb w = make_axpb(false);
  te_tensor *ts[] = {w.A, w.B, w.C};
  te_schedule *s = tt_schedule1(w.C), *never, *always;
  TT_OK(te_specialize(s, te_lt(w.N, i64(1)), &never));
  split_vectorize(never, w.C, 1, 4);
  TT_OK(te_specialize(s, te_ge(w.N, i64(1)), &always));
  split_vectorize(always, w.C, 1, 8);
  char *ir = TT_NN(te_lower_text(s, 3, ts, 0, NULL));
  cr_expect(!strstr(ir, "if (") && strstr(ir, "x8(") && !strstr(ir, "x4("), "%s", ir);
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(trace, "specialize false {\n  split C j 4\n  vectorize C j.i\n}\n"
                          "specialize true {\n  split C j 8\n  vectorize C j.i\n}\n");
  te_free(trace), te_free(ir);
  te_module *m = tt_build(s, "axpb", 3, ts, 0, NULL);
  run_axpb(m, 3, 13);
}

/* Nested branches and steps after te_specialize: the trace writes each block where it was made
   and replays to the same trace and the same loop nest; the replayed kernel computes the same. */
Test(specialize, trace_round_trip) {
  axpb w = make_axpb(false);
  te_tensor *ts[] = {w.A, w.B, w.C};
  te_schedule *s = three_ways(&w), *inner;
  te_schedule *t = tt_schedule1(w.C);
  char *trace = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(trace, "split C j 8\n"
                          "vectorize C j.i\n"
                          "specialize N%16 == 0 {\n"
                          "  split C j.o 2\n"
                          "  unroll C j.o.i\n"
                          "}\n"
                          "specialize N < 8 {\n"
                          "}\n"
                          "parallel C i\n");
  TT_OK(te_schedule_replay(t, trace));
  /* nested specializations on the replayed copy */
  TT_OK(te_specialize(t, te_and(te_eq(w.M, i64(1)), te_eq(te_floormod(w.N, i64(32)), i64(0))),
                      &inner));
  te_schedule *deeper;
  TT_OK(te_specialize(inner, te_lt(w.N, i64(4096)), &deeper));
  te_iter *o, *in;
  TT_OK(te_split(tt_stage(deeper, w.C), te_leaf(tt_stage(deeper, w.C), 0), 2, &o, &in));
  char *t2 = TT_NN(te_schedule_trace(t));
  te_schedule *u = tt_schedule1(w.C);
  TT_OK(te_schedule_replay(u, t2));
  char *t3 = TT_NN(te_schedule_trace(u));
  cr_expect_str_eq(t3, t2);
  cr_expect(strstr(t3,
                   "specialize M == 1 && N%32 == 0 {\n  specialize N < 4096 {\n    split C i 2\n"
                   "  }\n}\n"),
            "%s", t3);
  char *ir2 = TT_NN(te_lower_text(t, 3, ts, 0, NULL)),
       *ir3 = TT_NN(te_lower_text(u, 3, ts, 0, NULL));
  cr_expect_str_eq(ir3, ir2);
  te_module *m = tt_build(u, "axpb", 3, ts, 0, NULL);
  static const int64_t shapes[][2] = {{1, 64}, {1, 8192}, {2, 32}, {1, 16}, {3, 3}, {2, 19}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
    run_axpb(m, shapes[k][0], shapes[k][1]);
  te_free(trace), te_free(t2), te_free(t3), te_free(ir2), te_free(ir3);
}

/* s into a JSON string literal's contents. */
static void json_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '\n')
      fputs("\\n", f);
    else if (*s == '"' || *s == '\\')
      fprintf(f, "\\%c", *s);
    else
      fputc(*s, f);
  }
}

/* A tuning log record whose trace holds a specialize block: te_apply_best replays the branch.
   Tuning needs constant shapes, where a condition over sizes folds to a constant: the block is
   "specialize true {" and its branch is the kernel (a symbolic workload's buckets:
   test/unit/test_tune_buckets.c). */
Test(specialize, apply_best_replays_branches) {
  axpb w;
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  w.A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(i64(2), i64(48))));
  w.B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(i64(2), i64(48))));
  w.C = TT_NN(te_compute(
      tt_ctx, "C", 2, TE_EXPRS(i64(2), i64(48)), TE_EXPRS(i, j),
      te_add(te_mul(tt_at2(w.A, i, j), te_float(tt_ctx, TE_F32, 3)), tt_at2(w.B, i, j))));
  te_schedule *tuned = tt_schedule1(w.C), *b;
  TT_OK(te_specialize(tuned, te_eq(te_floormod(te_tensor_dim(w.A, 1), i64(16)), i64(0)), &b));
  split_vectorize(b, w.C, 1, 16);
  char *trace = TT_NN(te_schedule_trace(tuned));
  char *text = TT_NN(te_workload_text(1, &w.C));
  char path[] = "/tmp/te_specialize_log_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\"version\":1,\"workload\":{\"key\":\"%016llx\",\"text\":\"",
          (unsigned long long)te_workload_hash(text));
  json_escaped(f, text);
  fprintf(f, "\"},\"target\":\"%s\",\"trace\":\"", te_target_str(tt_target()));
  json_escaped(f, trace);
  fprintf(f, "\",\"result\":{\"costs\":[1e-6],\"error\":0}}\n");
  fclose(f);
  te_schedule *s = tt_schedule1(w.C);
  TT_OK(te_apply_best(s, path, tt_target()));
  unlink(path);
  char *got = TT_NN(te_schedule_trace(s));
  cr_expect_str_eq(got, trace);
  te_module *m = tt_build(s, "axpb", 3, TT_TENSORS(w.A, w.B, w.C), 0, NULL);
  cr_expect_str_eq(got, "specialize true {\n  split C j 16\n  vectorize C j.i\n}\n");
  run_axpb(m, 2, 48);
  te_free(got), te_free(text), te_free(trace);
}
