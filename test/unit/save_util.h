/* save_util.h — helpers for the te_module_save tests (test_save*.c): a context and a fresh
 * temporary directory per test, kernels built through the public API, reading files back, and
 * a small ELF reader (header and symbol table, with <elf.h>) so that objects are checked
 * without depending on binutils. Everything is static; included by the test_save*.c files only.
 */
#ifndef TE_TEST_SAVE_UTIL_H
#define TE_TEST_SAVE_UTIL_H

#define _GNU_SOURCE /* mkdtemp, popen, nftw */
#include <criterion/criterion.h>
#include <dirent.h>
#include <elf.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/save.h"
#include "te_test.h"

static te_ctx *ctx;
static char tmpdir[256];

static inline void sv_teardown(void);

static inline void sv_setup(void) {
  ctx = te_ctx_new();
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/te_save_XXXXXX", base && *base ? base : "/tmp");
  cr_assert_not_null(mkdtemp(tmpdir), "mkdtemp");
  tt_on_skip(sv_teardown);
}

static int sv_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  chmod(path, 0700);
  return remove(path);
}

static inline void sv_teardown(void) {
  te_ctx_free(ctx);
  ctx = NULL;
  if (tmpdir[0]) {
    chmod(tmpdir, 0700);
    nftw(tmpdir, sv_rm, 16, FTW_DEPTH | FTW_PHYS);
  }
  tmpdir[0] = '\0';
}

/* tmpdir/rel, in a static buffer (one of four, so a few may be used at once). */
static inline const char *sv_path(const char *rel) {
  static char bufs[4][512];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, rel);
  return b;
}

static inline bool sv_exists(const char *rel) { return access(sv_path(rel), F_OK) == 0; }

/* The number of entries in tmpdir/rel (a directory), "." and ".." not counted. */
static inline int sv_count_entries(const char *rel) {
  DIR *d = opendir(sv_path(rel));
  cr_assert_not_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* The whole file (NUL-terminated, malloc'd; size in *size). Fails the test if unreadable. */
static inline char *sv_read(const char *rel, size_t *size) {
  FILE *f = fopen(sv_path(rel), "rb");
  cr_assert_not_null(f, "cannot open %s", sv_path(rel));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)n + 1);
  cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
  p[n] = '\0';
  fclose(f);
  if (size)
    *size = (size_t)n;
  return p;
}

/* ---------------------------------------------------------------- kernels */

/* Z[i] = alpha * X[i] + Y[i], n symbolic; split by 16, outer parallel, inner vectorized (so the
   object has NAME_impl, NAME_par0 and NAME_par0_body helpers). */
static inline te_module *sv_saxpy(te_target *t, const char *name) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_expr *alpha = te_param(ctx, "alpha", TE_F32);
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 1, TE_EXPRS(n));
  te_tensor *y = te_placeholder(ctx, "Y", TE_F32, 1, TE_EXPRS(n));
  te_tensor *z = te_compute(ctx, "Z", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_add(te_mul(alpha, TE_AT(x, i)), TE_AT(y, i)));
  te_schedule *s = te_schedule_new(ctx, 1, &z);
  te_stage *st = te_stage_of(s, z);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 16, &o, &in), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(te_parallel(st, o), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(te_vectorize(st, in), TE_OK, "%s", te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, name, 3, (te_tensor *const[]){x, y, z}, 1, &alpha, t, &m), TE_OK, "%s",
               te_last_error(ctx));
  return m;
}

