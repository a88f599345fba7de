/* simplify_sum.c — the canonical form of integer sums and products.
 *
 * A scalar signed-int expression built from + - * is a polynomial: sum(coeff_i * term_i) + c,
 * each term a product of atoms (variables, divisions, min/max, loads, ...). Like terms merge,
 * zero terms vanish, products of sums distribute (up to 64 monomials, beyond which the factors
 * stay as they are). Division pairs recombine: (x // 4)*4 + x % 4 -> x and x - (x // 4)*4 ->
 * x % 4. Coefficients wrap at the type's width, so the rewrites are exact in every width.
 *
 * The printed form reads as a person writes index arithmetic: the largest strides first, terms
 * with positive coefficients before the ones subtracted, the constant last, a coefficient after
 * its term:  (i.o*32 + i.i)*1024 + k*1 + 0  ->  i.o*32768 + i.i*1024 + k;  n - i*32 - 1.
 * Only when nothing is positive does a negative coefficient print as a factor: x*-1.
 */
#include <stdlib.h>
#include <string.h>

#include "arith_internal.h"

static int64_t wrap(te_dtype t, int64_t v) {
  if (t.bits >= 64)
    return v;
  uint64_t mask = ((uint64_t)1 << t.bits) - 1, u = (uint64_t)v & mask;
  if ((u >> (t.bits - 1)) & 1)
    u |= ~mask;
  return (int64_t)u;
}

static int64_t mulw(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t addw(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

void ir_lin_init(ir_lin *l, te_dtype t) {
  memset(l, 0, sizeof *l);
  l->t = t;
}

void ir_lin_free(ir_lin *l) {
  free(l->m);
  l->m = NULL;
  l->n = l->cap = 0;
}

void ir_lin_push(ir_lin *l, te_expr *term, int64_t coeff) {
  if (!term) { /* a constructor failed (the context holds the error) */
    l->oom = true;
    return;
  }
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    ir_mono *m = ir_realloc(term->ctx, l->m, (size_t)cap * sizeof *m);
    if (!m) {
      l->oom = true;
      return;
    }
    l->m = m;
    l->cap = cap;
  }
  l->m[l->n++] = (ir_mono){term, coeff};
}

/* ---------------------------------------------------------------- products */

typedef struct atoms {
  int n;
  te_expr *a[64];
  bool overflow;
} atoms;

static void collect_atoms(atoms *at, te_expr *e) {
  if (e->kind == IR_MUL) {
    collect_atoms(at, e->args[0]);
    collect_atoms(at, e->args[1]);
  } else if (at->n < 64) {
    at->a[at->n++] = e;
  } else {
    at->overflow = true;
  }
}

/* The canonical product of the atoms of x and y (either may be NULL): atoms sorted by
   descending order, so sizes made before loop variables come last (i*n), multiplied left to
   right. */
static te_expr *product(ir_simp *s, te_expr *x, te_expr *y) {
  if (!x || !y)
    return x ? x : y;
  atoms at = {0};
  collect_atoms(&at, x);
  collect_atoms(&at, y);
  if (at.overflow)
    return ir_mul(x, y);
  for (int i = 1; i < at.n; i++) /* insertion sort: products are short */
    for (int j = i; j > 0 && ir_simp_order(s, at.a[j - 1], at.a[j]) < 0; j--) {
      te_expr *t = at.a[j];
      at.a[j] = at.a[j - 1];
      at.a[j - 1] = t;
    }
  te_expr *r = at.a[0];
  for (int i = 1; i < at.n; i++)
    r = ir_mul(r, at.a[i]);
  return r;
}

void ir_lin_add(ir_simp *s, ir_lin *l, te_expr *e, int64_t scale) {
  int64_t c;
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    l->c = addw(l->c, mulw(e->u.i, scale));
    return;
  case IR_ADD:
    ir_lin_add(s, l, e->args[0], scale);
    ir_lin_add(s, l, e->args[1], scale);
    return;
  case IR_SUB:
    ir_lin_add(s, l, e->args[0], scale);
    ir_lin_add(s, l, e->args[1], mulw(scale, -1));
    return;
  case IR_MUL:
    if (ir_is_const_int(e->args[1], &c))
      return ir_lin_add(s, l, e->args[0], mulw(scale, c));
    if (ir_is_const_int(e->args[0], &c))
      return ir_lin_add(s, l, e->args[1], mulw(scale, c));
    ir_lin_push(l, product(s, e->args[0], e->args[1]), scale);
    return;
  default:
    ir_lin_push(l, e, scale);
    return;
  }
}

