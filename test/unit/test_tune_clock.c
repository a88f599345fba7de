/* test_tune_clock.c — the cpu clock (autotune/clock.c): a spinning loop, timed while other
 * processes compete for the cores, costs on the cpu clock what it ran (its thread CPU time), at
 * most its wall time and above zero; the arithmetic of the team's mean wait; the log's
 * tuner.measure.clock and result.cpu_costs round-trip and rank the record, and a log written
 * before them still loads, on the wall clock; te_tune records both clocks and refuses a clock
 * it does not know.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

TestSuite(tune_clock, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

static double now_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What one spin measured: wall, cpu clock, and the thread's CPU time. */
typedef struct spin_result {
  int ok;
  double wall, cpu, thread_cpu;
} spin_result;

/* Spins for cpu_s of this thread's CPU time, timed as measure.c times a run. Run in a forked
   single-threaded child, so the team is that one thread (Criterion's own threads stay out). */
static spin_result spin_timed(double cpu_s) {
  spin_result r = {0};
  at_team team;
  static at_thread_times w0[AT_TEAM_MAX], w1[AT_TEAM_MAX];
  if (!at_team_open(&team) || team.n != 1 || !at_team_read(&team, w0))
    return r;
  double t0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
  volatile unsigned long sink = 0;
  while (now_s(CLOCK_THREAD_CPUTIME_ID) - c0 < cpu_s)
    for (int i = 0; i < 10000; i++)
      sink += (unsigned long)i;
  r.thread_cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
  r.wall = now_s(CLOCK_MONOTONIC) - t0;
  r.ok = at_team_read(&team, w1);
  r.cpu = at_cpu_cost(r.wall, team.n, w0, w1);
  at_team_close(&team);
  return r;
}

static pid_t spinner(void) {
  pid_t p = fork();
  if (p == 0) {
    volatile unsigned long sink = 0;
    for (;;)
      sink++;
  }
  return p;
}

/* The spin in a child, with `compete` spinning processes beside it. */
static spin_result spin_in_child(double cpu_s, int compete) {
  pid_t comp[16];
  for (int i = 0; i < compete; i++)
    cr_assert_gt(comp[i] = spinner(), 0);
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t p = fork();
  if (p == 0) {
    spin_result r = spin_timed(cpu_s);
    ssize_t w = write(fds[1], &r, sizeof r);
    _exit(w == sizeof r ? 0 : 1);
  }
  close(fds[1]);
  spin_result r = {0};
  cr_assert_eq(read(fds[0], &r, sizeof r), (ssize_t)sizeof r);
  close(fds[0]);
  waitpid(p, NULL, 0);
  for (int i = 0; i < compete; i++) {
    kill(comp[i], SIGKILL);
    waitpid(comp[i], NULL, 0);
  }
  return r;
}

Test(tune_clock, spin_costs_what_it_ran) {
  if (!at_cpu_clock_available()) {
    cr_log_warn("no /proc/self/task/*/schedstat here: the cpu clock is not tested");
    return;
  }
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  int compete = ncpu > 0 && ncpu < 14 ? (int)ncpu + 2 : 16; /* more runnable than cores */
  for (int k = 0; k < 2; k++) {
    spin_result r = spin_in_child(0.04, k ? compete : 0);
    cr_assert(r.ok, "schedstat unreadable in the child");
    cr_assert_gt(r.cpu, 0);
    cr_assert_leq(r.cpu, r.wall, "cpu %.6f s > wall %.6f s", r.cpu, r.wall);
    /* wall less the run-queue waits is the time the thread ran: its CPU time (the kernel's two
       accountings differ by a tick or so, and by a few percent of the waits: the scheduler
       counts a wait at its own switches; 15 ms of 353 ms of waits once, under ASan with 4
       spinners and another test on 2 cores). Still far from the wall clock, which would be off
       by all of the waits. */
    double waits = r.wall - r.thread_cpu;
    cr_assert_leq(fabs(r.cpu - r.thread_cpu), 0.25 * r.thread_cpu + 0.1 * waits + 0.004,
                  "%d competing: cpu clock %.6f s, thread CPU time %.6f s, wall %.6f s",
                  k ? compete : 0, r.cpu, r.thread_cpu, r.wall);
  }
}

