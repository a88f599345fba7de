/* test_save_errors.c — te_module_save / te_modules_save on bad input: each gives a clear status
 * and a message naming the culprit, and leaves no file behind (not even a temporary one).
 *
 * Modules without kernels and GPU-kind targets cannot be made through the public API (te_build
 * returns no module when it fails; cuda/vulkan targets are refused at parsing), so those two
 * cases are made here with the internal constructors.
 */
#include "save_util.h"

TestSuite(save_errors, .init = sv_setup, .fini = sv_teardown);

static te_module *mod;

/* A test's own .init runs after the suite's (sv_setup): the context and directory exist. */
static void with_module(void) { mod = sv_saxpy(sv_target("llvm"), "k_saxpy"); }

/* The call failed with status and a message containing part; nothing was written to tmpdir. */
static void expect_failure(te_status got, te_status status, const char *part) {
  cr_expect_eq(got, status, "got %s, want %s: %s", te_status_str(got), te_status_str(status),
               te_last_error(ctx));
  cr_expect_eq(te_last_status(ctx), status);
  cr_expect(strstr(te_last_error(ctx), part) != NULL, "message '%s' lacks '%s'", te_last_error(ctx),
            part);
  cr_expect_eq(sv_count_entries("."), 0, "no file left behind");
  te_clear_error(ctx);
}

Test(save_errors, base_name_not_a_c_identifier, .init = with_module) {
  const char *bad[] = {"my-lib", "9lib", "lib.x", "", "has space"};
  for (int i = 0; i < 5; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "%s", bad[i]);
    expect_failure(te_module_save(mod, sv_path(rel), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
                   TE_ERR_INVALID_ARG, "C identifier");
  }
  expect_failure(te_module_save(mod, NULL, TE_SAVE_HEADER), TE_ERR_INVALID_ARG, "NULL");
  expect_failure(te_module_save(mod, "", TE_SAVE_HEADER), TE_ERR_INVALID_ARG, "empty");
}

Test(save_errors, what_flags, .init = with_module) {
  expect_failure(te_module_save(mod, sv_path("k"), 0), TE_ERR_INVALID_ARG, "TE_SAVE_");
  expect_failure(te_module_save(mod, sv_path("k"), TE_SAVE_HEADER | (1u << 20)), TE_ERR_INVALID_ARG,
                 "0x");
  expect_failure(te_module_save(mod, sv_path("k"), TE_SAVE_PTX), TE_ERR_TARGET, "no PTX");
  expect_failure(te_module_save(mod, sv_path("k"), TE_SAVE_SPIRV | TE_SAVE_HEADER), TE_ERR_TARGET,
                 "SPIR-V");
}

Test(save_errors, unwritable_paths, .init = with_module) {
  expect_failure(te_module_save(mod, "/nonexistent-te-dir/sub/k", TE_SAVE_STATIC_LIB), TE_ERR_IO,
                 "cannot write '/nonexistent-te-dir/sub/libk.a'");
  FILE *f = fopen(sv_path("plain"), "w");
  fclose(f);
  te_status st = te_module_save(mod, sv_path("plain/k"), TE_SAVE_OBJECT | TE_SAVE_HEADER);
  cr_expect_eq(st, TE_ERR_IO, "%s", te_last_error(ctx));
  cr_expect(strstr(te_last_error(ctx), "Not a directory") != NULL, "%s", te_last_error(ctx));
  cr_expect_eq(sv_count_entries("."), 1, "only the plain file");
  te_clear_error(ctx);
  remove(sv_path("plain"));

  /* a final name that is a directory: found before any file is renamed into place */
  cr_assert_eq(mkdir(sv_path("k.h"), 0700), 0);
  st = te_module_save(mod, sv_path("k"), TE_SAVE_STATIC_LIB | TE_SAVE_OBJECT | TE_SAVE_HEADER);
  cr_expect_eq(st, TE_ERR_IO, "%s", te_last_error(ctx));
  cr_expect(strstr(te_last_error(ctx), "k.h': Is a directory") != NULL, "%s", te_last_error(ctx));
  cr_expect_eq(sv_count_entries("."), 1, "neither libk.a nor k.o nor a temporary file");
  te_clear_error(ctx);
  rmdir(sv_path("k.h"));

  if (geteuid() == 0)
    tt_skip("non-root", "running as root: a read-only directory is still writable, so the "
                        "permission error is not tested");
  cr_assert_eq(mkdir(sv_path("ro"), 0500), 0);
  st = te_module_save(mod, sv_path("ro/k"), TE_SAVE_STATIC_LIB);
  cr_expect_eq(st, TE_ERR_IO);
  cr_expect(strstr(te_last_error(ctx), "Permission denied") != NULL, "%s", te_last_error(ctx));
  cr_expect_eq(sv_count_entries("ro"), 0);
}

