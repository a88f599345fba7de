/* tune.c — te_tune: rounds of propose (search.c), compile (compile.c), measure (measure.c) and
 * record (log.c) — or, with at_tune_remote, propose here and build and measure in other
 * processes (remote.c) — until the trials, the time budget or the patience (early stop) run out;
 * then the confirm pass (tune_confirm.c) measures the best few again, side by side.
 *
 * Before the first round the default schedule is built and run once in a child: its outputs are
 * the reference the first candidates of each sketch are checked against. A round's work happens
 * in a context made for it (the search's schedules) and in the compile threads' contexts (the
 * modules), all freed when the round ends, so memory does not grow with the number of trials.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/vulkan.h"
#include "target/target.h"
#include "te/runtime.h"
#include "tune_session.h"

te_status at_tune_options_check(te_ctx *ctx, const te_tune_options *in, te_tune_options *o) {
  if (!in)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_tune: options are NULL");
  *o = *in;
  if (!o->log_path || !*o->log_path)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_tune: a log path is required");
  const struct {
    const char *name;
    double v;
  } counts[] = {{"trials", o->trials},
                {"batch", o->batch},
                {"jobs", o->jobs},
                {"threads", o->threads},
                {"time_budget_s", o->time_budget_s},
                {"early_stop", o->early_stop},
                {"population", o->population},
                {"generations", o->generations},
                {"min_repeats", o->min_repeats},
                {"max_repeats", o->max_repeats},
                {"timeout_s", o->timeout_s},
                {"min_repeat_s", o->min_repeat_s},
                {"max_statements", o->max_statements}};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    if (!(counts[i].v >= 0)) /* NaN too */
      return ir_error(ctx, TE_ERR_INVALID_ARG, "te_tune: %s must be >= 0 (got %g)", counts[i].name,
                      counts[i].v);
  if (o->confirm_rounds < 0 || o->confirm_rounds > 16 || o->confirm > 64)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_tune: confirm must be <= 64 (got %d) and confirm_rounds 0..16 (got %d)",
                    o->confirm, o->confirm_rounds);
  if (o->clock != TE_TUNE_CLOCK_CPU && o->clock != TE_TUNE_CLOCK_WALL)
    return ir_error(
        ctx, TE_ERR_INVALID_ARG,
        "te_tune: clock must be TE_TUNE_CLOCK_CPU (%d) or TE_TUNE_CLOCK_WALL (%d), got %d",
        TE_TUNE_CLOCK_CPU, TE_TUNE_CLOCK_WALL, o->clock);
  if (o->max_repeats > 256)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_tune: max_repeats must be <= 256 (got %d)",
                    o->max_repeats);
  o->trials = o->trials ? o->trials : 64;
  o->batch = o->batch ? o->batch : 16;
  o->jobs = o->jobs ? o->jobs : 1;
  o->population = o->population ? o->population : 128;
  o->generations = o->generations ? o->generations : 3;
  o->epsilon = o->epsilon < 0 ? 0 : o->epsilon == 0 ? 0.15 : o->epsilon > 1 ? 1 : o->epsilon;
  o->min_repeat_s = o->min_repeat_s ? o->min_repeat_s : 0.1;
  o->min_repeats = o->min_repeats ? o->min_repeats : 3;
  o->max_repeats = o->max_repeats ? o->max_repeats : 100;
  o->timeout_s = o->timeout_s ? o->timeout_s : 10;
  o->check = o->check ? (o->check < 0 ? 0 : o->check) : 2;
  o->confirm = o->confirm ? (o->confirm < 0 ? 0 : o->confirm) : 4;
  o->confirm_rounds = o->confirm_rounds ? o->confirm_rounds : 3;
  o->max_statements = o->max_statements ? o->max_statements : TE_TUNE_MAX_STATEMENTS;
  return TE_OK;
}

/* Builds the default schedule and keeps its outputs as the reference. */
static te_status make_reference(at_session *s) {
  char message[512];
  at_result r;
  /* a GPU target's reference is the default schedule on the host (GPU kernels must be bound) */
  te_status st = at_reference_set(&s->wl, s->gpu ? "llvm" : s->target, s->bench,
                                  at_reference_timeout_s(&s->o), message, &r);
  if (st != TE_OK)
    return ir_error(s->ctx, st, "te_tune: the default schedule does not build: %s", message);
  if (r.status != TE_OK) /* no reference: candidates run unchecked */
    fprintf(stderr,
            "te-tune: warning: the default schedule failed (%s): results are not "
            "checked\n",
            r.message);
  return TE_OK;
}

at_measure_opts at_tune_measure_opts(const te_tune_options *o) {
  return (at_measure_opts){o->min_repeat_s, o->min_repeats, o->max_repeats,      1,
                           o->timeout_s,    o->threads,     o->flush_cache != 0, o->clock};
}

