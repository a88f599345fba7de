/* test_tune_seed.c — the points the search's first round derives from the target
 * (seed_points.c) and the neighbour step (space.c). For an AVX-512 machine with a 48 KB L1 and
 * a 2 MB L2 (fixed here, so the test does not depend on the host) the derived points of a 1024
 * and a 2048 matmul are the hand SGEMM schedule's (bench/sgemm_schedule.c: 6 x 64 register tile,
 * k blocks of 128, row blocks of 258 at 1024, 342 x 512 C tiles at 2048); on matmuls no tile
 * divides (1000^3, 37 x 53 x 29), a dense layer (weights [out, in]) and a batch matmul every
 * derived point is valid, applies, builds, and computes what plain C computes (in double) on
 * random non-zero inputs with the output poisoned (NaN), at 1 and 2 threads; the search's first
 * batch holds them; a neighbour differs from its point in one knob.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_seed, .init = tu_setup, .fini = tu_teardown, .timeout = 280);

static const at_target_caps avx512 = {16, 32, 48 << 10, 2 << 20};

/* C[b, i, j] = sum_k A[b, i, k] * B[b, k, j] (no batch when batch is 0), B as [n, k] when
   trans_b (a dense layer's weights). */
static at_workload gemm(int batch, int m, int n, int k, int trans_b) {
  te_tensor *C;
  if (batch) {
    te_tensor *A = te_placeholder(ctx, "A", TE_F32, 3,
                                  TE_EXPRS(te_int(ctx, batch), te_int(ctx, m), te_int(ctx, k)));
    te_tensor *B = te_placeholder(ctx, "B", TE_F32, 3,
                                  TE_EXPRS(te_int(ctx, batch), te_int(ctx, k), te_int(ctx, n)));
    C = te_op_batch_matmul(ctx, A, B, 0, 0, NULL);
  } else {
    te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(te_int(ctx, m), te_int(ctx, k)));
    te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2,
                                  trans_b ? TE_EXPRS(te_int(ctx, n), te_int(ctx, k))
                                          : TE_EXPRS(te_int(ctx, k), te_int(ctx, n)));
    C = te_op_matmul(ctx, A, B, 0, trans_b, "C");
  }
  cr_assert_not_null(C, "%s", te_last_error(ctx));
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &C, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  return wl;
}

static int derive(const at_workload *wl, at_task *t, at_cand *c) {
  cr_assert_eq(at_task_analyze(wl, t), TE_OK, "%s", te_last_error(ctx));
  int n = at_seed_points(t, &avx512, c, 16);
  cr_assert_gt(n, 0, "no derived point");
  for (int i = 0; i < n; i++) {
    cr_assert(at_cand_valid(t, &c[i]), "point %d is not valid", i);
    cr_assert(!strncmp(t->sketch[c[i].sketch].name, "tile+cache+read", 15), "%s",
              t->sketch[c[i].sketch].name);
  }
  return n;
}

/* The factors of knob (role, axis) of c, nlevels of them, into f. */
static int get_knob(const at_task *t, const at_cand *c, at_knob_role role, int axis, int64_t *f) {
  const at_sketch *sk = &t->sketch[c->sketch];
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == role && sk->knob[k].axis == axis && sk->knob[k].stage == t->tiled) {
      memcpy(f, c->v + sk->knob[k].offset, sizeof(int64_t) * (size_t)sk->knob[k].nlevels);
      return sk->knob[k].nlevels;
    }
  cr_assert_fail("no knob of role %d axis %d", (int)role, axis);
  return 0;
}

static bool has_point(const at_task *t, const at_cand *c, int n, const int64_t i4[4],
                      const int64_t j4[4], const int64_t k2[2], int64_t copy_a, int64_t copy_b) {
  for (int p = 0; p < n; p++) {
    int64_t fi[4], fj[4], fk[2], a[1], b[1];
    if (t->sketch[c[p].sketch].vec_axis >= 0)
      continue;
    get_knob(t, &c[p], AT_ROLE_SPACE_TILE, 0, fi);
    get_knob(t, &c[p], AT_ROLE_SPACE_TILE, 1, fj);
    get_knob(t, &c[p], AT_ROLE_REDUCE_TILE, 0, fk);
    get_knob(t, &c[p], AT_ROLE_CACHE_READ, 0, a);
    get_knob(t, &c[p], AT_ROLE_CACHE_READ, 1, b);
    if (!memcmp(fi, i4, sizeof fi) && !memcmp(fj, j4, sizeof fj) && !memcmp(fk, k2, sizeof fk) &&
        a[0] == copy_a && b[0] == copy_b)
      return true;
  }
  return false;
}

