/* loop_partition.c — peels guarded tails off loops, so the steady state has no condition.
 *
 * Needs: guards of non-dividing splits written `if (likely(cond)) S` (schedule_to_loops), index
 * arithmetic simplified (the simplify pass before this one).
 * Guarantees: for a loop `for (x, min, extent) B` whose body holds likely-guards that are linear
 * in x, the loop becomes up to three loops over the same variable (as Halide's PartitionLoops):
 *     for (x, min, lo) B            prologue: guards kept
 *     for (x, lo, hi - lo) B'       steady state: the guards proved true for x in [lo, hi) gone
 *     for (x, hi, end - hi) B       epilogue: guards kept
 * where [lo, hi) is where every such guard holds for all values of the loops between x and the
 * guard (relaxed to their ranges); loops whose extent is provably empty are dropped. Loops are
 * processed outside in: the outer loop of a split is partitioned with its inner loop's constant
 * range known, which gives constant bounds (100 split by 32: main x.o in [0, 3), tail x.o = 3);
 * then, inside each part, the inner loops are partitioned again with the outer variable's new
 * range bound (in the tail, x.i in [0, 4) runs unguarded and x.i in [4, 32) is empty). Guards
 * that the analyzer proves true or false in a part are folded there too, and a guard that alone
 * bounds one side and was solved without relaxing any inner loop is known false past that side
 * (so a symbolic tail keeps only its live iterations: for (x.i, 0, n - x.o*16), no guard).
 *
 * A guard is solved when it is a comparison (<, <=, >, >=) of i64 expressions linear in x with a
 * constant coefficient: cond <=> c*x + r <= 0; with M an upper bound of r over the inner loops,
 * c > 0 gives x < floor(-M / c) + 1 and c < 0 gives x >= ceil(M / -c). A guard that occurs
 * several times is used only when every occurrence is solved. Thread-bound loops (GPU) are not
 * partitioned. A loop whose prologue and epilogue are one iteration each may instead keep its
 * iterations and version only the statements of its body that hold the guards (see
 * "partitioning inside the loop" below): always for a parallel loop, and for a serial one when
 * part of its body holds no guard. likely() wrappers stay (remove_likely strips them).
 */
#include "lower.h"

#define LP_MAX_DEPTH 64

/* What a part of a partitioned loop knows about a guard, as values of part.known. */
static char known_true_, known_false_;
#define KNOWN_TRUE ((void *)&known_true_)
#define KNOWN_FALSE ((void *)&known_false_)

typedef struct part {
  lw_pass_ctx *p;
  te_ctx *ctx;
  ir_analyzer *an;
  ir_map *known; /* atoms -> KNOWN_TRUE / KNOWN_FALSE in the part being rewritten */
  bool failed;
} part;

/* ---------------------------------------------------------------- conditions */

static bool is_likely(const te_expr *e) {
  return e->kind == IR_CALL && e->u.call == IR_INTRIN_LIKELY && e->nargs == 1;
}

#define LP_MAX_CONJ 32

/* Appends the conjuncts of e (split at &&) to out; -1 when there are more than cap. */
static int conjuncts(te_expr *e, te_expr **out, int n, int cap) {
  if (n < 0)
    return n;
  if (e->kind == IR_AND) {
    n = conjuncts(e->args[0], out, n, cap);
    return conjuncts(e->args[1], out, n, cap);
  }
  if (n == cap)
    return -1;
  out[n++] = e;
  return n;
}

static te_expr *likely_of(part *st, te_expr *atom) {
  return ir_call(st->ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &atom);
}

/* ---------------------------------------------------------------- solving a guard in x */

