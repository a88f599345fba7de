/* test_tune_window.c — sketch tile+cache+window (sketch.c, apply.c): a depthwise convolution's
 * 3 x 3 window unrolled in the register tile, its padding stage inlined, kept at root or
 * computed at the output's parallel loop. Every knob combination, and random samples of the
 * tile factors, build and compute what plain C computes (in double) on random non-zero inputs,
 * the output poisoned before each run, at 1 and 2 threads, on shapes no tile divides (5
 * channels of 13 x 19); the candidates say what they should in their IR; and the sketch is
 * only made where the reduction is a window (not for a convolution summing channels, nor a
 * matmul).
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_window, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

enum { C = 5, H = 13, W = 19, KS = 3 };

static void fill(float *p, int n, uint64_t seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(seed >> 11) / 9007199254740992.0;
    p[i] = (float)((seed >> 7 & 1 ? 1 : -1) * (0.1 + 3.0 * u));
  }
}

/* depthwise 3 x 3, padding 1, stride 1: out[c][y][x] = sum data[c][y+ry-1][x+rx-1] k[c][ry][rx] */
static void depthwise_ref(const float *d, const float *k, double *out) {
  for (int c = 0; c < C; c++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        double s = 0;
        for (int ry = 0; ry < KS; ry++)
          for (int rx = 0; rx < KS; rx++) {
            int iy = y + ry - 1, ix = x + rx - 1;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              s += (double)d[(c * H + iy) * W + ix] * k[(c * KS + ry) * KS + rx];
          }
        out[(c * H + y) * W + x] = s;
      }
}

static int knob_of(const at_task *t, const at_cand *c, at_knob_role role) {
  const at_sketch *sk = &t->sketch[c->sketch];
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == role)
      return k;
  return -1;
}

static void set_role(const at_task *t, at_cand *c, at_knob_role role, int64_t value) {
  int k = knob_of(t, c, role);
  cr_assert_geq(k, 0, "no knob of role %d", role);
  c->v[t->sketch[c->sketch].knob[k].offset] = value;
}

typedef struct fixture {
  at_workload wl;
  at_task t;
  int sk;
  float data[C * H * W], kernel[C * KS * KS];
  double ref[C * H * W];
} fixture;

static void fixture_make(fixture *f) {
  te_tensor *out = tu_op(ctx, "depthwise_conv2d C=5 H=13 W=19 pad=1");
  cr_assert_eq(at_workload_make(ctx, 1, &out, "test", &f->wl), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(at_task_analyze(&f->wl, &f->t), TE_OK, "%s", te_last_error(ctx));
  f->sk = at_task_sketch_index(&f->t, "tile+cache+window");
  cr_assert_geq(f->sk, 0, "no sketch tile+cache+window");
  fill(f->data, C * H * W, 11);
  fill(f->kernel, C * KS * KS, 12);
  depthwise_ref(f->data, f->kernel, f->ref);
}

/* Builds candidate c, runs it with the output poisoned at 1 and 2 threads and compares with
   the reference within 1e-5 of the output's largest magnitude. */
static void check_cand(fixture *f, const at_cand *c, const char *what) {
  const at_workload *wl = &f->wl;
  te_schedule *s = te_schedule_new(ctx, wl->nout, wl->outs);
  cr_assert_eq(at_cand_apply(&f->t, c, s), TE_OK, "%s: %s", what, te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "k", wl->nargs, wl->args, 0, NULL, tu_target(ctx), &m), TE_OK, "%s: %s",
               what, te_last_error(ctx));
  static float out[C * H * W];
  DLTensor ts[3];
  DLTensor *tp[3];
  int64_t shapes[3][4];
  cr_assert_eq(wl->nargs, 3);
  for (int a = 0; a < 3; a++) {
    te_tensor *arg = wl->args[a];
    int nd = te_tensor_ndim(arg);
    for (int d = 0; d < nd; d++)
      cr_assert(ir_is_const_int(te_tensor_dim(arg, d), &shapes[a][d]));
    const char *name = te_tensor_name(arg);
    float *data = a == 2 ? out : !strcmp(name, "data") ? f->data : f->kernel;
    ts[a] = (DLTensor){data, {kDLCPU, 0}, nd, {kDLFloat, 32, 1}, shapes[a], NULL, 0};
    tp[a] = &ts[a];
  }
  double scale = 0;
  for (int i = 0; i < C * H * W; i++)
    scale = fmax(scale, fabs(f->ref[i]));
  for (int threads = 1; threads <= 2; threads++) {
    for (int i = 0; i < C * H * W; i++)
      out[i] = NAN;
    te_rt_set_num_threads(threads);
    cr_assert_eq(te_module_call(m, "k", 3, tp, 0, NULL), TE_OK, "%s: %s", what, te_last_error(ctx));
    for (int i = 0; i < C * H * W; i++)
      cr_assert(fabs(out[i] - f->ref[i]) <= 1e-5 * scale,
                "%s, %d threads: [%d] %g, expected %g\n%s", what, threads, i, out[i], f->ref[i],
                te_schedule_trace(s));
  }
  te_rt_set_num_threads(0);
}

