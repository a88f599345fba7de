/* test_contract.c (errors) — the error contract of include/te/core.h, both halves:
 *   - a call given valid arguments works whatever failed earlier in the context and was not
 *     cleared (a whole pipeline — define, schedule, lower, build, call, save, trace, replay,
 *     parse, tune key — run with a failure recorded before every call gives the same results as
 *     in a clean context, and the record still holds that failure at the end);
 *   - a failed status call reports its own status and message; a failed constructor keeps the
 *     first message; a NULL operand after a failure returns that failure's status and keeps its
 *     message, and without one records TE_ERR_INVALID_ARG naming the function and the operand.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(err_contract, .init = tt_setup, .fini = tt_teardown);

/* ---------------------------------------------------------------- a pipeline under fire */

/* Before each step of the pipeline: nothing, or an unrelated failure left recorded. */
typedef enum { CLEAN, AFTER_CONSTRUCTOR, AFTER_STATUS_CALL } prior;

static te_stage *victim_stage; /* a stage of a throw-away schedule, for failing te_split */

static void fail_something(te_ctx *ctx, prior p) {
  if (p == AFTER_CONSTRUCTOR)
    cr_assert_null(te_var(ctx, "1x"));
  else if (p == AFTER_STATUS_CALL)
    cr_assert_eq(te_split(victim_stage, te_axis(victim_stage, 0), 0, NULL, NULL), TE_ERR_SCHEDULE);
}

/* The message each kind of prior failure leaves (and must still be recorded at the end). */
static const char *prior_message(prior p) {
  return p == AFTER_CONSTRUCTOR   ? "te_var: name '1x' is not a C identifier"
         : p == AFTER_STATUS_CALL ? "te_split: stage 'V': iter 'i': factor must be > 0"
                                  : NULL;
}

#define STEP(p) fail_something(tt_ctx, (p))
#define OK(call) cr_assert_eq((call), TE_OK, "%s: %s", #call, te_last_error(tt_ctx))
#define NN(call) tt_nn_((void *)(call), #call, __FILE__, __LINE__)

/* What a run produces: compared between a clean run and runs after failures. */
typedef struct outcome {
  char *lowered, *trace, *workload, *parsed_text;
  char key[17];
  float c[13 * 16];
} outcome;

static void outcome_free(outcome *o) {
  te_free(o->lowered), te_free(o->trace), te_free(o->workload), te_free(o->parsed_text);
}

/* A matmul with an inlined producer, a cache_write computed at the tile loop, vectorized and
   parallel; built, called, traced, replayed, saved, parsed back and keyed. */
