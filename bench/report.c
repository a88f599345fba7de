/* report.c — collects te-bench's rows, derives fractions of peak and te/anchor ratios, prints the
 * table and writes the machine-readable JSON (report.h).
 *
 * JSON is written by hand (a flat array of flat objects) so the benchmark needs no JSON library.
 */
#define _POSIX_C_SOURCE 200809L

#include "report.h"

#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bench_row *rows;
static int nrows, caprows;

enum { MAX_META = 16 };
static char meta_key[MAX_META][32], meta_val[MAX_META][160];
static int nmeta;

void bench_meta(const char *key, const char *value) {
  if (nmeta == MAX_META)
    return;
  snprintf(meta_key[nmeta], sizeof meta_key[0], "%s", key);
  snprintf(meta_val[nmeta], sizeof meta_val[0], "%s", value ? value : "");
  nmeta++;
}

bench_row *bench_add(const bench_row *r) {
  if (nrows == caprows) {
    int cap = caprows ? 2 * caprows : 64;
    bench_row *n = realloc(rows, sizeof *rows * (size_t)cap);
    if (!n) {
      fprintf(stderr, "te-bench: out of memory\n");
      exit(1);
    }
    rows = n;
    caprows = cap;
  }
  rows[nrows] = *r;
  return &rows[nrows++];
}

static void copy_str(char *dst, size_t size, const char *src) {
  snprintf(dst, size, "%s", src ? src : "");
}

/* A row with its key, kind and note; no fraction of peak yet. */
static bench_row new_row(const char *workload, const char *variant, int threads, row_kind kind,
                         const char *note) {
  bench_row r = {0};
  copy_str(r.workload, sizeof r.workload, workload);
  copy_str(r.variant, sizeof r.variant, variant);
  copy_str(r.note, sizeof r.note, note);
  r.threads = threads;
  r.kind = kind;
  r.frac = -1;
  return r;
}

static bench_row *find_row(const char *workload, const char *variant, int threads) {
  for (int i = 0; i < nrows; i++)
    if (rows[i].threads == threads && strcmp(rows[i].workload, workload) == 0 &&
        strcmp(rows[i].variant, variant) == 0)
      return &rows[i];
  return NULL;
}

void bench_add_timed(const char *workload, const char *variant, int threads, row_kind kind,
                     double work, const double *samples, int nsamples, int slow, int checked,
                     int ok, double max_err, const char *note) {
  bench_row *r = find_row(workload, variant, threads);
  if (!r) {
    bench_row n = new_row(workload, variant, threads, kind, note);
    n.work = work;
    n.slow = slow;
    n.checked = checked;
    n.ok = ok;
    n.max_err = max_err;
    r = bench_add(&n);
  }
  if (r->failed)
    return;
  double *pool = realloc(r->pool, sizeof *pool * (size_t)(r->samples + nsamples));
  if (!pool) {
    fprintf(stderr, "te-bench: out of memory\n");
    exit(1);
  }
  memcpy(pool + r->samples, samples, sizeof *pool * (size_t)nsamples);
  r->pool = pool;
  r->samples += nsamples;
  double median_s = bench_median(pool, r->samples);
  r->ms = median_s * 1e3;
  r->rate = median_s > 0 ? work / median_s * 1e-9 : 0;
}

int bench_row_exists(const char *workload, const char *variant, int threads) {
  return find_row(workload, variant, threads) != NULL;
}

int bench_row_wants_round(const char *workload, const char *variant, int threads) {
  const bench_row *r = find_row(workload, variant, threads);
  return r && r->pool && !r->failed && !r->slow;
}

void bench_add_failed(const char *workload, const char *variant, int threads, const char *why) {
  bench_row *old = find_row(workload, variant, threads);
  if (old) { /* a later round failed: the row's numbers no longer count */
    old->failed = 1;
    copy_str(old->note, sizeof old->note, why);
    return;
  }
  bench_row r = new_row(workload, variant, threads, ROW_FLOPS, why);
  r.failed = 1;
  bench_add(&r);
}

void bench_add_compile(const char *workload, const char *variant, double seconds,
                       const char *note) {
  bench_row r = new_row(workload, variant, 1, ROW_COMPILE, note);
  r.ms = seconds * 1e3;
  r.ok = 1;
  bench_add(&r);
}

void bench_add_peak(const char *workload, const char *variant, int threads, double rate,
                    const char *unit, const char *note) {
  bench_row r = new_row(workload, variant, threads, ROW_PEAK, note);
  copy_str(r.unit, sizeof r.unit, unit);
  r.rate = rate;
  r.ok = 1;
  bench_add(&r);
}

