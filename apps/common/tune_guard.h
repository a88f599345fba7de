/* tune_guard.h — the timing guard of the model apps' kernel generators (te-embed's
 * apps/embed/gen_guard.c, te-llama's apps/llama/gen/gen_tasks.c): tuning never makes a model
 * slower.
 *
 * A tuning log's schedule was measured by te-tune on the constant-size kernel with its inputs
 * in cache; the library ships the kernel with symbolic sizes (its loops have tails and guards
 * the constant one folded away) and runs it among other kernels, its weights out of cache.
 * Those are different kernels, so before a kernel takes the log's schedule the generator
 * builds both it and the hand schedule as the library ships them and times them here, side by
 * side, at the tuned size, and keeps the hand one unless the tuned one is clearly faster.
 *
 * How they are timed: TG_ROUNDS rounds, each one call of each module in turns (the order
 * alternates, so neither is always first), the caches flushed before every call (a model's
 * weights are out of cache when its kernel starts), on one thread, each call's CPU time of the
 * calling thread (CLOCK_THREAD_CPUTIME_ID: a busy machine's preemptions are not counted; with
 * one thread the runtime runs the kernel on the caller). Decided by tg_prefer_tuned.
 */
#ifndef TE_APPS_TUNE_GUARD_H
#define TE_APPS_TUNE_GUARD_H

#include <stdbool.h>

#include <te/te.h>

enum { TG_ROUNDS = 7 };

/* The rule: the tuned schedule is taken when its median time is at least TG_MARGIN below the
   hand schedule's and it was faster in at least TG_MIN_WINS of the TG_ROUNDS rounds. A kernel
   whose two schedules are within the noise of the measurement keeps the hand schedule, so the
   same log gives the same library from build to build (up to kernels close to the margin). */
#define TG_MARGIN 0.05
enum { TG_MIN_WINS = 5 };

typedef struct tg_verdict {
  double hand_s, tuned_s; /* median seconds of one call */
  int wins;               /* rounds the tuned schedule was the faster in */
  bool use_tuned;
} tg_verdict;

/* The verdict on n rounds of times (hand[r], tuned[r]: round r's; n <= TG_ROUNDS). */
tg_verdict tg_prefer_tuned(const double *hand, const double *tuned, int n);

/* Times function `name` of the two modules on the same arguments (the output last; its data is
   written by both) as described above and returns the verdict in *out. TE_ERR_NOMEM when the
   flush buffer cannot be had; a failed call's status otherwise (*out then says use_tuned =
   false). */
te_status tg_compare(te_module *hand, te_module *tuned, const char *name, int nargs,
                     DLTensor *const args[], tg_verdict *out);

/* "<what>: the tuning log's schedule (0.1 ms against the hand schedule's 0.2 ms, faster in 7 of
   7 rounds, at <where>)" or "...: hand schedule kept (...)", on stderr. */
void tg_report(const char *what, const char *where, const tg_verdict *v);

/* Some record of the tuning log at path was tuned for the target whose te_target_str is target
   (false too when the file cannot be read). A log made on another CPU has none: the model apps
   then keep their hand schedules, with a note, rather than refuse it (the logs committed to
   the repository were tuned on one machine and are built on others). */
bool tg_log_has_target(const char *path, const char *target);

#endif
