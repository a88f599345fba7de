/* search.c — evolutionary search guided by the cost model.
 *
 * Each round (at_search_propose): a population is drawn (mutants of the best measured
 * candidates and fresh samples of every sketch), then for a few generations parents picked by
 * tournament on the model's score make children (mutation, sometimes crossover first) and the
 * best of parents and children survive. The batch is the best-scored candidates never measured,
 * plus a fraction epsilon of fresh random ones (exploration, and what keeps a wrong model from
 * locking the search in). Until the model has data (or with use_model off) the whole batch is
 * random. The first round starts with the points derived from the target (seed_points.c: the hand
 * SGEMM kernel's register tile and blocks for this machine's registers and caches), and every
 * round has neighbours of the best measured candidates (one knob one step, at_cand_neighbour);
 * until every sketch has had a candidate proposed, each round also proposes one of each sketch
 * not yet tried (uniform sampling over 5 or 6 sketches left a 16-trial int8 search without a
 * single vpdpbusd candidate in about one run in 20); a search without a model (--no-model)
 * stays random: measurements never steer it. Everything random
 * comes from one seeded generator and the order of the work never depends on timing, so the same
 * seed and the same measurements give the same candidates. Candidates are deduplicated by their
 * trace: two knob settings that give the same schedule are one candidate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"

/* The share of random candidates drawn shaped like the hand SGEMM kernel (space_shaped.c):
   a quarter of the first round's 16, so its packed register-tile layouts are measured from the
   start rather than 3 times in 64 trials; the rest stay uniform, so nothing else is lost. */
#define AT_SHAPED_SHARE 0.25

/* The elite's best few whose neighbours (one knob one step, at_cand_neighbour) make part of
   every round: a quarter of the batch before the model is trained, a quarter of the initial
   population's mutants after, so the search walks down from the derived points (and the best
   it finds) rather than only jumping around them. */
enum { AT_NEIGHBOUR_TOP = 4 };
#define AT_NEIGHBOUR_SHARE 0.25

enum { MAX_ELITE = 32 };

typedef struct elite {
  at_cand c;
  double thr;
} elite;

struct at_search {
  at_task task;
  at_search_opts o;
  at_rng rng;
  at_model *model;
  uint64_t *seen; /* open addressing set of trace hashes (0 = empty) */
  size_t nseen, cap;
  elite el[MAX_ELITE];
  int nel;
  bool warned; /* a schedule template failed for a candidate (said once) */
  int shapeable[AT_MAX_SKETCHES], nshapeable; /* sketches that take shaped samples */
  bool seeded;         /* the first round's derived points (seed_points.c) were proposed */
  at_target_caps caps; /* the target's registers and caches, for the shaped samples */
  bool have_caps;
  bool covered[AT_MAX_SKETCHES]; /* a candidate of this sketch has been proposed */
};

/* One evaluated individual of a round. */
typedef struct ind {
  at_cand c;
  char *trace;
  uint64_t h;
  float feat[AT_NFEAT];
  float score;
} ind;

/* ---------------------------------------------------------------- the seen set */

static uint64_t trace_hash(const char *t) {
  uint64_t h = ir_str_hash(t);
  return h ? h : 1;
}

static bool set_has(const at_search *s, uint64_t h) {
  if (!s->cap)
    return false;
  for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    if (s->seen[i] == h)
      return true;
    if (!s->seen[i])
      return false;
  }
}

