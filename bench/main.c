/* main.c — te-bench: te against OpenBLAS, oneDNN, Halide 14 and plain C (issue 4).
 *
 *   te-bench [--quick] [--only WORKLOAD] [--out PATH] [--threads N] [--ir] [--asm] [--tuned LOG]
 *            [--rounds N]
 *
 * Measures the machine first (FMA, vpdpbusd and vdpbf16ps peaks, memory bandwidth, 1 and N
 * threads), then runs the workloads (sgemm, int8gemm, bf16gemm, int8conv, bf16conv, conv2d,
 * blur, softmax, layernorm; --only picks one, or "peak" for the machine only) and prints one table
 * with every result, its fraction of the machine's peak and te's ratio to each anchor, including
 * compile times (each the median of three builds from scratch, te's and Halide's alike). The same
 * rows go to PATH as JSON (default: bench/results.json in the source tree). Exit status: 0 when
 * every variant computed the right result, 1 when any mismatched, 2 on bad usage. Run it with
 * OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (`make bench` does), or OpenBLAS may pick a slower
 * kernel than this CPU deserves.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"
#include "halide_bench.h"
#include "peak.h"
#include "report.h"
#include "te_util.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TE_BENCH_DEFAULT_OUT
#define TE_BENCH_DEFAULT_OUT "bench/results.json"
#endif

typedef struct workload {
  const char *name;
  void (*run)(const bench_cfg *);
} workload;

static const workload workloads[] = {
    {"sgemm", wl_sgemm},       {"int8gemm", wl_int8gemm}, {"bf16gemm", wl_bf16gemm},
    {"int8conv", wl_int8conv}, {"bf16conv", wl_bf16conv}, {"conv2d", wl_conv2d},
    {"blur", wl_blur},         {"softmax", wl_softmax},   {"layernorm", wl_layernorm},
};
enum { NWORKLOADS = sizeof workloads / sizeof workloads[0] };

static void usage(FILE *f) {
  fprintf(f, "usage: te-bench [--quick] [--only WORKLOAD] [--out PATH] [--threads N] [--ir] "
             "[--asm]\n                [--tuned LOG] [--rounds N]\n"
             "  --quick       small sizes and short timing (a smoke run)\n"
             "  --only W      one workload: peak");
  for (int i = 0; i < NWORKLOADS; i++)
    fprintf(f, ", %s", workloads[i].name);
  fprintf(f,
          "\n  --out PATH    JSON results (default %s)\n"
          "  --threads N   the multi-thread count (default 2); 1 and N are measured\n"
          "  --ir          print the lowered IR of every te kernel (stderr)\n"
          "  --asm         and its assembly\n"
          "  --tuned LOG   also time the best schedules of a te-tune log (workloads \"sgemm N\n"
          "                tuned\", \"conv2d ... tuned\", \"blur ... tuned\", \"softmax ...\n"
          "                tuned\", \"layernorm ... tuned\": te_apply_best's kernel against the\n"
          "                anchor and te's hand schedule; variant \"te-tuned\" of the int8 and\n"
          "                bf16 GEMM rows, docs/tuning-space.md)\n"
          "  --rounds N    time te and its anchors in N alternating rounds, each row's median\n"
          "                over all of them (default 3; --quick: 1)\n",
          TE_BENCH_DEFAULT_OUT);
}

static int parse_args(int argc, char **argv, bench_cfg *cfg, const char **out) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--quick") == 0)
      cfg->quick = 1;
    else if (strcmp(a, "--only") == 0 && i + 1 < argc)
      cfg->only = argv[++i];
    else if (strcmp(a, "--ir") == 0)
      tb_show_ir = 1;
    else if (strcmp(a, "--asm") == 0)
      tb_show_ir = 2;
    else if (strcmp(a, "--out") == 0 && i + 1 < argc)
      *out = argv[++i];
    else if (strcmp(a, "--tuned") == 0 && i + 1 < argc)
      cfg->tuned_log = argv[++i];
    else if (strcmp(a, "--rounds") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
             atoi(argv[i + 1]) <= 20)
      cfg->rounds = atoi(argv[++i]);
    else if (strcmp(a, "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
             atoi(argv[i + 1]) <= 2)
      cfg->max_threads = atoi(argv[++i]);
    else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(0);
    } else {
      usage(stderr);
      return 0;
    }
  }
  if (cfg->only && strcmp(cfg->only, "peak") != 0) {
    for (int i = 0; i < NWORKLOADS; i++)
      if (strcmp(cfg->only, workloads[i].name) == 0)
        return 1;
    fprintf(stderr, "te-bench: unknown workload '%s'\n", cfg->only);
    usage(stderr);
    return 0;
  }
  return 1;
}

/* Builds and runs a trivial te kernel: LLVM's one-time setup is not charged to the first timed
   compile, and a te that cannot build anything is reported once, plainly. */
