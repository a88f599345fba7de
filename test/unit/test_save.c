/* test_save.c — te_module_save / te_modules_save: the files, their formats and contents.
 *
 * Objects are checked with a small ELF reader (save_util.h): the machine, and that the only
 * global symbols are the kernels (helpers NAME_impl, NAME_par0, NAME_par0_body local). Archives
 * are parsed here byte by byte (magic, symbol index, member) and, when binutils' `ar` is there,
 * listed with it. Headers are checked for their guard, includes, prototypes, per-argument dtypes
 * and shapes, sizes, target, version and trace. Cross targets (aarch64, another x86-64 CPU) write
 * valid objects: readelf / llvm-objdump-22 / ld.lld check them further when installed.
 * Bad input is in test_save_errors.c; linking and running in test_save_link.c.
 */
#include "save_util.h"

TestSuite(save, .init = sv_setup, .fini = sv_teardown);

static const unsigned all_files =
    TE_SAVE_OBJECT | TE_SAVE_STATIC_LIB | TE_SAVE_HEADER | TE_SAVE_LLVM_IR | TE_SAVE_ASM;

static int host_machine(void) {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return -1;
#endif
}

Test(save, writes_every_file) {
  te_module *m = sv_saxpy(sv_target("llvm"), "k_saxpy");
  cr_assert_eq(te_module_save(m, sv_path("mylib"), all_files), TE_OK, "%s", te_last_error(ctx));
  const char *files[] = {"mylib.o", "libmylib.a", "mylib.h", "mylib.ll", "mylib.s"};
  for (int i = 0; i < 5; i++)
    cr_expect(sv_exists(files[i]), "%s missing", files[i]);
  cr_expect_eq(sv_count_entries("."), 5, "only the five files: no temporary file left");
  size_t n;
  char *obj = sv_read("mylib.o", &n);
  if (host_machine() > 0)
    cr_expect_eq(sv_elf_machine(obj, n), host_machine());
  char *ll = sv_read("mylib.ll", NULL), *as = sv_read("mylib.s", NULL);
  cr_expect(strstr(ll, "define i32 @k_saxpy(ptr") != NULL);
  cr_expect(strstr(as, "k_saxpy:") != NULL);
  free(obj), free(ll), free(as);

  struct stat sb;
  cr_assert_eq(stat(sv_path("mylib.o"), &sb), 0);
  mode_t mask = umask(022);
  umask(mask);
  cr_expect_eq(sb.st_mode & 0777, 0666 & ~mask, "mode 0666 less the umask (got %o)",
               sb.st_mode & 0777);
}

Test(save, only_what_is_asked) {
  te_module *m = sv_saxpy(sv_target("llvm"), "k_saxpy");
  cr_assert_eq(te_module_save(m, sv_path("h"), TE_SAVE_HEADER), TE_OK, "%s", te_last_error(ctx));
  cr_expect_eq(sv_count_entries("."), 1);
  cr_expect(sv_exists("h.h"));
  cr_assert_eq(te_module_save(m, sv_path("l"), TE_SAVE_STATIC_LIB), TE_OK);
  cr_expect_eq(sv_count_entries("."), 2);
  cr_expect(sv_exists("libl.a"));
}

Test(save, internal_symbols_are_local) {
  te_module *m = sv_saxpy(sv_target("llvm"), "k_saxpy");
  cr_assert_eq(te_module_save(m, sv_path("k"), TE_SAVE_OBJECT), TE_OK, "%s", te_last_error(ctx));
  size_t n;
  char *obj = sv_read("k.o", &n);
  sv_elf_machine(obj, n);
  char globals[512];
  sv_elf_globals(obj, globals, sizeof globals);
  cr_expect_str_eq(globals, "k_saxpy", "the kernel is the only global definition");
  const char *helpers[] = {"k_saxpy_impl", "k_saxpy_par0", "k_saxpy_par0_body"};
  int found = 0;
  for (int i = 0; i < 3; i++) {
    sv_elf_sym s;
    if (sv_elf_find(obj, n, helpers[i], &s)) {
      found++;
      cr_expect_eq(s.bind, STB_LOCAL, "%s must be local", helpers[i]);
    }
  }
  cr_expect_geq(found, 1, "at least one helper survives inlining as a local symbol");
  sv_elf_sym s;
  cr_assert(sv_elf_find(obj, n, "te_rt_parallel_for", &s));
  cr_expect(!s.defined, "the runtime is linked, not copied");
  free(obj);
}

