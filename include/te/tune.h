/* te/tune.h — autotuning: search a schedule for a computation, keep every measurement in a
 * tuning log, apply the best one later.
 *
 * te_tune generates candidate schedules from the computation itself (multi-level tiling of
 * the heavy reduction, a local accumulation stage computed at a tile, inputs copied into
 * compact blocks at the outer reduce loop or packed whole at root, padding kept as a stage,
 * the vector along the last or another wide space axis with the blocks stored to match
 * (te_reorder_storage), the copies optionally in the register tile's blocked layout as a BLAS
 * packs them, u8 x i8 -> i32 and bf16 -> f32 reductions as dot-product instructions
 * (te_tensorize vpdpbusd, vdpbf16ps; docs/tuning-space.md), element-wise consumers fused,
 * parallel outer loops, vectorized and unrolled inner loops), guides an evolutionary
 * search with a learned cost model (XGBoost on features of the lowered loop nests), compiles
 * each round's candidates in parallel and measures each one in a child process with a timeout.
 * Every measured candidate becomes one JSON line of the log (docs/tuning-log.md): the workload
 * (canonical text and its key), the target, the schedule as a trace (docs/schedule-trace.md),
 * every measured cost and any error. te_apply_best replays the best trace of a log on a
 * schedule.
 *
 * Instead of the generated candidates, a program may give a schedule template: a C function
 * that applies primitives with some values left open as knobs (a split with candidate factors,
 * a choice between loop orders, ...); te_tune then searches the knobs' product the same way.
 *
 * Workloads have constant shapes and no scalar parameters (a symbolic size is tuned as shape
 * buckets: one workload per value, te_apply_best builds the dispatch). Their key is the hash of a
 * canonical text of the computation (tensor names, dtypes, shapes, bodies), so the same computation
 * built again, by any program, finds its records.
 */
#ifndef TE_TUNE_H
#define TE_TUNE_H
#include "build.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The knobs of a schedule template (below): opaque, made by te_tune for each run of the
   template and valid only during that run. */
typedef struct te_knobs te_knobs;

/* A schedule template: applies primitives to s (a fresh schedule of the tuned computation, in a
   context te_tune owns: find stages and tensors by name with te_tune_stage / te_tune_tensor),
   taking the values it tunes from knobs (te_knob_*), and returns TE_OK or the status of the
   first failure. With te_tune_options.template_fn set, te_tune searches the product of the
   template's knobs (sketch "user" in the log) with its usual evolutionary search, cost model,
   measurement and log: a candidate is one value per knob; a mutation redraws one knob, a
   crossover mixes two candidates knob by knob, a random candidate draws every knob uniformly.
   Candidates that give the same trace are one candidate.
   The template is first run once with the first candidate of every knob: that run registers
   the knobs (a knob is registered by the first call naming it) and must succeed, else te_tune
   returns its status and message. It then runs once per candidate the search looks at (many
   more than are measured), always on the thread that called te_tune. A run that fails, or
   leaves an error on s's context, makes that candidate invalid: it is skipped and never
   measured (te_tune prints one warning for the first such failure). Rules: knob names are
   unique within a run; the set of knobs (names, kinds, candidate lists) must not depend on knob
   values, so every run makes the same knob calls as the first (in any order). A knob call that
   breaks a rule returns TE_ERR_INVALID_ARG with a message naming the knob and the rule. */
typedef te_status (*te_tune_template_fn)(te_schedule *s, te_knobs *knobs, void *user);

/* Limits of a template: knobs per template, candidates (values, choices, orders) per knob,
   characters of a knob's name (letters, digits, '_', '.', '-'). */
#define TE_TUNE_MAX_KNOBS 48
#define TE_TUNE_MAX_KNOB_CANDS 64
#define TE_TUNE_MAX_KNOB_NAME 31

/* Progress of a tuning run, given to te_tune_options.progress after every measured trial. */
typedef struct te_tune_progress {
  int trials_done;    /* measured so far in this workload's log (resumed ones included) */
  int trials_total;   /* te_tune_options.trials */
  double best_gflops; /* best so far (0 until a candidate succeeds) */
  double best_cost_s; /* its median cost */
  double last_gflops; /* the trial just measured (0 when it failed) */
  te_status last_status;
  const char *last_error; /* its error kind and message ("" when none) */
  double elapsed_s;       /* since te_tune started */
  double eta_s;           /* estimated time left (-1 when unknown) */
  int round;
  /* The same two rates in G operations a second, float and integer arithmetic together (an int8
     matmul's integer multiply-adds count, where best_gflops stays 0): the rates to show for a
     workload with integer arithmetic (te_tune_summary.int_ops > 0); for a float-only workload
     they equal best_gflops and last_gflops. */
  double best_gops;
  double last_gops;
} te_tune_progress;

