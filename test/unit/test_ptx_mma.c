/* test_ptx_mma.c — te_tensorize(stage, loop, "mma_m16n8k16") and "mma_m16n8k32" (s8/u8 into
 * s32) on the cuda target, without a GPU.
 *
 *   - the lowered kernel: the tile nest is one mma_m16n8k16 store, the kernel runs a warp per
 *     thread (4 warps: 128 hardware threads a block), its other stores in lane 0;
 *   - the PTX for sm_80 and sm_90 holds mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}
 *     (m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32 for the integer tile) and
 *     bar.warp.sync, and ptxas assembles it (a skip line without ptxas, a failure under
 *     TE_REQUIRE=ptxas);
 *   - numerics by emulation (nothing here runs on a GPU): the lowered kernel body is
 *     interpreted thread by thread (ir_eval for expressions, a small statement walker here),
 *     each mma store emulated as 32 lanes that gather their fragments with the back end's
 *     layout (codegen/ptx_mma.h), a "tensor core" that reads the fragments back through the
 *     PTX ISA's layout as the ISA writes it (conditions, not ptx_mma.h's bit tricks) and
 *     scatters D; the result is compared with a plain f64 GEMM of the same f16/bf16 inputs
 *     (an exact int64 GEMM of the 8-bit inputs for m16n8k32).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/ptx_mma.h"
#include "gpu_cases.h"
#include "ir_eval.h"
#include "lower/gpu_lower.h"
#include "te_test.h"
#include "te_test_half.h"

/* ---- the PTX ISA's layout, written as the ISA states it ---- */

static void isa_a(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane % 4;
  *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  *col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
}
static void isa_b(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane % 4;
  *row = i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
  *col = g;
}
static void isa_c(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane % 4;
  *row = i < 2 ? g : g + 8;
  *col = t * 2 + (i & 1);
}

/* m16n8k32 with .s8/.u8 inputs */
static void isa8_a(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane % 4;
  *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
  *col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
}
static void isa8_b(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane % 4;
  *row = i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
  *col = g;
}

typedef void (*pos_fn)(int, int, int *, int *);

static void check_layout(const char *what, pos_fn te, pos_fn isa, int elems, int rows, int cols) {
  int seen[32][32] = {{0}};
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < elems; i++) {
      int r, c, r2, c2;
      te(lane, i, &r, &c);
      isa(lane, i, &r2, &c2);
      cr_assert(r == r2 && c == c2, "%s lane %d element %d: te (%d, %d), ISA (%d, %d)", what, lane,
                i, r, c, r2, c2);
      cr_assert(r >= 0 && r < rows && c >= 0 && c < cols);
      seen[r][c]++;
    }
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      cr_assert_eq(seen[r][c], 1, "%s (%d, %d) is held %d times", what, r, c, seen[r][c]);
}

Test(mma_layout, fragments_match_isa_and_cover_each_element_once) {
  check_layout("A", ptx_mma_a_pos, isa_a, PTX_MMA_A_ELEMS, 16, 16);
  check_layout("B", ptx_mma_b_pos, isa_b, PTX_MMA_B_ELEMS, 16, 8);
  check_layout("C", ptx_mma_c_pos, isa_c, PTX_MMA_C_ELEMS, 16, 8);
}

Test(mma_layout, int8_fragments_match_isa_and_cover_each_element_once) {
  check_layout("A (m16n8k32)", ptx_mma8_a_pos, isa8_a, PTX_MMA8_A_ELEMS, 16, 32);
  check_layout("B (m16n8k32)", ptx_mma8_b_pos, isa8_b, PTX_MMA8_B_ELEMS, 32, 8);
}

/* ---- an interpreter of one kernel's body ---- */

typedef struct mem {
  int n;
  ir_buffer *buf[8];
  double *data[8];
  int64_t count[8];
} mem;

static double *mem_of(mem *m, ir_buffer *b, int64_t index) {
  for (int i = 0; i < m->n; i++)
    if (m->buf[i] == b) {
      cr_assert(index >= 0 && index < m->count[i], "%s[%lld] is out of bounds", b->name,
                (long long)index);
      return &m->data[i][index];
    }
  cr_assert_fail("buffer %s is not bound", b->name);
  return NULL;
}

static bool mem_load(void *user, ir_buffer *b, int64_t index, ir_eval_val *out) {
  out->f = *mem_of(user, b, index);
  return true;
}

typedef struct interp {
  mem *m;
  int n;
  te_expr *vars[32];
  ir_eval_val vals[32];
  int mma_calls;
} interp;

