/* analyzer.c — the analyzer's memory of variables: ranges, exact values, positivity.
 *
 * Every question the analyzer answers (constant bounds, modular facts, simplification) reads
 * these bindings. A binding is an immutable record in the current arena; rebinding makes a new
 * record, so a pass that descends into a loop keeps the old record (ir_analyzer_lookup) and puts
 * it back on the way out (ir_analyzer_restore). Each change bumps a generation number that
 * invalidates the cached constant bounds.
 */
#include "arith_internal.h"

ir_analyzer *ir_analyzer_new(te_ctx *ctx) {
  if (!ctx)
    return NULL;
  ir_analyzer *an = ir_alloc(ctx, sizeof *an);
  if (!an)
    return NULL;
  an->ctx = ctx;
  an->vars = ir_map_new(ctx);
  an->bound_cache = ir_map_new(ctx);
  if (!an->vars || !an->bound_cache)
    return NULL;
  an->gen = 1;
  return an;
}

const ir_binding *ir_analyzer_lookup(ir_analyzer *an, te_expr *var) {
  if (!an || !var)
    return NULL;
  return ir_map_get(an->vars, var);
}

void ir_analyzer_restore(ir_analyzer *an, te_expr *var, const ir_binding *saved) {
  if (!an || !var)
    return;
  if (!saved && !ir_map_has(an->vars, var))
    return;
  ir_map_put(an->vars, var, (void *)saved);
  an->gen++;
}

/* A new record starting from the current one (or empty). */
static ir_binding *fresh(ir_analyzer *an, te_expr *var) {
  if (!an || !var)
    return NULL;
  if (!ir_check(an->ctx, var->kind == IR_VAR, "ir_analyzer: binding a non-variable"))
    return NULL;
  ir_binding *b = ir_alloc(an->ctx, sizeof *b);
  if (!b)
    return NULL;
  const ir_binding *old = ir_map_get(an->vars, var);
  if (old)
    *b = *old;
  return b;
}

static void install(ir_analyzer *an, te_expr *var, ir_binding *b) {
  if (!b)
    return;
  ir_map_put(an->vars, var, b);
  an->gen++;
}

void ir_analyzer_bind(ir_analyzer *an, te_expr *var, te_expr *min, te_expr *extent) {
  if (!min || !extent)
    return;
  ir_binding *b = fresh(an, var);
  if (!b)
    return;
  b->min = min;
  b->extent = extent;
  b->value = NULL;
  install(an, var, b);
}

void ir_analyzer_bind_value(ir_analyzer *an, te_expr *var, te_expr *value) {
  if (!value)
    return;
  ir_binding *b = fresh(an, var);
  if (!b)
    return;
  b->value = value;
  b->min = b->extent = NULL;
  install(an, var, b);
}

void ir_analyzer_unbind(ir_analyzer *an, te_expr *var) {
  if (!an || !var)
    return;
  ir_analyzer_restore(an, var, NULL);
}

void ir_analyzer_assume_positive(ir_analyzer *an, te_expr *var) {
  ir_binding *b = fresh(an, var);
  if (!b)
    return;
  b->positive = true;
  install(an, var, b);
}
