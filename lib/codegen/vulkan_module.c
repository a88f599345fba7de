/* vulkan_module.c — te_build for a "vulkan" target: SPIR-V for every device kernel, and the plan
 * the host side runs at each call (vulkan_call.c).
 *
 * What the module keeps outlives the build's scratch arena, so everything is copied out: the
 * SPIR-V words (malloc'd), the parameters of each kernel as indices (tensor argument, host
 * temporary, slot of a size or scalar) with their push-constant offsets, the launch sizes and
 * the temporaries' sizes as host programs (vulkan_prog.c), and the entry's checks
 * (vulkan_entry.c). Pipelines and
 * device buffers are made at the first call, so building needs no Vulkan driver (a machine
 * without one can still build, validate and print SPIR-V).
 */
#include <stdlib.h>
#include <string.h>

#include "vulkan_host.h"

static void vk_module_free(void *p) {
  cg_vk_module *vm = p; /* the arrays may be missing: a build that ran out of memory */
  for (int i = 0; vm->kernels && i < vm->nkernels; i++) {
    free(vm->kernels[i].words);
    free(vm->kernels[i].plain_words);
    te_rt_vk_kernel_free(vm->kernels[i].pipe);
  }
  for (int i = 0; vm->tensors && i < vm->ntensors; i++)
    te_rt_vk_buffer_free(vm->tensors[i].buf);
  for (int i = 0; vm->temps && i < vm->ntemps; i++)
    te_rt_vk_buffer_free(vm->temps[i].buf);
  free(vm->dis);
}

/* Slots: sizes, then scalars (then the entry's lets, vulkan_entry.c); the tensors. */
static te_status vk_signature(te_ctx *ctx, cg_vk_module *vm, lw_func *f, cg_vk_slots *slots) {
  int nt = 0, ns = 0;
  for (int i = 0; i < f->nargs; i++)
    f->args[i].is_buffer ? nt++ : ns++;
  vm->ntensors = nt, vm->nscalars = ns, vm->nsizes = f->nsizes;
  vm->tensors = ir_alloc_persistent(ctx, sizeof *vm->tensors * (size_t)(nt + 1));
  vm->scalar_dtypes = ir_alloc_persistent(ctx, sizeof(te_dtype) * (size_t)(ns + 1));
  *slots = (cg_vk_slots){.nsizes = f->nsizes, .nscalars = ns, .ntensors = nt};
  slots->vars = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(f->nsizes + ns + 1));
  slots->handles = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(nt + 1));
  if (!vm->tensors || !vm->scalar_dtypes || !slots->vars || !slots->handles)
    return TE_ERR_NOMEM;
  for (int k = 0; k < f->nsizes; k++)
    slots->vars[k] = f->size_vars[k];
  for (int i = 0, s = 0; i < f->nargs; i++)
    if (!f->args[i].is_buffer) {
      slots->vars[f->nsizes + s] = f->args[i].var;
      vm->scalar_dtypes[s++] = f->args[i].var->dtype;
    }
  for (int i = 0, t = 0; i < f->nargs; i++) {
    if (!f->args[i].is_buffer)
      continue;
    ir_buffer *b = f->args[i].buffer;
    slots->handles[t] = f->args[i].handle;
    cg_vk_tensor *vt = &vm->tensors[t++];
    vt->name = ir_strdup_persistent(ctx, b->name);
    vt->ndim = b->ndim, vt->dtype = b->dtype;
    if (!vt->name)
      return TE_ERR_NOMEM;
  }
  return cg_vk_entry_make(ctx, vm, f, slots);
}

/* The tensor index of function argument arg_index (buffers are numbered among tensors). */
static int vk_tensor_index(lw_func *f, int arg_index) {
  int t = 0;
  for (int i = 0; i < f->nargs && i < arg_index; i++)
    t += f->args[i].is_buffer;
  return t;
}

static int vk_temp_index(const lw_gpu_module *g, ir_buffer *b) {
  int t = 0;
  for (int i = 0; i < g->nsteps; i++)
    if (g->steps[i].kind == LW_GPU_STEP_ALLOC) {
      if (g->steps[i].buffer == b)
        return t;
      t++;
    }
  return -1;
}

