/* te_test_api.c — helpers that drive te's public API for the tests: building and calling a
 * kernel (failing the test with te_last_error when te refuses), checking a context's error
 * status and message, and small expression shorthands.
 */
#include "te_test.h"

#include <criterion/criterion.h>
#include <string.h>

void tt_ok_(te_status st, const char *what, const char *file, int line) {
  if (st == TE_OK)
    return;
  cr_assert_fail("%s:%d: [%s] %s returned %s: %s", file, line, tt_note_text(), what,
                 te_status_str(st), tt_ctx ? te_last_error(tt_ctx) : "(no context)");
}

void *tt_nn_(void *p, const char *what, const char *file, int line) {
  if (p)
    return p;
  cr_assert_fail("%s:%d: [%s] %s returned NULL: %s: %s", file, line, tt_note_text(), what,
                 tt_ctx ? te_status_str(te_last_status(tt_ctx)) : "?",
                 tt_ctx ? te_last_error(tt_ctx) : "(no context)");
  return NULL;
}

te_target *tt_target(void) { return TT_NN(te_target_parse(tt_ctx, "llvm")); }

te_schedule *tt_schedule1(te_tensor *out) {
  TT_NN(out);
  return TT_NN(te_schedule_new(tt_ctx, 1, TT_TENSORS(out)));
}

te_stage *tt_stage(te_schedule *s, te_tensor *t) { return TT_NN(te_stage_of(s, t)); }

te_module *tt_build(te_schedule *s, const char *name, int nt, te_tensor *const tensors[], int ns,
                    te_expr *const scalars[]) {
  te_module *m = NULL;
  te_status st = te_build(s, name, nt, tensors, ns, scalars, tt_target(), &m);
  if (st != TE_OK)
    cr_assert_fail("[%s] te_build(%s) failed: %s: %s", tt_note_text(), name, te_status_str(st),
                   te_last_error(tt_ctx));
  cr_assert(m != NULL, "te_build(%s) returned TE_OK but no module", name);
  return m;
}

void tt_dl(int n, tt_buf *const bufs[], DLTensor *out[]) {
  for (int i = 0; i < n; i++)
    out[i] = bufs[i] ? &bufs[i]->dl : NULL;
}

void tt_call(te_module *m, const char *name, int nt, tt_buf *const bufs[], int ns,
             const void *const scalars[]) {
  DLTensor *dl[16];
  cr_assert(nt <= 16, "tt_call: too many tensors");
  tt_dl(nt, bufs, dl);
  te_status st = te_module_call(m, name, nt, dl, ns, scalars);
  if (st != TE_OK)
    cr_assert_fail("[%s] te_module_call(%s) failed: %s: %s", tt_note_text(), name,
                   te_status_str(st), te_last_error(tt_ctx));
}

void tt_expect_err_(te_ctx *ctx, te_status want, const char *const substrs[], const char *file,
                    int line) {
  te_status got = te_last_status(ctx);
  const char *msg = te_last_error(ctx);
  cr_assert(msg != NULL, "%s:%d: te_last_error returned NULL", file, line);
  if (got != want)
    cr_assert_fail("%s:%d: expected status %s, got %s (message: \"%s\")", file, line,
                   te_status_str(want), te_status_str(got), msg);
  for (int i = 0; substrs[i]; i++) {
    if (!strstr(msg, substrs[i]))
      cr_assert_fail("%s:%d: status %s as expected, but the message \"%s\" lacks \"%s\"", file,
                     line, te_status_str(got), msg, substrs[i]);
  }
}

void tt_no_err_(te_ctx *ctx, const char *file, int line) {
  te_status st = te_last_status(ctx);
  if (st != TE_OK)
    cr_assert_fail("%s:%d: unexpected error in setup: %s: %s", file, line, te_status_str(st),
                   te_last_error(ctx));
}

te_expr *tt_at1(te_tensor *t, te_expr *i) { return te_at(t, 1, TE_EXPRS(i)); }

te_expr *tt_at2(te_tensor *t, te_expr *i, te_expr *j) { return te_at(t, 2, TE_EXPRS(i, j)); }

te_expr *tt_at3(te_tensor *t, te_expr *i, te_expr *j, te_expr *k) {
  return te_at(t, 3, TE_EXPRS(i, j, k));
}

void tt_shape_exprs(int ndim, const int64_t shape[], te_expr *out[]) {
  for (int i = 0; i < ndim; i++)
    out[i] = te_int(tt_ctx, shape[i]);
}

te_tensor *tt_matmul(te_tensor *A, te_tensor *B, int64_t m, int64_t n, int64_t kk) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, kk));
  return TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, m), te_int(tt_ctx, n)),
                          TE_EXPRS(i, j), TE_SUM(te_mul(tt_at2(A, i, k), tt_at2(B, k, j)), k)));
}

te_tensor *tt_placeholder(const char *name, te_dtype dtype, int ndim, const int64_t shape[]) {
  te_expr *sh[TE_MAX_DIMS];
  tt_shape_exprs(ndim, shape, sh);
  return TT_NN(te_placeholder(tt_ctx, name, dtype, ndim, sh));
}
