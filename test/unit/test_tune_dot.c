/* test_tune_dot.c — the search space reaches the hand schedules: copies in the register tile's
 * layout (pack.c) and the low-precision dot sketches (tile+cache+read+dot:vpdpbusd and
 * :vdpbf16ps). Every candidate of those sketches applies, builds and computes what the default
 * schedule computes (exact for u8 x i8 -> i32, within f32's rounding for bf16 -> f32) on shapes
 * the tiles do not divide; a dot candidate's kernel holds the instruction; a short tuning run
 * on a 512^3 int8 matmul ends with a best record that tensorizes.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_dot, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

static bool host_has(const char *feature) {
  return !strcmp(feature, "avx512vnni") ? __builtin_cpu_supports("avx512vnni")
                                        : __builtin_cpu_supports("avx512bf16");
}

/* C[i, j] = sum_k acc(A[i, k]) * acc(B[k, j]) with A, B of dtypes a, b. */
static at_workload matmul(te_dtype a, te_dtype b, te_dtype acc, int m, int n, int k) {
  te_tensor *A = te_placeholder(ctx, "A", a, 2, TE_EXPRS(te_int(ctx, m), te_int(ctx, k)));
  te_tensor *B = te_placeholder(ctx, "B", b, 2, TE_EXPRS(te_int(ctx, k), te_int(ctx, n)));
  te_tensor *C = te_op_matmul_acc(ctx, A, B, 0, 0, acc, "C");
  cr_assert_not_null(C, "%s", te_last_error(ctx));
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &C, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  return wl;
}

/* Builds each candidate's trace and runs it against the default schedule's outputs (the
   tuner's own check: exact for integers, relative tolerance for floats). With insn, the
   lowered IR of every candidate must hold the instruction's call. */
static void check_cands(const at_workload *wl, const at_task *t, int n, const at_cand *cands,
                        const char *insn) {
  at_bench *b = at_bench_new(wl, 5);
  char msg[512];
  at_result r;
  cr_assert_eq(at_reference_set(wl, "llvm", b, TU_TIMEOUT_S, msg, &r), TE_OK, "%s", msg);
  cr_assert(at_bench_has_reference(b), "%s", r.message);
  at_job jobs[16] = {0};
  char *traces[16];
  cr_assert_leq(n, 16);
  for (int i = 0; i < n; i++) {
    te_schedule *s = te_schedule_new(ctx, wl->nout, wl->outs);
    cr_assert_eq(at_cand_apply(t, &cands[i], s), TE_OK, "%s", te_last_error(ctx));
    if (insn) {
      char *ir = te_lower_text(s, wl->nargs, wl->args, 0, NULL);
      cr_assert_not_null(ir, "%s", te_last_error(ctx));
      cr_assert(strstr(ir, insn), "candidate %d (%s) has no %s:\n%s", i,
                t->sketch[cands[i].sketch].name, insn, ir);
      te_free(ir);
    }
    traces[i] = te_schedule_trace(s);
    jobs[i].trace = traces[i];
  }
  at_compiled *c = at_compile_batch(wl, "llvm", n, jobs, 1, 0);
  cr_assert_not_null(c);
  at_measure_opts mo = {.min_repeat_s = 0,
                        .min_repeats = 1,
                        .max_repeats = 1,
                        .timeout_s = TU_TIMEOUT_S,
                        .threads = 1};
  for (int i = 0; i < n; i++) {
    cr_assert_eq(jobs[i].status, TE_OK, "candidate %d does not build: %s\n%s", i, jobs[i].message,
                 traces[i]);
    at_result res;
    at_bench_run(b, jobs[i].entry, true, &mo, &res);
    cr_assert_eq(res.status, TE_OK, "candidate %d: %s %s\n%s", i, res.kind, res.message, traces[i]);
    te_free(traces[i]);
  }
  at_compiled_free(c);
  at_bench_free(b);
}

