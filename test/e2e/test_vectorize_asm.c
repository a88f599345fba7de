/* test_vectorize_asm.c — a vectorized loop becomes vector instructions of the target's width in
 * the emitted assembly: a matmul whose inner j loop is vectorized by 16 f32 lanes gives zmm FMAs
 * and loads/stores for an AVX-512 CPU (skylake-avx512, and the host when it has AVX-512F), ymm
 * ones and no zmm for an AVX2 CPU (haswell, where 16 lanes are two registers); an exp over a
 * vectorized loop calls no libm function. The targets need not be the host: te writes their
 * assembly without running it.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(vectorize_asm, .init = tt_setup, .fini = tt_teardown);

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

/* Lines of asm holding every needle. */
static int count_lines(const char *text, const char *a, const char *b) {
  int n = 0;
  for (const char *p = text; p && *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char line[512];
    size_t l = len < sizeof line - 1 ? len : sizeof line - 1;
    memcpy(line, p, l);
    line[l] = '\0';
    if (strstr(line, a) && (!b || strstr(line, b)))
      n++;
    p = end ? end + 1 : NULL;
  }
  return n;
}

/* The asm of s built for target under name. */
static const char *asm_of(te_schedule *s, te_tensor *const abc[3], const char *name,
                          const char *target) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  TT_OK(te_build(s, name, 3, abc, 0, NULL, t, &m));
  return TT_NN((void *)te_module_source(m, "asm"));
}

/* The asm of C = A x B (64^3, f32) tiled 4x16 with j.i vectorized, for target. */
static const char *matmul_asm(const char *target) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(64, 64));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(64, 64));
  te_tensor *C = tt_matmul(A, B, 64, 64, 64);
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *io, *jo, *ii, *ji;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 4, 16, &io, &jo, &ii, &ji));
  TT_OK(te_reorder(st, 5, (te_iter *const[]){io, jo, te_reduce_iter(st, 0), ii, ji}));
  TT_OK(te_unroll(st, ii));
  TT_OK(te_vectorize(st, ji));
  return asm_of(s, TT_TENSORS(A, B, C), "mm", target);
}

Test(vectorize_asm, avx512_uses_zmm) {
  const char *text = matmul_asm("llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512");
  cr_expect_gt(count_lines(text, "vfmadd", "ps"), 0, "no FMA in:\n%s", text);
  cr_expect_gt(count_lines(text, "vfmadd", "%zmm"), 0, "no zmm FMA in:\n%s", text);
  cr_expect_gt(count_lines(text, "vmovups", "%zmm"), 0, "no zmm load/store in:\n%s", text);
}

Test(vectorize_asm, avx2_uses_ymm) {
  const char *text = matmul_asm("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell");
  cr_expect_gt(count_lines(text, "vfmadd", "%ymm"), 0, "no ymm FMA in:\n%s", text);
  cr_expect_eq(count_lines(text, "%zmm", NULL), 0, "zmm on an AVX2 target:\n%s", text);
}

Test(vectorize_asm, host_with_avx512_uses_zmm) {
  te_target *host = tt_target();
  if (!strstr(te_target_str(host), "+avx512f") || te_target_vector_bits(host) < 512)
    tt_skip("avx512", "the host has no AVX-512F (%s)", te_target_str(host));
  const char *text = matmul_asm("llvm");
  cr_expect_gt(count_lines(text, "vfmadd", "%zmm"), 0, "no zmm FMA in:\n%s", text);
}

Test(vectorize_asm, target_vector_bits) {
  cr_expect_eq(te_target_vector_bits(TT_NN(
                   te_target_parse(tt_ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"))),
               512);
  cr_expect_eq(te_target_vector_bits(
                   TT_NN(te_target_parse(tt_ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"))),
               256);
  cr_expect_eq(te_target_vector_bits(NULL), 0);
}

/* exp of a vectorized loop is inline vector code: no call to expf. */
Test(vectorize_asm, vector_exp_calls_no_libm) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(1024));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(I(1024)), TE_EXPRS(i),
                                  te_call(tt_ctx, "exp", 1, TE_EXPRS(tt_at1(A, i)))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), 16, &o, &in));
  TT_OK(te_vectorize(st, in));
  te_target *t =
      TT_NN(te_target_parse(tt_ctx, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"));
  te_module *m = NULL;
  TT_OK(te_build(s, "vexp", 2, TT_TENSORS(A, C), 0, NULL, t, &m));
  const char *text = TT_NN((void *)te_module_source(m, "asm"));
  cr_expect_eq(count_lines(text, "expf", NULL), 0, "a call to expf:\n%s", text);
  cr_expect_gt(count_lines(text, "vfmadd", "%zmm"), 0, "no zmm polynomial in:\n%s", text);
}

/* Accesses carry the alignment the analysis proves: a producer computed per row into a local
   buffer (64-byte aligned by te; 8 KiB, so on the heap and not promoted to registers) is
   accessed with `align 64` by 16-lane vectors at multiples of 16; arguments are only known
   element-aligned (`align 4`). */
Test(vectorize_asm, aligned_local_buffer) {
  enum { M = 8, N = 2048 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  te_mul(tt_at2(A, i, j), tt_at2(A, i, j))));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  te_add(tt_at2(P, i, j), te_float(tt_ctx, TE_F32, 1))));
  te_schedule *s = tt_schedule1(C);
  te_stage *sc = tt_stage(s, C), *sp = tt_stage(s, P);
  te_iter *o, *in, *po, *pin;
  TT_OK(te_split(sc, te_axis(sc, 1), 16, &o, &in));
  TT_OK(te_vectorize(sc, in));
  TT_OK(te_compute_at(sp, sc, te_axis(sc, 0)));
  TT_OK(te_split(sp, te_axis(sp, 1), 16, &po, &pin));
  TT_OK(te_vectorize(sp, pin));
  te_module *m = tt_build(s, "al", 2, TT_TENSORS(A, C), 0, NULL);
  const char *ll = TT_NN((void *)te_module_source(m, "ll"));
  cr_expect_gt(count_lines(ll, "<16 x float>", "align 64"), 0, "no aligned vector access:\n%s", ll);
  cr_expect_gt(count_lines(ll, "load <16 x float>", "align 4"), 0, "no argument access:\n%s", ll);
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 5);
  for (int p = 0; p < M * N; p++)
    tt_set(ref, p, tt_get(a, p) * tt_get(a, p) + 1);
  tt_poison(got);
  tt_call(m, "al", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, 1);
}