/* e == *c * x + *r with *c constant; false when e is not of that form. */
static bool linear(te_ctx *ctx, te_expr *e, te_expr *x, int64_t *c, te_expr **r) {
  if (!ir_expr_uses(e, x)) {
    *c = 0;
    *r = e;
    return true;
  }
  if (e == x) {
    *c = 1;
    *r = ir_i64(ctx, 0);
    return true;
  }
  int64_t c0, c1, k;
  te_expr *r0, *r1;
  switch (e->kind) {
  case IR_ADD:
  case IR_SUB:
    if (!linear(ctx, e->args[0], x, &c0, &r0) || !linear(ctx, e->args[1], x, &c1, &r1))
      return false;
    *c = e->kind == IR_ADD ? c0 + c1 : c0 - c1;
    *r = ir_binary(e->kind, r0, r1);
    return *r != NULL;
  case IR_MUL:
    for (int side = 0; side < 2; side++)
      if (ir_is_const_int(e->args[side], &k) && linear(ctx, e->args[1 - side], x, &c0, &r0)) {
        *c = c0 * k;
        *r = ir_mul(r0, e->args[side]);
        return *r != NULL;
      }
    return false;
  default:
    return false;
  }
}

/* The loops (and lets) between the partitioned loop and a guard. */
typedef struct inner {
  int n;
  te_expr *vars[LP_MAX_DEPTH];
  ir_interval doms[LP_MAX_DEPTH];
  int nopaque;
  te_expr *opaque[LP_MAX_DEPTH]; /* let variables: a bound using one is not solved */
  bool overflow;
} inner;

/* An upper bound of r over the inner loops, free of them; NULL when there is none. */
static te_expr *upper_bound(part *st, te_expr *r, const inner *in, te_expr *x) {
  te_expr *m = r;
  for (int round = 0; round <= in->n && ir_expr_uses_any(m, in->n, in->vars); round++) {
    ir_interval iv = ir_interval_of(st->an, m, in->n, in->vars, in->doms);
    if (!iv.max)
      return NULL;
    m = iv.max;
  }
  if (ir_expr_uses_any(m, in->n, in->vars) || ir_expr_uses(m, x) ||
      ir_expr_uses_any(m, in->nopaque, in->opaque))
    return NULL;
  return m;
}

/* One occurrence of a guard: the bound it puts on x (upper: x < bound; else x >= bound). */
typedef struct occ {
  te_expr *atom;
  bool ok, upper;
  bool exact; /* no inner loop was relaxed: the guard fails for every x past the bound */
  te_expr *bound;
} occ;

typedef struct occs {
  int n, cap;
  occ *v;
} occs;

static void solve(part *st, te_expr *atom, te_expr *x, const inner *in, occ *o) {
  te_ctx *ctx = st->ctx;
  o->atom = atom;
  o->ok = false;
  if (in->overflow || atom->nargs != 2 || !ir_dtype_eq(atom->args[0]->dtype, TE_I64))
    return;
  te_expr *a = atom->args[0], *b = atom->args[1], *e;
  switch (atom->kind) { /* cond <=> e <= 0 */
  case IR_LT:
    e = ir_add(ir_sub(a, b), ir_i64(ctx, 1));
    break;
  case IR_LE:
    e = ir_sub(a, b);
    break;
  case IR_GT:
    e = ir_add(ir_sub(b, a), ir_i64(ctx, 1));
    break;
  case IR_GE:
    e = ir_sub(b, a);
    break;
  default:
    return;
  }
  int64_t c;
  te_expr *r, *m;
  if (!e || !linear(ctx, e, x, &c, &r) || c == 0 || !(m = upper_bound(st, r, in, x)))
    return;
  o->exact = !ir_expr_uses_any(r, in->n, in->vars);
  te_expr *ac = ir_i64(ctx, c > 0 ? c : -c);
  if (c > 0) /* c*x + m <= 0  <=>  x <= floor(-m / c) */
    o->bound = ir_add(ir_floordiv(ir_sub(ir_i64(ctx, 0), m), ac), ir_i64(ctx, 1));
  else /* |c|*x >= m  <=>  x >= ceil(m / |c|) = -floor(-m / |c|) */
    o->bound = ir_sub(ir_i64(ctx, 0), ir_floordiv(ir_sub(ir_i64(ctx, 0), m), ac));
  o->upper = c > 0;
  o->ok = o->bound != NULL;
}