/* l = a * b (a, b canonical). */
static void lin_mul(ir_simp *s, ir_lin *l, te_expr *a, te_expr *b) {
  ir_lin A, B;
  ir_lin_init(&A, l->t);
  ir_lin_init(&B, l->t);
  ir_lin_add(s, &A, a, 1);
  ir_lin_add(s, &B, b, 1);
  if ((A.n + 1) * (B.n + 1) > 64) {
    ir_lin_push(l, product(s, a, b), 1);
  } else {
    for (int i = -1; i < A.n; i++)
      for (int j = -1; j < B.n; j++) {
        te_expr *ta = i < 0 ? NULL : A.m[i].term, *tb = j < 0 ? NULL : B.m[j].term;
        int64_t ca = i < 0 ? A.c : A.m[i].coeff, cb = j < 0 ? B.c : B.m[j].coeff;
        if (!ca || !cb)
          continue;
        if (ta || tb)
          ir_lin_push(l, product(s, ta, tb), mulw(ca, cb));
        else
          l->c = addw(l->c, mulw(ca, cb));
      }
  }
  l->oom |= A.oom || B.oom;
  ir_lin_free(&A);
  ir_lin_free(&B);
}

/* ---------------------------------------------------------------- normalization */

/* qsort has no context argument; sorting never re-enters, and contexts may be used from
   several threads at once, hence thread-local. */
static _Thread_local ir_simp *sort_ctx;

static int by_term(const void *x, const void *y) {
  return ir_simp_order(sort_ctx, ((const ir_mono *)x)->term, ((const ir_mono *)y)->term);
}

static void merge(ir_simp *s, ir_lin *l) {
  ir_simp *saved = sort_ctx;
  sort_ctx = s;
  if (l->n > 1)
    qsort(l->m, (size_t)l->n, sizeof *l->m, by_term);
  sort_ctx = saved;
  int k = 0;
  for (int i = 0; i < l->n; i++) {
    if (k > 0 && l->m[k - 1].term == l->m[i].term)
      l->m[k - 1].coeff = addw(l->m[k - 1].coeff, l->m[i].coeff);
    else
      l->m[k++] = l->m[i];
  }
  l->n = k;
  k = 0;
  for (int i = 0; i < l->n; i++) {
    l->m[i].coeff = wrap(l->t, l->m[i].coeff);
    if (l->m[i].coeff)
      l->m[k++] = l->m[i];
  }
  l->n = k;
  l->c = wrap(l->t, l->c);
}

static int find(ir_lin *l, te_expr *term) {
  for (int i = 0; i < l->n; i++)
    if (l->m[i].term == term)
      return i;
  return -1;
}

static void remove_at(ir_lin *l, int i) { l->m[i].coeff = 0; }

/* x - y is a multiple of c: every coefficient of the difference and its constant are. */
static bool congruent(ir_simp *s, te_dtype t, te_expr *x, te_expr *y, int64_t c) {
  ir_lin D;
  ir_lin_init(&D, t);
  ir_lin_add(s, &D, x, 1);
  ir_lin_add(s, &D, y, -1);
  merge(s, &D);
  bool ok = !D.oom && D.c % c == 0;
  for (int i = 0; ok && i < D.n; i++)
    ok = D.m[i].coeff % c == 0;
  ir_lin_free(&D);
  return ok;
}

/* (x // c)*c*k + (y % c)*k -> x*k for a constant c > 0 and x = y (mod c): y % c = x % c. The
   dividends differ once a split loop's stride is reduced inside the modulo only, as in the
   fused-then-split index (o*64 + i) // 56*56 + (o*8 + i) % 56. */
static int congruent_div(ir_simp *s, ir_lin *l, te_expr *y, int64_t c, int64_t k) {
  for (int j = 0; j < l->n; j++) {
    te_expr *d = l->m[j].term;
    int64_t dc;
    if (l->m[j].coeff && d->kind == IR_FLOORDIV && ir_is_const_int(d->args[1], &dc) && dc == c &&
        l->m[j].coeff == wrap(l->t, mulw(k, c)) && congruent(s, l->t, d->args[0], y, c))
      return j;
  }
  return -1;
}

/* (y // b)*b*k + (y % b)*k -> y*k. */
static bool recombine_divmod(ir_simp *s, ir_lin *l, int i) {
  te_expr *m = l->m[i].term, *y = m->args[0], *b = m->args[1];
  int64_t k = l->m[i].coeff, c = 0;
  te_expr *d = ir_floordiv(y, b);
  if (!d)
    return false;
  bool const_b = ir_is_const_int(b, &c);
  int j = find(l, const_b ? d : product(s, d, b));
  if (j < 0 && const_b && c > 0 && (j = congruent_div(s, l, y, c, k)) >= 0)
    y = l->m[j].term->args[0];
  else if (j < 0 || l->m[j].coeff != (const_b ? wrap(l->t, mulw(k, c)) : k))
    return false;
  remove_at(l, i);
  remove_at(l, j);
  ir_lin_add(s, l, y, k);
  return true;
}

/* y*k - (y // c)*c*k -> (y % c)*k, when every term of y is there with k times its
   coefficient. */