double at_reference_timeout_s(const te_tune_options *o) {
  return o->timeout_s * 10 > 60 ? o->timeout_s * 10 : 60;
}

double at_session_ops(const at_session *s) {
  return s->flops + s->int_ops > 0 ? s->flops + s->int_ops : 1;
}

double at_session_gops(const at_session *s, double cost) {
  double ops = s->flops + s->int_ops;
  return isfinite(cost) && cost > 0 && ops > 0 ? ops / cost * 1e-9 : 0;
}

static bool stop_now(const at_session *s) {
  if (s->done >= s->o.trials)
    return true;
  if (s->o.time_budget_s > 0 && at_now_s() - s->t0 >= s->o.time_budget_s)
    return true;
  return s->o.early_stop > 0 && isfinite(s->best_cost) && s->since_best >= s->o.early_stop;
}

static void report(at_session *s, const at_result *r, const at_job *j, double cost) {
  if (!s->o.progress)
    return;
  te_tune_progress p = {0};
  p.trials_done = s->done;
  p.trials_total = s->o.trials;
  p.best_cost_s = s->best_cost;
  p.best_gflops = isfinite(s->best_cost) && s->flops > 0 ? s->flops / s->best_cost * 1e-9 : 0;
  p.last_gflops = isfinite(cost) && s->flops > 0 ? s->flops / cost * 1e-9 : 0;
  p.best_gops = at_session_gops(s, s->best_cost);
  p.last_gops = at_session_gops(s, cost);
  p.last_status = j->status != TE_OK ? j->status : r->status;
  p.last_error = j->status != TE_OK ? j->message : r->message;
  p.elapsed_s = at_now_s() - s->t0;
  int left = s->o.trials - s->done;
  p.eta_s = s->measured ? p.elapsed_s / s->measured * left : -1;
  if (s->o.time_budget_s > 0 && (p.eta_s < 0 || p.eta_s > s->o.time_budget_s - p.elapsed_s))
    p.eta_s = s->o.time_budget_s - p.elapsed_s;
  p.round = s->round;
  s->o.progress(&p, s->o.progress_user);
}

/* Writes the record of one proposal, built (j) and measured (r, when j built), and tells the
   search. */
static te_status record_one(at_session *s, const at_proposal *p, const at_job *j,
                            const at_result *r) {
  double cost = INFINITY;
  if (j->status == TE_OK && r->status == TE_OK)
    cost = at_result_cost(r, s->mo.clock);
  te_status st = at_session_write(s, p, j, r);
  if (st != TE_OK)
    return st;
  s->done++;
  s->measured++;
  s->errors += !isfinite(cost);
  at_search_observe(s->search, &p->cand, p->trace, p->feat,
                    isfinite(cost) ? at_session_ops(s) / cost : 0);
  if (cost < s->best_cost) {
    s->best_cost = cost;
    s->since_best = 0;
  } else {
    s->since_best++;
  }
  report(s, r, j, cost);
  return TE_OK;
}

/* Whether the next candidate of sketch sk is checked against the reference: the first
   te_tune_options.check of each sketch that ran. */
static bool want_check(const at_session *s, int sk) {
  return s->checked[sk] < s->o.check && at_bench_has_reference(s->bench);
}

/* Measures one compiled proposal here and writes its record. */
static te_status measure_one(at_session *s, const at_proposal *p, const at_job *j) {
  at_result r = {0};
  int sk = p->cand.sketch;
  if (j->status == TE_OK) {
    bool check = want_check(s, sk);
    at_bench_run(s->bench, j->entry, check, &s->mo, &r);
    if (check && r.status == TE_OK)
      s->checked[sk]++;
  }
  return record_one(s, p, j, &r);
}

/* The round's proposals measured through s->remote, then recorded in order. The checks are
   handed out before any result is known: the first `check` proposals of each sketch. */
static te_status measure_remote(at_session *s, int n, const at_proposal *ps) {
  at_remote_job *rj = ir_calloc(s->ctx, (size_t)n, sizeof *rj);
  if (!rj)
    return ir_error(s->ctx, TE_ERR_NOMEM, "te_tune: out of memory");
  int planned[AT_MAX_SKETCHES];
  memcpy(planned, s->checked, sizeof planned);
  bool has_ref = at_bench_has_reference(s->bench);
  for (int i = 0; i < n; i++) {
    int sk = ps[i].cand.sketch;
    rj[i].trace = ps[i].trace;
    rj[i].check = has_ref && planned[sk] < s->o.check;
    planned[sk] += rj[i].check;
  }
  te_status st = s->remote->measure(s->remote->user, n, rj);
  if (st != TE_OK && te_last_status(s->ctx) == TE_OK)
    ir_error(s->ctx, st, "te_tune: the remote measurers failed");
  for (int i = 0; i < n && st == TE_OK && !stop_now(s); i++) {
    rj[i].job.trace = ps[i].trace;
    if (rj[i].check && rj[i].job.status == TE_OK && rj[i].result.status == TE_OK)
      s->checked[ps[i].cand.sketch]++;
    st = record_one(s, &ps[i], &rj[i].job, &rj[i].result);
  }
  free(rj);
  return st;
}

