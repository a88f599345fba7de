/* at.h — the autotuner's internals (prefix at_), shared by the files of autotune/ and its CLI.
 *
 * Data flow of one tuning run (tune.c):
 *   workload (workload.c: the computation, clonable into any context, with a canonical text and
 *   a key) -> task (sketch.c: the stages analysed and the sketches that apply) -> candidates
 *   (space.c: a sketch plus sampled knob values; applied as te_* primitives, which gives the
 *   schedule trace) -> features of the lowered loop nest (features.c) -> cost model (model.c,
 *   XGBoost) -> evolutionary search (search.c) -> compiled in parallel (compile.c) -> measured in
 *   child processes (measure.c) -> one JSON line per result (log.c).
 *
 * With a schedule template (te_tune_options.template_fn, knobs.c) the task has one sketch,
 * "user", instead: the template's knobs are the search space and the template applies them.
 *
 * Contexts: a schedule lives in its context until the context dies, so every round of the search
 * and every compile thread works in a fresh context holding a clone of the workload, freed when
 * the round ends. Nothing here is global except the test hooks.
 */
#ifndef TE_AT_H
#define TE_AT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/ir.h"
#include "schedule/sch.h"
#include "te/tune.h"

/* Returns the status of a te call from the enclosing function when it is not TE_OK. */
#define AT_TRY(x)                                                                                  \
  do {                                                                                             \
    te_status st_ = (x);                                                                           \
    if (st_ != TE_OK)                                                                              \
      return st_;                                                                                  \
  } while (0)

/* ---------------------------------------------------------------- random numbers (rng.c) */

/* xoshiro256** seeded through splitmix64: the same seed gives the same stream everywhere. */
typedef struct at_rng {
  uint64_t s[4];
} at_rng;
void at_rng_seed(at_rng *, uint64_t seed);
uint64_t at_rng_next(at_rng *);
int at_rng_int(at_rng *, int n); /* uniform in [0, n); 0 when n <= 0 */
double at_rng_unit(at_rng *);    /* uniform in [0, 1) */
/* 16 lowercase hex digits and a NUL. */
void at_hex64(uint64_t, char out[17]);

/* ---------------------------------------------------------------- workloads (workload.c) */

/* A computation to tune: its outputs, and its placeholders (first-use order). The kernel's
   arguments are the inputs then the outputs. Arrays live in ctx's arena. */
typedef struct at_workload {
  te_ctx *ctx;
  int nout, nin, nargs;
  te_tensor **outs, **ins, **args;
  int nops;
  sch_op **ops; /* every operation, producers first (placeholders included) */
} at_workload;

/* Checks that the computation can be tuned (constant shapes, no scalar parameters, at most
   TE_MAX_DIMS dims) and fills wl. Errors on ctx, messages naming api. */
te_status at_workload_make(te_ctx *, int nout, te_tensor *const outs[], const char *api,
                           at_workload *wl);
/* The same computation rebuilt in another context (same names, so traces apply unchanged).
   Only reads src: several threads may clone one workload at once. */
te_status at_workload_clone(const at_workload *src, te_ctx *dst, at_workload *out);
/* The canonical text of the computation (malloc'd): te_workload_text's (te/parse.h), or a
   fallback form of workload_text.c where that printer cannot express the computation. Equal
   computations give equal texts. */
char *at_workload_text(const at_workload *);
/* Floating-point operations of one evaluation (arithmetic nodes of float type, reductions
   counted once per point of their domain); 0 for computations without float arithmetic. */
double at_workload_flops(const at_workload *);
/* Integer arithmetic of one evaluation, counted the same way but only where values are computed
   (not tensor indices or conditions): an int8 matmul's 2 M N K multiply-adds; 0 for float-only
   computations. */
double at_workload_int_ops(const at_workload *);
/* The key of a workload text: the hex FNV-1a hash. */
void at_workload_key(const char *text, char out[17]);

/* ---------------------------------------------------------------- sketches (sketch.c) */

enum {
  AT_MAX_CACHE_READS = 4,
  AT_MAX_STAGES = 24,
  AT_MAX_AXES = 8,
  AT_MAX_KNOBS = 48,
  AT_MAX_VALS = 96,
  AT_MAX_SKETCHES = 10,
  AT_MAX_LEVELS = 4,    /* of a tile knob */
  AT_GPU_MAX_INNER = 8, /* a GPU thread's own tile: at most this many points along each axis */
  AT_MAX_WINDOW = 7     /* tile+cache+window: every reduce axis at most this long */
};

typedef struct at_stage_info {
  char name[96];
  bool output, injective, placeholder;
  bool reuse; /* a reduction whose inputs are read with reuse across its space axes */
  int nspace, nreduce;
  int64_t space_ext[AT_MAX_AXES], reduce_ext[AT_MAX_AXES];
  int nconsumers;
  int consumer; /* the single consumer stage (index), or -1 */
  int ninputs;  /* tensors it reads */
  /* per input (sch_op_inputs' order, the first AT_MAX_CACHE_READS): bit a set when space
     axis a indexes it (B[k, j] of a matmul: bit 1); which copies the vector axis reads */
  unsigned input_axes[AT_MAX_CACHE_READS];
  /* and those of them that index it together with a reduce axis, in one index: a window
     (conv_pad[n, rc, y + ry, x + rx]: y and x), which a copy in vector panels of that axis
     would cut (a panel's last lanes read the next panel's first) */
  unsigned input_windows[AT_MAX_CACHE_READS];
} at_stage_info;