/* At 1024 and 2048 the first point is the hand's tile and blocks; 2048 also has the hand's
   wide C tile (342 x 512, k outside the 64-column panels). */
Test(tune_seed, derived_points_are_the_hand_sgemm_blocks) {
  at_cand c[16];
  at_task t;
  at_workload w1 = gemm(0, 1024, 1024, 1024, 0);
  int n = derive(&w1, &t, c);
  cr_assert(has_point(&t, c, n, (int64_t[]){4, 1, 43, 6}, (int64_t[]){16, 1, 1, 64},
                      (int64_t[]){8, 128}, 5, 4),
            "no hand point: A once per row block (5), B whole (4)");
  cr_assert(has_point(&t, c, n, (int64_t[]){4, 1, 43, 6}, (int64_t[]){16, 1, 1, 64},
                      (int64_t[]){8, 128}, 3, 3));
  cr_assert(has_point(&t, c, n, (int64_t[]){6, 1, 13, 14}, (int64_t[]){32, 1, 1, 32},
                      (int64_t[]){4, 256}, 5, 4),
            "no 14 x 32 register tile");
  at_workload w2 = gemm(0, 2048, 2048, 2048, 0);
  n = derive(&w2, &t, c);
  cr_assert(has_point(&t, c, n, (int64_t[]){18, 1, 19, 6}, (int64_t[]){32, 1, 1, 64},
                      (int64_t[]){16, 128}, 5, 4),
            "no 114-row blocks at 2048");
  cr_assert(has_point(&t, c, n, (int64_t[]){6, 1, 57, 6}, (int64_t[]){4, 1, 8, 64},
                      (int64_t[]){16, 128}, 5, 4),
            "no 342 x 512 C tile at 2048");
  /* the vector axis' tile cut to whole vectors of a narrow axis; a batch axis one per tile */
  at_workload w3 = gemm(12, 128, 40, 64, 0);
  n = derive(&w3, &t, c);
  for (int p = 0; p < n; p++) {
    int64_t fb[4], fj[4], fk[2];
    if (t.sketch[c[p].sketch].vec_axis >= 0)
      continue;
    get_knob(&t, &c[p], AT_ROLE_SPACE_TILE, 0, fb);
    get_knob(&t, &c[p], AT_ROLE_SPACE_TILE, 2, fj);
    get_knob(&t, &c[p], AT_ROLE_REDUCE_TILE, 0, fk);
    cr_assert(fb[0] == 12 && fb[1] == 1 && fb[2] == 1 && fb[3] == 1);
    cr_assert(fj[3] == 32 || fj[3] == 16, "%lld lanes of 40", (long long)fj[3]);
    cr_assert_eq(fk[1], 64);
  }
}

/* The hand point's copies where bench/sgemm_schedule.c computes them: B packed at root, before
   C's loops; A packed inside them (once per row block, knob 5), after C's parallel loop starts.
   Packed whole at root instead (the seeds before knob 5), A's copy comes before C's. */
Test(tune_seed, hand_point_packs_a_per_row_block) {
  at_cand c[16];
  at_task t;
  at_workload wl = gemm(0, 1024, 1024, 1024, 0);
  int n = derive(&wl, &t, c);
  cr_assert_gt(n, 0);
  te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
  cr_assert_eq(at_cand_apply(&t, &c[0], s), TE_OK, "%s", te_last_error(ctx));
  char *ir = te_lower_text(s, wl.nargs, wl.args, 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(ctx));
  const char *pb = strstr(ir, "produce B_global"), *pc = strstr(ir, "produce C"),
             *pa = strstr(ir, "produce A_global");
  cr_assert(pb && pc && pa, "%s", ir);
  cr_assert(pb < pc && pc < pa, "B before C's loops, A inside them:\n%s", ir);
  const char *par = strstr(pc, "parallel");
  cr_assert(par && par < pa, "A's copy inside C's parallel loop:\n%s", ir);
  te_free(ir);
}

static void fill(float *p, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(seed >> 11) / 9007199254740992.0;
    p[i] = (float)((seed >> 7 & 1 ? 1 : -1) * (0.1 + 3.0 * u));
  }
}

/* Every derived point of the workload applied, built and run (output poisoned) at 1 and 2
   threads against plain C in double. */
