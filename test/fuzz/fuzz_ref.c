/* fuzz_ref.c — reference values of a computation, by interpretation (see fuzz_ref.h). */
#include "fuzz_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/sch.h"

enum { FZ_MAX_ELEMS = 1 << 16 };

static uint64_t next(fz_ref *r) {
  r->rng = r->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return r->rng >> 11;
}

static bool is_float(te_dtype t) { return t.code == kDLFloat; }

/* ---------------------------------------------------------------- sizes and parameters */

static void add_var(fz_ref *r, te_expr *v) {
  for (int i = 0; i < r->nvars; i++)
    if (r->vars[i] == v)
      return;
  if (r->nvars < 16)
    r->vars[r->nvars++] = v;
}

static void find_sizes(fz_ref *r, te_expr *e) {
  if (!e)
    return;
  if (e->kind == IR_VAR && e->u.var.kind == IR_VAR_INDEX)
    add_var(r, e);
  for (int i = 0; i < e->nargs; i++)
    find_sizes(r, e->args[i]);
}

static void find_placeholders(fz_ref *r, te_tensor *t, int depth) {
  if (depth > 64)
    return;
  if (t->op->kind == SCH_OP_PLACEHOLDER) {
    for (int d = 0; d < t->ndim; d++)
      find_sizes(r, t->shape[d]);
    return;
  }
  te_tensor **in;
  int n = sch_op_inputs(t->op, &in);
  for (int i = 0; i < n; i++)
    find_placeholders(r, in[i], depth + 1);
}

void fz_ref_init(fz_ref *r, int nout, te_tensor *const outs[], uint64_t seed) {
  memset(r, 0, sizeof *r);
  r->rng = seed * 2654435761ULL + 1;
  for (int i = 0; i < nout; i++)
    find_placeholders(r, outs[i], 0);
  for (int i = 0; i < r->nvars; i++)
    r->vals[i].i = 1;
}

int fz_ref_nsizes(const fz_ref *r) { return r->nvars; }

void fz_ref_set_size(fz_ref *r, int i, int64_t value) {
  if (i >= 0 && i < r->nvars)
    r->vals[i].i = value;
}

void fz_ref_set_param(fz_ref *r, te_expr *param, ir_eval_val value) {
  add_var(r, param);
  for (int i = 0; i < r->nvars; i++)
    if (r->vars[i] == param)
      r->vals[i] = value;
}

/* ---------------------------------------------------------------- buffers */

static void fill(fz_ref *r, fz_buf *b) {
  te_dtype t = b->dtype;
  for (int64_t i = 0; i < b->numel; i++) {
    uint64_t u = next(r);
    if (is_float(t)) { /* [-2, -0.1] U [0.1, 2], 24 random bits: ties are rare */
      double v = (0.1 + 1.9 * (double)(u & 0xffffff) / 16777216.0) * ((u >> 24) & 1 ? -1 : 1);
      b->ref[i].f = t.bits == 32 ? (double)(float)v : v;
    } else if (t.bits == 1) {
      b->ref[i].i = (int64_t)(u & 1);
    } else if (t.code == kDLUInt) {
      b->ref[i].i = 1 + (int64_t)(u % 9);
    } else {
      b->ref[i].i = (1 + (int64_t)(u % 9)) * ((u >> 8) & 1 ? -1 : 1);
    }
  }
  b->computed = true;
}

static size_t elem_bytes(te_dtype t) { return t.bits == 1 ? 1 : t.bits / 8; }

fz_buf *fz_ref_buffer(fz_ref *r, te_tensor *t) {
  for (int i = 0; i < r->nbuf; i++)
    if (r->buf[i].tensor == t)
      return &r->buf[i];
  if (r->nbuf == 32)
    return NULL;
  fz_buf *b = &r->buf[r->nbuf];
  memset(b, 0, sizeof *b);
  b->tensor = t;
  b->dtype = t->dtype;
  b->ndim = t->ndim;
  b->numel = 1;
  ir_eval_env env = {.n = r->nvars, .vars = r->vars, .vals = r->vals};
  for (int d = 0; d < t->ndim; d++) {
    if (!ir_eval_i64(&env, t->shape[d], &b->shape[d]) || b->shape[d] < 1 ||
        b->shape[d] > FZ_MAX_ELEMS || (b->numel *= b->shape[d]) > FZ_MAX_ELEMS)
      return NULL;
  }
  b->ref = calloc((size_t)b->numel, sizeof *b->ref);
  b->data = calloc((size_t)b->numel, elem_bytes(b->dtype));
  if (!b->ref || !b->data) {
    free(b->ref);
    free(b->data);
    return NULL;
  }
  b->dl = (DLTensor){.data = b->data,
                     .device = {kDLCPU, 0},
                     .ndim = b->ndim,
                     .dtype = b->dtype,
                     .shape = b->shape};
  r->nbuf++;
  if (t->op->kind == SCH_OP_PLACEHOLDER)
    fill(r, b);
  return b;
}

/* ---------------------------------------------------------------- the interpreter */

static bool read_tensor(void *user, te_tensor *t, int n, const int64_t idx[], ir_eval_val *out) {
  fz_ref *r = user;
  fz_buf *b = fz_ref_buffer(r, t);
  if (!b || n != b->ndim || !fz_ref_compute(r, b))
    return false;
  int64_t flat = 0;
  for (int d = 0; d < n; d++) {
    if (idx[d] < 0 || idx[d] >= b->shape[d])
      return false; /* out of bounds: undefined */
    flat = flat * b->shape[d] + idx[d];
  }
  *out = b->ref[flat];
  return true;
}