static void run_pipeline(prior p, outcome *out) {
  te_ctx *ctx = tt_ctx;
  te_tensor *V = tt_placeholder("Vin", TE_F32, 1, TT_SHAPE(8));
  te_expr *vi = te_var(ctx, "i");
  te_tensor *Vout = TT_NN(
      te_compute(ctx, "V", 1, (te_expr *[]){te_int(ctx, 8)}, (te_expr *[]){vi}, tt_at1(V, vi)));
  victim_stage = tt_stage(tt_schedule1(Vout), Vout);

  STEP(p);
  te_expr *M = te_int(ctx, 13), *N = te_int(ctx, 16), *K = te_int(ctx, 7);
  STEP(p);
  te_tensor *A = NN(te_placeholder(ctx, "A", TE_F32, 2, (te_expr *[]){M, K}));
  STEP(p);
  te_tensor *B = NN(te_placeholder(ctx, "B", TE_F32, 2, (te_expr *[]){K, N}));
  te_expr *i = NN(te_var(ctx, "i")), *j = NN(te_var(ctx, "j"));
  STEP(p);
  te_expr *twice = NN(te_mul(tt_at2(A, i, j), te_float(ctx, TE_F32, 2.0)));
  STEP(p);
  te_tensor *P = NN(te_compute(ctx, "P", 2, (te_expr *[]){M, K}, (te_expr *[]){i, j}, twice));
  STEP(p);
  te_expr *k = NN(te_reduce_axis(ctx, "k", te_int(ctx, 0), K));
  te_expr *m = NN(te_var(ctx, "m")), *n = NN(te_var(ctx, "n"));
  STEP(p);
  te_expr *body = NN(te_sum(te_mul(tt_at2(P, m, k), tt_at2(B, k, n)), 1, &k));
  STEP(p);
  te_tensor *C = NN(te_compute(ctx, "C", 2, (te_expr *[]){M, N}, (te_expr *[]){m, n}, body));

  STEP(p);
  te_schedule *s = NN(te_schedule_new(ctx, 1, &C));
  te_tensor *CC = NULL;
  STEP(p);
  OK(te_cache_write(s, C, TE_SCOPE_LOCAL, &CC));
  STEP(p);
  te_stage *sc = NN(te_stage_of(s, C)), *scc = NN(te_stage_of(s, CC));
  te_iter *mo, *no, *mi, *ni, *ko, *ki;
  STEP(p);
  OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 4, 8, &mo, &no, &mi, &ni));
  STEP(p);
  OK(te_compute_at(scc, sc, no));
  STEP(p);
  OK(te_split(scc, te_reduce_iter(scc, 0), 4, &ko, &ki));
  STEP(p);
  OK(te_reorder(scc, 4, (te_iter *const[]){ko, te_axis(scc, 0), ki, te_axis(scc, 1)}));
  STEP(p);
  OK(te_vectorize(scc, te_axis(scc, 1)));
  STEP(p);
  OK(te_parallel(sc, mo));
  STEP(p);
  OK(te_compute_inline(NN(te_stage_of(s, P))));

  te_tensor *args[3] = {A, B, C};
  STEP(p);
  out->lowered = NN(te_lower_text(s, 3, args, 0, NULL));
  STEP(p);
  te_target *t = NN(te_target_parse(ctx, "llvm"));
  te_module *mod = NULL;
  STEP(p);
  OK(te_build(s, "mm", 3, args, 0, NULL, t, &mod));
  STEP(p);
  cr_assert_not_null(te_module_source(mod, "ll"));

  tt_buf *a = TT_ALLOC(TE_F32, 13, 7), *b = TT_ALLOC(TE_F32, 7, 16), *c = TT_ALLOC(TE_F32, 13, 16);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_poison(c);
  DLTensor *dl[3];
  tt_dl(3, TT_BUFS(a, b, c), dl);
  STEP(p);
  OK(te_module_call(mod, "mm", 3, dl, 0, NULL));
  memcpy(out->c, c->dl.data, sizeof out->c);

  STEP(p);
  out->trace = NN(te_schedule_trace(s));
  STEP(p);
  te_schedule *again = NN(te_schedule_new(ctx, 1, &C));
  STEP(p);
  OK(te_schedule_replay(again, out->trace));

  char dir[] = "/tmp/te_contract_XXXXXX", prefix[64], lib[80];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(prefix, sizeof prefix, "%s/mm", dir);
  snprintf(lib, sizeof lib, "%s/libmm.a", dir);
  STEP(p);
  OK(te_module_save(mod, prefix, TE_SAVE_STATIC_LIB));
  cr_expect_eq(access(lib, R_OK), 0, "%s was not written", lib);
  unlink(lib);
  rmdir(dir);

  STEP(p);
  out->workload = NN(te_workload_text(1, &C));
  int nout = 0;
  te_tensor **outs = NULL;
  STEP(p);
  OK(te_parse(ctx, out->workload, &nout, &outs));
  STEP(p);
  out->parsed_text = NN(te_workload_text(nout, outs));
  STEP(p);
  te_free(NN(te_tune_workload(ctx, 1, &C, out->key)));
  STEP(p);
  te_tensor *relu = NN(te_op_relu(ctx, C, "r"));
  cr_expect_str_eq(te_tensor_name(relu), "r");

  if (p == CLEAN) {
    TT_NO_ERR(ctx);
  } else { /* successes left the record as it was: the last failure before them */
    TT_EXPECT_ERR(ctx, p == AFTER_CONSTRUCTOR ? TE_ERR_INVALID_ARG : TE_ERR_SCHEDULE,
                  prior_message(p));
  }
}