void bench_add_copy(const char *workload, const char *variant, int from_threads, int to_threads,
                    const char *note) {
  const bench_row *from = find_row(workload, variant, from_threads);
  if (!from || find_row(workload, variant, to_threads)) /* none, or a later round */
    return;
  bench_row r = *from;
  r.pool = NULL; /* its numbers stay those of the row copied */
  r.threads = to_threads;
  size_t len = strlen(r.note);
  snprintf(r.note + len, sizeof r.note - len, "%s%s", len ? "; " : "", note);
  bench_add(&r);
}

static const bench_row *find_te(const bench_row *r) {
  for (int i = 0; i < nrows; i++)
    if (!rows[i].failed && strcmp(rows[i].variant, "te") == 0 &&
        strcmp(rows[i].workload, r->workload) == 0 && rows[i].threads == r->threads)
      return &rows[i];
  return NULL;
}

static void derive(const bench_machine *m) {
  for (int i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    int t = r->threads >= 1 && r->threads <= 2 ? r->threads : 0;
    if (r->failed)
      continue;
    if (r->kind == ROW_FLOPS && t && !strncmp(r->workload, "int8", 4))
      r->frac = m->vnni_gops[t] > 0 ? r->rate / m->vnni_gops[t] : -1;
    else if (r->kind == ROW_FLOPS && t && !strncmp(r->workload, "bf16", 4))
      r->frac = m->bf16_gflops[t] > 0 ? r->rate / m->bf16_gflops[t] : -1;
    else if (r->kind == ROW_FLOPS && t && m->fma_gflops[t] > 0)
      r->frac = r->rate / m->fma_gflops[t];
    else if (r->kind == ROW_BYTES && t && m->triad_gbs[t] > 0)
      r->frac = r->rate / m->triad_gbs[t];
    if (strcmp(r->variant, "te") == 0 || r->kind == ROW_PEAK)
      continue;
    const bench_row *te = find_te(r);
    if (te && te->ms > 0 && r->ms > 0) {
      r->has_ratio = 1;
      r->ratio = r->kind == ROW_COMPILE ? te->ms / r->ms : r->ms / te->ms;
    }
  }
}

static const char *unit_of(const bench_row *r) {
  return r->kind == ROW_FLOPS ? "GFLOP/s" : r->kind == ROW_BYTES ? "GB/s" : r->unit;
}

enum { NOTE_WIDTH = 60 }; /* the table shows the start of a note; the JSON has all of it */

static void print_row(const bench_row *r) {
  char rate[32] = "", frac[16] = "", ratio[16] = "", check[32] = "", ms[24] = "";
  if (r->failed) {
    printf("%-22s %-12s %3d %10s %-17s %6s %7s  %-12s %s\n", r->workload, r->variant, r->threads,
           "-", "FAILED", "", "", "", r->note);
    return;
  }
  if (r->kind != ROW_PEAK)
    snprintf(ms, sizeof ms, "%.3f", r->ms);
  if (r->kind != ROW_COMPILE)
    snprintf(rate, sizeof rate, "%.2f %s", r->rate, unit_of(r));
  if (r->frac >= 0)
    snprintf(frac, sizeof frac, "%.0f%%", 100 * r->frac);
  if (r->has_ratio)
    snprintf(ratio, sizeof ratio, "%.2f", r->ratio);
  if (r->checked)
    snprintf(check, sizeof check, "%s %.1e", r->ok ? "ok" : "MISMATCH", r->max_err);
  printf("%-22s %-12s %3d %10s %-17s %6s %7s  %-12s %.*s%s\n", r->workload, r->variant, r->threads,
         ms, rate, frac, ratio, check, NOTE_WIDTH, r->note,
         strlen(r->note) > NOTE_WIDTH ? "..." : "");
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v, int last) {
  fprintf(f, "\"%s\": ", key);
  if (isfinite(v))
    fprintf(f, "%.6g", v);
  else
    fputs("null", f);
  fputs(last ? "" : ", ", f);
}