typedef enum at_sketch_kind {
  AT_SK_TILE,       /* multi-level tiling of the heavy reduction at root */
  AT_SK_TILE_CACHE, /* the same, accumulating in a local cache_write stage computed at a tile */
  AT_SK_TILE_CACHE_READ, /* tile+cache, and the inputs the local stage reads with reuse copied
                            (te_cache_read) into compact local blocks at its outer reduce loop */
  AT_SK_TILE_FUSE,       /* the reduction computed at a tile of its element-wise consumer */
  AT_SK_SIMPLE,          /* no heavy reduction: parallel outer loops, vectorized inner loops */
  AT_SK_DEFAULT,         /* nothing applies: the default schedule, no knobs */
  AT_SK_GPU_TILE,   /* GPU targets (sketch_gpu.c): the heavy reduction tiled over blocks, threads
                       and a per-thread tile accumulated in a local stage, inputs in shared memory */
  AT_SK_GPU_SIMPLE, /* GPU targets: every stage's space axes fused and split over blocks and
                       threads, reductions run by each thread */
  AT_SK_USER        /* a schedule template's knobs (knobs.c) */
} at_sketch_kind;

typedef enum at_knob_kind {
  AT_KNOB_TILE,  /* factors of one axis over nlevels loops, outermost first: the product is the
                    extent, or (space tiles of the tiled stage) the outermost level counts the
                    tiles the inner levels make, rounded up (space.c) */
  AT_KNOB_CHOICE /* one value in [0, nchoices) */
} at_knob_kind;

/* What a knob decides (for apply and for humans). */
typedef enum at_knob_role {
  AT_ROLE_SPACE_TILE,
  AT_ROLE_REDUCE_TILE,    /* of the tiled stage */
  AT_ROLE_PARALLEL_DEPTH, /* 0: S0 levels parallel, 1: S0 and S1 */
  AT_ROLE_UNROLL,         /* 0: none, 1: unroll S3 of non-vector axes */
  AT_ROLE_VECTORIZE,      /* 0: no te_vectorize, 1: vectorize (every stage) */
  AT_ROLE_SIMPLE_VEC,     /* a simple stage's vector factor (a tile) */
  AT_ROLE_AT_CONSUMER,    /* row reductions (all): 0 root, 1 at their output's
                             row loop */
  AT_ROLE_CACHE_READ,     /* tile+cache+read, one per input (axis: its index
                             among the local stage's inputs): 0 read in place,
                             1 copied into a local block at the outer reduce
                             loop, 2 copied whole at root (packed once: weights);
                             3 and 4: as 1 and 2, stored in the register tile's
                             layout (apply.c, pack_layout); 5: packed as 3, a
                             block of the whole reduction computed at the parallel
                             row-block loop (the outer tile's S0 of the axes but
                             the vector's, which then run outside the vector's S0):
                             A packed once per row block, as bench/sgemm_schedule.c
                             packs it; a dot sketch's copies always are packed */
  AT_ROLE_KEEP_STAGE,     /* tile+cache+read, one per injective stage the tiled
                             stage reads (padding): 0 inlined, 1 kept as a
                             stage at root (simple rules), so the copies read
                             it with affine indices; tile+cache+window also 2:
                             computed at the output's parallel loop, scalar
                             (one tile's rows, in L1) */
  AT_ROLE_USER,           /* a template's knob k (at_task.uknob[k]): the index of
                             its chosen candidate */
  AT_ROLE_GPU_TILE,       /* gpu-tile: factors of a space axis over block, thread and the
                             thread's own tile (at most AT_GPU_MAX_INNER) */
  AT_ROLE_GPU_THREADS,    /* a GPU simple stage: 32 << v threads a block (capped) */
  AT_ROLE_REDUCE_LANES,   /* simple+lanes, one per reduction stage: its reduce axis split by
                             16 << v lanes (at most the extent) and te_rfactor'ed into that many
                             partial results, the lanes innermost and vectorized (v = 2: 4 zmm
                             of independent accumulators) */
  AT_ROLE_UNROLL_WINDOW   /* tile+cache+window: 0 none, 1 te_unroll of the register tile's
                             inner reduce loops (R1 of each window axis, at most
                             AT_MAX_WINDOW points), so the stencil is straight-line code */
} at_knob_role;

typedef struct at_knob {
  at_knob_kind kind;
  at_knob_role role;
  int stage;   /* index in the task's stages */
  int axis;    /* space or reduce axis index */
  int nlevels; /* AT_KNOB_TILE */
  int64_t extent;
  int nchoices; /* AT_KNOB_CHOICE */
  int offset;   /* first value in at_cand.v */
} at_knob;

