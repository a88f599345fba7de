/* vulkan_call.c — te_module_call for a "vulkan" module.
 *
 * In order:
 *   1. the entry's checks (vulkan_entry.c: those make_entry writes for every target — not NULL,
 *      on the CPU (kDLCPU or kDLCUDAHost), rank, dtype, non-NULL data and shape, symbolic sizes,
 *      extents, compact strides — plus the limits of 32-bit indexing (spirv.h): each tensor has
 *      fewer than 2^31 elements, each size is below 2^31), which bind the sizes and find each
 *      tensor's element 0; temporaries must have fewer than 2^31 elements too;
 *   2. the device (te_rt_vk_init: "no Vulkan driver" without one), the features the kernels need
 *      (Int64, Float64, 8/16-bit), the workgroup size and shared memory against its limits;
 *      pipelines are made at the first call and kept;
 *   3. each tensor is copied into its device buffer, the steps run (temporaries, launches with
 *      grids evaluated from the sizes and scalars, push constants packed at their offsets), and
 *      the tensors some kernel writes are copied back.
 * Every failure is a te_status with the message on the context ("te_module_call: kernel 'K':
 * ..."). Device buffers are kept by the module and grown when a call needs more.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vulkan_host.h"

static const int64_t vk_index_limit = INT32_MAX; /* elements, sizes, threads per axis */