Test(save_errors, no_kernels) {
  expect_failure(te_modules_save(ctx, 0, NULL, sv_path("k"), TE_SAVE_STATIC_LIB),
                 TE_ERR_INVALID_ARG, "no modules");
  te_module *empty = cg_module_new(ctx, sv_target("llvm"));
  cr_assert_not_null(empty);
  expect_failure(te_module_save(empty, sv_path("k"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
                 TE_ERR_INVALID_ARG, "holds no kernels");
  expect_failure(te_modules_save(ctx, 1, (te_module *const[]){NULL}, sv_path("k"), TE_SAVE_HEADER),
                 TE_ERR_INVALID_ARG, "module #0 is NULL");
  cr_expect_eq(te_module_save(NULL, sv_path("k"), TE_SAVE_HEADER), TE_ERR_INVALID_ARG);
  cr_expect_eq(te_modules_save(NULL, 0, NULL, sv_path("k"), TE_SAVE_HEADER), TE_ERR_INVALID_ARG);
}

Test(save_errors, targets_that_cannot_write_objects, .init = with_module) {
  te_module *mac = sv_saxpy(sv_target("llvm -mtriple=x86_64-apple-macosx"), "k_mac");
  expect_failure(te_module_save(mac, sv_path("k"), TE_SAVE_STATIC_LIB | TE_SAVE_HEADER),
                 TE_ERR_TARGET, "Mach-O");
  te_module *win = sv_saxpy(sv_target("llvm -mtriple=x86_64-pc-windows-msvc"), "k_win");
  expect_failure(te_module_save(win, sv_path("k"), TE_SAVE_OBJECT), TE_ERR_TARGET, "COFF");
  /* their IR, asm and header can still be written */
  cr_expect_eq(te_module_save(mac, sv_path("k"), TE_SAVE_LLVM_IR | TE_SAVE_ASM | TE_SAVE_HEADER),
               TE_OK, "%s", te_last_error(ctx));
  cr_expect_eq(sv_count_entries("."), 3);

  /* a GPU-kind target (not buildable by this version: made by hand) */
  te_target *gpu = ir_alloc_persistent(ctx, sizeof *gpu);
  *gpu = *mod->target;
  gpu->kind = TG_CUDA;
  gpu->str = "cuda -arch=sm_90";
  te_module *g = cg_module_new(ctx, gpu);
  g->nkernels = 1;
  g->kernels = mod->kernels;
  te_status st = te_module_save(g, sv_path("g"), TE_SAVE_STATIC_LIB);
  cr_expect_eq(st, TE_ERR_TARGET);
  cr_expect(strstr(te_last_error(ctx), "GPU target") != NULL, "%s", te_last_error(ctx));
  cr_expect(!sv_exists("libg.a"));
}

Test(save_errors, modules_that_do_not_go_together, .init = with_module) {
  te_module *a64 = sv_saxpy(sv_target("llvm -mtriple=aarch64-linux-gnu"), "k_a64");
  expect_failure(
      te_modules_save(ctx, 2, (te_module *const[]){mod, a64}, sv_path("k"), TE_SAVE_STATIC_LIB),
      TE_ERR_TARGET, "one library, one target");
  te_module *same = sv_matmul(sv_target("llvm"), "k_saxpy");
  expect_failure(
      te_modules_save(ctx, 2, (te_module *const[]){mod, same}, sv_path("k"), TE_SAVE_HEADER),
      TE_ERR_INVALID_ARG, "two kernels are called 'k_saxpy'");
  te_ctx *other = te_ctx_new();
  te_target *t2 = te_target_parse(other, "llvm");
  te_expr *n = te_var(other, "n"), *i = te_var(other, "i");
  te_tensor *x = te_placeholder(other, "X", TE_F32, 1, TE_EXPRS(n));
  te_tensor *y = te_compute(other, "Y", 1, TE_EXPRS(n), TE_EXPRS(i), TE_AT(x, i));
  te_module *foreign = NULL;
  cr_assert_eq(te_build(te_schedule_new(other, 1, &y), "k_copy", 2, (te_tensor *const[]){x, y}, 0,
                        NULL, t2, &foreign),
               TE_OK, "%s", te_last_error(other));
  expect_failure(
      te_modules_save(ctx, 2, (te_module *const[]){mod, foreign}, sv_path("k"), TE_SAVE_HEADER),
      TE_ERR_INVALID_ARG, "another context");
  te_ctx_free(other);
}

/* Each failed save reports its own error (core.h); a valid save after them works. */
Test(save_errors, each_failure_reports_its_own_error, .init = with_module) {
  cr_expect_eq(te_module_save(mod, sv_path("bad-name"), TE_SAVE_HEADER), TE_ERR_INVALID_ARG);
  cr_expect(strstr(te_last_error(ctx), "bad-name") != NULL, "%s", te_last_error(ctx));
  cr_expect_eq(te_module_save(mod, "/nonexistent-te-dir/k", TE_SAVE_HEADER), TE_ERR_IO);
  cr_expect(strstr(te_last_error(ctx), "/nonexistent-te-dir/k") != NULL, "%s", te_last_error(ctx));
  cr_expect_eq(sv_count_entries("."), 0);
  cr_expect_eq(te_module_save(mod, sv_path("good"), TE_SAVE_HEADER), TE_OK, "%s",
               te_last_error(ctx));
  cr_expect_eq(sv_count_entries("."), 1);
}