/* n samples of sketch name, half of them mutated. */
static int sample(const at_task *t, const char *name, int n, uint64_t seed, at_cand *out) {
  int sk = at_task_sketch_index(t, name);
  cr_assert_geq(sk, 0, "no sketch %s", name);
  at_rng rng;
  at_rng_seed(&rng, seed);
  for (int i = 0; i < n; i++) {
    at_cand c;
    at_cand_sample(t, sk, &rng, &c);
    if (i % 2)
      at_cand_mutate(t, &c, &rng, &out[i]);
    else
      out[i] = c;
    cr_assert(at_cand_valid(t, &out[i]));
  }
  return n;
}

/* The knob of role (stage's input axis) in sketch sk of t, set to value in c. */
static void set_choice(const at_task *t, at_cand *c, at_knob_role role, int axis, int64_t value) {
  const at_sketch *sk = &t->sketch[c->sketch];
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == role && sk->knob[k].axis == axis)
      c->v[sk->knob[k].offset] = value;
}

/* f32: tile+cache+read with both inputs copied in the register tile's layout, as blocks at the
   reduce loop (3) and whole at root (4), on 37 x 53 x 29 (no tile divides it). */
Test(tune_dot, packed_copies_compute_the_same) {
  at_workload wl = matmul(TE_F32, TE_F32, TE_F32, 37, 53, 29);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  at_cand c[8];
  sample(&t, "tile+cache+read", 8, 3, c);
  for (int i = 0; i < 8; i++) {
    set_choice(&t, &c[i], AT_ROLE_CACHE_READ, 0, 3 + (i & 1));
    set_choice(&t, &c[i], AT_ROLE_CACHE_READ, 1, 3 + ((i >> 1) & 1));
    cr_assert(at_cand_valid(&t, &c[i]));
  }
  /* the layouts are there: a whole B in panels, A's rows grouped */
  te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
  cr_assert_eq(at_cand_apply(&t, &c[2], s), TE_OK, "%s", te_last_error(ctx));
  char *trace = te_schedule_trace(s);
  cr_assert(strstr(trace, "reorder_storage B_global ax1.o ax0 ax1.i"), "%s", trace);
  te_free(trace);
  check_cands(&wl, &t, 8, c, NULL);
}

/* The tile factors of knob (role, axis) in c. */
static void set_tile(const at_task *t, at_cand *c, at_knob_role role, int axis, const int64_t *f) {
  const at_sketch *sk = &t->sketch[c->sketch];
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == role && sk->knob[k].axis == axis)
      memcpy(c->v + sk->knob[k].offset, f, sizeof(int64_t) * (size_t)sk->knob[k].nlevels);
}

/* te's hand SGEMM schedule for n = 1024 (bench/sgemm_schedule.c: row blocks of 258, a 6 x 64
   register tile unrolled, k blocks of 128, B packed whole into 64-column panels, A in 6-row
   groups) is a point of tile+cache+read: valid, with the hand's structure, and right. */
Test(tune_dot, hand_sgemm_schedule_is_in_the_space) {
  at_workload wl = matmul(TE_F32, TE_F32, TE_F32, 1024, 1024, 1024);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  at_cand c;
  sample(&t, "tile+cache+read", 1, 1, &c);
  set_tile(&t, &c, AT_ROLE_SPACE_TILE, 0, (const int64_t[]){4, 1, 43, 6});
  set_tile(&t, &c, AT_ROLE_SPACE_TILE, 1, (const int64_t[]){16, 1, 1, 64});
  set_tile(&t, &c, AT_ROLE_REDUCE_TILE, 0, (const int64_t[]){8, 128});
  set_choice(&t, &c, AT_ROLE_VECTORIZE, 0, 1);
  set_choice(&t, &c, AT_ROLE_PARALLEL_DEPTH, 0, 0);
  set_choice(&t, &c, AT_ROLE_UNROLL, 0, 1);
  set_choice(&t, &c, AT_ROLE_CACHE_READ, 0, 3); /* A: blocks at k.o, 6-row groups */
  set_choice(&t, &c, AT_ROLE_CACHE_READ, 1, 4); /* B: whole, 64-column panels */
  cr_assert(at_cand_valid(&t, &c));
  te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_OK, "%s", te_last_error(ctx));
  char *trace = te_schedule_trace(s);
  const char *want[] = {"split C_local i 6\n",     "split C_local j 64\n",
                        "split C_local k 128\n",   "unroll C_local i.i\n",
                        "split A_local ax0 6\n",   "reorder_storage A_local ax0.o ax1 ax0.i\n",
                        "split B_global ax1 64\n", "reorder_storage B_global ax1.o ax0 ax1.i\n"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    cr_assert(strstr(trace, want[i]), "no '%s' in\n%s", want[i], trace);
  te_free(trace);
  check_cands(&wl, &t, 1, &c, NULL);
}

