/* test_codegen_target.c — te_target_parse: good strings resolve (triple, CPU, features, vector
 * width, JIT-ability) and print back canonically; bad strings give the documented status with a
 * message naming the culprit.
 */
#include "test_codegen_util.h"

TestSuite(target, .init = cg_setup, .fini = cg_teardown);

static te_target *parse_ok(const char *s) {
  te_target *t = te_target_parse(ctx, s);
  cr_assert_not_null(t, "'%s': %s", s, te_last_error(ctx));
  return t;
}

static void parse_bad(const char *s, te_status st, const char *sub) {
  te_clear_error(ctx);
  cr_expect_null(te_target_parse(ctx, s), "'%s' should fail", s ? s : "(null)");
  cr_expect_eq(te_last_status(ctx), st, "'%s': expected %s, got %s: %s", s ? s : "(null)",
               te_status_str(st), te_status_str(te_last_status(ctx)), te_last_error(ctx));
  cr_expect(strstr(te_last_error(ctx), sub) != NULL, "'%s': message '%s' lacks '%s'",
            s ? s : "(null)", te_last_error(ctx), sub);
  te_clear_error(ctx);
}

Test(target, host) {
  te_target *t = parse_ok("llvm");
  cr_expect(t->is_host);
  cr_expect_eq(t->kind, TG_LLVM);
  cr_expect(t->vector_bits == 128 || t->vector_bits == 256 || t->vector_bits == 512);
  cr_expect(!strncmp(te_target_str(t), "llvm -mtriple=", 14), "%s", te_target_str(t));
  cr_expect(strstr(te_target_str(t), "-mcpu=native") == NULL, "native is resolved");
  if (!strcmp(t->triple, "x86_64-pc-linux-gnu")) {
    te_target *d = parse_ok("llvm -mtriple=x86_64-linux-gnu");
    cr_expect(d->is_host, "Debian's spelling of the host triple: %s", te_target_str(d));
  }
  te_target *n = parse_ok("  llvm   -mcpu=native ");
  cr_expect_str_eq(te_target_str(n), te_target_str(t));
  cr_expect(n->is_host);
}

Test(target, canonical_string_round_trips) {
  te_target *t = parse_ok("llvm");
  te_target *u = parse_ok(te_target_str(t));
  cr_expect_str_eq(te_target_str(u), te_target_str(t));
  cr_expect(u->is_host);
  cr_expect_eq(u->vector_bits, t->vector_bits);
}

Test(target, explicit_cpus_and_vector_width) {
  te_target *t = parse_ok("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512");
  cr_expect_eq(t->vector_bits, 512);
  cr_expect_str_eq(t->cpu, "skylake-avx512");
  cr_expect_eq(parse_ok("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=haswell")->vector_bits, 256);
  cr_expect_eq(parse_ok("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64")->vector_bits, 128);
  cr_expect_eq(parse_ok("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=x86-64 -mattr=+avx2")->vector_bits,
               256);
  te_target *nz =
      parse_ok("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f");
  cr_expect_eq(nz->vector_bits, 256);
  cr_expect_str_eq(te_target_str(nz),
                   "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f");
}

Test(target, cross_aarch64) {
  te_target *t = parse_ok("llvm -mtriple=aarch64-linux-gnu");
  cr_expect(!t->is_host);
  cr_expect_str_eq(t->cpu, "generic");
  cr_expect_eq(t->vector_bits, 128);
  cr_expect(strstr(t->triple, "aarch64") == t->triple);
  te_target *v1 = parse_ok("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=+sve");
  cr_expect_str_eq(v1->cpu, "neoverse-v1");
  cr_expect(!v1->is_host);
}

