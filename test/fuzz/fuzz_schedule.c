/* fuzz_schedule.c — libFuzzer target: random schedules of the workloads of fuzz_workloads.h,
 * built, run on random data and compared with the reference interpreter (fuzz_ref.h;
 * test/fuzz/README.md says how to run it).
 *
 * An input is bytes, read in order (zeros past its end; one read a statement, so that every
 * compiler decodes an input alike): the workload, the parallel thread
 * count, the symbolic sizes and scalar parameters, then up to 24 steps, each a primitive with
 * its stage, loops and arguments (split, split_nparts, tile, fuse, reorder, vectorize, unroll,
 * parallel, bind, set_tail, pragma, compute_inline/root/at, cache_read/write, rfactor,
 * reorder_storage). A primitive may refuse its arguments (its error is cleared); what it
 * accepts is a schedule, and then:
 *   - no call returns a status that means a bug of te (TE_ERR_INTERNAL, TE_ERR_CODEGEN);
 *   - te_build either refuses the schedule with a message, or builds a kernel that, called on
 *     random non-zero inputs with its outputs poisoned, succeeds and computes every output
 *     within the dtype's tolerance of the interpreter's values;
 *   - the schedule's trace replays on a fresh schedule to the same loop IR.
 */
#include <math.h>

#include "fuzz_ref.h"
#include "fuzz_workloads.h"
#include "schedule/sch.h"

static const char *const NAME = "fuzz_schedule";

typedef struct fz_case {
  te_ctx *ctx;
  fz_reader in;
  fz_workload w;
  te_schedule *s;
  char log[4096]; /* the steps tried, for failure reports */
  size_t loglen;
} fz_case;

static void note(fz_case *c, const char *verb, te_status st) {
  int n = snprintf(c->log + c->loglen, sizeof c->log - c->loglen, "%s%s%s\n", verb,
                   st == TE_OK ? "" : ": refused: ", st == TE_OK ? "" : te_last_error(c->ctx));
  if (n > 0 && c->loglen + (size_t)n < sizeof c->log)
    c->loglen += (size_t)n;
}

/* Fails the case, printing the steps tried and the schedule's trace. */
static void fail_case(fz_case *c, const char *what, const char *detail) {
  char *trace = c->s ? te_schedule_trace(c->s) : NULL;
  fprintf(stderr, "%s: workload %s, trace:\n%s", NAME, FZ_WORKLOADS[c->w.index].name,
          trace ? trace : "(none)\n");
  fz_fail(NAME, what, c->log, detail);
}

/* Records a primitive's result; a refusal is cleared, a bug status aborts. */
static void step(fz_case *c, const char *verb, te_status st) {
  if (fz_is_bug(st))
    fail_case(c, "a primitive returns a bug status", te_last_error(c->ctx));
  note(c, verb, st);
  te_clear_error(c->ctx);
}

static te_iter *pick_leaf(fz_case *c, te_stage *st) {
  int n = te_leaf_count(st);
  return n > 0 ? te_leaf(st, (int)fz_below(&c->in, (unsigned)n)) : NULL;
}

static void shuffle(fz_case *c, int n, te_iter *its[]) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)fz_below(&c->in, (unsigned)i + 1);
    te_iter *t = its[i];
    its[i] = its[j];
    its[j] = t;
  }
}

