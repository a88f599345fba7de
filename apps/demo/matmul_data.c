/* matmul_data.c — the demo's buffers, its plain reference, the checks and the timing (demo.h). */
#define _POSIX_C_SOURCE 200809L
#include "demo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double dm_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* xorshift64: the same inputs every run. */
static float rand_nonzero(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *state = x;
  double u = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
  double mag = 0.1 + 0.9 * u;
  return (float)((x & 1) ? mag : -mag);
}

static void *alloc64(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64); }

static void make_tensor(DLTensor *t, float *data, int64_t *shape) {
  memset(t, 0, sizeof *t);
  t->data = data;
  t->device = (DLDevice){kDLCPU, 0};
  t->ndim = 2;
  t->dtype = (DLDataType){kDLFloat, 32, 1};
  t->shape = shape;
  t->strides = NULL; /* compact row-major */
}

/* The plain reference, in double, i-k-j so that rows of B stream. */
static void reference(dm_data *d) {
  int n = d->n;
  for (int i = 0; i < n; i++) {
    double *r = d->ref + (size_t)i * n, *ra = d->ref_abs + (size_t)i * n;
    for (int j = 0; j < n; j++)
      r[j] = ra[j] = 0;
    for (int k = 0; k < n; k++) {
      double aik = d->a[(size_t)i * n + k];
      const float *brow = d->b + (size_t)k * n;
      for (int j = 0; j < n; j++) {
        double p = aik * brow[j];
        r[j] += p;
        ra[j] += fabs(p);
      }
    }
  }
}

bool dm_data_init(dm_data *d, int n) {
  memset(d, 0, sizeof *d);
  size_t nn = (size_t)n * n;
  d->n = n;
  d->a = alloc64(sizeof(float) * nn);
  d->b = alloc64(sizeof(float) * nn);
  d->c = alloc64(sizeof(float) * nn);
  d->ref = malloc(sizeof(double) * nn);
  d->ref_abs = malloc(sizeof(double) * nn);
  if (!d->a || !d->b || !d->c || !d->ref || !d->ref_abs) {
    dm_data_free(d);
    return false;
  }
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (size_t x = 0; x < nn; x++)
    d->a[x] = rand_nonzero(&state);
  for (size_t x = 0; x < nn; x++)
    d->b[x] = rand_nonzero(&state);
  d->shape[0] = d->shape[1] = n;
  make_tensor(&d->ta, d->a, d->shape);
  make_tensor(&d->tb, d->b, d->shape);
  make_tensor(&d->tc, d->c, d->shape);
  reference(d);
  return true;
}

void dm_data_free(dm_data *d) {
  free(d->a);
  free(d->b);
  free(d->c);
  free(d->ref);
  free(d->ref_abs);
  memset(d, 0, sizeof *d);
}

void dm_poison(dm_data *d) {
  for (size_t x = 0; x < (size_t)d->n * d->n; x++)
    d->c[x] = NAN;
}

double dm_check(const dm_data *d, double tol, long *where) {
  double worst = 0;
  *where = -1;
  for (size_t x = 0; x < (size_t)d->n * d->n; x++) {
    double err = fabs((double)d->c[x] - d->ref[x]) / d->ref_abs[x];
    if (!(err <= tol) && *where < 0) /* NaN (an element never written) fails too */
      *where = (long)x;
    if (!(err <= worst))
      worst = isnan(err) ? INFINITY : err;
  }
  return worst;
}

double dm_tolerance(int n) { return 5e-7 * sqrt((double)n); }

/* One checked run: C poisoned, computed (timed into *dt), compared. */
static bool checked_run(dm_data *d, dm_run_fn run, void *user, dm_timing *t, double *dt) {
  dm_poison(d);
  double t0 = dm_now_s();
  if (run(user, t->msg, sizeof t->msg))
    return false;
  *dt = dm_now_s() - t0;
  long where;
  t->err = fmax(t->err, dm_check(d, dm_tolerance(d->n), &where));
  if (where >= 0) {
    snprintf(t->msg, sizeof t->msg, "wrong result at C[%ld, %ld]: %g, expected %g", where / d->n,
             where % d->n, (double)d->c[where], d->ref[where]);
    return false;
  }
  return true;
}

void dm_time(dm_data *d, dm_run_fn run, void *user, double min_s, dm_timing *t) {
  if (t->rounds++ == 0)
    t->ok = true, t->err = 0, t->runs = 0, t->fastest_s = INFINITY, t->msg[0] = '\0';
  double dt;
  if (!t->ok || !checked_run(d, run, user, t, &dt)) {
    t->ok = false;
    return;
  }
  if (dt > min_s) { /* a slow variant: its checked run says enough */
    t->fastest_s = fmin(t->fastest_s, dt);
    t->runs++;
    return;
  }
  double total = 0; /* the checked run warmed the caches; the timed runs follow back to back */
  for (int r = 0; r < 3 || total < min_s; r++) {
    double t0 = dm_now_s();
    if (run(user, t->msg, sizeof t->msg)) {
      t->ok = false;
      return;
    }
    dt = dm_now_s() - t0;
    t->fastest_s = fmin(t->fastest_s, dt);
    t->runs++;
    total += dt;
  }
  if (!checked_run(d, run, user, t, &dt)) /* still right after many runs */
    t->ok = false;
}
