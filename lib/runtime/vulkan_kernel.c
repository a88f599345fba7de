/* vulkan_kernel.c — storage buffers, compute pipelines and dispatches on the Vulkan device.
 *
 * A buffer is a VkBuffer in host-visible, coherent memory, mapped for its whole life, so copies
 * in and out are memcpy and need no flush (a queue submission makes host writes visible to the
 * device; the barrier recorded after each dispatch makes shader writes visible to the host).
 *
 * A kernel owns its shader module, descriptor set layout (set 0: one storage buffer per binding),
 * pipeline layout (with one push-constant range), pipeline (made through the device's pipeline
 * cache) and one descriptor set, updated at each dispatch. Dispatches take the device lock: the
 * one command buffer is recorded, submitted and waited for. A grid larger than the device's
 * maxComputeWorkGroupCount is split into several vkCmdDispatchBase calls (the pipeline is made
 * with VK_PIPELINE_CREATE_DISPATCH_BASE_BIT, and WorkgroupId includes the base), so te needs no
 * grid-size limit of its own.
 */
#if __has_include(<vulkan/vulkan.h>) /* else vulkan_stub.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_hook.h"
#include "vulkan_internal.h"

struct te_rt_vk_buffer {
  VkBuffer buf;
  VkDeviceMemory mem;
  void *data;
  uint64_t size;
};

struct te_rt_vk_kernel {
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  VkDescriptorPool pool;
  VkDescriptorSet set;
  int nbuffers;
  uint32_t push_bytes;
  char name[128];
};

/* Wait at most this long for one dispatch (a kernel that never ends is a te bug). */
static const uint64_t rt_timeout_ns = 600ull * 1000000000ull;

int32_t te_rt_vk_buffer_new(uint64_t bytes, te_rt_vk_buffer **out) {
  *out = NULL;
  int32_t st;
  rt_vk *v = rt_vk_get(&st);
  if (!v)
    return st;
  te_rt_vk_buffer *b = te_rt_mem_alloc(NULL, sizeof *b, true, __FILE__, __LINE__);
  if (!b)
    return te_rt_error(TE_ERR_NOMEM, "Vulkan: out of host memory");
  b->size = bytes;
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = bytes ? (bytes + 3) & ~(uint64_t)3 : 16,
                           .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = v->vkCreateBuffer(v->dev, &bi, NULL, &b->buf);
  if (r != VK_SUCCESS) {
    free(b);
    return rt_vk_fail("vkCreateBuffer", r);
  }
  VkMemoryRequirements req;
  v->vkGetBufferMemoryRequirements(v->dev, b->buf, &req);
  if (!(req.memoryTypeBits & (1u << v->host_mem_type))) {
    te_rt_vk_buffer_free(b);
    return rt_vk_errorf(TE_ERR_RUNTIME,
                        "Vulkan: storage buffers cannot live in host-visible "
                        "memory on device '%s'",
                        v->info.name);
  }
  VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = req.size,
                             .memoryTypeIndex = v->host_mem_type};
  r = v->vkAllocateMemory(v->dev, &ai, NULL, &b->mem);
  if (r == VK_SUCCESS)
    r = v->vkBindBufferMemory(v->dev, b->buf, b->mem, 0);
  if (r == VK_SUCCESS)
    r = v->vkMapMemory(v->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->data);
  if (r != VK_SUCCESS) {
    te_rt_vk_buffer_free(b);
    return rt_vk_fail(r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "allocating a storage buffer"
                                                         : "vkAllocateMemory/vkMapMemory",
                      r);
  }
  *out = b;
  return 0;
}

void te_rt_vk_buffer_free(te_rt_vk_buffer *b) {
  if (!b)
    return;
  int32_t st;
  rt_vk *v = rt_vk_get(&st);
  if (!v) { /* the device was released at exit: only the host memory is left */
    free(b);
    return;
  }
  if (b->buf)
    v->vkDestroyBuffer(v->dev, b->buf, NULL);
  if (b->mem)
    v->vkFreeMemory(v->dev, b->mem, NULL); /* unmaps */
  free(b);
}

void *te_rt_vk_buffer_data(te_rt_vk_buffer *b) { return b ? b->data : NULL; }
uint64_t te_rt_vk_buffer_size(const te_rt_vk_buffer *b) { return b ? b->size : 0; }

static int32_t rt_check_range(const te_rt_vk_buffer *b, uint64_t offset, uint64_t bytes,
                              const void *p) {
  if (!b || (!p && bytes))
    return te_rt_error(TE_ERR_INVALID_ARG, "Vulkan: NULL buffer or host pointer");
  if (offset > b->size || bytes > b->size - offset)
    return rt_vk_errorf(TE_ERR_INVALID_ARG,
                        "Vulkan: copy of %llu bytes at offset %llu is outside a %llu-byte buffer",
                        (unsigned long long)bytes, (unsigned long long)offset,
                        (unsigned long long)b->size);
  return 0;
}

