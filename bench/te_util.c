/* te_util.c — the fallback ladder of te schedules, building, and calling kernels by their entry
 * point (te_util.h). Every attempt gets a fresh context, so a refused schedule leaves nothing
 * behind (te's errors are sticky per context); the kernel that is kept owns its context.
 */
#include "te_util.h"

#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_show_ir;

/* Preference of the optional steps: vectorizing matters most, then threads, then the extra
   steps, then unrolling. The ladder walks every subset of them, heaviest first. */
int tb_ladder(unsigned extras, unsigned ladder[TB_MAX_LADDER]) {
  static const unsigned bits[5] = {TB_VEC, TB_PAR, TB_EXTRA, TB_EXTRA2, TB_UNROLL};
  int n = 0;
  for (int m = 31; m >= 0; m--) {
    unsigned f = TB_TILE;
    for (int b = 0; b < 5; b++)
      if (m & (16 >> b))
        f |= bits[b];
    if ((f & (TB_EXTRA | TB_EXTRA2)) & ~extras)
      continue;
    ladder[n++] = f;
  }
  ladder[n++] = 0; /* te's default schedule */
  return n;
}

const char *tb_flags_str(unsigned flags, const char *const names[2], char *buf, int size) {
  if (!(flags & TB_TILE)) {
    snprintf(buf, (size_t)size, "default schedule");
    return buf;
  }
  const char *e1 = names && names[0] ? names[0] : "extra";
  const char *e2 = names && names[1] ? names[1] : "extra2";
  snprintf(buf, (size_t)size, "tiled%s%s%s%s%s%s%s", (flags & TB_VEC) ? "+vec" : "",
           (flags & TB_PAR) ? "+par" : "", (flags & TB_EXTRA) ? "+" : "",
           (flags & TB_EXTRA) ? e1 : "", (flags & TB_EXTRA2) ? "+" : "",
           (flags & TB_EXTRA2) ? e2 : "", (flags & TB_UNROLL) ? "+unroll" : "");
  return buf;
}

static void append(char *dst, size_t size, const char *text) {
  size_t len = strlen(dst);
  if (len + 1 < size)
    strncat(dst, text, size - len - 1);
}

/* Defines and builds one kernel in a fresh context. Returns the context (the caller frees it)
   with *mod and *entry set when usable, else NULL with the reason in why. */
static te_ctx *build_one(tb_define_fn define, const void *params, unsigned flags, const char *name,
                         tb_def *def, te_module **mod, void **entry, char *why, size_t why_size) {
  te_ctx *ctx = te_ctx_new();
  if (!ctx) {
    snprintf(why, why_size, "out of memory");
    return NULL;
  }
  memset(def, 0, sizeof *def);
  define(ctx, flags, params, def);
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  *mod = NULL;
  if (te_last_status(ctx) == TE_OK && def->s && target)
    te_build(def->s, name, def->ntensors, def->tensors, 0, NULL, target, mod);
  *entry = te_last_status(ctx) == TE_OK && *mod ? te_module_entry(*mod, name) : NULL;
  if (!*entry) {
    snprintf(why, why_size, "%s: %s", te_status_str(te_last_status(ctx)),
             te_last_status(ctx) == TE_OK ? "no kernel entry" : te_last_error(ctx));
    te_ctx_free(ctx);
    return NULL;
  }
  return ctx;
}

static int cmp_total(const void *a, const void *b) {
  const te_build_times *x = a, *y = b;
  double tx = x->lower_s + x->llvm_s + x->jit_s, ty = y->lower_s + y->llvm_s + y->jit_s;
  return (tx > ty) - (tx < ty);
}

/* The build times of the median of TB_COMPILE_SAMPLES builds of the same schedule (first: the
   kept kernel's): one build's time moves by 10-20% with the machine's other work. */
static te_build_times median_build_times(tb_define_fn define, const void *params, unsigned flags,
                                         const char *name, te_build_times first) {
  te_build_times t[TB_COMPILE_SAMPLES] = {first};
  int n = 1;
  for (; n < TB_COMPILE_SAMPLES; n++) {
    tb_def def;
    te_module *mod;
    void *entry;
    char why[512];
    te_ctx *ctx = build_one(define, params, flags, name, &def, &mod, &entry, why, sizeof why);
    if (!ctx)
      break;
    t[n] = te_module_build_times(mod);
    te_ctx_free(ctx);
  }
  qsort(t, (size_t)n, sizeof t[0], cmp_total);
  return t[n / 2];
}

/* One attempt: build, then the requested dumps. Returns 1 when usable, else writes the reason
   into why. */