Test(target, bad_strings) {
  parse_bad(NULL, TE_ERR_INVALID_ARG, "te_target_parse: target string is NULL");
  parse_bad("", TE_ERR_PARSE, "empty target string");
  parse_bad("   ", TE_ERR_PARSE, "empty target string");
  parse_bad("llvm -mcpu=foo", TE_ERR_TARGET, "unknown CPU 'foo'");
  parse_bad("llvm -mtriple=aarch64-linux-gnu -mcpu=znver4", TE_ERR_TARGET, "unknown CPU 'znver4'");
  parse_bad("llvm -mtriple=foo-bar-baz", TE_ERR_TARGET, "unknown triple 'foo-bar-baz'");
  parse_bad("llvm -mattr=+nonsense", TE_ERR_TARGET, "unknown CPU feature 'nonsense'");
  parse_bad("llvm -mattr=avx2", TE_ERR_PARSE, "malformed -mattr item 'avx2'");
  parse_bad("llvm -foo=1", TE_ERR_TARGET, "unknown option '-foo'");
  parse_bad("llvm -mcpu", TE_ERR_PARSE, "malformed option '-mcpu'");
  parse_bad("llvm -mcpu=", TE_ERR_PARSE, "malformed option");
  parse_bad("llvm mcpu=x", TE_ERR_PARSE, "malformed option 'mcpu=x'");
  parse_bad("llvm -mcpu=haswell -mcpu=znver4", TE_ERR_PARSE, "'-mcpu' given twice");
  parse_bad("llvm -mtriple=aarch64-linux-gnu -mcpu=native", TE_ERR_TARGET,
            "-mcpu=native needs the host's triple");
  parse_bad("opencl", TE_ERR_TARGET, "unknown target kind 'opencl'");
  parse_bad("cuda -arch=sm_9", TE_ERR_TARGET, "unknown CUDA architecture 'sm_9'");
  parse_bad("vulkan -mcpu=x", TE_ERR_TARGET, "unknown option '-mcpu' for a vulkan target");
  cr_expect_null(te_target_parse(NULL, "llvm"));
  cr_expect_null(te_target_str(NULL));
}

/* te_target_short_str: what people read. The host is "llvm -mcpu=<its CPU>" (no triple, no
   feature list), read back from its canonical string too; a feature set otherwise than on the
   host, another CPU's features and a foreign triple are shown; at most 6 features. */
Test(target, short_strings) {
  te_target *t = parse_ok("llvm");
  char want[256];
  snprintf(want, sizeof want, "llvm -mcpu=%s", t->cpu);
  cr_expect_str_eq(te_target_short_str(t), want);
  cr_expect_str_eq(te_target_short_str(parse_ok(te_target_str(t))), want, "read back");
  cr_expect_str_eq(te_target_short_str(parse_ok("llvm -mcpu=native")), want);
  bool x86_linux = !strcmp(t->triple, "x86_64-pc-linux-gnu");
  if (x86_linux) {
    const char *flip = strstr(te_target_str(t), "+avx512f") ? "-avx512f" : "+avx512f";
    char spec[64];
    snprintf(spec, sizeof spec, "llvm -mattr=%s", flip);
    te_target *f = parse_ok(spec);
    snprintf(want, sizeof want, "llvm -mcpu=%s -mattr=%s", t->cpu, flip);
    cr_expect_str_eq(te_target_short_str(f), want);
    cr_expect_str_eq(te_target_short_str(parse_ok(te_target_str(f))), want, "read back");
    if (strcmp(t->cpu, "skylake-avx512") && strcmp(t->cpu, "x86-64")) {
      cr_expect_str_eq(
          te_target_short_str(
              parse_ok("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f")),
          "llvm -mcpu=skylake-avx512 -mattr=-avx512f");
      cr_expect_str_eq(
          te_target_short_str(parse_ok("llvm -mcpu=x86-64 -mattr=+avx,+avx2,+fma,+f16c,+bmi,"
                                       "+bmi2,+lzcnt,+movbe")),
          "llvm -mcpu=x86-64 -mattr=+avx,+avx2,+fma,+f16c,+bmi,+bmi2,... (2 more)");
    }
  }
  te_target *a = parse_ok("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1 -mattr=+sve");
  snprintf(want, sizeof want, "llvm -mtriple=%s -mcpu=neoverse-v1 -mattr=+sve", a->triple);
  cr_expect_str_eq(te_target_short_str(a), want);
  te_target *g = parse_ok("cuda");
  cr_expect_str_eq(te_target_short_str(g), te_target_str(g));
  cr_expect_null(te_target_short_str(NULL));
}
