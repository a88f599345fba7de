/* vulkan_stub.c — the Vulkan launcher where te was built without <vulkan/vulkan.h>
 * (libvulkan-dev missing): every call answers "no Vulkan driver", as on a machine without one,
 * so callers and tests behave the same way (they skip). Where the header exists this file is
 * empty and vulkan_device.c / vulkan_kernel.c are the launcher.
 */
#if !__has_include(<vulkan/vulkan.h>)
#include "te/core.h"
#include "vulkan.h"

static int32_t rt_no_vulkan(void) {
  return te_rt_error(TE_ERR_RUNTIME, "no Vulkan driver: te was built without Vulkan headers");
}
int32_t te_rt_vk_init(void) { return rt_no_vulkan(); }
int te_rt_vk_started(void) { return 0; }
const te_rt_vk_info *te_rt_vk_device_info(void) { return NULL; }
int32_t te_rt_vk_buffer_new(uint64_t bytes, te_rt_vk_buffer **out) {
  (void)bytes;
  *out = NULL;
  return rt_no_vulkan();
}
void te_rt_vk_buffer_free(te_rt_vk_buffer *b) { (void)b; }
void *te_rt_vk_buffer_data(te_rt_vk_buffer *b) {
  (void)b;
  return NULL;
}
uint64_t te_rt_vk_buffer_size(const te_rt_vk_buffer *b) {
  (void)b;
  return 0;
}
int32_t te_rt_vk_buffer_write(te_rt_vk_buffer *b, uint64_t o, const void *s, uint64_t n) {
  (void)b, (void)o, (void)s, (void)n;
  return rt_no_vulkan();
}
int32_t te_rt_vk_buffer_read(te_rt_vk_buffer *b, uint64_t o, void *d, uint64_t n) {
  (void)b, (void)o, (void)d, (void)n;
  return rt_no_vulkan();
}
int32_t te_rt_vk_kernel_new(const char *name, const uint32_t *w, size_t n, const char *entry,
                            int nb, uint32_t pb, te_rt_vk_kernel **out) {
  (void)name, (void)w, (void)n, (void)entry, (void)nb, (void)pb;
  *out = NULL;
  return rt_no_vulkan();
}
void te_rt_vk_kernel_free(te_rt_vk_kernel *k) { (void)k; }
int32_t te_rt_vk_dispatch(te_rt_vk_kernel *k, int nb, te_rt_vk_buffer *const b[], const void *p,
                          uint32_t pb, const uint64_t g[3]) {
  (void)k, (void)nb, (void)b, (void)p, (void)pb, (void)g;
  return rt_no_vulkan();
}
#else
typedef int te_rt_vulkan_stub_unused; /* ISO C forbids an empty translation unit */
#endif