static ir_eval_env env_of(interp *in) {
  return (ir_eval_env){
      .n = in->n, .vars = in->vars, .vals = in->vals, .load = mem_load, .user = in->m};
}

static int64_t eval_i(interp *in, te_expr *e) {
  ir_eval_env env = env_of(in);
  int64_t v;
  cr_assert(ir_eval_i64(&env, e, &v), "cannot evaluate an index");
  return v;
}

static double eval_f(interp *in, te_expr *e) {
  ir_eval_env env = env_of(in);
  ir_eval_val v;
  cr_assert(ir_eval(&env, e, 0, &v), "cannot evaluate a value");
  return ir_is_float(e->dtype) ? v.f : (double)v.i;
}

/* The warp's mma: 32 lanes gather with te's layout, the "hardware" reads the registers with the
   ISA's, f32 products of the 16-bit inputs summed in f32 (a tensor core sums with at least f32
   precision; the test's tolerance covers the order). */
/* m16n8k32: the same with 16 bytes of A and 8 of B a lane, products and sums in i32 (wrapping;
   computed in int64 and wrapped once, the same modulo 2^32). */
static void emulate_mma8(interp *in, ir_stmt *s) {
  te_expr *const *a = s->exprs[0]->args;
  int64_t c0 = eval_i(in, a[0]->args[0]), a0 = eval_i(in, a[3]->args[0]),
          b0 = eval_i(in, a[6]->args[0]);
  int64_t cs[2] = {eval_i(in, a[1]), eval_i(in, a[2])},
          as[2] = {eval_i(in, a[4]), eval_i(in, a[5])},
          bs[2] = {eval_i(in, a[7]), eval_i(in, a[8])};
  int64_t fa[32][16], fb[32][8], fc[32][4];
  for (int lane = 0; lane < 32; lane++) {
    int r, c;
    for (int i = 0; i < 16; i++)
      ptx_mma8_a_pos(lane, i, &r, &c),
          fa[lane][i] = (int64_t)*mem_of(in->m, a[3]->u.buffer, a0 + r * as[0] + c * as[1]);
    for (int i = 0; i < 8; i++)
      ptx_mma8_b_pos(lane, i, &r, &c),
          fb[lane][i] = (int64_t)*mem_of(in->m, a[6]->u.buffer, b0 + r * bs[0] + c * bs[1]);
    for (int i = 0; i < 4; i++) {
      ptx_mma_c_pos(lane, i, &r, &c);
      double v = *mem_of(in->m, a[0]->u.buffer, c0 + r * cs[0] + c * cs[1]);
      cr_assert(!isnan(v), "C[%d, %d] is read before it is written", r, c);
      fc[lane][i] = (int64_t)v;
    }
  }
  int64_t A[16][32], B[32][8], C[16][8];
  for (int lane = 0; lane < 32; lane++) {
    int r, c;
    for (int i = 0; i < 16; i++)
      isa8_a(lane, i, &r, &c), A[r][c] = fa[lane][i];
    for (int i = 0; i < 8; i++)
      isa8_b(lane, i, &r, &c), B[r][c] = fb[lane][i];
    for (int i = 0; i < 4; i++)
      isa_c(lane, i, &r, &c), C[r][c] = fc[lane][i];
  }
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int r, c;
      isa_c(lane, i, &r, &c);
      int64_t d = C[r][c];
      for (int k = 0; k < 32; k++)
        d += A[r][k] * B[k][c];
      ptx_mma_c_pos(lane, i, &r, &c);
      *mem_of(in->m, a[0]->u.buffer, c0 + r * cs[0] + c * cs[1]) = (double)(int32_t)(uint32_t)d;
    }
  in->mma_calls++;
}