static char *lowered(fixture *f, const at_cand *c) {
  te_schedule *s = te_schedule_new(ctx, f->wl.nout, f->wl.outs);
  cr_assert_eq(at_cand_apply(&f->t, c, s), TE_OK, "%s", te_last_error(ctx));
  char *ir = te_lower_text(s, f->wl.nargs, f->wl.args, 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(ctx));
  return ir;
}

/* Every keep x unroll x vectorize point, each with a few draws of the tile factors. */
Test(tune_window, depthwise_candidates_compute_what_c_computes) {
  static fixture f;
  fixture_make(&f);
  at_rng rng;
  at_rng_seed(&rng, 5);
  for (int keep = 0; keep < 3; keep++)
    for (int unroll = 0; unroll < 2; unroll++)
      for (int vec = 0; vec < 2; vec++)
        for (int draw = 0; draw < 3; draw++) {
          at_cand c;
          at_cand_sample(&f.t, f.sk, &rng, &c);
          set_role(&f.t, &c, AT_ROLE_KEEP_STAGE, keep);
          set_role(&f.t, &c, AT_ROLE_UNROLL_WINDOW, unroll);
          set_role(&f.t, &c, AT_ROLE_VECTORIZE, vec);
          cr_assert(at_cand_valid(&f.t, &c));
          char what[160];
          snprintf(what, sizeof what, "keep %d, unroll %d, vectorize %d, draw %d", keep, unroll,
                   vec, draw);
          check_cand(&f, &c, what);
        }
}

/* The structure the sketch exists for: a 4-row x 16-lane register tile (no axis divides it),
   the whole window in one register-tile step, the padding computed in the parallel loop. The
   IR has no loop over the window left, the padding's produce is inside the parallel loop, and
   the values are right. */
Test(tune_window, unrolled_window_and_padding_in_the_tile) {
  static fixture f;
  fixture_make(&f);
  at_rng rng;
  at_rng_seed(&rng, 9);
  at_cand c;
  at_cand_sample(&f.t, f.sk, &rng, &c);
  const at_sketch *sk = &f.t.sketch[f.sk];
  for (int k = 0; k < sk->nknob; k++) {
    const at_knob *kn = &sk->knob[k];
    int64_t *v = c.v + kn->offset;
    if (kn->role == AT_ROLE_SPACE_TILE) { /* n, c, y, x: [tiles, 1, 1, inner] */
      int64_t inner = kn->axis == 2 ? 4 : kn->axis == 3 ? 16 : 1;
      v[3] = inner;
      v[1] = v[2] = 1;
      v[0] = (kn->extent + inner - 1) / inner;
    } else if (kn->role == AT_ROLE_REDUCE_TILE) {
      v[0] = 1;
      v[1] = kn->extent;
    }
  }
  set_role(&f.t, &c, AT_ROLE_KEEP_STAGE, 2);
  set_role(&f.t, &c, AT_ROLE_UNROLL_WINDOW, 1);
  set_role(&f.t, &c, AT_ROLE_VECTORIZE, 1);
  set_role(&f.t, &c, AT_ROLE_PARALLEL_DEPTH, 0);
  set_role(&f.t, &c, AT_ROLE_UNROLL, 1);
  cr_assert(at_cand_valid(&f.t, &c));
  char *ir = lowered(&f, &c);
  cr_assert_null(strstr(ir, "for (ry"), "the window is not unrolled:\n%s", ir);
  cr_assert_null(strstr(ir, "for (rx"), "the window is not unrolled:\n%s", ir);
  const char *par = strstr(ir, "parallel"), *pad = strstr(ir, "produce depthwise_conv2d_pad");
  cr_assert(par && pad && pad > par, "the padding is not computed in the parallel loop:\n%s", ir);
  cr_assert_not_null(strstr(ir, "ramp("), "no vector code:\n%s", ir);
  te_free(ir);
  check_cand(&f, &c, "4 x 16 tile, window unrolled, padding in the tile");
}