/* One round: propose, compile, measure. *exhausted when the search has nothing new. */
static te_status round_once(at_session *s, bool *exhausted) {
  double t0 = at_now_s();
  int want = s->o.batch < s->o.trials - s->done ? s->o.batch : s->o.trials - s->done;
  te_ctx *rc = te_ctx_new();
  at_workload wl;
  te_target *tgt = NULL;
  if (!rc || at_workload_clone(&s->wl, rc, &wl) != TE_OK ||
      !(tgt = te_target_parse(rc, s->target))) {
    te_ctx_free(rc);
    return ir_error(s->ctx, TE_ERR_INTERNAL, "te_tune: cannot copy the workload for a round");
  }
  at_proposal *ps = ir_calloc(s->ctx, (size_t)want, sizeof *ps);
  at_job *jobs = ir_calloc(s->ctx, (size_t)want, sizeof *jobs);
  int n = ps && jobs ? at_search_propose(s->search, &wl, tgt, want, ps) : 0;
  *exhausted = n == 0;
  for (int i = 0; i < n; i++)
    jobs[i].trace = ps[i].trace;
  double t1 = at_now_s();
  at_compiled *c =
      n && !s->remote ? at_compile_batch(&s->wl, s->target, n, jobs, s->o.jobs, s->o.max_statements)
                      : NULL;
  double t2 = at_now_s();
  te_status st = TE_OK;
  if (s->remote && n)
    st = measure_remote(s, n, ps);
  for (int i = 0; c && i < n && st == TE_OK && !stop_now(s); i++)
    st = measure_one(s, &ps[i], &jobs[i]);
  if (getenv("TE_TUNE_DEBUG")) /* where a round's time goes */
    fprintf(stderr,
            "te_tune: round %d: %d proposals in %.2f s, compiled in %.2f s, measured in "
            "%.2f s\n",
            s->round, n, t1 - t0, t2 - t1, at_now_s() - t2);
  at_compiled_free(c);
  for (int i = 0; i < n; i++)
    at_proposal_free(&ps[i]);
  free(ps);
  free(jobs);
  te_ctx_free(rc);
  at_search_retrain(s->search);
  s->round++;
  return st;
}

