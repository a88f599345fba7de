/* space.c — points of a sketch's space: sampling, mutation, crossover, validity, and the
 * values as text (the log's "params", so a resumed search can mutate logged candidates).
 *
 * A tile knob holds one factor per level, outermost first. Reduction and simple-stage tiles
 * divide their extent exactly (the product is the extent); the tiled stage's space tiles may
 * leave a tail (half their draws are free factors; the outermost level then counts the tiles,
 * rounded up), so a 6 x 64 register tile is in the space of a 1024 x 1024 matmul. So may the
 * gpu-tile sketch's block/thread/inner tiles and its reduction's two levels (the lowering
 * guards the last tile of each; a prime-sized matmul would otherwise get tiles of 1 or the
 * whole axis). Innermost
 * factors are bounded (inner_limit) as Ansor bounds its innermost split factor; the vector
 * axis' innermost factor is mostly whole 8-lane vectors; in a dot sketch (tile+cache+read+dot)
 * it is always whole instruction vectors (16 lanes) and the grouped reduce axis' innermost
 * factor whole groups (inner_multiple). Mutation moves one prime factor
 * between two levels of a tile, redraws one level of a tile that may leave a tail, or redraws
 * a choice; a mutant is always valid. The register tile's rows (the innermost factors of the
 * space axes but the vector's) are bounded together as each one is (rows_ok): unrolled, they
 * multiply into bodies LLVM compiles for minutes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"

/* A dot sketch's register tile is rows x (vector / 16) zmm accumulators: at most 8 rows keep
   it within the 32 registers (8 x 4 at the widest; bench/dot_gemm.c's 6 x 4 leaves room for the
   broadcasts and loads that feed them), where 16 rows would spill. */
enum { AT_MAX_VECTOR = 64, AT_MAX_ROWS = 16, AT_MAX_DOT_ROWS = 8 };

static const at_sketch *sketch_of(const at_task *t, const at_cand *c) {
  return &t->sketch[c->sketch];
}

/* The space axis of the tiled stage that carries the vector in sketch sk: its own (a
   tile+cache+read:A sketch), else the last. */
static int vector_axis(const at_task *t, const at_sketch *sk, const at_knob *k) {
  return sk->vec_axis >= 0 ? sk->vec_axis : t->stage[k->stage].nspace - 1;
}

/* The largest factor the innermost level of this tile may take: the vector's axis at most
   AT_MAX_VECTOR lanes, the other space axes' innermost level (the rows of the register tile,
   unrolled) at most AT_MAX_ROWS; reductions are free. */
static int64_t inner_limit(const at_task *t, const at_sketch *sk, const at_knob *k) {
  if (k->role == AT_ROLE_SIMPLE_VEC)
    return AT_MAX_VECTOR;
  if (k->role == AT_ROLE_SPACE_TILE)
    return k->axis == vector_axis(t, sk, k) ? AT_MAX_VECTOR
           : sk->dot.insn                   ? AT_MAX_DOT_ROWS
                                            : AT_MAX_ROWS;
  if (k->role == AT_ROLE_GPU_TILE) /* a thread's own tile (sketch_gpu.c) */
    return AT_GPU_MAX_INNER;
  return INT64_MAX;
}

/* What the innermost factor of the tile must be a multiple of: in a dot sketch the vector (the
   instruction's lanes) and the grouped reduce axis (its group of k); 1 elsewhere. */
static int64_t inner_multiple(const at_task *t, const at_sketch *sk, const at_knob *k) {
  if (!sk->dot.insn)
    return 1;
  if (k->role == AT_ROLE_SPACE_TILE && k->axis == vector_axis(t, sk, k))
    return sk->dot.lanes;
  if (k->role == AT_ROLE_REDUCE_TILE && k->axis == sk->dot.reduce_axis)
    return sk->dot.group;
  return 1;
}

