/* fake_libcuda.c — a stand-in for libcuda.so.1 with the driver API entry points te resolves
 * (lib/runtime/cuda_driver.c), for e2e/test_cuda.c on machines without an NVIDIA GPU.
 *
 * Device memory is host memory; copies are checked to stay inside live allocations. The module's
 * PTX is kept, and each function's parameter list is read from its `.entry NAME(...)` signature,
 * so a launch is checked as a real driver would see it: non-zero grid and block, at most 1024
 * threads a block, and every `.ptr` parameter pointing into a live allocation (else
 * CUDA_ERROR_ILLEGAL_ADDRESS, with the reason kept for fake_cuda_refusal). Kernels do not run:
 * outputs keep what was uploaded. Launches are recorded (fake_libcuda.h).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_libcuda.h"

typedef unsigned long long fk_ptr;

/* The driver API entry points this library defines (the CUDA driver's ABI, cuda_driver.h). */
int cuInit(unsigned);
int cuDeviceGet(int *, int);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxSetCurrent(void *);
int cuCtxSynchronize(void);
int cuMemAlloc_v2(fk_ptr *, size_t);
int cuMemFree_v2(fk_ptr);
int cuMemcpyHtoD_v2(fk_ptr, const void *, size_t);
int cuMemcpyDtoH_v2(void *, fk_ptr, size_t);
int cuMemcpyDtoD_v2(fk_ptr, fk_ptr, size_t);
int cuModuleLoadDataEx(void **, const void *, unsigned, int *, void **);
int cuModuleUnload(void *);
int cuModuleGetFunction(void **, void *, const char *);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   void *, void **, void **);
int cuGetErrorName(int, const char **);
int cuGetErrorString(int, const char **);
enum { FK_OK = 0, FK_INVALID_VALUE = 1, FK_NOT_FOUND = 500, FK_ILLEGAL_ADDRESS = 700 };
enum { FK_MAX_ALLOCS = 256, FK_MAX_FNS = 64, FK_MAX_LAUNCHES = 64 };

typedef struct fk_fn {
  char name[128];
  int nparams;
  int size[FAKE_CUDA_MAX_PARAMS];
  bool pointer[FAKE_CUDA_MAX_PARAMS];
} fk_fn;

static struct {
  struct {
    char *base;
    size_t bytes;
  } alloc[FK_MAX_ALLOCS];
  char *ptx; /* the loaded module's text (one module at a time) */
  fk_fn fn[FK_MAX_FNS];
  int nfn;
  fake_cuda_launch launch[FK_MAX_LAUNCHES];
  int nlaunch;
  char refusal[256];
} fk;

static int fk_refuse(int code, const char *why, const char *what) {
  snprintf(fk.refusal, sizeof fk.refusal, "%s%s", why, what);
  return code;
}

/* Whether [p, p + n) lies inside one live allocation. */
static bool fk_inside(fk_ptr p, size_t n) {
  for (int i = 0; i < FK_MAX_ALLOCS; i++) {
    char *b = fk.alloc[i].base;
    if (b && (uintptr_t)p >= (uintptr_t)b && (uintptr_t)p + n <= (uintptr_t)b + fk.alloc[i].bytes)
      return true;
  }
  return false;
}

int cuInit(unsigned flags) { return (void)flags, FK_OK; }
int cuDeviceGet(int *d, int i) { return *d = i, i == 0 ? FK_OK : FK_INVALID_VALUE; }
int cuDevicePrimaryCtxRetain(void **c, int d) { return (void)d, *c = &fk, FK_OK; }
int cuCtxSetCurrent(void *c) { return (void)c, FK_OK; }
int cuCtxSynchronize(void) { return FK_OK; }

int cuMemAlloc_v2(fk_ptr *p, size_t n) {
  for (int i = 0; i < FK_MAX_ALLOCS; i++)
    if (!fk.alloc[i].base) {
      if (!(fk.alloc[i].base = malloc(n ? n : 1)))
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
      fk.alloc[i].bytes = n;
      *p = (fk_ptr)(uintptr_t)fk.alloc[i].base;
      return FK_OK;
    }
  return fk_refuse(2, "too many allocations", "");
}

int cuMemFree_v2(fk_ptr p) {
  for (int i = 0; i < FK_MAX_ALLOCS; i++)
    if (fk.alloc[i].base && (fk_ptr)(uintptr_t)fk.alloc[i].base == p) {
      free(fk.alloc[i].base);
      fk.alloc[i].base = NULL;
      return FK_OK;
    }
  return fk_refuse(FK_INVALID_VALUE, "cuMemFree of a pointer never allocated", "");
}