static void dot_case(te_dtype a, te_dtype b, te_dtype acc, const char *insn, const char *feature,
                     const char *call) {
  if (!host_has(feature)) {
    TU_SKIP("this CPU lacks %s: the %s sketch is not probed here", feature, insn);
    return;
  }
  at_workload wl = matmul(a, b, acc, 29, 70, 36); /* 70 columns: a 16-lane tail */
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  char name[64];
  snprintf(name, sizeof name, "tile+cache+read+dot:%s", insn);
  at_cand c[10];
  sample(&t, name, 10, 7, c);
  check_cands(&wl, &t, 10, c, call);
}

Test(tune_dot, int8_dot_sketch_uses_vpdpbusd_and_is_exact) {
  dot_case(TE_U8, TE_I8, TE_I32, "vpdpbusd", "avx512vnni", "dot4_u8s8");
}

Test(tune_dot, bf16_dot_sketch_uses_vdpbf16ps) {
  dot_case(TE_BF16, TE_BF16, TE_F32, "vdpbf16ps", "avx512bf16", "dot2_bf16");
}

/* An int8 convolution (NCHW, padded, 3x3): the channel reduction is grouped by 4, the vector
   runs along the output's columns (18: a 16-lane tail), both copies packed with the group
   innermost (the padded input's channels, the kernel's); exact. */
Test(tune_dot, int8_conv2d_dot_sketch_is_exact) {
  if (!host_has("avx512vnni")) {
    TU_SKIP("this CPU lacks avx512vnni");
    return;
  }
  te_tensor *d =
      te_placeholder(ctx, "data", TE_U8, 4,
                     TE_EXPRS(te_int(ctx, 1), te_int(ctx, 8), te_int(ctx, 5), te_int(ctx, 18)));
  te_tensor *w =
      te_placeholder(ctx, "kernel", TE_I8, 4,
                     TE_EXPRS(te_int(ctx, 16), te_int(ctx, 8), te_int(ctx, 3), te_int(ctx, 3)));
  te_conv2d_params cp = {1, 1, 1, 1, 1, 1};
  te_tensor *o = te_op_conv2d_nchw_acc(ctx, d, w, &cp, TE_I32, NULL);
  cr_assert_not_null(o, "%s", te_last_error(ctx));
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &o, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  at_cand c[8];
  sample(&t, "tile+cache+read+dot:vpdpbusd", 8, 13, c);
  check_cands(&wl, &t, 8, c, "dot4_u8s8");
}

/* No dot sketch where the types do not make a dot product: f32, or i8 x i8. */
Test(tune_dot, no_dot_sketch_for_other_types) {
  at_workload f = matmul(TE_F32, TE_F32, TE_F32, 32, 32, 32);
  at_workload i = matmul(TE_I8, TE_I8, TE_I32, 32, 32, 32);
  at_task t;
  cr_assert_eq(at_task_analyze(&f, &t), TE_OK);
  for (int k = 0; k < t.nsketch; k++)
    cr_assert_null(t.sketch[k].dot.insn, "%s", t.sketch[k].name);
  cr_assert_eq(at_task_analyze(&i, &t), TE_OK);
  for (int k = 0; k < t.nsketch; k++)
    cr_assert_null(t.sketch[k].dot.insn, "%s", t.sketch[k].name);
}

/* A short tuning run on an int8 matmul measures the dot sketch: some successful record
   tensorizes (search.c proposes one candidate of every sketch before the search narrows, so 16
   trials cannot miss it). Which record is best is not asserted: on Emerald Rapids LLVM's own
   vector code of tile / tile+cache points ran 2.5-3.6 ms here against 14-16 ms for the dot
   sketch's random first points (on Zen 4 the others' best ran 14x slower than the dot one); the
   dot sketch has no shaped or derived points yet. The log says both, for a human to read. */