/* The dot-product instruction a dot sketch maps its register tile onto (te_tensorize). */
typedef struct at_dot {
  const char *insn; /* "vpdpbusd", "vdpbf16ps"; NULL: not a dot sketch */
  int group;        /* consecutive k one lane sums: 4 (u8 x i8 -> i32), 2 (bf16 -> f32) */
  int lanes;        /* the vector the instruction takes: 16 (zmm) */
  int reduce_axis;  /* the tiled stage's reduce axis whose innermost group is tensorized */
} at_dot;

typedef struct at_sketch {
  at_sketch_kind kind;
  at_dot dot;    /* tile+cache+read+dot:INSN: the register tile as dot-product instructions */
  int vec_axis;  /* tile+cache+read: the space axis whose innermost level is the vector (the
                    local block and copied blocks stored with it contiguous); -1: the last */
  bool lanes;    /* simple+lanes: reductions accumulate in vector lanes (AT_ROLE_REDUCE_LANES) */
  bool window;   /* tile+cache+window (a tile+cache whose reduce axes are a small window: a
                    depthwise convolution's 3 x 3): the window unrolled (AT_ROLE_UNROLL_WINDOW)
                    and each padding stage it reads inlined, kept at root, or computed at the
                    output's parallel loop (AT_ROLE_KEEP_STAGE, three choices) */
  char name[40]; /* "tile", "tile+cache", "tile+cache+read", "tile+cache+read:A" (vector along
                    space axis A), "tile+cache+read+dot:INSN", "tile+cache+window",
                    "tile+fuse", "simple",
                    "simple+lanes", "default", "user" */
  int nknob, nvals;
  at_knob knob[AT_MAX_KNOBS];
} at_sketch;

/* A knob of a schedule template, as its first run registered it (te_knob_* in knobs.c). */
typedef enum at_uknob_kind { AT_UK_CHOICE, AT_UK_INT, AT_UK_SPLIT, AT_UK_REORDER } at_uknob_kind;
typedef struct at_uknob {
  char name[TE_TUNE_MAX_KNOB_NAME + 1];
  at_uknob_kind kind;
  int n;                                /* candidates (choices, values, orders) */
  int width;                            /* AT_UK_REORDER: loops per order */
  int64_t vals[TE_TUNE_MAX_KNOB_CANDS]; /* AT_UK_INT, AT_UK_SPLIT: the candidates */
} at_uknob;

/* The analysed workload: stages (in the schedule's order) and the sketches that apply. */
typedef struct at_task {
  int nstage;
  at_stage_info stage[AT_MAX_STAGES];
  int tiled;         /* the stage tiled on several levels, -1 when none */
  int fuse_consumer; /* its element-wise output consumer when it has one, else -1 */
  int nsketch;
  at_sketch sketch[AT_MAX_SKETCHES];
  bool vectorize_ok; /* te_vectorize works on this computation (probed once) */
  /* A schedule template: no stages analysed, one sketch AT_SK_USER whose knob k is a choice
     among uknob[k]'s candidates. */
  te_tune_template_fn tmpl;
  void *tmpl_user;
  at_uknob uknob[TE_TUNE_MAX_KNOBS];
  /* GPU targets (sketch_gpu.c): the limits candidates must keep */
  bool gpu;
  int gpu_max_threads;
  int64_t gpu_max_shared;
} at_task;

te_status at_task_analyze(const at_workload *, at_task *);
/* The stage analysis alone (stages, the tiled stage, its fuse consumer), no sketches; the
   default schedule it was read from in *sched when sched is not NULL (context-owned). */
te_status at_task_stages(const at_workload *, at_task *, te_schedule **sched);
/* The task for a GPU target (sketch_gpu.c): sketches "gpu-tile" (when a reduction with reuse is
   tiled) and "gpu-simple", each probed by building a sample for target; the vectorized loads
   are kept off where the target's code generator refuses them. */
te_status at_task_analyze_gpu(const at_workload *, const te_target *, at_task *);
/* Whether injective stage i may stay a stage in sketch tile+cache+read: it is not an output and
   the tiled stage is its only reader. */
bool at_task_keepable(const at_task *, int stage);
/* For a reduction that is not an output: the output stage one dimension larger whose leading
   extents are its own (softmax's max and sum, layer norm's mean and var), where it may be
   computed row by row; -1 when none (or several). */
int at_task_row_consumer(const at_task *, int stage);
/* The sketch called name, -1 when none. */
int at_task_sketch_index(const at_task *, const char *name);

/* The task of a schedule template (knobs.c): runs it once on a schedule of the workload, with
   the first candidate of every knob, which registers its knobs as the one sketch "user". The
   template's failure is returned, with a message on wl->ctx. */
te_status at_task_from_template(const at_workload *, te_tune_template_fn, void *user, at_task *);

/* ---------------------------------------------------------------- candidates (space.c) */

typedef struct at_cand {
  int sketch;
  int nvals;
  int64_t v[AT_MAX_VALS];
} at_cand;

void at_cand_sample(const at_task *, int sketch, at_rng *, at_cand *);
/* A copy of c with one knob changed (a tile factor moved between levels, or a choice redrawn). */
void at_cand_mutate(const at_task *, const at_cand *c, at_rng *, at_cand *out);
/* Knob-wise uniform crossover of two candidates of the same sketch (else a copy of a). */
void at_cand_crossover(const at_task *, const at_cand *a, const at_cand *b, at_rng *, at_cand *out);
/* True when the values are a valid point of the sketch (products, ranges). */
bool at_cand_valid(const at_task *, const at_cand *);
/* What the derived points (seed_points.c) and the shaped samples take from the target: f32 lanes of
   a vector, vector registers, L1 data and L2 cache bytes (sysconf, else 32 KB and 1 MB;
   TE_TUNE_L1/_L2). */