static int divisors(int64_t n, int64_t limit, int64_t *out, int cap) {
  int m = 0;
  for (int64_t d = 1; d <= n && d <= limit && m < cap; d++)
    if (n % d == 0)
      out[m++] = d;
  return m;
}

static int64_t pick_divisor(at_rng *r, int64_t n, int64_t limit) {
  int64_t d[512];
  int m = divisors(n, limit, d, 512);
  return m ? d[at_rng_int(r, m)] : 1;
}

/* A divisor of n up to limit that is a multiple of mult (8: a whole number of 8-lane vectors),
   or 0 when there is none. */
static int64_t pick_vector(at_rng *r, int64_t n, int64_t limit, int64_t mult) {
  int64_t d[512], w[512];
  int m = divisors(n, limit, d, 512), k = 0;
  for (int i = 0; i < m; i++)
    if (d[i] % mult == 0)
      w[k++] = d[i];
  return k ? w[at_rng_int(r, k)] : 0;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Whether the tile's factors may leave a tail: the space tiles of the tiled stage, whose last
   tiles te guards (an output's) or rounds up (a local block's, apply.c), so a 6-row register
   tile can tile 1024 rows; so may a gpu-tile sketch's space and reduce tiles (sketch_gpu.c:
   the lowering guards their last tiles). Their outermost level then counts the tiles, rounded
   up. The CPU sketches' reduction and simple-stage tiles keep exact factors. */
static bool may_tail(const at_sketch *sk, const at_knob *k) {
  return k->role == AT_ROLE_SPACE_TILE || k->role == AT_ROLE_GPU_TILE ||
         (k->role == AT_ROLE_REDUCE_TILE && sk->kind == AT_SK_GPU_TILE);
}

/* What level l of the tile spans: the extent over the levels inside it, rounded up. */
static int64_t left_for(const at_knob *k, const int64_t *v, int l) {
  int64_t inside = 1;
  for (int i = l + 1; i < k->nlevels; i++)
    inside *= v[i];
  return ceil_div(k->extent > 0 ? k->extent : 1, inside);
}

/* A factor for level l of a tile that may leave a tail, spanning rest: the vector's
   innermost level a multiple of 8 lanes (of mult, when that is more), the rows' any count up
   to limit, a middle level log-uniform (tiles of 5 and 500 rows are as likely). */
static int64_t pick_free(at_rng *r, int64_t rest, int64_t limit, bool vector, bool innermost,
                         int64_t mult) {
  int64_t hi = rest < limit ? rest : limit;
  int64_t w = mult > 8 ? mult : 8;
  if (vector && innermost && hi >= w)
    return w * (1 + at_rng_int(r, (int)(hi / w)));
  if (innermost)
    return 1 + at_rng_int(r, (int)(hi < 4096 ? hi : 4096));
  int64_t x = (int64_t)(exp(at_rng_unit(r) * log((double)hi)) + 0.5);
  return x < 1 ? 1 : x > hi ? hi : x;
}

/* Level l drawn for a tile spanning rest there: whole vectors or divisors, or (half the time,
   where tails are allowed) any factor. */
static int64_t pick_level(const at_task *t, const at_sketch *sk, const at_knob *k, at_rng *r, int l,
                          int64_t rest) {
  bool innermost = l == k->nlevels - 1;
  int64_t limit = innermost ? inner_limit(t, sk, k) : INT64_MAX;
  int64_t mult = innermost ? inner_multiple(t, sk, k) : 1;
  bool vector = k->role == AT_ROLE_SPACE_TILE && k->axis == vector_axis(t, sk, k);
  if (may_tail(sk, k) && at_rng_unit(r) < 0.5)
    return pick_free(r, rest, limit, vector, innermost, mult);
  int64_t f = 0;
  if (mult > 1) /* whole instruction vectors or groups: a divisor if one is, else a tail */
    f = pick_vector(r, rest, limit, mult);
  else if (vector && innermost && at_rng_unit(r) < 0.8) /* mostly whole vectors */
    f = pick_vector(r, rest, limit, 8);
  if (!f && mult > 1 && may_tail(sk, k))
    return pick_free(r, rest, limit, vector, innermost, mult);
  return f ? f : pick_divisor(r, rest, limit);
}