Test(tune_clock, mean_wait_of_the_team) {
  /* times in ns: {on a core, waiting for one} */
  at_thread_times before[2] = {{0, 1000}, {0, 5000}};
  at_thread_times after[2] = {{6000000, 1000 + 4000000}, {2000000, 5000 + 8000000}};
  /* a 10 ms run whose two threads waited 4 and 8 ms: each ran 4 ms on average less */
  cr_assert_float_eq(at_cpu_cost(0.010, 2, before, after), 0.010 - 0.006, 1e-12);
  /* one thread waited 8 ms with the loop's last chunk while the other slept: wall less the mean
     wait says 6 ms, but neither thread ran more than 3 ms */
  at_thread_times uneven[2] = {{3000000, 1000}, {2000000, 5000 + 8000000}};
  cr_assert_float_eq(at_cpu_cost(0.010, 2, before, uneven), 0.003, 1e-12);
  /* a wait longer than the run (the reads straddle it) counts as the whole run; the cost keeps
     a floor of 1% of the wall time */
  at_thread_times late[2] = {{9000000, 1000 + 50000000}, {9000000, 5000 + 50000000}};
  cr_assert_float_eq(at_cpu_cost(0.010, 2, before, late), 0.0001, 1e-12);
  cr_assert_float_eq(at_cpu_cost(0.010, 0, before, after), 0.010, 1e-12); /* no team: wall */
  cr_assert_str_eq(at_clock_name(TE_TUNE_CLOCK_CPU), "cpu");
  cr_assert_str_eq(at_clock_name(TE_TUNE_CLOCK_WALL), "wall");
}

/* ---------------------------------------------------------------- the log */

static at_record record(int clock, double *costs, double *cpu, int n) {
  at_record r = {0};
  r.version = AT_LOG_VERSION;
  r.key = "00000000000000cc";
  r.target = "llvm -mcpu=x";
  r.trace = "split C i 2\n";
  r.sketch = "tile";
  r.params = "1";
  r.ncosts = n;
  r.costs = costs;
  r.ncpu_costs = cpu ? n : 0;
  r.cpu_costs = cpu;
  r.error_kind = "";
  r.message = "";
  r.timestamp = "2026-01-02T03:04:05.678Z";
  r.te_version = TE_VERSION_STRING;
  r.measure = (at_measure_opts){0.1, 3, 100, 1, 10, 1, 0, clock};
  return r;
}

Test(tune_clock, log_fields_round_trip) {
  const char *path = tu_path("log.jsonl");
  double wall[3] = {0.004, 0.003, 0.009}, cpu[3] = {0.002, 0.0025, 0.001};
  at_record in[2] = {record(TE_TUNE_CLOCK_CPU, wall, cpu, 3),
                     record(TE_TUNE_CLOCK_WALL, wall, cpu, 3)};
  in[1].trace = "split C i 4\n";
  FILE *f = at_log_open(path);
  cr_assert_not_null(f);
  for (int i = 0; i < 2; i++)
    cr_assert(at_log_append(f, &in[i]));
  fclose(f);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 2);
  const at_record *r = &log.rec[0];
  cr_assert_eq(r->measure.clock, TE_TUNE_CLOCK_CPU);
  cr_assert_eq(r->ncosts, 3);
  cr_assert_eq(r->ncpu_costs, 3);
  for (int i = 0; i < 3; i++) {
    cr_assert_float_eq(r->costs[i], wall[i], 1e-15);
    cr_assert_float_eq(r->cpu_costs[i], cpu[i], 1e-15);
  }
  cr_assert_float_eq(at_record_cost(r), 0.002, 1e-15, "the cpu clock's median ranks it");
  r = &log.rec[1];
  cr_assert_eq(r->measure.clock, TE_TUNE_CLOCK_WALL);
  cr_assert_eq(r->ncpu_costs, 3);
  cr_assert_float_eq(at_record_cost(r), 0.004, 1e-15, "the wall clock's median ranks it");
  cr_assert_eq(at_log_best(&log, "00000000000000cc", NULL), 0);
  at_log_free(&log);
  /* the text: the clock's name, the cpu costs beside the costs */
  f = fopen(path, "r");
  char line[4096];
  cr_assert_not_null(fgets(line, sizeof line, f));
  fclose(f);
  cr_assert_not_null(strstr(line, "\"clock\":\"cpu\""), "%s", line);
  cr_assert_not_null(strstr(line, "\"cpu_costs\":[0.002,"), "%s", line);
}

/* A record as te_tune wrote it before the cpu clock: no tuner.measure.clock, no
   result.cpu_costs. It loads, on the wall clock, ranked by its costs' median; a cpu_costs that
   does not match the runs is ignored. */
