/* vulkan_device.c — loading Vulkan with dlopen and making the process-wide compute device.
 *
 * libvulkan.so.1 (the Khronos loader) is opened at the first call, so neither libte nor
 * libte_runtime has a link-time Vulkan dependency. The loader's entry vkGetInstanceProcAddr gives
 * every other function. No loader, no driver (VK_ERROR_INCOMPATIBLE_DRIVER, as with
 * VK_ICD_FILENAMES=/nonexistent) or no physical device with a compute queue: every call returns
 * TE_ERR_RUNTIME with a message that starts "no Vulkan driver", and callers (tests) skip.
 *
 * Features the SPIR-V writer may use (64-bit ints and floats, 16-bit ints, 8/16-bit storage
 * buffers) are enabled when the device has them and reported in te_rt_vk_info, so the host side
 * can refuse a kernel that needs what the device lacks with a clear message.
 *
 * The device lives until the process exits, then an atexit handler releases it: a driver frees
 * what it keeps per device only then (Mesa's lavapipe holds a block per pipeline that
 * LeakSanitizer otherwise reports as lost), and atexit handlers run before the libraries'
 * destructors, so the driver is still there. The instance is kept: destroying it unloads the
 * driver, and what the driver's globals held would then look lost. Buffers and kernels freed
 * after the release free only their host memory.
 */
#if __has_include(<vulkan/vulkan.h>) /* else vulkan_stub.c */
#define _GNU_SOURCE                  /* dlopen, RTLD_* */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_hook.h"
#include "vulkan_internal.h"

static rt_vk rt_dev;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static int32_t rt_status = TE_ERR_RUNTIME;
static char rt_init_msg[512] = "no Vulkan driver: not initialized";

int32_t rt_vk_errorf(int32_t code, const char *fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return te_rt_error(code, buf);
}

static const char *rt_vk_result_name(VkResult r) {
  switch (r) {
  case VK_SUCCESS:
    return "VK_SUCCESS";
  case VK_TIMEOUT:
    return "VK_TIMEOUT";
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED:
    return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST:
    return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED:
    return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT:
    return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT:
    return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT:
    return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER:
    return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS:
    return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_INVALID_SHADER_NV:
    return "VK_ERROR_INVALID_SHADER_NV";
  default:
    return "VkResult";
  }
}

int32_t rt_vk_fail(const char *what, VkResult r) {
  return rt_vk_errorf(r == VK_ERROR_OUT_OF_HOST_MEMORY ? TE_ERR_NOMEM : TE_ERR_RUNTIME,
                      "Vulkan: %s failed (%s, %d)", what, rt_vk_result_name(r), (int)r);
}

/* Records the reason there is no device (for this and every later call). */
static void rt_no_device(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rt_no_device(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt_init_msg, sizeof rt_init_msg, fmt, ap);
  va_end(ap);
  rt_status = TE_ERR_RUNTIME;
}

static bool rt_load_library(rt_vk *v) {
  v->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!v->lib) {
    const char *e = dlerror();
    rt_no_device("no Vulkan driver: libvulkan.so.1 cannot be loaded (%s)", e ? e : "?");
    return false;
  }
  *(void **)&v->vkGetInstanceProcAddr = dlsym(v->lib, "vkGetInstanceProcAddr");
  if (!v->vkGetInstanceProcAddr) {
    rt_no_device("no Vulkan driver: libvulkan.so.1 has no vkGetInstanceProcAddr");
    return false;
  }
  v->vkCreateInstance =
      (PFN_vkCreateInstance)v->vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance");
  if (!v->vkCreateInstance) {
    rt_no_device("no Vulkan driver: the loader has no vkCreateInstance");
    return false;
  }
  return true;
}

static bool rt_create_instance(rt_vk *v) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "te",
                           .pEngineName = "te",
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app};
  VkResult r = v->vkCreateInstance(&ci, NULL, &v->instance);
  if (r != VK_SUCCESS) {
    rt_no_device("no Vulkan driver: vkCreateInstance failed (%s)", rt_vk_result_name(r));
    return false;
  }
