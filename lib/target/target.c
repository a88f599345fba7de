/* target.c — target strings: parsing, resolution against LLVM, and target machines.
 *
 *   "llvm"                         the host: its triple, CPU and features (as -mcpu=native)
 *   "llvm -mcpu=native"            the same, said explicitly
 *   "llvm -mtriple=T -mcpu=C -mattr=+a,-b"   any CPU of the X86 or AArch64 back ends
 *   "cuda ..." / "nvptx ..." / "vulkan ..."  GPU targets: parsed in target_gpu.c
 *
 * A target is resolved once, here: the triple is normalised, "native" becomes the host's CPU
 * name and feature list (LLVMGetHostCPUName/Features), and the canonical string written back
 * names all three, so a tuning log or a saved library says exactly what the code was made for and
 * parsing that string again gives the same target. LLVM's C API cannot tell whether a CPU or
 * feature name exists (an unknown one is only a warning printed at code generation), so names
 * are checked against cpus.def, generated from LLVM 22 by gen_cpus.sh; that table also gives each
 * x86 CPU's vector width (512 with AVX-512F, 256 with AVX/AVX2, else 128; AArch64: 128, NEON).
 * A target is JIT-able (is_host) when it is the host's triple and CPU and adds no feature the
 * host lacks; other targets compile (IR, asm) but are not run in this process.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>

#include "target_llvm.h"

typedef enum tg_arch { TG_ARCH_X86, TG_ARCH_AARCH64, TG_ARCH_OTHER } tg_arch;

typedef struct tg_cpu_name {
  tg_arch arch;
  const char *name;
  int vector_bits;
} tg_cpu_name;

static const tg_cpu_name tg_cpus[] = {
#define TG_CPU(arch, name, bits) {TG_ARCH_##arch, name, bits},
#define TG_FEATURE(arch, name)
#include "cpus.def"
#undef TG_CPU
#undef TG_FEATURE
};

static const tg_cpu_name tg_features[] = {
#define TG_CPU(arch, name, bits)
#define TG_FEATURE(arch, name) {TG_ARCH_##arch, name, 0},
#include "cpus.def"
#undef TG_CPU
#undef TG_FEATURE
};

static pthread_once_t tg_init_once = PTHREAD_ONCE_INIT;

static void tg_init_targets_once(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeAArch64TargetInfo();
  LLVMInitializeAArch64Target();
  LLVMInitializeAArch64TargetMC();
  LLVMInitializeAArch64AsmPrinter();
}

void tg_llvm_init(void) { pthread_once(&tg_init_once, tg_init_targets_once); }

LLVMTargetMachineRef tg_llvm_machine(te_ctx *ctx, const te_target *t, bool for_jit) {
  tg_llvm_init();
  LLVMTargetRef lt = NULL;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &lt, &err)) {
    ir_error(ctx, TE_ERR_TARGET, "te_target: unknown triple '%s': %s", t->triple, err ? err : "");
    LLVMDisposeMessage(err);
    return NULL;
  }
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
      lt, t->triple, t->cpu, t->features ? t->features : "", LLVMCodeGenLevelAggressive,
      LLVMRelocPIC, for_jit ? LLVMCodeModelJITDefault : LLVMCodeModelDefault);
  if (!tm)
    ir_error(ctx, TE_ERR_TARGET, "te_target: LLVM cannot make a target machine for '%s' -mcpu=%s",
             t->triple, t->cpu);
  return tm;
}

static tg_arch tg_arch_of(const char *triple) {
  if (!strncmp(triple, "x86_64", 6) ||
      (triple[0] == 'i' && strchr("3456", triple[1]) && !strncmp(triple + 2, "86", 2)))
    return TG_ARCH_X86;
  if (!strncmp(triple, "aarch64", 7) || !strncmp(triple, "arm64", 5))
    return TG_ARCH_AARCH64;
  return TG_ARCH_OTHER;
}

static const tg_cpu_name *tg_find(const tg_cpu_name *tab, size_t n, tg_arch arch, const char *name,
                                  size_t len) {
  for (size_t i = 0; i < n; i++)
    if (tab[i].arch == arch && strlen(tab[i].name) == len && !strncmp(tab[i].name, name, len))
      return &tab[i];
  return NULL;
}

/* ---------------------------------------------------------------- parsing */

