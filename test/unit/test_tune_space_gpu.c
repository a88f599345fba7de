/* test_tune_space_gpu.c — the GPU search space (autotune/sketch_gpu.c), without a device: the
 * sketches a matmul and a softmax get for vulkan and cuda, candidates that stay valid under
 * sampling, mutation and crossover and either apply (bound, within the limits, lowering for
 * the target) or are refused as over the limits, and the limits themselves (threads a block,
 * shared memory of the copies), and cuda candidates with vectorized copies built to PTX.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include "te_test.h"

TestSuite(tune_space_gpu, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

static at_workload workload(const char *desc) {
  te_tensor *out = tu_op(ctx, desc);
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &out, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  return wl;
}

static at_task task(const char *desc, const char *target, at_workload *wl) {
  *wl = workload(desc);
  te_target *t = te_target_parse(ctx, target);
  cr_assert_not_null(t, "%s", te_last_error(ctx));
  at_task tk;
  cr_assert_eq(at_task_analyze_gpu(wl, t, &tk), TE_OK, "%s: %s", desc, te_last_error(ctx));
  return tk;
}

Test(tune_space_gpu, sketches_by_workload) {
  at_workload wl;
  at_task t = task("matmul M=64 N=48 K=40 dtype=f32", "vulkan", &wl);
  cr_assert_eq(t.nsketch, 2);
  cr_assert_geq(at_task_sketch_index(&t, "gpu-tile"), 0);
  cr_assert_geq(at_task_sketch_index(&t, "gpu-simple"), 0);
  cr_assert(t.gpu && t.gpu_max_threads == 256 && t.gpu_max_shared == 32768);
  t = task("matmul M=64 N=48 K=40 dtype=f32", "cuda", &wl);
  cr_assert_eq(t.nsketch, 2);
  cr_assert(t.gpu_max_threads == 1024 && t.gpu_max_shared == 49152);
  t = task("softmax N=8 D=32 dtype=f32", "vulkan", &wl);
  cr_assert_eq(t.nsketch, 1);
  cr_assert_str_eq(t.sketch[0].name, "gpu-simple");
}

static int64_t threads_of(const at_task *t, const at_cand *c) {
  const at_sketch *sk = &t->sketch[c->sketch];
  int64_t n = 1;
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == AT_ROLE_GPU_TILE)
      n *= c->v[sk->knob[k].offset + 1];
  return n;
}

/* Sampled, mutated and crossed candidates are valid; each applies (and then lowers for the
   target, its threads within the limit) or is refused as over the limits. */
static void check_space(const char *desc, const char *target, int samples) {
  at_workload wl;
  at_task t = task(desc, target, &wl);
  te_target *tgt = te_target_parse(ctx, target);
  at_rng rng;
  at_rng_seed(&rng, 7);
  int applied = 0, refused = 0;
  for (int k = 0; k < samples; k++) {
    at_cand a, b, m, x;
    at_cand_sample(&t, k % t.nsketch, &rng, &a);
    at_cand_sample(&t, k % t.nsketch, &rng, &b);
    at_cand_mutate(&t, &a, &rng, &m);
    at_cand_crossover(&t, &a, &b, &rng, &x);
    const at_cand *all[] = {&a, &m, &x};
    for (int i = 0; i < 3; i++) {
      cr_assert(at_cand_valid(&t, all[i]), "%s: invalid candidate", desc);
      te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
      te_status st = at_cand_apply(&t, all[i], s);
      if (st == TE_ERR_UNSUPPORTED) {
        refused++;
        te_clear_error(ctx);
        continue;
      }
      cr_assert_eq(st, TE_OK, "%s: %s", desc, te_last_error(ctx));
      cr_assert_leq(threads_of(&t, all[i]), t.gpu_max_threads);
      char *ir = te_lower_text_for(s, tgt, wl.nargs, wl.args, 0, NULL);
      cr_assert_not_null(ir, "%s: %s", desc, te_last_error(ctx));
      cr_assert_not_null(strstr(ir, "threadIdx.x"), "%s: not bound:\n%s", desc, ir);
      te_free(ir);
      applied++;
    }
  }
  cr_assert_gt(applied, refused, "%s: %d applied, %d over the limits", desc, applied, refused);
}

Test(tune_space_gpu, candidates_valid_and_bound) {
  check_space("matmul M=64 N=48 K=40 dtype=f32", "vulkan", 24);
  check_space("batch_matmul B=2 M=24 N=20 K=12 dtype=f32", "cuda", 12);
  check_space("softmax N=8 D=32 dtype=f32", "vulkan", 8);
}