#define RT_VK_LOAD(f)                                                                              \
  if (!(v->f = (PFN_##f)v->vkGetInstanceProcAddr(v->instance, #f))) {                              \
    rt_no_device("no Vulkan driver: the loader has no %s", #f);                                    \
    return false;                                                                                  \
  }
  RT_VK_INSTANCE_FUNCS(RT_VK_LOAD)
#undef RT_VK_LOAD
  return true;
}

/* The index of a queue family with compute, or -1. */
static int rt_compute_family(rt_vk *v, VkPhysicalDevice pd) {
  uint32_t n = 0;
  v->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  VkQueueFamilyProperties fam[32];
  if (n > 32)
    n = 32;
  v->vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fam);
  for (uint32_t i = 0; i < n; i++)
    if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
      return (int)i;
  return -1;
}

static int rt_type_rank(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return 4;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return 3;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return 1;
  default:
    return 0;
  }
}

static bool rt_pick_device(rt_vk *v) {
  VkPhysicalDevice pds[16];
  uint32_t n = 16;
  VkResult r = v->vkEnumeratePhysicalDevices(v->instance, &n, pds);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
    rt_no_device("no Vulkan driver: no Vulkan device found");
    return false;
  }
  const char *env = getenv("TE_VULKAN_DEVICE");
  int best = -1, best_rank = -1;
  for (uint32_t i = 0; i < n; i++) {
    VkPhysicalDeviceProperties p;
    v->vkGetPhysicalDeviceProperties(pds[i], &p);
    if (rt_compute_family(v, pds[i]) < 0 || p.apiVersion < VK_API_VERSION_1_1)
      continue; /* te's SPIR-V is for Vulkan 1.1 */
    int rank = rt_type_rank(p.deviceType);
    if (env && *env)
      rank = atoi(env) == (int)i ? 100 : -1;
    if (rank > best_rank)
      best = (int)i, best_rank = rank;
  }
  if (best < 0) {
    rt_no_device(env && *env ? "no Vulkan driver: TE_VULKAN_DEVICE=%s names no device with a "
                               "compute queue"
                             : "no Vulkan driver: no Vulkan 1.1 device has a compute queue%s",
                 env && *env ? env : "");
    return false;
  }
  v->phys = pds[best];
  v->queue_family = (uint32_t)rt_compute_family(v, v->phys);
  return true;
}