static void te_warm_up(void) {
  te_ctx *ctx = te_ctx_new();
  te_expr *n = te_int(ctx, 64), *i = te_var(ctx, "i");
  te_tensor *a = te_placeholder(ctx, "a", TE_F32, 1, TE_EXPRS(n));
  te_tensor *b = te_compute(ctx, "b", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_add(TE_AT(a, i), te_float(ctx, TE_F32, 1.0)));
  te_schedule *s = te_schedule_new(ctx, 1, &b);
  te_target *t = te_target_parse(ctx, "llvm -mcpu=native");
  te_module *m = NULL;
  if (s && t)
    te_build(s, "warm_up", 2, (te_tensor *const[]){a, b}, 0, NULL, t, &m);
  if (te_last_status(ctx) != TE_OK)
    fprintf(stderr, "te-bench: te cannot build a trivial kernel: %s\n", te_last_error(ctx));
  bench_meta("te", TE_VERSION_STRING);
  bench_meta("te target", t ? te_target_str(t) : te_last_error(ctx));
  te_ctx_free(ctx);
}

static void machine(const bench_cfg *cfg, bench_machine *m) {
  fprintf(stderr, "measuring the machine (FMA peak, bandwidth)\n");
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    m->fma_gflops[t] = peak_fma_gflops(t, cfg->quick);
    peak_bandwidth_gbs(t, cfg->quick, &m->copy_gbs[t], &m->triad_gbs[t]);
    const char *fma = peak_fma_kind();
    if (fma && !strcmp(fma, "avx2"))
      bench_add_peak("machine", "fma-avx2", t, m->fma_gflops[t], "GFLOP/s",
                     "12 chains of _mm256_fmadd_ps");
    else
      bench_add_peak("machine", "fma-avx512", t, m->fma_gflops[t], "GFLOP/s",
                     "16 chains of _mm512_fmadd_ps");
    m->vnni_gops[t] = peak_vnni_gops(t, cfg->quick);
    if (m->vnni_gops[t] > 0)
      bench_add_peak("machine", "vpdpbusd", t, m->vnni_gops[t], "GOP/s",
                     "16 chains of vpdpbusd (assembly), 128 int ops each: int8 rows' peak");
    m->bf16_gflops[t] = peak_bf16_gflops(t, cfg->quick);
    if (m->bf16_gflops[t] > 0)
      bench_add_peak("machine", "vdpbf16ps", t, m->bf16_gflops[t], "GFLOP/s",
                     "16 chains of vdpbf16ps (assembly), 64 flops each: bf16 rows' peak");
    bench_add_peak("machine", "copy", t, m->copy_gbs[t], "GB/s", "a[i] = b[i], 8 B/element");
    bench_add_peak("machine", "triad", t, m->triad_gbs[t], "GB/s",
                   "a[i] = b[i] + s*c[i], 12 B/element");
  }
}

static void describe_anchors(void) {
  char buf[200];
  snprintf(buf, sizeof buf, "%s (core %s)", openblas_get_config(), openblas_get_corename());
  bench_meta("openblas", buf);
  const char *ct = getenv("OPENBLAS_CORETYPE"), *l2 = getenv("OPENBLAS_L2_SIZE");
  if (ct || l2) {
    snprintf(buf, sizeof buf,
             "OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s are set: OpenBLAS may not "
             "use its best kernel (make bench unsets them)",
             ct ? ct : "", l2 ? l2 : "");
    bench_meta("warning", buf);
    fprintf(stderr, "te-bench: %s\n", buf);
  }
  dnnl_version_str(buf, sizeof buf);
  bench_meta("onednn", buf);
  hl_target_str(buf, sizeof buf);
  bench_meta("halide", buf);
}

int main(int argc, char **argv) {
  bench_cfg cfg = {0.3, 5, 50, 2.0, 3, 0, NULL, 2, NULL, 0};
  const char *out = TE_BENCH_DEFAULT_OUT;
  if (!parse_args(argc, argv, &cfg, &out))
    return 2;
  if (cfg.quick)
    cfg.min_time_s = 0.05;
  if (cfg.rounds == 0)
    cfg.rounds = cfg.quick ? 1 : 3;
  char cmdline[512] = "";
  for (int i = 0; i < argc; i++) {
    size_t len = strlen(cmdline);
    snprintf(cmdline + len, sizeof cmdline - len, "%s%s", i ? " " : "", argv[i]);
  }
  double t0 = bench_now();
  omp_set_num_threads(cfg.max_threads);
  te_warm_up();
  hl_warm_up();
  describe_anchors();
  bench_machine m = {{0}, {0}, {0}, {0}, {0}};
  machine(&cfg, &m);
  for (int i = 0; i < NWORKLOADS; i++)
    if (bench_selected(&cfg, workloads[i].name))
      workloads[i].run(&cfg);
  int bad = bench_report(&m, out, cmdline, bench_now() - t0);
  if (bad)
    fprintf(stderr, "te-bench: %d result(s) did not match the reference\n", bad);
  return bad ? 1 : 0;
}
