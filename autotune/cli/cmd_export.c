/* cmd_export.c — `te-tune export`: the best schedule of a workload compiled ahead of time into a
 * static library and a header (te_module_save), for programs that link only libte_runtime.
 */
#include <string.h>

#include "cli.h"

static void help(void) {
  printf("usage: te-tune export --out DIR/NAME [--log F] [--target T] [WORKLOAD | --key K]\n"
         "\n"
         "Replays the best record of the workload for the target (default \"" CLI_DEFAULT_TARGET
         "\")\n"
         "and writes DIR/libNAME.a and DIR/NAME.h: one kernel called NAME (a C identifier) whose\n"
         "arguments are the workload's inputs then its output, as DLTensor pointers. Link it with\n"
         "libte_runtime and libm. DIR must exist.\n"
         "\n"
         "exit status: 0 written, 1 the schedule or the build failed, 2 usage error, 3 no record,\n"
         "             4 the files cannot be written or the log read\n");
}

static int export_best(const at_record *r, cli_workload *w, const char *tstr, const char *out) {
  const char *slash = strrchr(out, '/');
  const char *name = slash ? slash + 1 : out;
  te_target *t = te_target_parse(w->ctx, tstr);
  te_schedule *s = t ? te_schedule_new(w->ctx, w->wl.nout, w->wl.outs) : NULL;
  te_module *mod = NULL;
  if (!s || te_schedule_replay(s, r->trace) != TE_OK ||
      te_build(s, name, w->wl.nargs, w->wl.args, 0, NULL, t, &mod) != TE_OK) {
    fprintf(stderr, "te-tune export: %s\n", te_last_error(w->ctx));
    return te_last_status(w->ctx) == TE_ERR_INVALID_ARG ? CLI_USAGE : CLI_FAIL;
  }
  te_status st = te_module_save(mod, out, TE_SAVE_STATIC_LIB | TE_SAVE_HEADER);
  if (st != TE_OK) {
    fprintf(stderr, "te-tune export: %s\n", te_last_error(w->ctx));
    return st == TE_ERR_IO ? CLI_IO : CLI_FAIL;
  }
  printf("wrote %.*slib%s.a and %s.h (kernel %s, %.2f %s when tuned)\n",
         (int)(slash ? slash - out + 1 : 0), out, name, out, name, at_record_gops(r),
         at_record_rate_unit(r));
  return CLI_OK;
}

static int export_action(const at_log *log, int best, cli_workload *w, const char *tstr,
                         const char *out) {
  return export_best(&log->rec[best], w, tstr, out);
}

int cmd_export(int argc, char **argv) {
  return cli_run_on_best(argc, argv, "export", "DIR/NAME", help, export_action);
}