static bool rt_has_extension(rt_vk *v, const char *name) {
  uint32_t n = 0;
  if (v->vkEnumerateDeviceExtensionProperties(v->phys, NULL, &n, NULL) != VK_SUCCESS || !n)
    return false;
  VkExtensionProperties *e = te_rt_mem_alloc(NULL, sizeof *e * n, true, __FILE__, __LINE__);
  bool found = false;
  if (e && v->vkEnumerateDeviceExtensionProperties(v->phys, NULL, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = !strcmp(e[i].extensionName, name);
  free(e);
  return found;
}

/* Fills info from the device's properties and features, and the features to enable. */
static void rt_query(rt_vk *v, VkPhysicalDeviceFeatures2 *f2,
                     VkPhysicalDevice16BitStorageFeatures *s16,
                     VkPhysicalDevice8BitStorageFeatures *s8,
                     VkPhysicalDeviceShaderFloat16Int8Features *i8, bool ext8) {
  VkPhysicalDeviceProperties p;
  v->vkGetPhysicalDeviceProperties(v->phys, &p);
  te_rt_vk_info *in = &v->info;
  snprintf(in->name, sizeof in->name, "%s", p.deviceName);
  in->type = (int)p.deviceType;
  in->api_version = p.apiVersion;
  for (int i = 0; i < 3; i++) {
    in->max_group_size[i] = p.limits.maxComputeWorkGroupSize[i];
    in->max_group_count[i] = p.limits.maxComputeWorkGroupCount[i];
  }
  in->max_group_invocations = p.limits.maxComputeWorkGroupInvocations;
  in->max_shared_bytes = p.limits.maxComputeSharedMemorySize;
  in->max_push_bytes = p.limits.maxPushConstantsSize;
  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &sg};
  v->vkGetPhysicalDeviceProperties2(v->phys, &p2);
  VkSubgroupFeatureFlags ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  in->subgroup_arith =
      (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (sg.supportedOperations & ops) == ops;
  in->subgroup_size = sg.subgroupSize;

  *s16 = (VkPhysicalDevice16BitStorageFeatures){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  *s8 = (VkPhysicalDevice8BitStorageFeatures){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES, .pNext = s16};
  *i8 = (VkPhysicalDeviceShaderFloat16Int8Features){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, .pNext = s8};
  *f2 = (VkPhysicalDeviceFeatures2){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = ext8 ? (void *)i8 : (void *)s16};
  v->vkGetPhysicalDeviceFeatures2(v->phys, f2);

  /* enable only what te uses */
  VkPhysicalDeviceFeatures all = f2->features;
  memset(&f2->features, 0, sizeof f2->features);
  f2->features.shaderInt64 = all.shaderInt64;
  f2->features.shaderFloat64 = all.shaderFloat64;
  f2->features.shaderInt16 = all.shaderInt16;
  *s16 = (VkPhysicalDevice16BitStorageFeatures){
      .sType = s16->sType, .storageBuffer16BitAccess = s16->storageBuffer16BitAccess};
  if (ext8) {
    *s8 = (VkPhysicalDevice8BitStorageFeatures){
        .sType = s8->sType, .pNext = s16, .storageBuffer8BitAccess = s8->storageBuffer8BitAccess};
    *i8 = (VkPhysicalDeviceShaderFloat16Int8Features){.sType = i8->sType,
                                                      .pNext = s8,
                                                      .shaderFloat16 = i8->shaderFloat16,
                                                      .shaderInt8 = i8->shaderInt8};
  }
  in->int64 = all.shaderInt64;
  in->float64 = all.shaderFloat64;
  in->int16 = all.shaderInt16;
  in->storage16 = s16->storageBuffer16BitAccess;
  in->storage8 = ext8 && s8->storageBuffer8BitAccess;
  in->int8 = ext8 && i8->shaderInt8;
  in->float16 = ext8 && i8->shaderFloat16;
}

/* TE_VULKAN_HIDE_FEATURES=float16,int8,... makes the device look as if it lacked those
   features (names as te_rt_vk_info's fields): the tests of the refusals run on any device. */
static bool rt_hidden(const char *feature) {
  const char *list = getenv("TE_VULKAN_HIDE_FEATURES");
  size_t n = strlen(feature);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, feature, n))
      return true;
    p = end ? end + 1 : p + len;
  }
  return false;
}

static void rt_hide_features(te_rt_vk_info *in, VkPhysicalDeviceShaderFloat16Int8Features *i8) {
  if (rt_hidden("float16"))
    in->float16 = false, i8->shaderFloat16 = VK_FALSE;
  if (rt_hidden("int8"))
    in->int8 = false, i8->shaderInt8 = VK_FALSE;
  if (rt_hidden("int64"))
    in->int64 = false;
  if (rt_hidden("float64"))
    in->float64 = false;
  if (rt_hidden("subgroup_arith"))
    in->subgroup_arith = false;
}

static bool rt_create_device(rt_vk *v) {
  bool ext8 = rt_has_extension(v, "VK_KHR_8bit_storage") &&
              rt_has_extension(v, "VK_KHR_shader_float16_int8");
  VkPhysicalDeviceFeatures2 f2;
  VkPhysicalDevice16BitStorageFeatures s16;
  VkPhysicalDevice8BitStorageFeatures s8;
  VkPhysicalDeviceShaderFloat16Int8Features i8;
  rt_query(v, &f2, &s16, &s8, &i8, ext8);
  rt_hide_features(&v->info, &i8);
  const char *exts[] = {"VK_KHR_8bit_storage", "VK_KHR_shader_float16_int8"};
  float prio = 1.0f;
  VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                               .queueFamilyIndex = v->queue_family,
                               .queueCount = 1,
                               .pQueuePriorities = &prio};
  VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                           .pNext = &f2,
                           .queueCreateInfoCount = 1,
                           .pQueueCreateInfos = &q,
                           .enabledExtensionCount = ext8 ? 2 : 0,
                           .ppEnabledExtensionNames = ext8 ? exts : NULL};
  VkResult r = v->vkCreateDevice(v->phys, &ci, NULL, &v->dev);
  if (r != VK_SUCCESS) {
    rt_no_device("no Vulkan driver: vkCreateDevice failed on '%s' (%s)", v->info.name,
                 rt_vk_result_name(r));
    return false;
  }
