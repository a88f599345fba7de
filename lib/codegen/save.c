/* save.c — te_module_save and te_modules_save: kernels to files, for use without te at run time.
 *
 * path_prefix "dir/name" gives dir/name.o, dir/libname.a, dir/name.h, dir/name.ll and
 * dir/name.s, as `what` asks (GPU targets: dir/name.ptx, or dir/name.spv / dir/name_<i>.spv, one
 * SPIR-V binary per device kernel). The request is checked whole before anything is made (a prefix
 * whose base name is not a C identifier, unknown flags, modules without kernels, of another
 * context or another target, duplicate kernel names, a target that cannot write what is asked);
 * then every file's bytes are made in memory (save_object.c, save_archive.c, save_header.c);
 * then each is written under a temporary name in the same directory (".name.o.tmp-PID-N",
 * created with O_EXCL and mode 0666 less the umask) and, when all are complete, renamed onto
 * its final name. A failure at any point before the renames removes the temporary files, so no
 * partial file is ever left behind and earlier versions of the files stay intact (a rename
 * within one directory does not fail once the files are written, short of a final name that is
 * a directory, which is checked first).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llvm_cg.h"
#include "save.h"

enum { CG_MAX_SPV = 64, CG_NFILES = 7 + CG_MAX_SPV, CG_MAX_NAME = 200 };
static const unsigned cg_known_flags = TE_SAVE_OBJECT | TE_SAVE_STATIC_LIB | TE_SAVE_HEADER |
                                       TE_SAVE_LLVM_IR | TE_SAVE_ASM | TE_SAVE_PTX | TE_SAVE_SPIRV;

typedef struct cg_out {
  char *path; /* final name, malloc'd */
  char *tmp;  /* temporary name while written, malloc'd; NULL once renamed */
  cg_blob blob;
} cg_out;

typedef struct cg_save {
  te_ctx *ctx;
  const char *fn;
  char *dir;        /* "dir/" or "", malloc'd */
  const char *name; /* the base name, inside path_prefix */
  int nout;
  cg_out out[CG_NFILES];
} cg_save;