/* Only a window reduction gets the sketch: a convolution (its channel sum indexes a dim of its
   own, over 16 channels or 4) and a batch matmul (k = 16 or 4, its own dim too) do not, so
   their spaces (and logs) are what they were. */
Test(tune_window, only_window_reductions_have_the_sketch) {
  const char *descs[] = {"conv2d C=16 H=8 W=8 O=8 pad=1", "conv2d C=4 H=8 W=8 O=8 pad=1",
                         "batch_matmul B=2 M=16 N=16 K=16", "batch_matmul B=2 M=16 N=16 K=4"};
  for (int i = 0; i < 4; i++) {
    te_tensor *out = tu_op(ctx, descs[i]);
    at_workload wl;
    cr_assert_eq(at_workload_make(ctx, 1, &out, "test", &wl), TE_OK, "%s", te_last_error(ctx));
    at_task t;
    cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
    cr_assert_lt(at_task_sketch_index(&t, "tile+cache+window"), 0, "%s has the sketch", descs[i]);
    cr_assert_geq(at_task_sketch_index(&t, "tile+cache"), 0, "%s", descs[i]);
  }
}

/* Shaped window samples count their vectors in the target's lanes: on AVX2 (8 lanes, 16
   registers) the tile is 1 or 2 vectors of 8 along x (19 has no multiple of 16 but 16) and
   at most 8 accumulators, where 16-lane vectors would be two registers each (an 8 x 16 tile:
   16 accumulators, none left for the loads); with AVX-512's 16 lanes, 16. The AVX2 ones
   compute what C computes. */
Test(tune_window, shaped_window_samples_count_the_targets_lanes) {
  fixture *f = calloc(1, sizeof *f);
  cr_assert_not_null(f);
  fixture_make(f);
  at_target_caps avx2 = {.lanes = 8, .regs = 16, .l1 = 32 << 10, .l2 = 512 << 10};
  at_target_caps avx512 = {.lanes = 16, .regs = 32, .l1 = 48 << 10, .l2 = 2 << 20};
  at_rng rng;
  at_rng_seed(&rng, 5);
  int narrow = 0;
  for (int i = 0; i < 40; i++) {
    bool wide = i % 2;
    at_cand c;
    cr_assert(at_cand_sample_shaped(&f->t, wide ? &avx512 : &avx2, f->sk, &rng, &c), "sample %d",
              i);
    int64_t lanes = tu_tile_inner(&f->t, &c, 3), rows = tu_tile_inner(&f->t, &c, 2);
    if (wide) {
      cr_assert_eq(lanes, 16, "AVX-512: %lld lanes", (long long)lanes);
      continue;
    }
    cr_assert(lanes == 8 || lanes == 16, "AVX2: %lld lanes", (long long)lanes);
    cr_assert_leq(rows * (lanes / 8), 8, "AVX2: %lld rows x %lld lanes", (long long)rows,
                  (long long)lanes);
    narrow += lanes == 8;
    if (i < 8)
      check_cand(f, &c, "an AVX2 window sample");
  }
  cr_assert_geq(narrow, 4, "%d AVX2 samples of one 8-lane vector", narrow);
  free(f);
}