typedef struct tg_opts {
  char *triple, *cpu, *mattr; /* point into the parser's copy */
} tg_opts;

static te_status tg_parse_option(te_ctx *ctx, char *tok, tg_opts *o) {
  char *eq = strchr(tok, '=');
  if (tok[0] != '-' || !eq || eq == tok + 1 || eq[1] == '\0')
    return ir_error(ctx, TE_ERR_PARSE,
                    "te_target_parse: malformed option '%s' (expected -key=value)", tok);
  *eq = '\0';
  char **slot = !strcmp(tok, "-mtriple") ? &o->triple
                : !strcmp(tok, "-mcpu")  ? &o->cpu
                : !strcmp(tok, "-mattr") ? &o->mattr
                                         : NULL;
  if (!slot)
    return ir_error(ctx, TE_ERR_TARGET,
                    "te_target_parse: unknown option '%s' (known: -mtriple, -mcpu, -mattr)", tok);
  if (*slot)
    return ir_error(ctx, TE_ERR_PARSE, "te_target_parse: option '%s' given twice", tok);
  *slot = eq + 1;
  return TE_OK;
}

/* Splits s (a writable copy) into the kind and options. */
static te_status tg_parse(te_ctx *ctx, char *s, const char **kind, tg_opts *o) {
  const char *sep = " \t\n";
  char *save = NULL;
  char *tok = strtok_r(s, sep, &save);
  if (!tok)
    return ir_error(ctx, TE_ERR_PARSE, "te_target_parse: empty target string");
  *kind = tok;
  if (strcmp(tok, "llvm"))
    return ir_error(ctx, TE_ERR_TARGET,
                    "te_target_parse: unknown target kind '%s' (known: llvm, cuda, vulkan)", tok);
  while ((tok = strtok_r(NULL, sep, &save))) {
    te_status st = tg_parse_option(ctx, tok, o);
    if (st != TE_OK)
      return st;
  }
  return TE_OK;
}

/* ---------------------------------------------------------------- features */

/* A feature list "+a,-b,..." as separate items. */
typedef struct tg_featlist {
  int n, cap;
  char **items; /* malloc'd */
} tg_featlist;

static void tg_featlist_free(tg_featlist *l) {
  for (int i = 0; i < l->n; i++)
    free(l->items[i]);
  free(l->items);
  *l = (tg_featlist){0};
}

/* Adds an item, replacing an earlier one for the same feature (later settings win, as in LLVM). */
static bool tg_featlist_set(tg_featlist *l, const char *item, size_t len) {
  for (int i = 0; i < l->n; i++) {
    if (strlen(l->items[i] + 1) == len - 1 && !strncmp(l->items[i] + 1, item + 1, len - 1)) {
      l->items[i][0] = item[0];
      return true;
    }
  }
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    char **items = ir_realloc(NULL, l->items, sizeof *items * (size_t)cap);
    if (!items)
      return false;
    l->items = items, l->cap = cap;
  }
  char *copy = ir_malloc(NULL, len + 1);
  if (!copy)
    return false;
  memcpy(copy, item, len);
  copy[len] = '\0';
  l->items[l->n++] = copy;
  return true;
}

/* Parses "+a,-b" into l; validates names against the table for arch (when known). */
static te_status tg_featlist_add(te_ctx *ctx, tg_featlist *l, const char *s, tg_arch arch) {
  while (s && *s) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    if (len > 0) {
      if ((s[0] != '+' && s[0] != '-') || len < 2)
        return ir_error(ctx, TE_ERR_PARSE,
                        "te_target_parse: malformed -mattr item '%.*s' (expected +name or -name)",
                        (int)len, s);
      if (arch != TG_ARCH_OTHER &&
          !tg_find(tg_features, sizeof tg_features / sizeof tg_features[0], arch, s + 1, len - 1))
        return ir_error(ctx, TE_ERR_TARGET, "te_target_parse: unknown CPU feature '%.*s'",
                        (int)len - 1, s + 1);
      if (!tg_featlist_set(l, s, len))
        return ir_error(ctx, TE_ERR_NOMEM, "te_target_parse: out of memory");
    }
    s = end ? end + 1 : NULL;
  }
  return TE_OK;
}

static int tg_featlist_find(const tg_featlist *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->items[i] + 1, name))
      return l->items[i][0];
  return 0;
}