static bool cg_is_c_identifier(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

static te_status cg_check_prefix(cg_save *sv, const char *prefix, unsigned what) {
  if (!prefix || !*prefix)
    return ir_error(sv->ctx, TE_ERR_INVALID_ARG, "%s: path prefix is %s", sv->fn,
                    prefix ? "empty" : "NULL");
  const char *slash = strrchr(prefix, '/');
  sv->name = slash ? slash + 1 : prefix;
  if (!cg_is_c_identifier(sv->name) || strlen(sv->name) > CG_MAX_NAME)
    return ir_error(sv->ctx, TE_ERR_INVALID_ARG,
                    "%s: path prefix '%s': the base name '%.*s' must be a C identifier of at "
                    "most %d characters (it names the header's guard and lib<name>.a)",
                    sv->fn, prefix, 64, sv->name, CG_MAX_NAME);
  if (what == 0 || (what & ~cg_known_flags))
    return ir_error(sv->ctx, TE_ERR_INVALID_ARG,
                    "%s: '%s': what must be a nonzero combination of TE_SAVE_* flags (got 0x%x)",
                    sv->fn, prefix, what);
  size_t dlen = slash ? (size_t)(slash - prefix) + 1 : 0;
  sv->dir = ir_malloc(sv->ctx, dlen + 1);
  if (!sv->dir)
    return ir_error(sv->ctx, TE_ERR_NOMEM, "%s: out of memory", sv->fn);
  memcpy(sv->dir, prefix, dlen);
  sv->dir[dlen] = '\0';
  return TE_OK;
}

/* Modules: present, of this context, with kernels, one target, distinct kernel names. */
static te_status cg_check_modules(cg_save *sv, int n, te_module *const mods[]) {
  if (n <= 0 || !mods)
    return ir_error(sv->ctx, TE_ERR_INVALID_ARG, "%s: '%s': no modules given (nothing to save)",
                    sv->fn, sv->name);
  for (int i = 0; i < n; i++) {
    te_module *m = mods[i];
    if (!m)
      return ir_error_null(sv->ctx, "%s: '%s': module #%d is NULL", sv->fn, sv->name, i);
    if (m->ctx != sv->ctx)
      return ir_error(sv->ctx, TE_ERR_INVALID_ARG,
                      "%s: '%s': module #%d belongs to another context", sv->fn, sv->name, i);
    if (m->nkernels == 0 || !m->target)
      return ir_error(sv->ctx, TE_ERR_INVALID_ARG,
                      "%s: '%s': module #%d holds no kernels (nothing to save)", sv->fn, sv->name,
                      i);
    for (int a = 0; a < m->nkernels; a++)
      for (int x = 0; x < m->kernels[a].nexterns; x++)
        if (!m->kernels[a].externs[x].symbol)
          return ir_error(sv->ctx, TE_ERR_UNSUPPORTED,
                          "%s: '%s': kernel '%s' calls extern stage '%s' through a function "
                          "pointer, which a saved library cannot hold; give te_extern a symbol "
                          "(the program linking the library defines it)",
                          sv->fn, sv->name, m->kernels[a].name, m->kernels[a].externs[x].stage);
    char t1[256], t2[256];
    if (strcmp(m->target->str, mods[0]->target->str))
      return ir_error(sv->ctx, TE_ERR_TARGET,
                      "%s: '%s': kernel '%s' was built for '%s' but kernel '%s' for '%s' (one "
                      "library, one target)",
                      sv->fn, sv->name, m->kernels[0].name,
                      cg_target_brief(m->target, t1, sizeof t1), mods[0]->kernels[0].name,
                      cg_target_brief(mods[0]->target, t2, sizeof t2));
    for (int j = 0; j < i; j++)
      for (int a = 0; a < m->nkernels; a++)
        for (int b = 0; b < mods[j]->nkernels; b++)
          if (!strcmp(m->kernels[a].name, mods[j]->kernels[b].name))
            return ir_error(sv->ctx, TE_ERR_INVALID_ARG,
                            "%s: '%s': two kernels are called '%s' (modules #%d and #%d)", sv->fn,
                            sv->name, m->kernels[a].name, j, i);
  }
  return TE_OK;
}

static te_status cg_check_target(cg_save *sv, const te_target *t, unsigned what) {
  char tb[256];
  if ((what & (TE_SAVE_PTX | TE_SAVE_SPIRV)) && t->kind == TG_LLVM)
    return ir_error(sv->ctx, TE_ERR_TARGET,
                    "%s: '%s': target '%s' is a CPU target: it has no %s (for GPU targets)", sv->fn,
                    sv->name, cg_target_brief(t, tb, sizeof tb),
                    what & TE_SAVE_PTX ? "PTX" : "SPIR-V");
  if ((what & TE_SAVE_SPIRV) && t->kind != TG_VULKAN)
    return ir_error(sv->ctx, TE_ERR_TARGET,
                    "%s: '%s': target '%s' has no SPIR-V (a vulkan target has)", sv->fn, sv->name,
                    cg_target_brief(t, tb, sizeof tb));
  if ((what & TE_SAVE_PTX) && t->kind != TG_CUDA)
    return ir_error(sv->ctx, TE_ERR_TARGET, "%s: '%s': target '%s' has no PTX (a cuda target has)",
                    sv->fn, sv->name, cg_target_brief(t, tb, sizeof tb));
  if (what & (TE_SAVE_OBJECT | TE_SAVE_STATIC_LIB))
    return cg_check_object_target(sv->ctx, t, sv->fn);
  if ((what & (TE_SAVE_LLVM_IR | TE_SAVE_ASM)) && t->kind != TG_LLVM)
    return ir_error(sv->ctx, TE_ERR_TARGET, "%s: '%s': target '%s' has no LLVM IR or asm", sv->fn,
                    sv->name, cg_target_brief(t, tb, sizeof tb));
  return TE_OK;
}

/* Adds an output "dir/<before>name<after>" whose bytes are *blob (taken). */
static te_status cg_add_out(cg_save *sv, const char *before, const char *after, cg_blob *blob) {
  cg_out *o = &sv->out[sv->nout++];
  o->blob = *blob;
  *blob = (cg_blob){0};
  size_t len = strlen(sv->dir) + strlen(before) + strlen(sv->name) + strlen(after) + 1;
  if (!(o->path = ir_malloc(sv->ctx, len)))
    return ir_error(sv->ctx, TE_ERR_NOMEM, "%s: out of memory", sv->fn);
  snprintf(o->path, len, "%s%s%s%s", sv->dir, before, sv->name, after);
  return TE_OK;
}

/* TE_SAVE_SPIRV: one SPIR-V binary per device kernel, "dir/name.spv" when the modules hold one,
   else "dir/name_0.spv", "dir/name_1.spv", ... in module order, then launch order (each file's
   entry point is named after its device kernel). */
static te_status cg_add_spirv(cg_save *sv, int n, te_module *const mods[]) {
  int total = 0;
  for (int i = 0; i < n; i++)
    total += cg_vulkan_nkernels(mods[i]);
  if (total > CG_MAX_SPV)
    return ir_error(sv->ctx, TE_ERR_UNSUPPORTED, "%s: '%s': more than %d device kernels", sv->fn,
                    sv->name, CG_MAX_SPV);
  te_status st = TE_OK;
  for (int i = 0, k = 0; i < n && st == TE_OK; i++)
    for (int j = 0; j < cg_vulkan_nkernels(mods[i]) && st == TE_OK; j++, k++) {
      size_t nwords = 0;
      const uint32_t *w = cg_vulkan_words(mods[i], j, &nwords);
      cg_blob b = {ir_malloc(sv->ctx, nwords * 4 + 1), nwords * 4};
      if (!b.data)
        return ir_error(sv->ctx, TE_ERR_NOMEM, "%s: out of memory", sv->fn);
      memcpy(b.data, w, nwords * 4);
      char after[32];
      snprintf(after, sizeof after, total == 1 ? ".spv" : "_%d.spv", k);
      st = cg_add_out(sv, "", after, &b);
      cg_blob_free(&b);
    }
  return st;
}

/* Every requested file's bytes, in memory. */
static te_status cg_make_files(cg_save *sv, int n, te_module *const mods[], unsigned what) {
  cg_linked l = {0};
  cg_blob obj = {0}, b = {0};
  te_status st = TE_OK;
  if (what & (TE_SAVE_OBJECT | TE_SAVE_STATIC_LIB | TE_SAVE_LLVM_IR | TE_SAVE_ASM))
    st = cg_link_modules(sv->ctx, n, mods, sv->name, &l);
  if (st == TE_OK && (what & (TE_SAVE_OBJECT | TE_SAVE_STATIC_LIB)))
    st = cg_emit(sv->ctx, &l, LLVMObjectFile, &obj);
  if (st == TE_OK && (what & TE_SAVE_STATIC_LIB)) {
    char **syms = NULL;
    int nsyms = cg_exported_symbols(&l, &syms);
    char member[CG_MAX_NAME + 8];
    snprintf(member, sizeof member, "%s.o", sv->name);
    cg_ar_member mem = {member, obj.data, obj.size, nsyms, syms};
    st = nsyms < 0 ? ir_error(sv->ctx, TE_ERR_NOMEM, "%s: out of memory", sv->fn)
                   : cg_ar_write(sv->ctx, 1, &mem, &b);
    for (int i = 0; i < nsyms; i++)
      free(syms[i]);
    free(syms);
    if (st == TE_OK)
      st = cg_add_out(sv, "lib", ".a", &b);
  }
  if (st == TE_OK && (what & TE_SAVE_OBJECT))
    st = cg_add_out(sv, "", ".o", &obj);
  if (st == TE_OK && (what & TE_SAVE_HEADER) &&
      (st = cg_header_text(sv->ctx, n, mods, sv->name, &b)) == TE_OK)
    st = cg_add_out(sv, "", ".h", &b);
  if (st == TE_OK && (what & TE_SAVE_LLVM_IR) && (st = cg_emit_ll(sv->ctx, &l, &b)) == TE_OK)
    st = cg_add_out(sv, "", ".ll", &b);
  if (st == TE_OK && (what & TE_SAVE_ASM) &&
      (st = cg_emit(sv->ctx, &l, LLVMAssemblyFile, &b)) == TE_OK)
    st = cg_add_out(sv, "", ".s", &b);
  if (st == TE_OK && (what & TE_SAVE_PTX)) { /* one cuda module (checked): its PTX text */
    const char *ptx = mods[0]->ptx_text ? mods[0]->ptx_text : "";
    b.size = strlen(ptx);
    if (!(b.data = ir_malloc(sv->ctx, b.size + 1)))
      st = ir_error(sv->ctx, TE_ERR_NOMEM, "%s: out of memory", sv->fn);
    else
      memcpy(b.data, ptx, b.size + 1), st = cg_add_out(sv, "", ".ptx", &b);
  }
  if (st == TE_OK && (what & TE_SAVE_SPIRV)) /* vulkan modules (checked) */
    st = cg_add_spirv(sv, n, mods);
  cg_blob_free(&obj);
  cg_blob_free(&b);
  cg_linked_free(&l);
  return st;
}

static te_status cg_io_error(cg_save *sv, const char *path, int err) {
  char msg[256];
  if (strerror_r(err, msg, sizeof msg))
    snprintf(msg, sizeof msg, "error %d", err);
  return ir_error(sv->ctx, TE_ERR_IO, "%s: cannot write '%s': %s", sv->fn, path, msg);
}

/* Writes o's bytes to a new temporary file next to o->path. */
static te_status cg_write_tmp(cg_save *sv, cg_out *o) {
  static unsigned counter;
  const char *slash = strrchr(o->path, '/');
  size_t dlen = slash ? (size_t)(slash - o->path) + 1 : 0;
  size_t len = strlen(o->path) + 48;
  if (!(o->tmp = ir_malloc(sv->ctx, len)))
    return ir_error(sv->ctx, TE_ERR_NOMEM, "%s: out of memory", sv->fn);
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 100; tries++) {
    unsigned k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    snprintf(o->tmp, len, "%.*s.%s.tmp-%ld-%u", (int)dlen, o->path, o->path + dlen, (long)getpid(),
             k);
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    int err = errno;
    free(o->tmp);
    o->tmp = NULL;
    return cg_io_error(sv, o->path, err);
  }
  const char *p = o->blob.data;
  size_t left = o->blob.size;
  int err = 0;
  while (left > 0 && !err) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno != EINTR)
      err = errno;
    else if (w > 0)
      p += w, left -= (size_t)w;
  }
  if (close(fd) != 0 && !err)
    err = errno;
  return err ? cg_io_error(sv, o->path, err) : TE_OK;
}

