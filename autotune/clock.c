/* clock.c — the cpu clock: a run's wall time less what its threads waited on the run queue.
 *
 * On a machine shared with other work, a run's wall time is its own work plus whatever the
 * scheduler gave to other processes while the run's threads were runnable. The second is the
 * machine's load, not the kernel's cost, and it changes from one minute to the next, so the
 * tuner would rank its candidates by the minute they ran in. Linux counts, per thread, the
 * nanoseconds it spent runnable but waiting for a core (the second field of
 * /proc/self/task/TID/schedstat, sched_info.run_delay); the cpu clock subtracts that.
 *
 * The team is every thread of the measuring child once its warm-up ran: the calling thread and
 * the runtime pool's workers (lib/runtime/pool.c starts them on the first parallel loop and
 * keeps them; the child is forked, so no other thread of the tuner is in it). Each thread's
 * wait over the run is capped at the run's wall time, and the team's mean wait is subtracted:
 * with n threads each waiting w of wall time W, the run did W - w of work per thread, which is
 * what n unloaded cores would take. (The sum would subtract n w and go negative when the cores
 * are shared among more threads than there are.)
 * That alone counts too much when the waits are uneven: while a worker waits for a core with the
 * loop's last chunk, the caller sleeps on the pool's futex (asleep, not waiting for a core), and
 * half the worker's wait stays in the cost. On matmul 512 (2 threads, load 14-16 on 2 cores)
 * wall less the mean wait gave a median of 2.4-8.5 ms per schedule, its quartiles spanning
 * 2.3-13.8 ms, where one thread's run takes 4.0 ms (threads 1: wall less wait, exact). So the
 * cost is also capped at the busiest thread's time on a core (its CPU-time clock): the
 * team cannot have taken longer than its busiest thread ran, and that thread did at least its
 * share of the work (a serial part included, which the mean of the threads' times would
 * spread over the team). With both: medians of 2.3-3.4 ms, quartiles 2.2-4.0 ms.
 * A wait still under way when the run ends is counted by the kernel only when its thread runs
 * again, so it is missed: the cost errs towards the wall cost. It never falls under
 * AT_CPU_FLOOR of the wall time.
 *
 * Each schedstat file is opened once (at_team_open) and read with pread, with the thread's
 * CPU-time clock, a few microseconds a thread, outside the timed interval.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "at.h"

/* A run waited at most this fraction less than its wall time: the floor of the cpu cost. */
#define AT_CPU_FLOOR 0.01

/* The CPU-time clock of thread tid: Linux's encoding of a thread's CPUCLOCK_SCHED clock (what
   glibc's pthread_getcpuclockid makes; include/linux/posix-timers.h). Reading it brings a
   running thread's time up to date, where schedstat's first field lags by up to a tick: a
   thread reading its own schedstat around a 2 ms run could see any part of it. */
static clockid_t thread_cpu_clock(int tid) { return (clockid_t)((~(unsigned)tid << 3) | 6); }

/* The run-queue wait of the thread whose schedstat fd is open and the time on a core of tid;
   false when either is unreadable. */
static bool read_times(int fd, int tid, at_thread_times *t) {
  char buf[96];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0)
    return false;
  buf[n] = 0;
  unsigned long long run = 0, wait = 0;
  struct timespec ts;
  if (sscanf(buf, "%llu %llu", &run, &wait) != 2 || clock_gettime(thread_cpu_clock(tid), &ts))
    return false;
  t->run_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  t->wait_ns = wait;
  return true;
}

bool at_cpu_clock_available(void) {
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)syscall(SYS_gettid));
    fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  at_thread_times tt;
  bool ok = fd >= 0 && read_times(fd, (int)syscall(SYS_gettid), &tt);
  if (fd >= 0)
    close(fd);
  return ok;
}

bool at_team_open(at_team *t) {
  memset(t, 0, sizeof *t);
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return false;
  struct dirent *e;
  while ((e = readdir(d)) && t->n < AT_TEAM_MAX) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[96];
    snprintf(path, sizeof path, "/proc/self/task/%.32s/schedstat", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    at_thread_times tt;
    int tid = atoi(e->d_name);
    if (fd >= 0 && read_times(fd, tid, &tt)) {
      t->tid[t->n] = tid;
      t->fd[t->n++] = fd;
    } else if (fd >= 0) {
      close(fd);
    }
  }
  closedir(d);
  if (t->n == 0)
    return false;
  return true;
}

void at_team_close(at_team *t) {
  for (int i = 0; i < t->n; i++)
    close(t->fd[i]);
  t->n = 0;
}

bool at_team_read(const at_team *t, at_thread_times *times) {
  for (int i = 0; i < t->n; i++)
    if (!read_times(t->fd[i], t->tid[i], &times[i]))
      return false;
  return true;
}

static double delta_s(uint64_t a, uint64_t b) { return b > a ? 1e-9 * (double)(b - a) : 0; }

double at_cpu_cost(double wall_s, int n, const at_thread_times *before,
                   const at_thread_times *after) {
  if (n <= 0 || !(wall_s > 0))
    return wall_s;
  double waits = 0, busiest = 0;
  for (int i = 0; i < n; i++) {
    double w = delta_s(before[i].wait_ns, after[i].wait_ns);
    waits += w < wall_s ? w : wall_s;
    double r = delta_s(before[i].run_ns, after[i].run_ns);
    busiest = r > busiest ? r : busiest;
  }
  double cpu = wall_s - waits / n;
  cpu = busiest > 0 && busiest < cpu ? busiest : cpu;
  return cpu > AT_CPU_FLOOR * wall_s ? cpu : AT_CPU_FLOOR * wall_s;
}

const char *at_clock_name(int clock) { return clock == TE_TUNE_CLOCK_WALL ? "wall" : "cpu"; }
