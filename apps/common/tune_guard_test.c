/* tune_guard_test.c — apps.tune_guard: the guard's rule (tune_guard.h) on measured-looking
 * times: a clearly faster tuned schedule is taken; one within the noise, one slower, and one
 * faster in the median but not round after round keep the hand schedule; and the log reader
 * finds a target's records and no other's.
 *
 *   tune_guard_test DIR      (a folder to write a small log into)
 */
#include "tune_guard.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char *what, const double *hand, const double *tuned, bool want) {
  tg_verdict v = tg_prefer_tuned(hand, tuned, TG_ROUNDS);
  bool ok = v.use_tuned == want;
  printf("%-4s %s: %s (medians %.3g against %.3g, %d wins)\n", ok ? "ok" : "FAIL", what,
         v.use_tuned ? "tuned" : "hand", v.tuned_s, v.hand_s, v.wins);
  failures += !ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tune_guard_test DIR\n");
    return 2;
  }
  const double hand[TG_ROUNDS] = {1.00, 1.02, 0.99, 1.01, 1.00, 1.03, 0.98};
  /* 20% faster in every round */
  expect("clearly faster", hand, (double[]){0.80, 0.82, 0.79, 0.81, 0.80, 0.83, 0.78}, true);
  /* 2% faster: within the noise of a loaded machine, the hand schedule stays */
  expect("2% faster", hand, (double[]){0.98, 1.00, 0.97, 0.99, 0.98, 1.01, 0.96}, false);
  /* exactly the hand schedule's times */
  expect("as fast", hand, hand, false);
  /* slower: the forced-slower case of the generators' tests, on numbers */
  expect("slower", hand, (double[]){1.30, 1.25, 1.40, 1.31, 1.29, 1.33, 1.28}, false);
  /* a median 10% lower, but the tuned one won only 4 of the 7 rounds (three outliers) */
  expect("faster in 4 of 7 rounds", hand, (double[]){0.90, 0.91, 0.89, 0.90, 1.50, 1.60, 1.70},
         false);
  /* faster in 6 of 7 rounds, one slow outlier: still taken */
  expect("one outlier", hand, (double[]){0.80, 0.82, 0.79, 0.81, 0.80, 0.83, 2.00}, true);
  tg_verdict none = tg_prefer_tuned(hand, hand, 0);
  printf("%-4s no rounds: hand\n", none.use_tuned ? "FAIL" : "ok");
  failures += none.use_tuned;

  char path[4096];
  snprintf(path, sizeof path, "%s/log.jsonl", argv[1]);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fputs("{\"target\": \"llvm -mcpu=other\", \"trace\": \"\"}\nnot json\n\n"
        "{\"target\": \"llvm -mcpu=this\"}\n",
        f);
  fclose(f);
  bool this_one = tg_log_has_target(path, "llvm -mcpu=this");
  bool absent = tg_log_has_target(path, "llvm -mcpu=third");
  bool no_file = tg_log_has_target("/nonexistent/log.jsonl", "llvm -mcpu=this");
  printf("%-4s log targets: this %d, third %d, no file %d\n",
         this_one && !absent && !no_file ? "ok" : "FAIL", this_one, absent, no_file);
  failures += !this_one || absent || no_file;
  printf("%s\n", failures ? "tune_guard_test: FAILED" : "tune_guard_test: all checks pass");
  return failures != 0;
}
