/* test_tune_knobs.c (errors) — misuses of schedule templates and their knobs, each driven
 * through te_tune (a template whose first run fails makes te_tune return that status, with the
 * knob call's message): duplicate names, counts out of [1, 64], NULL arguments, bad names,
 * repeated or non-positive candidates, orders that are not permutations, too many knobs, a
 * stage that does not exist, a template failing without a message; and the knob calls without
 * knobs. Messages name the knob and the rule.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <te/tune.h>

TestSuite(err_tune_knobs, .init = tt_setup, .fini = tt_teardown);

typedef enum misuse {
  DUP_NAME,
  DUP_NAME_KINDS,
  NCAND_ZERO,
  NCAND_TOO_MANY,
  NULL_OUT,
  NULL_NAME,
  BAD_NAME,
  NULL_CANDS,
  REPEATED_CANDS,
  FACTOR_ZERO,
  SPLIT_NULL_STAGE,
  REORDER_NOT_PERM,
  REORDER_NULL,
  TOO_MANY_KNOBS,
  NO_SUCH_STAGE,
  NO_SUCH_TENSOR,
  SILENT_FAILURE
} misuse;

static te_status misuse_template(te_schedule *s, te_knobs *k, void *user) {
  te_stage *st = te_tune_stage(s, "Cout");
  te_iter *i0 = te_axis(st, 0), *i1 = te_axis(st, 1), *o, *in;
  int c;
  int64_t v;
  static const int64_t twice[] = {4, 8, 4}, zero[] = {4, 0}, many[TE_TUNE_MAX_KNOB_CANDS + 1];
  switch (*(const misuse *)user) {
  case DUP_NAME:
    te_knob_choice(k, "x", 2, &c);
    return te_knob_choice(k, "x", 3, &c);
  case DUP_NAME_KINDS:
    te_knob_choice(k, "x", 2, &c);
    return te_knob_int(k, "x", 2, twice, &v);
  case NCAND_ZERO:
    return te_knob_int(k, "f", 0, twice, &v);
  case NCAND_TOO_MANY:
    return te_knob_int(k, "f", TE_TUNE_MAX_KNOB_CANDS + 1, many, &v);
  case NULL_OUT:
    return te_knob_choice(k, "x", 2, NULL);
  case NULL_NAME:
    return te_knob_choice(k, NULL, 2, &c);
  case BAD_NAME:
    return te_knob_choice(k, "a b", 2, &c);
  case NULL_CANDS:
    return te_knob_int(k, "v", 2, NULL, &v);
  case REPEATED_CANDS:
    return te_knob_split(k, st, i0, "s", 3, twice, &o, &in);
  case FACTOR_ZERO:
    return te_knob_split(k, st, i0, "s", 2, zero, &o, &in);
  case SPLIT_NULL_STAGE:
    return te_knob_split(k, NULL, i0, "s", 2, twice, &o, &in);
  case REORDER_NOT_PERM: {
    te_iter *orders[] = {i0, i1, i1, i1};
    return te_knob_reorder(k, st, "ord", 2, 2, orders);
  }
  case REORDER_NULL:
    return te_knob_reorder(k, st, "ord", 2, 2, NULL);
  case TOO_MANY_KNOBS:
    for (int n = 0; n <= TE_TUNE_MAX_KNOBS; n++) {
      char name[16];
      snprintf(name, sizeof name, "k%d", n);
      te_status r = te_knob_choice(k, name, 2, &c);
      if (r != TE_OK)
        return r;
    }
    return TE_OK;
  case NO_SUCH_STAGE:
    return te_tune_stage(s, "nope") ? TE_OK : TE_ERR_NOT_FOUND;
  case NO_SUCH_TENSOR:
    return te_tune_tensor(s, "nope") ? TE_OK : TE_ERR_NOT_FOUND;
  case SILENT_FAILURE:
    return TE_ERR_UNSUPPORTED;
  }
  return TE_OK;
}

/* Cout[i, j] = Ain[i, j] * 2 on 8x6. */
static te_status tune_misuse(misuse m) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *a = tt_placeholder("Ain", TE_F32, 2, TT_SHAPE(8, 6));
  te_tensor *c =
      TT_NN(te_compute(tt_ctx, "Cout", 2, TE_EXPRS(te_int(tt_ctx, 8), te_int(tt_ctx, 6)),
                       TE_EXPRS(i, j), te_mul(tt_at2(a, i, j), te_float(tt_ctx, TE_F32, 2))));
  te_tune_options o = {0};
  o.trials = 1;
  o.log_path = "/nonexistent-dir/never-written.jsonl"; /* the template fails first */
  o.template_fn = misuse_template;
  o.template_user = &m;
  return te_tune(tt_ctx, 1, &c, tt_target(), &o);
}

#define EXPECT(m, status, ...)                                                                     \
  do {                                                                                             \
    cr_assert_eq(tune_misuse(m), status, "%s", te_last_error(tt_ctx));                             \
    TT_EXPECT_ERR(tt_ctx, status, "te_tune", "template failed on its first run", __VA_ARGS__);     \
  } while (0)

Test(err_tune_knobs, duplicate_name) {
  EXPECT(DUP_NAME, TE_ERR_INVALID_ARG, "te_knob_choice", "knob 'x'", "knob names must be unique");
}

