/* test_device.c (errors) — misuse of te/device.h (te_device_*) and of the CUDA launcher of
 * te/runtime.h (te_rt_cuda_*): wrong device types and ids, NULL pointers, zero and negative
 * sizes, kernels that do not exist. Each case gives its exact status and a message in
 * te_device_last_error / te_rt_last_error, with or without a CUDA driver; where the driver is
 * needed, a process without one (TE_CUDA_DRIVER naming a missing file) gets TE_ERR_RUNTIME
 * "no CUDA driver". Criterion runs each test in a process of its own, so the driver is looked
 * up afresh in each.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <te/device.h>

static const DLDevice cpu = {kDLCPU, 0}, cuda0 = {kDLCUDA, 0}, cuda1 = {kDLCUDA, 1},
                      vulkan = {kDLVulkan, 0};

static void no_driver(void) { setenv("TE_CUDA_DRIVER", "/nonexistent/te-test/libcuda.so", 1); }

#define EXPECT_MSG(...) expect_msg(te_device_last_error(), (const char *const[]){__VA_ARGS__, NULL})
static void expect_msg(const char *msg, const char *const subs[]) {
  for (int i = 0; subs[i]; i++)
    cr_expect(strstr(msg, subs[i]) != NULL, "message '%s' lacks '%s'", msg, subs[i]);
}

TestSuite(err_device, .init = no_driver);

Test(err_device, available_only_for_cuda) {
  cr_expect_eq(te_device_available(kDLCPU), 0);
  EXPECT_MSG("te_device_available", "device type 1", "is not served");
  cr_expect_eq(te_device_available(kDLVulkan), 0);
  EXPECT_MSG("device type 7");
  cr_expect_eq(te_device_available(kDLCUDA), 0);
  EXPECT_MSG("no CUDA driver");
}

Test(err_device, alloc_wrong_device) {
  void *p = (void *)1;
  cr_expect_eq(te_device_alloc(cpu, 16, &p), TE_ERR_UNSUPPORTED);
  cr_expect_null(p, "out is cleared on failure");
  EXPECT_MSG("te_device_alloc", "device type 1 id 0", "kDLCUDA");
  cr_expect_eq(te_device_alloc(vulkan, 16, &p), TE_ERR_UNSUPPORTED);
  cr_expect_eq(te_device_alloc(cuda1, 16, &p), TE_ERR_INVALID_ARG);
  EXPECT_MSG("te_device_alloc", "device type 2 id 1");
}

Test(err_device, alloc_bad_arguments) {
  void *p = (void *)1;
  cr_expect_eq(te_device_alloc(cuda0, 0, &p), TE_ERR_INVALID_ARG);
  cr_expect_null(p);
  EXPECT_MSG("te_device_alloc", "bytes is 0");
  cr_expect_eq(te_device_alloc(cuda0, 16, NULL), TE_ERR_INVALID_ARG);
  EXPECT_MSG("te_device_alloc", "out is NULL");
}

Test(err_device, alloc_without_driver) {
  void *p = (void *)1;
  cr_expect_eq(te_device_alloc(cuda0, 16, &p), TE_ERR_RUNTIME);
  cr_expect_null(p);
  EXPECT_MSG("no CUDA driver");
}

Test(err_device, free_and_sync) {
  cr_expect_eq(te_device_free(cuda0, NULL), TE_OK, "NULL is accepted");
  cr_expect_eq(te_device_free(cpu, (void *)16), TE_ERR_UNSUPPORTED);
  EXPECT_MSG("te_device_free", "device type 1");
  cr_expect_eq(te_device_free(cuda1, (void *)16), TE_ERR_INVALID_ARG);
  cr_expect_eq(te_device_free(cuda0, (void *)16), TE_ERR_RUNTIME);
  EXPECT_MSG("no CUDA driver");
  cr_expect_eq(te_device_sync(vulkan), TE_ERR_UNSUPPORTED);
  EXPECT_MSG("te_device_sync", "device type 7");
  cr_expect_eq(te_device_sync(cuda0), TE_ERR_RUNTIME);
  EXPECT_MSG("no CUDA driver");
}

Test(err_device, copy) {
  float a[4] = {1, 2, 3, 4}, b[4] = {0};
  cr_expect_eq(te_device_copy(NULL, cpu, a, cpu, sizeof a), TE_ERR_INVALID_ARG);
  EXPECT_MSG("te_device_copy", "dst or src is NULL");
  cr_expect_eq(te_device_copy(b, cpu, NULL, cuda0, sizeof a), TE_ERR_INVALID_ARG);
  cr_expect_eq(te_device_copy(b, vulkan, a, cpu, sizeof a), TE_ERR_UNSUPPORTED);
  EXPECT_MSG("te_device_copy", "device type 7");
  cr_expect_eq(te_device_copy(b, cpu, a, cuda1, sizeof a), TE_ERR_INVALID_ARG);
  EXPECT_MSG("device type 2 id 1");
  cr_expect_eq(te_device_copy(NULL, cpu, NULL, cpu, 0), TE_OK, "nothing to copy");
  cr_expect_eq(te_device_copy(b, cuda0, a, cpu, sizeof a), TE_ERR_RUNTIME);
  EXPECT_MSG("no CUDA driver");
  /* host to host needs no driver */
  cr_expect_eq(te_device_copy(b, cpu, a, cpu, sizeof a), TE_OK);
  cr_expect_eq(memcmp(a, b, sizeof a), 0);
}