static void add_occ(part *st, occs *os, occ o) {
  if (os->n == os->cap) {
    int cap = os->cap ? 2 * os->cap : 16;
    occ *nv = ir_alloc(st->ctx, (size_t)cap * sizeof *nv);
    if (!nv) {
      st->failed = true;
      return;
    }
    for (int i = 0; i < os->n; i++)
      nv[i] = os->v[i];
    os->v = nv;
    os->cap = cap;
  }
  os->v[os->n++] = o;
}

/* Collects the likely-guards of s that use x, solved for x. */
static void collect(part *st, ir_stmt *s, te_expr *x, inner *in, occs *os) {
  if (!s || st->failed)
    return;
  if (s->kind == IR_S_IF) {
    te_expr *cs[LP_MAX_CONJ];
    int n = conjuncts(s->exprs[0], cs, 0, LP_MAX_CONJ);
    for (int i = 0; i < n; i++) {
      if (!is_likely(cs[i]))
        continue;
      te_expr *as[LP_MAX_CONJ];
      int na = conjuncts(cs[i]->args[0], as, 0, LP_MAX_CONJ);
      for (int k = 0; k < na; k++) {
        if (!ir_expr_uses(as[k], x) || (st->known && ir_map_has(st->known, as[k])))
          continue;
        occ o = {0};
        solve(st, as[k], x, in, &o);
        add_occ(st, os, o);
      }
    }
  }
  bool pushed = false, pushed_opaque = false;
  if (s->kind == IR_S_FOR) {
    if (in->n == LP_MAX_DEPTH) {
      in->overflow = true;
    } else {
      in->vars[in->n] = IR_FOR_VAR(s);
      in->doms[in->n++] = ir_interval_from_range(st->an, IR_FOR_MIN(s), IR_FOR_EXTENT(s));
      pushed = true;
    }
  } else if (s->kind == IR_S_LET_STMT) {
    if (in->nopaque == LP_MAX_DEPTH)
      in->overflow = true;
    else
      in->opaque[in->nopaque++] = s->exprs[0], pushed_opaque = true;
  }
  for (uint32_t i = 0; i < s->nstmts; i++)
    collect(st, s->stmts[i], x, in, os);
  if (pushed)
    in->n--;
  if (pushed_opaque)
    in->nopaque--;
}

/* ---------------------------------------------------------------- rewriting */

static ir_stmt *lp_stmt(part *st, ir_stmt *s);
static ir_stmt *lp_children(part *st, ir_stmt *s);
typedef struct inside inside;
typedef ir_stmt *(*rewrite_fn)(part *, ir_stmt *, const inside *);
static ir_stmt *rebuild_children(part *st, ir_stmt *s, rewrite_fn fn, const inside *in);
static ir_stmt *lp_child(part *st, ir_stmt *s, const inside *in);

/* Simplified under the current bindings; a constant when the analyzer pins it to one value. */
static te_expr *simp(part *st, te_expr *e) {
  te_expr *r = e ? ir_simplify(st->an, e) : NULL;
  if (!r) {
    st->failed = true;
    return NULL;
  }
  ir_const_bound b = ir_const_bound_of(st->an, r);
  if (b.min == b.max && r->kind != IR_INT)
    return ir_i64(st->ctx, b.min);
  return r;
}

static bool prove(part *st, te_expr *cond) { return cond && ir_can_prove(st->an, cond); }

/* s rewritten for x in [lo, hi) with what is known there (x unbound afterwards); *ext gets
   hi - lo. NULL when the range is provably empty or nothing is left of s. */
static ir_stmt *rewrite_in(part *st, ir_stmt *s, te_expr *x, te_expr *lo, te_expr *hi,
                           ir_map *known, te_expr **ext) {
  *ext = simp(st, ir_sub(hi, lo));
  if (!*ext || prove(st, ir_le(*ext, ir_i64(st->ctx, 0))))
    return NULL;
  ir_map *saved = st->known;
  st->known = known;
  ir_analyzer_bind(st->an, x, lo, *ext);
  ir_stmt *r = lp_stmt(st, s);
  ir_analyzer_unbind(st->an, x);
  st->known = saved;
  return r;
}