static void sample_tile(const at_task *t, const at_sketch *sk, const at_knob *k, at_rng *r,
                        int64_t *v) {
  int64_t rest = k->extent > 0 ? k->extent : 1;
  for (int l = k->nlevels - 1; l >= 1; l--) {
    v[l] = pick_level(t, sk, k, r, l, rest);
    rest = ceil_div(rest, v[l]);
  }
  v[0] = rest;
}

/* The tile's values are consistent: every factor at least 1 and at most what its level spans,
   the innermost within its limit, the outermost the rounded-up count (the product, exactly,
   where tails are not allowed). */
static bool tile_ok(const at_task *t, const at_sketch *sk, const at_knob *k, const int64_t *v) {
  int64_t prod = 1;
  for (int l = 0; l < k->nlevels; l++) {
    if (v[l] < 1 || (l > 0 && v[l] > left_for(k, v, l)))
      return false;
    prod *= v[l];
  }
  int64_t inner = v[k->nlevels - 1];
  if (inner > inner_limit(t, sk, k) || inner % inner_multiple(t, sk, k) != 0 ||
      v[0] != left_for(k, v, 0))
    return false;
  return may_tail(sk, k) || prod == k->extent;
}

/* A row knob: a space tile of the tiled stage along an axis other than the vector's, whose
   innermost factor is a count of the register tile's rows. */
static bool row_knob(const at_task *t, const at_sketch *sk, const at_knob *k) {
  return k->role == AT_ROLE_SPACE_TILE && k->axis != vector_axis(t, sk, k);
}

/* The register tile's rows of all axes together are bounded as one axis' are (AT_MAX_ROWS, 8 in
   a dot sketch): they multiply, unrolled (12 x 16 rows of 64-lane vectors is a straight-line
   block LLVM takes a minute on, docs/tuning-space.md), and more than 16 rows of accumulators
   only spill. */
static bool rows_ok(const at_task *t, const at_sketch *sk, const int64_t *v) {
  int64_t rows = 1, limit = INT64_MAX;
  for (int k = 0; k < sk->nknob; k++) {
    const at_knob *kn = &sk->knob[k];
    if (!row_knob(t, sk, kn))
      continue;
    rows *= v[kn->offset + kn->nlevels - 1];
    limit = inner_limit(t, sk, kn);
  }
  return rows <= limit;
}

/* A row knob's innermost factor moved out one level (the rows 1, the tile the same): what
   fit_rows falls back on. */
static void rows_out(const at_task *t, const at_sketch *sk, const at_knob *k, int64_t *v) {
  int last = k->nlevels - 1;
  if (last < 1 || v[last] <= 1)
    return;
  int64_t old[AT_MAX_LEVELS];
  memcpy(old, v, sizeof(int64_t) * (size_t)k->nlevels);
  v[last - 1] *= v[last];
  v[last] = 1;
  if (last - 1 > 0 && v[last - 1] > left_for(k, v, last - 1))
    v[last - 1] = left_for(k, v, last - 1);
  v[0] = left_for(k, v, 0);
  if (!tile_ok(t, sk, k, v))
    memcpy(v, old, sizeof(int64_t) * (size_t)k->nlevels);
}

/* Redraws the row knobs of a sample whose rows are too many (rows_ok), then, if 16 draws did
   not fit, takes the rows out of the knobs with the most until they fit. */
static void sample_knob(const at_task *t, const at_sketch *sk, const at_knob *k, at_rng *r,
                        int64_t *v);
