/* test_codegen_runtime.c — libte_runtime on its own: parallel-for (all iterations run once, the
 * first failure wins with its message, nested calls run serially, thread counts), aligned
 * allocation, and the error messages generated code records.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "te/runtime.h"

typedef struct counts {
  atomic_int hits[1000];
  atomic_int nested_inside;
} counts;

static int32_t count_body(int64_t i, void *p) {
  counts *c = p;
  atomic_fetch_add(&c->hits[i], 1);
  return 0;
}

Test(runtime, parallel_for_runs_each_iteration_once) {
  static counts c;
  for (int t = 0; t <= 3; t++) {
    memset(&c, 0, sizeof c);
    te_rt_set_num_threads(t);
    cr_assert_eq(te_rt_parallel_for(count_body, &c, 1000), 0);
    for (int i = 0; i < 1000; i++)
      cr_assert_eq(atomic_load(&c.hits[i]), 1, "threads %d i %d", t, i);
  }
  te_rt_set_num_threads(0);
  cr_expect_eq(te_rt_parallel_for(count_body, &c, 0), 0);
  cr_expect_eq(te_rt_parallel_for(count_body, &c, -5), 0);
}

static int32_t fail_body(int64_t i, void *p) {
  (void)p;
  if (i == 37)
    return te_rt_error(5, "iteration 37 failed");
  return 0;
}

Test(runtime, first_failure_and_its_message_reach_the_caller) {
  te_rt_set_num_threads(2);
  te_rt_error(0, "");
  cr_expect_eq(te_rt_parallel_for(fail_body, NULL, 100), 5);
  cr_expect_str_eq(te_rt_last_error(), "iteration 37 failed");
  te_rt_set_num_threads(1);
  cr_expect_eq(te_rt_parallel_for(fail_body, NULL, 100), 5);
  te_rt_set_num_threads(0);
}

static int32_t inner_body(int64_t i, void *p) {
  (void)i;
  atomic_fetch_add(&((counts *)p)->nested_inside, 1);
  return 0;
}
static int32_t outer_body(int64_t i, void *p) {
  counts *c = p;
  atomic_fetch_add(&c->hits[i], 1);
  return te_rt_parallel_for(inner_body, c, 10);
}

Test(runtime, nested_parallel_for) {
  static counts c;
  memset(&c, 0, sizeof c);
  te_rt_set_num_threads(2);
  cr_assert_eq(te_rt_parallel_for(outer_body, &c, 20), 0);
  cr_expect_eq(atomic_load(&c.nested_inside), 200);
  te_rt_set_num_threads(0);
}

Test(runtime, num_threads) {
  te_rt_set_num_threads(3);
  cr_expect_eq(te_rt_num_threads(), 3);
  te_rt_set_num_threads(0);
  cr_expect_geq(te_rt_num_threads(), 1);
}

Test(runtime, aligned_alloc) {
  for (int64_t n = 0; n < 5000; n += 999) {
    void *p = te_rt_alloc(n);
    cr_assert_not_null(p);
    cr_expect_eq((uintptr_t)p % 64, 0);
    memset(p, 1, (size_t)n);
    te_rt_free(p);
  }
  cr_expect_null(te_rt_alloc(-1));
  te_rt_free(NULL);
}

Test(runtime, error_messages) {
  cr_expect_eq(te_rt_arg_error(3, "kernel 'k': argument 'A' (#0) dim 1 extent", 5, 6), 3);
  cr_expect_str_eq(te_rt_last_error(),
                   "kernel 'k': argument 'A' (#0) dim 1 extent: expected 5, got 6");
  cr_expect_eq(te_rt_value_error(3, "kernel 'k': size 'n' must be in [1, 2^31)", -2), 3);
  cr_expect_str_eq(te_rt_last_error(), "kernel 'k': size 'n' must be in [1, 2^31) (got -2)");
  cr_expect_eq(te_rt_error(7, "boom"), 7);
  cr_expect_str_eq(te_rt_last_error(), "boom");
  char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  te_rt_error(1, big);
  cr_expect_eq(strlen(te_rt_last_error()), 1023);
}