int32_t te_rt_vk_buffer_write(te_rt_vk_buffer *b, uint64_t offset, const void *src,
                              uint64_t bytes) {
  int32_t st = rt_check_range(b, offset, bytes, src);
  if (st == 0 && bytes)
    memcpy((char *)b->data + offset, src, bytes);
  return st;
}

int32_t te_rt_vk_buffer_read(te_rt_vk_buffer *b, uint64_t offset, void *dst, uint64_t bytes) {
  int32_t st = rt_check_range(b, offset, bytes, dst);
  if (st == 0 && bytes)
    memcpy(dst, (const char *)b->data + offset, bytes);
  return st;
}

/* Set layout, pipeline layout, descriptor pool and set of a kernel. */
static VkResult rt_make_layouts(rt_vk *v, te_rt_vk_kernel *k) {
  VkDescriptorSetLayoutBinding bind[64];
  for (int i = 0; i < k->nbuffers; i++)
    bind[i] = (VkDescriptorSetLayoutBinding){.binding = (uint32_t)i,
                                             .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                             .descriptorCount = 1,
                                             .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo sl = {.sType =
                                            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                        .bindingCount = (uint32_t)k->nbuffers,
                                        .pBindings = bind};
  VkResult r = v->vkCreateDescriptorSetLayout(v->dev, &sl, NULL, &k->set_layout);
  if (r != VK_SUCCESS)
    return r;
  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = k->push_bytes};
  VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .setLayoutCount = 1,
                                   .pSetLayouts = &k->set_layout,
                                   .pushConstantRangeCount = k->push_bytes ? 1 : 0,
                                   .pPushConstantRanges = &pr};
  r = v->vkCreatePipelineLayout(v->dev, &pl, NULL, &k->layout);
  if (r != VK_SUCCESS || k->nbuffers == 0)
    return r;
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)k->nbuffers};
  VkDescriptorPoolCreateInfo dp = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                   .maxSets = 1,
                                   .poolSizeCount = 1,
                                   .pPoolSizes = &ps};
  r = v->vkCreateDescriptorPool(v->dev, &dp, NULL, &k->pool);
  if (r != VK_SUCCESS)
    return r;
  VkDescriptorSetAllocateInfo da = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = k->pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &k->set_layout};
  return v->vkAllocateDescriptorSets(v->dev, &da, &k->set);
}

static VkResult rt_make_pipeline(rt_vk *v, te_rt_vk_kernel *k, const uint32_t *words, size_t nwords,
                                 const char *entry) {
  VkShaderModuleCreateInfo sm = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = nwords * 4, .pCode = words};
  VkResult r = v->vkCreateShaderModule(v->dev, &sm, NULL, &k->shader);
  if (r != VK_SUCCESS)
    return r;
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = k->shader,
                .pName = entry},
      .layout = k->layout};
  return v->vkCreateComputePipelines(v->dev, v->cache, 1, &ci, NULL, &k->pipeline);
}

int32_t te_rt_vk_kernel_new(const char *name, const uint32_t *words, size_t nwords,
                            const char *entry, int nbuffers, uint32_t push_bytes,
                            te_rt_vk_kernel **out) {
  *out = NULL;
  int32_t st;
  rt_vk *v = rt_vk_get(&st);
  if (!v)
    return st;
  if (!words || nwords < 5 || !entry || nbuffers < 0 || nbuffers > 64 || push_bytes % 4)
    return te_rt_error(TE_ERR_INVALID_ARG, "Vulkan: bad kernel description");
  if (push_bytes > v->info.max_push_bytes)
    return rt_vk_errorf(TE_ERR_RUNTIME,
                        "Vulkan: kernel '%s' needs %u bytes of push constants; device '%s' "
                        "has %u",
                        name ? name : entry, push_bytes, v->info.name, v->info.max_push_bytes);
  te_rt_vk_kernel *k = te_rt_mem_alloc(NULL, sizeof *k, true, __FILE__, __LINE__);
  if (!k)
    return te_rt_error(TE_ERR_NOMEM, "Vulkan: out of host memory");
  k->nbuffers = nbuffers;
  k->push_bytes = push_bytes;
  snprintf(k->name, sizeof k->name, "%s", name ? name : entry);
  VkResult r = rt_make_layouts(v, k);
  if (r == VK_SUCCESS)
    r = rt_make_pipeline(v, k, words, nwords, entry);
  if (r != VK_SUCCESS) {
    te_rt_vk_kernel_free(k);
    return rt_vk_errorf(TE_ERR_RUNTIME, "Vulkan: making the pipeline of kernel '%s' failed (%d)",
                        name ? name : entry, (int)r);
  }
  *out = k;
  return 0;
}

void te_rt_vk_kernel_free(te_rt_vk_kernel *k) {
  if (!k)
    return;
  int32_t st;
  rt_vk *v = rt_vk_get(&st);
  if (!v) { /* the device was released at exit: only the host memory is left */
    free(k);
    return;
  }
  if (k->pipeline)
    v->vkDestroyPipeline(v->dev, k->pipeline, NULL);
  if (k->pool)
    v->vkDestroyDescriptorPool(v->dev, k->pool, NULL);
  if (k->layout)
    v->vkDestroyPipelineLayout(v->dev, k->layout, NULL);
  if (k->set_layout)
    v->vkDestroyDescriptorSetLayout(v->dev, k->set_layout, NULL);
  if (k->shader)
    v->vkDestroyShaderModule(v->dev, k->shader, NULL);
  free(k);
}