static int vk_slot_index(const cg_vk_slots *s, te_expr *var) {
  for (int i = 0; i < s->nsizes + s->nscalars; i++)
    if (s->vars[i] == var)
      return i;
  return -1;
}

static te_status vk_params(te_ctx *ctx, cg_vk_module *vm, lw_func *f, const cg_vk_slots *slots,
                           const lw_gpu_kernel *gk, cg_vk_kernel *vk, const cg_spv_push *push) {
  vk->nparams = gk->nparams;
  vk->params = ir_alloc_persistent(ctx, sizeof *vk->params * (size_t)(gk->nparams + 1));
  if (!vk->params)
    return TE_ERR_NOMEM;
  for (int i = 0; i < gk->nparams; i++) {
    const lw_gpu_param *p = &gk->params[i];
    cg_vk_param *q = &vk->params[i];
    *q = (cg_vk_param){.kind = p->kind, .tensor = -1, .temp = -1, .slot = -1, .offset = -1};
    if (p->kind == LW_GPU_PARAM_BUFFER) {
      vk->nbuffers++;
      if (p->buffer->arg_index >= 0) {
        q->tensor = vk_tensor_index(f, p->buffer->arg_index);
        if (p->written && q->tensor < vm->ntensors)
          vm->tensors[q->tensor].written = true;
      } else {
        q->temp = vk_temp_index(f->gpu, p->buffer);
      }
      if (q->tensor < 0 && q->temp < 0)
        return ir_error(ctx, TE_ERR_INTERNAL,
                        "internal: te_build: kernel '%s': buffer '%s' is neither an argument nor "
                        "a host temporary",
                        gk->name, p->buffer->name);
      continue;
    }
    q->slot = vk_slot_index(slots, p->var);
    q->offset = push->offset[i];
    q->mtype = push->mtype[i];
    if (q->slot < 0)
      return ir_error(ctx, TE_ERR_INTERNAL,
                      "internal: te_build: kernel '%s': parameter '%s' is not an argument or size",
                      gk->name, p->var->u.var.name);
  }
  return TE_OK;
}

static te_status vk_kernel(te_ctx *ctx, cg_vk_module *vm, lw_func *f, const cg_vk_slots *slots,
                           const lw_gpu_kernel *gk, cg_vk_kernel *vk) {
  cg_spv_kernel sk;
  te_status st = cg_spv_compile_kernel(ctx, gk, false, &sk);
  if (st != TE_OK)
    return st;
  vk->name = ir_strdup_persistent(ctx, gk->name);
  vk->words = sk.words, vk->nwords = sk.nwords, vk->features = sk.features;
  vk->plain_words = sk.plain_words, vk->plain_nwords = sk.plain_nwords;
  vk->plain_features = sk.plain_features;
  memcpy(vk->local, sk.local, sizeof vk->local);
  vk->shared_bytes = gk->shared_bytes;
  vk->push_bytes = sk.push.bytes;
  if (!vk->name)
    return TE_ERR_NOMEM;
  for (int d = 0; d < 3 && st == TE_OK; d++)
    st = cg_vk_prog_make(ctx, gk->name, slots, gk->grid[d], &vk->grid[d]);
  return st == TE_OK ? vk_params(ctx, vm, f, slots, gk, vk, &sk.push) : st;
}

static te_status vk_steps(te_ctx *ctx, cg_vk_module *vm, lw_func *f, const cg_vk_slots *slots) {
  const lw_gpu_module *g = f->gpu;
  vm->nsteps = g->nsteps;
  vm->steps = ir_alloc_persistent(ctx, sizeof *vm->steps * (size_t)(g->nsteps + 1));
  vm->temps = ir_alloc_persistent(ctx, sizeof *vm->temps * (size_t)(g->nsteps + 1));
  if (!vm->steps || !vm->temps)
    return TE_ERR_NOMEM;
  for (int i = 0; i < g->nsteps; i++) {
    const lw_gpu_step *gs = &g->steps[i];
    cg_vk_step *s = &vm->steps[i];
    *s = (cg_vk_step){.kind = gs->kind, .kernel = gs->kernel, .temp = -1};
    if (gs->kind == LW_GPU_STEP_LAUNCH)
      continue;
    s->temp = vk_temp_index(g, gs->buffer);
    if (gs->kind == LW_GPU_STEP_ALLOC) {
      cg_vk_temp *t = &vm->temps[vm->ntemps++];
      t->name = ir_strdup_persistent(ctx, gs->buffer->name);
      t->dtype = gs->buffer->dtype;
      te_status st = cg_vk_prog_make(ctx, f->name, slots, gs->count, &s->count);
      if (st != TE_OK)
        return st;
    }
  }
  return TE_OK;
}

