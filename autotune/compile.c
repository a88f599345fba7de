/* compile.c — a round's candidates compiled in parallel, one context per thread.
 *
 * Contexts are independent (docs/design.md §2: different contexts build in parallel), so each
 * thread clones the workload into its own context, parses the target there and builds its share of
 * the jobs (job i goes to thread i % nthreads, so the assignment does not depend on timing). The
 * modules stay alive in those contexts until at_compiled_free: the measurer forks children that
 * call their entry points.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "at.h"
#include "driver/driver.h"
#include "target/target.h"

struct at_compiled {
  int n;
  te_ctx **ctxs;
};

typedef struct worker {
  const at_workload *src;
  const char *target;
  at_job *jobs;
  int njobs, first, step;
  te_ctx *ctx;
  int max_statements; /* 0: no limit */
} worker;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fail_job(at_job *j, te_ctx *ctx) {
  j->status = te_last_status(ctx) != TE_OK ? te_last_status(ctx) : TE_ERR_INTERNAL;
  snprintf(j->message, sizeof j->message, "%s", te_last_error(ctx));
  te_clear_error(ctx);
}

static void build_one(worker *w, const at_workload *wl, te_target *tgt, at_job *j) {
  double t0 = now_s();
  /* checked after lowering, before LLVM: a thread inside LLVM cannot be stopped (driver.h) */
  dr_size_limit limit = {w->max_statements, "te_tune", "the tuner's limit",
                         "te_tune_options.max_statements, te-tune --max-statements: code LLVM "
                         "would compile for minutes"};
  te_schedule *s = te_schedule_new(w->ctx, wl->nout, wl->outs);
  te_module *mod = NULL;
  if (!s || te_schedule_replay(s, j->trace) != TE_OK ||
      dr_build_bounded(s, "at_kernel", wl->nargs, wl->args, 0, NULL, tgt,
                       w->max_statements > 0 ? &limit : NULL, &mod) != TE_OK) {
    fail_job(j, w->ctx);
  } else if (tg_is_gpu(tgt)) { /* a GPU kernel is called through its module (measure.c) */
    j->entry = mod;
    j->mod = mod;
    j->status = TE_OK;
  } else if (!(j->entry = te_module_entry(mod, "at_kernel"))) {
    fail_job(j, w->ctx);
  } else {
    j->mod = mod;
    j->status = TE_OK;
  }
  j->build_s = now_s() - t0;
}

static void *work(void *arg) {
  worker *w = arg;
  at_workload wl;
  te_target *tgt = NULL;
  te_status st = at_workload_clone(w->src, w->ctx, &wl);
  if (st == TE_OK && !(tgt = te_target_parse(w->ctx, w->target)))
    st = te_last_status(w->ctx);
  for (int i = w->first; i < w->njobs; i += w->step) {
    if (st != TE_OK) {
      w->jobs[i].status = st;
      snprintf(w->jobs[i].message, sizeof w->jobs[i].message, "%s", te_last_error(w->ctx));
      continue;
    }
    build_one(w, &wl, tgt, &w->jobs[i]);
  }
  return NULL;
}

at_compiled *at_compile_batch(const at_workload *src, const char *target, int njobs, at_job *jobs,
                              int nthreads, int max_statements) {
  if (nthreads < 1)
    nthreads = 1;
  if (nthreads > njobs)
    nthreads = njobs > 0 ? njobs : 1;
  at_compiled *c = ir_calloc(NULL, 1, sizeof *c);
  worker *w = ir_calloc(NULL, (size_t)nthreads, sizeof *w);
  pthread_t *th = ir_calloc(NULL, (size_t)nthreads, sizeof *th);
  if (c)
    c->ctxs = ir_calloc(NULL, (size_t)nthreads, sizeof *c->ctxs);
  if (!c || !w || !th || !c->ctxs) {
    free(w), free(th);
    at_compiled_free(c);
    return NULL;
  }
  for (int i = 0; i < njobs; i++) {
    jobs[i].mod = NULL;
    jobs[i].entry = NULL;
    jobs[i].status = TE_ERR_INTERNAL;
    jobs[i].message[0] = 0;
  }
  c->n = nthreads;
  for (int t = 0; t < nthreads; t++) {
    c->ctxs[t] = te_ctx_new();
    w[t] = (worker){src, target, jobs, njobs, t, nthreads, c->ctxs[t], max_statements};
  }
  bool started[64] = {0};
  for (int t = 0; t < nthreads; t++) {
    if (!c->ctxs[t])
      continue;
    if (t == 0 || t >= 64 || pthread_create(&th[t], NULL, work, &w[t]) != 0)
      continue; /* thread 0 (and any that could not start) runs below, on this thread */
    started[t] = true;
  }
  for (int t = 0; t < nthreads; t++)
    if (c->ctxs[t] && !started[t])
      work(&w[t]);
  for (int t = 0; t < nthreads; t++)
    if (started[t])
      pthread_join(th[t], NULL);
  free(w);
  free(th);
  return c;
}

void at_compiled_free(at_compiled *c) {
  if (!c)
    return;
  for (int i = 0; i < c->n; i++)
    te_ctx_free(c->ctxs[i]);
  free(c->ctxs);
  free(c);
}

te_status at_reference_set(const at_workload *wl, const char *target, at_bench *bench,
                           double timeout_s, char build_message[512], at_result *r) {
  at_job job = {.trace = ""};
  memset(r, 0, sizeof *r);
  at_compiled *c = at_compile_batch(wl, target, 1, &job, 1, 0); /* the default schedule: no limit */
  if (!c) {
    snprintf(build_message, 512, "out of memory");
    return TE_ERR_NOMEM;
  }
  te_status st = job.status;
  snprintf(build_message, 512, "%s", job.message);
  if (st == TE_OK)
    at_bench_set_reference(bench, job.entry, timeout_s, r);
  at_compiled_free(c);
  return st;
}
