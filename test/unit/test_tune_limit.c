/* test_tune_limit.c — no candidate can stall a tuning run in LLVM: a candidate whose lowered body
 * is over te_tune_options.max_statements is a failed trial with a message saying so, never
 * compiled, and the run goes on; the space keeps the register tile's rows of all axes within
 * what one axis may have, so such bodies are rarely proposed (docs/tuning-measurement.md).
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

TestSuite(tune_limit, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

/* 12 x 16 rows of 64-lane vectors, both row loops unrolled: the batch matmul point that took
   LLVM 14 s here (3148 statements by lw_code_size), where the hand-like 6 x 64 takes 0.3 s. */
static const char *const big_trace = "cache_write C local\n"
                                     "split C b 12\n"
                                     "split C i 16\n"
                                     "split C j 64\n"
                                     "reorder C b.o i.o j.o b.i i.i j.i\n"
                                     "compute_at C_local C j.o\n"
                                     "split C_local b 12\n"
                                     "split C_local i 16\n"
                                     "split C_local j 64\n"
                                     "reorder C_local k b.o i.o j.o b.i i.i j.i\n"
                                     "vectorize C_local j.i\n"
                                     "unroll C_local b.i\n"
                                     "unroll C_local i.i\n";

static at_workload batch_matmul(void) {
  int nout;
  te_tensor **outs;
  cr_assert_eq(te_parse(ctx,
                        "C[b, i, j] = sum(A[b, i, k]*B[b, k, j], k) "
                        "where A: f32[12, 128, 8], B: f32[12, 8, 128], k: [0, 8)",
                        &nout, &outs),
               TE_OK, "%s", te_last_error(ctx));
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, nout, outs, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  return wl;
}

/* The compile threads refuse the job over the limit before LLVM, with the sizes in the message,
   and still build the small one of the same batch; without a limit the big one builds too. */
Test(tune_limit, compile_refuses_a_body_over_the_limit) {
  at_workload wl = batch_matmul();
  at_job jobs[2] = {{.trace = big_trace}, {.trace = ""}};
  at_compiled *c = at_compile_batch(&wl, "llvm", 2, jobs, 2, 1000);
  cr_assert_not_null(c);
  cr_assert_eq(jobs[0].status, TE_ERR_SCHEDULE, "%s", jobs[0].message);
  cr_assert(strstr(jobs[0].message, "statements after unrolling, over the tuner's limit"), "%s",
            jobs[0].message);
  cr_assert(strstr(jobs[0].message, "max_statements"), "%s", jobs[0].message);
  long long n = 0;
  const char *p = strstr(jobs[0].message, "': ");
  cr_assert(p && (n = atoll(p + 3)) > 1000, "%s", jobs[0].message);
  cr_assert_eq(jobs[0].mod, NULL);
  cr_assert_lt(jobs[0].build_s, 5.0, "refused after %.1f s: it went through LLVM", jobs[0].build_s);
  cr_assert_eq(jobs[1].status, TE_OK, "%s", jobs[1].message);
  at_compiled_free(c);
}

/* A whole run under a limit no candidate meets: every trial is an error record saying why, and
   te_tune still returns TE_OK having measured its trials. */
Test(tune_limit, run_goes_on_past_refused_candidates) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=16 dtype=f32");
  te_tune_summary sum;
  te_tune_options o = tu_quick(log, 4, 1);
  o.max_statements = 1;
  o.summary = &sum;
  cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(sum.measured, 4);
  cr_assert_eq(sum.errors, 4);
  at_log l;
  tu_read(log, &l);
  cr_assert_eq(l.n, 4);
  for (int i = 0; i < l.n; i++) {
    cr_assert_eq(l.rec[i].error, TE_ERR_SCHEDULE, "trial %d: %s", i, l.rec[i].message);
    cr_assert(strstr(l.rec[i].message, "over the tuner's limit 1"), "%s", l.rec[i].message);
  }
  at_log_free(&l);
}

Test(tune_limit, negative_limit_is_refused) {
  te_tensor *out = tu_op(ctx, "matmul M=8 N=8 K=8 dtype=f32");
  te_tune_options o = tu_quick(tu_path("l.jsonl"), 2, 1);
  o.max_statements = -1;
  cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_ERR_INVALID_ARG);
  cr_assert(strstr(te_last_error(ctx), "max_statements"), "%s", te_last_error(ctx));
}

/* The rows of a batch matmul's register tile (b and i; j carries the vector) stay within 16
   together, however the candidates are made: sampled, mutated, crossed. */
Test(tune_limit, space_bounds_the_rows_of_all_axes) {
  at_workload wl = batch_matmul();
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  at_rng rng;
  at_rng_seed(&rng, 5);
  int over_one = 0;
  for (int k = 0; k < 600; k++) {
    int sk = k % t.nsketch;
    at_cand a, b, m, x;
    at_cand_sample(&t, sk, &rng, &a);
    at_cand_sample(&t, sk, &rng, &b);
    at_cand_mutate(&t, &a, &rng, &m);
    at_cand_crossover(&t, &a, &b, &rng, &x);
    const at_cand *all[] = {&a, &b, &m, &x};
    for (int i = 0; i < 4; i++) {
      cr_assert(at_cand_valid(&t, all[i]), "sketch %s: invalid", t.sketch[sk].name);
      const at_sketch *s = &t.sketch[sk];
      int64_t rows = 1;
      int axes = 0;
      for (int q = 0; q < s->nknob; q++) {
        const at_knob *kn = &s->knob[q];
        if (kn->role != AT_ROLE_SPACE_TILE)
          continue; /* a knob of no stage (the parallel one) has stage -1 */
        int vec = s->vec_axis >= 0 ? s->vec_axis : t.stage[kn->stage].nspace - 1;
        if (kn->axis != vec) {
          int64_t r = all[i]->v[kn->offset + kn->nlevels - 1];
          rows *= r;
          axes += r > 1;
        }
      }
      cr_assert_leq(rows, 16, "sketch %s: %lld rows", s->name, (long long)rows);
      over_one += axes > 1;
    }
  }
  cr_assert_gt(over_one, 0, "no candidate had rows on two axes: the bound is not a product's");
}