typedef struct te_tune_options {
  int trials;              /* candidates to measure in all (resumed ones count); 0: 64 */
  double time_budget_s;    /* stop after this many seconds; 0: no limit */
  int early_stop;          /* stop after this many trials without a better cost; 0: never */
  int jobs;                /* compile threads; 0: 1 */
  uint64_t seed;           /* same seed and same measurements: same candidates */
  const char *log_path;    /* the tuning log (JSON lines); required */
  int resume;              /* continue from the log's records of this workload and target: they
                              count as trials, warm the cost model and are never measured again.
                              Without resume, existing records still warm the model. */
  int batch;               /* candidates measured per round; 0: 16 */
  int population;          /* evolutionary search: population size (0: 128) */
  int generations;         /* and generations per round (0: 3) */
  double epsilon;          /* fraction of random candidates per round; < 0: 0; 0: 0.15 */
  int no_model;            /* 1: random search (no cost model) */
  double min_repeat_s;     /* measurement: repeat runs until they add up to this; 0: 0.1 s */
  int min_repeats;         /* at least this many timed runs; 0: 3 */
  int max_repeats;         /* at most (<= 256); 0: 100 */
  double timeout_s;        /* a candidate's run is killed after this; 0: 10 s */
  int threads;             /* threads of parallel loops while measuring; 0: te's default
                              (negative counts and times are TE_ERR_INVALID_ARG) */
  int check;               /* results compared with the default schedule's for the first this-many
                              successful candidates of each sketch; 0: 2; < 0: never */
  const char *description; /* stored with each record (e.g. "matmul M=1024 N=1024 K=1024
                            dtype=f32"); NULL: none */
  void (*progress)(const te_tune_progress *, void *user); /* NULL: silent */
  void *progress_user;
  struct te_tune_summary *summary; /* out: filled when not NULL */
  te_tune_template_fn template_fn; /* a schedule template (below): the search space is the
                            product of its knobs instead of the generated sketches; NULL: none */
  void *template_user;             /* passed to template_fn */
  int confirm;               /* the confirm pass: after the search, the best this-many schedules of
                                the log (this workload and target) are measured again side by side,
                                in confirm_rounds rounds alternating between them, one record each
                                (tuner.confirm) holding the samples of all rounds; te_apply_best
                                and te-tune best then take the best of that pass.
                                A run measures its candidates minutes apart, and a machine whose
                                speed drifts by 15% between minutes ranks them by their minute;
                                side by side, they share it. A schedule's confirmed cost is the
                                lowest of its round medians (load only adds time); one over 3x
                                the cost the search measured sends every finalist to
                                confirm_rounds rounds more (tuner.reconfirmed).
                                0: 4; < 0: no confirm pass; at most 64.
                                Runs after the time budget too; skipped when fewer than 2 schedules
                                succeeded (or confirm is 1): one has nothing to be compared with */
  int confirm_rounds;        /* 0: 3; at most 16 */
  int flush_cache;           /* 1: before each timed run, write over a buffer twice the size of the
                                last-level cache, so every run starts with cold caches (TVM's
                                enable_cpu_cache_flush): the cost of a kernel called once among other
                                work, rather than in a tight loop over data it just touched. Recorded
                                as tuner.measure.flush_cache. 0: off */
  const char *transfer_logs; /* a directory of tuning logs (its *.jsonl files) or one log: the
                         successful records of other workloads for the same target train the
                         cost model before the first round, each labelled by its throughput
                         relative to the best of its own workload, so a new workload starts
                         with a trained model instead of random rounds. Records that no longer
                         rebuild are skipped. NULL: none */
  int clock; /* te_tune_clock: how a run's cost is read (docs/tuning-measurement.md). Every run is
                timed on both clocks where the cpu clock works (result.costs and
                result.cpu_costs in the log); this one ranks the candidates, the confirm pass and
                te_apply_best, and is recorded as tuner.measure.clock. Another value is
                TE_ERR_INVALID_ARG. 0: TE_TUNE_CLOCK_CPU */
  int max_statements; /* a candidate whose lowered body has more statements than this after
                unrolling (loops counted once, a vector store one per 256 bits) is not compiled:
                it is a failed trial (TE_ERR_SCHEDULE, "... N statements after unrolling, over
                the tuner's limit M") and the run goes on. LLVM cannot be stopped inside a
                compile thread, and nested unrolled tiles (12 x 16 rows of 64-lane vectors) make
                bodies it takes minutes on; lowering takes milliseconds. 0: TE_TUNE_MAX_STATEMENTS;
                negative: TE_ERR_INVALID_ARG (docs/tuning-measurement.md) */
} te_tune_options;