static te_status vk_fail(te_module *m, te_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static te_status vk_fail(te_module *m, te_status st, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  cg_vk_module *vm = m->vk;
  return ir_error(m->ctx, st, "te_module_call: kernel '%s': %s", vm->name, buf);
}

/* Scalars into their slots (as i64: integer and bool values; floats are only pushed). */
static void vk_read_scalars(cg_vk_module *vm, const void *const scalars[], int64_t *slots) {
  for (int s = 0; s < vm->nscalars; s++) {
    te_dtype t = vm->scalar_dtypes[s];
    const void *p = scalars[s];
    int64_t v = 0;
    if (ir_is_bool(t))
      v = *(const uint8_t *)p != 0;
    else if (ir_is_int(t))
      v = t.bits == 8    ? *(const int8_t *)p
          : t.bits == 16 ? *(const int16_t *)p
          : t.bits == 32 ? *(const int32_t *)p
                         : *(const int64_t *)p;
    else if (ir_is_uint(t))
      v = t.bits == 8    ? *(const uint8_t *)p
          : t.bits == 16 ? *(const uint16_t *)p
          : t.bits == 32 ? (int64_t) * (const uint32_t *)p
                         : (int64_t) * (const uint64_t *)p;
    slots[vm->nsizes + s] = v;
  }
}

static const char *vk_missing_feature(unsigned need, const te_rt_vk_info *in) {
  if ((need & CG_SPV_INT64) && !in->int64)
    return "shaderInt64 (64-bit integer data)";
  if ((need & CG_SPV_FLOAT64) && !in->float64)
    return "shaderFloat64 (f64 data)";
  if ((need & CG_SPV_INT16) && !in->int16)
    return "shaderInt16 (16-bit integers)";
  if ((need & CG_SPV_INT8) && !in->int8)
    return "shaderInt8 (8-bit integers or bool)";
  if ((need & CG_SPV_STORAGE8) && !in->storage8)
    return "8-bit storage buffers";
  if ((need & CG_SPV_STORAGE16) && !in->storage16)
    return "16-bit storage buffers";
  if ((need & CG_SPV_FLOAT16) && !in->float16)
    return "shaderFloat16 (f16 values)";
  if ((need & CG_SPV_SUBGROUP) && !in->subgroup_arith)
    return "subgroup arithmetic in compute shaders";
  return NULL;
}

/* The device, and each kernel's pipeline (made once) after checking it can run there. */
static te_status vk_prepare(te_module *m) {
  cg_vk_module *vm = m->vk;
  int32_t rc = te_rt_vk_init(); /* TE_ERR_RUNTIME without a driver, TE_ERR_NOMEM, ... */
  if (rc != 0)
    return vk_fail(m, (te_status)rc, "%s", te_rt_last_error());
  const te_rt_vk_info *in = te_rt_vk_device_info();
  for (int i = 0; i < vm->nkernels; i++) {
    cg_vk_kernel *k = &vm->kernels[i];
    if (k->pipe)
      continue;
    const uint32_t *words = k->words;
    size_t nwords = k->nwords;
    unsigned features = k->features;
    if (k->plain_words && (vk_missing_feature(features, in) || !in->subgroup_arith)) {
      /* the module without subgroup operations */
      words = k->plain_words, nwords = k->plain_nwords, features = k->plain_features;
    }
    const char *miss = vk_missing_feature(features, in);
    if (miss)
      return vk_fail(m, TE_ERR_UNSUPPORTED,
                     "device kernel '%s' needs %s, which Vulkan device "
                     "'%s' lacks",
                     k->name, miss, in->name);
    int64_t threads = k->local[0] * k->local[1] * k->local[2];
    for (int d = 0; d < 3; d++)
      if (k->local[d] > in->max_group_size[d] || threads > in->max_group_invocations)
        return vk_fail(m, TE_ERR_TARGET,
                       "device kernel '%s': a workgroup of %lld x %lld x %lld threads exceeds "
                       "Vulkan device '%s' (at most %u x %u x %u, %u in all)",
                       k->name, (long long)k->local[0], (long long)k->local[1],
                       (long long)k->local[2], in->name, in->max_group_size[0],
                       in->max_group_size[1], in->max_group_size[2], in->max_group_invocations);
    if (k->shared_bytes > in->max_shared_bytes)
      return vk_fail(m, TE_ERR_TARGET,
                     "device kernel '%s' uses %lld bytes of shared memory; Vulkan device '%s' "
                     "has %u",
                     k->name, (long long)k->shared_bytes, in->name, in->max_shared_bytes);
    rc = te_rt_vk_kernel_new(k->name, words, nwords, k->name, k->nbuffers, k->push_bytes, &k->pipe);
    if (rc != 0)
      return vk_fail(m, (te_status)rc, "%s", te_rt_last_error());
  }
  return TE_OK;
}

/* A device buffer of at least bytes, kept in *slot (grown by remaking it). */
static te_status vk_buffer(te_module *m, te_rt_vk_buffer **slot, uint64_t bytes) {
  if (*slot && te_rt_vk_buffer_size(*slot) >= bytes)
    return TE_OK;
  te_rt_vk_buffer_free(*slot);
  *slot = NULL;
  int32_t st = te_rt_vk_buffer_new(bytes, slot);
  return st ? vk_fail(m, (te_status)st, "%s", te_rt_last_error()) : TE_OK;
}

static void vk_push_value(uint8_t *dst, te_dtype mt, int64_t v, const void *scalar) {
  if (ir_is_float(mt)) { /* a float scalar: its own bytes */
    memcpy(dst, scalar, (size_t)mt.bits / 8);
    return;
  }
  if (mt.bits == 64) {
    memcpy(dst, &v, 8);
    return;
  }
  uint32_t u = (uint32_t)v;
  memcpy(dst, &u, 4);
}

static te_status vk_launch(te_module *m, cg_vk_kernel *k, const int64_t *slots,
                           const void *const scalars[]) {
  cg_vk_module *vm = m->vk;
  uint64_t groups[3];
  for (int d = 0; d < 3; d++) {
    int64_t g;
    const char *err;
    if (!cg_vk_prog_eval(&k->grid[d], slots, NULL, &g, &err))
      return vk_fail(m, TE_ERR_RUNTIME, "device kernel '%s': %s", k->name, err);
    if (g < 0 || (g > 0 && k->local[d] > vk_index_limit / g))
      return vk_fail(m, TE_ERR_SHAPE,
                     "device kernel '%s': %lld workgroups on axis %c are out "
                     "of range for 32-bit indexing",
                     k->name, (long long)g, "xyz"[d]);
    groups[d] = (uint64_t)g;
  }
  te_rt_vk_buffer *bufs[64];
  uint8_t push[256] = {0};
  int nb = 0;
  for (int i = 0; i < k->nparams; i++) {
    cg_vk_param *p = &k->params[i];
    if (p->kind == LW_GPU_PARAM_BUFFER) {
      if (nb == 64)
        return vk_fail(m, TE_ERR_UNSUPPORTED, "more than 64 buffers");
      bufs[nb++] = p->tensor >= 0 ? vm->tensors[p->tensor].buf : vm->temps[p->temp].buf;
      continue;
    }
    if (p->offset < 0 || p->offset + p->mtype.bits / 8 > (int)sizeof push)
      return vk_fail(m, TE_ERR_UNSUPPORTED, "push constants over %d bytes", (int)sizeof push);
    int s = p->slot - vm->nsizes;
    vk_push_value(push + p->offset, p->mtype, slots[p->slot], s >= 0 ? scalars[s] : NULL);
  }
  if (te_rt_vk_dispatch(k->pipe, nb, bufs, push, k->push_bytes, groups) != 0)
    return vk_fail(m, TE_ERR_RUNTIME, "device kernel '%s': %s", k->name, te_rt_last_error());
  return TE_OK;
}

static te_status vk_run_steps(te_module *m, const int64_t *slots, const void *const scalars[]) {
  cg_vk_module *vm = m->vk;
  for (int i = 0; i < vm->nsteps; i++) {
    cg_vk_step *s = &vm->steps[i];
    if (s->kind == LW_GPU_STEP_LAUNCH) {
      te_status st = vk_launch(m, &vm->kernels[s->kernel], slots, scalars);
      if (st != TE_OK)
        return st;
    } else if (s->kind == LW_GPU_STEP_ALLOC) {
      int64_t n;
      const char *err;
      if (!cg_vk_prog_eval(&s->count, slots, NULL, &n, &err))
        return vk_fail(m, TE_ERR_RUNTIME, "temporary '%s': %s", vm->temps[s->temp].name, err);
      if (n < 0 || n > vk_index_limit)
        return vk_fail(m, TE_ERR_SHAPE,
                       "temporary '%s' would have %lld elements (vulkan "
                       "kernels index with 32 bits)",
                       vm->temps[s->temp].name, (long long)n);
      te_status st = vk_buffer(m, &vm->temps[s->temp].buf,
                               (uint64_t)n * (uint64_t)ir_dtype_bytes(vm->temps[s->temp].dtype));
      if (st != TE_OK)
        return st;
    } /* FREE: the module keeps the buffer for the next call */
  }
  return TE_OK;
}

te_status cg_vulkan_call(te_module *m, cg_kernel *k, DLTensor *const tensors[],
                         const void *const scalars[]) {
  (void)k;
  cg_vk_module *vm = m->vk;
  int64_t slots[256], counts[256];
  char *host[256];
  if (vm->nslots > 256 || vm->ntensors > 256)
    return vk_fail(m, TE_ERR_UNSUPPORTED, "more than 256 tensors, sizes or scalars");
  vk_read_scalars(vm, scalars, slots);
  te_status st = cg_vk_entry_run(m, tensors, slots, host);
  if (st != TE_OK)
    return st;
  for (int i = 0; i < vm->ntensors; i++) { /* the checks made the extents the expected ones */
    counts[i] = 1;
    for (int d = 0; d < vm->tensors[i].ndim; d++)
      counts[i] *= tensors[i]->shape[d];
  }
  if ((st = vk_prepare(m)) != TE_OK)
    return st;
  for (int i = 0; i < vm->ntensors && st == TE_OK; i++) {
    uint64_t bytes = (uint64_t)counts[i] * (uint64_t)ir_dtype_bytes(vm->tensors[i].dtype);
    st = vk_buffer(m, &vm->tensors[i].buf, bytes);
    if (st == TE_OK)
      te_rt_vk_buffer_write(vm->tensors[i].buf, 0, host[i], bytes);
  }
  if (st == TE_OK)
    st = vk_run_steps(m, slots, scalars);
  for (int i = 0; i < vm->ntensors && st == TE_OK; i++)
    if (vm->tensors[i].written)
      te_rt_vk_buffer_read(vm->tensors[i].buf, 0, host[i],
                           (uint64_t)counts[i] * (uint64_t)ir_dtype_bytes(vm->tensors[i].dtype));
  return st;
}
