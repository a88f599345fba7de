/* vulkan_entry.c — the entry checks of a vulkan module: the statement lowering's make_entry
 * wrote in front of the compute_scope (asserts on the DLTensors, lets of the sizes and data
 * pointers, an `if` around the stride checks, `bind` of each buffer), run on the host at every
 * call.
 *
 * The module has no LLVM code on the host, so te_build compiles the statement into a flat list of
 * steps whose expressions are host programs (vulkan_prog.c), and te_module_call runs them in
 * order before it copies anything: the same checks, in the same order, with the same messages as
 * every other target's entry (the message values are formatted by te_rt_arg_error and
 * te_rt_value_error, as generated code does). What the compute_scope holds — the launches — is
 * the module's plan (vulkan_module.c), not these steps.
 */
#include <stdio.h>
#include <string.h>

#include "te/runtime.h"
#include "vulkan_host.h"

typedef struct entry_builder {
  te_ctx *ctx;
  cg_vk_module *vm;
  lw_func *f;
  cg_vk_slots *slots;
  int n, cap, cap_vars;
  cg_vk_check *steps;
  bool done; /* the compute_scope was reached */
} entry_builder;

static cg_vk_check *add_step(entry_builder *b, cg_vk_check_kind kind) {
  if (b->n == b->cap) {
    int cap = b->cap ? 2 * b->cap : 64;
    cg_vk_check *s = ir_alloc_persistent(b->ctx, sizeof *s * (size_t)cap);
    if (!s)
      return NULL;
    if (b->n)
      memcpy(s, b->steps, sizeof *s * (size_t)b->n);
    b->steps = s, b->cap = cap;
  }
  cg_vk_check *s = &b->steps[b->n++];
  *s = (cg_vk_check){.kind = kind, .slot = -1, .tensor = -1};
  return s;
}

static te_status prog(entry_builder *b, te_expr *e, cg_vk_prog *out) {
  return cg_vk_prog_make(b->ctx, b->f->name, b->slots, e, out);
}

/* The slot of a let's variable: a size's own, else a new one after the others. */
static int let_slot(entry_builder *b, te_expr *var) {
  cg_vk_slots *s = b->slots;
  int n = s->nsizes + s->nscalars + s->nlets;
  for (int i = 0; i < n; i++)
    if (s->vars[i] == var)
      return i;
  if (n == b->cap_vars) {
    int cap = 2 * b->cap_vars + 8;
    te_expr **v = ir_alloc(b->ctx, sizeof *v * (size_t)cap);
    if (!v)
      return -1;
    memcpy(v, s->vars, sizeof *v * (size_t)n);
    s->vars = v, b->cap_vars = cap;
  }
  s->vars[n] = var;
  s->nlets++;
  return n;
}

static int tensor_of_buffer(const entry_builder *b, const ir_buffer *buf) {
  for (int i = 0, t = 0; i < b->f->nargs; i++)
    if (b->f->args[i].is_buffer) {
      if (b->f->args[i].buffer == buf)
        return t;
      t++;
    }
  return -1;
}

static te_status entry_stmt(entry_builder *b, ir_stmt *s);

static te_status entry_assert(entry_builder *b, ir_stmt *s) {
  cg_vk_check *c = add_step(b, CG_VK_ASSERT);
  if (!c)
    return TE_ERR_NOMEM;
  c->status = s->u.assert_.status != TE_OK ? s->u.assert_.status : TE_ERR_RUNTIME;
  c->message = ir_strdup_persistent(b->ctx, s->u.assert_.message ? s->u.assert_.message : "");
  c->nvalues = s->nexprs - 1;
  te_status st = c->message ? prog(b, s->exprs[0], &c->cond) : TE_ERR_NOMEM;
  for (int i = 0; st == TE_OK && i < c->nvalues; i++)
    st = prog(b, s->exprs[i + 1], &c->values[i]);
  return st != TE_OK || s->nstmts == 0 ? st : entry_stmt(b, s->stmts[0]);
}

static te_status entry_let(entry_builder *b, ir_stmt *s) {
  int slot = let_slot(b, s->exprs[0]);
  cg_vk_check *c = slot >= 0 ? add_step(b, CG_VK_LET) : NULL;
  if (!c)
    return TE_ERR_NOMEM;
  c->slot = slot;
  te_status st = prog(b, s->exprs[1], &c->value);
  return st != TE_OK ? st : entry_stmt(b, s->stmts[0]);
}

static te_status entry_if(entry_builder *b, ir_stmt *s) {
  if (s->nstmts > 1 && s->stmts[1])
    return ir_error(b->ctx, TE_ERR_INTERNAL,
                    "internal: te_build: kernel '%s': an else in the entry", b->f->name);
  cg_vk_check *c = add_step(b, CG_VK_IF);
  if (!c)
    return TE_ERR_NOMEM;
  int at = b->n - 1;
  te_status st = prog(b, s->exprs[0], &c->cond);
  if (st == TE_OK)
    st = entry_stmt(b, s->stmts[0]);
  b->steps[at].skip = b->n - at - 1; /* the body's steps (the array may have moved) */
  return st;
}