static void json_row(FILE *f, const bench_row *r) {
  static const char *kinds[] = {"flops", "bytes", "compile", "peak"};
  fputs("    {\"workload\": ", f);
  json_str(f, r->workload);
  fputs(", \"variant\": ", f);
  json_str(f, r->variant);
  fprintf(f, ", \"threads\": %d, \"kind\": \"%s\", \"failed\": %s, ", r->threads, kinds[r->kind],
          r->failed ? "true" : "false");
  json_num(f, "median_ms", r->failed || r->kind == ROW_PEAK ? NAN : r->ms, 0);
  json_num(f, "work", r->kind == ROW_PEAK || r->kind == ROW_COMPILE ? NAN : r->work, 0);
  json_num(f, "rate", r->failed || r->kind == ROW_COMPILE ? NAN : r->rate, 0);
  fprintf(f, "\"rate_unit\": \"%s\", ", unit_of(r));
  json_num(f, "fraction_of_peak", r->frac >= 0 ? r->frac : NAN, 0);
  json_num(f, "te_over_anchor", r->has_ratio ? r->ratio : NAN, 0);
  fprintf(f, "\"samples\": %d, \"checked\": %s, \"correct\": %s, ", r->samples,
          r->checked ? "true" : "false", r->ok ? "true" : "false");
  json_num(f, "max_rel_err", r->checked ? r->max_err : NAN, 0);
  fputs("\"note\": ", f);
  json_str(f, r->note);
  fputs("}", f);
}

static int write_json(const bench_machine *m, const char *path, const char *cmdline,
                      double total_s) {
  FILE *f = fopen(path, "w");
  if (!f)
    return 0;
  time_t now = time(NULL);
  char stamp[64];
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  fputs("{\n  \"format\": \"te-bench/1\",\n  \"timestamp\": ", f);
  json_str(f, stamp);
  fputs(",\n  \"command\": ", f);
  json_str(f, cmdline);
  fprintf(f, ",\n  \"total_seconds\": %.1f,\n  \"meta\": {", total_s);
  for (int i = 0; i < nmeta; i++) {
    json_str(f, meta_key[i]);
    fputs(": ", f);
    json_str(f, meta_val[i]);
    fputs(i + 1 < nmeta ? ", " : "", f);
  }
  fputs("},\n  \"machine\": {", f);
  json_num(f, "fma_gflops_1t", m->fma_gflops[1], 0);
  json_num(f, "fma_gflops_2t", m->fma_gflops[2], 0);
  json_num(f, "vpdpbusd_gops_1t", m->vnni_gops[1], 0);
  json_num(f, "vpdpbusd_gops_2t", m->vnni_gops[2], 0);
  json_num(f, "vdpbf16ps_gflops_1t", m->bf16_gflops[1], 0);
  json_num(f, "vdpbf16ps_gflops_2t", m->bf16_gflops[2], 0);
  json_num(f, "triad_gbs_1t", m->triad_gbs[1], 0);
  json_num(f, "triad_gbs_2t", m->triad_gbs[2], 0);
  json_num(f, "copy_gbs_1t", m->copy_gbs[1], 0);
  json_num(f, "copy_gbs_2t", m->copy_gbs[2], 1);
  fputs("},\n  \"ratio_meaning\": \"timed rows: te speed / this variant's speed (>1: te faster); "
        "compile rows: te time / this variant's time (<1: te faster)\",\n  \"results\": [\n",
        f);
  for (int i = 0; i < nrows; i++) {
    json_row(f, &rows[i]);
    fputs(i + 1 < nrows ? ",\n" : "\n", f);
  }
  fputs("  ]\n}\n", f);
  return fclose(f) == 0;
}

int bench_report(const bench_machine *m, const char *json_path, const char *cmdline,
                 double total_s) {
  derive(m);
  putchar('\n');
  for (int i = 0; i < nmeta; i++)
    printf("%-10s %s\n", meta_key[i], meta_val[i]);
  printf("\n%-22s %-12s %3s %10s %-17s %6s %7s  %-12s %s\n", "workload", "variant", "thr",
         "median ms", "rate", "%peak", "te/x", "check", "note");
  int bad = 0;
  for (int i = 0; i < nrows; i++) {
    if (i > 0 && strcmp(rows[i].workload, rows[i - 1].workload) != 0)
      putchar('\n');
    print_row(&rows[i]);
    if (!rows[i].failed && rows[i].checked && !rows[i].ok)
      bad++;
  }
  printf("\nte/x: on timed rows te's speed over that row's (above 1: te faster); on compile rows "
         "te's compile time over that row's (below 1: te faster).\n%%peak: of the measured FMA "
         "peak for that many threads (GFLOP/s rows; int8 rows: of the measured vpdpbusd peak, "
         "their rate being integer operations; bf16 rows: of the measured vdpbf16ps peak) or of "
         "the measured triad bandwidth (GB/s rows). "
         "Total run time %.1f s.\n",
         total_s);
  if (json_path) {
    if (write_json(m, json_path, cmdline, total_s))
      printf("Results written to %s\n", json_path);
    else
      fprintf(stderr, "te-bench: could not write %s\n", json_path);
  }
  return bad;
}
