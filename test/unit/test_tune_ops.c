/* test_tune_ops.c — the operations a workload's rate is counted in: floating-point operations
 * and integer ones (an int8 matmul's multiply-adds), never the index arithmetic or conditions
 * around them; the log's int_ops field (absent from float records and from logs older than it);
 * and a tuning run of an integer workload that reports GOP/s rather than 0 GFLOP/s.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_ops, .init = tu_setup, .fini = tu_teardown);

static at_workload workload_of(te_tensor *out) {
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &out, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  return wl;
}

static te_tensor *matrix(const char *name, te_dtype dt, int64_t r, int64_t c) {
  return te_placeholder(ctx, name, dt, 2, TE_EXPRS(te_int(ctx, r), te_int(ctx, c)));
}

/* u8 x i8 -> i32: 2 M N K integer operations (the widening casts are not arithmetic). */
Test(tune_ops, int8_matmul_counts_integer_multiply_adds) {
  te_tensor *c = te_op_matmul_acc(ctx, matrix("A", TE_U8, 12, 20), matrix("B", TE_I8, 20, 7), 0, 0,
                                  TE_I32, NULL);
  cr_assert_not_null(c, "%s", te_last_error(ctx));
  at_workload wl = workload_of(c);
  cr_assert_float_eq(at_workload_int_ops(&wl), 2.0 * 12 * 7 * 20, 1e-9);
  cr_assert_float_eq(at_workload_flops(&wl), 0, 1e-9);
}

Test(tune_ops, float_matmul_has_no_integer_ops) {
  te_tensor *c =
      te_op_matmul(ctx, matrix("A", TE_F32, 12, 20), matrix("B", TE_F32, 20, 7), 0, 0, NULL);
  at_workload wl = workload_of(c);
  cr_assert_float_eq(at_workload_flops(&wl), 2.0 * 12 * 7 * 20, 1e-9);
  cr_assert_float_eq(at_workload_int_ops(&wl), 0, 1e-9);
}

/* A padded, strided float convolution: its padding stage's bounds conditions and its input's
   index arithmetic (y * 2 + ry - 1) are integer expressions, and count nothing. */
Test(tune_ops, index_arithmetic_and_conditions_are_not_counted) {
  te_tensor *d =
      te_placeholder(ctx, "data", TE_F32, 4,
                     TE_EXPRS(te_int(ctx, 1), te_int(ctx, 3), te_int(ctx, 9), te_int(ctx, 9)));
  te_tensor *w =
      te_placeholder(ctx, "kernel", TE_F32, 4,
                     TE_EXPRS(te_int(ctx, 4), te_int(ctx, 3), te_int(ctx, 3), te_int(ctx, 3)));
  te_conv2d_params p = {2, 2, 1, 1, 1, 1};
  te_tensor *o = te_op_conv2d_nchw(ctx, d, w, &p, NULL);
  cr_assert_not_null(o, "%s", te_last_error(ctx));
  at_workload wl = workload_of(o);
  cr_assert_float_eq(at_workload_int_ops(&wl), 0, 1e-9);
  cr_assert_float_eq(at_workload_flops(&wl), 2.0 * 4 * 5 * 5 * 3 * 3 * 3, 1e-9);
}

/* An integer element-wise op whose value uses its index: i * 3 + A[i] is 2 integer
   operations a point; the access's index is not counted. */
Test(tune_ops, integer_values_computed_from_indices_count) {
  te_tensor *a = te_placeholder(ctx, "A", TE_I32, 1, TE_EXPRS(te_int(ctx, 10)));
  te_expr *i = te_var(ctx, "i");
  te_tensor *o = te_compute(ctx, "B", 1, TE_EXPRS(te_int(ctx, 10)), TE_EXPRS(i),
                            te_add(te_mul(i, te_int(ctx, 3)), TE_AT(a, te_add(i, te_int(ctx, 0)))));
  cr_assert_not_null(o, "%s", te_last_error(ctx));
  at_workload wl = workload_of(o);
  cr_assert_float_eq(at_workload_int_ops(&wl), 2.0 * 10, 1e-9);
}