static te_status entry_attr(entry_builder *b, ir_stmt *s) {
  if (strcmp(s->u.attr.key, "compute_scope") == 0) {
    b->done = true;
    return TE_OK;
  }
  if (strcmp(s->u.attr.key, "buffer_bind") != 0)
    return entry_stmt(b, s->stmts[0]); /* annotations */
  cg_vk_check *c = add_step(b, CG_VK_BIND);
  if (!c)
    return TE_ERR_NOMEM;
  c->tensor = tensor_of_buffer(b, s->u.attr.node);
  if (c->tensor < 0)
    return ir_error(b->ctx, TE_ERR_INTERNAL,
                    "internal: te_build: kernel '%s': the entry binds a buffer that is not an "
                    "argument",
                    b->f->name);
  te_status st = prog(b, s->exprs[0], &c->value);
  return st != TE_OK ? st : entry_stmt(b, s->stmts[0]);
}

static te_status entry_stmt(entry_builder *b, ir_stmt *s) {
  if (!s || b->done)
    return TE_OK;
  switch ((ir_stmt_kind)s->kind) {
  case IR_S_ASSERT:
    return entry_assert(b, s);
  case IR_S_LET_STMT:
    return entry_let(b, s);
  case IR_S_IF:
    return entry_if(b, s);
  case IR_S_ATTR:
    return entry_attr(b, s);
  case IR_S_SEQ:
    for (uint32_t i = 0; i < s->nstmts; i++) {
      te_status st = entry_stmt(b, s->stmts[i]);
      if (st != TE_OK)
        return st;
    }
    return TE_OK;
  default:
    return ir_error(b->ctx, TE_ERR_INTERNAL,
                    "internal: te_build: kernel '%s': a '%s' statement in a vulkan entry",
                    b->f->name, ir_stmt_kind_name[s->kind]);
  }
}

te_status cg_vk_entry_make(te_ctx *ctx, cg_vk_module *vm, lw_func *f, cg_vk_slots *slots) {
  entry_builder b = {.ctx = ctx,
                     .vm = vm,
                     .f = f,
                     .slots = slots,
                     .cap_vars = slots->nsizes + slots->nscalars + slots->nlets};
  te_status st = entry_stmt(&b, f->body);
  if (st == TE_OK && !b.done)
    st = ir_error(ctx, TE_ERR_INTERNAL,
                  "internal: te_build: kernel '%s' has no compute_scope (make_entry must run)",
                  f->name);
  vm->nchecks = b.n;
  vm->checks = b.steps;
  vm->nslots = slots->nsizes + slots->nscalars + slots->nlets;
  return st;
}

/* The failed check's message, completed with its values as the runtime writes them. */
static te_status entry_fail(te_module *m, const cg_vk_check *c, const int64_t *v) {
  cg_vk_module *vm = m->vk;
  if (c->nvalues == 2)
    te_rt_arg_error(c->status, c->message, v[0], v[1]);
  else if (c->nvalues == 1)
    te_rt_value_error(c->status, c->message, v[0]);
  else
    te_rt_error(c->status, c->message);
  return ir_error(m->ctx, c->status, "te_module_call: kernel '%s': %s", vm->name,
                  te_rt_last_error());
}

te_status cg_vk_entry_run(te_module *m, DLTensor *const tensors[], int64_t *slots, char **host) {
  cg_vk_module *vm = m->vk;
  for (int i = 0; i < vm->nchecks; i++) {
    const cg_vk_check *c = &vm->checks[i];
    const char *err;
    int64_t v = 0, vals[2] = {0, 0};
    const cg_vk_prog *p = c->kind == CG_VK_ASSERT || c->kind == CG_VK_IF ? &c->cond : &c->value;
    if (!cg_vk_prog_eval(p, slots, tensors, &v, &err))
      return ir_error(m->ctx, TE_ERR_RUNTIME, "te_module_call: kernel '%s': %s: %s", vm->name,
                      c->message ? c->message : "the entry", err);
    switch (c->kind) {
    case CG_VK_ASSERT:
      if (v)
        break;
      for (int k = 0; k < c->nvalues; k++)
        if (!cg_vk_prog_eval(&c->values[k], slots, tensors, &vals[k], &err))
          return ir_error(m->ctx, TE_ERR_RUNTIME, "te_module_call: kernel '%s': %s: %s", vm->name,
                          c->message, err);
      return entry_fail(m, c, vals);
    case CG_VK_LET:
      slots[c->slot] = v;
      break;
    case CG_VK_BIND:
      host[c->tensor] = (char *)(uintptr_t)v;
      break;
    case CG_VK_IF:
      if (!v)
        i += c->skip;
      break;
    }
  }
  return TE_OK;
}