static void emulate_mma(interp *in, ir_stmt *s) {
  if (s->exprs[0]->u.call == IR_INTRIN_MMA_M16N8K32) {
    emulate_mma8(in, s);
    return;
  }
  te_expr *const *a = s->exprs[0]->args;
  int64_t c0 = eval_i(in, a[0]->args[0]), a0 = eval_i(in, a[3]->args[0]),
          b0 = eval_i(in, a[6]->args[0]);
  int64_t cs[2] = {eval_i(in, a[1]), eval_i(in, a[2])},
          as[2] = {eval_i(in, a[4]), eval_i(in, a[5])},
          bs[2] = {eval_i(in, a[7]), eval_i(in, a[8])};
  float fa[32][8], fb[32][4], fc[32][4];
  for (int lane = 0; lane < 32; lane++) {
    int r, c;
    for (int i = 0; i < 8; i++)
      ptx_mma_a_pos(lane, i, &r, &c),
          fa[lane][i] = (float)*mem_of(in->m, a[3]->u.buffer, a0 + r * as[0] + c * as[1]);
    for (int i = 0; i < 4; i++)
      ptx_mma_b_pos(lane, i, &r, &c),
          fb[lane][i] = (float)*mem_of(in->m, a[6]->u.buffer, b0 + r * bs[0] + c * bs[1]);
    for (int i = 0; i < 4; i++)
      ptx_mma_c_pos(lane, i, &r, &c),
          fc[lane][i] = (float)*mem_of(in->m, a[0]->u.buffer, c0 + r * cs[0] + c * cs[1]);
  }
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < 32; lane++) {
    int r, c;
    for (int i = 0; i < 8; i++)
      isa_a(lane, i, &r, &c), A[r][c] = fa[lane][i];
    for (int i = 0; i < 4; i++)
      isa_b(lane, i, &r, &c), B[r][c] = fb[lane][i];
    for (int i = 0; i < 4; i++)
      isa_c(lane, i, &r, &c), C[r][c] = fc[lane][i];
  }
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int r, c;
      isa_c(lane, i, &r, &c);
      float d = C[r][c];
      for (int k = 0; k < 16; k++)
        d += A[r][k] * B[k][c];
      ptx_mma_c_pos(lane, i, &r, &c); /* the back end stores D where it loaded C from */
      *mem_of(in->m, a[0]->u.buffer, c0 + r * cs[0] + c * cs[1]) = d;
    }
  in->mma_calls++;
}

static void run_stmt(interp *in, ir_stmt *s) {
  if (!s)
    return;
  switch (s->kind) {
  case IR_S_SEQ:
    for (uint32_t i = 0; i < s->nstmts; i++)
      run_stmt(in, s->stmts[i]);
    return;
  case IR_S_FOR: {
    int64_t lo = eval_i(in, IR_FOR_MIN(s)), n = eval_i(in, IR_FOR_EXTENT(s));
    int slot = in->n++;
    in->vars[slot] = IR_FOR_VAR(s);
    for (int64_t v = lo; v < lo + n; v++) {
      in->vals[slot].i = v;
      run_stmt(in, IR_FOR_BODY(s));
    }
    in->n--;
    return;
  }
  case IR_S_LET_STMT: {
    int slot = in->n++;
    in->vars[slot] = s->exprs[0];
    ir_eval_env env = env_of(in);
    cr_assert(ir_eval(&env, s->exprs[1], 0, &in->vals[slot]));
    run_stmt(in, s->stmts[0]);
    in->n--;
    return;
  }
  case IR_S_IF:
    if (eval_i(in, s->exprs[0]))
      run_stmt(in, s->stmts[0]);
    else if (s->nstmts > 1)
      run_stmt(in, s->stmts[1]);
    return;
  case IR_S_STORE:
    cr_assert_eq(s->exprs[0]->dtype.lanes, 1);
    if (ir_is_mma_call(s->exprs[0])) {
      emulate_mma(in, s);
      return;
    }
    *mem_of(in->m, s->u.buffer, eval_i(in, s->exprs[1])) = eval_f(in, s->exprs[0]);
    return;
  case IR_S_ATTR:
  case IR_S_BARRIER:
  case IR_S_EVALUATE:
    if (s->nstmts > 0)
      run_stmt(in, s->stmts[0]);
    return;
  default:
    cr_assert_fail("the interpreter has no %s", ir_stmt_kind_name[s->kind]);
  }
}