static void check_same(const outcome *clean, const outcome *o) {
  cr_expect_str_eq(o->lowered, clean->lowered);
  cr_expect_str_eq(o->trace, clean->trace);
  cr_expect_str_eq(o->workload, clean->workload);
  cr_expect_str_eq(o->parsed_text, clean->parsed_text);
  cr_expect_str_eq(o->key, clean->key);
  cr_expect_eq(memcmp(o->c, clean->c, sizeof o->c), 0, "the kernel computed other values");
}

/* The reference: the pipeline in a fresh context, checked against a plain C matmul. */
static void clean_run(outcome *o) {
  run_pipeline(CLEAN, o);
  tt_buf *a = TT_ALLOC(TE_F32, 13, 7), *b = TT_ALLOC(TE_F32, 7, 16),
         *ref = TT_ALLOC(TE_F32, 13, 16);
  tt_fill(a, 1);
  tt_fill(b, 2);
  for (int64_t q = 0; q < 13 * 7; q++)
    tt_set(a, q, 2.0 * tt_get(a, q)); /* P = 2 A, inlined */
  tt_ref_matmul(a, b, ref, 13, 16, 7);
  tt_buf got = *ref;
  got.dl.data = o->c;
  tt_assert_close(&got, ref, 7);
}

Test(err_contract, valid_calls_work_after_a_failed_constructor) {
  outcome clean = {0}, after = {0};
  clean_run(&clean);
  te_ctx_free(tt_ctx);
  tt_ctx = te_ctx_new();
  run_pipeline(AFTER_CONSTRUCTOR, &after);
  check_same(&clean, &after);
  outcome_free(&clean), outcome_free(&after);
}

Test(err_contract, valid_calls_work_after_a_failed_status_call) {
  outcome clean = {0}, after = {0};
  clean_run(&clean);
  te_ctx_free(tt_ctx);
  tt_ctx = te_ctx_new();
  run_pipeline(AFTER_STATUS_CALL, &after);
  check_same(&clean, &after);
  outcome_free(&clean), outcome_free(&after);
}

/* ---------------------------------------------------------------- what the record holds */

static te_stage *one_stage(const char *name, te_tensor **out) {
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(8));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(te_compute(tt_ctx, name, 1, (te_expr *[]){te_int(tt_ctx, 8)},
                                  (te_expr *[]){i}, tt_at1(A, i)));
  if (out)
    *out = C;
  return tt_stage(tt_schedule1(C), C);
}

/* A failed status call replaces an earlier error with its own: the status it returned and its
   message. */