static void set_add(at_search *s, uint64_t h) {
  if (set_has(s, h))
    return;
  if (2 * (s->nseen + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    uint64_t *n = ir_calloc(NULL, cap, sizeof *n), *old = s->seen;
    if (!n)
      return;
    size_t oldcap = s->cap;
    s->seen = n;
    s->cap = cap;
    s->nseen = 0;
    for (size_t i = 0; i < oldcap; i++)
      if (old[i])
        set_add(s, old[i]);
    free(old);
  }
  size_t i = h & (s->cap - 1);
  while (s->seen[i])
    i = (i + 1) & (s->cap - 1);
  s->seen[i] = h;
  s->nseen++;
}

/* ---------------------------------------------------------------- life cycle */

at_search *at_search_new(const at_task *t, const at_search_opts *o) {
  at_search *s = ir_calloc(NULL, 1, sizeof *s);
  if (!s)
    return NULL;
  s->task = *t;
  s->o = *o;
  at_rng_seed(&s->rng, o->seed);
  s->model = o->use_model ? at_model_new(o->seed) : NULL;
  for (int k = 0; k < t->nsketch; k++)
    if (at_sketch_shapeable(t, k) && !o->no_shaped)
      s->shapeable[s->nshapeable++] = k;
  return s;
}

void at_search_free(at_search *s) {
  if (!s)
    return;
  at_model_free(s->model);
  free(s->seen);
  free(s);
}

bool at_search_seen(const at_search *s, const char *trace) { return set_has(s, trace_hash(trace)); }

void at_search_observe(at_search *s, const at_cand *c, const char *trace, const float *feat,
                       double thr) {
  set_add(s, trace_hash(trace));
  if (feat && s->model)
    at_model_add(s->model, feat, thr);
  if (!c || !(thr > 0) || !at_cand_valid(&s->task, c))
    return;
  int pos = s->nel < MAX_ELITE ? s->nel++ : MAX_ELITE - 1;
  if (pos == MAX_ELITE - 1 && s->nel == MAX_ELITE && s->el[pos].thr >= thr)
    return;
  while (pos > 0 && s->el[pos - 1].thr < thr) {
    s->el[pos] = s->el[pos - 1];
    pos--;
  }
  s->el[pos] = (elite){*c, thr};
}

bool at_search_observe_prior(at_search *s, const float *feat, double relative) {
  return s->model && at_model_add_prior(s->model, feat, relative);
}

void at_search_retrain(at_search *s) {
  if (s->model)
    at_model_train(s->model);
}

void at_proposal_free(at_proposal *p) {
  free(p->trace);
  p->trace = NULL;
}

/* ---------------------------------------------------------------- evaluation */

/* A template that fails for a candidate makes it invalid; the first failure is said, since a
   template that breaks a knob rule only for some values fails nowhere else. */
static void warn_template(at_search *s, const at_workload *wl, const at_cand *c, te_status st) {
  if (s->warned || s->task.sketch[c->sketch].kind != AT_SK_USER)
    return;
  s->warned = true;
  char *p = at_cand_params_str(&s->task, c);
  fprintf(stderr,
          "te-tune: warning: the schedule template failed for the candidate '%s' (such "
          "candidates are skipped): %s\n",
          p ? p : "?", te_last_error(wl->ctx)[0] ? te_last_error(wl->ctx) : te_status_str(st));
  free(p);
}

static bool evaluate(at_search *s, const at_workload *wl, const te_target *tgt, ind *x) {
  te_schedule *sch = te_schedule_new(wl->ctx, wl->nout, wl->outs);
  te_status ast = sch ? at_cand_apply(&s->task, &x->c, sch) : TE_ERR_NOMEM;
  bool ok = ast == TE_OK;
  if (sch && !ok)
    warn_template(s, wl, &x->c, ast);
  x->trace = ok ? te_schedule_trace(sch) : NULL;
  ok = x->trace && at_features(wl, sch, tgt, x->feat) == TE_OK;
  te_clear_error(wl->ctx);
  if (!ok) {
    te_free(x->trace);
    x->trace = NULL;
    return false;
  }
  x->h = trace_hash(x->trace);
  x->score = 0;
  return true;
}

static void ind_free(ind *x) {
  te_free(x->trace);
  x->trace = NULL;
}

static bool in_list(const ind *xs, int n, uint64_t h) {
  for (int i = 0; i < n; i++)
    if (xs[i].h == h)
      return true;
  return false;
}

/* A random candidate: a shaped one (space_shaped.c) with probability AT_SHAPED_SHARE where the
   task has a sketch that takes them, else a sketch drawn uniformly and its knobs. */
static void sample(at_search *s, at_cand *c) {
  const at_task *t = &s->task;
  if (s->nshapeable > 0 && at_rng_unit(&s->rng) < AT_SHAPED_SHARE) {
    int k = s->shapeable[at_rng_int(&s->rng, s->nshapeable)];
    if (at_cand_sample_shaped(t, s->have_caps ? &s->caps : NULL, k, &s->rng, c))
      return;
  }
  at_cand_sample(t, at_rng_int(&s->rng, t->nsketch), &s->rng, c);
}

/* Fresh random individuals, unseen and not in avoid[0..navoid), appended to out. */
static int random_fill(at_search *s, const at_workload *wl, const te_target *tgt, int want,
                       ind *out, int n, const ind *avoid, int navoid) {
  for (int tries = 0; n < want && tries < 20 * want + 50; tries++) {
    ind x = {0};
    sample(s, &x.c);
    if (!evaluate(s, wl, tgt, &x))
      continue;
    if (set_has(s, x.h) || in_list(out, n, x.h) || in_list(avoid, navoid, x.h)) {
      ind_free(&x);
      continue;
    }
    out[n++] = x;
  }
  return n;
}

static void score(at_search *s, ind *xs, int n) {
  float *f = ir_malloc(NULL, sizeof(float) * AT_NFEAT * (size_t)(n ? n : 1));
  float *out = ir_malloc(NULL, sizeof(float) * (size_t)(n ? n : 1));
  if (f && out) {
    for (int i = 0; i < n; i++)
      memcpy(f + (size_t)i * AT_NFEAT, xs[i].feat, sizeof xs[i].feat);
    if (at_model_predict(s->model, n, f, out))
      for (int i = 0; i < n; i++)
        xs[i].score = out[i];
  }
  free(f);
  free(out);
}

static int by_score(const void *a, const void *b) {
  float x = ((const ind *)a)->score, y = ((const ind *)b)->score;
  return (x < y) - (x > y);
}

/* ---------------------------------------------------------------- evolution */

static int tournament(at_search *s, const ind *pop, int n) {
  int a = at_rng_int(&s->rng, n), b = at_rng_int(&s->rng, n);
  return pop[a].score >= pop[b].score ? a : b;
}

/* An elite candidate to mutate: of a sketch drawn at random when the elite holds some of it
   (so that each schedule structure's best keeps being explored, not only the best structure's),
   else any. */
static const at_cand *pick_elite(at_search *s) {
  int k = at_rng_int(&s->rng, s->task.nsketch), of[MAX_ELITE], m = 0;
  for (int i = 0; i < s->nel; i++)
    if (s->el[i].c.sketch == k)
      of[m++] = i;
  return &s->el[m ? of[at_rng_int(&s->rng, m)] : at_rng_int(&s->rng, s->nel)].c;
}

/* A neighbour of one of the best AT_NEIGHBOUR_TOP of a sketch drawn at random (the elite's
   best of any sketch when it holds none of that one): each schedule structure's best is walked
   from, not only the best structure's, so a sketch that won few early trials (a dot sketch) is
   still explored. */
static void near_best(at_search *s, at_cand *c) {
  int k = at_rng_int(&s->rng, s->task.nsketch), of[AT_NEIGHBOUR_TOP], m = 0;
  for (int i = 0; i < s->nel && m < AT_NEIGHBOUR_TOP; i++) /* the elite is sorted, best first */
    if (s->el[i].c.sketch == k)
      of[m++] = i;
  int top = s->nel < AT_NEIGHBOUR_TOP ? s->nel : AT_NEIGHBOUR_TOP;
  int pick = m ? of[at_rng_int(&s->rng, m)] : at_rng_int(&s->rng, top);
  at_cand_neighbour(&s->task, &s->el[pick].c, &s->rng, c);
}

/* The initial population: mutants of the elite (every other one a neighbour of its best, unless
   no_seeds), then random samples. */
static int initial(at_search *s, const at_workload *wl, const te_target *tgt, ind *pop, int size) {
  int n = 0;
  for (int tries = 0; s->nel > 0 && n < size / 2 && tries < size; tries++) {
    ind x = {0};
    if (!s->o.no_seeds && tries % 4 == 1)
      near_best(s, &x.c);
    else
      at_cand_mutate(&s->task, pick_elite(s), &s->rng, &x.c);
    if (!evaluate(s, wl, tgt, &x))
      continue;
    if (in_list(pop, n, x.h)) {
      ind_free(&x);
      continue;
    }
    pop[n++] = x;
  }
  return random_fill(s, wl, tgt, size, pop, n, NULL, 0);
}

/* One generation: children of tournament-picked parents; the best size of all survive. */
static int generation(at_search *s, const at_workload *wl, const te_target *tgt, ind *pop, int n,
                      int size) {
  int m = n;
  for (int tries = 0; m < 2 * size && tries < 2 * size && n > 0; tries++) {
    ind x = {0};
    const at_cand *p = &pop[tournament(s, pop, n)].c;
    at_cand mixed;
    if (at_rng_unit(&s->rng) < 0.2) {
      at_cand_crossover(&s->task, p, &pop[tournament(s, pop, n)].c, &s->rng, &mixed);
      p = &mixed;
    }
    at_cand_mutate(&s->task, p, &s->rng, &x.c);
    if (!evaluate(s, wl, tgt, &x))
      continue;
    if (in_list(pop, m, x.h)) {
      ind_free(&x);
      continue;
    }
    pop[m++] = x;
  }
  score(s, pop + n, m - n);
  qsort(pop, (size_t)m, sizeof *pop, by_score);
  for (int i = size; i < m; i++)
    ind_free(&pop[i]);
  return m < size ? m : size;
}

static void to_proposal(ind *x, at_proposal *p, bool random) {
  p->cand = x->c;
  p->trace = x->trace;
  x->trace = NULL;
  memcpy(p->feat, x->feat, sizeof p->feat);
  p->random = random;
}

/* c as the proposal *p when it builds and has not been seen (then marked seen); false otherwise. */
static bool propose_new(at_search *s, const at_workload *wl, const te_target *tgt, const at_cand *c,
                        bool random, at_proposal *p) {
  ind x = {0};
  x.c = *c;
  if (!evaluate(s, wl, tgt, &x))
    return false;
  if (set_has(s, x.h)) {
    ind_free(&x);
    return false;
  }
  set_add(s, x.h);
  to_proposal(&x, p, random);
  return true;
}

/* One random candidate of each sketch that no proposal has used yet (a few draws each, as a
   draw can be invalid), appended to out[got..want); the sketches of out[0..got) count as used.
   Returns the new count. */
static int propose_uncovered(at_search *s, const at_workload *wl, const te_target *tgt, int want,
                             at_proposal *out, int got) {
  for (int i = 0; i < got; i++)
    s->covered[out[i].cand.sketch] = true;
  for (int k = 0; k < s->task.nsketch && k < AT_MAX_SKETCHES && got < want; k++)
    for (int tries = 0; !s->covered[k] && tries < 4; tries++) {
      at_cand c;
      at_cand_sample(&s->task, k, &s->rng, &c);
      if (propose_new(s, wl, tgt, &c, true, &out[got])) {
        got++;
        s->covered[k] = true;
      }
    }
  return got;
}

/* Proposals made without the model, appended to out[got..want): the first round's derived
   points (seed_points.c), and, until the model is trained, neighbours of the best measured.
   Returns the new count. */
static int propose_directed(at_search *s, const at_workload *wl, const te_target *tgt, int want,
                            bool model, at_proposal *out, int got) {
  if (s->o.no_seeds)
    return got;
  at_cand c[16];
  int nc = 0;
  if (!s->seeded) {
    s->seeded = true;
    nc = at_seed_points(&s->task, &s->caps, c, 16);
  } else if (s->model && !model && s->nel > 0) { /* no model at all: a random search, unsteered */
    for (int i = 0, n = (int)(want * AT_NEIGHBOUR_SHARE + 0.5); i < n && i < 16; i++)
      near_best(s, &c[nc++]);
  }
  for (int i = 0; i < nc && got < want; i++)
    if (propose_new(s, wl, tgt, &c[i], false, &out[got]))
      got++;
  return propose_uncovered(s, wl, tgt, want, out, got);
}

int at_search_propose(at_search *s, const at_workload *wl, const te_target *tgt, int want,
                      at_proposal *out) {
  bool model = s->model && at_model_ready(s->model);
  if (!s->have_caps) {
    at_target_caps_get(tgt, &s->caps);
    s->have_caps = true;
  }
  int size = s->o.population > want ? s->o.population : want;
  ind *pop = ir_calloc(NULL, (size_t)(2 * size + want + 1), sizeof *pop);
  if (!pop)
    return 0;
  int nrand = model ? (int)floor(want * s->o.epsilon + 0.5) : want, n = 0, got = 0;
  got = propose_directed(s, wl, tgt, want, model, out, got);
  if (model) {
    n = initial(s, wl, tgt, pop, size);
    score(s, pop, n);
    qsort(pop, (size_t)n, sizeof *pop, by_score);
    for (int g = 0; g < s->o.generations; g++)
      n = generation(s, wl, tgt, pop, n, size);
    for (int i = 0; i < n && got < want - nrand; i++)
      if (!set_has(s, pop[i].h)) {
        set_add(s, pop[i].h); /* pending: never proposed twice */
        to_proposal(&pop[i], &out[got++], false);
      }
  }
  ind *extra = pop + 2 * size;
  int ne = random_fill(s, wl, tgt, want - got, extra, 0, pop, n);
  for (int i = 0; i < ne; i++) {
    set_add(s, extra[i].h);
    to_proposal(&extra[i], &out[got++], true);
  }
  for (int i = 0; i < got; i++)
    s->covered[out[i].cand.sketch] = true;
  for (int i = 0; i < n; i++)
    ind_free(&pop[i]);
  free(pop);
  return got;
}