static void check_points(int batch, int m, int n, int k, int trans_b) {
  at_workload wl = gemm(batch, m, n, k, trans_b);
  at_task t;
  at_cand c[16];
  int np = derive(&wl, &t, c);
  int nb = batch ? batch : 1;
  size_t na = (size_t)nb * m * k, nbn = (size_t)nb * k * n, nc = (size_t)nb * m * n;
  float *A = malloc(na * sizeof *A), *B = malloc(nbn * sizeof *B), *C = malloc(nc * sizeof *C);
  double *ref = calloc(nc, sizeof *ref);
  cr_assert(A && B && C && ref);
  fill(A, na, 1);
  fill(B, nbn, 2);
  double scale = 0;
  for (int b = 0; b < nb; b++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double s = 0;
        for (int x = 0; x < k; x++)
          s += (double)A[((size_t)b * m + i) * k + x] *
               B[trans_b ? (size_t)j * k + x : ((size_t)b * k + x) * n + j];
        ref[((size_t)b * m + i) * n + j] = s;
        scale = fmax(scale, fabs(s));
      }
  int64_t shapes[3][3];
  float *data[3] = {A, B, C};
  for (int p = 0; p < np; p++) {
    te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
    cr_assert_eq(at_cand_apply(&t, &c[p], s), TE_OK, "point %d: %s", p, te_last_error(ctx));
    te_module *mod = NULL;
    cr_assert_eq(te_build(s, "k", wl.nargs, wl.args, 0, NULL, tu_target(ctx), &mod), TE_OK,
                 "point %d: %s", p, te_last_error(ctx));
    DLTensor ts[3];
    DLTensor *tp[3];
    cr_assert_eq(wl.nargs, 3);
    for (int a = 0; a < 3; a++) {
      te_tensor *arg = wl.args[a];
      int nd = te_tensor_ndim(arg);
      for (int d = 0; d < nd; d++)
        cr_assert(ir_is_const_int(te_tensor_dim(arg, d), &shapes[a][d]));
      const char *name = te_tensor_name(arg);
      float *buf = a < wl.nin ? data[name[0] == 'A' ? 0 : 1] : C;
      ts[a] = (DLTensor){buf, {kDLCPU, 0}, nd, {kDLFloat, 32, 1}, shapes[a], NULL, 0};
      tp[a] = &ts[a];
    }
    for (int threads = 1; threads <= 2; threads++) {
      for (size_t i = 0; i < nc; i++)
        C[i] = NAN;
      te_rt_set_num_threads(threads);
      cr_assert_eq(te_module_call(mod, "k", wl.nargs, tp, 0, NULL), TE_OK, "%s",
                   te_last_error(ctx));
      for (size_t i = 0; i < nc; i++)
        if (!(fabs(C[i] - ref[i]) <= 1e-5 * scale)) {
          char *tr = te_schedule_trace(s);
          cr_assert_fail("%d x %d x %d x %d, point %d, %d threads: [%zu] %g, expected %g\n%s",
                         batch, m, n, k, p, threads, i, C[i], ref[i], tr);
        }
    }
    te_rt_set_num_threads(0);
  }
  free(A);
  free(B);
  free(C);
  free(ref);
}

Test(tune_seed, points_compute_right_on_tails) {
  check_points(0, 1000, 1000, 1000, 0); /* 6 x 64 and 14 x 32 leave tails; k blocks of 125 */
  check_points(0, 37, 53, 29, 0);       /* smaller than the blocks: tiles cut to the axes */
}

Test(tune_seed, points_compute_right_on_dense_and_batch) {
  check_points(0, 128, 1536, 384, 1); /* dense: weights [out, in], the vector indexes dim 0 */
  check_points(12, 128, 128, 64, 0);  /* batch matmul: a batch axis */
}

/* The first batch of a search holds the derived points (and none without them). */
Test(tune_seed, first_round_measures_the_derived_points) {
  at_workload wl = gemm(0, 256, 256, 256, 0);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  at_cand c[16];
  at_target_caps caps;
  te_target *tgt = tu_target(ctx);
  at_target_caps_get(tgt, &caps);
  cr_assert(caps.lanes == 4 || caps.lanes == 8 || caps.lanes == 16, "%d lanes", caps.lanes);
  cr_assert(caps.l1 > 0 && caps.l2 > 0);
  int n = at_seed_points(&t, &caps, c, 16);
  cr_assert_gt(n, 0);
  for (int pass = 0; pass < 2; pass++) {
    at_search_opts o = {
        .seed = 3, .population = 16, .generations = 1, .epsilon = 0.1, .no_seeds = pass == 1};
    at_search *s = at_search_new(&t, &o);
    at_proposal ps[16];
    int got = at_search_propose(s, &wl, tgt, 16, ps);
    cr_assert_eq(got, 16);
    int found = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < got; j++)
        found += ps[j].cand.sketch == c[i].sketch &&
                 !memcmp(ps[j].cand.v, c[i].v, sizeof(int64_t) * (size_t)c[i].nvals);
    for (int j = 0; j < got; j++)
      at_proposal_free(&ps[j]);
    at_search_free(s);
    if (pass == 0)
      cr_assert_eq(found, n, "%d of the %d derived points in the first batch", found, n);
    else
      cr_assert_lt(found, n);
  }
}

