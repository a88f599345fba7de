/* knobs.c — schedule templates: the te_knob_* calls a template makes, the task of a template
 * (its knobs registered by a first run) and a candidate applied by running the template again.
 *
 * A template's knob k becomes choice knob k of the task's one sketch, "user": the candidate's
 * value is the index of the chosen candidate (choice, value, factor or order), so sampling,
 * mutation (one knob redrawn) and crossover (knob by knob) are space.c's for choices. The first
 * run (te_knobs.reg set) registers every knob it names and takes candidate 0 of each; later runs
 * look each name up and check that the call is the same knob (kind, candidates), used once, and
 * that every registered knob was used: the set of knobs must not depend on knob values.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"

_Static_assert(TE_TUNE_MAX_KNOBS <= AT_MAX_KNOBS && TE_TUNE_MAX_KNOBS <= AT_MAX_VALS,
               "a template's knobs must fit a sketch and a candidate");

struct te_knobs {
  te_schedule *s;
  at_task *reg;     /* the first run: knobs are registered here */
  const at_task *t; /* the registered knobs */
  const at_cand *c; /* later runs: the candidate's indices */
  bool used[TE_TUNE_MAX_KNOBS];
  te_status status; /* the first knob call that failed */
};

static const char *const kind_api[] = {"te_knob_choice", "te_knob_int", "te_knob_split",
                                       "te_knob_reorder"};

static te_status fail(te_knobs *k, te_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ir_verror(k->s->ctx, st, fmt, ap);
  va_end(ap);
  if (k->status == TE_OK)
    k->status = st;
  return st;
}

static bool name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > TE_TUNE_MAX_KNOB_NAME)
    return false;
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '_' || ch == '.' || ch == '-'))
      return false;
  }
  return true;
}

static int find(const at_task *t, const char *name) {
  for (int i = 0; i < t->sketch[0].nknob; i++)
    if (strcmp(t->uknob[i].name, name) == 0)
      return i;
  return -1;
}

/* The arguments every knob has: name, count, values (distinct). */
static te_status check_common(te_knobs *k, at_uknob_kind kind, const char *name, int n,
                              const int64_t *vals) {
  const char *api = kind_api[kind];
  const char *what = kind == AT_UK_CHOICE    ? "nchoices"
                     : kind == AT_UK_REORDER ? "norders"
                                             : "ncand";
  if (!name)
    return fail(k, TE_ERR_INVALID_ARG, "%s: the knob name is NULL", api);
  if (!name_ok(name))
    return fail(k, TE_ERR_INVALID_ARG,
                "%s: knob '%.64s': a name is 1 to %d letters, digits, '_', '.' or '-'", api, name,
                TE_TUNE_MAX_KNOB_NAME);
  if (n < 1 || n > TE_TUNE_MAX_KNOB_CANDS)
    return fail(k, TE_ERR_INVALID_ARG, "%s: knob '%s': %s must be in [1, %d] (got %d)", api, name,
                what, TE_TUNE_MAX_KNOB_CANDS, n);
  if (kind != AT_UK_INT && kind != AT_UK_SPLIT)
    return TE_OK;
  if (!vals)
    return fail(k, TE_ERR_INVALID_ARG, "%s: knob '%s': the candidates are NULL", api, name);
  for (int i = 0; i < n; i++) {
    if (kind == AT_UK_SPLIT && vals[i] <= 0)
      return fail(k, TE_ERR_INVALID_ARG, "%s: knob '%s': factor %d must be > 0 (got %lld)", api,
                  name, i, (long long)vals[i]);
    for (int j = 0; j < i; j++)
      if (vals[j] == vals[i])
        return fail(k, TE_ERR_INVALID_ARG,
                    "%s: knob '%s': candidates must be distinct (%lld at %d and %d)", api, name,
                    (long long)vals[i], j, i);
  }
  return TE_OK;
}

static te_status register_knob(te_knobs *k, at_uknob_kind kind, const char *name, int n, int width,
                               const int64_t *vals, int *idx) {
  at_task *t = k->reg;
  at_sketch *sk = &t->sketch[0];
  if (sk->nknob >= TE_TUNE_MAX_KNOBS)
    return fail(k, TE_ERR_INVALID_ARG, "%s: knob '%s': a template has at most %d knobs",
                kind_api[kind], name, TE_TUNE_MAX_KNOBS);
  int i = sk->nknob++;
  at_uknob *u = &t->uknob[i];
  memset(u, 0, sizeof *u);
  snprintf(u->name, sizeof u->name, "%s", name);
  u->kind = kind;
  u->n = n;
  u->width = width;
  if (vals)
    memcpy(u->vals, vals, sizeof(int64_t) * (size_t)n);
  at_knob *kn = &sk->knob[i];
  memset(kn, 0, sizeof *kn);
  kn->kind = AT_KNOB_CHOICE;
  kn->role = AT_ROLE_USER;
  kn->stage = -1;
  kn->nlevels = 1;
  kn->nchoices = n;
  kn->offset = sk->nvals++;
  k->used[i] = true;
  *idx = 0;
  return TE_OK;
}

