/* names.c — the names te_workload_text gives: pointer maps, string sets, unique names.
 *
 * A printed name is the object's own name when it is free, else NAME_1, NAME_2, ... skipping
 * every name already given and every object's own name, so printing the parsed text again
 * gives every object its own (by then unique) name back: the text is a fixed point. Global
 * names (tensors, sizes, parameters, reduce axes, reducers) are unique in the text; a
 * statement's index variables and a reducer's variables are unique within it and differ from
 * every global variable (size, parameter, reduce axis); they may share a tensor's name. Keywords
 * (where, true, false, inf, nan) are never given. All memory is malloc'd (printing never grows the
 * context's arenas).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"

/* ---------------------------------------------------------------- pointer map */

static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

bool ps_ptrmap_put(ps_ptrmap *m, const void *k, void *v) {
  if (2 * (m->n + 1) > m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    const void **keys = ir_calloc(NULL, cap, sizeof *keys);
    void **vals = keys ? ir_calloc(NULL, cap, sizeof *vals) : NULL;
    if (!keys || !vals) {
      free(keys);
      free(vals);
      return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i])
        continue;
      size_t j = ptr_hash(m->keys[i]) & (cap - 1);
      while (keys[j])
        j = (j + 1) & (cap - 1);
      keys[j] = m->keys[i];
      vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
  }
  size_t j = ptr_hash(k) & (m->cap - 1);
  while (m->keys[j] && m->keys[j] != k)
    j = (j + 1) & (m->cap - 1);
  if (!m->keys[j])
    m->n++;
  m->keys[j] = k;
  m->vals[j] = v;
  return true;
}

void *ps_ptrmap_get(const ps_ptrmap *m, const void *k) {
  if (!m->cap || !k)
    return NULL;
  size_t j = ptr_hash(k) & (m->cap - 1);
  while (m->keys[j]) {
    if (m->keys[j] == k)
      return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return NULL;
}

void ps_ptrmap_free(ps_ptrmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- string set */

static size_t str_hash(const char *s) { return (size_t)te_workload_hash(s); }

bool ps_strset_has(const ps_strset *s, const char *k) {
  if (!s || !s->cap)
    return false;
  size_t j = str_hash(k) & (s->cap - 1);
  while (s->keys[j]) {
    if (!strcmp(s->keys[j], k))
      return true;
    j = (j + 1) & (s->cap - 1);
  }
  return false;
}

bool ps_strset_add(ps_strset *s, const char *k) {
  if (ps_strset_has(s, k))
    return true;
  if (2 * (s->n + 1) > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    char **keys = ir_calloc(NULL, cap, sizeof *keys);
    if (!keys)
      return false;
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->keys[i])
        continue;
      size_t j = str_hash(s->keys[i]) & (cap - 1);
      while (keys[j])
        j = (j + 1) & (cap - 1);
      keys[j] = s->keys[i];
    }
    free(s->keys);
    s->keys = keys;
    s->cap = cap;
  }
  char *copy = ir_strdup_malloc(NULL, k);
  if (!copy)
    return false;
  size_t j = str_hash(k) & (s->cap - 1);
  while (s->keys[j])
    j = (j + 1) & (s->cap - 1);
  s->keys[j] = copy;
  s->n++;
  return true;
}

void ps_strset_free(ps_strset *s) {
  for (size_t i = 0; i < s->cap; i++)
    free(s->keys[i]);
  free(s->keys);
  memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- names */

const char *ps_names_var(const ps_names *n, const te_expr *var) {
  return ps_ptrmap_get(&n->names, var);
}
const char *ps_names_tensor(const ps_names *n, const te_tensor *t) {
  return ps_ptrmap_get(&n->names, t);
}
const char *ps_names_reducer(const ps_names *n, const ir_custom_reducer *r) {
  return ps_ptrmap_get(&n->names, r);
}
bool ps_names_is_axis(const ps_names *n, const te_expr *var) {
  return ps_ptrmap_get(&n->axes, var) != NULL;
}

/* A name owned by n (freed with it). */
static char *keep(ps_names *n, const char *s) {
  if (n->nstr == n->capstr) {
    int cap = n->capstr ? 2 * n->capstr : 64;
    char **v = ir_realloc(NULL, n->strings, sizeof *v * (size_t)cap);
    if (!v)
      return NULL;
    n->strings = v;
    n->capstr = cap;
  }
  char *c = ir_strdup_malloc(NULL, s);
  if (!c)
    return NULL;
  return n->strings[n->nstr++] = c;
}

const char *ps_names_keep(ps_names *n, const char *s) {
  const char *r = keep(n, s);
  if (!r)
    n->oom = true;
  return r;
}

bool ps_names_set(ps_names *n, const void *key, const char *name) {
  if (!ps_ptrmap_put(&n->names, key, (void *)name))
    return n->oom = true, false;
  return true;
}

/* base as an identifier (names from the C API are; this is a safety net). */
static void sanitize(const char *base, char *out, size_t size) {
  size_t k = 0;
  if (!base || !*base)
    base = "v";
  if (base[0] >= '0' && base[0] <= '9')
    out[k++] = '_';
  for (; *base && k + 1 < size; base++) {
    char c = *base;
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out[k++] = ok ? c : '_';
  }
  out[k] = 0;
}

static bool is_free(ps_names *n, const char *cand, int nderived, const ps_strset *local,
                    bool renamed) {
  if (ps_is_keyword(cand) || ps_strset_has(local ? &n->vars : &n->taken, cand) ||
      ps_strset_has(local, cand))
    return false;
  if (renamed && ps_strset_has(local ? n->local_orig : &n->orig, cand))
    return false;
  char d[320]; /* cand (< 300) and "_v" and a number */
  for (int k = 0; k < nderived; k++) {
    snprintf(d, sizeof d, "%s_v%d", cand, k);
    if (ps_strset_has(&n->taken, d) || (renamed && ps_strset_has(&n->orig, d)))
      return false;
  }
  return true;
}

const char *ps_names_give(ps_names *n, const void *key, const char *base, int nderived,
                          ps_strset *local) {
  char b[256], cand[300];
  sanitize(base, b, sizeof b);
  snprintf(cand, sizeof cand, "%s", b);
  bool renamed = false;
  for (long i = 1; !is_free(n, cand, nderived, local, renamed); i++, renamed = true)
    snprintf(cand, sizeof cand, "%s_%ld", b, i);
  char *name = keep(n, cand);
  ps_strset *set = local ? local : &n->taken;
  if (!name || !ps_strset_add(set, name))
    return n->oom = true, NULL;
  for (int k = 0; k < nderived; k++) {
    snprintf(cand, sizeof cand, "%s_v%d", name, k);
    if (!ps_strset_add(&n->taken, cand))
      return n->oom = true, NULL;
  }
  if (key && !ps_names_set(n, key, name))
    return NULL;
  return name;
}

bool ps_names_var_taken(ps_names *n, const char *name) {
  if (!ps_strset_add(&n->vars, name))
    return n->oom = true, false;
  return true;
}

void ps_names_free(ps_names *n) {
  ps_ptrmap_free(&n->names);
  ps_ptrmap_free(&n->axes);
  ps_strset_free(&n->taken);
  ps_strset_free(&n->orig);
  ps_strset_free(&n->vars);
  for (int i = 0; i < n->nstr; i++)
    free(n->strings[i]);
  free(n->strings);
  memset(n, 0, sizeof *n);
}