Test(tune_clock, old_log_loads) {
  const char *path = tu_path("old.jsonl");
  FILE *f = fopen(path, "w");
  fputs("{\"version\":1,\"workload\":{\"key\":\"b5721fe65912a28b\",\"text\":null,\"desc\":null},"
        "\"target\":\"llvm\",\"trace\":\"split C i 8\\n\",\"flops\":524288.0,"
        "\"result\":{\"costs\":[3.1e-06,2.9e-06,3.0e-06],\"error\":0,\"error_name\":\"TE_OK\","
        "\"error_kind\":\"\",\"message\":\"\"},\"timestamp\":\"2025-06-01T12:41:32.950Z\","
        "\"te_version\":\"0.1.0\",\"tuner\":{\"seed\":\"0\",\"trial\":0,\"elapsed_s\":1.93,"
        "\"load1\":0.42,\"measure\":{\"min_repeat_s\":0.1,\"min_repeats\":3,\"max_repeats\":100,"
        "\"warmup\":1,\"timeout_s\":10.0,\"threads\":0},\"sketch\":\"tile\",\"params\":\"1\"}}\n",
        f);
  fputs("{\"version\":1,\"workload\":{\"key\":\"b5721fe65912a28b\"},\"target\":\"llvm\","
        "\"trace\":\"split C i 4\\n\",\"result\":{\"costs\":[4e-06,5e-06],\"cpu_costs\":[1e-06],"
        "\"error\":0},\"tuner\":{\"measure\":{\"clock\":\"cpu\"}}}\n",
        f);
  fclose(f);
  at_log log;
  tu_read(path, &log);
  cr_assert_eq(log.n, 2);
  cr_assert_eq(log.skipped, 0);
  cr_assert_eq(log.rec[0].measure.clock, TE_TUNE_CLOCK_WALL);
  cr_assert_eq(log.rec[0].ncpu_costs, 0);
  cr_assert_float_eq(at_record_cost(&log.rec[0]), 3.0e-06, 1e-18);
  cr_assert_eq(log.rec[1].measure.clock, TE_TUNE_CLOCK_CPU);
  cr_assert_eq(log.rec[1].ncpu_costs, 0, "one cpu cost for two runs is not kept");
  cr_assert_float_eq(at_record_cost(&log.rec[1]), 4.5e-06, 1e-18);
  cr_assert_eq(at_log_best(&log, "b5721fe65912a28b", "llvm"), 0);
  at_log_free(&log);
}

/* ---------------------------------------------------------------- te_tune */

Test(tune_clock, te_tune_records_both_clocks) {
  bool cpu_ok = at_cpu_clock_available();
  for (int clock = TE_TUNE_CLOCK_CPU; clock <= TE_TUNE_CLOCK_WALL; clock++) {
    const char *path = tu_path(clock == TE_TUNE_CLOCK_CPU ? "cpu.jsonl" : "wall.jsonl");
    te_tensor *out = tu_op(ctx, "matmul M=32 N=32 K=16 dtype=f32");
    te_tune_options o = tu_quick(path, 4, 3);
    o.clock = clock;
    o.threads = 2; /* the pool's worker is in the team */
    o.min_repeats = 3;
    te_tune_summary sum;
    o.summary = &sum;
    cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_OK, "%s", te_last_error(ctx));
    cr_assert_eq(sum.errors, 0);
    at_log log;
    tu_read(path, &log);
    cr_assert_eq(log.n, 4);
    for (int i = 0; i < log.n; i++) {
      const at_record *r = &log.rec[i];
      cr_assert_eq(r->measure.clock, cpu_ok ? clock : TE_TUNE_CLOCK_WALL);
      cr_assert_geq(r->ncosts, 3);
      cr_assert_eq(r->ncpu_costs, cpu_ok ? r->ncosts : 0);
      for (int k = 0; k < r->ncpu_costs; k++) {
        cr_assert_gt(r->cpu_costs[k], 0);
        cr_assert_leq(r->cpu_costs[k], r->costs[k], "run %d: cpu %g > wall %g", k, r->cpu_costs[k],
                      r->costs[k]);
      }
      double want = clock == TE_TUNE_CLOCK_CPU && cpu_ok ? at_median(r->cpu_costs, r->ncpu_costs)
                                                         : at_median(r->costs, r->ncosts);
      cr_assert_float_eq(at_record_cost(r), want, 1e-15);
    }
    cr_assert_float_eq(sum.best_cost_s, at_log_best_cost(&log, sum.key, NULL), 1e-15);
    at_log_free(&log);
  }
}

Test(tune_clock, unknown_clock_is_refused) {
  te_tensor *out = tu_op(ctx, "matmul M=8 N=8 K=8 dtype=f32");
  te_tune_options o = tu_quick(tu_path("log.jsonl"), 1, 0);
  o.clock = 7;
  cr_assert_eq(te_tune(ctx, 1, &out, tu_target(ctx), &o), TE_ERR_INVALID_ARG);
  cr_assert_not_null(strstr(te_last_error(ctx), "clock"), "%s", te_last_error(ctx));
  cr_assert_eq(tu_count_lines(tu_path("log.jsonl")), 0, "nothing measured");
}