typedef struct at_target_caps {
  int lanes, regs;
  int64_t l1, l2;
} at_target_caps;
void at_target_caps_get(const te_target *, at_target_caps *);
/* Shaped samples (space_shaped.c): a point of a tile+cache+read sketch (not a dot one) with
   the structure of te's hand SGEMM schedule — a register tile that fits caps' vector registers
   (4..12 rows by 2..4 vectors with 32 of them, 2..12 rows by 1..4 vectors with 16; NULL caps:
   32 registers of 16 f32 lanes), a row block of up to 342 rows, a k block, packed copies
   (cache-read knobs 3, 4 or 5), vectorized, rows unrolled, outer tiles parallel — the other knobs
   drawn as at_cand_sample draws them; a short reduction (k <= 128) is, in half the draws, read in
   place, k whole, the local block a whole row. Where the task has a tile+cache+window sketch, only
   that one takes shaped samples (at_cand_sample_window). False (c unspecified) when the sketch
   takes none or the shape is not valid here. */
bool at_sketch_shapeable(const at_task *, int sketch);
bool at_cand_sample_shaped(const at_task *, const at_target_caps *, int sketch, at_rng *,
                           at_cand *c);
/* The space axis of a register tile's rows: the widest space axis but the vector's `vec` (-1
   when the stage has no other). space_shaped.c, also for seed_points.c. */
int at_rows_axis(const at_stage_info *, int vec);
/* A second axis for the register tile's rows beside `rows`: a space axis of two points or more
   that some input does not index (a convolution's output row y: the kernel's broadcast serves
   both rows axes); -1 when there is none. space_shaped.c, also for seed_points.c. */
int at_rows2_axis(const at_stage_info *, int vec, int rows);
/* A log-uniform draw in [lo, hi] (space_shaped.c, also for space_window.c). */
int64_t at_log_uniform(at_rng *, int64_t lo, int64_t hi);
/* A point of a tile+cache+window sketch shaped like a stencil kernel (space_window.c): a
   register tile of 2..8 rows by 1..4 vectors of caps' lanes (16 when caps is NULL), a block of rows
   a parallel task, the window whole and unrolled, the padding computed in the task (or at root);
   false when the sketch is not one or the shape is not valid here. at_cand_sample_shaped calls it.
 */
bool at_cand_sample_window(const at_task *, const at_target_caps *, int sketch, at_rng *,
                           at_cand *c);
/* A neighbour of c (space.c): one knob moved by one step — a tile's factor of 2 (its smallest
   prime) moved to the next level, a tail-free innermost level one vector or one row more or
   less, a choice one up or down. A copy of c when no step is valid. */
void at_cand_neighbour(const at_task *, const at_cand *c, at_rng *, at_cand *out);
/* The hand-derived points of the task's tile+cache+read sketches for caps (seed_points.c's
   header says why each factor): register tiles that fill the registers, the reduce block from
   L1, the row block from L2, packed copies. Up to max valid, distinct points in out; returns
   how many (0 without a tiled stage). */
int at_seed_points(const at_task *, const at_target_caps *, at_cand *out, int max);
/* Applies the candidate's primitives to a fresh schedule of the workload. */
te_status at_cand_apply(const at_task *, const at_cand *, te_schedule *);
/* The "user" sketch's at_cand_apply (knobs.c): the template run with c's knob values. A knob
   rule broken or an error the run leaves on s's context fails it too. */
te_status at_user_apply(const at_task *, const at_cand *, te_schedule *);
/* at_cand_apply of a GPU sketch; TE_ERR_UNSUPPORTED (no message kept: the search skips it) for
   a candidate over the target's threads a block or shared memory. */
te_status at_gpu_apply(const at_task *, const at_cand *, te_schedule *);
/* What the appliers share (apply.c): task stage idx of s (TE_ERR_NOT_FOUND set when missing),
   and the fuse of n adjacent leaves, outermost first, into *out. */
te_stage *at_stage_named(te_schedule *s, const at_task *t, int idx);
te_status at_fuse_all(te_stage *st, int n, te_iter *const its[], te_iter **out);
/* The candidate's values as text (malloc'd) and back (false on mismatch): "v0 v1 ...", or for
   the "user" sketch "name=value ..." with a value knob's value and a choice's or an order's
   index. */
char *at_cand_params_str(const at_task *, const at_cand *);
bool at_cand_from_params(const at_task *, int sketch, const char *params, at_cand *);

/* ---------------------------------------------------------------- packed copies (pack.c) */

/* Which dims of an input the tiled stage indexes with the axes a packed layout follows (-1:
   none), and the factors: the vector axis' dim and the local block's width along it, the
   register tile's rows' dim and their count, the grouped reduce axis' dim and the group. */
