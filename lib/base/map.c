/* map.c — pointer -> pointer hash map in the current arena.
 *
 * Open addressing with linear probing; the table doubles at half load. Old tables stay in the
 * arena until it is released (maps are short-lived: one pass, one printout, one substitution).
 */
#include <string.h>

#include "base.h"

static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static bool map_alloc(ir_map *m, size_t cap) {
  const void **keys = ir_alloc(m->ctx, cap * sizeof *keys);
  void **vals = keys ? ir_alloc(m->ctx, cap * sizeof *vals) : NULL;
  if (!vals)
    return false;
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return true;
}

ir_map *ir_map_new(te_ctx *ctx) {
  ir_map *m = ir_alloc(ctx, sizeof *m);
  if (!m)
    return NULL;
  m->ctx = ctx;
  if (!map_alloc(m, 16))
    return NULL;
  return m;
}

static size_t find_slot(const ir_map *m, const void *key) {
  size_t mask = m->cap - 1, i = ptr_hash(key) & mask;
  while (m->keys[i] && m->keys[i] != key)
    i = (i + 1) & mask;
  return i;
}

void *ir_map_get(const ir_map *m, const void *key) {
  if (!m || !key)
    return NULL;
  size_t i = find_slot(m, key);
  return m->keys[i] ? m->vals[i] : NULL;
}

bool ir_map_has(const ir_map *m, const void *key) {
  if (!m || !key)
    return false;
  return m->keys[find_slot(m, key)] != NULL;
}

static bool grow(ir_map *m) {
  const void **okeys = m->keys;
  void **ovals = m->vals;
  size_t ocap = m->cap;
  if (!map_alloc(m, ocap * 2))
    return false;
  m->count = 0;
  for (size_t i = 0; i < ocap; i++)
    if (okeys[i]) {
      size_t j = find_slot(m, okeys[i]);
      m->keys[j] = okeys[i];
      m->vals[j] = ovals[i];
      m->count++;
    }
  return true;
}

bool ir_map_put(ir_map *m, const void *key, void *val) {
  if (!m || !key)
    return false;
  if ((m->count + 1) * 2 > m->cap && !grow(m))
    return false;
  size_t i = find_slot(m, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->count++;
  }
  m->vals[i] = val;
  return true;
}