Test(tune_dot, int8_tuning_run_finds_vpdpbusd) {
  if (!host_has("avx512vnni")) {
    TU_SKIP("this CPU lacks avx512vnni");
    return;
  }
  if (getenv("ASAN_OPTIONS")) { /* the sanitizer build's test environment */
    TU_SKIP("timings do not rank kernels under the sanitizers: their allocator makes the "
            "dot sketch's per-block copies (allocated in the kernel) several times slower");
    return;
  }
  at_workload wl = matmul(TE_U8, TE_I8, TE_I32, 512, 512, 512);
  const char *log = tu_path("int8.jsonl");
  te_tune_options o = tu_quick(log, 16, 2);
  o.min_repeat_s = 0.01;
  o.min_repeats = 3;
  o.max_repeats = 5;
  cr_assert_eq(te_tune(ctx, wl.nout, wl.outs, tu_target(ctx), &o), TE_OK, "%s", te_last_error(ctx));
  at_log l;
  tu_read(log, &l);
  int best = at_log_best(&l, l.rec[0].key, NULL), dot = 0;
  double best_dot = INFINITY;
  for (int i = 0; i < l.n; i++)
    if (l.rec[i].error == TE_OK && strstr(l.rec[i].trace, "tensorize")) {
      dot++;
      best_dot = fmin(best_dot, at_record_cost(&l.rec[i]));
    }
  bool best_is_dot = best >= 0 && strstr(l.rec[best].trace, "tensorize C_local");
  char sketch[64];
  snprintf(sketch, sizeof sketch, "%s", best >= 0 ? l.rec[best].sketch : "none");
  double best_cost = best >= 0 ? at_record_cost(&l.rec[best]) : INFINITY;
  at_log_free(&l);
  cr_assert_gt(dot, 0, "no successful record tensorizes");
  cr_log_info(
      "int8 512^3, 16 trials: the best record is %s%s (%.3g ms), the best dot record %.3g ms",
      sketch, best_is_dot ? " (tensorized)" : "", best_cost * 1e3, best_dot * 1e3);
}

/* The value of knob (role, axis) of c: its first level. */
static const int64_t *knob_vals(const at_task *t, const at_cand *c, at_knob_role role, int axis) {
  const at_sketch *sk = &t->sketch[c->sketch];
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == role && sk->knob[k].axis == axis)
      return c->v + sk->knob[k].offset;
  cr_assert_fail("no knob of role %d axis %d", role, axis);
  return NULL;
}

/* Shaped samples (space_shaped.c) of tile+cache+read and of tile+cache+read:0 have the hand
   kernel's structure — a register tile of 4..12 rows by whole 16-lane vectors, the rows
   unrolled, both copies packed (3 or 4) or, k = 48 being a short reduction, both read in place
   with k whole and the local block a whole row (some of each), vectorized — on 104 x 70 x 48, which
   no register tile divides (vector axes of 70 and 104: 64 lanes at most, then a tail), and compute
   the same as the default schedule. */
