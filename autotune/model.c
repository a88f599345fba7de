/* model.c — the cost model: XGBoost regression from loop-nest features to relative throughput.
 *
 * Every measured candidate is a sample (its features; its throughput, 0 when it failed). The
 * label is throughput / best throughput so far, in [0, 1], so the model ranks candidates rather
 * than predicting seconds; it is retrained from scratch after each round (a few hundred samples
 * train in milliseconds). Samples of other workloads (transfer.c) come labelled already, relative
 * to their own workload's best, so a new workload's model starts trained. XGBoost runs
 * single-threaded: the tuner forks children that run OpenMP kernels, and a parent that never
 * started an OpenMP thread pool forks cleanly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "at.h"

enum { MIN_SAMPLES = 8, ROUNDS = 60 };

struct at_model {
  uint64_t seed;
  int n, cap;
  float *x; /* n rows of AT_NFEAT */
  double *thr;
  bool *prior; /* the sample's thr is already a label (another workload's relative throughput) */
  BoosterHandle booster;
  bool trained;
};

at_model *at_model_new(uint64_t seed) {
  at_model *m = ir_calloc(NULL, 1, sizeof *m);
  if (m)
    m->seed = seed;
  return m;
}

void at_model_free(at_model *m) {
  if (!m)
    return;
  if (m->booster)
    XGBoosterFree(m->booster);
  free(m->x);
  free(m->thr);
  free(m->prior);
  free(m);
}

static bool add(at_model *m, const float *feat, double value, bool prior) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 64;
    float *x = ir_realloc(NULL, m->x, sizeof(float) * AT_NFEAT * (size_t)cap);
    if (!x)
      return false;
    m->x = x;
    double *t = ir_realloc(NULL, m->thr, sizeof(double) * (size_t)cap);
    if (!t)
      return false;
    m->thr = t;
    bool *p = ir_realloc(NULL, m->prior, sizeof(bool) * (size_t)cap);
    if (!p)
      return false;
    m->prior = p;
    m->cap = cap;
  }
  memcpy(m->x + (size_t)m->n * AT_NFEAT, feat, sizeof(float) * AT_NFEAT);
  m->prior[m->n] = prior;
  m->thr[m->n++] = value > 0 ? value : 0;
  return true;
}

bool at_model_add(at_model *m, const float *feat, double throughput) {
  return add(m, feat, throughput, false);
}

bool at_model_add_prior(at_model *m, const float *feat, double relative) {
  return add(m, feat, relative > 1 ? 1 : relative, true);
}

int at_model_count(const at_model *m) { return m->n; }

bool at_model_ready(const at_model *m) { return m->trained; }

static bool set_params(BoosterHandle b, uint64_t seed) {
  char s[32];
  snprintf(s, sizeof s, "%llu", (unsigned long long)(seed % 2147483647u));
  const char *kv[][2] = {{"objective", "reg:squarederror"},
                         {"max_depth", "6"},
                         {"eta", "0.2"},
                         {"min_child_weight", "1"},
                         {"subsample", "1"},
                         {"nthread", "1"},
                         {"verbosity", "0"},
                         {"seed", s}};
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
    if (XGBoosterSetParam(b, kv[i][0], kv[i][1]) != 0)
      return false;
  return true;
}

bool at_model_train(at_model *m) {
  double best = 0;
  int nonzero = 0;
  for (int i = 0; i < m->n; i++) {
    if (!m->prior[i])
      best = m->thr[i] > best ? m->thr[i] : best;
    nonzero += m->thr[i] > 0;
  }
  if (m->n < MIN_SAMPLES || nonzero < 2)
    return false;
  float *y = ir_malloc(NULL, sizeof(float) * (size_t)m->n);
  if (!y)
    return false;
  for (int i = 0; i < m->n; i++)
    y[i] = (float)(m->prior[i] ? m->thr[i] : best > 0 ? m->thr[i] / best : 0);
  DMatrixHandle d = NULL;
  BoosterHandle b = NULL;
  bool ok = XGDMatrixCreateFromMat(m->x, (bst_ulong)m->n, AT_NFEAT, -1e30f, &d) == 0 &&
            XGDMatrixSetFloatInfo(d, "label", y, (bst_ulong)m->n) == 0 &&
            XGBoosterCreate(&d, 1, &b) == 0 && set_params(b, m->seed);
  for (int it = 0; ok && it < ROUNDS; it++)
    ok = XGBoosterUpdateOneIter(b, it, d) == 0;
  free(y);
  if (d)
    XGDMatrixFree(d);
  if (!ok) {
    if (b)
      XGBoosterFree(b);
    return false;
  }
  if (m->booster)
    XGBoosterFree(m->booster);
  m->booster = b;
  m->trained = true;
  return true;
}

bool at_model_predict(at_model *m, int n, const float *feats, float *out) {
  if (!m->trained || n <= 0)
    return false;
  DMatrixHandle d = NULL;
  bst_ulong len = 0;
  const float *res = NULL;
  bool ok = XGDMatrixCreateFromMat(feats, (bst_ulong)n, AT_NFEAT, -1e30f, &d) == 0 &&
            XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res) == 0 && len == (bst_ulong)n;
  if (ok)
    memcpy(out, res, sizeof(float) * (size_t)n);
  if (d)
    XGDMatrixFree(d);
  return ok;
}
