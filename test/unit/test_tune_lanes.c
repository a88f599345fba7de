/* test_tune_lanes.c — sketch simple+lanes (sketch.c): the row reductions of softmax and layer
 * norm accumulated in 16 to 128 vector lanes (te_rfactor). Every combination of its knobs — the
 * lanes of each reduction, the reductions at the output's row loop or at root, vectorized or
 * not — builds and computes what plain C computes (in double) on random non-zero inputs,
 * outputs poisoned before each run, on rows no lane count divides (100 columns: 16 lanes leave
 * 4, 64 leave 36; 7 rows for 2 threads); a vectorized candidate's reductions are vector code.
 */
#include "tune_util.h" /* first: it defines _GNU_SOURCE */

#include <math.h>

TestSuite(tune_lanes, .init = tu_setup, .fini = tu_teardown, .timeout = 240);

enum { ROWS = 7, COLS = 100 };

static void fill(float *p, int n, uint64_t seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(seed >> 11) / 9007199254740992.0;
    p[i] = (float)((seed >> 7 & 1 ? 1 : -1) * (0.1 + 3.0 * u));
  }
}

static void softmax_ref(const float *x, double *y) {
  for (int i = 0; i < ROWS; i++) {
    const float *r = x + i * COLS;
    double m = r[0], s = 0;
    for (int j = 1; j < COLS; j++)
      m = r[j] > m ? r[j] : m;
    for (int j = 0; j < COLS; j++)
      s += exp(r[j] - m);
    for (int j = 0; j < COLS; j++)
      y[i * COLS + j] = exp(r[j] - m) / s;
  }
}

static void layer_norm_ref(const float *x, const float *g, const float *b, double *y) {
  for (int i = 0; i < ROWS; i++) {
    const float *r = x + i * COLS;
    double m = 0, v = 0;
    for (int j = 0; j < COLS; j++)
      m += r[j];
    m /= COLS;
    for (int j = 0; j < COLS; j++)
      v += (r[j] - m) * (r[j] - m);
    v /= COLS;
    for (int j = 0; j < COLS; j++)
      y[i * COLS + j] = (r[j] - m) / sqrt(v + 1e-5) * g[j] + b[j];
  }
}

/* The value of every knob of role in c set to value; false when the sketch has none. */
static bool set_role(const at_task *t, at_cand *c, at_knob_role role, int64_t value) {
  const at_sketch *sk = &t->sketch[c->sketch];
  bool found = false;
  for (int k = 0; k < sk->nknob; k++)
    if (sk->knob[k].role == role) {
      c->v[sk->knob[k].offset] = value;
      found = true;
    }
  return found;
}

/* The workload's inputs by name (x, gamma, beta) and their data. */
typedef struct named_in {
  const char *name;
  float *data;
} named_in;

static float *input_named(const named_in *ins, const char *name) {
  for (; ins->name; ins++)
    if (!strcmp(ins->name, name))
      return ins->data;
  cr_assert_fail("no data for input %s", name);
  return NULL;
}

/* Builds candidate c of wl, runs it on ins with the output poisoned, at 1 and 2 threads, and
   compares with ref within a relative 1e-5 of the output's largest magnitude. */
static void check_cand(const at_workload *wl, const at_task *t, const at_cand *c,
                       const named_in *ins, const double *ref, const char *what) {
  te_schedule *s = te_schedule_new(ctx, wl->nout, wl->outs);
  cr_assert_eq(at_cand_apply(t, c, s), TE_OK, "%s: %s", what, te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "k", wl->nargs, wl->args, 0, NULL, tu_target(ctx), &m), TE_OK, "%s: %s",
               what, te_last_error(ctx));
  static float out[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++)
    out[i] = NAN;
  DLTensor ts[4];
  DLTensor *tp[4];
  int64_t shapes[4][2];
  for (int a = 0; a < wl->nargs; a++) {
    te_tensor *arg = wl->args[a];
    int nd = te_tensor_ndim(arg);
    for (int d = 0; d < nd; d++)
      cr_assert(ir_is_const_int(te_tensor_dim(arg, d), &shapes[a][d]));
    float *data = a < wl->nin ? input_named(ins, te_tensor_name(arg)) : out;
    ts[a] = (DLTensor){data, {kDLCPU, 0}, nd, {kDLFloat, 32, 1}, shapes[a], NULL, 0};
    tp[a] = &ts[a];
  }
  for (int threads = 1; threads <= 2; threads++) {
    te_rt_set_num_threads(threads);
    cr_assert_eq(te_module_call(m, "k", wl->nargs, tp, 0, NULL), TE_OK, "%s: %s", what,
                 te_last_error(ctx));
    double scale = 0;
    for (int i = 0; i < ROWS * COLS; i++)
      scale = fmax(scale, fabs(ref[i]));
    for (int i = 0; i < ROWS * COLS; i++)
      cr_assert(fabs(out[i] - ref[i]) <= 1e-5 * scale, "%s, %d threads: [%d] %g, expected %g\n%s",
                what, threads, i, out[i], ref[i], te_schedule_trace(s));
  }
  te_rt_set_num_threads(0);
}