/* The loop s with the same header around body (s itself when body is its own). */
static ir_stmt *same_loop(part *st, ir_stmt *s, ir_stmt *body) {
  if (body == IR_FOR_BODY(s))
    return s;
  ir_stmt *r =
      ir_for(IR_FOR_VAR(s), IR_FOR_MIN(s), IR_FOR_EXTENT(s), s->u.loop.kind, s->u.loop.tag, body);
  if (!r)
    st->failed = true;
  return r;
}

/* A part's extent ext of a loop whose extent was the constant c: ext, or min(ext, c) when ext
   has no constant upper bound of its own. A part is a sub-range of the loop, so the clamp always
   holds; it is kept for the later passes that need a constant bound of a tail's extent
   (vectorize's lanes, unroll): this pass may have proved ext <= c from facts they do not see
   (a tail of a split whose outer range is itself a tail, e.g. a cache_read at the last
   iteration of a split reduction: max(k - ax0.o*16 - kk.o*4, 0)). Built unsimplified: the
   simplifier would drop it again by the same proof. */
static te_expr *clamped_extent(part *st, ir_stmt *loop, te_expr *ext) {
  int64_t c, e;
  if (!ir_is_const_int(IR_FOR_EXTENT(loop), &c) || ir_is_const_int(ext, &e) ||
      ir_const_upper_bound(st->an, ext) <= c)
    return ext;
  te_expr *r = ir_min(ext, ir_i64(st->ctx, c));
  if (!r)
    st->failed = true;
  return r;
}

/* The loop over [lo, hi) with body rewritten under that range and with what is known there;
   NULL when provably empty. */
static ir_stmt *part_loop(part *st, ir_stmt *loop, te_expr *lo, te_expr *hi, ir_map *known) {
  te_expr *var = IR_FOR_VAR(loop), *ext;
  ir_stmt *body = rewrite_in(st, IR_FOR_BODY(loop), var, lo, hi, known, &ext);
  if (!body)
    return NULL;
  if (!(ext = clamped_extent(st, loop, ext)))
    return NULL;
  if (body == IR_FOR_BODY(loop) && lo == IR_FOR_MIN(loop) && ext == IR_FOR_EXTENT(loop))
    return loop;
  ir_stmt *r = ir_for(var, lo, ext, loop->u.loop.kind, loop->u.loop.tag, body);
  if (!r)
    st->failed = true;
  return r;
}

/* What the prologue, steady state and epilogue know (each on top of what is known outside). */
typedef struct part_facts {
  te_expr *lo_c, *hi_c; /* x >= lo_c and x < hi_c make every usable guard true */
  ir_map *pre, *main, *post;
} part_facts;

static ir_map *copy_known(part *st) {
  ir_map *m = ir_map_new(st->ctx);
  if (!m)
    return NULL;
  if (st->known)
    for (size_t i = 0; i < st->known->cap; i++)
      if (st->known->keys[i] && !ir_map_put(m, st->known->keys[i], st->known->vals[i]))
        return NULL;
  return m;
}

/* All occurrences of o's guard are solved (and exact, when exact is set). */
static bool all_occurrences(const occs *os, const occ *o, bool exact) {
  for (int j = 0; j < os->n; j++)
    if (os->v[j].atom == o->atom && (!os->v[j].ok || (exact && !os->v[j].exact)))
      return false;
  return true;
}

/* The bounds of the steady state from the solved guards, and the facts of each part; false when
   no guard is usable. When one guard alone bounds a side and it was solved exactly, it is false
   in the part past that side (x >= hi_c, or x < lo_c), which drops the dead half of a tail. */