/* C[i, j] = sum_k A[i, k] * B[k, j] with A: m x 8 (m symbolic), B: 8 x 4; default schedule. */
static inline te_module *sv_matmul(te_target *t, const char *name) {
  te_expr *m = te_var(ctx, "m"), *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, 8));
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(m, te_int(ctx, 8)));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(te_int(ctx, 8), te_int(ctx, 4)));
  te_tensor *c = te_compute(ctx, "C", 2, TE_EXPRS(m, te_int(ctx, 4)), TE_EXPRS(i, j),
                            TE_SUM(te_mul(TE_AT(a, i, k), TE_AT(b, k, j)), k));
  te_schedule *s = te_schedule_new(ctx, 1, &c);
  te_module *mod = NULL;
  cr_assert_eq(te_build(s, name, 3, (te_tensor *const[]){a, b, c}, 0, NULL, t, &mod), TE_OK, "%s",
               te_last_error(ctx));
  return mod;
}

static inline te_target *sv_target(const char *s) {
  te_target *t = te_target_parse(ctx, s);
  cr_assert_not_null(t, "%s: %s", s, te_last_error(ctx));
  return t;
}

/* ---------------------------------------------------------------- ELF */

typedef struct sv_elf_sym {
  const char *name;
  int bind; /* STB_LOCAL, STB_GLOBAL, STB_WEAK */
  bool defined;
} sv_elf_sym;

/* The 64-bit ELF relocatable object in buf: checks the header, returns e_machine. */
static inline int sv_elf_machine(const char *buf, size_t size) {
  cr_assert_geq(size, sizeof(Elf64_Ehdr));
  const Elf64_Ehdr *h = (const Elf64_Ehdr *)buf;
  cr_assert(!memcmp(h->e_ident, ELFMAG, SELFMAG), "not ELF");
  cr_assert_eq(h->e_ident[EI_CLASS], ELFCLASS64);
  cr_assert_eq(h->e_ident[EI_DATA], ELFDATA2LSB);
  cr_assert_eq(h->e_type, ET_REL, "an object file");
  return h->e_machine;
}

/* Finds sym in the object's symbol table; false when absent. */
static inline bool sv_elf_find(const char *buf, size_t size, const char *sym, sv_elf_sym *out) {
  const Elf64_Ehdr *h = (const Elf64_Ehdr *)buf;
  cr_assert_leq(h->e_shoff + (size_t)h->e_shnum * sizeof(Elf64_Shdr), size);
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + h->e_shoff);
  for (int i = 0; i < h->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB)
      continue;
    const Elf64_Sym *syms = (const Elf64_Sym *)(buf + sh[i].sh_offset);
    const char *strs = buf + sh[sh[i].sh_link].sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
      if (!strcmp(strs + syms[k].st_name, sym)) {
        out->name = strs + syms[k].st_name;
        out->bind = ELF64_ST_BIND(syms[k].st_info);
        out->defined = syms[k].st_shndx != SHN_UNDEF;
        return true;
      }
  }
  return false;
}

/* The names of the global symbols the object defines, in table order, space-separated. */
static inline void sv_elf_globals(const char *buf, char *out, size_t size) {
  const Elf64_Ehdr *h = (const Elf64_Ehdr *)buf;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + h->e_shoff);
  out[0] = '\0';
  for (int i = 0; i < h->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB)
      continue;
    const Elf64_Sym *syms = (const Elf64_Sym *)(buf + sh[i].sh_offset);
    const char *strs = buf + sh[sh[i].sh_link].sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
      if (ELF64_ST_BIND(syms[k].st_info) != STB_LOCAL && syms[k].st_shndx != SHN_UNDEF)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? " " : "",
                 strs + syms[k].st_name);
  }
}

/* Runs a shell command; its exit status (-1 when it could not run). */
static inline int sv_system(const char *cmd) {
  int r = system(cmd);
  return r == -1 ? -1 : WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* 1 when the program is on PATH. */
static inline bool sv_have(const char *prog) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
  return sv_system(cmd) == 0;
}

/* sv_have for a check that uses prog: a missing prog prints a SKIP line for that check (or fails
   the test when TE_REQUIRE lists prog). */
static inline bool sv_can_check_with(const char *prog, const char *check) {
  if (sv_have(prog))
    return true;
  tt_skip_part(prog, "%s not installed: %s not checked", prog, check);
  return false;
}

#endif
