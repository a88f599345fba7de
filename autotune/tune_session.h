/* tune_session.h — the state of one te_tune call, shared by tune.c (the rounds) and
 * tune_history.c (the log's past records: resume, warm start, records of this run).
 */
#ifndef TE_AT_TUNE_SESSION_H
#define TE_AT_TUNE_SESSION_H

#include "at.h"

typedef struct at_session {
  te_ctx *ctx;
  te_tune_options o;
  at_workload wl;
  char *text;
  char key[17];
  const char *target;
  bool gpu;              /* a cuda or vulkan target: candidates run on its device (measure.c) */
  double flops, int_ops; /* of one run (at_workload_flops, at_workload_int_ops) */
  at_task task;
  at_search *search;
  at_bench *bench;
  at_measure_opts mo;
  const at_remote *remote; /* NULL: candidates are built and measured here */
  FILE *log;
  int done; /* records of this workload and target (resumed ones included) */
  int measured, errors;
  double best_cost; /* INFINITY until a success */
  int since_best;   /* trials since the best improved */
  double t0, elapsed_offset;
  int checked[AT_MAX_SKETCHES];
  int round;
  int confirmed; /* schedules measured again by the confirm pass */
  int transfer_records, transfer_workloads;
} at_session;

/* Features of a logged trace replayed on wl (in wl's context, a scratch one: the schedule stays
   there); false when the trace no longer applies or lowers. */
bool at_trace_features(const at_workload *wl, const te_target *tgt, const char *trace, float *feat);

/* With te_tune_options.transfer_logs: the records of other workloads for this target train the
   cost model (transfer.c); fills transfer_records and transfer_workloads. */
te_status at_session_load_transfer(at_session *);

/* Reads the log: records of this workload and target mark their traces seen, feed the cost
   model (features recomputed from the trace) and the elite; with resume they count as trials
   and give the best so far. */
te_status at_session_load_history(at_session *);

/* Appends the record of one measured (or failed) candidate; TE_ERR_IO when it cannot. */
te_status at_session_write(at_session *, const at_proposal *, const at_job *, const at_result *);
/* What the confirm pass's rounds gave one schedule: each round's median, and whether rounds were
   added because the first ones disagreed with the search. */
typedef struct at_confirm_rounds {
  int n;
  const double *median;
  bool reconfirmed;
} at_confirm_rounds;

/* Appends the confirm pass's record of a logged schedule (was: its latest record), with the
   costs of every round, measured with mo, its round medians and its confirmed cost (the lowest
   of them: at_confirm_cost). */
te_status at_session_write_confirm(at_session *, const at_record *was, const at_measure_opts *mo,
                                   const at_job *, const at_result *, const at_confirm_rounds *);

/* The confirmed cost of a schedule measured in n rounds: the lowest round median (load only
   adds time); INFINITY when n is 0. */
double at_confirm_cost(const double *round_medians, int n);
/* Whether a confirmed cost disagrees with the search's enough to measure again: over
   AT_CONFIRM_DISAGREE (3) times it. False when the search's cost is unknown (0, INFINITY). */
bool at_confirm_disagrees(double confirmed_s, double search_s);

/* The confirm pass (tune_confirm.c): the log's best te_tune_options.confirm schedules of this
   workload and target measured again, side by side; updates best_cost and confirmed. */
te_status at_session_confirm(at_session *);

double at_now_s(void);
/* Operations of one run, float and integer (1 when there are none: then throughputs only rank
   the workload's schedules), and the G operations a second of a cost (0 when not finite). */
double at_session_ops(const at_session *);
double at_session_gops(const at_session *, double cost_s);

/* te_tune's options checked and their defaults filled in (tune.c), for the searching process and
   the measurers alike; the timeout of the reference run for options o. */
te_status at_tune_options_check(te_ctx *, const te_tune_options *in, te_tune_options *out);
double at_reference_timeout_s(const te_tune_options *o);
at_measure_opts at_tune_measure_opts(const te_tune_options *o);

#endif
