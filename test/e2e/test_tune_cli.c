/* test_tune_cli.c — the te-tune command line, run as a user runs it: --help of every command,
 * the documented exit codes (usage 2, no record 3, I/O 4), a short tuning run and --resume,
 * then best, show (trace, --as-c, --ir), export (a static library and header) and plot (CSV and
 * SVG) on its log.
 */
#define _GNU_SOURCE /* mkdtemp, popen */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[256], tool[PATH_MAX];

static void setup(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cr_assert_gt(n, 0);
  exe[n] = 0;
  char *dir = exe;
  for (int i = 0; i < 3; i++) { /* <build>/test/e2e/test_tune_cli */
    char *slash = strrchr(dir, '/');
    cr_assert_not_null(slash, "%s", exe);
    *slash = 0;
  }
  cr_assert_lt(strlen(dir), sizeof tool - 16);
  snprintf(tool, sizeof tool, "%.4000s/te-tune", dir);
  const char *base = getenv("TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/te_tune_cli_XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(tune_cli, .init = setup, .fini = teardown, .timeout = 240);

/* Runs te-tune with args (shell words, in tmp), returns its exit status; output in *out. */
static int te_tune(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int te_tune(char **out, const char *fmt, ...) {
  char args[2048], cmd[PATH_MAX + 3000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>&1", tmp, tool, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, p);
  buf[n] = 0;
  int st = pclose(p);
  if (out)
    *out = buf;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int lines(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  FILE *f = fopen(path, "r");
  int n = 0, c;
  while (f && (c = fgetc(f)) != EOF)
    n += c == '\n';
  if (f)
    fclose(f);
  return n;
}

static bool exists(const char *name) {
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  return stat(path, &st) == 0 && st.st_size > 0;
}

/* --timeout 60: only a hang reaches it, however loaded the machine */
#define QUICK                                                                                      \
  "--min-repeat-s 0.001 --max-repeats 3 --batch 3 --population 16 --quiet --confirm 0 "            \
  "--timeout 60"

Test(tune_cli, help_and_usage_errors) {
  char *out;
  cr_assert_eq(te_tune(&out, "--help"), 0);
  cr_assert(strstr(out, "exit status"), "%s", out);
  const char *cmds[] = {"tune", "best", "show", "export", "plot"};
  for (int i = 0; i < 5; i++) {
    cr_assert_eq(te_tune(&out, "%s --help", cmds[i]), 0, "%s --help: %s", cmds[i], out);
    cr_assert(strstr(out, "usage: te-tune"), "%s", out);
    cr_assert(strstr(out, "exit status"), "%s --help has no exit codes", cmds[i]);
  }
  cr_assert_eq(te_tune(&out, "tune --help"), 0);
  cr_assert(strstr(out, "--trials") && strstr(out, "conv2d"), "%s", out);
  cr_assert_eq(te_tune(NULL, "%s", ""), 2);
  cr_assert_eq(te_tune(NULL, "frobnicate"), 2);
  cr_assert_eq(te_tune(NULL, "tune"), 2);
  cr_assert_eq(te_tune(&out, "tune matmul M=8 N=8"), 2);
  cr_assert(strstr(out, "K is required"), "%s", out);
  cr_assert_eq(te_tune(NULL, "tune matmul M=8 N=8 K=8 --trials x"), 2);
  cr_assert_eq(te_tune(NULL, "tune nosuchop M=8"), 2);
  cr_assert_eq(te_tune(NULL, "tune matmul M=8 N=8 K=8 --target nosuch"), 2);
  /* --clock takes wall or cpu; another value is refused, naming the flag, before anything runs */
  cr_assert_eq(te_tune(&out, "tune matmul M=8 N=8 K=8 --clock tsc --log c.jsonl"), 2);
  cr_assert(strstr(out, "--clock") && strstr(out, "tsc") && strstr(out, "wall or cpu"), "%s", out);
  cr_assert_eq(te_tune(&out, "tune-tasks tasks.txt --clock"), 2);
  cr_assert(strstr(out, "--clock"), "%s", out);
  cr_assert(!exists("c.jsonl"), "nothing measured");
  cr_assert_eq(te_tune(&out, "tune --help"), 0);
  cr_assert(strstr(out, "--clock C"), "%s", out);
  cr_assert_eq(te_tune(NULL, "best --log missing.jsonl"), 4);
  cr_assert_eq(te_tune(NULL, "export --log missing.jsonl"), 2); /* --out is required */
}

/* --confirm N: the best N schedules are measured again, one record each, which `best` does not
   count as trials; the summary says so. */
/* Runs `te-tune cmd`, which must exit with rc and print needle. */
static void expect_cmd(const char *cmd, int rc, const char *needle) {
  char *out;
  cr_assert_eq(te_tune(&out, "%s", cmd), rc, "te-tune %s:\n%s", cmd, out);
  cr_assert(strstr(out, needle), "te-tune %s: '%s' expected in:\n%s", cmd, needle, out);
}

Test(tune_cli, confirm_pass) {
  expect_cmd("tune matmul M=32 N=32 K=16 --trials 5 --log c.jsonl " QUICK
             " --confirm 3 --confirm-rounds 2",
             0, "5 trials (5 measured now, 0 failed; best 3 measured again)");
  cr_assert_eq(lines("c.jsonl"), 8);
  expect_cmd("best --log c.jsonl", 0, "      5  ");         /* trials */
  expect_cmd("plot --log c.jsonl --out c", 0, "(5 trials"); /* the curve is of trials */
  expect_cmd("show --log c.jsonl", 0, "measured again by the confirm pass");
  /* resumed with no trials left: only the confirm pass runs again */
  expect_cmd("tune matmul M=32 N=32 K=16 --trials 5 --resume --log c.jsonl " QUICK " --confirm 3",
             0, "5 trials (0 measured now, 0 failed; best 3 measured again)");
  cr_assert_eq(lines("c.jsonl"), 11);
  expect_cmd("tune matmul M=8 N=8 K=8 --log c.jsonl --confirm-rounds 17", 2, "confirm_rounds");
  expect_cmd("tune --help", 0, "--confirm N");
}

Test(tune_cli, tune_resume_best_show_export_plot) {
  char *out;
  int rc = te_tune(&out, "tune matmul M=32 N=32 K=16 --trials 4 --log t.jsonl --seed 3 " QUICK);
  cr_assert_eq(rc, 0, "%s", out);
  cr_assert(strstr(out, "best") && strstr(out, "GFLOP/s"), "%s", out);
  cr_assert_eq(lines("t.jsonl"), 4);
  rc = te_tune(&out, "tune matmul M=32 N=32 K=16 --trials 6 --log t.jsonl --resume " QUICK);
  cr_assert_eq(rc, 0, "%s", out);
  cr_assert(strstr(out, "6 trials (2 measured now"), "%s", out);
  cr_assert_eq(lines("t.jsonl"), 6);

  cr_assert_eq(te_tune(&out, "best --log t.jsonl"), 0, "%s", out);
  cr_assert(strstr(out, "matmul M=32 N=32 K=16 dtype=f32"), "%s", out);
  cr_assert_eq(te_tune(&out, "show --log t.jsonl"), 0, "%s", out);
  cr_assert(strstr(out, "trace:") && strstr(out, "split matmul"), "%s", out);
  /* the target in short ("llvm -mcpu=znver5"), whole with --verbose */
  cr_assert(strstr(out, "target    llvm -mcpu=") && !strstr(out, "-mattr="), "%s", out);
  cr_assert_eq(te_tune(&out, "show --log t.jsonl --verbose"), 0, "%s", out);
  cr_assert(strstr(out, "target    llvm -mtriple="), "%s", out);
  cr_assert_eq(te_tune(&out, "show --log t.jsonl matmul M=32 N=32 K=16 --ir"), 0, "%s", out);
  cr_assert(strstr(out, "produce matmul"), "%s", out);
  cr_assert_eq(te_tune(&out, "show --log t.jsonl --as-c > prog.c"), 0, "%s", out);
  cr_assert(exists("prog.c"));
  /* a workload or target without records: 3 */
  cr_assert_eq(te_tune(&out, "show --log t.jsonl matmul M=32 N=32 K=8"), 3, "%s", out);
  cr_assert_eq(te_tune(&out, "best --log t.jsonl --key 0123456789abcdef"), 3, "%s", out);

  cr_assert_eq(te_tune(&out, "export --log t.jsonl --out mm"), 0, "%s", out);
  cr_assert(exists("libmm.a") && exists("mm.h"), "%s", out);
  cr_assert_eq(te_tune(&out, "export --log t.jsonl --out nodir/mm"), 4, "%s", out);

  cr_assert_eq(te_tune(&out, "plot --log t.jsonl --out curve"), 0, "%s", out);
  cr_assert_eq(lines("curve.csv"), 7); /* header + 6 trials */
  cr_assert(exists("curve.svg"));
}

/* A workload plugin: a shared library built against te's headers only. */
Test(tune_cli, plugin_workload) {
  char path[512], cmd[1024];
  snprintf(path, sizeof path, "%s/plugin.c", tmp);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("#include <te/te.h>\n"
        "te_status te_tune_workload_build(te_ctx *ctx, int *nout, te_tensor **outs) {\n"
        "  te_tensor *x = te_placeholder(ctx, \"x\", TE_F32, 2, TE_EXPRS(te_int(ctx, 8), "
        "te_int(ctx, 64)));\n"
        "  outs[0] = te_op_softmax(ctx, x, \"sm\");\n"
        "  *nout = 1;\n"
        "  return outs[0] ? TE_OK : te_last_status(ctx);\n"
        "}\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -shared -fPIC -I%s/include %s -o %s/plugin.so",
           TE_SOURCE_DIR, path, tmp);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  char *out;
  cr_assert_eq(te_tune(&out, "tune --plugin plugin.so --trials 2 --log p.jsonl " QUICK), 0, "%s",
               out);
  cr_assert_eq(lines("p.jsonl"), 2);
  /* the record's canonical text rebuilds the workload for show --ir */
  cr_assert_eq(te_tune(&out, "show --log p.jsonl --ir"), 0, "%s", out);
  cr_assert(strstr(out, "produce sm"), "%s", out);
  cr_assert_eq(te_tune(&out, "tune --plugin plugin.so --plugin-symbol nosuch --log p.jsonl"), 2);
  cr_assert_eq(te_tune(&out, "tune --plugin plugin.so matmul M=1 --log p.jsonl"), 2);
}

/* A plugin that also exports a schedule template (TE_TUNE_TEMPLATE_SYMBOL): te-tune searches its
   knobs, and the records say so (sketch "user", params "vj=... vec=..."). */
Test(tune_cli, plugin_template) {
  char path[512], cmd[1024];
  snprintf(path, sizeof path, "%s/tplugin.c", tmp);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("#include <te/te.h>\n"
        "te_status te_tune_workload_build(te_ctx *ctx, int *nout, te_tensor **outs) {\n"
        "  te_tensor *x = te_placeholder(ctx, \"x\", TE_F32, 2, TE_EXPRS(te_int(ctx, 16), "
        "te_int(ctx, 64)));\n"
        "  outs[0] = te_op_relu(ctx, x, \"y\");\n"
        "  *nout = 1;\n"
        "  return outs[0] ? TE_OK : te_last_status(ctx);\n"
        "}\n"
        "te_status te_tune_template(te_schedule *s, te_knobs *k, void *user) {\n"
        "  static const int64_t f[] = {4, 8, 16};\n"
        "  te_stage *st = te_tune_stage(s, \"y\");\n"
        "  te_iter *o, *in;\n"
        "  int vec;\n"
        "  te_status r = te_knob_split(k, st, te_axis(st, 1), \"vj\", 3, f, &o, &in);\n"
        "  if (r == TE_OK) r = te_knob_choice(k, \"vec\", 2, &vec);\n"
        "  if (r == TE_OK && vec) r = te_vectorize(st, in);\n"
        "  (void)user;\n"
        "  return r;\n"
        "}\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -shared -fPIC -I%s/include %s -o %s/tplugin.so",
           TE_SOURCE_DIR, path, tmp);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  char *out;
  cr_assert_eq(te_tune(&out, "tune --plugin tplugin.so --trials 4 --log tp.jsonl " QUICK), 0, "%s",
               out);
  cr_assert_eq(lines("tp.jsonl"), 4);
  snprintf(path, sizeof path, "%s/tp.jsonl", tmp);
  f = fopen(path, "r");
  cr_assert_not_null(f);
  static char line[1 << 16];
  while (fgets(line, sizeof line, f)) {
    cr_assert(strstr(line, "\"sketch\":\"user\""), "%s", line);
    cr_assert(strstr(line, "\"params\":\"vj="), "%s", line);
  }
  fclose(f);
  cr_assert_eq(te_tune(&out, "show --log tp.jsonl"), 0, "%s", out);
  cr_assert(strstr(out, "split y "), "%s", out);
}