/* A final name that is a directory would make its rename fail after others succeeded. */
static te_status cg_check_final(cg_save *sv, const cg_out *o) {
  struct stat sb;
  if (stat(o->path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return cg_io_error(sv, o->path, EISDIR);
  return TE_OK;
}

static te_status cg_write_all(cg_save *sv) {
  te_status st = TE_OK;
  for (int i = 0; i < sv->nout && st == TE_OK; i++)
    st = cg_write_tmp(sv, &sv->out[i]);
  for (int i = 0; i < sv->nout && st == TE_OK; i++)
    st = cg_check_final(sv, &sv->out[i]);
  for (int i = 0; i < sv->nout && st == TE_OK; i++) {
    if (rename(sv->out[i].tmp, sv->out[i].path) != 0)
      st = cg_io_error(sv, sv->out[i].path, errno);
    else {
      free(sv->out[i].tmp);
      sv->out[i].tmp = NULL;
    }
  }
  return st;
}

static void cg_save_free(cg_save *sv) {
  for (int i = 0; i < sv->nout; i++) {
    if (sv->out[i].tmp) {
      unlink(sv->out[i].tmp); /* a failed save leaves nothing behind */
      free(sv->out[i].tmp);
    }
    free(sv->out[i].path);
    cg_blob_free(&sv->out[i].blob);
  }
  free(sv->dir);
}

static te_status cg_save_all(te_ctx *ctx, const char *fn, int n, te_module *const mods[],
                             const char *prefix, unsigned what) {
  cg_save sv = {.ctx = ctx, .fn = fn};
  te_status st = cg_check_prefix(&sv, prefix, what);
  if (st == TE_OK)
    st = cg_check_modules(&sv, n, mods);
  if (st == TE_OK)
    st = cg_check_target(&sv, mods[0]->target, what);
  if (st == TE_OK && (what & TE_SAVE_PTX) && n != 1)
    st = ir_error(ctx, TE_ERR_UNSUPPORTED,
                  "%s: '%s': a PTX file holds one module's kernels (got %d modules; save each)", fn,
                  sv.name, n);
  if (st == TE_OK)
    st = cg_make_files(&sv, n, mods, what);
  if (st == TE_OK)
    st = cg_write_all(&sv);
  cg_save_free(&sv);
  return st;
}

te_status te_module_save(te_module *m, const char *path_prefix, unsigned what) {
  if (!m)
    return TE_ERR_INVALID_ARG;
  return IR_PUBLIC_CALL(m->ctx, cg_save_all(m->ctx, "te_module_save", 1, &m, path_prefix, what));
}

te_status te_modules_save(te_ctx *ctx, int nmodules, te_module *const modules[],
                          const char *path_prefix, unsigned what) {
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  return IR_PUBLIC_CALL(ctx,
                        cg_save_all(ctx, "te_modules_save", nmodules, modules, path_prefix, what));
}