#define RT_VK_LOAD(f)                                                                              \
  if (!(v->f = (PFN_##f)v->vkGetDeviceProcAddr(v->dev, #f))) {                                     \
    rt_no_device("no Vulkan driver: device '%s' has no %s", v->info.name, #f);                     \
    return false;                                                                                  \
  }
  RT_VK_DEVICE_FUNCS(RT_VK_LOAD)
#undef RT_VK_LOAD
  v->vkGetDeviceQueue(v->dev, v->queue_family, 0, &v->queue);
  v->vkGetPhysicalDeviceMemoryProperties(v->phys, &v->mem);
  return true;
}

/* A host-visible, coherent memory type (preferring cached memory: the host reads results). */
static bool rt_pick_memory(rt_vk *v) {
  const VkMemoryPropertyFlags need =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int best = -1;
  for (uint32_t i = 0; i < v->mem.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = v->mem.memoryTypes[i].propertyFlags;
    if ((f & need) != need)
      continue;
    if (best < 0 || (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT))
      best = (int)i;
    if (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
      break;
  }
  if (best < 0) {
    rt_no_device("no Vulkan driver: device '%s' has no host-visible coherent memory", v->info.name);
    return false;
  }
  v->host_mem_type = (uint32_t)best;
  return true;
}

static bool rt_create_queue_objects(rt_vk *v) {
  VkPipelineCacheCreateInfo pc = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                .queueFamilyIndex = v->queue_family};
  VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkResult r = v->vkCreatePipelineCache(v->dev, &pc, NULL, &v->cache);
  if (r == VK_SUCCESS)
    r = v->vkCreateCommandPool(v->dev, &cp, NULL, &v->pool);
  if (r == VK_SUCCESS) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = v->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    r = v->vkAllocateCommandBuffers(v->dev, &ai, &v->cmd);
  }
  if (r == VK_SUCCESS)
    r = v->vkCreateFence(v->dev, &fc, NULL, &v->fence);
  if (r != VK_SUCCESS) {
    rt_no_device("Vulkan: setting up device '%s' failed (%s)", v->info.name, rt_vk_result_name(r));
    return false;
  }
  return true;
}

/* At exit: waits for a dispatch in flight (the lock), then destroys the device's objects and
   the device. Later calls find no device. */
static void rt_release_at_exit(void) {
  rt_vk *v = &rt_dev;
  pthread_mutex_lock(&v->lock);
  rt_status = TE_ERR_RUNTIME;
  snprintf(rt_init_msg, sizeof rt_init_msg, "Vulkan: the device was released at process exit");
  v->vkDestroyFence(v->dev, v->fence, NULL);
  v->vkDestroyCommandPool(v->dev, v->pool, NULL); /* frees the command buffer */
  v->vkDestroyPipelineCache(v->dev, v->cache, NULL);
  v->vkDestroyDevice(v->dev, NULL);
  v->dev = VK_NULL_HANDLE;
  pthread_mutex_unlock(&v->lock);
}

static _Atomic int rt_started; /* te_rt_vk_started: the device was asked for */

int te_rt_vk_started(void) { return rt_started; }

static void rt_init_once(void) {
  rt_started = 1;
  rt_vk *v = &rt_dev;
  pthread_mutex_init(&v->lock, NULL);
  if (rt_load_library(v) && rt_create_instance(v) && rt_pick_device(v) && rt_create_device(v) &&
      rt_pick_memory(v) && rt_create_queue_objects(v) && atexit(rt_release_at_exit) == 0)
    rt_status = 0;
  /* On failure the objects made so far are kept (the process has no device either way). */
}

rt_vk *rt_vk_get(int32_t *status) {
  pthread_once(&rt_once, rt_init_once);
  *status = rt_status;
  if (rt_status != 0) {
    te_rt_error(rt_status, rt_init_msg);
    return NULL;
  }
  return &rt_dev;
}

int32_t te_rt_vk_init(void) {
  int32_t st;
  rt_vk_get(&st);
  return st;
}

const te_rt_vk_info *te_rt_vk_device_info(void) {
  int32_t st;
  rt_vk *v = rt_vk_get(&st);
  return v ? &v->info : NULL;
}

#else
typedef int te_rt_vulkan_absent; /* ISO C forbids an empty translation unit */
#endif