Test(err_contract, failed_status_call_reports_its_own_error) {
  te_stage *st = one_stage("C", NULL);
  cr_assert_null(te_var(tt_ctx, "1x"));
  cr_assert_eq(te_split(st, te_axis(st, 0), 0, NULL, NULL), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split: stage 'C'", "factor must be > 0 (got 0)");
  cr_assert_eq(te_bind(st, te_axis(st, 0), (te_thread_tag)99), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_bind", "unknown thread tag 99");
}

/* A failed constructor keeps the earlier error (the first message wins). */
Test(err_contract, failed_constructor_keeps_the_first_message) {
  te_stage *st = one_stage("C", NULL);
  cr_assert_eq(te_split(st, te_axis(st, 0), 0, NULL, NULL), TE_ERR_SCHEDULE);
  cr_assert_null(te_var(tt_ctx, "1x"));
  cr_assert_null(te_placeholder(tt_ctx, "B", TE_F32, 1, (te_expr *[]){te_int(tt_ctx, -3)}));
  cr_assert_null(te_target_parse(tt_ctx, "nosuchtarget"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_split", "(got 0)");
}

/* A status call given the NULL of an earlier failure returns that failure's status and keeps
   its message (the root cause, not "is NULL"). */
Test(err_contract, null_from_a_failure_reports_the_root_cause) {
  te_tensor *C;
  te_stage *st = one_stage("C", &C);
  te_iter *none = te_axis(st, 5); /* fails: the stage has one axis */
  cr_assert_null(none);
  cr_assert_eq(te_split(st, none, 2, NULL, NULL), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_vectorize(st, none), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_axis: stage 'C' has 1 data axes (asked for 5)");
  te_clear_error(tt_ctx);

  te_expr *bad = te_call(tt_ctx, "nosuchfn", 0, NULL);
  te_tensor *D = te_compute(tt_ctx, "D", 1, (te_expr *[]){te_int(tt_ctx, 4)},
                            (te_expr *[]){te_var(tt_ctx, "i")}, bad);
  cr_assert_null(D);
  te_schedule *s = tt_schedule1(C);
  cr_assert_eq(te_cache_write(s, D, TE_SCOPE_LOCAL, NULL), TE_ERR_NOT_FOUND);
  te_module *m = NULL;
  cr_assert_eq(te_build(NULL, "k", 0, NULL, 0, NULL, tt_target(), &m), TE_ERR_NOT_FOUND);
  cr_assert_eq(te_build(s, "k", 1, (te_tensor *[]){D}, 0, NULL, tt_target(), &m), TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_call: unknown function 'nosuchfn'");
}

/* Status calls given a NULL with nothing recorded (case q of null_cases). */
static const char *const null_messages[] = {
    "te_split: stage 'C': iter is NULL",
    "te_vectorize: stage 'C': iter is NULL",
    "te_compute_at: the producer stage is NULL",
    "te_cache_write: tensor is NULL",
    "te_build: schedule is NULL",
    "te_build: tensors[0] is NULL",
};

static te_status null_case(int q, te_stage *st, te_tensor *C) {
  te_module *m = NULL;
  switch (q) {
  case 0:
    return te_split(st, NULL, 2, NULL, NULL);
  case 1:
    return te_vectorize(st, NULL);
  case 2:
    return te_compute_at(NULL, st, te_axis(st, 0));
  case 3:
    return te_cache_write(tt_schedule1(C), NULL, TE_SCOPE_LOCAL, NULL);
  case 4:
    return te_build(NULL, "k", 0, NULL, 0, NULL, tt_target(), &m);
  default:
    return te_build(tt_schedule1(C), "k", 1, (te_tensor *[]){NULL}, 0, NULL, tt_target(), &m);
  }
}

/* The same NULLs with nothing recorded: TE_ERR_INVALID_ARG naming the function and operand. */
Test(err_contract, null_operand_alone_is_invalid_arg) {
  te_tensor *C;
  te_stage *st = one_stage("C", &C);
  for (int q = 0; q < (int)(sizeof null_messages / sizeof *null_messages); q++) {
    te_clear_error(tt_ctx);
    cr_expect_eq(null_case(q, st, C), TE_ERR_INVALID_ARG, "case %d", q);
    TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, null_messages[q]);
  }
  te_clear_error(tt_ctx);
  cr_assert_null(te_compute(tt_ctx, "E", 1, (te_expr *[]){te_int(tt_ctx, 4)},
                            (te_expr *[]){te_var(tt_ctx, "i")}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute: tensor 'E': body is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_placeholder(tt_ctx, "F", TE_F32, 1, (te_expr *[]){NULL}));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_placeholder: tensor 'F': extent 0 is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_sum(te_float(tt_ctx, TE_F32, 1), 1, (te_expr *[]){NULL}));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_sum: axis 0 is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_relu(tt_ctx, NULL, "r"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_relu: x is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_schedule_new(tt_ctx, 1, (te_tensor *[]){NULL}));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_schedule_new: output 0 is NULL");
}

/* A status call that fails for its own reason after an unrelated failure: its own message. */
Test(err_contract, own_failure_after_an_unrelated_one) {
  te_tensor *C;
  te_stage *st = one_stage("C", &C);
  cr_assert_null(te_var(tt_ctx, "1x"));
  te_module *m = NULL;
  cr_assert_eq(te_build(tt_schedule1(C), "1k", 1, &C, 0, NULL, tt_target(), &m),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build: kernel name '1k' is not a C identifier");
  cr_assert_eq(te_split(st, te_axis(st, 0), 4, NULL, NULL), TE_OK);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build: kernel name '1k'"); /* success: kept */
}