static bool steady_range(part *st, const occs *os, part_facts *pf) {
  pf->lo_c = pf->hi_c = NULL;
  te_expr *only[2] = {NULL, NULL}; /* [upper]: the one atom bounding that side, if one */
  bool many[2] = {false, false}, any = false;
  for (int i = 0; i < os->n; i++) {
    const occ *o = &os->v[i];
    if (!all_occurrences(os, o, false))
      continue;
    te_expr **slot = o->upper ? &pf->hi_c : &pf->lo_c;
    *slot = !*slot ? o->bound : o->upper ? ir_min(*slot, o->bound) : ir_max(*slot, o->bound);
    if (!*slot || !ir_map_put(pf->main, o->atom, KNOWN_TRUE)) {
      st->failed = true;
      return false;
    }
    if (only[o->upper] && only[o->upper] != o->atom)
      many[o->upper] = true;
    only[o->upper] = o->atom;
    any = true;
  }
  for (int side = 0; side < 2 && any; side++) {
    if (!only[side] || many[side])
      continue;
    occ probe = {.atom = only[side]};
    if (all_occurrences(os, &probe, true) &&
        !ir_map_put(side ? pf->post : pf->pre, only[side], KNOWN_FALSE)) {
      st->failed = true;
      return false;
    }
  }
  return any;
}

/* lo = clamp(lo_c, min, end), hi = clamp(hi_c, lo, end); clamps that provably hold are left out. */
static bool clamp_range(part *st, const part_facts *pf, te_expr *min, te_expr *end, te_expr **lo,
                        te_expr **hi) {
  *lo = min;
  *hi = end;
  if (pf->lo_c) {
    *lo = simp(st, pf->lo_c);
    if (*lo && !prove(st, ir_le(min, *lo)))
      *lo = simp(st, ir_max(*lo, min));
    if (*lo && !prove(st, ir_le(*lo, end)))
      *lo = simp(st, ir_min(*lo, end));
  }
  if (pf->hi_c && *lo) {
    *hi = simp(st, pf->hi_c);
    if (*hi && !prove(st, ir_le(*hi, end)))
      *hi = simp(st, ir_min(*hi, end));
    if (*hi && !prove(st, ir_le(*lo, *hi)))
      *hi = simp(st, ir_max(*hi, *lo));
  }
  return *lo && *hi;
}

/* ---------------------------------------------------------------- partitioning inside the loop
 *
 * When the prologue and the epilogue are at most one iteration each (a split's tail), the loop
 * may keep all its iterations and branch inside instead: only the statements of its body that
 * hold the guards are versioned,
 *     S  ->  if (x < hi) { if (lo <= x) S_main else S_pre[x := min] } else S_post[x := hi]
 * each version rewritten under its own range as lp_for's loops would be, the one-iteration
 * versions with x replaced by its value (later passes do not learn ranges from conditions, and
 * need the tail's constant extents). What holds no guard is kept once: a producer computed at
 * the loop is not compiled twice because its consumer's copy-out has a tail. A parallel loop is
 * always partitioned this way (peeled iterations would run on one thread after the parallel
 * part); a serial loop when that leaves some of its body unversioned. */

struct inside {
  te_expr *x, *min, *lo, *hi, *end;
  const part_facts *pf;
  te_expr *extent; /* the loop's: x's binding outside the versions */
};

static bool one_iteration_parts(part *st, const inside *in) {
  te_expr *one = ir_i64(st->ctx, 1);
  return (in->lo == in->min || prove(st, ir_le(ir_sub(in->lo, in->min), one))) &&
         (in->hi == in->end || prove(st, ir_le(ir_sub(in->end, in->hi), one)));
}

/* s holds a likely-guard with an atom that uses x (and y, when y is not NULL). */
static bool has_guard(ir_stmt *s, te_expr *x, te_expr *y) {
  if (!s)
    return false;
  if (s->kind == IR_S_IF) {
    te_expr *cs[LP_MAX_CONJ];
    int n = conjuncts(s->exprs[0], cs, 0, LP_MAX_CONJ);
    if (n < 0)
      return true; /* too many to look at: assume so */
    for (int i = 0; i < n; i++)
      if (is_likely(cs[i]) && ir_expr_uses(cs[i], x) && (!y || ir_expr_uses(cs[i], y)))
        return true;
  }
  for (uint32_t i = 0; i < s->nstmts; i++)
    if (has_guard(s->stmts[i], x, y))
      return true;
  return false;
}