static char *tg_featlist_join(const tg_featlist *l) {
  ir_str s = {0};
  for (int i = 0; i < l->n; i++)
    ir_str_printf(&s, "%s%s", i ? "," : "", l->items[i]);
  char *r = ir_str_take(&s);
  return r ? r : ir_strdup_malloc(NULL, "");
}

/* The vector width: the CPU's, then -mattr switching AVX-512F / AVX / AVX2 on or off. */
static int tg_vector_bits(tg_arch arch, int cpu_bits, const tg_featlist *l) {
  if (arch != TG_ARCH_X86)
    return 128;
  bool avx512 = cpu_bits >= 512, avx = cpu_bits >= 256;
  int f = tg_featlist_find(l, "avx512f");
  if (f)
    avx512 = f == '+';
  int a = tg_featlist_find(l, "avx"), a2 = tg_featlist_find(l, "avx2");
  if (a || a2)
    avx = a == '+' || a2 == '+';
  if (a == '-')
    avx = false, avx512 = false;
  return avx512 ? 512 : avx ? 256 : 128;
}

/* ---------------------------------------------------------------- resolution */

static char *tg_llvm_string(te_ctx *ctx, char *msg) { /* copies and disposes an LLVM string */
  char *s = ir_strdup_persistent(ctx, msg ? msg : "");
  LLVMDisposeMessage(msg);
  return s;
}

/* Normalized triples name the same platform: arch, OS and environment equal; the vendor
   ("pc", "unknown") does not matter (Debian says x86_64-linux-gnu, LLVM x86_64-pc-linux-gnu). */
static bool tg_same_platform(const char *a, const char *b) {
  const char *da = strchr(a, '-'), *db = strchr(b, '-');
  if (!da || !db || da - a != db - b || strncmp(a, b, (size_t)(da - a)))
    return !strcmp(a, b);
  const char *ra = strchr(da + 1, '-'), *rb = strchr(db + 1, '-');
  if (!ra || !rb)
    return !strcmp(a, b);
  return !strcmp(ra, rb);
}

/* Every feature the target turns on is on in the host. */
static bool tg_host_has_all(const tg_featlist *want, const tg_featlist *host) {
  for (int i = 0; i < want->n; i++)
    if (want->items[i][0] == '+' && tg_featlist_find(host, want->items[i] + 1) != '+')
      return false;
  return true;
}

static te_status tg_resolve_cpu(te_ctx *ctx, const tg_opts *o, te_target *t, bool host_triple,
                                tg_arch arch, int *cpu_bits, bool *native) {
  *native = (!o->cpu && host_triple) || (o->cpu && !strcmp(o->cpu, "native"));
  if (*native && !host_triple)
    return ir_error(ctx, TE_ERR_TARGET,
                    "te_target_parse: -mcpu=native needs the host's triple, not '%s'", t->triple);
  t->cpu = *native ? tg_llvm_string(ctx, LLVMGetHostCPUName())
                   : ir_strdup_persistent(ctx, o->cpu ? o->cpu : "generic");
  if (!t->cpu)
    return TE_ERR_NOMEM;
  *cpu_bits = 128;
  if (arch == TG_ARCH_OTHER)
    return TE_OK;
  const tg_cpu_name *c =
      tg_find(tg_cpus, sizeof tg_cpus / sizeof tg_cpus[0], arch, t->cpu, strlen(t->cpu));
  if (c)
    *cpu_bits = c->vector_bits;
  else if (!*native)
    return ir_error(ctx, TE_ERR_TARGET, "te_target_parse: unknown CPU '%s' for triple '%s'", t->cpu,
                    t->triple);
  return TE_OK;
}

/* The string people read (te_target_short_str): the triple only when it is not the host's
   platform, the CPU, and of the features only those that make it differ from the host (when it
   is the host's CPU: a canonical string read back gives the short one too) or those the string
   set (another CPU), at most TG_SHORT_FEATURES of them with the count of the rest. The host's
   whole list is over 1,000 characters on an AVX-512 CPU. */
enum { TG_SHORT_FEATURES = 6 };