/* Lowers the case for cuda and returns its one kernel (in the scratch arena). */
static lw_gpu_kernel *lower_mma(te_ctx *ctx, gpu_case *c, const char *target) {
  te_target *t = te_target_parse(ctx, target);
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  lw_func *f = NULL;
  cr_assert_eq(lw_lower(c->sch, c->name, c->ntensors, c->tensors, c->nscalars, c->scalars, t, &f),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert(f->gpu && f->gpu->nkernels == 1);
  return &f->gpu->kernels[0];
}

/* A random non-zero value of an 8-bit integer dtype (s8: -128..127, u8: 1..255), else of the
   16-bit float dtype. */
static double random_input(te_dtype t) {
  if (t.bits == 8) {
    int v = t.code == kDLInt ? rand() % 256 - 128 : rand() % 255 + 1;
    return v == 0 ? 1 : v;
  }
  return tt_half_decode(t, tt_half_encode(t, (rand() % 2000 - 1000) / 250.0 + 0.001));
}

/* The emulated kernel against a plain GEMM: b_t TE_F32 (unused) for the f16/bf16 tile, else
   the integer tile with A of in_t and B of b_t. */
static void check_numerics_ab(te_dtype in_t, te_dtype b_t, int64_t M, int64_t N, int64_t K,
                              int64_t tiles) {
  bool int8 = in_t.bits == 8;
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(int8 ? gpu_case_mma_int8(ctx, &c, in_t, b_t, M, N, K, 32, tiles)
                 : gpu_case_mma_gemm(ctx, &c, in_t, M, N, K, 16, tiles),
            "%s", te_last_error(ctx));
  ir_scratch_begin(ctx);
  lw_gpu_kernel *k = lower_mma(ctx, &c, "cuda");
  cr_assert_not_null(k->lane, "the kernel is not a warp kernel");
  int64_t grid[3], block[3];
  for (int d = 0; d < 3; d++) {
    cr_assert(ir_is_const_int(k->grid[d], &grid[d]) && ir_is_const_int(k->block[d], &block[d]));
  }
  cr_expect_eq(block[0], 4 * 32, "a block is 4 warps: %lld threads", (long long)block[0]);
  srand(17);
  mem m = {0};
  double *A = malloc(sizeof(double) * (size_t)(M * K)),
         *B = malloc(sizeof(double) * (size_t)(K * N)),
         *C = malloc(sizeof(double) * (size_t)(M * N));
  for (int64_t i = 0; i < M * K; i++) /* values of the inputs' types, non-zero */
    A[i] = random_input(in_t);
  for (int64_t i = 0; i < K * N; i++)
    B[i] = random_input(int8 ? b_t : in_t);
  for (int64_t i = 0; i < M * N; i++)
    C[i] = NAN; /* poisoned: every element must be written */
  for (int i = 0; i < k->nparams; i++) {
    ir_buffer *b = k->params[i].buffer;
    cr_assert(k->params[i].kind == LW_GPU_PARAM_BUFFER && b->arg_index >= 0 && b->arg_index < 3);
    m.buf[m.n] = b;
    m.data[m.n] = b->arg_index == 0 ? A : b->arg_index == 1 ? B : C;
    m.count[m.n++] = b->arg_index == 0 ? M * K : b->arg_index == 1 ? K * N : M * N;
  }
  interp in = {.m = &m};
  for (int d = 0; d < 3; d++) /* blockIdx.x/y/z, threadIdx.x/y/z in vars[0..5] */
    in.vars[d] = k->idx[d], in.vars[3 + d] = k->idx[3 + d];
  in.vars[6] = k->lane;
  in.n = 7;
  for (int i = 0; i < 7; i++)
    if (!in.vars[i])
      in.vars[i] = ir_var_new(ctx, "unused", TE_I64, IR_VAR_INDEX);
  in.vals[6].i = 0; /* the body's code as lane 0 runs it; the mma emulates all 32 lanes */
  for (int64_t bz = 0; bz < grid[2]; bz++)
    for (int64_t by = 0; by < grid[1]; by++)
      for (int64_t bx = 0; bx < grid[0]; bx++)
        for (int64_t tx = 0; tx < block[0] / 32; tx++) {
          in.vals[0].i = bx, in.vals[1].i = by, in.vals[2].i = bz;
          in.vals[3].i = tx, in.vals[4].i = 0, in.vals[5].i = 0;
          run_stmt(&in, k->body);
        }
  cr_expect_eq(in.mma_calls, (M / 16) * (N / 8) * (K / (int8 ? 32 : 16)), "%d mma calls",
               in.mma_calls);
  int bad = 0;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double ref = 0, mag = 0;
      for (int64_t q = 0; q < K; q++)
        ref += A[i * K + q] * B[q * N + j], mag += fabs(A[i * K + q] * B[q * N + j]);
      double got = C[i * N + j];
      bool ok = int8 ? got == ref : fabs(got - ref) <= 1e-5 * mag + 1e-6; /* integers exactly */
      if (!ok && bad++ < 5)
        cr_expect_fail("C[%lld, %lld] = %g, expected %g", (long long)i, (long long)j, got, ref);
    }
  cr_expect_eq(bad, 0, "%d of %lld elements differ", bad, (long long)(M * N));
  free(A), free(B), free(C);
  ir_scratch_end(ctx);
  te_ctx_free(ctx);
}

static void check_numerics(te_dtype in_t, int64_t M, int64_t N, int64_t K, int64_t tiles) {
  check_numerics_ab(in_t, TE_F32, M, N, K, tiles);
}