static void fit_rows(const at_task *t, const at_sketch *sk, at_rng *r, int64_t *v) {
  for (int tries = 0; tries < 16 && !rows_ok(t, sk, v); tries++)
    for (int k = 0; k < sk->nknob; k++)
      if (row_knob(t, sk, &sk->knob[k]))
        sample_knob(t, sk, &sk->knob[k], r, v);
  while (!rows_ok(t, sk, v)) {
    const at_knob *most = NULL;
    int64_t rows = 1;
    for (int k = 0; k < sk->nknob; k++) {
      const at_knob *kn = &sk->knob[k];
      int64_t x = row_knob(t, sk, kn) ? v[kn->offset + kn->nlevels - 1] : 1;
      if (x > rows)
        most = kn, rows = x;
    }
    if (!most)
      return;
    int64_t before = v[most->offset + most->nlevels - 1];
    rows_out(t, sk, most, v + most->offset);
    if (v[most->offset + most->nlevels - 1] == before)
      return; /* cannot move: at_cand_valid will refuse it */
  }
}

static void sample_knob(const at_task *t, const at_sketch *sk, const at_knob *k, at_rng *r,
                        int64_t *v) {
  if (k->kind == AT_KNOB_TILE) {
    sample_tile(t, sk, k, r, v + k->offset);
  } else if (k->role == AT_ROLE_VECTORIZE && k->nchoices == 2) {
    v[k->offset] = at_rng_unit(r) < 0.8; /* mostly vectorized */
  } else {
    v[k->offset] = at_rng_int(r, k->nchoices);
  }
}

void at_cand_sample(const at_task *t, int sketch, at_rng *r, at_cand *c) {
  memset(c, 0, sizeof *c);
  c->sketch = sketch;
  const at_sketch *sk = &t->sketch[sketch];
  c->nvals = sk->nvals;
  for (int k = 0; k < sk->nknob; k++)
    sample_knob(t, sk, &sk->knob[k], r, c->v);
  fit_rows(t, sk, r, c->v);
}

static int64_t smallest_prime(int64_t n) {
  for (int64_t p = 2; p * p <= n; p++)
    if (n % p == 0)
      return p;
  return n;
}

/* Moves a prime factor from one level of the tile to another (the outermost level then
   recounts the tiles), or, where tails are allowed, redraws one inner level; false when
   nothing valid came of it. */
static bool mutate_tile(const at_task *t, const at_sketch *sk, const at_knob *k, at_rng *r,
                        int64_t *v) {
  int64_t old[AT_MAX_LEVELS];
  memcpy(old, v, sizeof(int64_t) * (size_t)k->nlevels);
  for (int tries = 0; tries < 8; tries++) {
    if (may_tail(sk, k) && at_rng_unit(r) < 0.5) {
      int l = 1 + at_rng_int(r, k->nlevels - 1);
      v[l] = pick_level(t, sk, k, r, l, left_for(k, v, l));
      for (int o = l - 1; o >= 1; o--) /* the levels outside it span less now */
        if (v[o] > left_for(k, v, o))
          v[o] = left_for(k, v, o);
    } else {
      int from = at_rng_int(r, k->nlevels), to = at_rng_int(r, k->nlevels);
      if (from == to || v[from] <= 1)
        continue;
      /* a random prime factor of v[from] */
      int64_t x = v[from], primes[64];
      int np = 0;
      while (x > 1 && np < 64) {
        int64_t p = smallest_prime(x);
        primes[np++] = p;
        x /= p;
      }
      int64_t p = primes[at_rng_int(r, np)];
      v[from] /= p;
      v[to] *= p;
    }
    v[0] = left_for(k, v, 0);
    if (memcmp(old, v, sizeof(int64_t) * (size_t)k->nlevels) != 0 && tile_ok(t, sk, k, v))
      return true;
    memcpy(v, old, sizeof(int64_t) * (size_t)k->nlevels);
  }
  return false;
}

/* One step of a tile: the smallest prime factor of one level moved to the level next to it
   (outward or inward), or, where tails are allowed, the innermost level one vector (8 lanes,
   or the instruction's) or one row more or less; the outermost level recounts the tiles. */