/* Reads a decimal field of an ar header. */
static size_t ar_field(const char *p, int len) {
  char tmp[16] = {0};
  memcpy(tmp, p, (size_t)len);
  return (size_t)strtoull(tmp, NULL, 10);
}

static uint32_t be32(const char *p) {
  const unsigned char *u = (const unsigned char *)p;
  return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

Test(save, archive_of_several_kernels) {
  te_target *t = sv_target("llvm");
  te_module *mods[2] = {sv_saxpy(t, "k_saxpy"), sv_matmul(t, "k_matmul")};
  cr_assert_eq(te_modules_save(ctx, 2, mods, sv_path("two"), TE_SAVE_STATIC_LIB | TE_SAVE_OBJECT),
               TE_OK, "%s", te_last_error(ctx));
  size_t n, on;
  char *a = sv_read("libtwo.a", &n), *obj = sv_read("two.o", &on);
  cr_assert(!memcmp(a, "!<arch>\n", 8));
  cr_assert(!memcmp(a + 8, "/               ", 16), "symbol index first");
  cr_assert(!memcmp(a + 8 + 58, "`\n", 2));
  size_t symsize = ar_field(a + 8 + 48, 10);
  const char *idx = a + 8 + 60;
  cr_assert_eq(be32(idx), 2, "two symbols");
  const char *names = idx + 4 + 8;
  cr_expect_str_eq(names, "k_saxpy");
  cr_expect_str_eq(names + strlen(names) + 1, "k_matmul");
  size_t member = 8 + 60 + symsize + (symsize & 1);
  cr_expect_eq(be32(idx + 4), member);
  cr_expect_eq(be32(idx + 8), member);
  cr_assert(!memcmp(a + member, "two.o/          ", 16));
  cr_expect_eq(ar_field(a + member + 48, 10), on);
  cr_expect(!memcmp(a + member + 60, obj, on), "the member is the object");
  cr_expect_eq(member + 60 + on + (on & 1), n, "nothing after the member");
  free(a), free(obj);

  if (sv_can_check_with("ar", "the archive's member list")) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ar t '%s' | grep -qx two.o", sv_path("libtwo.a"));
    cr_expect_eq(sv_system(cmd), 0, "ar lists the member");
  }
}

Test(save, archive_writer_members_and_long_names) {
  char *syms1[] = {"f1", "f2"}, *syms3[] = {"g"};
  cg_ar_member m[3] = {{"a.o", "odd", 3, 2, syms1},
                       {"a_name_longer_than_fifteen.o", "xy", 2, 0, NULL},
                       {"b.o", "12345", 5, 1, syms3}};
  cg_blob b;
  cr_assert_eq(cg_ar_write(ctx, 3, m, &b), TE_OK);
  FILE *f = fopen(sv_path("t.a"), "wb");
  cr_assert_eq(fwrite(b.data, 1, b.size, f), b.size);
  fclose(f);
  cr_expect_eq(b.size % 2, 0, "members are padded to even offsets");
  cr_expect(memmem(b.data, b.size, "//              ", 16) != NULL, "a long-name table");
  cr_expect(memmem(b.data, b.size, "a_name_longer_than_fifteen.o/\n", 30) != NULL);
  cg_blob_free(&b);
  if (!sv_have("ar"))
    tt_skip("ar", "ar not installed: the archive was checked by hand only");
  char cmd[700];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && test \"$(ar t t.a | tr '\\n' ' ')\" = 'a.o a_name_longer_than_fifteen.o "
           "b.o ' && test \"$(ar p t.a b.o)\" = 12345 && test \"$(ar p t.a a.o)\" = odd && "
           "nm -s t.a 2>/dev/null | grep -q 'g in b.o'",
           tmpdir);
  cr_expect_eq(sv_system(cmd), 0, "binutils reads te's archive: %s", cmd);
}