/* Applies one primitive chosen by the input to one of the schedule's stages. */
static void random_step(fz_case *c) {
  te_schedule *s = c->s;
  te_stage *st = s->stages[fz_below(&c->in, (unsigned)s->nstage)];
  te_iter *l = pick_leaf(c, st);
  fz_reader *in = &c->in;
  te_iter *its[64];
  int n = st->nleaf < 64 ? st->nleaf : 64;
  switch (fz_below(in, 18)) {
  case 0:
    step(c, "split", te_split(st, l, fz_range(in, 1, 17), NULL, NULL));
    break;
  case 1:
    step(c, "split_nparts", te_split_nparts(st, l, fz_range(in, 1, 5), NULL, NULL));
    break;
  case 2: { /* each read in a statement of its own: argument order is unspecified in C */
    te_iter *y = pick_leaf(c, st);
    int64_t fx = fz_range(in, 1, 9);
    int64_t fy = fz_range(in, 1, 9);
    step(c, "tile", te_tile(st, l, y, fx, fy, NULL, NULL, NULL, NULL));
    break;
  }
  case 3: {
    int p = n >= 2 ? (int)fz_below(in, (unsigned)n - 1) : 0;
    if (n >= 2)
      step(c, "fuse", te_fuse(st, st->leaf[p], st->leaf[p + 1], NULL));
    break;
  }
  case 4:
    memcpy(its, st->leaf, sizeof(te_iter *) * (size_t)n);
    shuffle(c, n, its);
    step(c, "reorder", te_reorder(st, n, its));
    break;
  case 5:
    step(c, "vectorize", te_vectorize(st, l));
    break;
  case 6:
    step(c, "unroll", te_unroll(st, l));
    break;
  case 7:
    step(c, "parallel", te_parallel(st, l));
    break;
  case 8: /* rare: a CPU build refuses GPU bindings, which ends the case */
    if (fz_below(in, 4) == 0)
      step(c, "bind", te_bind(st, l, (te_thread_tag)fz_below(in, 6)));
    break;
  case 9:
    step(c, "set_tail", te_set_tail(st, l, (te_tail)fz_below(in, 3)));
    break;
  case 10: {
    const char *key = fz_below(in, 2) ? "prefetch" : "unroll_max_step";
    step(c, "pragma", te_pragma(st, l, key, fz_range(in, 0, 8)));
    break;
  }
  case 11:
    step(c, "compute_inline", te_compute_inline(st));
    break;
  case 12:
    step(c, "compute_root", te_compute_root(st));
    break;
  case 13: {
    te_stage *consumer = s->stages[fz_below(in, (unsigned)s->nstage)];
    step(c, "compute_at", te_compute_at(st, consumer, pick_leaf(c, consumer)));
    break;
  }
  case 14: {
    te_tensor **ins;
    int nin = sch_op_inputs(st->op, &ins);
    te_scope scope = fz_below(in, 2) ? TE_SCOPE_LOCAL : TE_SCOPE_GLOBAL;
    if (nin > 0)
      step(c, "cache_read",
           te_cache_read(s, ins[fz_below(in, (unsigned)nin)], scope, 1, &st, NULL));
    break;
  }
  case 15:
    step(c, "cache_write",
         te_cache_write(s, st->op->outputs[0], fz_below(in, 2) ? TE_SCOPE_LOCAL : TE_SCOPE_GLOBAL,
                        NULL));
    break;
  case 16:
    step(c, "rfactor", te_rfactor(s, st->op->outputs[0], l, (int)fz_below(in, 3), NULL));
    break;
  default: {
    int nd = st->op->ndim;
    for (int i = 0; i < nd && i < 64; i++)
      its[i] = te_axis(st, i);
    shuffle(c, nd, its);
    step(c, "reorder_storage", te_reorder_storage(st, nd, its));
  }
  }
}

/* Sizes 1..24 for the symbolic sizes, a value for each parameter, buffers for every tensor. */
static bool make_reference(fz_case *c, fz_ref *ref) {
  fz_ref_init(ref, c->w.nout, c->w.outs, fz_byte(&c->in));
  for (int i = 0; i < fz_ref_nsizes(ref); i++)
    fz_ref_set_size(ref, i, fz_range(&c->in, 1, 24));
  for (int i = 0; i < c->w.nparams; i++) {
    te_expr *p = c->w.params[i];
    int64_t b = (int64_t)fz_byte(&c->in) - 128;
    ir_eval_val v = te_expr_dtype(p).code == kDLFloat ? (ir_eval_val){.f = (double)b / 32}
                                                      : (ir_eval_val){.i = b};
    fz_ref_set_param(ref, p, v);
  }
  for (int i = 0; i < c->w.nt; i++)
    if (!fz_ref_buffer(ref, c->w.tensors[i]))
      return false;
  return true;
}

