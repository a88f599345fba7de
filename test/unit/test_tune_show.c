/* test_tune_show.c — `te-tune show --as-c`: the C program made from a tuned trace compiles
 * against te (system cc, -Werror), prints the same trace when run with --trace, and the same
 * lowered IR as replaying the trace, for candidates of every sketch of several workloads.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <limits.h>

TestSuite(tune_show, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

/* The build directory: this executable is <build>/test/unit/test_tune_show. */
static const char *build_dir(void) {
  static char dir[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
  cr_assert_gt(n, 0);
  dir[n] = 0;
  for (int i = 0; i < 3; i++) {
    char *slash = strrchr(dir, '/');
    cr_assert_not_null(slash, "%s", dir);
    *slash = 0;
  }
  return dir;
}

static char *run(const char *cmd) {
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p, "%s", cmd);
  ir_str s = {0};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf - 1, p)) > 0) {
    buf[n] = 0;
    ir_str_puts(&s, buf);
  }
  int st = pclose(p);
  cr_assert_eq(st, 0, "command failed (%d): %s", st, cmd);
  return s.buf ? ir_str_take(&s) : strdup("");
}

static void check_program(const at_op_spec *sp, const char *trace, const char *expect_ir, int k) {
  const char *names[8];
  int nnames;
  char err[256];
  te_ctx *c2 = te_ctx_new(); /* the output's name: what the operator calls its result */
  te_tensor *outs[4];
  int nout;
  cr_assert_eq(at_op_spec_build(sp, c2, &nout, outs), TE_OK);
  char *wc = at_op_spec_c(sp, names, &nnames);
  char *c = at_trace_to_c(trace, wc, names, nnames, te_tensor_name(outs[0]), "llvm", "test program",
                          err, sizeof err);
  free(wc);
  te_ctx_free(c2);
  cr_assert_not_null(c, "%s", err);
  char src[64], exe[64];
  snprintf(src, sizeof src, "prog%d.c", k);
  snprintf(exe, sizeof exe, "prog%d", k);
  FILE *f = fopen(tu_path(src), "w");
  fputs(c, f);
  fclose(f);
  free(c);
  char cmd[4096];
  const char *b = build_dir();
  /* under the sanitizer build (its test environment sets ASAN_OPTIONS) libte needs the
     sanitizer runtimes linked first */
  const char *san = getenv("ASAN_OPTIONS") ? "-fsanitize=address,undefined" : "";
  snprintf(
      cmd, sizeof cmd,
      "cc -std=c11 -Wall -Wextra -Werror %s -I%s/include %s -o %s -L%s -lte -Wl,-rpath,%s 2>&1",
      san, TE_SOURCE_DIR, tu_path(src), tu_path(exe), b, b);
  free(run(cmd));
  snprintf(cmd, sizeof cmd, "%s --trace", tu_path(exe));
  char *got = run(cmd);
  cr_assert_str_eq(got, trace, "program %d made another trace", k);
  free(got);
  got = run(tu_path(exe));
  cr_assert_str_eq(got, expect_ir, "program %d lowers differently", k);
  free(got);
}

static void check_workload(const char *desc, int per_sketch) {
  at_op_spec sp;
  char err[256];
  cr_assert(at_op_spec_from_desc(desc, &sp, err, sizeof err), "%s", err);
  te_tensor *out = tu_op(ctx, desc);
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &out, "test", &wl), TE_OK);
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK);
  at_rng rng;
  at_rng_seed(&rng, 5);
  static int k;
  for (int sk = 0; sk < t.nsketch; sk++)
    for (int n = 0; n < per_sketch; n++) {
      at_cand c;
      at_cand_sample(&t, sk, &rng, &c);
      te_schedule *s = te_schedule_new(ctx, 1, &out);
      cr_assert_eq(at_cand_apply(&t, &c, s), TE_OK, "%s", te_last_error(ctx));
      char *trace = te_schedule_trace(s);
      char *ir = te_lower_text(s, wl.nargs, wl.args, 0, NULL);
      cr_assert_not_null(ir, "%s", te_last_error(ctx));
      check_program(&sp, trace, ir, k++);
      te_free(trace);
      te_free(ir);
    }
}

Test(tune_show, matmul) { check_workload("matmul M=32 N=32 K=16 dtype=f32", 1); }
Test(tune_show, conv2d_pad_inlined) { check_workload("conv2d C=3 H=8 W=8 O=4 pad=1 dtype=f32", 1); }
Test(tune_show, fused_consumer) { check_workload("matmul_relu M=16 N=16 K=8 dtype=f32", 1); }
Test(tune_show, softmax) { check_workload("softmax N=4 D=32 dtype=f32", 2); }

Test(tune_show, untranslatable_step) {
  const char *names[8];
  int nnames;
  at_op_spec sp;
  char err[256];
  cr_assert(at_op_spec_from_desc("matmul M=4 N=4 K=4", &sp, err, sizeof err));
  char *wc = at_op_spec_c(&sp, names, &nnames);
  cr_assert_null(at_trace_to_c("split matmul i 2\nfrobnicate matmul i\n", wc, names, nnames,
                               "matmul", "llvm", "", err, sizeof err));
  cr_assert(strstr(err, "line 2") && strstr(err, "frobnicate"), "%s", err);
  cr_assert_null(at_trace_to_c("split nosuch i 2\n", wc, names, nnames, "matmul", "llvm", "", err,
                               sizeof err));
  cr_assert(strstr(err, "nosuch"), "%s", err);
  free(wc);
}