/* A statement the versioning looks inside rather than versioning it whole: a sequence, a
   wrapper with one body (allocate, attr, let), or a serial loop whose bounds do not use x and
   whose variable no guard inside it uses (so the guards' truth does not change over it). */
static bool transparent(ir_stmt *s, te_expr *x) {
  switch (s->kind) {
  case IR_S_SEQ:
  case IR_S_ALLOCATE:
  case IR_S_ATTR:
  case IR_S_LET_STMT:
    return true;
  case IR_S_FOR:
    return s->u.loop.kind == IR_FOR_SERIAL && !ir_expr_uses(IR_FOR_MIN(s), x) &&
           !ir_expr_uses(IR_FOR_EXTENT(s), x) && !has_guard(IR_FOR_BODY(s), IR_FOR_VAR(s), NULL);
  default:
    return false;
  }
}

/* Versioning s leaves some statement unversioned. */
static bool saves_code(ir_stmt *s, te_expr *x) {
  if (!s || !has_guard(s, x, NULL))
    return s != NULL;
  if (!transparent(s, x))
    return false;
  for (uint32_t i = 0; i < s->nstmts; i++)
    if (saves_code(s->stmts[i], x))
      return true;
  return false;
}

/* s rewritten for x in [from, to) with what is known there; x replaced by from when one_value. */
static ir_stmt *version_of(part *st, ir_stmt *s, const inside *in, te_expr *from, te_expr *to,
                           ir_map *known, bool one_value) {
  te_expr *ext;
  ir_stmt *r = rewrite_in(st, s, in->x, from, to, known, &ext);
  ir_analyzer_bind(st->an, in->x, in->min, in->extent); /* the whole range again */
  if (r && one_value && !(r = ir_substitute_stmt(st->ctx, r, 1, &in->x, &from)))
    st->failed = true;
  return st->failed ? NULL : r;
}

/* s as its versions, branching on x. */
static ir_stmt *versions(part *st, ir_stmt *s, const inside *in) {
  te_expr *x = in->x;
  ir_stmt *pre =
      in->lo == in->min ? NULL : version_of(st, s, in, in->min, in->lo, in->pf->pre, true);
  ir_stmt *mid = version_of(st, s, in, in->lo, in->hi, in->pf->main, false);
  ir_stmt *post =
      in->hi == in->end ? NULL : version_of(st, s, in, in->hi, in->end, in->pf->post, true);
  if (st->failed || (!pre && !mid && !post))
    return NULL;
  /* a part whose version is empty still bounds the others' ranges */
  ir_stmt *r = mid;
  bool made = true;
  if (in->lo != in->min) {
    if (mid)
      made = (r = ir_if(ir_le(in->lo, x), mid, pre)) != NULL;
    else
      made = (r = ir_if(ir_lt(x, in->lo), pre, NULL)) != NULL || !pre;
  }
  if (in->hi != in->end && made) {
    if (r)
      made = (r = ir_if(ir_lt(x, in->hi), r, post)) != NULL;
    else
      made = (r = ir_if(ir_le(in->hi, x), post, NULL)) != NULL || !post;
  }
  if (!made)
    st->failed = true;
  return r;
}

static ir_stmt *versioned_loop(part *st, ir_stmt *s, const inside *in);

/* s with the statements that hold guards versioned (x bound to its whole range meanwhile): the
   highest statements that leave no unguarded one to version with them. */