static bool step_tile(const at_task *t, const at_sketch *sk, const at_knob *k, at_rng *r,
                      int64_t *v) {
  int64_t old[AT_MAX_LEVELS];
  memcpy(old, v, sizeof(int64_t) * (size_t)k->nlevels);
  bool vector = k->role == AT_ROLE_SPACE_TILE && k->axis == vector_axis(t, sk, k);
  for (int tries = 0; tries < 8; tries++) {
    int last = k->nlevels - 1;
    if (may_tail(sk, k) && at_rng_unit(r) < 0.3) {
      int64_t m = inner_multiple(t, sk, k), step = vector ? (m > 8 ? m : 8) : m;
      v[last] += at_rng_int(r, 2) ? step : -step;
      if (v[last] < 1) { /* no level of 0: the levels outside would divide by it */
        v[last] = old[last];
        continue;
      }
      for (int o = last - 1; o >= 1; o--)
        if (v[o] > left_for(k, v, o))
          v[o] = left_for(k, v, o);
    } else {
      int from = at_rng_int(r, k->nlevels);
      int to = from == 0 ? 1 : from == last ? last - 1 : from + (at_rng_int(r, 2) ? 1 : -1);
      if (v[from] <= 1)
        continue;
      int64_t p = smallest_prime(v[from]);
      v[from] /= p;
      v[to] *= p;
    }
    if (may_tail(sk, k))
      v[0] = left_for(k, v, 0);
    if (memcmp(old, v, sizeof(int64_t) * (size_t)k->nlevels) != 0 && tile_ok(t, sk, k, v))
      return true;
    memcpy(v, old, sizeof(int64_t) * (size_t)k->nlevels);
  }
  return false;
}

/* One knob of c changed, drawn at random (8 tries for a tile knob that can change): a random
   change (a tile's factors regrouped, another choice) or, with step, one step (step_tile; the
   next choice up or down). A copy of c when nothing changes. */
static void change_one_knob(const at_task *t, const at_cand *c, at_rng *r, bool step,
                            at_cand *out) {
  *out = *c;
  const at_sketch *sk = sketch_of(t, c);
  if (sk->nknob == 0)
    return;
  for (int tries = 0; tries < 8; tries++) {
    const at_knob *k = &sk->knob[at_rng_int(r, sk->nknob)];
    if (k->kind == AT_KNOB_TILE) {
      int64_t *v = out->v + k->offset;
      if ((step ? step_tile(t, sk, k, r, v) : mutate_tile(t, sk, k, r, v)) &&
          rows_ok(t, sk, out->v))
        return;
      memcpy(v, c->v + k->offset, sizeof(int64_t) * (size_t)k->nlevels);
    } else if (k->nchoices > 1) {
      int64_t *x = &out->v[k->offset];
      if (step)
        *x = *x == 0 ? 1 : *x == k->nchoices - 1 ? *x - 1 : *x + (at_rng_int(r, 2) ? 1 : -1);
      else
        *x = (*x + 1 + at_rng_int(r, k->nchoices - 1)) % k->nchoices;
      return;
    }
  }
}

void at_cand_mutate(const at_task *t, const at_cand *c, at_rng *r, at_cand *out) {
  change_one_knob(t, c, r, false, out);
}

void at_cand_neighbour(const at_task *t, const at_cand *c, at_rng *r, at_cand *out) {
  change_one_knob(t, c, r, true, out);
}

void at_cand_crossover(const at_task *t, const at_cand *a, const at_cand *b, at_rng *r,
                       at_cand *out) {
  *out = *a;
  if (a->sketch != b->sketch)
    return;
  const at_sketch *sk = sketch_of(t, a);
  for (int k = 0; k < sk->nknob; k++) {
    const at_knob *kn = &sk->knob[k];
    if (at_rng_int(r, 2))
      memcpy(out->v + kn->offset, b->v + kn->offset, sizeof(int64_t) * (size_t)kn->nlevels);
  }
  if (!rows_ok(t, sk, out->v)) /* the rows of one parent and the other's multiply */
    *out = *a;
}