int cuMemcpyHtoD_v2(fk_ptr d, const void *s, size_t n) {
  if (!fk_inside(d, n))
    return fk_refuse(FK_INVALID_VALUE, "cuMemcpyHtoD outside an allocation", "");
  memcpy((void *)(uintptr_t)d, s, n);
  return FK_OK;
}
int cuMemcpyDtoH_v2(void *d, fk_ptr s, size_t n) {
  if (!fk_inside(s, n))
    return fk_refuse(FK_INVALID_VALUE, "cuMemcpyDtoH outside an allocation", "");
  memcpy(d, (void *)(uintptr_t)s, n);
  return FK_OK;
}
int cuMemcpyDtoD_v2(fk_ptr d, fk_ptr s, size_t n) {
  if (!fk_inside(d, n) || !fk_inside(s, n))
    return fk_refuse(FK_INVALID_VALUE, "cuMemcpyDtoD outside an allocation", "");
  memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
  return FK_OK;
}

int cuModuleLoadDataEx(void **m, const void *ptx, unsigned n, int *opts, void **vals) {
  (void)n, (void)opts, (void)vals;
  free(fk.ptx);
  if (!(fk.ptx = strdup(ptx)))
    return 2;
  fk.nfn = 0;
  *m = &fk;
  return FK_OK;
}
int cuModuleUnload(void *m) {
  (void)m;
  free(fk.ptx);
  fk.ptx = NULL;
  fk.nfn = 0;
  return FK_OK;
}

/* The parameters of `.entry name(` in the PTX: `.param .u64 .ptr .global .align 1 x`,
   `.param .f32 y`, ...: the size from the type's bits, a pointer when .ptr follows. */
static bool fk_parse_entry(fk_fn *f, const char *name) {
  char head[160];
  snprintf(head, sizeof head, ".entry %s(", name);
  const char *p = fk.ptx ? strstr(fk.ptx, head) : NULL;
  if (!p)
    return false;
  const char *end = strchr(p, ')');
  snprintf(f->name, sizeof f->name, "%s", name);
  f->nparams = 0;
  for (p += strlen(head); end && (p = strstr(p, ".param ")) && p < end; p += 7) {
    if (f->nparams == FAKE_CUDA_MAX_PARAMS)
      return false;
    const char *type = p + 7; /* ".u64 ..." */
    int bits = atoi(type + 2);
    f->size[f->nparams] = bits >= 8 ? bits / 8 : 1;
    f->pointer[f->nparams] = strncmp(strchr(type, ' ') + 1, ".ptr", 4) == 0;
    f->nparams++;
  }
  return end != NULL;
}

int cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)m;
  if (fk.nfn == FK_MAX_FNS || !fk_parse_entry(&fk.fn[fk.nfn], name))
    return fk_refuse(FK_NOT_FOUND, "no .entry in the module's PTX for ", name);
  *f = &fk.fn[fk.nfn++];
  return FK_OK;
}

int cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shm, void *stream, void **args, void **extra) {
  (void)shm, (void)stream, (void)extra;
  const fk_fn *f = fn;
  if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long)bx * by * bz > 1024)
    return fk_refuse(FK_INVALID_VALUE, "bad grid or block for ", f->name);
  if (fk.nlaunch == FK_MAX_LAUNCHES)
    return fk_refuse(FK_INVALID_VALUE, "too many launches", "");
  fake_cuda_launch *l = &fk.launch[fk.nlaunch];
  memset(l, 0, sizeof *l);
  snprintf(l->name, sizeof l->name, "%s", f->name);
  unsigned dims[6] = {gx, gy, gz, bx, by, bz};
  memcpy(l->grid, dims, sizeof l->grid);
  memcpy(l->block, dims + 3, sizeof l->block);
  l->nparams = f->nparams;
  for (int i = 0; i < f->nparams; i++) {
    memcpy(&l->value[i], args[i], (size_t)f->size[i]); /* little-endian: zero-extended */
    l->pointer[i] = f->pointer[i];
    if (f->pointer[i] && !fk_inside(l->value[i], 1))
      return fk_refuse(FK_ILLEGAL_ADDRESS, "a pointer parameter outside every allocation in ",
                       f->name);
  }
  fk.nlaunch++;
  return FK_OK;
}

int cuGetErrorName(int r, const char **s) {
  *s = r == FK_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS"
       : r == FK_NOT_FOUND     ? "CUDA_ERROR_NOT_FOUND"
                               : "CUDA_ERROR_INVALID_VALUE";
  return FK_OK;
}
int cuGetErrorString(int r, const char **s) {
  (void)r;
  *s = fk.refusal[0] ? fk.refusal : "fake driver";
  return FK_OK;
}

int fake_cuda_nlaunches(void) { return fk.nlaunch; }
const fake_cuda_launch *fake_cuda_launch_at(int i) {
  return i >= 0 && i < fk.nlaunch ? &fk.launch[i] : NULL;
}
const char *fake_cuda_refusal(void) { return fk.refusal; }