/* Records the dispatches of one grid (split where it exceeds the device's counts). */
static void rt_record(rt_vk *v, te_rt_vk_kernel *k, const void *push, const uint64_t g[3]) {
  v->vkCmdBindPipeline(v->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  if (k->nbuffers)
    v->vkCmdBindDescriptorSets(v->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &k->set, 0,
                               NULL);
  if (k->push_bytes)
    v->vkCmdPushConstants(v->cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push_bytes, push);
  const uint32_t *mx = v->info.max_group_count;
  for (uint64_t z = 0; z < g[2]; z += mx[2])
    for (uint64_t y = 0; y < g[1]; y += mx[1])
      for (uint64_t x = 0; x < g[0]; x += mx[0]) {
        uint64_t nx = g[0] - x < mx[0] ? g[0] - x : mx[0];
        uint64_t ny = g[1] - y < mx[1] ? g[1] - y : mx[1];
        uint64_t nz = g[2] - z < mx[2] ? g[2] - z : mx[2];
        v->vkCmdDispatchBase(v->cmd, (uint32_t)x, (uint32_t)y, (uint32_t)z, (uint32_t)nx,
                             (uint32_t)ny, (uint32_t)nz);
      }
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  v->vkCmdPipelineBarrier(v->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                          0, 1, &mb, 0, NULL, 0, NULL);
}

static int32_t rt_submit_and_wait(rt_vk *v, te_rt_vk_kernel *k, const void *push,
                                  const uint64_t groups[3]) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult r = v->vkResetCommandBuffer(v->cmd, 0);
  if (r == VK_SUCCESS)
    r = v->vkBeginCommandBuffer(v->cmd, &bi);
  if (r != VK_SUCCESS)
    return rt_vk_fail("recording a dispatch", r);
  rt_record(v, k, push, groups);
  r = v->vkEndCommandBuffer(v->cmd);
  if (r != VK_SUCCESS)
    return rt_vk_fail("vkEndCommandBuffer", r);
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &v->cmd};
  r = v->vkQueueSubmit(v->queue, 1, &si, v->fence);
  if (r != VK_SUCCESS)
    return rt_vk_fail("vkQueueSubmit", r);
  r = v->vkWaitForFences(v->dev, 1, &v->fence, VK_TRUE, rt_timeout_ns);
  VkResult r2 = v->vkResetFences(v->dev, 1, &v->fence);
  if (r == VK_TIMEOUT)
    return rt_vk_errorf(TE_ERR_RUNTIME, "Vulkan: kernel '%s' did not finish within %llu s", k->name,
                        (unsigned long long)(rt_timeout_ns / 1000000000ull));
  if (r != VK_SUCCESS)
    return rt_vk_fail("waiting for a dispatch", r);
  return r2 == VK_SUCCESS ? 0 : rt_vk_fail("vkResetFences", r2);
}

int32_t te_rt_vk_dispatch(te_rt_vk_kernel *k, int nbuffers, te_rt_vk_buffer *const bufs[],
                          const void *push, uint32_t push_bytes, const uint64_t groups[3]) {
  int32_t st;
  rt_vk *v = rt_vk_get(&st);
  if (!v)
    return st;
  if (!k || !groups || nbuffers != k->nbuffers || push_bytes != k->push_bytes ||
      (push_bytes && !push))
    return rt_vk_errorf(TE_ERR_INVALID_ARG,
                        "Vulkan: kernel '%s' takes %d buffers and %u bytes of push constants "
                        "(got %d and %u)",
                        k ? k->name : "?", k ? k->nbuffers : 0, k ? k->push_bytes : 0, nbuffers,
                        push_bytes);
  for (int i = 0; i < nbuffers; i++)
    if (!bufs[i])
      return rt_vk_errorf(TE_ERR_INVALID_ARG, "Vulkan: kernel '%s': buffer %d is NULL", k->name, i);
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0)
    return 0;
  VkDescriptorBufferInfo info[64];
  VkWriteDescriptorSet w[64];
  for (int i = 0; i < nbuffers; i++) {
    info[i] = (VkDescriptorBufferInfo){bufs[i]->buf, 0, VK_WHOLE_SIZE};
    w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                  .dstSet = k->set,
                                  .dstBinding = (uint32_t)i,
                                  .descriptorCount = 1,
                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  .pBufferInfo = &info[i]};
  }
  pthread_mutex_lock(&v->lock);
  if (nbuffers)
    v->vkUpdateDescriptorSets(v->dev, (uint32_t)nbuffers, w, 0, NULL);
  st = rt_submit_and_wait(v, k, push, groups);
  pthread_mutex_unlock(&v->lock);
  return st;
}

#else
typedef int te_rt_vulkan_absent; /* ISO C forbids an empty translation unit */
#endif
