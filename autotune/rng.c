/* rng.c — the tuner's random numbers, and hashes as hex.
 *
 * xoshiro256** seeded through splitmix64: small, fast, and the same stream on every platform,
 * which is what makes `te-tune --seed` reproducible. Hashes of workload texts and traces (the
 * log's workload key) are ir_str_hash's FNV-1a, the same as te_workload_hash.
 */
#include <stdio.h>

#include "at.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void at_rng_seed(at_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t at_rng_next(at_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

int at_rng_int(at_rng *r, int n) {
  if (n <= 1)
    return 0;
  return (int)(at_rng_next(r) % (uint64_t)n);
}

double at_rng_unit(at_rng *r) { return (double)(at_rng_next(r) >> 11) * 0x1.0p-53; }

void at_hex64(uint64_t h, char out[17]) { snprintf(out, 17, "%016llx", (unsigned long long)h); }
