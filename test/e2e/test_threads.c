/* test_threads.c — core.h: "different contexts may be used in parallel from different threads".
 * Four threads each make a context, build a tiled matmul and a symbolic kernel, run them and
 * check the results against plain C; errors in one context must not show in another. The
 * threads report by return value (Criterion assertions stay on the main thread).
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

TestSuite(threads, .init = tt_setup, .fini = tt_teardown);

enum { NTHREADS = 4, M = 23, N = 19, K = 17 };

typedef struct job {
  int id;
  char failure[512]; /* "" when the thread succeeded */
} job;

static DLTensor dl2(float *data, int64_t *shape) {
  DLTensor t = {0};
  t.data = data;
  t.device = (DLDevice){kDLCPU, 0};
  t.ndim = 2;
  t.dtype = TE_F32;
  t.shape = shape;
  return t;
}

static bool fail(job *j, te_ctx *ctx, const char *what) {
  snprintf(j->failure, sizeof j->failure, "thread %d: %s: %s", j->id, what,
           ctx ? te_last_error(ctx) : "");
  return false;
}

/* Builds and runs C = A x B (tiled) in its own context. */
static bool run_matmul(job *j, te_ctx *ctx) {
  te_expr *i = te_var(ctx, "i"), *jj = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, K));
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(te_int(ctx, M), te_int(ctx, K)));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(te_int(ctx, K), te_int(ctx, N)));
  te_expr *prod = te_mul(te_at(A, 2, TE_EXPRS(i, k)), te_at(B, 2, TE_EXPRS(k, jj)));
  te_tensor *C = te_compute(ctx, "C", 2, TE_EXPRS(te_int(ctx, M), te_int(ctx, N)), TE_EXPRS(i, jj),
                            TE_SUM(prod, k));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){C});
  te_stage *st = te_stage_of(s, C);
  te_iter *io, *jo, *ii, *ji;
  if (!st || te_tile(st, te_axis(st, 0), te_axis(st, 1), 4 + j->id, 8, &io, &jo, &ii, &ji))
    return fail(j, ctx, "schedule");
  te_module *m = NULL;
  if (te_build(s, "mm", 3, (te_tensor *const[]){A, B, C}, 0, NULL, te_target_parse(ctx, "llvm"),
               &m))
    return fail(j, ctx, "te_build");
  float a[M * K], b[K * N], c[M * N];
  for (int p = 0; p < M * K; p++)
    a[p] = (float)((p * 7 + j->id) % 13 - 6) * 0.25f + 0.125f;
  for (int p = 0; p < K * N; p++)
    b[p] = (float)((p * 5 + j->id) % 11 - 5) * 0.5f + 0.25f;
  for (int p = 0; p < M * N; p++)
    c[p] = NAN;
  int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
  DLTensor ta = dl2(a, sa), tb = dl2(b, sb), tc = dl2(c, sc);
  for (int rep = 0; rep < 5; rep++)
    if (te_module_call(m, "mm", 3, (DLTensor *const[]){&ta, &tb, &tc}, 0, NULL))
      return fail(j, ctx, "te_module_call");
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++) {
      double acc = 0;
      for (int r = 0; r < K; r++)
        acc += (double)a[p * K + r] * b[r * N + q];
      if (!(fabs(c[p * N + q] - acc) <= 1e-4 * fabs(acc) + 1e-4)) {
        snprintf(j->failure, sizeof j->failure, "thread %d: C[%d, %d] = %g, expected %g", j->id, p,
                 q, (double)c[p * N + q], acc);
        return false;
      }
    }
  return true;
}

static void *worker(void *arg) {
  job *j = arg;
  te_ctx *ctx = te_ctx_new();
  if (!ctx) {
    fail(j, NULL, "te_ctx_new");
    return NULL;
  }
  if (j->id % 2 == 1 && te_var(ctx, "bad name") != NULL) /* an error in odd contexts only */
    fail(j, ctx, "te_var accepted a bad name");
  else if (j->id % 2 == 1 && te_last_status(ctx) != TE_ERR_INVALID_ARG)
    fail(j, ctx, "expected INVALID_ARG");
  else {
    te_clear_error(ctx);
    run_matmul(j, ctx);
  }
  te_ctx_free(ctx);
  return NULL;
}

Test(threads, contexts_build_and_run_in_parallel) {
  pthread_t th[NTHREADS];
  job jobs[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    jobs[t] = (job){.id = t};
    cr_assert_eq(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
  }
  for (int t = 0; t < NTHREADS; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < NTHREADS; t++)
    cr_expect_str_empty(jobs[t].failure, "%s", jobs[t].failure);
  TT_NO_ERR(tt_ctx);
}