static bool same_knob(const at_uknob *u, at_uknob_kind kind, int n, int width,
                      const int64_t *vals) {
  if (u->kind != kind || u->n != n || u->width != width)
    return false;
  return !vals || memcmp(u->vals, vals, sizeof(int64_t) * (size_t)n) == 0;
}

/* The index of the candidate this run takes for the knob (registering it in the first run). */
static te_status knob_index(te_knobs *k, at_uknob_kind kind, const char *name, int n, int width,
                            const int64_t *vals, int *idx) {
  te_status st = check_common(k, kind, name, n, vals);
  if (st != TE_OK)
    return st;
  const char *api = kind_api[kind];
  int i = find(k->t, name);
  if (i >= 0 && k->used[i])
    return fail(k, TE_ERR_INVALID_ARG,
                "%s: knob '%s' is named twice in one run of the template: knob names must be "
                "unique",
                api, name);
  if (k->reg)
    return register_knob(k, kind, name, n, width, vals, idx);
  if (i < 0)
    return fail(k, TE_ERR_INVALID_ARG,
                "%s: knob '%s' was not made by the template's first run: the set of knobs must "
                "not depend on knob values",
                api, name);
  const at_uknob *u = &k->t->uknob[i];
  if (!same_knob(u, kind, n, width, vals))
    return fail(k, TE_ERR_INVALID_ARG,
                "%s: knob '%s' differs from the template's first run (a %s of %d): the set of "
                "knobs must not depend on knob values",
                api, name, kind_api[u->kind], u->n);
  k->used[i] = true;
  int64_t v = k->c->v[k->t->sketch[0].knob[i].offset];
  if (v < 0 || v >= n)
    return fail(k, TE_ERR_INTERNAL, "%s: knob '%s': candidate index %lld out of range", api, name,
                (long long)v);
  *idx = (int)v;
  return TE_OK;
}

/* ---------------------------------------------------------------- the knob calls */

te_status te_knob_choice(te_knobs *k, const char *name, int nchoices, int *out) {
  if (!k)
    return TE_ERR_INVALID_ARG;
  if (!out)
    return fail(k, TE_ERR_INVALID_ARG, "te_knob_choice: knob '%s': out is NULL",
                name ? name : "(null)");
  int idx;
  te_status st = knob_index(k, AT_UK_CHOICE, name, nchoices, 0, NULL, &idx);
  if (st == TE_OK)
    *out = idx;
  return st;
}

te_status te_knob_int(te_knobs *k, const char *name, int ncand, const int64_t *cands,
                      int64_t *out) {
  if (!k)
    return TE_ERR_INVALID_ARG;
  if (!out)
    return fail(k, TE_ERR_INVALID_ARG, "te_knob_int: knob '%s': out is NULL",
                name ? name : "(null)");
  int idx;
  te_status st = knob_index(k, AT_UK_INT, name, ncand, 0, cands, &idx);
  if (st == TE_OK)
    *out = cands[idx];
  return st;
}

te_status te_knob_split(te_knobs *k, te_stage *st, te_iter *it, const char *name, int ncand,
                        const int64_t *factors, te_iter **outer, te_iter **inner) {
  if (!k)
    return TE_ERR_INVALID_ARG;
  if (!st || !it)
    return fail(k, TE_ERR_INVALID_ARG, "te_knob_split: knob '%s': the %s is NULL",
                name ? name : "(null)", st ? "iter" : "stage");
  int idx;
  te_status s = knob_index(k, AT_UK_SPLIT, name, ncand, 0, factors, &idx);
  if (s != TE_OK)
    return s;
  s = te_split(st, it, factors[idx], outer, inner);
  if (s != TE_OK && k->status == TE_OK)
    k->status = s;
  return s;
}

/* Each row of orders must hold the loops of the first row, each once. */
static te_status check_orders(te_knobs *k, const char *name, int norders, int n,
                              te_iter *const *orders) {
  for (int r = 0; r < norders; r++)
    for (int j = 0; j < n; j++) {
      te_iter *x = orders[(size_t)r * (size_t)n + (size_t)j];
      bool in_first = false, repeated = false;
      for (int m = 0; m < n; m++)
        in_first |= orders[m] == x;
      for (int m = 0; m < j; m++)
        repeated |= orders[(size_t)r * (size_t)n + (size_t)m] == x;
      if (!x || !in_first || repeated)
        return fail(k, TE_ERR_INVALID_ARG,
                    "te_knob_reorder: knob '%s': order %d is not a permutation of order 0's "
                    "loops (position %d %s)",
                    name, r, j,
                    !x         ? "is NULL"
                    : repeated ? "repeats a loop"
                               : "is not in order 0");
    }
  return TE_OK;
}

