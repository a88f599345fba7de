/* target_gpu.c — GPU target strings: "cuda" (PTX through LLVM's NVPTX back end) and "vulkan"
 * (SPIR-V written by te).
 *
 *   "cuda"                                   = "cuda -arch=sm_80"
 *   "cuda -arch=sm_90"                       any SM LLVM 22's NVPTX back end knows (sm_50 ..
 * sm_121) "nvptx ..."                              the same as "cuda ..." "vulkan" a Vulkan 1.1
 * compute device options of both: -max_threads_per_block=N, -max_shared_memory_per_block=BYTES
 *
 * The limits are what the lowering checks launches against (gpu_split.c): threads per block
 * (all axes together), threads per block on each axis, blocks per grid on each axis, and static
 * shared memory per block. Defaults: cuda 1024 threads (1024, 1024, 64 per axis; grid 2^31-1,
 * 65535, 65535) and 48 KiB of shared memory (the most a kernel may declare statically); vulkan
 * 256 threads (256, 256, 64 per axis; grid 65535 on each axis) and 32 KiB (the limits nearly
 * every desktop device and lavapipe exceed; a device's own limits are given as options). The
 * options may lower or raise the threads and the shared memory, never above what the API allows
 * (cuda: 1024 threads, 227 KiB of shared memory; vulkan: 1024 threads, 64 KiB).
 *
 * The canonical string names every value, so a tuning log says which limits the code was
 * checked against: "cuda -arch=sm_80 -max_threads_per_block=1024
 * -max_shared_memory_per_block=49152".
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target.h"

static const int tg_sm_versions[] = {50, 52, 53, 60, 61,  62,  70,  72,  75,  80, 86,
                                     87, 88, 89, 90, 100, 101, 103, 110, 120, 121};

bool tg_string_is_gpu(const char *s) {
  if (!s)
    return false;
  while (*s == ' ' || *s == '\t' || *s == '\n')
    s++;
  size_t n = strcspn(s, " \t\n");
  return (n == 4 && !strncmp(s, "cuda", 4)) || (n == 5 && !strncmp(s, "nvptx", 5)) ||
         (n == 6 && !strncmp(s, "vulkan", 6));
}

/* A positive decimal integer up to max, or -1. */
static int64_t tg_parse_count(const char *v, int64_t max) {
  if (!*v)
    return -1;
  int64_t x = 0;
  for (; *v; v++) {
    if (*v < '0' || *v > '9')
      return -1;
    x = x * 10 + (*v - '0');
    if (x > max)
      return -1;
  }
  return x > 0 ? x : -1;
}

static te_status tg_parse_arch(te_ctx *ctx, const char *v, te_target *t) {
  int64_t sm = strncmp(v, "sm_", 3) ? -1 : tg_parse_count(v + 3, 1000);
  for (size_t i = 0; sm > 0 && i < sizeof tg_sm_versions / sizeof tg_sm_versions[0]; i++)
    if (tg_sm_versions[i] == sm) {
      t->gpu_arch = (int)sm;
      return TE_OK;
    }
  return ir_error(ctx, TE_ERR_TARGET,
                  "te_target_parse: unknown CUDA architecture '%s' (expected sm_XX, one of "
                  "sm_50 .. sm_121 that LLVM's NVPTX back end knows, e.g. sm_80 or sm_90)",
                  v);
}

typedef struct tg_gpu_opts {
  const char *arch, *threads, *shared;
} tg_gpu_opts;

static te_status tg_gpu_option(te_ctx *ctx, bool cuda, char *tok, tg_gpu_opts *o) {
  char *eq = strchr(tok, '=');
  if (tok[0] != '-' || !eq || eq == tok + 1 || eq[1] == '\0')
    return ir_error(ctx, TE_ERR_PARSE,
                    "te_target_parse: malformed option '%s' (expected -key=value)", tok);
  *eq = '\0';
  const char **slot = cuda && !strcmp(tok, "-arch")                  ? &o->arch
                      : !strcmp(tok, "-max_threads_per_block")       ? &o->threads
                      : !strcmp(tok, "-max_shared_memory_per_block") ? &o->shared
                                                                     : NULL;
  if (!slot)
    return ir_error(ctx, TE_ERR_TARGET,
                    "te_target_parse: unknown option '%s' for a %s target (known: %s"
                    "-max_threads_per_block, -max_shared_memory_per_block)",
                    tok, cuda ? "cuda" : "vulkan", cuda ? "-arch, " : "");
  if (*slot)
    return ir_error(ctx, TE_ERR_PARSE, "te_target_parse: option '%s' given twice", tok);
  *slot = eq + 1;
  return TE_OK;
}