typedef struct at_pack_dims {
  int along;
  int64_t width;
  int rows_dim;
  int64_t rows;
  int group_dim;
  int64_t group; /* 0: not a dot sketch */
} at_pack_dims;

/* How one copy is stored: split[d] > 0 splits dim d by it (the group's dim innermost). */
typedef struct at_pack_plan {
  int nd, along, group_dim;
  int64_t split[TE_MAX_DIMS];
} at_pack_plan;

/* The layout of the copy of t (whole: copied at root, so the vector's dim is split into
   panels; else a block at the reduce loop). */
void at_pack_plan_make(te_tensor *t, const at_pack_dims *, bool whole, at_pack_plan *);
/* Stores the copy stage cs so and splits, orders, vectorizes (vec) and, when whole,
   parallelizes its loops (pack.c's header). along_last: the vector's dim is stored last (a
   vector along a space axis other than the last). */
te_status at_pack_copy(te_stage *cs, const at_pack_plan *, bool along_last, bool vec, bool whole);

/* ---------------------------------------------------------------- features (features.c) */

enum {
  AT_FEAT_PER_STORE = 32,
  AT_FEAT_STORES = 3,
  AT_FEAT_GLOBAL = 8,
  AT_NFEAT = AT_FEAT_PER_STORE * AT_FEAT_STORES + AT_FEAT_GLOBAL
};
/* Features of the schedule's lowered loop nest (log-scaled), AT_NFEAT floats. Lowers inside a
   scratch arena of the schedule's context. */
te_status at_features(const at_workload *, te_schedule *, const te_target *, float *out);

/* ---------------------------------------------------------------- cost model (model.c) */

typedef struct at_model at_model;
at_model *at_model_new(uint64_t seed);
void at_model_free(at_model *);
/* One measured sample: its features and throughput (0 for failures). */
bool at_model_add(at_model *, const float *feat, double throughput);
/* A sample of another workload (transfer.c): its throughput relative to the best of that
   workload, in [0, 1], used as the label as it is. */
bool at_model_add_prior(at_model *, const float *feat, double relative);
int at_model_count(const at_model *);
/* Retrains from every sample (regression of throughput / best throughput). */
bool at_model_train(at_model *);
bool at_model_ready(const at_model *);
/* Scores (higher is better) of n feature rows; false when the model cannot predict. */
bool at_model_predict(at_model *, int n, const float *feats, float *out);

/* ---------------------------------------------------------------- compiling (compile.c) */

typedef struct at_job {
  const char *trace; /* in */
  te_module *mod;    /* out: lives in the batch's contexts */
  void *entry;
  te_status status;
  char message[512];
  double build_s;
} at_job;

typedef struct at_compiled at_compiled; /* the contexts holding a batch's modules */
/* Builds every job's trace on the workload in nthreads threads (one context each); kernels are
   named "at_kernel". Failures are per job; a job whose lowered body is over max_statements
   (lw_code_size; 0: no limit) is one, refused before LLVM. Returns NULL only when no context
   could be made. */
at_compiled *at_compile_batch(const at_workload *, const char *target, int njobs, at_job *jobs,
                              int nthreads, int max_statements);
void at_compiled_free(at_compiled *);

/* ---------------------------------------------------------------- measuring (measure.c) */

typedef struct at_measure_opts {
  double min_repeat_s; /* repeat until the runs add up to this */
  int min_repeats, max_repeats, warmup;
  double timeout_s; /* per candidate: the child is killed after it */
  int threads;      /* te_set_num_threads in the child (0: default) */
  int flush_cache;  /* evict the caches before each timed run (te_tune_options.flush_cache) */
  int clock; /* te_tune_clock: which costs rank (tuner.measure.clock; absent in a log: wall) */
} at_measure_opts;

typedef struct at_result {
  te_status status;
  char kind[16]; /* "", "build", "run", "crash", "timeout", "wrong" */
  char message[512];
  int ncosts;
  double costs[256];     /* seconds, every timed run: wall time */
  int ncpu_costs;        /* ncosts, or 0 where the cpu clock could not be read (clock.c) */
  double cpu_costs[256]; /* the same runs on the cpu clock: less the threads' run-queue waits */
  char measured_on[96];  /* the host that ran it (and, under te-tune --mpi, the rank) */
} at_result;

/* The cost of a measured result on clock (te_tune_clock): the median of its cpu costs under the
   cpu clock when it has one per run, else of its (wall) costs; INFINITY when it has none. */
double at_result_cost(const at_result *, int clock);

/* ---------------------------------------------------------------- the cpu clock (clock.c) */

enum { AT_TEAM_MAX = 256 };

/* The threads of this process (TIDs), each with its /proc/self/task/TID/schedstat open. */
typedef struct at_team {
  int n;
  int fd[AT_TEAM_MAX];
  int tid[AT_TEAM_MAX];
} at_team;

/* Whether this thread's schedstat can be read: the cpu clock works here. */
bool at_cpu_clock_available(void);
/* Opens the schedstat of every thread of the process now; false (nothing open) when none can be
   read. */
bool at_team_open(at_team *);
void at_team_close(at_team *);
/* One thread's times so far: on a core (its CPU-time clock), runnable waiting for one
   (schedstat). */