static ir_stmt *version_guarded(part *st, ir_stmt *s, const inside *in) {
  if (!s || st->failed)
    return NULL;
  if (!has_guard(s, in->x, NULL))
    return lp_stmt(st, s);
  if (!transparent(s, in->x) || !saves_code(s, in->x))
    return versions(st, s, in); /* as high as possible: no branch inside a loop for nothing */
  if (s->kind == IR_S_FOR)
    return versioned_loop(st, s, in);
  if (s->kind == IR_S_LET_STMT)
    ir_analyzer_bind_value(st->an, s->exprs[0], s->exprs[1]);
  ir_stmt *r = rebuild_children(st, s, version_guarded, in);
  if (s->kind == IR_S_LET_STMT)
    ir_analyzer_unbind(st->an, s->exprs[0]);
  return r;
}

/* The loop s (bound to its range) with its body's guarded statements versioned. */
static ir_stmt *versioned_loop(part *st, ir_stmt *s, const inside *in) {
  te_expr *y = IR_FOR_VAR(s);
  ir_analyzer_bind(st->an, y, IR_FOR_MIN(s), IR_FOR_EXTENT(s));
  ir_stmt *body = version_guarded(st, IR_FOR_BODY(s), in);
  ir_analyzer_unbind(st->an, y);
  return body ? same_loop(st, s, body) : NULL;
}

static ir_stmt *lp_for(part *st, ir_stmt *s) {
  te_expr *x = IR_FOR_VAR(s), *min = IR_FOR_MIN(s);
  te_expr *end = simp(st, ir_add(min, IR_FOR_EXTENT(s)));
  if (!end)
    return NULL;
  occs os = {0};
  inner in = {0};
  if (s->u.loop.kind != IR_FOR_THREAD)
    collect(st, IR_FOR_BODY(s), x, &in, &os);
  if (st->failed)
    return NULL;
  if (os.n == 0)
    return part_loop(st, s, min, end, st->known);
  part_facts pf = {.pre = copy_known(st), .main = copy_known(st), .post = copy_known(st)};
  if (!pf.pre || !pf.main || !pf.post)
    return NULL;
  if (!steady_range(st, &os, &pf))
    return st->failed ? NULL : part_loop(st, s, min, end, st->known);
  te_expr *lo, *hi;
  if (!clamp_range(st, &pf, min, end, &lo, &hi))
    return NULL;
  inside ins = {x, min, lo, hi, end, &pf, IR_FOR_EXTENT(s)};
  bool parallel = s->u.loop.kind == IR_FOR_PARALLEL, serial = s->u.loop.kind == IR_FOR_SERIAL;
  if ((parallel || (serial && saves_code(IR_FOR_BODY(s), x))) && one_iteration_parts(st, &ins))
    return versioned_loop(st, s, &ins); /* the loop itself: x bound to its whole range */
  ir_stmt *parts[3];
  parts[0] = lo == min ? NULL : part_loop(st, s, min, lo, pf.pre);
  parts[1] = part_loop(st, s, lo, hi, pf.main);
  parts[2] = hi == end ? NULL : part_loop(st, s, hi, end, pf.post);
  if (st->failed)
    return NULL;
  return ir_seq(st->ctx, 3, parts);
}

/* Folds the likely-guards of an IF: atoms known or proved true go, an atom proved false makes
   the condition false. Other conjuncts are kept as they are. */