static void run_and_compare(fz_case *c, fz_ref *ref, te_module *m) {
  fz_workload *w = &c->w;
  DLTensor *args[16];
  for (int i = 0; i < w->nt; i++) {
    fz_buf *b = fz_ref_buffer(ref, w->tensors[i]);
    if (i < w->nin)
      fz_buf_upload(b);
    else
      fz_buf_poison(b);
    args[i] = &b->dl;
  }
  union {
    float f32;
    double f64;
    int64_t i64;
    int32_t i32;
  } values[8];
  const void *scalars[8];
  for (int i = 0; i < w->nparams && i < 8; i++) {
    te_dtype t = te_expr_dtype(w->params[i]);
    ir_eval_val v = {0};
    for (int k = 0; k < ref->nvars; k++)
      if (ref->vars[k] == w->params[i])
        v = ref->vals[k];
    if (t.code == kDLFloat && t.bits == 32)
      values[i].f32 = (float)v.f;
    else if (t.code == kDLFloat)
      values[i].f64 = v.f;
    else if (t.bits == 64)
      values[i].i64 = v.i;
    else
      values[i].i32 = (int32_t)v.i;
    scalars[i] = &values[i];
  }
  te_status st = te_module_call(m, "k", w->nt, args, w->nparams, scalars);
  if (st != TE_OK)
    fail_case(c, "a built kernel fails on valid buffers", te_last_error(c->ctx));
  for (int i = w->nin; i < w->nt; i++) {
    fz_buf *b = fz_ref_buffer(ref, w->tensors[i]);
    if (!fz_ref_compute(ref, b))
      return; /* the definition itself is undefined there */
    double got, want;
    int64_t at = fz_buf_mismatch(ref, b, &got, &want);
    if (at >= 0) {
      char detail[256];
      snprintf(detail, sizeof detail, "workload %s, output %s, element %lld: got %.9g, want %.9g",
               FZ_WORKLOADS[w->index].name, te_tensor_name(w->tensors[i]), (long long)at, got,
               want);
      fail_case(c, "a kernel's output differs from the reference", detail);
    }
  }
}

/* The trace replayed on a fresh schedule lowers to the same IR. */
static void check_replay(fz_case *c) {
  fz_workload *w = &c->w;
  char *trace = te_schedule_trace(c->s);
  te_schedule *s2 = te_schedule_new(c->ctx, w->nout, w->outs);
  if (!trace || te_schedule_replay(s2, trace) != TE_OK)
    fz_fail(NAME, "the schedule's trace does not replay", trace, te_last_error(c->ctx));
  char *a = te_lower_text(c->s, w->nt, w->tensors, w->nparams, w->params);
  te_clear_error(c->ctx);
  char *b = te_lower_text(s2, w->nt, w->tensors, w->nparams, w->params);
  te_clear_error(c->ctx);
  if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
    fz_fail(NAME, "a schedule and its replayed trace lower differently", trace,
            a ? a : "(refused)");
  te_free(a);
  te_free(b);
  te_free(trace);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_case c = {.in = {data, size, 0}};
  c.ctx = te_ctx_new();
  fz_workload_parse(c.ctx, (int)fz_below(&c.in, FZ_NWORKLOADS), &c.w, NAME);
  te_set_num_threads(1 + (int)fz_below(&c.in, 4));
  fz_ref ref;
  if (!make_reference(&c, &ref)) {
    fz_ref_free(&ref);
    te_ctx_free(c.ctx);
    return 0;
  }
  c.s = te_schedule_new(c.ctx, c.w.nout, c.w.outs);
  for (int k = 0; k < 24 && !fz_done(&c.in); k++)
    random_step(&c);

  te_target *host = te_target_parse(c.ctx, "llvm");
  te_module *m = NULL;
  te_status st = te_build(c.s, "k", c.w.nt, c.w.tensors, c.w.nparams, c.w.params, host, &m);
  if (st == TE_OK) {
    run_and_compare(&c, &ref, m);
  } else {
    if (fz_is_bug(st))
      fail_case(&c, "te_build returns a bug status", te_last_error(c.ctx));
    if (!*te_last_error(c.ctx))
      fail_case(&c, "te_build refuses without a message", "");
    te_clear_error(c.ctx);
  }
  if (getenv("TE_FUZZ_VERBOSE")) { /* the steps tried, the trace of those accepted */
    char *t = te_schedule_trace(c.s);
    fprintf(stderr, "%s: workload %s\n%s--- trace:\n%sbuild: %s\n", NAME,
            FZ_WORKLOADS[c.w.index].name, c.log, t ? t : "", te_status_str(st));
    te_free(t);
  }
  check_replay(&c);
  fz_ref_free(&ref);
  te_ctx_free(c.ctx);
  te_set_num_threads(0);
  return 0;
}