Test(save, header_contents) {
  te_target *t = sv_target("llvm");
  te_module *mods[2] = {sv_saxpy(t, "k_saxpy"), sv_matmul(t, "k_matmul")};
  cr_assert_eq(te_modules_save(ctx, 2, mods, sv_path("kern"), TE_SAVE_HEADER), TE_OK, "%s",
               te_last_error(ctx));
  char *h = sv_read("kern.h", NULL);
  const char *want[] = {
      "#ifndef TE_KERN_H\n#define TE_KERN_H\n",
      "#include <dlpack/dlpack.h>\n#include <stdint.h>\n",
      "extern \"C\" {",
      "const char *te_rt_last_error(void);",
      "int32_t k_saxpy(DLTensor *X, DLTensor *Y, DLTensor *Z, float alpha);",
      "int32_t k_matmul(DLTensor *A, DLTensor *B, DLTensor *C);",
      " *   X      input   f32[n]\n",
      " *   Z      output  f32[n]\n",
      " *   alpha  scalar  f32\n",
      " *   A  input   f32[m, 8]\n",
      " *   C  output  f32[m, 4]\n",
      "sizes: n = X.shape[0]",
      "sizes: m = A.shape[0]",
      "te " TE_VERSION_STRING,
      "parallel Z",
      "vectorize Z",
      "schedule: (default",
      "#endif /* TE_KERN_H */\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    cr_expect(strstr(h, want[i]) != NULL, "header lacks '%s':\n%s", want[i], h);
  cr_expect(strstr(h, "-mtriple=") != NULL && strstr(h, "-mcpu=") != NULL, "the target");
  /* in short at the top, where people read; whole in the last comment */
  char top[256];
  snprintf(top, sizeof top, " * target: %s\n", te_target_short_str(t));
  cr_expect(strstr(h, top) != NULL && strstr(h, top) < strstr(h, "#ifndef"), "'%s' in:\n%s", top,
            h);
  if (strcmp(te_target_short_str(t), te_target_str(t)))
    cr_expect(strstr(h, "every CPU feature named") > strstr(h, "int32_t k_matmul("), "%s", h);
  free(h);
}

Test(save, reproducible_and_replaces_old_files) {
  te_target *t = sv_target("llvm");
  te_module *m = sv_matmul(t, "k_matmul");
  cr_assert_eq(te_module_save(m, sv_path("r"), TE_SAVE_STATIC_LIB), TE_OK);
  size_t n1, n2;
  char *a1 = sv_read("libr.a", &n1);
  cr_assert_eq(te_module_save(m, sv_path("r"), TE_SAVE_STATIC_LIB), TE_OK);
  char *a2 = sv_read("libr.a", &n2);
  cr_expect(n1 == n2 && !memcmp(a1, a2, n1), "the same kernels give the same bytes");
  te_module *other = sv_saxpy(t, "k_other");
  cr_assert_eq(te_module_save(other, sv_path("r"), TE_SAVE_STATIC_LIB), TE_OK);
  char *a3 = sv_read("libr.a", NULL);
  cr_expect(memmem(a3, 200, "k_other", 7) != NULL, "the library was replaced");
  cr_expect_eq(sv_count_entries("."), 1);
  free(a1), free(a2), free(a3);
}

Test(save, aarch64_object) {
  te_target *t = sv_target("llvm -mtriple=aarch64-linux-gnu");
  te_module *m = sv_saxpy(t, "k_saxpy");
  cr_assert_eq(te_module_save(m, sv_path("a64"), all_files), TE_OK, "%s", te_last_error(ctx));
  size_t n;
  char *obj = sv_read("a64.o", &n);
  cr_expect_eq(sv_elf_machine(obj, n), EM_AARCH64);
  char globals[256];
  sv_elf_globals(obj, globals, sizeof globals);
  cr_expect_str_eq(globals, "k_saxpy");
  free(obj);
  char *h = sv_read("a64.h", NULL);
  cr_expect(strstr(h, "-mtriple=aarch64") != NULL, "%s", h);
  free(h);
  char cmd[800];
  if (sv_can_check_with("readelf", "the ELF header")) {
    snprintf(cmd, sizeof cmd, "readelf -h '%s' | grep -q 'Machine: *AArch64'", sv_path("a64.o"));
    cr_expect_eq(sv_system(cmd), 0, "%s", cmd);
  }
  if (sv_can_check_with("llvm-objdump-22", "the disassembly")) {
    snprintf(cmd, sizeof cmd, "llvm-objdump-22 -d '%s' | grep -q '<k_saxpy>:'", sv_path("a64.o"));
    cr_expect_eq(sv_system(cmd), 0, "%s", cmd);
  }
  /* its relocations link into a position-independent library */
  if (sv_can_check_with("ld.lld", "linking a shared library")) {
    snprintf(cmd, sizeof cmd, "ld.lld -shared '%s' -o '%s'", sv_path("a64.o"), sv_path("a.so"));
    cr_expect_eq(sv_system(cmd), 0, "%s", cmd);
  }
}

Test(save, other_x86_cpu_object) {
  te_target *t = sv_target("llvm -mtriple=x86_64-linux-gnu -mcpu=haswell");
  cr_expect(strstr(te_target_str(t), "haswell") != NULL);
  te_module *m = sv_saxpy(t, "k_saxpy");
  cr_assert_eq(te_module_save(m, sv_path("hsw"), TE_SAVE_OBJECT | TE_SAVE_ASM), TE_OK, "%s",
               te_last_error(ctx));
  size_t n;
  char *obj = sv_read("hsw.o", &n), *as = sv_read("hsw.s", NULL);
  cr_expect_eq(sv_elf_machine(obj, n), EM_X86_64);
  cr_expect(strstr(as, "ymm") != NULL, "AVX2 code for haswell");
  cr_expect(strstr(as, "zmm") == NULL, "no AVX-512 for haswell");
  free(obj), free(as);
}

Test(save, non_host_module_saves_but_does_not_run) {
  te_module *m = sv_saxpy(sv_target("llvm -mtriple=aarch64-linux-gnu"), "k_saxpy");
  cr_expect_null(te_module_entry(m, "k_saxpy"));
  cr_expect_eq(te_last_status(ctx), TE_ERR_TARGET);
  cr_expect(strstr(te_last_error(ctx), "te_module_save") != NULL, "%s", te_last_error(ctx));
  te_clear_error(ctx);
  cr_expect_eq(te_module_save(m, sv_path("x"), TE_SAVE_STATIC_LIB), TE_OK, "%s",
               te_last_error(ctx));
}

/* Y[i] = bf16(X[i] * p) with X f16 and p an f16 scalar, vectorized: the header declares p as its
   16 bits, and the objects (the host's, plain x86-64's, AArch64's) call no conversion routine of
   compiler-rt or libgcc (__extendhfsf2, __truncsfbf2, ...): a static library links without them. */
static te_module *sv_half(te_target *t, const char *name) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_expr *p = te_param(ctx, "p", TE_F16);
  te_tensor *x = te_placeholder(ctx, "X", TE_F16, 1, TE_EXPRS(n));
  te_tensor *y =
      te_compute(ctx, "Y", 1, TE_EXPRS(n), TE_EXPRS(i), te_cast(TE_BF16, te_mul(TE_AT(x, i), p)));
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *st = te_stage_of(s, y);
  te_iter *o, *in;
  cr_assert_eq(te_split(st, te_axis(st, 0), 16, &o, &in), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(te_vectorize(st, in), TE_OK, "%s", te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, name, 2, (te_tensor *const[]){x, y}, 1, &p, t, &m), TE_OK, "%s",
               te_last_error(ctx));
  return m;
}