static ir_stmt *lp_if(part *st, ir_stmt *s) {
  te_expr *cs[LP_MAX_CONJ], *keep[LP_MAX_CONJ];
  int n = conjuncts(s->exprs[0], cs, 0, LP_MAX_CONJ), nkeep = 0;
  if (n < 0)
    return lp_children(st, s); /* too many conjuncts to fold: leave the guard */
  bool is_false = false, changed = false;
  for (int i = 0; i < n && !is_false; i++) {
    if (!is_likely(cs[i])) {
      keep[nkeep++] = cs[i];
      continue;
    }
    te_expr *as[LP_MAX_CONJ];
    int na = conjuncts(cs[i]->args[0], as, 0, LP_MAX_CONJ);
    if (na < 0 || nkeep + na > LP_MAX_CONJ) { /* leave this likely() as it is */
      keep[nkeep++] = cs[i];
      continue;
    }
    for (int k = 0; k < na; k++) {
      te_expr *a = as[k];
      void *fact = st->known ? ir_map_get(st->known, a) : NULL;
      if (fact == KNOWN_TRUE || (!fact && prove(st, a))) {
        changed = true;
      } else if (fact == KNOWN_FALSE || prove(st, ir_not(a))) {
        is_false = true;
        break;
      } else {
        keep[nkeep++] = na == 1 ? cs[i] : likely_of(st, a);
        changed = changed || na != 1;
      }
    }
  }
  ir_stmt *then_s = s->stmts[0], *else_s = s->nstmts > 1 ? s->stmts[1] : NULL;
  if (is_false)
    return else_s ? lp_stmt(st, else_s) : NULL;
  ir_stmt *t = lp_stmt(st, then_s);
  ir_stmt *e = else_s ? lp_stmt(st, else_s) : NULL;
  if (st->failed)
    return NULL;
  if (nkeep == 0)
    return t;
  te_expr *cond = s->exprs[0];
  if (changed) {
    cond = keep[0];
    for (int i = 1; i < nkeep && cond; i++)
      cond = ir_and(cond, keep[i]);
  }
  if (!t && !e)
    return NULL;
  if (!t) { /* only the else branch is left: if (!cond) else */
    cond = ir_not(cond);
    t = e;
    e = NULL;
  }
  if (cond == s->exprs[0] && t == then_s && e == else_s)
    return s;
  ir_stmt *r = cond ? ir_if(cond, t, e) : NULL;
  if (!r)
    st->failed = true;
  return r;
}

/* Statements with one body (ALLOCATE, ATTR, LET_STMT, ...) and sequences, their children
   rewritten by fn. NULL: empty. */
static ir_stmt *rebuild_children(part *st, ir_stmt *s, rewrite_fn fn, const inside *in) {
  if (s->nstmts == 0)
    return s;
  ir_stmt **kids = ir_alloc(st->ctx, s->nstmts * sizeof *kids);
  if (!kids) {
    st->failed = true;
    return NULL;
  }
  bool changed = false;
  for (uint32_t i = 0; i < s->nstmts; i++) {
    kids[i] = s->stmts[i] ? fn(st, s->stmts[i], in) : NULL;
    if (st->failed)
      return NULL;
    changed = changed || kids[i] != s->stmts[i];
  }
  if (s->kind == IR_S_SEQ)
    return changed ? ir_seq(st->ctx, (int)s->nstmts, kids) : s;
  if (!kids[0]) {
    if (s->kind != IR_S_ASSERT)
      return NULL; /* an empty body: nothing to allocate or bind */
    kids[0] = ir_evaluate(ir_i64(st->ctx, 0));
  }
  if (!changed)
    return s;
  ir_stmt *r = ir_stmt_with_children(st->ctx, s, s->exprs, kids);
  if (!r)
    st->failed = true;
  return r;
}

static ir_stmt *lp_child(part *st, ir_stmt *s, const inside *in) {
  (void)in;
  return lp_stmt(st, s);
}

static ir_stmt *lp_children(part *st, ir_stmt *s) {
  return rebuild_children(st, s, lp_child, NULL);
}

static ir_stmt *lp_stmt(part *st, ir_stmt *s) {
  if (!s || st->failed)
    return NULL;
  switch (s->kind) {
  case IR_S_FOR:
    return lp_for(st, s);
  case IR_S_IF:
    return lp_if(st, s);
  case IR_S_LET_STMT: {
    ir_analyzer_bind_value(st->an, s->exprs[0], s->exprs[1]);
    ir_stmt *r = lp_children(st, s);
    ir_analyzer_unbind(st->an, s->exprs[0]);
    return r;
  }
  default:
    return lp_children(st, s);
  }
}

ir_stmt *lw_loop_partition(lw_pass_ctx *p, ir_stmt *s) {
  part st = {.p = p, .ctx = p->ctx, .an = lw_analyzer_new(p)};
  if (!st.an)
    return NULL;
  ir_stmt *r = lp_stmt(&st, s);
  return st.failed ? NULL : r; /* NULL without an error: nothing is left */
}
