/* cli.h — te-tune's subcommands and what they share (option parsing, workloads, the log).
 *
 * Exit codes (documented in `te-tune --help` and README.md):
 *   0 success; 1 te failed (tuning could not run, a schedule or build failed);
 *   2 usage error; 3 no record for the workload and target; 4 I/O error (log, output files).
 */
#ifndef TE_TUNE_CLI_H
#define TE_TUNE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "autotune/at.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_NOT_FOUND = 3, CLI_IO = 4 };

#define CLI_DEFAULT_LOG "tuning.jsonl"
#define CLI_DEFAULT_TARGET "llvm -mcpu=native"

int cmd_tune(int argc, char **argv);
int cmd_best(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_tune_tasks(int argc, char **argv);

/* "--name value" or "--name=value" at argv[*i]: true and *val set (and *i advanced) when it
   matches; a missing value is reported and sets *bad. */
bool cli_opt(int argc, char **argv, int *i, const char *name, const char **val, bool *bad);
bool cli_flag(char **argv, int i, const char *name);
/* "--clock wall|cpu" at argv[*i] into *clock (te_tune_clock); another value is a usage error
   (*bad) whose message, prefixed with cmd, names the flag and its values. */
bool cli_clock_opt(int argc, char **argv, int *i, const char *cmd, int *clock, bool *bad);
bool cli_int(const char *s, long long min, long long *out);
bool cli_double(const char *s, double *out);

/* Options every record-reading command takes, and the workload they select. */
typedef struct cli_select {
  const char *log, *target, *key, *dtype;
  int npos;
  char *pos[32]; /* workload words: an operator with K=V parameters, or one workload text */
} cli_select;

/* Parses the options shared by best/show/export/plot (and the workload words) at argv[*i];
   false when argv[*i] is not one of them. */
bool cli_select_arg(cli_select *, int argc, char **argv, int *i, bool *bad);

/* A workload built in a context: from an operator spec, a workload text (te_parse), or a
   record's description or canonical text. */
typedef struct cli_workload {
  te_ctx *ctx;
  at_workload wl;
  bool is_op;
  at_op_spec spec;
  char desc[256]; /* the operator description, "" for a text workload */
  char *text;     /* canonical text (malloc'd) */
  char key[17];
  te_tune_template_fn tmpl; /* a plugin's schedule template (TE_TUNE_TEMPLATE_SYMBOL), or NULL */
} cli_workload;

/* Builds the workload named by words (operator + parameters, or a workload text). Prints the
   problem and returns an exit code other than CLI_OK on failure. */
int cli_workload_from_words(int n, char **words, const char *dtype, cli_workload *);
/* Builds the workload of a plugin (te_tune_plugin_fn in te/tune.h): symbol NULL is the default
   name. A schedule template the plugin exports (TE_TUNE_TEMPLATE_SYMBOL) goes to w->tmpl. */
int cli_workload_from_plugin(const char *path, const char *symbol, cli_workload *);
/* Builds the workload of a log record (its description, else its canonical text). */
int cli_workload_from_record(const at_record *, cli_workload *);
void cli_workload_free(cli_workload *);

/* te-tune tune's progress display (cmd_tune.c). */
typedef struct cli_progress {
  bool tty, quiet;
  bool integer; /* the workload has integer arithmetic: rates in GOP/s (set by cli_tune_run) */
} cli_progress;
/* One te_tune run of w as `te-tune tune` makes it (progress, summary line): an exit code.
   mpi_size > 1: rank 0 searches, the others measure (cli_mpi_*). */
int cli_tune_run(te_tune_options *, const char *target, cli_workload *w, cli_progress *,
                 int mpi_rank, int mpi_size);
/* `te-tune tune WORKLOAD --bucket SIZE=V1,V2,...` (cmd_tune_buckets.c): every bucket tuned with
   o, then the dispatch among them built, compiled and recorded as the log's bucket index. */
int cli_tune_buckets(te_tune_options *o, const char *target, int nw, char **words,
                     const char *dtype, const char *spec, cli_progress *);
/* "n=16,64,256" into b (values sorted); an exit code, the problem printed. */
int cli_bucket_parse(const char *spec, at_buckets *b);

/* Reads the log, resolves the target and the workload of sel, finds the best record.
   On success *best is its index in log, w the workload (built), tstr the target string. */
int cli_find_best(const cli_select *, at_log *log, cli_workload *w, char *tstr, size_t tsize,
                  int *best);

/* The shape of `export` and `plot`: parse --out and the workload selection (cmd and what_out name
   them in messages), find the best record, then run action on it. Returns a CLI exit code. */
typedef int (*cli_best_action)(const at_log *log, int best, cli_workload *w, const char *tstr,
                               const char *out);
int cli_run_on_best(int argc, char **argv, const char *cmd, const char *what_out,
                    void (*help)(void), cli_best_action action);

/* The resolved target string of a target description (its canonical te_target_str). */
int cli_target_str(const char *target, char *out, size_t size);

/* A target string as people read it ("llvm -mcpu=znver5": te_target_short_str of it parsed; its
   CPU when it does not parse), for messages. */
const char *cli_target_short(const char *target, char *buf, size_t size);

/* The CPU of a target string ("rocketlake"), for short listings. */
const char *cli_target_cpu(const char *target, char *buf, size_t size);

/* A model's distinct kernel as a task file line gives it (tasks.c, docs/tuning-tasks.md). */
typedef struct cli_task {
  char *name;       /* unique in the file */
  double weight;    /* calls per model pass */
  char *workload;   /* workload text, constant shapes */
  char *hand_trace; /* the hand schedule's trace, or NULL */
  char *group;      /* tasks of one group are similar (the scheduler's optimism), or NULL */
} cli_task;
/* Reads every task of a task file; an exit code (the problem printed, naming file and line). */
int cli_tasks_read(const char *path, cli_task **out, int *n);
void cli_tasks_free(cli_task *, int n);

/* te-tune tune --mpi (mpi.c): rank 0 searches and owns the log, ranks 1.. measure. */
bool cli_mpi_available(void); /* te-tune was built with MPI */
int cli_mpi_init(int *rank, int *size);
void cli_mpi_finalize(void);
/* Rank 0: the at_remote that sends candidates to ranks 1..size-1; at the end, cli_mpi_stop. */
at_remote cli_mpi_remote(te_ctx *, int size);
void cli_mpi_stop(int size);
/* Ranks >= 1: measure what rank 0 sends until it says stop; an exit code. */
int cli_mpi_measure(te_ctx *, int nout, te_tensor *const outs[], te_target *,
                    const te_tune_options *);

#endif
