/* test_save_link.c — saved libraries link into plain C programs and run, without te.
 *
 * The test writes three libraries and a main.c into a temporary directory, compiles and links
 * them with the C compiler of this build (TE_TEST_CC) and the static libte_runtime (with
 * TE_TEST_LINK_FLAGS: OpenMP, and the sanitizers in a TE_SANITIZE build), and runs the
 * program, which checks the kernels against plain C:
 *   la  kernel k               (parallel: its helpers are k_impl, k_par0, k_par0_body)
 *   lb  kernels k_impl, k_par0 (named like la's helpers: the link fails unless those are local);
 *       built for another CPU than the host (x86-64-v2 on x86-64)
 *   lc  kernel kc whose arguments are named int, float and double (C keywords: the header
 *       renames them int_, float_, double_)
 *   le  kernel ke with an extern stage (te_extern) calling user_add_index, which the program
 *       defines (the link fails without it); a non-zero return fails ke with its message
 * and a wrong argument is refused with TE_ERR_TYPE and a message. When an aarch64 cross compiler
 * and qemu-user are installed (not by scripts/setup.sh: they are large), an aarch64 library is
 * linked with a cross-compiled runtime and run under qemu; otherwise that test is skipped.
 */
#include "save_util.h"

#ifndef TE_TEST_CC
#define TE_TEST_CC "cc"
#endif
#ifndef TE_TEST_LINK_FLAGS
#define TE_TEST_LINK_FLAGS "-fopenmp"
#endif
#ifndef TE_TEST_DLPACK_DIR
#define TE_TEST_DLPACK_DIR "/usr/include"
#endif

TestSuite(save_link, .init = sv_setup, .fini = sv_teardown);