/* The default of te_tune_options.max_statements: above every tuned and hand-like schedule te
   knows (a 6 x 64 register tile unrolled is about 200), below the bodies that take LLVM more
   than about 10 s here (docs/tuning-measurement.md, "Compile limit"). */
#define TE_TUNE_MAX_STATEMENTS 2000

/* The clocks of te_tune_options.clock.
   TE_TUNE_CLOCK_CPU: a run's wall time less the time its threads (the calling thread and the
   runtime's workers) spent runnable but waiting for a core, as Linux counts it in
   /proc/self/task/TID/schedstat: on a machine shared with other work, what the run itself took,
   not the minute's load. Where schedstat cannot be read, te_tune warns once on stderr and measures
   on the wall clock (the log then says "wall"). A cuda or vulkan target is always measured on
   the wall clock: its kernel's time passes on the device, while the host thread sleeps.
   TE_TUNE_CLOCK_WALL: the wall time of each run (CLOCK_MONOTONIC), as te_tune measured before the
   cpu clock existed; the right clock on a quiet machine given to the tuner. */
typedef enum te_tune_clock { TE_TUNE_CLOCK_CPU = 0, TE_TUNE_CLOCK_WALL = 1 } te_tune_clock;

/* What a tuning run did (te_tune_options.summary). */
typedef struct te_tune_summary {
  int trials_done;    /* records of this workload and target in the log now */
  int measured;       /* measured by this call */
  int errors;         /* of those, how many failed (build, run, crash, timeout, wrong) */
  double best_cost_s; /* INFINITY when none succeeded; after a confirm pass, the pass's best
                         (the log's rule, docs/tuning-log.md) */
  double best_gflops;
  char key[17];           /* the workload's key */
  int confirmed;          /* schedules measured again by the confirm pass */
  int transfer_records;   /* records of other workloads that trained the model (transfer_logs) */
  int transfer_workloads; /* how many workloads they came from */
  double best_gops;       /* the best's G operations a second, integer ones included (as
                             te_tune_progress.best_gops) */
  double flops;           /* floating-point operations of one run of the workload */
  double int_ops;         /* integer operations of one run (multiplies and adds computing values,
                             not indices); > 0: an integer workload, whose rate is best_gops */
} te_tune_summary;

/* Tunes the computation that produces outs for target, appending to opts->log_path. Returns
   TE_OK when the run finished (even if some or all candidates failed: those are error
   records), TE_ERR_INVALID_ARG for bad options (no log path, negative counts), TE_ERR_IO when
   the log cannot be written, TE_ERR_UNSUPPORTED for symbolic shapes or scalar parameters,
   and a schedule template's status (with its message) when its first run fails.
   The context is used by this thread only while it runs; te_tune makes its
   own contexts for the search and the compile threads. Each kernel runs in a child process
   (fork), so a candidate that crashes or hangs costs one error record.
   For a cuda or vulkan target the candidates are GPU schedules (blocks, threads, a per-thread
   tile, shared-memory copies: docs/gpu.md, "Tuning for GPUs") run on that device in the
   children, checked against the default schedule on the host; without the device (no driver,
   no GPU; a child process asks) te_tune returns TE_ERR_RUNTIME "te_tune: no CUDA device to
   measure ... on: <the driver's reason>" before writing anything; a process that has already
   started that driver (te_rt_cuda_started, te_rt_vk_started: a kernel or te_device_* call ran
   here) gets TE_ERR_UNSUPPORTED, since its forked children cannot use it. */
TE_API te_status te_tune(te_ctx *, int nout, te_tensor *const outs[], te_target *,
                         const te_tune_options *);