te_status cg_vulkan_compile(te_module *m, lw_func *f) {
  te_ctx *ctx = m->ctx;
  if (!f->gpu)
    return ir_error(ctx, TE_ERR_INTERNAL,
                    "internal: te_build: kernel '%s': no host/device split for a vulkan target",
                    f->name);
  cg_vk_module *vm = ir_alloc_persistent(ctx, sizeof *vm);
  if (!vm)
    return TE_ERR_NOMEM;
  vm->ctx = ctx;
  vm->name = ir_strdup_persistent(ctx, f->name);
  if (!vm->name || !ir_ctx_on_free(ctx, vk_module_free, vm))
    return TE_ERR_NOMEM; /* vm holds nothing to free yet */
  m->vk = vm;
  cg_vk_slots slots;
  te_status st = vk_signature(ctx, vm, f, &slots);
  if (st == TE_OK) {
    vm->kernels = ir_alloc_persistent(ctx, sizeof *vm->kernels * (size_t)(f->gpu->nkernels + 1));
    st = vm->kernels ? TE_OK : TE_ERR_NOMEM;
  }
  for (int i = 0; st == TE_OK && i < f->gpu->nkernels; i++) {
    st = vk_kernel(ctx, vm, f, &slots, &f->gpu->kernels[i], &vm->kernels[i]);
    vm->nkernels = i + 1; /* the destructor frees what the failed kernel made, if anything */
  }
  if (st == TE_OK)
    st = vk_steps(ctx, vm, f, &slots);
  if (st == TE_OK)
    st = cg_kernel_record(m, f); /* one te_build kernel; the device kernels are its parts */
  return st;
}

const char *cg_vulkan_source(te_module *m) {
  cg_vk_module *vm = m->vk;
  if (!vm)
    return NULL;
  if (vm->dis)
    return vm->dis;
  ir_str out = {.ctx = m->ctx};
  for (int i = 0; i < 2 * vm->nkernels; i++) { /* each kernel, then its plain module if any */
    const cg_vk_kernel *k = &vm->kernels[i / 2];
    bool plain = i % 2 == 1;
    if (plain && !k->plain_words)
      continue;
    char *txt = plain ? cg_spv_disassemble(k->plain_words, k->plain_nwords)
                      : cg_spv_disassemble(k->words, k->nwords);
    if (!txt) {
      ir_str_free(&out);
      ir_error(m->ctx, TE_ERR_INTERNAL,
               "internal: te_module_source: kernel '%s': SPIRV-Tools cannot disassemble it",
               k->name);
      return NULL;
    }
    ir_str_printf(&out, "; kernel %s (%lld x %lld x %lld threads a workgroup)%s\n%s", k->name,
                  (long long)k->local[0], (long long)k->local[1], (long long)k->local[2],
                  plain            ? ", without subgroup operations (for devices lacking them)"
                  : k->plain_words ? ", with subgroup operations"
                                   : "",
                  txt);
    free(txt);
  }
  vm->dis = ir_str_take(&out);
  if (!vm->dis)
    ir_error(m->ctx, TE_ERR_NOMEM, "te_module_source: out of memory");
  return vm->dis;
}

int cg_vulkan_nkernels(const te_module *m) {
  const cg_vk_module *vm = m ? m->vk : NULL;
  return vm ? vm->nkernels : 0;
}

const uint32_t *cg_vulkan_words(const te_module *m, int i, size_t *nwords) {
  const cg_vk_module *vm = m->vk;
  const cg_vk_kernel *k = &vm->kernels[i]; /* the module every device runs */
  *nwords = k->plain_words ? k->plain_nwords : k->nwords;
  return k->plain_words ? k->plain_words : k->words;
}