te_status te_knob_reorder(te_knobs *k, te_stage *st, const char *name, int norders, int n,
                          te_iter *const *orders) {
  if (!k)
    return TE_ERR_INVALID_ARG;
  const char *nm = name ? name : "(null)";
  if (!st || !orders)
    return fail(k, TE_ERR_INVALID_ARG, "te_knob_reorder: knob '%s': the %s is NULL", nm,
                st ? "orders array" : "stage");
  if (n < 1)
    return fail(k, TE_ERR_INVALID_ARG, "te_knob_reorder: knob '%s': n must be >= 1 (got %d)", nm,
                n);
  int idx;
  te_status s = knob_index(k, AT_UK_REORDER, name, norders, n, NULL, &idx);
  if (s == TE_OK)
    s = check_orders(k, name, norders, n, orders);
  if (s != TE_OK)
    return s;
  s = te_reorder(st, n, orders + (size_t)idx * (size_t)n);
  if (s != TE_OK && k->status == TE_OK)
    k->status = s;
  return s;
}

/* ---------------------------------------------------------------- stages and tensors by name */

/* The schedule and a name are given (else an error on the schedule's context naming fn). */
static bool lookup_args(te_schedule *s, const char *fn, const char *name) {
  if (s && !name)
    ir_error(s->ctx, TE_ERR_INVALID_ARG, "%s: name is NULL", fn);
  return s && name;
}

te_stage *te_tune_stage(te_schedule *s, const char *name) {
  if (!lookup_args(s, "te_tune_stage", name))
    return NULL;
  te_stage *st = sch_stage_by_name(s, name);
  if (!st)
    ir_error(s->ctx, TE_ERR_NOT_FOUND, "te_tune_stage: the schedule has no stage '%s'", name);
  return st;
}

te_tensor *te_tune_tensor(te_schedule *s, const char *name) {
  if (!lookup_args(s, "te_tune_tensor", name))
    return NULL;
  for (int i = 0; i < s->nstage; i++) {
    const sch_op *op = s->stages[i]->op;
    for (int k = 0; k < op->nout; k++)
      if (strcmp(te_tensor_name(op->outputs[k]), name) == 0)
        return op->outputs[k];
  }
  te_tensor **in; /* placeholders have no stage: the schedule's inputs */
  int nin = sch_schedule_inputs(s, &in);
  for (int i = 0; i < nin; i++)
    if (strcmp(te_tensor_name(in[i]), name) == 0)
      return in[i];
  ir_error(s->ctx, TE_ERR_NOT_FOUND, "te_tune_tensor: the schedule has no tensor '%s'", name);
  return NULL;
}

/* ---------------------------------------------------------------- running the template */

/* One run of the template on s; a knob rule broken, or an error the run leaves on the context,
   fails it even when the template returns TE_OK. */
static te_status run(te_knobs *k, const at_task *t) {
  te_ctx *ctx = k->s->ctx;
  bool clean = te_last_status(ctx) == TE_OK;
  te_status st = t->tmpl(k->s, k, t->tmpl_user);
  if (st == TE_OK && k->status != TE_OK)
    st = k->status;
  if (st == TE_OK && clean && te_last_status(ctx) != TE_OK)
    st = te_last_status(ctx);
  for (int i = 0; st == TE_OK && i < t->sketch[0].nknob; i++)
    if (!k->used[i])
      st = fail(k, TE_ERR_INVALID_ARG,
                "%s: knob '%s' was not used by this run of the template: the set of knobs must "
                "not depend on knob values",
                kind_api[t->uknob[i].kind], t->uknob[i].name);
  return st;
}

te_status at_task_from_template(const at_workload *wl, te_tune_template_fn fn, void *user,
                                at_task *t) {
  te_ctx *ctx = wl->ctx;
  memset(t, 0, sizeof *t);
  t->tiled = t->fuse_consumer = -1;
  t->nsketch = 1;
  t->sketch[0].kind = AT_SK_USER;
  t->sketch[0].vec_axis = -1;
  snprintf(t->sketch[0].name, sizeof t->sketch[0].name, "user");
  t->tmpl = fn;
  t->tmpl_user = user;
  te_schedule *s = te_schedule_new(ctx, wl->nout, wl->outs);
  if (!s)
    return te_last_status(ctx);
  te_knobs k = {.s = s, .reg = t, .t = t};
  te_status st = run(&k, t);
  if (st != TE_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", te_last_error(ctx));
    te_clear_error(ctx);
    ir_error(ctx, st,
             "te_tune: the schedule template failed on its first run (the first "
             "candidate of every knob): %s",
             msg[0] ? msg : te_status_str(st));
  }
  return st;
}

te_status at_user_apply(const at_task *t, const at_cand *c, te_schedule *s) {
  if (!t->tmpl)
    return ir_error(s->ctx, TE_ERR_INTERNAL, "te_tune: the task has no schedule template");
  te_knobs k = {.s = s, .t = t, .c = c};
  return run(&k, t);
}