/* Replays on s (normally a fresh schedule of the computation) the trace of the log's best
   successful record of s's computation for target. TE_ERR_NOT_FOUND, with a message naming the
   workload key, when the log has no such record: s is left unchanged (the default schedule, or
   whatever the caller applied), never silently replaced. TE_ERR_IO when the log cannot be read;
   a replay failure returns its status (s unchanged: the trace is checked on a scratch schedule
   first). Malformed lines are skipped.
   Shape buckets: when s's computation has a symbolic size, the log's latest bucket index of it
   for target (written by `te-tune tune WORKLOAD --bucket n=V1,V2,...`, docs/tuning-buckets.md)
   names the values the size was tuned at; s becomes the dispatch among their best records:
   per bucket Vi, te_specialize branches "n == Vi" (the tuned kernel, n constant) and, but for
   the largest, "n <= Vi", replaying bucket Vi's best trace; the largest bucket's trace is
   replayed on s itself (sizes above the largest bucket take it too).
   TE_ERR_NOT_FOUND when there is no index, when a bucket has no successful record, or when a
   bucket's key is not the computation's at that size (the message names the bucket); a
   bucket's replay failure returns its status, naming the bucket. s is unchanged on failure. */
TE_API te_status te_apply_best(te_schedule *s, const char *log_path, te_target *);

/* A workload plugin for `te-tune tune --plugin lib.so`: a shared library exporting a function
   of this type (by default named TE_TUNE_PLUGIN_SYMBOL) that builds the computation in ctx
   through the C API and stores its outputs in outs (at most 16) and their count in *nout.
   The library is built against te's headers and is not linked with libte: te-tune provides the
   te_* functions (cc -shared -fPIC plugin.c -I<te>/include -o plugin.so). */
typedef te_status (*te_tune_plugin_fn)(te_ctx *ctx, int *nout, te_tensor **outs);
#define TE_TUNE_PLUGIN_SYMBOL "te_tune_workload_build"

/* A plugin may also export a schedule template (te_tune_template_fn) named
   TE_TUNE_TEMPLATE_SYMBOL: te-tune then tunes the template's knobs (template_user NULL) instead
   of the generated sketches. */
#define TE_TUNE_TEMPLATE_SYMBOL "te_tune_template"

/* ---------------------------------------------------------------- template knobs
 *
 * Called inside a schedule template, with the template's knobs. Each returns the value chosen
 * for the candidate being built (in the first run: the first candidate); the split and reorder
 * knobs also apply it (te_split, te_reorder: their errors are theirs). Errors: TE_ERR_INVALID_ARG
 * with no message when knobs is NULL; otherwise on the schedule's context, naming the knob:
 * a NULL argument, a bad or duplicate name, no candidates or more than TE_TUNE_MAX_KNOB_CANDS,
 * more than TE_TUNE_MAX_KNOBS knobs, int or split candidates that repeat (or factors <= 0),
 * orders that are not permutations of one set of loops, a knob that the first run did not
 * register or whose candidates differ from that run's. *out is left unchanged on error.
 * A failed knob call also fails the run, even when the template goes on and returns TE_OK.
 * Knobs are only used by the template they are given to, on te_tune's thread. */

/* One of nchoices alternatives: *out in [0, nchoices). */
TE_API te_status te_knob_choice(te_knobs *, const char *name, int nchoices, int *out);
/* One of ncand distinct values. */
TE_API te_status te_knob_int(te_knobs *, const char *name, int ncand, const int64_t *cands,
                             int64_t *out);
/* te_split(st, it, f, outer, inner) with f one of ncand distinct factors (each > 0). */
TE_API te_status te_knob_split(te_knobs *, te_stage *st, te_iter *it, const char *name, int ncand,
                               const int64_t *factors, te_iter **outer, te_iter **inner);
/* te_reorder(st, n, orders + c * n) with c one of norders rows of orders (norders x n,
   row-major), each a permutation of the first. */
TE_API te_status te_knob_reorder(te_knobs *, te_stage *st, const char *name, int norders, int n,
                                 te_iter *const *orders);

/* For templates, whose schedule lives in a context of te_tune's: the stage of s called name
   (a tensor's name; stages te_cache_write and te_rfactor made are named as te_schedule_trace
   shows them), or the tensor called name among s's stages (placeholders included). NULL, with
   TE_ERR_NOT_FOUND naming it, when there is none; name NULL: TE_ERR_INVALID_ARG (s NULL: NULL,
   no message). Same thread rules as the schedule's other functions. */
TE_API te_stage *te_tune_stage(te_schedule *s, const char *name);
TE_API te_tensor *te_tune_tensor(te_schedule *s, const char *name);

/* The canonical text of a computation and its key (16 hex digits) as the log stores them.
   text: malloc'd, te_free() it; NULL on error (message on the context). key may be NULL. */
TE_API char *te_tune_workload(te_ctx *, int nout, te_tensor *const outs[], char key[17]);

#ifdef __cplusplus
}
#endif
#endif
