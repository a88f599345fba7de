/* target.h — what code is made for: the target description (internal).
 *
 * The target layer (lib/target/) sits on lib/base only: scheduling, lowering and code generation
 * all read a te_target, none of them owns it. te_target_parse (target.c: CPU targets, resolved
 * against LLVM; target_gpu.c: cuda and vulkan) makes one from a target string. A target holds
 * the resolved names LLVM needs, the preferred vector width and, for GPU targets, the launch
 * limits that the lowering checks kernels against.
 */
#ifndef TE_TARGET_H
#define TE_TARGET_H

#include "base/base.h"

typedef enum tg_kind { TG_LLVM, TG_CUDA, TG_VULKAN } tg_kind;

struct te_target {
  te_ctx *ctx;
  tg_kind kind;
  const char *triple;    /* resolved: never NULL for LLVM */
  const char *cpu;       /* resolved ("znver5" for native on this host) */
  const char *features;  /* resolved "+avx512f,..." */
  int vector_bits;       /* preferred vector width: 512, 256, 128 */
  bool is_host;          /* JIT-able in this process */
  const char *str;       /* canonical string */
  const char *short_str; /* the string people read (te_target_short_str); NULL: str */
  /* GPU targets (kind CUDA or VULKAN; target_gpu.c). The lowering checks launches against these
     limits; 0 for CPU targets. */
  int gpu_arch;              /* cuda: the SM version, 80 for sm_80; vulkan: 0 */
  int max_threads_per_block; /* threads in one block / workgroup (all axes together) */
  int max_block_dim[3];      /* threads per block on x, y, z */
  int64_t max_grid_dim[3];   /* blocks on x, y, z */
  int64_t max_shared_bytes;  /* shared (workgroup) memory of one block, in bytes */
  te_target *host;           /* GPU targets: the CPU target host entries are compiled for
                                (made by the first build, codegen/ptx_module.c) */
};

/* True for a cuda or vulkan target. */
static inline bool tg_is_gpu(const te_target *t) {
  return t && (t->kind == TG_CUDA || t->kind == TG_VULKAN);
}

/* True when CPU target t has the x86 feature feat ("avx512vnni", "avxvnni", "avx512vl"): an
   explicit +feat / -feat in its features decides, else its CPU (a table, target.c). */
bool tg_has_feature(const te_target *t, const char *feat);

/* GPU target strings (target_gpu.c): true when s starts with the kind "cuda", "nvptx" or
   "vulkan"; the parse fills t (kind, limits, canonical string) or records the error. */
bool tg_string_is_gpu(const char *s);
te_status tg_gpu_parse(te_ctx *, const char *s, te_target *t);

#endif