static void write_file(const char *rel, const char *text) {
  FILE *f = fopen(sv_path(rel), "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

/* out[i] = float[i] * int + double[0] over i32 tensors: arguments named by C keywords. */
static te_module *keyword_kernel(te_target *t) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_expr *p = te_param(ctx, "int", TE_I32);
  te_tensor *a = te_placeholder(ctx, "float", TE_I32, 1, TE_EXPRS(n));
  te_tensor *d = te_placeholder(ctx, "double", TE_I32, 1, TE_EXPRS(te_int(ctx, 1)));
  te_tensor *o = te_compute(ctx, "out", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_add(te_mul(TE_AT(a, i), p), TE_AT(d, te_int(ctx, 0))));
  te_module *m = NULL;
  cr_assert_eq(
      te_build(te_schedule_new(ctx, 1, &o), "kc", 3, (te_tensor *const[]){a, d, o}, 1, &p, t, &m),
      TE_OK, "%s", te_last_error(ctx));
  return m;
}

static const char main_c[] =
    "#include \"la.h\"\n#include \"lb.h\"\n#include \"lc.h\"\n#include <math.h>\n"
    "#include <stdio.h>\n#include <string.h>\n"
    "static DLTensor T(void *d, int nd, int64_t *sh, uint8_t code, uint8_t bits) {\n"
    "  DLTensor t = {d, {kDLCPU, 0}, nd, {code, bits, 1}, sh, NULL, 0}; return t; }\n"
    "int main(void) {\n"
    "  enum { N = 100 }; float x[N], y[N], z[N]; int64_t n[1] = {N};\n"
    "  for (int i = 0; i < N; i++) x[i] = i * 0.25f - 3, y[i] = 1.0f + i, z[i] = NAN;\n"
    "  DLTensor tx = T(x, 1, n, kDLFloat, 32), ty = T(y, 1, n, kDLFloat, 32),\n"
    "           tz = T(z, 1, n, kDLFloat, 32);\n"
    "  if (k(&tx, &ty, &tz, 2.0f)) { puts(te_rt_last_error()); return 10; }\n"
    "  for (int i = 0; i < N; i++) if (z[i] != 2.0f * x[i] + y[i]) return 11;\n"
    "  if (k_par0(&tx, &ty, &tz, 3.0f)) return 12;\n"
    "  for (int i = 0; i < N; i++) if (z[i] != 3.0f * x[i] + y[i]) return 13;\n"
    "  float a[5 * 8], b[8 * 4], c[5 * 4]; int64_t sa[2] = {5, 8}, sb[2] = {8, 4},\n"
    "      sc[2] = {5, 4};\n"
    "  for (int i = 0; i < 40; i++) a[i] = (float)(i % 7) - 3;\n"
    "  for (int i = 0; i < 32; i++) b[i] = (float)(i % 5) - 2;\n"
    "  DLTensor ta = T(a, 2, sa, kDLFloat, 32), tb = T(b, 2, sb, kDLFloat, 32),\n"
    "           tc = T(c, 2, sc, kDLFloat, 32);\n"
    "  if (k_impl(&ta, &tb, &tc)) return 14;\n"
    "  for (int i = 0; i < 5; i++) for (int j = 0; j < 4; j++) { float s = 0;\n"
    "    for (int q = 0; q < 8; q++) s += a[i * 8 + q] * b[q * 4 + j];\n"
    "    if (fabsf(s - c[i * 4 + j]) > 1e-4f) return 15; }\n"
    "  int32_t u[N], w[N], d[1] = {7}; int64_t one[1] = {1};\n"
    "  for (int i = 0; i < N; i++) u[i] = i - 50;\n"
    "  DLTensor tu = T(u, 1, n, kDLInt, 32), tw = T(w, 1, n, kDLInt, 32),\n"
    "           td = T(d, 1, one, kDLInt, 32);\n"
    "  if (kc(&tu, &td, &tw, -3)) return 16;\n"
    "  for (int i = 0; i < N; i++) if (w[i] != u[i] * -3 + 7) return 17;\n"
    "  int rc = k(&tu, &ty, &tz, 1.0f);\n"
    "  if (rc != 2 || !strstr(te_rt_last_error(), \"dtype\")) return 18;\n"
    "  printf(\"ok: %s\\n\", te_rt_last_error());\n"
    "  return 0;\n"
    "}\n";

Test(save_link, three_libraries_one_program) {
#ifndef TE_TEST_RUNTIME_A
  cr_skip_test("TE_TEST_RUNTIME_A not defined by the build");
#else
  te_target *host = sv_target("llvm");
#if defined(__x86_64__)
  te_target *other = sv_target("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v2");
#else
  te_target *other = host;
#endif
  cr_assert_eq(
      te_module_save(sv_saxpy(host, "k"), sv_path("la"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
      TE_OK, "%s", te_last_error(ctx));
  te_module *lb[2] = {sv_matmul(other, "k_impl"), sv_saxpy(other, "k_par0")};
  cr_assert_eq(te_modules_save(ctx, 2, lb, sv_path("lb"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(
      te_module_save(keyword_kernel(host), sv_path("lc"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
      TE_OK, "%s", te_last_error(ctx));
  char *h = sv_read("lc.h", NULL);
  cr_expect(strstr(h, "int32_t kc(DLTensor *float_, DLTensor *double_, DLTensor *out, "
                      "int32_t int_);") != NULL,
            "%s", h);
  free(h);
  write_file("main.c", main_c);
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && %s -std=c11 -Wall -Wextra -Werror -I. -I'%s' main.c liblb.a libla.a "
           "liblc.a '%s' %s -lm -o prog > build.log 2>&1 && ./prog > run.log 2>&1",
           tmpdir, TE_TEST_CC, TE_TEST_DLPACK_DIR, TE_TEST_RUNTIME_A, TE_TEST_LINK_FLAGS);
  int rc = sv_system(cmd);
  if (rc != 0) {
    char *log = sv_exists("run.log") ? sv_read("run.log", NULL) : sv_read("build.log", NULL);
    cr_expect_fail("exit %d: %s\n%s", rc, cmd, log);
    free(log);
    return;
  }
  char *out = sv_read("run.log", NULL);
  cr_expect(strstr(out, "ok: kernel 'k': argument 'X'") != NULL, "%s", out);
  free(out);
#endif
}

Test(save_link, aarch64_under_qemu) {
  if (!sv_have("aarch64-linux-gnu-gcc") || !sv_have("qemu-aarch64"))
    tt_skip("qemu-aarch64", "aarch64-linux-gnu-gcc and qemu-aarch64 not installed: the aarch64 "
                            "object is checked by save.aarch64_object only");
  te_target *t = sv_target("llvm -mtriple=aarch64-linux-gnu");
  te_module *mods[2] = {sv_saxpy(t, "k"), sv_matmul(t, "k_impl")};
  cr_assert_eq(te_modules_save(ctx, 2, mods, sv_path("la"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
               TE_OK, "%s", te_last_error(ctx));
  te_module *c = keyword_kernel(t);
  te_module *p0 = sv_saxpy(t, "k_par0");
  cr_assert_eq(te_modules_save(ctx, 2, (te_module *const[]){c, p0}, sv_path("lc"),
                               TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
               TE_OK, "%s", te_last_error(ctx));
  write_file("lb.h", "#include \"lc.h\"\n"); /* k_par0 lives in lc here */
  write_file("main.c", main_c);
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && aarch64-linux-gnu-gcc -std=c11 -O1 -fopenmp -DTE_BUILDING_RUNTIME "
           "-I. -I'%s' -I'%s/include' main.c libla.a liblc.a '%s'/lib/runtime/*.c -lm -o prog "
           "> build.log 2>&1 && qemu-aarch64 -L /usr/aarch64-linux-gnu ./prog > run.log 2>&1",
           tmpdir, TE_TEST_DLPACK_DIR, TE_SOURCE_DIR, TE_SOURCE_DIR);
  int rc = sv_system(cmd);
  if (rc != 0) {
    char *log = sv_exists("run.log") ? sv_read("run.log", NULL) : sv_read("build.log", NULL);
    cr_expect_fail("exit %d: %s\n%s", rc, cmd, log);
    free(log);
    return;
  }
  char *out = sv_read("run.log", NULL);
  cr_expect(strstr(out, "ok: kernel 'k': argument 'X'") != NULL, "%s", out);
  free(out);
}

/* ---------------------------------------------------------------- extern stages */

/* In this process (the JIT build): out = in + 10 * i. The program defines its own. */
static int jit_add_index(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  const float *x = in[0]->data;
  float *y = out->data;
  for (int64_t i = 0; i < out->shape[0] && nin == 1; i++)
    y[i] = x[i] + 10.0f * (float)i;
  return 0;
}

static const char extern_main_c[] =
    "#include \"le.h\"\n#include <stdio.h>\n#include <string.h>\n"
    "static int fail;\n"
    "int user_add_index(int32_t nin, const DLTensor *const in[], DLTensor *out) {\n"
    "  if (fail) return 5;\n"
    "  if (nin != 1 || in[0]->ndim != 1 || out->strides[0] != 1) return 9;\n"
    "  const float *x = in[0]->data; float *y = out->data;\n"
    "  for (int64_t i = 0; i < out->shape[0]; i++) y[i] = x[i] + 10.0f * (float)i;\n"
    "  return 0;\n}\n"
    "int main(void) {\n"
    "  enum { N = 13 }; float x[N], y[N]; int64_t n[1] = {N};\n"
    "  for (int i = 0; i < N; i++) x[i] = 0.5f * (float)i - 2, y[i] = -1e30f;\n"
    "  DLTensor tx = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, n, NULL, 0};\n"
    "  DLTensor ty = {y, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, n, NULL, 0};\n"
    "  if (ke(&tx, &ty)) { puts(te_rt_last_error()); return 10; }\n"
    "  for (int i = 0; i < N; i++) if (y[i] != (2 * x[i] + 10.0f * (float)i) + 1) return 11;\n"
    "  fail = 1;\n"
    "  int rc = ke(&tx, &ty);\n"
    "  if (rc != 8 || !strstr(te_rt_last_error(), \"extern stage 'E'\")) return 12;\n"
    "  printf(\"ok: %s\\n\", te_rt_last_error());\n"
    "  return 0;\n"
    "}\n";

Test(save_link, extern_symbol_linked_by_the_program) {
#ifndef TE_TEST_RUNTIME_A
  cr_skip_test("TE_TEST_RUNTIME_A not defined by the build");
#else
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_tensor *x = te_placeholder(ctx, "x", TE_F32, 1, TE_EXPRS(n));
  te_tensor *p = te_compute(ctx, "P", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_mul(TE_AT(x, i), te_float(ctx, TE_F32, 2)));
  te_tensor *e =
      te_extern(ctx, "E", TE_F32, 1, TE_EXPRS(n), 1, &p, jit_add_index, "user_add_index");
  te_tensor *y = te_compute(ctx, "y", 1, TE_EXPRS(n), TE_EXPRS(i),
                            te_add(TE_AT(e, i), te_float(ctx, TE_F32, 1)));
  cr_assert_not_null(y, "%s", te_last_error(ctx));
  te_module *m = NULL;
  cr_assert_eq(te_build(te_schedule_new(ctx, 1, &y), "ke", 2, (te_tensor *const[]){x, y}, 0, NULL,
                        sv_target("llvm"), &m),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(te_module_save(m, sv_path("le"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER), TE_OK, "%s",
               te_last_error(ctx));
  char *h = sv_read("le.h", NULL);
  cr_expect(strstr(h, "int user_add_index(int32_t ninputs, const DLTensor *const inputs[], "
                      "DLTensor *output); /* stage E of ke */") != NULL,
            "%s", h);
  free(h);
  write_file("main.c", extern_main_c);
  /* without the program's definition the link fails: the library leaves the symbol undefined */
  write_file("nodef.c", "#include \"le.h\"\nint main(void) { return ke(0, 0); }\n");
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && %s -std=c11 -I. -I'%s' nodef.c lible.a '%s' %s -lm -o nodef > nodef.log "
           "2>&1",
           tmpdir, TE_TEST_CC, TE_TEST_DLPACK_DIR, TE_TEST_RUNTIME_A, TE_TEST_LINK_FLAGS);
  cr_expect_neq(sv_system(cmd), 0, "linking without user_add_index succeeded: %s", cmd);
  char *nodef = sv_read("nodef.log", NULL);
  cr_expect(strstr(nodef, "user_add_index") != NULL, "%s", nodef);
  free(nodef);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && %s -std=c11 -Wall -Wextra -Werror -I. -I'%s' main.c lible.a '%s' %s -lm "
           "-o prog > build.log 2>&1 && ./prog > run.log 2>&1",
           tmpdir, TE_TEST_CC, TE_TEST_DLPACK_DIR, TE_TEST_RUNTIME_A, TE_TEST_LINK_FLAGS);
  int rc = sv_system(cmd);
  if (rc != 0) {
    char *log = sv_exists("run.log") ? sv_read("run.log", NULL) : sv_read("build.log", NULL);
    cr_expect_fail("exit %d: %s\n%s", rc, cmd, log);
    free(log);
    return;
  }
  char *out = sv_read("run.log", NULL);
  cr_expect(strstr(out, "ok: kernel 'ke': extern stage 'E' (function 'user_add_index') failed "
                        "(got 5)") != NULL,
            "%s", out);
  free(out);
#endif
}
