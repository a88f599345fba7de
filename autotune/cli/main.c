/* main.c — te-tune: the autotuner's command line (README.md, section te-tune).
 *
 *   te-tune tune OP K=V... [options]   search schedules, append measurements to a tuning log
 *   te-tune best  [--log F]            the best record per workload and target
 *   te-tune show  [--as-c | --ir]      the best schedule of a workload (trace, C code, loop IR)
 *   te-tune export --out DIR/NAME      the best schedule compiled into libNAME.a + NAME.h
 *   te-tune plot  --out PREFIX         the tuning curve as PREFIX.csv and PREFIX.svg
 *   te-tune tune-tasks TASKS --trials N  a model's kernels, one budget, one log (task scheduler)
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: te-tune <command> [options]   (te %s)\n"
      "\n"
      "commands:\n"
      "  tune    search schedules for a workload and append every measurement to a log\n"
      "  best    the best record of each workload and target in a log\n"
      "  show    the best schedule of a workload: its trace, --as-c a C program, --ir loop IR\n"
      "  export  the best schedule compiled into a static library and a header\n"
      "  plot    the tuning curve (best GFLOP/s vs trials and vs seconds): CSV and SVG\n"
      "  tune-tasks  every kernel of a model (a task file) with one trial budget, given to\n"
      "          the kernels by expected gain of the model's latency; one log\n"
      "\n"
      "A workload is an operator of ops.h with its parameters (`matmul M=1024 N=1024 K=1024\n"
      "--dtype f32`, see `te-tune tune --help`) or a workload text in one argument\n"
      "(`'C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[64, 32], B: f32[32, 48], k: [0, 32)'`).\n"
      "`te-tune <command> --help` describes each command.\n"
      "\n"
      "exit status: 0 success, 1 te failed (tuning, a schedule or a build), 2 usage error,\n"
      "             3 no record for the workload and target, 4 I/O error (log, output files)\n",
      TE_VERSION_STRING);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
    usage(stdout);
    return CLI_OK;
  }
  if (!strcmp(cmd, "--version")) {
    printf("te-tune %s\n", TE_VERSION_STRING);
    return CLI_OK;
  }
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } cmds[] = {{"tune", cmd_tune},     {"best", cmd_best}, {"show", cmd_show},
              {"export", cmd_export}, {"plot", cmd_plot}, {"tune-tasks", cmd_tune_tasks}};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (!strcmp(cmd, cmds[i].name))
      return cmds[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "te-tune: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return CLI_USAGE;
}