static void tg_gpu_defaults(te_target *t, bool cuda) {
  t->kind = cuda ? TG_CUDA : TG_VULKAN;
  t->gpu_arch = cuda ? 80 : 0;
  t->max_threads_per_block = cuda ? 1024 : 256;
  t->max_block_dim[0] = t->max_block_dim[1] = cuda ? 1024 : 256;
  t->max_block_dim[2] = 64;
  t->max_grid_dim[0] = cuda ? INT32_MAX : 65535;
  t->max_grid_dim[1] = t->max_grid_dim[2] = 65535;
  t->max_shared_bytes = cuda ? 48 * 1024 : 32 * 1024;
  t->triple = cuda ? "nvptx64-nvidia-cuda" : "spirv-unknown-vulkan1.1";
  t->features = "";
  t->vector_bits = 128;
  t->is_host = false;
}

static te_status tg_gpu_limits(te_ctx *ctx, bool cuda, const tg_gpu_opts *o, te_target *t) {
  if (o->threads) {
    int64_t n = tg_parse_count(o->threads, 1024);
    if (n < 0)
      return ir_error(ctx, TE_ERR_TARGET,
                      "te_target_parse: -max_threads_per_block=%s must be a count from 1 to 1024",
                      o->threads);
    t->max_threads_per_block = (int)n;
    for (int d = 0; d < 2; d++)
      t->max_block_dim[d] = (int)n;
    if (t->max_block_dim[2] > n)
      t->max_block_dim[2] = (int)n;
  }
  if (o->shared) {
    int64_t cap = cuda ? 227 * 1024 : 64 * 1024;
    int64_t n = tg_parse_count(o->shared, cap);
    if (n < 0)
      return ir_error(ctx, TE_ERR_TARGET,
                      "te_target_parse: -max_shared_memory_per_block=%s must be a byte count "
                      "from 1 to %" PRId64,
                      o->shared, cap);
    t->max_shared_bytes = n;
  }
  return TE_OK;
}

static te_status tg_gpu_parse_text(te_ctx *ctx, char *s, te_target *t) {
  const char *sep = " \t\n";
  char *save = NULL;
  char *kind = strtok_r(s, sep, &save);
  bool cuda = strcmp(kind, "vulkan") != 0;
  tg_gpu_defaults(t, cuda);
  tg_gpu_opts o = {0};
  for (char *tok; (tok = strtok_r(NULL, sep, &save));) {
    te_status st = tg_gpu_option(ctx, cuda, tok, &o);
    if (st != TE_OK)
      return st;
  }
  if (o.arch) {
    te_status st = tg_parse_arch(ctx, o.arch, t);
    if (st != TE_OK)
      return st;
  }
  return tg_gpu_limits(ctx, cuda, &o, t);
}

te_status tg_gpu_parse(te_ctx *ctx, const char *s, te_target *t) {
  char *copy = ir_strdup_malloc(ctx, s);
  if (!copy)
    return ir_error(ctx, TE_ERR_NOMEM, "te_target_parse: out of memory");
  t->ctx = ctx;
  te_status st = tg_gpu_parse_text(ctx, copy, t);
  free(copy);
  if (st != TE_OK)
    return st;
  ir_str str = {.ctx = ctx};
  char cpu[16] = "";
  if (t->kind == TG_CUDA) {
    snprintf(cpu, sizeof cpu, "sm_%d", t->gpu_arch);
    ir_str_printf(&str, "cuda -arch=%s ", cpu);
  } else {
    ir_str_puts(&str, "vulkan ");
  }
  ir_str_printf(&str, "-max_threads_per_block=%d -max_shared_memory_per_block=%" PRId64,
                t->max_threads_per_block, t->max_shared_bytes);
  char *text = ir_str_take(&str);
  t->str = text ? ir_strdup_persistent(ctx, text) : NULL;
  t->cpu = ir_strdup_persistent(ctx, cpu);
  free(text);
  if (!t->str || !t->cpu)
    return ir_error(ctx, TE_ERR_NOMEM, "te_target_parse: out of memory");
  return TE_OK;
}