static te_status setup(at_session *s, int nout, te_tensor *const outs[], te_target *target) {
  te_status st = at_workload_make(s->ctx, nout, outs, "te_tune", &s->wl);
  if (st != TE_OK)
    return st;
  if (!(s->text = at_workload_text(&s->wl)))
    return ir_error(s->ctx, TE_ERR_NOMEM, "te_tune: out of memory");
  at_workload_key(s->text, s->key);
  s->target = te_target_str(target);
  s->flops = at_workload_flops(&s->wl);
  s->int_ops = at_workload_int_ops(&s->wl);
  s->gpu = tg_is_gpu(target);
  if (s->gpu && !s->remote) { /* measured here: the device must be here */
    char why[512];
    bool cuda = target->kind == TG_CUDA;
    if (cuda ? te_rt_cuda_started() : te_rt_vk_started())
      return ir_error(s->ctx, TE_ERR_UNSUPPORTED,
                      "te_tune: this process has already started the %s driver (a kernel, "
                      "device array or device query ran here), and the children that measure "
                      "'%s' candidates are forked from it, which GPU drivers do not survive: "
                      "tune in a process that has not (te-tune; te.tune from Python then tunes "
                      "in a spawned process)",
                      cuda ? "CUDA" : "Vulkan", s->target);
    if (at_device_probe(target, why) != TE_OK)
      return ir_error(s->ctx, TE_ERR_RUNTIME,
                      "te_tune: no %s device to measure '%s' candidates on: %s (tuning a GPU "
                      "target runs every candidate on its device; 'vulkan' also runs on a CPU "
                      "Vulkan driver such as Mesa's lavapipe)",
                      target->kind == TG_CUDA ? "CUDA" : "Vulkan", s->target, why);
  }
  te_ctx *tmp = te_ctx_new();
  at_workload wl;
  st = tmp ? at_workload_clone(&s->wl, tmp, &wl) : TE_ERR_NOMEM;
  if (st == TE_OK)
    st = s->o.template_fn
             ? at_task_from_template(&wl, s->o.template_fn, s->o.template_user, &s->task)
         : s->gpu ? at_task_analyze_gpu(&wl, target, &s->task)
                  : at_task_analyze(&wl, &s->task);
  if (st != TE_OK && tmp)
    ir_error(s->ctx, st, "%s", te_last_error(tmp));
  te_ctx_free(tmp);
  if (st != TE_OK)
    return st;
  /* TE_TUNE_NO_SHAPED=1: every random candidate uniform, as before shaped samples (space_shaped.c)
     existed, to measure what they change (bench/tuners/search_curve.py) */
  /* TE_TUNE_NO_SEEDS=1: no derived first-round points (seed_points.c), no neighbours of the best
     (search.c), to measure what they change */
  const char *no_shaped = getenv("TE_TUNE_NO_SHAPED"), *no_seeds = getenv("TE_TUNE_NO_SEEDS");
  at_search_opts so = {s->o.seed,
                       s->o.population,
                       s->o.generations,
                       s->o.epsilon,
                       !s->o.no_model,
                       no_shaped && *no_shaped && *no_shaped != '0',
                       no_seeds && *no_seeds && *no_seeds != '0'};
  s->search = at_search_new(&s->task, &so);
  s->bench = at_bench_new(&s->wl, s->o.seed);
  if (!s->search || !s->bench)
    return ir_error(s->ctx, TE_ERR_NOMEM, "te_tune: out of memory (buffers)");
  s->mo = at_tune_measure_opts(&s->o);
  if (s->gpu) /* a GPU kernel's time passes on the device while the host thread sleeps on it */
    s->mo.clock = TE_TUNE_CLOCK_WALL;
  else if (s->mo.clock == TE_TUNE_CLOCK_CPU && !at_cpu_clock_available()) {
    fprintf(stderr, "te-tune: warning: /proc/self/task/*/schedstat cannot be read here (a kernel "
                    "without schedstats?): measuring on the wall clock (tuner.measure.clock "
                    "\"wall\")\n");
    s->mo.clock = TE_TUNE_CLOCK_WALL;
  }
  if (s->gpu)
    at_bench_set_device(s->bench, target->kind == TG_CUDA ? kDLCUDA : kDLVulkan);
  if ((st = at_session_load_history(s)) != TE_OK || (st = at_session_load_transfer(s)) != TE_OK)
    return st;
  if (!(s->log = at_log_open(s->o.log_path)))
    return ir_error(s->ctx, TE_ERR_IO, "te_tune: cannot open the tuning log '%s' for appending",
                    s->o.log_path);
  return make_reference(s);
}

static void summarize(at_session *s) {
  te_tune_summary *sum = s->o.summary;
  if (!sum)
    return;
  memset(sum, 0, sizeof *sum);
  sum->trials_done = s->done;
  sum->measured = s->measured;
  sum->errors = s->errors;
  sum->best_cost_s = s->best_cost;
  sum->best_gflops = isfinite(s->best_cost) && s->flops > 0 ? s->flops / s->best_cost * 1e-9 : 0;
  sum->best_gops = at_session_gops(s, s->best_cost);
  sum->flops = s->flops;
  sum->int_ops = s->int_ops;
  memcpy(sum->key, s->key, sizeof sum->key);
  sum->confirmed = s->confirmed;
  sum->transfer_records = s->transfer_records;
  sum->transfer_workloads = s->transfer_workloads;
}

static te_status tune_impl(te_ctx *ctx, int nout, te_tensor *const outs[], te_target *target,
                           const te_tune_options *opts, const at_remote *remote) {
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  if (!target)
    return ir_error_null(ctx, "te_tune: target is NULL");
  at_session s = {0};
  s.ctx = ctx;
  s.remote = remote;
  s.best_cost = INFINITY;
  s.t0 = at_now_s();
  te_status st = at_tune_options_check(ctx, opts, &s.o);
  if (st == TE_OK)
    st = setup(&s, nout, outs, target);
  bool exhausted = false;
  while (st == TE_OK && !exhausted && !stop_now(&s))
    st = round_once(&s, &exhausted);
  if (st == TE_OK)
    st = at_session_confirm(&s);
  summarize(&s);
  if (s.log)
    fclose(s.log);
  at_search_free(s.search);
  at_bench_free(s.bench);
  free(s.text);
  return st;
}

te_status te_tune(te_ctx *ctx, int nout, te_tensor *const outs[], te_target *target,
                  const te_tune_options *opts) {
  return IR_PUBLIC_CALL(ctx, tune_impl(ctx, nout, outs, target, opts, NULL));
}

te_status at_tune_remote(te_ctx *ctx, int nout, te_tensor *const outs[], te_target *target,
                         const te_tune_options *opts, const at_remote *remote) {
  return IR_PUBLIC_CALL(ctx, tune_impl(ctx, nout, outs, target, opts, remote));
}