/* An M x N x K matmul C accumulated in a local block (te_cache_write) computed at C's column
   tile j.o, its loops k, i, j (j innermost): the tiles are cut by rows x cols (rows 0: no
   row tile). Returns the schedule, the tensors in *abc and the block's stage in *sl. */
static te_schedule *local_block_matmul(int M, int N, int K, int rows, int cols, te_tensor *abc[3],
                                       te_stage **sl) {
  abc[0] = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  abc[1] = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  abc[2] = tt_matmul(abc[0], abc[1], M, N, K);
  te_schedule *s = tt_schedule1(abc[2]);
  te_tensor *cl = NULL;
  TT_OK(te_cache_write(s, abc[2], TE_SCOPE_LOCAL, &cl));
  te_stage *sc = tt_stage(s, abc[2]);
  *sl = tt_stage(s, cl);
  te_iter *io, *jo, *ii, *ji;
  if (rows)
    TT_OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), rows, cols, &io, &jo, &ii, &ji));
  else
    TT_OK(te_split(sc, te_axis(sc, 1), cols, &jo, &ji));
  TT_OK(te_compute_at(*sl, sc, jo));
  TT_OK(te_reorder(*sl, 3,
                   (te_iter *const[]){te_reduce_iter(*sl, 0), te_axis(*sl, 0), te_axis(*sl, 1)}));
  return s;
}

/* The values of s (local_block_matmul's) against plain C on inputs filled with seeds. */
static void check_matmul(te_schedule *s, te_tensor *const abc[3], int M, int N, int K, int seed) {
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, seed);
  tt_fill(b, seed + 1);
  tt_ref_matmul(a, b, ref, M, N, K);
  tt_check(s, 3, abc, TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
}

/* A local accumulator at a tile whose last one is short (20 columns, tiles of 8): its extent is
   a clamp, min(j.o*8 + 7, 19) - j.o*8 + 1, and its vector has the tile's 8 lanes (masked in the
   last tile), not the 20 of interval arithmetic; the row operand, the same element in every
   lane, is one scalar load and a broadcast even under the mask, not a gather. Same values as
   plain C. */
Test(vectorize_asm, clamped_tile_vector_and_broadcast_operand) {
  enum { M = 6, N = 20, K = 5 };
  te_tensor *abc[3];
  te_stage *sl;
  te_schedule *s = local_block_matmul(M, N, K, 0, 8, abc, &sl);
  TT_OK(te_vectorize(sl, te_axis(sl, 1)));
  char *ir = te_lower_text(s, 3, abc, 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  cr_expect(strstr(ir, ", 1, 8)") != NULL, "%s", ir);
  cr_expect(strstr(ir, ", 1, 20)") == NULL, "%s", ir);
  te_free(ir);
  const char *text = asm_of(s, abc, "ct", "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512");
  cr_expect_eq(count_lines(text, "gather", NULL), 0, "a gather in:\n%s", text);
  check_matmul(s, abc, M, N, K, 1);
}

/* A register tile of 4 rows x 24 lanes (three ymm vectors on AVX2) accumulated in a local block
   over k: LLVM keeps the accumulators in registers across the k loop only in vectors whose
   length is a power of two (24 lanes it carried as 24 scalars, rebuilt with vinsertps every
   step: 4 GFLOP/s where 6 x 16 ran 56), so the vectorize pass cuts the 24 lanes into three
   8-lane pieces. The asm has the 12 FMAs of a k step and no lane inserts; 53 columns leave a
   short last tile (masked). Same values as plain C. */
Test(vectorize_asm, lanes_not_a_power_of_two_stay_in_registers) {
  enum { M = 8, N = 53, K = 37 };
  te_tensor *abc[3];
  te_stage *sl;
  te_schedule *s = local_block_matmul(M, N, K, 4, 24, abc, &sl);
  TT_OK(te_unroll(sl, te_axis(sl, 0)));
  TT_OK(te_vectorize(sl, te_axis(sl, 1)));
  const char *text = asm_of(s, abc, "p24", "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell");
  cr_expect_eq(count_lines(text, "vinsertps", NULL), 0, "lanes inserted one by one:\n%s", text);
  cr_expect_geq(count_lines(text, "vfmadd", "%ymm"), 12, "fewer than 12 ymm FMAs:\n%s", text);
  check_matmul(s, abc, M, N, K, 3);
}