typedef struct at_thread_times {
  uint64_t run_ns, wait_ns;
} at_thread_times;
/* Each thread's times so far into times[0..n); false when one cannot be read. */
bool at_team_read(const at_team *, at_thread_times *times);
/* The cpu cost of a run of wall_s seconds over which the n threads' times went from before to
   after: wall_s less their mean wait (each capped at wall_s), at most the busiest thread's time
   on a core, at least 1% of wall_s (clock.c says why). */
double at_cpu_cost(double wall_s, int n, const at_thread_times *before,
                   const at_thread_times *after);
/* "cpu" or "wall". */
const char *at_clock_name(int clock);

typedef struct at_bench at_bench; /* inputs (random, non-zero), shared outputs, reference */
at_bench *at_bench_new(const at_workload *, uint64_t seed);
void at_bench_free(at_bench *);
/* The device candidates run on: kDLCPU (the default: entry is a JIT-compiled host entry point),
   kDLVulkan or kDLCUDA (entry is then the candidate's te_module, called through te_module_call:
   Vulkan on the bench's host buffers, which the launcher copies in and out at every call; CUDA
   on device copies the child makes, synchronized after every run). The reference is always a
   host entry. */
void at_bench_set_device(at_bench *, DLDeviceType);
/* Whether target's device can run kernels here, asked in a child process (CUDA and Vulkan
   state does not survive fork, so the tuner's process never touches either). TE_OK for a CPU
   target; else TE_ERR_RUNTIME with why in msg. */
te_status at_device_probe(const te_target *, char msg[512]);
/* Runs entry in a child process: warm-up, then timed runs; with check, also compares the outputs
   with the reference (which must be set). */
void at_bench_run(at_bench *, void *entry, bool check, const at_measure_opts *, at_result *);
/* Runs entry once in a child and keeps its outputs as the reference. */
void at_bench_set_reference(at_bench *, void *entry, double timeout_s, at_result *);
bool at_bench_has_reference(const at_bench *);
/* Builds the default schedule of wl and runs it once in a child for bench's reference outputs.
   A schedule that does not build is the returned status (message in build_message); a run that
   fails leaves bench without a reference (r says why) and returns TE_OK: candidates then run
   unchecked. */
te_status at_reference_set(const at_workload *, const char *target, at_bench *, double timeout_s,
                           char build_message[512], at_result *r);

/* Test hooks: the n-th call (0-based, counted per process from this call) of at_bench_run
   crashes (SIGABRT in the child), hangs, or returns a wrong output; -1 disables. hang_timeout_s
   > 0 kills the planted hang after that many seconds instead of the run's timeout_s, so that a
   test can give every real candidate a timeout that no loaded machine reaches and still see the
   hang end quickly. Only tests set them. */
void at_test_plant(int crash_at, int hang_at, int wrong_at, double hang_timeout_s);
/* Test hook: the calls of at_bench_run numbered in calls[0..n) (0-based, counted as above) have
   their costs multiplied by factor, as a burst of load on the machine would stretch them; n 0
   disables. Only tests set it. */
void at_test_noise(int n, const int *calls, double factor);

/* ---------------------------------------------------------------- measuring elsewhere (remote.c)
 *
 * A tuning run may hand its candidates to measurers in other processes, on other hosts (te-tune
 * --mpi, autotune/cli/mpi.c): the search, the cost model and the log stay in the calling process
 * (at_tune_remote), which sends each candidate's trace and is sent back its build status and
 * costs. A measurer (at_measurer) holds what te_tune's own measuring holds: the workload, the
 * same buffers (same seed, same values) and the default schedule's outputs as the reference.
 * The reference run and the confirm pass stay in the calling process, so the log's best is
 * ranked side by side on one host.
 */

typedef struct at_remote_job {
  const char *trace; /* in */
  bool check;        /* in: compare the outputs with the reference */
  at_job job;        /* out: status, message, build_s (mod and entry stay NULL) */
  at_result result;  /* out: the measurement when job.status is TE_OK */
} at_remote_job;

typedef struct at_remote {
  /* Builds and measures every job, anywhere; a failure of one job is that job's status. A
     non-OK return (a lost measurer, a transport error) ends the tuning run with it; the log then
     holds every record written before. */
  te_status (*measure)(void *user, int njobs, at_remote_job *jobs);
  void *user;
} at_remote;

/* te_tune with the candidates measured through remote (NULL: measured here). */
te_status at_tune_remote(te_ctx *, int nout, te_tensor *const outs[], te_target *,
                         const te_tune_options *, const at_remote *remote);

typedef struct at_measurer at_measurer;
/* Makes the measurer of outs for target with opts' seed and measurement options (the same ones
   the searching process was given), and runs the default schedule for the reference. */
te_status at_measurer_new(te_ctx *, int nout, te_tensor *const outs[], te_target *,
                          const te_tune_options *, at_measurer **out);
/* Builds trace and measures it as te_tune measures its own candidates. */
void at_measurer_run(at_measurer *, at_remote_job *);
void at_measurer_free(at_measurer *);

/* ---------------------------------------------------------------- the log (log.c) */

enum { AT_LOG_VERSION = 1 };

