/* stage.c — te_op_stage: finding an operator's intermediate stage by its predictable name
 * ("<out>_<suffix>") among the tensors the output reads, directly or through other stages, so
 * users can schedule "conv_pad" or "sm_max" with te_stage_of.
 */
#include <stdio.h>
#include <string.h>

#include "ops_internal.h"

/* Depth-first search over the producers of t for a tensor called want; seen guards DAGs. */
static te_tensor *find(te_tensor *t, const char *want, ir_map *seen, int depth) {
  if (!t || depth > 256 || ir_map_has(seen, t))
    return NULL;
  if (!ir_map_put(seen, t, t))
    return NULL;
  if (strcmp(t->name, want) == 0)
    return t;
  te_tensor **in = NULL;
  int n = sch_op_inputs(t->op, &in);
  for (int i = 0; i < n; i++) {
    te_tensor *r = find(in[i], want, seen, depth + 1);
    if (r)
      return r;
  }
  return NULL;
}

te_tensor *te_op_stage(te_tensor *out, const char *suffix) {
  if (!out)
    return NULL;
  te_ctx *ctx = out->ctx;
  if (!suffix || !*suffix || strlen(suffix) > OP_SUFFIX_MAX) {
    ir_error(ctx, TE_ERR_INVALID_ARG,
             "te_op_stage: suffix must be a short non-empty name (got '%.40s')",
             suffix ? suffix : "(null)");
    return NULL;
  }
  char want[256];
  snprintf(want, sizeof want, "%s_%s", out->name, suffix);
  ir_map *seen = ir_map_new(ctx);
  if (!seen)
    return NULL;
  te_tensor *t = find(out, want, seen, 0);
  if (!t)
    ir_error(ctx, TE_ERR_NOT_FOUND, "te_op_stage: '%s' reads no stage called '%s'", out->name,
             want);
  return t;
}