/* ---------------------------------------------------------------- te_rt_cuda_* */

Test(err_device, rt_module_new_refuses_bad_counts) {
  cr_expect_null(te_rt_cuda_module_new(".version 8.0", -1, NULL));
  cr_expect(strstr(te_rt_last_error(), "te_rt_cuda_module_new") != NULL, "%s", te_rt_last_error());
  cr_expect_null(te_rt_cuda_module_new(".version 8.0", 2, NULL));
  cr_expect_null(te_rt_cuda_module_new(".version 8.0", 2, (const char *const[]){"k", NULL}));
  cr_expect(strstr(te_rt_last_error(), "a kernel name is NULL") != NULL, "%s", te_rt_last_error());
  te_rt_cuda_module *m = te_rt_cuda_module_new(NULL, 0, NULL); /* empty, but valid */
  cr_expect_not_null(m);
  te_rt_cuda_module_free(m);
  te_rt_cuda_module_free(NULL);
}

Test(err_device, rt_launch_bad_kernel) {
  const int64_t dims[6] = {1, 1, 1, 1, 1, 1};
  cr_expect_eq(te_rt_cuda_launch(NULL, 0, dims, NULL), TE_ERR_INVALID_ARG);
  cr_expect(strstr(te_rt_last_error(), "a NULL module") != NULL, "%s", te_rt_last_error());
  te_rt_cuda_module *m = te_rt_cuda_module_new("", 1, (const char *const[]){"k0"});
  cr_assert_not_null(m);
  cr_expect_eq(te_rt_cuda_launch(m, 1, dims, NULL), TE_ERR_INVALID_ARG);
  cr_expect(strstr(te_rt_last_error(), "no kernel 1") != NULL, "%s", te_rt_last_error());
  cr_expect_eq(te_rt_cuda_launch(m, -1, dims, NULL), TE_ERR_INVALID_ARG);
  cr_expect_eq(te_rt_cuda_launch(m, 0, NULL, NULL), TE_ERR_INVALID_ARG);
  cr_expect(strstr(te_rt_last_error(), "dims is NULL") != NULL, "%s", te_rt_last_error());
  cr_expect_eq(te_rt_cuda_launch(m, 0, dims, NULL), TE_ERR_RUNTIME); /* valid: needs a driver */
  cr_expect(strstr(te_rt_last_error(), "no CUDA driver") != NULL, "%s", te_rt_last_error());
  te_rt_cuda_module_free(m);
}

Test(err_device, rt_alloc) {
  cr_expect_null(te_rt_cuda_alloc(-8));
  cr_expect(strstr(te_rt_last_error(), "negative size") != NULL, "%s", te_rt_last_error());
  cr_expect_null(te_rt_cuda_alloc(64));
  cr_expect(strstr(te_rt_last_error(), "no CUDA driver") != NULL, "%s", te_rt_last_error());
  te_rt_cuda_free(NULL);
}