Test(tune_dot, shaped_samples_are_hand_kernels_and_right) {
  at_workload wl = matmul(TE_F32, TE_F32, TE_F32, 104, 70, 48);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  const char *names[] = {"tile+cache+read", "tile+cache+read:0"};
  at_rng rng;
  at_rng_seed(&rng, 11);
  at_cand c[8];
  int in_place = 0;
  for (int i = 0; i < 8; i++) {
    int sk = at_task_sketch_index(&t, names[i % 2]);
    cr_assert_geq(sk, 0, "no sketch %s", names[i % 2]);
    cr_assert(at_sketch_shapeable(&t, sk));
    cr_assert(at_cand_sample_shaped(&t, NULL, sk, &rng, &c[i]), "sample %d is not valid", i);
    int vec = i % 2 ? 0 : 1, rows = 1 - vec;
    int64_t lanes = knob_vals(&t, &c[i], AT_ROLE_SPACE_TILE, vec)[3];
    int64_t mr = knob_vals(&t, &c[i], AT_ROLE_SPACE_TILE, rows)[3];
    cr_assert(lanes % 16 == 0 && lanes <= 64, "vector %lld", (long long)lanes);
    cr_assert(mr >= 4 && mr <= 12, "rows %lld", (long long)mr);
    cr_assert_eq(knob_vals(&t, &c[i], AT_ROLE_UNROLL, 0)[0], 1);
    int64_t cr0 = knob_vals(&t, &c[i], AT_ROLE_CACHE_READ, 0)[0];
    int64_t cr1 = knob_vals(&t, &c[i], AT_ROLE_CACHE_READ, 1)[0];
    bool packed = cr0 >= 3 && cr0 <= 5 && cr1 >= 3 && cr1 <= 5; /* 5: once per row block */
    bool whole = cr0 == 0 && cr1 == 0 && knob_vals(&t, &c[i], AT_ROLE_REDUCE_TILE, 0)[1] == 48;
    cr_assert(packed || whole, "inputs copied as %lld, %lld", (long long)cr0, (long long)cr1);
    const int64_t *fv = knob_vals(&t, &c[i], AT_ROLE_SPACE_TILE, vec);
    cr_assert(!whole || fv[2] * fv[3] >= (vec ? 70 : 104) || fv[2] == 8,
              "in place, the local block is not the whole row: %lld x %lld", (long long)fv[2],
              (long long)fv[3]);
    in_place += whole;
  }
  cr_assert(in_place > 0 && in_place < 8, "%d of 8 samples read in place", in_place);
  check_cands(&wl, &t, 8, c, NULL);
}

/* A reduction longer than 128 (k = 160) is never read in place by a shaped sample: packed
   (3, 4, or 5 once per row block). */
Test(tune_dot, shaped_samples_of_long_reductions_are_packed) {
  at_workload wl = matmul(TE_F32, TE_F32, TE_F32, 40, 48, 160);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  int sk = at_task_sketch_index(&t, "tile+cache+read");
  at_rng rng;
  at_rng_seed(&rng, 3);
  for (int i = 0; i < 16; i++) {
    at_cand c;
    cr_assert(at_cand_sample_shaped(&t, NULL, sk, &rng, &c));
    for (int in = 0; in < 2; in++) {
      int64_t cr = knob_vals(&t, &c, AT_ROLE_CACHE_READ, in)[0];
      cr_assert(cr >= 3 && cr <= 5, "input %d copied as %lld", in, (long long)cr);
    }
  }
}

/* With 16 vector registers of 8 f32 lanes (AVX2) the register tiles are AVX2's: 1 to 4 whole
   8-lane vectors by up to 12 rows, at most 12 accumulators, so the loaded vectors and the
   broadcast fit beside them (an AVX-512 tile, 6 x 64, would be 48 ymm accumulators); and the
   first derived point is the classic 6 x 16. */
Test(tune_dot, shaped_samples_fit_avx2_registers) {
  at_workload wl = matmul(TE_F32, TE_F32, TE_F32, 96, 96, 160);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  int sk = at_task_sketch_index(&t, "tile+cache+read");
  at_target_caps caps = {.lanes = 8, .regs = 16, .l1 = 32 << 10, .l2 = 512 << 10};
  at_rng rng;
  at_rng_seed(&rng, 5);
  at_cand c[12];
  bool six_by_16 = false;
  for (int i = 0; i < 12; i++) {
    cr_assert(at_cand_sample_shaped(&t, &caps, sk, &rng, &c[i]), "sample %d is not valid", i);
    int64_t lanes = knob_vals(&t, &c[i], AT_ROLE_SPACE_TILE, 1)[3];
    int64_t mr = knob_vals(&t, &c[i], AT_ROLE_SPACE_TILE, 0)[3];
    cr_assert(lanes % 8 == 0 && lanes <= 32, "vector %lld", (long long)lanes);
    cr_assert(mr * (lanes / 8) <= 12 && mr * (lanes / 8) >= 8, "%lld x %lld: %lld accumulators",
              (long long)mr, (long long)lanes, (long long)(mr * lanes / 8));
    six_by_16 |= mr == 6 && lanes == 16;
  }
  cr_assert(six_by_16, "no 6 x 16 tile in 12 samples");
  check_cands(&wl, &t, 4, c, NULL);
  at_cand seeds[16];
  int n = at_seed_points(&t, &caps, seeds, 16);
  cr_assert_gt(n, 0);
  cr_assert_eq(knob_vals(&t, &seeds[0], AT_ROLE_SPACE_TILE, 0)[3], 6);
  cr_assert_eq(knob_vals(&t, &seeds[0], AT_ROLE_SPACE_TILE, 1)[3], 16);
}