/* Every lanes x placement x vectorize point of simple+lanes on the workload desc. */
static void check_workload(const char *desc, const named_in *ins, const double *ref) {
  te_tensor *outt = tu_op(ctx, desc);
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &outt, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  int sk = at_task_sketch_index(&t, "simple+lanes");
  cr_assert_geq(sk, 0, "%s: no sketch simple+lanes", desc);
  at_rng rng;
  at_rng_seed(&rng, 7);
  for (int lanes = 0; lanes < 4; lanes++)
    for (int at = 0; at < 2; at++)
      for (int vec = 0; vec < 2; vec++) {
        at_cand c;
        at_cand_sample(&t, sk, &rng, &c);
        cr_assert(set_role(&t, &c, AT_ROLE_REDUCE_LANES, lanes), "%s: no lanes knob", desc);
        set_role(&t, &c, AT_ROLE_AT_CONSUMER, at);
        set_role(&t, &c, AT_ROLE_VECTORIZE, vec);
        cr_assert(at_cand_valid(&t, &c));
        char what[160];
        snprintf(what, sizeof what, "%s, %d lanes, %s, %s", desc, 16 << lanes,
                 at ? "at the row loop" : "at root", vec ? "vectorized" : "scalar");
        if (vec) { /* the partials' lane loop is vector code: an accumulator of 16 lanes */
          te_schedule *s = te_schedule_new(ctx, wl.nout, wl.outs);
          cr_assert_eq(at_cand_apply(&t, &c, s), TE_OK, "%s: %s", what, te_last_error(ctx));
          char *ir = te_lower_text(s, wl.nargs, wl.args, 0, NULL);
          cr_assert_not_null(ir, "%s: %s", what, te_last_error(ctx));
          cr_assert(strstr(ir, "_rf[ramp("), "%s: no vector partials:\n%s", what, ir);
          te_free(ir);
        }
        check_cand(&wl, &t, &c, ins, ref, what);
      }
}

Test(tune_lanes, softmax_lanes_compute_what_c_computes) {
  static float x[ROWS * COLS];
  static double ref[ROWS * COLS];
  fill(x, ROWS * COLS, 3);
  softmax_ref(x, ref);
  char desc[64];
  snprintf(desc, sizeof desc, "softmax N=%d D=%d dtype=f32", ROWS, COLS);
  check_workload(desc, (named_in[]){{"x", x}, {NULL, NULL}}, ref);
}

Test(tune_lanes, layer_norm_lanes_compute_what_c_computes) {
  static float x[ROWS * COLS], g[COLS], b[COLS];
  static double ref[ROWS * COLS];
  fill(x, ROWS * COLS, 4);
  fill(g, COLS, 5);
  fill(b, COLS, 6);
  layer_norm_ref(x, g, b, ref);
  char desc[64];
  snprintf(desc, sizeof desc, "layer_norm N=%d D=%d dtype=f32", ROWS, COLS);
  check_workload(desc, (named_in[]){{"x", x}, {"gamma", g}, {"beta", b}, {NULL, NULL}}, ref);
}

/* Reductions too short for two vectors get no lanes sketch: "simple" alone. */
Test(tune_lanes, short_rows_have_no_lanes_sketch) {
  te_tensor *outt = tu_op(ctx, "softmax N=8 D=24 dtype=f32");
  at_workload wl;
  cr_assert_eq(at_workload_make(ctx, 1, &outt, "test", &wl), TE_OK, "%s", te_last_error(ctx));
  at_task t;
  cr_assert_eq(at_task_analyze(&wl, &t), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(t.nsketch, 1);
  cr_assert_str_eq(t.sketch[0].name, "simple");
}