bool at_cand_valid(const at_task *t, const at_cand *c) {
  if (c->sketch < 0 || c->sketch >= t->nsketch)
    return false;
  const at_sketch *sk = sketch_of(t, c);
  if (c->nvals != sk->nvals)
    return false;
  for (int k = 0; k < sk->nknob; k++) {
    const at_knob *kn = &sk->knob[k];
    const int64_t *v = c->v + kn->offset;
    if (kn->kind == AT_KNOB_CHOICE) {
      if (v[0] < 0 || v[0] >= kn->nchoices)
        return false;
      continue;
    }
    if (!tile_ok(t, sk, kn, v))
      return false;
  }
  return rows_ok(t, sk, c->v);
}

/* A template's knob as the log shows it: a value knob's value, a choice's or an order's index. */
static int64_t user_shown(const at_uknob *u, int64_t idx) {
  bool value = (u->kind == AT_UK_INT || u->kind == AT_UK_SPLIT) && idx >= 0 && idx < u->n;
  return value ? u->vals[idx] : idx;
}

char *at_cand_params_str(const at_task *t, const at_cand *c) {
  ir_str s = {0};
  bool user = c->sketch >= 0 && c->sketch < t->nsketch && sketch_of(t, c)->kind == AT_SK_USER;
  for (int i = 0; i < c->nvals; i++)
    if (user)
      ir_str_printf(&s, i ? " %s=%lld" : "%s=%lld", t->uknob[i].name,
                    (long long)user_shown(&t->uknob[i], c->v[i]));
    else
      ir_str_printf(&s, i ? " %lld" : "%lld", (long long)c->v[i]);
  if (!s.buf)
    ir_str_puts(&s, "");
  return ir_str_take(&s);
}

/* "name=value ..." of the user sketch: every knob named once, values among its candidates. */
static bool user_from_params(const at_task *t, const char *params, at_cand *c) {
  const at_sketch *sk = sketch_of(t, c);
  c->nvals = sk->nvals;
  bool seen[AT_MAX_KNOBS] = {0};
  for (const char *p = params; *p;) {
    while (*p == ' ')
      p++;
    const char *eq = strchr(p, '=');
    if (!*p)
      break;
    if (!eq)
      return false;
    int k = 0;
    while (k < sk->nknob &&
           !(strncmp(t->uknob[k].name, p, (size_t)(eq - p)) == 0 && t->uknob[k].name[eq - p] == 0))
      k++;
    char *end;
    long long x = strtoll(eq + 1, &end, 10);
    if (k == sk->nknob || seen[k] || end == eq + 1 || (*end && *end != ' '))
      return false;
    const at_uknob *u = &t->uknob[k];
    int idx = -1;
    for (int i = 0; i < u->n && idx < 0; i++)
      if (user_shown(u, i) == x)
        idx = i;
    if (idx < 0)
      return false;
    c->v[sk->knob[k].offset] = idx;
    seen[k] = true;
    p = end;
  }
  for (int k = 0; k < sk->nknob; k++)
    if (!seen[k])
      return false;
  return at_cand_valid(t, c);
}

bool at_cand_from_params(const at_task *t, int sketch, const char *params, at_cand *c) {
  memset(c, 0, sizeof *c);
  if (sketch < 0 || sketch >= t->nsketch || !params)
    return false;
  c->sketch = sketch;
  if (t->sketch[sketch].kind == AT_SK_USER)
    return user_from_params(t, params, c);
  const char *p = params;
  while (*p && c->nvals < AT_MAX_VALS) {
    char *end;
    long long x = strtoll(p, &end, 10);
    if (end == p)
      break;
    c->v[c->nvals++] = x;
    p = end;
  }
  return at_cand_valid(t, c);
}