typedef struct at_record {
  int version;
  char *key, *wl_text, *wl_desc, *target, *trace, *sketch, *params;
  int ncosts;
  double *costs;     /* result.costs: wall seconds of every run */
  int ncpu_costs;    /* result.cpu_costs: the same runs on the cpu clock (0 in logs before it) */
  double *cpu_costs; /* the record's cost is their median when measure.clock is the cpu clock */
  int error;         /* te_status */
  char *error_kind, *message;
  char *timestamp, *te_version;
  uint64_t seed;
  int trial;
  double elapsed_s, flops;
  double int_ops;    /* integer operations of one run ("int_ops"; 0 in logs that predate it) */
  double load1;      /* 1-minute load average when written (-1: unknown) */
  char *measured_on; /* tuner.measured_on: the host (and rank) that measured it; may be NULL */
  at_measure_opts measure;
  bool confirm;         /* written by the confirm pass (a trace measured again), not a trial */
  double search_cost_s; /* on a confirm record: the cost the search measured (tuner.search_cost_s);
                           0 when unknown */
  /* On a confirm record (tune_confirm.c): the median of each round's runs (tuner.round_costs_s)
     and the confirmed cost, the lowest of them (tuner.confirm_cost_s; 0 in logs that predate
     it); reconfirmed when rounds were added because the first ones disagreed with the search. */
  int nround_costs;
  double *round_costs;
  double confirm_cost_s;
  bool reconfirmed;
  bool superseded; /* set by at_log_read: a later record has this key, target and trace */
} at_record;

/* The record's cost: the median of the costs of its clock (measure.clock: cpu_costs under the cpu
   clock when there is one per run, else costs), or on a confirm record with a confirm_cost_s that
   cost (the lowest round median: docs/tuning-log.md); INFINITY for a failed or cost-less record. */
double at_record_cost(const at_record *);
/* The median of n values (not reordered); INFINITY when n <= 0. */
double at_median(const double *v, int n);
/* GFLOP/s of a record (0 for failures or unknown flops). */
double at_record_gflops(const at_record *);
/* Throughput in G operations a second, float and integer ones together (0 for failures or when
   neither is known), and its unit: "GOP/s" when the workload has integer arithmetic, else
   "GFLOP/s" (then the same number as at_record_gflops). */
double at_record_gops(const at_record *);
const char *at_record_rate_unit(const at_record *);
void at_record_free(at_record *);

/* Opens path for appending records (created when missing). When the file does not end with a
   newline (a record cut by a kill), one is written first, so the next record starts a line. */
FILE *at_log_open(const char *path);
/* Appends one record as a JSON line and flushes it. */
bool at_log_append(FILE *, const at_record *);

typedef struct at_log {
  int n, cap;
  at_record *rec;
  int skipped; /* malformed or truncated lines */
} at_log;
/* Reads every well-formed record; a malformed line is skipped with a warning on warn (when not
   NULL). A missing file is an empty log when missing_ok, else TE_ERR_IO. Errors on ctx (may be
   NULL: then only the status). */
te_status at_log_read(te_ctx *, const char *path, bool missing_ok, FILE *warn, at_log *);
void at_log_free(at_log *);
/* The index of the best record of key (and target when not NULL), -1 when none: when the
   records after its last trial are a confirm pass with a success, the cheapest of that pass;
   otherwise the cheapest successful record not superseded (a trace measured again is judged by
   its latest record). docs/tuning-log.md, "Reading rules". */
int at_log_best(const at_log *, const char *key, const char *target);
/* That record's cost; INFINITY when there is none. */
double at_log_best_cost(const at_log *, const char *key, const char *target);
/* The current time as ISO 8601 UTC (buf of 32). */
void at_timestamp(char *buf);

/* ---------------------------------------------------------------- shape buckets (buckets.c) */

enum { AT_MAX_BUCKETS = 32 };

/* One symbolic size tuned at a few values: the bucket index of a log (docs/tuning-buckets.md). */
typedef struct at_buckets {
  char size[64];                  /* the size's name in the workload text */
  int n;                          /* 1..AT_MAX_BUCKETS */
  int64_t values[AT_MAX_BUCKETS]; /* increasing, >= 1 */
  char keys[AT_MAX_BUCKETS][17];  /* each bucket's workload key */
} at_buckets;

/* text with every occurrence of the name size written as value (malloc'd); NULL with
   TE_ERR_NOT_FOUND on ctx when the text has no such name. */
char *at_bucket_text(te_ctx *, const char *text, const char *size, int64_t value);
/* The key of the workload sym_text is at size = value: its text rebuilt in a scratch context
   with constant shapes (TE_ERR_UNSUPPORTED when other sizes stay symbolic). */
te_status at_bucket_key(te_ctx *, const char *sym_text, const char *size, int64_t value,
                        char key[17]);
/* Whether any tensor of s's computation has a symbolic extent. */
bool at_schedule_is_symbolic(const te_schedule *);
/* TE_ERR_INVALID_ARG (message on ctx when not NULL) unless b has a size and 1..AT_MAX_BUCKETS
   increasing values >= 1. */
te_status at_buckets_check(te_ctx *, const at_buckets *);
/* Appends the bucket index of the symbolic workload (key, canonical text) for target, with the
   dispatch's trace as it is now. TE_ERR_IO when the log cannot be written. */