static te_status tg_short_str(te_ctx *ctx, te_target *t, bool host_triple, const tg_featlist *feats,
                              const tg_featlist *host, bool host_cpu) {
  ir_str s = {0};
  ir_str_puts(&s, "llvm");
  if (!host_triple)
    ir_str_printf(&s, " -mtriple=%s", t->triple);
  ir_str_printf(&s, " -mcpu=%s", t->cpu);
  int shown = 0, more = 0;
  for (int i = 0; i < feats->n; i++) {
    const char *f = feats->items[i];
    if (host_cpu && tg_featlist_find(host, f + 1) == f[0])
      continue; /* as on the host */
    if (shown == TG_SHORT_FEATURES) {
      more++;
      continue;
    }
    ir_str_printf(&s, "%s%s", shown++ ? "," : " -mattr=", f);
  }
  if (more)
    ir_str_printf(&s, ",... (%d more)", more);
  char *text = ir_str_take(&s);
  t->short_str = text ? ir_strdup_persistent(ctx, text) : NULL;
  free(text);
  return t->short_str ? TE_OK : ir_error(ctx, TE_ERR_NOMEM, "te_target_parse: out of memory");
}

static te_status tg_resolve(te_ctx *ctx, const tg_opts *o, te_target *t) {
  tg_llvm_init();
  char *raw = LLVMGetDefaultTargetTriple();
  char *host_triple = tg_llvm_string(ctx, LLVMNormalizeTargetTriple(raw));
  LLVMDisposeMessage(raw);
  t->triple = o->triple ? tg_llvm_string(ctx, LLVMNormalizeTargetTriple(o->triple)) : host_triple;
  if (!host_triple || !t->triple)
    return TE_ERR_NOMEM;
  LLVMTargetRef lt = NULL;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &lt, &err)) {
    LLVMDisposeMessage(err);
    return ir_error(ctx, TE_ERR_TARGET,
                    "te_target_parse: unknown triple '%s' (this te compiles for x86_64 and "
                    "aarch64)",
                    o->triple);
  }
  bool is_host_triple = tg_same_platform(t->triple, host_triple);
  tg_arch arch = tg_arch_of(t->triple);
  int cpu_bits;
  bool native;
  te_status st = tg_resolve_cpu(ctx, o, t, is_host_triple, arch, &cpu_bits, &native);
  if (st != TE_OK)
    return st;

  tg_featlist feats = {0}, host = {0};
  char *host_features = LLVMGetHostCPUFeatures();
  st = tg_featlist_add(ctx, &host, host_features, TG_ARCH_OTHER);
  if (st == TE_OK && native)
    st = tg_featlist_add(ctx, &feats, host_features, TG_ARCH_OTHER);
  LLVMDisposeMessage(host_features);
  if (st == TE_OK)
    st = tg_featlist_add(ctx, &feats, o->mattr, arch);
  if (st == TE_OK) {
    char *joined = tg_featlist_join(&feats);
    t->features = ir_strdup_persistent(ctx, joined ? joined : "");
    free(joined);
    t->vector_bits = tg_vector_bits(arch, cpu_bits, &feats);
    char *host_cpu = LLVMGetHostCPUName();
    bool same_cpu = is_host_triple && !strcmp(t->cpu, host_cpu);
    LLVMDisposeMessage(host_cpu);
    t->is_host = same_cpu && tg_host_has_all(&feats, &host);
    st = tg_short_str(ctx, t, is_host_triple, &feats, &host, same_cpu);
  }
  tg_featlist_free(&feats);
  tg_featlist_free(&host);
  return st;
}

static te_target *target_parse_impl(te_ctx *ctx, const char *s) {
  if (!ctx)
    return NULL;
  if (!s) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_target_parse: target string is NULL");
    return NULL;
  }
  char *copy = ir_strdup_malloc(ctx, s);
  te_target *t = copy ? ir_alloc_persistent(ctx, sizeof *t) : NULL;
  if (!copy || !t) {
    free(copy);
    if (!t)
      return NULL;
    ir_error(ctx, TE_ERR_NOMEM, "te_target_parse: out of memory");
    return NULL;
  }
  if (tg_string_is_gpu(s)) {
    free(copy);
    return tg_gpu_parse(ctx, s, t) == TE_OK ? t : NULL;
  }
  const char *kind = NULL;
  tg_opts o = {0};
  te_status st = tg_parse(ctx, copy, &kind, &o);
  if (st == TE_OK) {
    t->ctx = ctx;
    t->kind = TG_LLVM;
    st = tg_resolve(ctx, &o, t);
  }
  free(copy);
  if (st != TE_OK)
    return NULL;
  t->str = NULL;
  LLVMTargetMachineRef tm = tg_llvm_machine(ctx, t, false);
  if (!tm)
    return NULL;
  LLVMDisposeTargetMachine(tm);
  ir_str str = {.ctx = ctx};
  ir_str_printf(&str, "llvm -mtriple=%s -mcpu=%s", t->triple, t->cpu);
  if (t->features && *t->features)
    ir_str_printf(&str, " -mattr=%s", t->features);
  char *joined = ir_str_take(&str);
  t->str = joined ? ir_strdup_persistent(ctx, joined) : NULL;
  free(joined);
  if (!t->str) {
    ir_error(ctx, TE_ERR_NOMEM, "te_target_parse: out of memory");
    return NULL;
  }
  return t;
}