Test(err_tune_knobs, duplicate_name_of_another_kind) {
  EXPECT(DUP_NAME_KINDS, TE_ERR_INVALID_ARG, "te_knob_int", "knob 'x'", "must be unique");
}

Test(err_tune_knobs, no_candidates) {
  EXPECT(NCAND_ZERO, TE_ERR_INVALID_ARG, "te_knob_int", "knob 'f'", "ncand must be in [1, 64]",
         "got 0");
}

Test(err_tune_knobs, too_many_candidates) {
  EXPECT(NCAND_TOO_MANY, TE_ERR_INVALID_ARG, "knob 'f'", "ncand must be in [1, 64]", "got 65");
}

Test(err_tune_knobs, null_out) {
  EXPECT(NULL_OUT, TE_ERR_INVALID_ARG, "te_knob_choice", "knob 'x'", "out is NULL");
}

Test(err_tune_knobs, null_name) {
  EXPECT(NULL_NAME, TE_ERR_INVALID_ARG, "te_knob_choice", "knob name is NULL");
}

Test(err_tune_knobs, bad_name) {
  EXPECT(BAD_NAME, TE_ERR_INVALID_ARG, "knob 'a b'", "letters, digits");
}

Test(err_tune_knobs, null_candidates) {
  EXPECT(NULL_CANDS, TE_ERR_INVALID_ARG, "te_knob_int", "knob 'v'", "candidates are NULL");
}

Test(err_tune_knobs, repeated_candidates) {
  EXPECT(REPEATED_CANDS, TE_ERR_INVALID_ARG, "te_knob_split", "knob 's'",
         "candidates must be distinct");
}

Test(err_tune_knobs, factor_not_positive) {
  EXPECT(FACTOR_ZERO, TE_ERR_INVALID_ARG, "te_knob_split", "knob 's'", "factor 1 must be > 0");
}

Test(err_tune_knobs, split_without_stage) {
  EXPECT(SPLIT_NULL_STAGE, TE_ERR_INVALID_ARG, "te_knob_split", "knob 's'", "stage is NULL");
}

Test(err_tune_knobs, orders_not_permutations) {
  EXPECT(REORDER_NOT_PERM, TE_ERR_INVALID_ARG, "te_knob_reorder", "knob 'ord'",
         "order 1 is not a permutation", "repeats a loop");
}

Test(err_tune_knobs, orders_null) {
  EXPECT(REORDER_NULL, TE_ERR_INVALID_ARG, "te_knob_reorder", "knob 'ord'", "orders array is NULL");
}

Test(err_tune_knobs, too_many_knobs) {
  EXPECT(TOO_MANY_KNOBS, TE_ERR_INVALID_ARG, "knob 'k48'", "at most 48 knobs");
}

Test(err_tune_knobs, no_such_stage) {
  EXPECT(NO_SUCH_STAGE, TE_ERR_NOT_FOUND, "te_tune_stage", "no stage 'nope'");
}

Test(err_tune_knobs, no_such_tensor) {
  EXPECT(NO_SUCH_TENSOR, TE_ERR_NOT_FOUND, "te_tune_tensor", "no tensor 'nope'");
}

Test(err_tune_knobs, template_fails_without_message) {
  EXPECT(SILENT_FAILURE, TE_ERR_UNSUPPORTED, "TE_ERR_UNSUPPORTED");
}

Test(err_tune_knobs, calls_without_knobs) {
  int c;
  int64_t v, one[] = {1};
  cr_assert_eq(te_knob_choice(NULL, "x", 2, &c), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_knob_int(NULL, "x", 1, one, &v), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_knob_split(NULL, NULL, NULL, "x", 1, one, NULL, NULL), TE_ERR_INVALID_ARG);
  cr_assert_eq(te_knob_reorder(NULL, NULL, "x", 1, 1, NULL), TE_ERR_INVALID_ARG);
  cr_assert_null(te_tune_stage(NULL, "x"));
  cr_assert_null(te_tune_tensor(NULL, "x"));
  te_tensor *b = TT_NN(te_compute(tt_ctx, "Bout", 1, TE_EXPRS(te_int(tt_ctx, 8)),
                                  TE_EXPRS(te_var(tt_ctx, "i")), te_float(tt_ctx, TE_F32, 1)));
  te_schedule *s = tt_schedule1(b);
  cr_assert_null(te_tune_stage(s, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_tune_stage", "name is NULL");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_tune_stage(s, "Bout"), tt_stage(s, b));
  cr_assert_eq(te_tune_tensor(s, "Bout"), b);
  TT_NO_ERR(tt_ctx);
}

/* Placeholders have no stage; te_tune_tensor finds them among the schedule's inputs. */
Test(err_tune_knobs, tensor_lookup_finds_placeholders) {
  te_tensor *a = tt_placeholder("Ain", TE_F32, 1, TT_SHAPE(8));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *b = TT_NN(te_compute(tt_ctx, "Bout", 1, TE_EXPRS(te_int(tt_ctx, 8)), TE_EXPRS(i),
                                  te_mul(TE_AT(a, i), te_float(tt_ctx, TE_F32, 2))));
  te_schedule *s = tt_schedule1(b);
  cr_assert_eq(te_tune_tensor(s, "Ain"), a);
  cr_assert_null(te_tune_stage(s, "Ain"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_tune_stage", "Ain");
}