te_status at_buckets_append(te_ctx *, const char *log_path, const char *key, const char *text,
                            const char *target, const at_buckets *, const char *trace);
/* The latest bucket index of key for target in the log: TE_ERR_NOT_FOUND (no message) when it
   holds none, TE_ERR_IO when it cannot be read. */
te_status at_buckets_read(te_ctx *, const char *log_path, const char *key, const char *target,
                          at_buckets *);
/* Specializes s (a schedule of the symbolic computation) on "size == value" for every bucket
   and "size <= value" for every bucket but the largest, each branch replaying its bucket's best
   record in log, and replays the largest bucket's on s itself. TE_ERR_NOT_FOUND naming the
   bucket when one has no successful record (or its key no longer matches the computation); a
   replay failure names the bucket.
   The dispatch is built on a scratch schedule first: on failure s is unchanged. */
te_status at_buckets_dispatch(te_schedule *s, const at_log *log, const char *target,
                              const at_buckets *);
/* te_apply_best on a schedule with symbolic shapes: the log's latest bucket index of key (the
   symbolic computation's) for target, dispatched. */
te_status at_apply_buckets(te_schedule *s, const char *log_path, const char *key,
                           const char *target);

/* ---------------------------------------------------------------- search (search.c) */

typedef struct at_search at_search;
typedef struct at_proposal {
  at_cand cand;
  char *trace; /* malloc'd */
  float feat[AT_NFEAT];
  bool random; /* drawn at random (epsilon), not by the model */
} at_proposal;

typedef struct at_search_opts {
  uint64_t seed;
  int population, generations;
  double epsilon; /* fraction of random candidates in a batch */
  bool use_model;
  bool no_shaped; /* no shaped samples (space_shaped.c): every random candidate uniform */
  bool no_seeds;  /* no derived points (seed_points.c) in the first round, no neighbours */
} at_search_opts;

at_search *at_search_new(const at_task *, const at_search_opts *);
void at_search_free(at_search *);
/* Records a measured candidate (throughput 0 for failures): it is never proposed again, feeds
   the model, and seeds mutation when good. trace is copied; cand may be NULL (a record whose
   knobs are unknown). feat may be NULL (computed later by the caller, or never). */
void at_search_observe(at_search *, const at_cand *, const char *trace, const float *feat,
                       double throughput);
/* A sample of another workload for the cost model only (transfer.c); false when out of memory
   or the search has no model. */
bool at_search_observe_prior(at_search *, const float *feat, double relative);
/* True when trace was already measured (or proposed and pending). */
bool at_search_seen(const at_search *, const char *trace);
/* Retrains the model on everything observed. */
void at_search_retrain(at_search *);
/* Proposes up to n new candidates for the workload (ctx: a fresh context the caller frees after
   using the proposals; their traces are malloc'd). Returns how many. */
int at_search_propose(at_search *, const at_workload *, const te_target *, int n, at_proposal *out);
void at_proposal_free(at_proposal *);

/* ---------------------------------------------------------------- C code (show_c.c) */

/* A C program (malloc'd) that builds the workload (workload_c: statements declaring `out`,
   variables t_<name> for the tensors in names, and args/nargs, see at_op_spec_c), applies trace as
   te_* calls (one call a step, the step as a comment above it), and prints the lowered IR (or, with
   --trace, the trace it made) and builds the kernel for target. NULL with a message in err when a
   step cannot be translated. comment goes into the header comment. */
char *at_trace_to_c(const char *trace, const char *workload_c, const char *const names[],
                    int nnames, const char *out_name, const char *target, const char *comment,
                    char *err, size_t errsize);

/* ---------------------------------------------------------------- built-in operators (ops_spec.c)
 */

/* An operator of ops.h with its parameters, as te-tune takes it on the command line:
   "matmul M=512 N=512 K=512" with --dtype f32. */
typedef struct at_op_spec {
  char op[32];
  int nparams;
  char pname[16][16];
  int64_t pval[16];
  te_dtype dtype;
} at_op_spec;

/* Parses "OP K=V ..." words (argv style). Errors in err (returns false). */
bool at_op_spec_parse(int argc, char *const argv[], const char *dtype, at_op_spec *, char *err,
                      size_t errsize);
/* Canonical description: "matmul M=512 N=512 K=512 dtype=f32" (parameters in the op's order,
   defaults filled in). */
void at_op_spec_desc(const at_op_spec *, char *buf, size_t size);
/* Parses a description made by at_op_spec_desc back. */
bool at_op_spec_from_desc(const char *desc, at_op_spec *, char *err, size_t errsize);
/* Builds the operator in ctx (placeholders then the op). */
te_status at_op_spec_build(const at_op_spec *, te_ctx *, int *nout, te_tensor **outs);
/* C statements (malloc'd) that build it with ops.h in a te_ctx *ctx: the output in `out`, other
   tensors in variables t_<name>, whose names are stored in names (at most 8, static strings),
   and the kernel's arguments in `te_tensor *args[]` and `int nargs`. */
char *at_op_spec_c(const at_op_spec *, const char **names, int *nnames);
/* The list of operators and their parameters, for --help. */
void at_op_spec_help(FILE *);

#endif
