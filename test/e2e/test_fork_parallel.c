/* test_fork_parallel.c — a parallel kernel still runs in a child forked after the parent ran
 * one (libgomp's pool does not survive fork; the runtime switches to pthreads there). The
 * autotuner measures in forked children, often inside programs that already ran kernels. */
#include <criterion/criterion.h>
#include <sys/wait.h>
#include <unistd.h>

#include "te_test.h"

TestSuite(fork_parallel, .init = tt_setup, .fini = tt_teardown, .timeout = 60);

Test(fork_parallel, child_after_parent_parallel_run) {
  int64_t N = 1000;
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, N)), &i,
                                  te_mul(tt_at1(A, i), te_float(tt_ctx, TE_F32, 2))));
  te_schedule *s = tt_schedule1(B);
  te_stage *st = tt_stage(s, B);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), 100, &o, &in));
  TT_OK(te_parallel(st, o));
  te_module *m = tt_build(s, "k", 2, TT_TENSORS(A, B), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, N), *b = TT_ALLOC(TE_F32, N);
  tt_fill(a, 1);
  te_rt_set_num_threads(2);
  tt_call(m, "k", 2, TT_BUFS(a, b), 0, NULL); /* the parent's OpenMP pool now exists */
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    tt_poison(b);
    DLTensor *ts[2];
    tt_dl(2, TT_BUFS(a, b), ts);
    int bad = te_module_call(m, "k", 2, ts, 0, NULL) != TE_OK;
    for (int64_t k = 0; k < N && !bad; k++)
      bad = tt_get(b, k) != 2 * tt_get(a, k);
    _exit(bad);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %d)", status);
}