static at_record record(double flops, double int_ops, double *costs) {
  at_record r = {0};
  r.version = AT_LOG_VERSION;
  r.key = "00000000000000cc";
  r.target = "llvm";
  r.trace = "";
  r.sketch = "tile";
  r.params = "";
  r.error_kind = "";
  r.message = "";
  r.ncosts = 1;
  r.costs = costs;
  r.flops = flops;
  r.int_ops = int_ops;
  return r;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* int_ops round-trips and makes the rate GOP/s; a float record does not write the field (its
   line is what it was before the field existed) and reads back 0. */
Test(tune_ops, log_int_ops_field) {
  const char *path = tu_path("log.jsonl");
  double cost = 0.002;
  at_record in[2] = {record(0, 4e6, &cost), record(3e6, 0, &cost)};
  FILE *f = at_log_open(path);
  cr_assert(at_log_append(f, &in[0]) && at_log_append(f, &in[1]));
  fclose(f);
  const char *text = slurp(path), *nl = strchr(text, '\n');
  cr_assert(strstr(text, "\"int_ops\"") && strstr(text, "\"int_ops\"") < nl, "%s", text);
  cr_assert_null(strstr(nl, "int_ops"), "a float record has no int_ops: %s", nl);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 2);
  cr_assert_float_eq(log.rec[0].int_ops, 4e6, 1e-6);
  cr_assert_float_eq(at_record_gops(&log.rec[0]), 4e6 / 0.002 * 1e-9, 1e-12);
  cr_assert_float_eq(at_record_gflops(&log.rec[0]), 0, 1e-12);
  cr_assert_str_eq(at_record_rate_unit(&log.rec[0]), "GOP/s");
  cr_assert_float_eq(log.rec[1].int_ops, 0, 1e-12);
  cr_assert_float_eq(at_record_gops(&log.rec[1]), at_record_gflops(&log.rec[1]), 1e-12);
  cr_assert_str_eq(at_record_rate_unit(&log.rec[1]), "GFLOP/s");
  at_log_free(&log);
}

/* A line written before the field existed (the fuzz corpus' one-record) reads as before;
   a nonsense int_ops (negative, a string) is no rate. */
Test(tune_ops, old_and_odd_records_read) {
  const char *path = tu_path("old.jsonl");
  FILE *f = fopen(path, "w");
  fputs("{\"version\":1,\"workload\":{\"key\":\"5d3c0e12ea36e33d\"},\"target\":\"llvm\",\"trace\":"
        "\"\",\"flops\":4862.0,\"result\":{\"costs\":[3e-06],\"error\":0}}\n",
        f);
  fputs("{\"version\":1,\"workload\":{\"key\":\"5d3c0e12ea36e33d\"},\"target\":\"llvm\",\"trace\":"
        "\"x\",\"flops\":0,\"int_ops\":-5,\"result\":{\"costs\":[3e-06],\"error\":0}}\n",
        f);
  fputs("{\"version\":1,\"workload\":{\"key\":\"5d3c0e12ea36e33d\"},\"target\":\"llvm\",\"trace\":"
        "\"y\",\"int_ops\":\"many\",\"result\":{\"costs\":[3e-06],\"error\":0}}\n",
        f);
  fclose(f);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 3);
  cr_assert_float_eq(at_record_gops(&log.rec[0]), 4862.0 / 3e-6 * 1e-9, 1e-9);
  cr_assert_str_eq(at_record_rate_unit(&log.rec[0]), "GFLOP/s");
  for (int i = 1; i < 3; i++) {
    cr_assert_float_eq(log.rec[i].int_ops, 0, 1e-12);
    cr_assert_float_eq(at_record_gops(&log.rec[i]), 0, 1e-12);
  }
  at_log_free(&log);
}

/* te_tune on an i32 matmul: the summary and the progress say GOP/s (not 0), the records hold
   int_ops. */
static void on_progress(const te_tune_progress *p, void *user) {
  if (p->last_status == TE_OK)
    *(double *)user = p->last_gops;
}

Test(tune_ops, integer_tuning_run_reports_gops) {
  const char *log = tu_path("log.jsonl");
  te_tensor *out = tu_op(ctx, "matmul M=16 N=16 K=8 dtype=i32");
  te_tune_summary sum;
  double last = 0;
  te_tune_options o = tu_quick(log, 3, 1);
  o.summary = &sum;
  o.progress = on_progress;
  o.progress_user = &last;
  cr_assert_eq(te_tune(ctx, 1, &out, te_target_parse(ctx, "llvm"), &o), TE_OK, "%s",
               te_last_error(ctx));
  cr_assert_eq(sum.errors, 0);
  cr_assert_float_eq(sum.int_ops, 2.0 * 16 * 16 * 8, 1e-9);
  cr_assert_float_eq(sum.flops, 0, 1e-9);
  cr_assert_float_eq(sum.best_gflops, 0, 1e-12);
  cr_assert_float_eq(sum.best_gops, sum.int_ops / sum.best_cost_s * 1e-9, 1e-9);
  cr_assert_gt(last, 0);
  at_log l;
  tu_read(log, &l);
  for (int i = 0; i < l.n; i++)
    cr_assert_float_eq(l.rec[i].int_ops, sum.int_ops, 1e-9);
  at_log_free(&l);
}