Test(save, half_kernels_header_and_objects) {
  const char *targets[] = {"llvm", "llvm -mcpu=x86-64", "llvm -mtriple=aarch64-linux-gnu"};
  for (int k = 0; k < 3; k++) {
    te_module *m = sv_half(sv_target(targets[k]), "k_half");
    char prefix[16];
    snprintf(prefix, sizeof prefix, "half%d", k);
    cr_assert_eq(te_module_save(m, sv_path(prefix), TE_SAVE_OBJECT | TE_SAVE_HEADER), TE_OK, "%s",
                 te_last_error(ctx));
    char hname[32], oname[32];
    snprintf(hname, sizeof hname, "%s.h", prefix);
    snprintf(oname, sizeof oname, "%s.o", prefix);
    char *h = sv_read(hname, NULL);
    const char *want[] = {"int32_t k_half(DLTensor *X, DLTensor *Y, uint16_t p);",
                          " *   X  input   f16[n]\n", " *   Y  output  bf16[n]\n",
                          " *   p  scalar  f16\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      cr_expect(strstr(h, want[i]) != NULL, "%s: header lacks '%s':\n%s", targets[k], want[i], h);
    free(h);
    if (sv_can_check_with("nm", "the object's undefined symbols")) {
      char cmd[600];
      snprintf(cmd, sizeof cmd, "nm -u '%s' | grep -E 'hf2|bf2|hf$|bf$'", sv_path(oname));
      cr_expect_neq(sv_system(cmd), 0, "%s: the object calls a conversion routine (%s)", targets[k],
                    cmd);
    }
  }
}
