/* tune_util.h — helpers for the autotuner's tests (test_tune*.c): a fresh temporary directory
 * and context per test, small workloads, quick tuning options, and reading a log back.
 * Everything is static; included by the test_tune*.c files only.
 */
#ifndef TE_TEST_TUNE_UTIL_H
#define TE_TEST_TUNE_UTIL_H

#define _GNU_SOURCE /* mkdtemp, nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../autotune/at.h" /* the autotuner's internals (at_*) */

static te_ctx *ctx;
static char tmpdir[256];

static inline void tu_setup(void) {
  ctx = te_ctx_new();
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/te_tune_XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp");
}

static int tu_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static inline void tu_teardown(void) {
  te_ctx_free(ctx);
  ctx = NULL;
  if (tmpdir[0])
    nftw(tmpdir, tu_rm, 16, FTW_DEPTH | FTW_PHYS);
  tmpdir[0] = '\0';
}

/* Skips the test after tearing its context and directory down: Criterion's cr_skip_test leaves
   the test without calling the suite's .fini, which left an empty directory in /tmp a skip. */
#define TU_SKIP(...)                                                                               \
  do {                                                                                             \
    tu_teardown();                                                                                 \
    cr_skip_test(__VA_ARGS__);                                                                     \
  } while (0)

/* tmpdir/name in a static buffer (one of four, so a few can be live at once). */
static inline const char *tu_path(const char *name) {
  static char bufs[4][512];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, 512, "%s/%s", tmpdir, name);
  return b;
}

/* An operator workload built in c ("matmul M=16 N=16 K=16" style words). */
static inline te_tensor *tu_op(te_ctx *c, const char *desc) {
  at_op_spec sp;
  char err[256];
  cr_assert(at_op_spec_from_desc(desc, &sp, err, sizeof err), "%s", err);
  te_tensor *outs[4];
  int n;
  cr_assert_eq(at_op_spec_build(&sp, c, &n, outs), TE_OK, "%s", te_last_error(c));
  return outs[0];
}

/* The workload of output out and its analyzed task, asserting both succeed. */
static inline void tu_analyze(te_tensor *out, at_workload *wl, at_task *t) {
  cr_assert_not_null(out, "%s", te_last_error(ctx));
  cr_assert_eq(at_workload_make(ctx, 1, &out, "test", wl), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(at_task_analyze(wl, t), TE_OK, "%s", te_last_error(ctx));
}

/* The innermost factor of the tiled stage's space-tile knob of axis a in candidate c: the
   register tile along a. */
static inline int64_t tu_tile_inner(const at_task *t, const at_cand *c, int a) {
  const at_sketch *sk = &t->sketch[c->sketch];
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].stage == t->tiled && sk->knob[k].role == AT_ROLE_SPACE_TILE &&
        sk->knob[k].axis == a)
      return c->v[sk->knob[k].offset + sk->knob[k].nlevels - 1];
  cr_assert_fail("no space knob of axis %d", a);
  return 0;
}

static inline te_target *tu_target(te_ctx *c) {
  te_target *t = te_target_parse(c, "llvm");
  cr_assert_not_null(t, "%s", te_last_error(c));
  return t;
}

/* A candidate's timeout in the tests: the small workloads run in milliseconds, so no real
   candidate reaches it even on a loaded 2-core machine; only a real hang would, and it still
   ends within the tests' 240 s limit. Tests must not depend on how fast the machine is. */
enum { TU_TIMEOUT_S = 60 };

/* Options for a quick run: tiny repeats, small population, a timeout only a hang reaches. */
static inline te_tune_options tu_quick(const char *log, int trials, uint64_t seed) {
  te_tune_options o = {0};
  o.trials = trials;
  o.log_path = log;
  o.seed = seed;
  o.batch = 4;
  o.population = 16;
  o.generations = 1;
  o.min_repeat_s = 0.0005;
  o.min_repeats = 1;
  o.max_repeats = 3;
  o.timeout_s = TU_TIMEOUT_S;
  o.threads = 1;
  o.confirm = -1; /* one record per trial; test_tune_run.c tests the confirm pass */
  return o;
}

static inline void tu_read(const char *path, at_log *log) {
  cr_assert_eq(at_log_read(NULL, path, false, NULL, log), TE_OK, "cannot read %s", path);
}

static inline int tu_count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  int n = 0, c, last = '\n';
  while ((c = fgetc(f)) != EOF) {
    n += c == '\n';
    last = c;
  }
  fclose(f);
  return n + (last != '\n');
}

#endif