static bool recombine_mod(ir_simp *s, ir_lin *l, int i) {
  te_expr *d = l->m[i].term, *y = d->args[0];
  int64_t c, coeff = l->m[i].coeff;
  if (!ir_is_const_int(d->args[1], &c) || c <= 0 || coeff % c != 0)
    return false;
  int64_t k = ir_neg_wrap(coeff / c);
  ir_lin Y;
  ir_lin_init(&Y, l->t);
  ir_lin_add(s, &Y, y, 1);
  bool ok = Y.n > 0 && !Y.oom;
  for (int t = 0; ok && t < Y.n; t++) {
    int j = find(l, Y.m[t].term);
    ok = j >= 0 && j != i && l->m[j].coeff == wrap(l->t, mulw(k, Y.m[t].coeff));
  }
  if (ok) {
    for (int t = 0; t < Y.n; t++)
      remove_at(l, find(l, Y.m[t].term));
    remove_at(l, i);
    l->c = addw(l->c, mulw(ir_neg_wrap(k), Y.c));
    te_expr *mod = ir_simp_floormod(s, y, d->args[1]);
    if (mod)
      ir_lin_add(s, l, mod, k);
    else
      l->oom = true;
  }
  ir_lin_free(&Y);
  return ok;
}

static bool recombine(ir_simp *s, ir_lin *l) {
  if (!ir_arith_index(l->t))
    return false;
  for (int i = 0; i < l->n; i++)
    if (l->m[i].coeff && l->m[i].term->kind == IR_FLOORMOD && recombine_divmod(s, l, i))
      return true;
  for (int i = 0; i < l->n; i++)
    if (l->m[i].coeff && l->m[i].term->kind == IR_FLOORDIV && recombine_mod(s, l, i))
      return true;
  return false;
}

bool ir_lin_normalize(ir_simp *s, ir_lin *l) {
  merge(s, l);
  for (int round = 0; round < 16 && !l->oom && recombine(s, l); round++)
    merge(s, l);
  return !l->oom;
}

/* ---------------------------------------------------------------- building */

static uint64_t uabs(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }

static int degree(te_expr *t) {
  return t->kind == IR_MUL ? degree(t->args[0]) + degree(t->args[1]) : 1;
}

/* Print order: larger |coeff| first, then higher degree, then the term order. */
static int by_print(const void *x, const void *y) {
  const ir_mono *a = x, *b = y;
  uint64_t ua = uabs(a->coeff), ub = uabs(b->coeff);
  if (ua != ub)
    return ua > ub ? -1 : 1;
  int da = degree(a->term), db = degree(b->term);
  if (da != db)
    return da > db ? -1 : 1;
  return ir_simp_order(sort_ctx, a->term, b->term);
}

static bool negatable(te_dtype t, int64_t c) {
  return c < 0 && wrap(t, (int64_t)(0 - (uint64_t)c)) > 0;
}

static te_expr *scaled(ir_simp *s, te_expr *term, int64_t c, te_dtype t) {
  return c == 1 ? term : ir_mul(term, ir_int(s->ctx, t, c));
}

te_expr *ir_lin_build(ir_simp *s, ir_lin *l) {
  te_dtype t = l->t;
  ir_simp *saved = sort_ctx;
  sort_ctx = s;
  if (l->n > 1)
    qsort(l->m, (size_t)l->n, sizeof *l->m, by_print);
  sort_ctx = saved;
  te_expr *acc = NULL;
  for (int i = 0; i < l->n; i++)
    if (!negatable(t, l->m[i].coeff)) {
      te_expr *x = scaled(s, l->m[i].term, l->m[i].coeff, t);
      acc = acc ? ir_add(acc, x) : x;
    }
  bool const_done = false;
  if (!acc && l->c > 0 && l->n > 0) { /* 5 - x */
    acc = ir_int(s->ctx, t, l->c);
    const_done = true;
  }
  for (int i = 0; i < l->n; i++)
    if (negatable(t, l->m[i].coeff)) {
      int64_t c = l->m[i].coeff;
      acc = acc ? ir_sub(acc, scaled(s, l->m[i].term, -c, t)) : scaled(s, l->m[i].term, c, t);
    }
  if (!acc)
    return ir_int(s->ctx, t, l->c);
  if (!const_done && l->c != 0)
    acc = negatable(t, l->c) ? ir_sub(acc, ir_int(s->ctx, t, -l->c))
                             : ir_add(acc, ir_int(s->ctx, t, l->c));
  return acc;
}

te_expr *ir_lin_to_expr(ir_simp *s, ir_lin *l) {
  if (!ir_lin_normalize(s, l)) {
    if (!ir_failed(s->ctx))
      ir_error(s->ctx, TE_ERR_NOMEM, "ir_simplify: out of memory");
    return NULL;
  }
  return ir_lin_build(s, l);
}

te_expr *ir_simp_sum(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  ir_lin l;
  ir_lin_init(&l, a->dtype);
  if (k == IR_MUL) {
    lin_mul(s, &l, a, b);
  } else {
    ir_lin_add(s, &l, a, 1);
    ir_lin_add(s, &l, b, k == IR_SUB ? -1 : 1);
  }
  te_expr *r = ir_lin_to_expr(s, &l);
  ir_lin_free(&l);
  return r;
}
