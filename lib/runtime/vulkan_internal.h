/* vulkan_internal.h — shared state of the Vulkan launcher's files (vulkan_device.c,
 * vulkan_kernel.c): the table of Vulkan entry points loaded with dlopen/vkGetInstanceProcAddr,
 * and the one process-wide device. Compiled only where <vulkan/vulkan.h> exists (libvulkan-dev);
 * vulkan_stub.c answers "no Vulkan driver" otherwise.
 */
#ifndef TE_RUNTIME_VULKAN_INTERNAL_H
#define TE_RUNTIME_VULKAN_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <pthread.h>
#include <vulkan/vulkan.h>

#include "te/core.h"
#include "vulkan.h"

/* Entry points taken from the instance (vkGetInstanceProcAddr). */
#define RT_VK_INSTANCE_FUNCS(X)                                                                    \
  X(vkDestroyInstance)                                                                             \
  X(vkEnumeratePhysicalDevices)                                                                    \
  X(vkGetPhysicalDeviceProperties)                                                                 \
  X(vkGetPhysicalDeviceFeatures)                                                                   \
  X(vkGetPhysicalDeviceFeatures2)                                                                  \
  X(vkGetPhysicalDeviceProperties2)                                                                \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                      \
  X(vkGetPhysicalDeviceMemoryProperties)                                                           \
  X(vkEnumerateDeviceExtensionProperties)                                                          \
  X(vkCreateDevice)                                                                                \
  X(vkGetDeviceProcAddr)

/* Entry points taken from the device (vkGetDeviceProcAddr). */
#define RT_VK_DEVICE_FUNCS(X)                                                                      \
  X(vkDestroyDevice)                                                                               \
  X(vkGetDeviceQueue)                                                                              \
  X(vkCreateBuffer)                                                                                \
  X(vkDestroyBuffer)                                                                               \
  X(vkGetBufferMemoryRequirements)                                                                 \
  X(vkAllocateMemory)                                                                              \
  X(vkFreeMemory)                                                                                  \
  X(vkBindBufferMemory)                                                                            \
  X(vkMapMemory)                                                                                   \
  X(vkCreateShaderModule)                                                                          \
  X(vkDestroyShaderModule)                                                                         \
  X(vkCreateDescriptorSetLayout)                                                                   \
  X(vkDestroyDescriptorSetLayout)                                                                  \
  X(vkCreatePipelineLayout)                                                                        \
  X(vkDestroyPipelineLayout)                                                                       \
  X(vkCreatePipelineCache)                                                                         \
  X(vkDestroyPipelineCache)                                                                        \
  X(vkCreateComputePipelines)                                                                      \
  X(vkDestroyPipeline)                                                                             \
  X(vkCreateDescriptorPool)                                                                        \
  X(vkDestroyDescriptorPool)                                                                       \
  X(vkAllocateDescriptorSets)                                                                      \
  X(vkUpdateDescriptorSets)                                                                        \
  X(vkCreateCommandPool)                                                                           \
  X(vkDestroyCommandPool)                                                                          \
  X(vkAllocateCommandBuffers)                                                                      \
  X(vkBeginCommandBuffer)                                                                          \
  X(vkEndCommandBuffer)                                                                            \
  X(vkResetCommandBuffer)                                                                          \
  X(vkCmdBindPipeline)                                                                             \
  X(vkCmdBindDescriptorSets)                                                                       \
  X(vkCmdPushConstants)                                                                            \
  X(vkCmdDispatchBase)                                                                             \
  X(vkCmdPipelineBarrier)                                                                          \
  X(vkQueueSubmit)                                                                                 \
  X(vkCreateFence)                                                                                 \
  X(vkDestroyFence)                                                                                \
  X(vkWaitForFences)                                                                               \
  X(vkResetFences)

typedef struct rt_vk {
  void *lib; /* dlopen handle of libvulkan.so.1 */
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  PFN_vkCreateInstance vkCreateInstance;
#define RT_VK_FIELD(f) PFN_##f f;
  RT_VK_INSTANCE_FUNCS(RT_VK_FIELD)
  RT_VK_DEVICE_FUNCS(RT_VK_FIELD)
#undef RT_VK_FIELD
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice dev;
  VkQueue queue;
  uint32_t queue_family;
  VkPhysicalDeviceMemoryProperties mem;
  uint32_t host_mem_type; /* host-visible, coherent memory type for buffers */
  VkPipelineCache cache;
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
  pthread_mutex_t lock; /* one dispatch at a time on the one queue and command buffer */
  te_rt_vk_info info;
} rt_vk;

/* The device, made on the first call; NULL (with the message in te_rt_last_error and the status
   in *status) when there is none. The failure is remembered: later calls fail the same way.
   After the process began to exit (the device is released then) it is NULL too. */
rt_vk *rt_vk_get(int32_t *status);

/* Records "what failed (VkResult name)" for a Vulkan call and returns TE_ERR_RUNTIME. */
int32_t rt_vk_fail(const char *what, VkResult r);
/* Records a printf-style message and returns code. */
int32_t rt_vk_errorf(int32_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