Test(mma_emulated, gemm_f16_64) { check_numerics(TE_F16, 64, 64, 64, 1); }
Test(mma_emulated, gemm_bf16_rectangular) { check_numerics(TE_BF16, 32, 96, 48, 1); }
/* bench_gpu.c's schedule: 4 tiles a warp */
Test(mma_emulated, gemm_f16_bench_schedule) { check_numerics(TE_F16, 32, 256, 64, 4); }
Test(mma_emulated, gemm_s8_s8_64) { check_numerics_ab(TE_I8, TE_I8, 64, 64, 64, 1); }
Test(mma_emulated, gemm_u8_u8_rectangular) { check_numerics_ab(TE_U8, TE_U8, 32, 96, 96, 1); }
Test(mma_emulated, gemm_u8_s8_two_tiles_a_warp) { check_numerics_ab(TE_U8, TE_I8, 32, 64, 128, 2); }
Test(mma_emulated, gemm_s8_u8) { check_numerics_ab(TE_I8, TE_U8, 16, 32, 32, 1); }

/* ---- the PTX ---- */

static void check_ptx(gpu_case_builder b, const char *insn) {
  const char *archs[2][2] = {{"cuda", "sm_80"}, {"cuda -arch=sm_90", "sm_90"}};
  for (int a = 0; a < 2; a++) {
    te_ctx *ctx = te_ctx_new();
    gpu_case c;
    cr_assert(b(ctx, &c), "%s", te_last_error(ctx));
    te_target *t = te_target_parse(ctx, archs[a][0]);
    te_module *m = NULL;
    cr_assert_eq(te_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL, t, &m), TE_OK, "%s",
                 te_last_error(ctx));
    const char *ptx = te_module_source(m, "ptx");
    cr_assert_not_null(ptx);
    cr_expect(strstr(ptx, insn), "no '%s' in\n%s", insn, ptx);
    cr_expect(strstr(ptx, "bar.warp.sync"), "no bar.warp.sync in\n%s", ptx);
    /* each mma's D goes to memory before the warp's sync (other lanes read it after), never
       kept in registers across it (LLVM did that while the buffers were noalias) */
    for (const char *at = strstr(ptx, "mma.sync"); at; at = strstr(at + 1, "mma.sync")) {
      const char *sync = strstr(at, "bar.warp.sync"), *st = strstr(at, "st.global");
      cr_expect(sync && st && st < sync, "an mma's results are not stored before the next sync");
    }
    cr_expect(strstr(ptx, ".entry gpu_mma_kernel0("), "no kernel entry");
    char what[120];
    snprintf(what, sizeof what, "%s (%s)", insn, archs[a][1]);
    tt_ptxas_assemble(what, ptx, archs[a][1]);
    te_ctx_free(ctx);
  }
}

Test(ptx_mma, f16_sm80_sm90) {
  check_ptx(gpu_case_mma_f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
}
Test(ptx_mma, bf16_sm80_sm90) {
  check_ptx(gpu_case_mma_bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
}

static bool case_s8s8(te_ctx *ctx, gpu_case *c) {
  return gpu_case_mma_int8(ctx, c, TE_I8, TE_I8, 64, 64, 64, 32, 1);
}
static bool case_u8u8(te_ctx *ctx, gpu_case *c) {
  return gpu_case_mma_int8(ctx, c, TE_U8, TE_U8, 64, 64, 64, 32, 2);
}
static bool case_u8s8(te_ctx *ctx, gpu_case *c) {
  return gpu_case_mma_int8(ctx, c, TE_U8, TE_I8, 32, 64, 96, 32, 1);
}

Test(ptx_mma, s8_sm80_sm90) {
  check_ptx(case_s8s8, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32");
}
Test(ptx_mma, u8_sm80_sm90) {
  check_ptx(case_u8u8, "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32");
}
Test(ptx_mma, u8_s8_sm80_sm90) {
  check_ptx(case_u8s8, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32");
}

Test(ptx_mma, lowered_text_shows_the_warp_kernel) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(gpu_case_mma_f16(ctx, &c), "%s", te_last_error(ctx));
  char *text =
      te_lower_text_for(c.sch, te_target_parse(ctx, "cuda"), c.ntensors, c.tensors, 0, NULL);
  cr_assert_not_null(text, "%s", te_last_error(ctx));
  cr_expect(strstr(text, "mma_m16n8k16(C["), "no mma call in\n%s", text);
  cr_expect(strstr(text, "laneid == 0"), "the other stores are not in lane 0:\n%s", text);
  cr_expect(strstr(text, "block(128, 1, 1)"), "4 warps a block: %s", text);
  te_free(text);
  te_ctx_free(ctx);
}