/* A neighbour is valid and differs from its point in exactly one knob; a batch axis' tiles of
   1 stay at least 1. */
static void check_neighbours(int batch, int m, int nn, int kk);

Test(tune_seed, neighbours_change_one_knob) {
  check_neighbours(0, 1000, 1000, 1000);
  check_neighbours(12, 128, 128, 64);
}

static void check_neighbours(int batch, int m, int nn, int kk) {
  at_workload wl = gemm(batch, m, nn, kk, 0);
  at_task t;
  at_cand c[16];
  int n = derive(&wl, &t, c);
  at_rng r;
  at_rng_seed(&r, 11);
  for (int trial = 0; trial < 200; trial++) {
    at_cand x;
    const at_sketch *sk = &t.sketch[c[trial % n].sketch];
    at_cand_neighbour(&t, &c[trial % n], &r, &x);
    cr_assert(at_cand_valid(&t, &x));
    int changed = 0;
    for (int k = 0; k < sk->nknob; k++)
      changed += memcmp(x.v + sk->knob[k].offset, c[trial % n].v + sk->knob[k].offset,
                        sizeof(int64_t) * (size_t)sk->knob[k].nlevels) != 0;
    cr_assert_eq(changed, 1, "trial %d: %d knobs changed", trial, changed);
  }
}

/* A convolution's derived points (AVX2: 16 registers of 8 lanes), vector along x: besides the
   one-axis tiles, register tiles over o and y (two rows of y: 4 x 2, 6 x 2, 3 x 2 by 8 or 16
   lanes); the data, which x indexes through the window x + rx, copied unpacked (knob 2: 8-lane
   panels would cut the window); the kernel, which y does not index, packed whole (4) or in
   blocks at the reduce loop (3), never once per row block (5: packed again for each row). */
Test(tune_seed, conv_points_tile_two_rows_axes_and_copy_windows_unpacked) {
  at_workload wl;
  at_task t;
  tu_analyze(tu_op(ctx, "conv2d C=8 H=10 W=24 O=16 pad=1"), &wl, &t);
  const at_target_caps avx2 = {8, 16, 32 << 10, 512 << 10};
  at_cand c[16];
  int n = at_seed_points(&t, &avx2, c, 16), two_axis = 0;
  const at_stage_info *s = &t.stage[t.tiled];
  for (int p = 0; p < n; p++) {
    cr_assert(at_cand_valid(&t, &c[p]), "point %d is not valid", p);
    if (t.sketch[c[p].sketch].vec_axis >= 0)
      continue;
    int64_t fo[4], fy[4], fx[4];
    get_knob(&t, &c[p], AT_ROLE_SPACE_TILE, 1, fo);
    get_knob(&t, &c[p], AT_ROLE_SPACE_TILE, 2, fy);
    get_knob(&t, &c[p], AT_ROLE_SPACE_TILE, 3, fx);
    cr_assert(fy[3] == 1 || fy[3] == 2, "%lld rows of y", (long long)fy[3]);
    cr_assert_leq(fo[3] * fy[3] * (fx[3] / 8), 12, "%lld x %lld x %lld: over 12 accumulators",
                  (long long)fo[3], (long long)fy[3], (long long)fx[3]);
    two_axis += fy[3] == 2 && fo[3] > 1;
    for (int i = 0; i < s->ninputs; i++) {
      int64_t copy[1];
      get_knob(&t, &c[p], AT_ROLE_CACHE_READ, i, copy);
      if (s->input_windows[i] >> 3 & 1u)
        cr_assert_eq(copy[0], 2, "input %d (a window along x) copied by knob %lld", i,
                     (long long)copy[0]);
      else
        cr_assert(copy[0] == 4 || copy[0] == 3, "input %d (not indexed by y) copied by knob %lld",
                  i, (long long)copy[0]);
    }
  }
  cr_assert_eq(two_axis, 3, "%d points over o x y", two_axis);
}