static int64_t reduce_length(fz_ref *r, const sch_op *op) {
  int64_t len = 1;
  ir_eval_env env = {.n = r->nvars, .vars = r->vars, .vals = r->vals};
  for (int k = 0; k < op->nreduce; k++) {
    int64_t ext = 1;
    if (ir_eval_i64(&env, op->reduce_axes[k]->u.var.dom_extent, &ext) && ext > 0)
      len *= ext;
  }
  return len;
}

bool fz_ref_compute(fz_ref *r, fz_buf *b) {
  if (b->computed)
    return true;
  if (b->computing)
    return false;
  b->computing = true;
  const sch_op *op = b->tensor->op;
  te_expr *body = op->body[b->tensor->value_index];
  int64_t len = reduce_length(r, op);
  if (len > r->max_reduce)
    r->max_reduce = len;
  te_expr *vars[16 + TE_MAX_DIMS];
  ir_eval_val vals[16 + TE_MAX_DIMS];
  memcpy(vars, r->vars, sizeof(te_expr *) * (size_t)r->nvars);
  memcpy(vals, r->vals, sizeof(ir_eval_val) * (size_t)r->nvars);
  ir_eval_env env = {
      .n = r->nvars + op->ndim, .vars = vars, .vals = vals, .access = read_tensor, .user = r};
  bool ok = true;
  for (int64_t flat = 0; flat < b->numel && ok; flat++) {
    int64_t rest = flat;
    for (int d = op->ndim - 1; d >= 0; d--) {
      vars[r->nvars + d] = op->axes[d];
      vals[r->nvars + d].i = rest % b->shape[d];
      rest /= b->shape[d];
    }
    ok = ir_eval(&env, body, 0, &b->ref[flat]);
  }
  b->computing = false;
  b->computed = ok;
  return ok;
}

/* ---------------------------------------------------------------- kernel layout */

void fz_buf_upload(fz_buf *b) {
  te_dtype t = b->dtype;
  for (int64_t i = 0; i < b->numel; i++) {
    ir_eval_val v = b->ref[i];
    if (is_float(t)) {
      if (t.bits == 32)
        ((float *)b->data)[i] = (float)v.f;
      else
        ((double *)b->data)[i] = v.f;
    } else {
      uint64_t u = (uint64_t)v.i;
      switch (elem_bytes(t)) {
      case 1:
        ((uint8_t *)b->data)[i] = (uint8_t)u;
        break;
      case 2:
        ((uint16_t *)b->data)[i] = (uint16_t)u;
        break;
      case 4:
        ((uint32_t *)b->data)[i] = (uint32_t)u;
        break;
      default:
        ((uint64_t *)b->data)[i] = u;
        break;
      }
    }
  }
}

void fz_buf_poison(fz_buf *b) {
  if (!is_float(b->dtype)) {
    memset(b->data, 0x5A, (size_t)b->numel * elem_bytes(b->dtype));
    return;
  }
  for (int64_t i = 0; i < b->numel; i++) {
    if (b->dtype.bits == 32)
      ((float *)b->data)[i] = NAN;
    else
      ((double *)b->data)[i] = NAN;
  }
}

static double got_value(const fz_buf *b, int64_t i, int64_t *as_int) {
  te_dtype t = b->dtype;
  if (is_float(t))
    return t.bits == 32 ? ((const float *)b->data)[i] : ((const double *)b->data)[i];
  uint64_t u;
  switch (elem_bytes(t)) {
  case 1:
    u = ((const uint8_t *)b->data)[i];
    break;
  case 2:
    u = ((const uint16_t *)b->data)[i];
    break;
  case 4:
    u = ((const uint32_t *)b->data)[i];
    break;
  default:
    u = ((const uint64_t *)b->data)[i];
    break;
  }
  int bits = t.bits == 1 ? 8 : t.bits;
  if (t.code == kDLInt && bits < 64 && ((u >> (bits - 1)) & 1))
    u |= ~(((uint64_t)1 << bits) - 1);
  *as_int = (int64_t)u;
  return (double)*as_int;
}

int64_t fz_buf_mismatch(const fz_ref *r, const fz_buf *b, double *got, double *want) {
  te_dtype t = b->dtype;
  double maxabs = 0;
  if (is_float(t))
    for (int64_t i = 0; i < b->numel; i++)
      if (isfinite(b->ref[i].f) && fabs(b->ref[i].f) > maxabs)
        maxabs = fabs(b->ref[i].f);
  double eps = t.bits == 32 ? 0x1p-23 : 0x1p-52;
  double tol = eps * 16 * (double)(r->max_reduce + 2) * (maxabs + 1);
  for (int64_t i = 0; i < b->numel; i++) {
    int64_t gi = 0;
    *got = got_value(b, i, &gi);
    if (is_float(t)) {
      *want = b->ref[i].f;
      bool same = isnan(*want)   ? isnan(*got)
                  : isinf(*want) ? *got == *want
                                 : fabs(*got - *want) <= tol;
      if (!same)
        return i;
    } else {
      int64_t wi = t.bits == 1 ? (b->ref[i].i != 0) : b->ref[i].i;
      *want = (double)wi;
      if (gi != wi)
        return i;
    }
  }
  return -1;
}

void fz_ref_free(fz_ref *r) {
  for (int i = 0; i < r->nbuf; i++) {
    free(r->buf[i].ref);
    free(r->buf[i].data);
  }
  r->nbuf = 0;
}