/* A gpu-tile candidate set by hand: factors (block, thread, inner) of i and j, (k.o, k.i). */
static at_cand tile_cand(const at_task *t, int64_t ti, int64_t ii, int64_t tj, int64_t ij,
                         int64_t ki, int cache) {
  int sk = at_task_sketch_index(t, "gpu-tile");
  cr_assert_geq(sk, 0);
  at_rng rng;
  at_rng_seed(&rng, 1);
  at_cand c;
  at_cand_sample(t, sk, &rng, &c);
  const at_sketch *s = &t->sketch[sk];
  for (int k = 0; k < s->nknob; k++) {
    const at_knob *kn = &s->knob[k];
    int64_t *v = c.v + kn->offset;
    if (kn->role == AT_ROLE_GPU_TILE) {
      int64_t tf = kn->axis == 0 ? ti : tj, in = kn->axis == 0 ? ii : ij;
      v[0] = kn->extent / (tf * in), v[1] = tf, v[2] = in;
    } else if (kn->role == AT_ROLE_REDUCE_TILE) {
      v[0] = kn->extent / ki, v[1] = ki;
    } else if (kn->role == AT_ROLE_CACHE_READ) {
      v[0] = cache;
    } else if (kn->role == AT_ROLE_VECTORIZE) {
      v[0] = 0;
    }
  }
  cr_assert(at_cand_valid(t, &c));
  return c;
}

Test(tune_space_gpu, limits_refuse_candidates) {
  at_workload wl;
  at_task t = task("matmul M=256 N=256 K=256 dtype=f32", "vulkan", &wl);
  te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
  at_cand c = tile_cand(&t, 16, 1, 16, 1, 32, 1); /* 256 threads, 2 x 2 KiB copies */
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_OK, "%s", te_last_error(ctx));
  s = te_schedule_new(ctx, wl.nout, wl.outs);
  c = tile_cand(&t, 32, 1, 16, 1, 32, 1); /* 512 threads */
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_ERR_UNSUPPORTED);
  s = te_schedule_new(ctx, wl.nout, wl.outs);
  c = tile_cand(&t, 16, 2, 16, 2, 256, 1); /* two 32 KiB copies over 32 KiB of shared memory */
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_ERR_UNSUPPORTED);
  s = te_schedule_new(ctx, wl.nout, wl.outs);
  c = tile_cand(&t, 16, 2, 16, 2, 256, 0); /* the same tiles read from global memory */
  cr_assert_eq(at_cand_apply(&t, &c, s), TE_OK, "%s", te_last_error(ctx));
  char *trace = te_schedule_trace(s);
  cr_assert_null(strstr(trace, "cache_read"), "%s", trace);
  te_free(trace);
}

/* cuda has vector code in kernels: the probe keeps vectorized shared-memory copies on, and
   candidates with them build to PTX holding 128-bit copies (ld.global.nc.v4 into st.shared.v4)
   that ptxas assembles. */
Test(tune_space_gpu, cuda_vectorized_copies_build) {
  at_workload wl;
  at_task t = task("matmul M=64 N=48 K=40 dtype=f32", "cuda", &wl);
  cr_assert(t.vectorize_ok, "the probe turned vectorized copies off for cuda");
  int sk = at_task_sketch_index(&t, "gpu-tile");
  cr_assert_geq(sk, 0);
  const at_sketch *s = &t.sketch[sk];
  at_rng rng;
  at_rng_seed(&rng, 3);
  te_target *tgt = te_target_parse(ctx, "cuda");
  int built = 0, vector = 0;
  for (int k = 0; k < 16; k++) {
    at_cand c;
    at_cand_sample(&t, sk, &rng, &c);
    for (int n = 0; n < s->nknob; n++)
      if (s->knob[n].role == AT_ROLE_VECTORIZE || s->knob[n].role == AT_ROLE_CACHE_READ)
        c.v[s->knob[n].offset] = 1;
    te_schedule *sch = te_schedule_new(ctx, wl.nout, wl.outs);
    te_status st = at_cand_apply(&t, &c, sch);
    if (st == TE_ERR_UNSUPPORTED) { /* over the limits */
      te_clear_error(ctx);
      continue;
    }
    cr_assert_eq(st, TE_OK, "%s", te_last_error(ctx));
    te_module *m = NULL;
    cr_assert_eq(te_build(sch, "at_vec", wl.nargs, wl.args, 0, NULL, tgt, &m), TE_OK, "%s",
                 te_last_error(ctx));
    const char *ptx = te_module_source(m, "ptx");
    built++;
    if (strstr(ptx, "st.shared.v4.b32") && strstr(ptx, "ld.global.nc.v4.b32")) {
      vector++;
      if (vector == 1)
        tt_ptxas_assemble("a gpu-tile candidate with vectorized copies", ptx, "sm_80");
    }
  }
  cr_assert_gt(built, 0);
  cr_expect_gt(vector, 0, "%d candidates built, none with 128-bit shared copies", built);
  printf("tune_space_gpu: %d of %d cuda candidates with 128-bit shared copies\n", vector, built);
}
