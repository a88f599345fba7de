/* vulkan.h — the Vulkan compute launcher of libte_runtime (internal to te, exported from the
 * runtime library so that libte and saved programs can call it).
 *
 * Vulkan is loaded at run time with dlopen("libvulkan.so.1"): neither libte nor libte_runtime
 * links it. The first call makes one process-wide device (instance, physical device, logical
 * device with a compute queue, a pipeline cache, a command buffer and a fence); it is kept until
 * the process ends. Device choice: a discrete GPU, else an integrated one, else a virtual one,
 * else a CPU implementation (Mesa's lavapipe); TE_VULKAN_DEVICE=<index> in the environment picks
 * the index-th physical device instead.
 *
 * Buffers are storage buffers in host-visible, host-coherent memory, mapped for their whole life:
 * the host copies a DLTensor's data in before a dispatch and out after it (simple and correct on
 * every device; device-local memory with staging copies is a later optimization).
 *
 * A kernel is one SPIR-V module with one GLCompute entry point. Its interface, which te's SPIR-V
 * writer follows: descriptor set 0 with storage-buffer bindings 0..nbuffers-1 in argument order,
 * and push constants (offset 0, push_bytes bytes) for scalar parameters and symbolic sizes.
 *
 * Every function returns 0 or a te_status code (TE_ERR_RUNTIME for driver failures, TE_ERR_NOMEM,
 * TE_ERR_INVALID_ARG) with a message in te_rt_last_error(). Without a usable driver every call
 * returns TE_ERR_RUNTIME with a message starting "no Vulkan driver". Thread-safe: dispatches are
 * serialized on the one queue.
 */
#ifndef TE_RUNTIME_VULKAN_H
#define TE_RUNTIME_VULKAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "te/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What te needs to know about the device it runs on. */
typedef struct te_rt_vk_info {
  char name[256];
  int type;             /* VkPhysicalDeviceType: 1 integrated, 2 discrete, 3 virtual, 4 CPU */
  uint32_t api_version; /* VK_MAKE_API_VERSION form */
  uint32_t max_group_size[3];
  uint32_t max_group_invocations;
  uint32_t max_group_count[3];    /* larger grids are split into several dispatches */
  uint32_t max_shared_bytes;      /* maxComputeSharedMemorySize */
  uint32_t max_push_bytes;        /* maxPushConstantsSize (at least 128) */
  bool int64, float64, int16;     /* shaderInt64, shaderFloat64, shaderInt16 (enabled if present) */
  bool int8, storage8, storage16; /* shaderInt8, 8- and 16-bit storage buffer access */
  bool float16;                   /* shaderFloat16 (VK_KHR_shader_float16_int8) */
  /* subgroups support basic and arithmetic operations in compute shaders
     (VkPhysicalDeviceSubgroupProperties, Vulkan 1.1) */
  bool subgroup_arith;
  uint32_t subgroup_size;
} te_rt_vk_info;

typedef struct te_rt_vk_buffer te_rt_vk_buffer;
typedef struct te_rt_vk_kernel te_rt_vk_kernel;

/* Makes the device if it does not exist yet. 0 when a device is usable. */
TE_RT_API int32_t te_rt_vk_init(void);
/* 1 once this process has asked for the device (te_rt_vk_init or any call that makes it: a
   vulkan kernel's first call), whether or not one was made; 0 before. Makes nothing. A process
   that forks after this cannot use the device in its children (te_tune checks it). */
TE_RT_API int te_rt_vk_started(void);
/* The device's description (after a successful te_rt_vk_init), else NULL. */
TE_RT_API const te_rt_vk_info *te_rt_vk_device_info(void);

/* A storage buffer of bytes bytes (0 is allowed and gives a small valid buffer). */
TE_RT_API int32_t te_rt_vk_buffer_new(uint64_t bytes, te_rt_vk_buffer **out);
TE_RT_API void te_rt_vk_buffer_free(te_rt_vk_buffer *);
/* The host address of the buffer's memory (mapped for the buffer's life). */
TE_RT_API void *te_rt_vk_buffer_data(te_rt_vk_buffer *);
TE_RT_API uint64_t te_rt_vk_buffer_size(const te_rt_vk_buffer *);
/* Copies between host memory and the buffer; offset + bytes must be within the buffer. */
TE_RT_API int32_t te_rt_vk_buffer_write(te_rt_vk_buffer *, uint64_t offset, const void *src,
                                        uint64_t bytes);
TE_RT_API int32_t te_rt_vk_buffer_read(te_rt_vk_buffer *, uint64_t offset, void *dst,
                                       uint64_t bytes);

/* A compute pipeline from SPIR-V words (entry point name entry). name is used in messages. */
TE_RT_API int32_t te_rt_vk_kernel_new(const char *name, const uint32_t *words, size_t nwords,
                                      const char *entry, int nbuffers, uint32_t push_bytes,
                                      te_rt_vk_kernel **out);
TE_RT_API void te_rt_vk_kernel_free(te_rt_vk_kernel *);

/* Runs the kernel on groups[0] x groups[1] x groups[2] workgroups (a zero count runs nothing)
   with the given buffers bound to bindings 0..nbuffers-1 and push_bytes of push constants, and
   waits until it has finished. */
TE_RT_API int32_t te_rt_vk_dispatch(te_rt_vk_kernel *, int nbuffers, te_rt_vk_buffer *const bufs[],
                                    const void *push, uint32_t push_bytes,
                                    const uint64_t groups[3]);

#ifdef __cplusplus
}
#endif
#endif