static int attempt(tb_define_fn define, const void *params, unsigned flags, const char *name,
                   tb_kernel *k, char *why, size_t why_size) {
  tb_def def;
  te_module *mod;
  void *entry;
  te_ctx *ctx = build_one(define, params, flags, name, &def, &mod, &entry, why, why_size);
  if (!ctx)
    return 0;
  if (tb_show_ir) {
    char *ir = te_lower_text(def.s, def.ntensors, def.tensors, 0, NULL);
    fprintf(stderr, "---- lowered IR of %s ----\n%s\n", name, ir ? ir : te_last_error(ctx));
    te_free(ir);
  }
  if (getenv("TB_SAVE")) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", getenv("TB_SAVE"), name);
    te_module_save(mod, path,
                   TE_SAVE_OBJECT | TE_SAVE_HEADER | (getenv("TB_SAVE_IR") ? TE_SAVE_LLVM_IR : 0));
  }
  if (tb_show_ir > 1) {
    const char *as = te_module_source(mod, "asm");
    fprintf(stderr, "---- assembly of %s ----\n%s\n", name, as ? as : te_last_error(ctx));
  }
  k->ctx = ctx;
  k->mod = mod;
  k->entry = entry;
  k->ntensors = def.ntensors;
  k->flags = flags;
  k->times = median_build_times(define, params, flags, name, te_module_build_times(mod));
  return 1;
}

int tb_build(const char *label, const char *name, tb_define_fn define, const void *params,
             const unsigned *ladder, int nladder, const char *const extra_names[2],
             tb_kernel *out) {
  memset(out, 0, sizeof *out);
  char refused[160] = "";
  for (int i = 0; i < nladder; i++) {
    char desc[96], why[512];
    tb_flags_str(ladder[i], extra_names, desc, sizeof desc);
    if (attempt(define, params, ladder[i], name, out, why, sizeof why)) {
      snprintf(out->desc, sizeof out->desc, "%s", desc);
      snprintf(out->note, sizeof out->note, "schedule %s%s%s", desc,
               refused[0] ? "; refused: " : "", refused);
      fprintf(stderr,
              "  %s: te schedule '%s'%s (build: lower %.1f ms, llvm %.1f ms, jit %.1f ms)\n", label,
              desc, i ? " (fallback)" : "", out->times.lower_s * 1e3, out->times.llvm_s * 1e3,
              out->times.jit_s * 1e3);
      return 1;
    }
    fprintf(stderr, "  %s: te schedule '%s' refused: %s\n", label, desc, why);
    if (i < 3) { /* the note keeps the first reasons, short */
      char item[200];
      snprintf(item, sizeof item, "%s%s (%.60s)", refused[0] ? ", " : "", desc, why);
      append(refused, sizeof refused, item);
    }
  }
  snprintf(out->note, sizeof out->note, "no schedule built: %s", refused);
  return 0;
}

void tb_free(tb_kernel *k) {
  if (k->ctx)
    te_ctx_free(k->ctx);
  memset(k, 0, sizeof *k);
}

typedef int32_t (*entry2)(DLTensor *, DLTensor *);
typedef int32_t (*entry3)(DLTensor *, DLTensor *, DLTensor *);
typedef int32_t (*entry4)(DLTensor *, DLTensor *, DLTensor *, DLTensor *);
typedef int32_t (*entry5)(DLTensor *, DLTensor *, DLTensor *, DLTensor *, DLTensor *);

int tb_call(const tb_kernel *k, DLTensor *const a[]) {
  /* The entry's address comes from the JIT as a void *; converting it to a function pointer is
     what dlsym users do too (POSIX guarantees it works). */
  union {
    void *p;
    entry2 e2;
    entry3 e3;
    entry4 e4;
    entry5 e5;
  } u = {k->entry};
  switch (k->ntensors) {
  case 2:
    return u.e2(a[0], a[1]);
  case 3:
    return u.e3(a[0], a[1], a[2]);
  case 4:
    return u.e4(a[0], a[1], a[2], a[3]);
  case 5:
    return u.e5(a[0], a[1], a[2], a[3], a[4]);
  default:
    return -1;
  }
}

void tb_tensor(DLTensor *t, int64_t storage[8], float *data, int ndim, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < ndim; i++)
    storage[i] = shape[i];
  t->data = data;
  t->device = (DLDevice){kDLCPU, 0};
  t->ndim = ndim;
  t->dtype = (DLDataType){kDLFloat, 32, 1};
  t->shape = storage;
  t->strides = NULL;
  t->byte_offset = 0;
}

void tb_set_threads(int n) { te_rt_set_num_threads(n); }

int tb_run(void *arg) {
  const tb_args *a = arg;
  return tb_call(a->k, a->args);
}

void tb_run_te(const bench_cfg *cfg, const char *wl, int t, int kind, double work, int have,
               tb_args *args, float *out, size_t nout, const bench_ref *chk) {
  const tb_kernel *k = args->k;
  if (!have)
    bench_add_failed(wl, "te", t, k->note);
  else if (t > 1 && !(k->flags & TB_PAR))
    bench_add_copy(wl, "te", 1, t, "no parallel loop: same kernel as 1 thread");
  else {
    tb_set_threads(t);
    bench_run_variant(cfg, wl, "te", t, kind, work, tb_run, args, out, nout, chk, k->note);
  }
}