/* A convolution's shaped samples split the register tile's rows over two axes in some draws:
   the rows axis and the output row y, which the kernel does not index (one broadcast of it
   serves both), as MetaSchedule's conv2d winners tile co x h x w; never more rows than the
   tile's. Both vector placements (along x, along o), on 1 x 8 x 10 x 20 (o = 16), which the
   tiles do not divide; the split candidates compute what the default schedule does. */
Test(tune_dot, shaped_conv_samples_split_rows_over_two_axes) {
  at_workload wl;
  at_task t;
  tu_analyze(tu_op(ctx, "conv2d C=8 H=10 W=20 O=16 pad=1"), &wl, &t);
  at_target_caps caps = {.lanes = 8, .regs = 16, .l1 = 32 << 10, .l2 = 512 << 10};
  const char *names[] = {"tile+cache+read", "tile+cache+read:1"};
  const int vecs[] = {3, 1}, rows_axes[] = {1, 3}; /* x then o; rows: o (16), x (20) */
  at_rng rng;
  at_rng_seed(&rng, 7);
  at_cand split[8];
  int nsplit = 0, whole = 0;
  for (int i = 0; i < 40; i++) {
    int sk = at_task_sketch_index(&t, names[i % 2]);
    cr_assert_geq(sk, 0, "no sketch %s", names[i % 2]);
    at_cand c;
    cr_assert(at_cand_sample_shaped(&t, &caps, sk, &rng, &c), "sample %d is not valid", i);
    int64_t lanes = tu_tile_inner(&t, &c, vecs[i % 2]);
    int64_t mr = tu_tile_inner(&t, &c, rows_axes[i % 2]), mr2 = tu_tile_inner(&t, &c, 2);
    cr_assert_eq(tu_tile_inner(&t, &c, 0), 1, "the batch axis has rows");
    cr_assert(mr2 == 1 || mr2 == 2 || mr2 == 4, "%lld rows of y", (long long)mr2);
    int64_t acc = mr * mr2 * ((lanes + 7) / 8);
    cr_assert(acc <= 12, "%s: %lld x %lld x %lld lanes: %lld accumulators", names[i % 2],
              (long long)mr, (long long)mr2, (long long)lanes, (long long)acc);
    if (mr2 > 1 && nsplit < 8)
      split[nsplit++] = c;
    whole += mr2 == 1;
  }
  cr_assert_geq(nsplit, 4, "%d of 40 samples split the rows", nsplit);
  cr_assert_geq(whole, 4, "%d of 40 samples keep the rows on one axis", whole);
  check_cands(&wl, &t, nsplit, split, NULL);
}

/* Sketches without that structure take no shaped sample. */
Test(tune_dot, shaped_samples_only_for_tile_cache_read) {
  at_workload wl = matmul(TE_F32, TE_F32, TE_F32, 64, 64, 64);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  at_rng rng;
  at_rng_seed(&rng, 1);
  at_cand c;
  for (int k = 0; k < t.nsketch; k++) {
    bool want = !strncmp(t.sketch[k].name, "tile+cache+read", 15) && !t.sketch[k].dot.insn;
    cr_assert_eq(at_sketch_shapeable(&t, k), want, "%s", t.sketch[k].name);
    cr_assert_eq(at_cand_sample_shaped(&t, NULL, k, &rng, &c), want, "%s", t.sketch[k].name);
  }
}