te_target *te_target_parse(te_ctx *ctx, const char *s) {
  if (!ctx)
    return NULL;
  return IR_PUBLIC_CALL_PTR(ctx, target_parse_impl(ctx, s));
}

const char *te_target_str(const te_target *t) { return t ? t->str : NULL; }

const char *te_target_short_str(const te_target *t) {
  return !t ? NULL : t->short_str ? t->short_str : t->str;
}

int te_target_vector_bits(const te_target *t) { return t ? t->vector_bits : 0; }

/* ---------------------------------------------------------------- feature queries */

/* The x86 CPUs (LLVM's names) whose feature set has AVX512-VNNI, and those with AVX-VNNI only
   (VEX-encoded, ymm/xmm). LLVM-C cannot ask a subtarget for a feature, so this is the table of
   LLVM 22's X86.td; an explicit +/- in the target's features overrides it. */
static const char *const tg_vnni512_cpus[] = {
    "cascadelake",    "cooperlake",    "icelake-client", "icelake-server",  "tigerlake",
    "sapphirerapids", "emeraldrapids", "graniterapids",  "graniterapids-d", "rocketlake",
    "diamondrapids",  "znver4",        "znver5",         "x86-64-v4"};
static const char *const tg_avxvnni_cpus[] = {
    "alderlake",        "raptorlake",     "meteorlake",    "arrowlake",     "arrowlake-s",
    "lunarlake",        "pantherlake",    "gracemont",     "sierraforest",  "grandridge",
    "clearwaterforest", "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
    "diamondrapids",    "znver5"};

static const char *const tg_bf16_512_cpus[] = {"cooperlake",    "sapphirerapids",  "emeraldrapids",
                                               "graniterapids", "graniterapids-d", "diamondrapids",
                                               "znver4",        "znver5"};

/* +1 / -1 when the features list feat explicitly, 0 when they do not. */
static int tg_feature_setting(const char *features, const char *feat) {
  int r = 0;
  size_t n = strlen(feat);
  for (const char *p = features; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n + 1 && !strncmp(p + 1, feat, n))
      r = p[0] == '+' ? 1 : -1; /* the last setting wins */
    if (!end)
      break;
    p = end + 1;
  }
  return r;
}

static bool tg_cpu_in(const char *cpu, const char *const list[], size_t n) {
  for (size_t i = 0; cpu && i < n; i++)
    if (!strcmp(cpu, list[i]))
      return true;
  return false;
}

bool tg_has_feature(const te_target *t, const char *feat) {
  if (!t || t->kind != TG_LLVM)
    return false;
  int set = tg_feature_setting(t->features, feat);
  if (set)
    return set > 0;
  if (!strcmp(feat, "avx512vnni"))
    return tg_cpu_in(t->cpu, tg_vnni512_cpus, sizeof tg_vnni512_cpus / sizeof *tg_vnni512_cpus);
  if (!strcmp(feat, "avx512bf16"))
    return tg_cpu_in(t->cpu, tg_bf16_512_cpus, sizeof tg_bf16_512_cpus / sizeof *tg_bf16_512_cpus);
  if (!strcmp(feat, "avxvnni"))
    return tg_cpu_in(t->cpu, tg_avxvnni_cpus, sizeof tg_avxvnni_cpus / sizeof *tg_avxvnni_cpus);
  if (!strcmp(feat, "avx512vl")) /* every AVX-512 CPU LLVM knows has VL, but Knights */
    return t->vector_bits >= 512 && strcmp(t->cpu, "knl") && strcmp(t->cpu, "knm");
  return false;
}
