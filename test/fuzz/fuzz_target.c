/* fuzz_target.c — libFuzzer target for te_target_parse (test/fuzz/README.md says how to run it).
 *
 * Every input is a target string. Whatever it holds, te_target_parse must return: NULL with
 * TE_ERR_TARGET or TE_ERR_PARSE and a message naming te_target, or a target whose canonical
 * string (te_target_str) parses again, in a fresh context, to the same string and vector width:
 * a tuning log or a saved library names its target by that string. An accepted CPU target must
 * also work: a small vectorized kernel builds for it and yields assembly (what is accepted must
 * work, or be refused with a message).
 */
#include "fuzz_util.h"

static const char *const NAME = "fuzz_target";

static void check_refusal(te_ctx *ctx, const char *text) {
  te_status st = te_last_status(ctx);
  if (st != TE_ERR_TARGET && st != TE_ERR_PARSE)
    fz_fail(NAME, "a refused target string has a status other than TE_ERR_TARGET/PARSE", text,
            te_status_str(st));
  if (strncmp(te_last_error(ctx), "te_target", 9) != 0)
    fz_fail(NAME, "a refusal's message does not name te_target", text, te_last_error(ctx));
}

/* out[i] = a[i] * 2 + 1 over 37 elements, vectorized by 8 with a tail: it exercises the
   target's vector types and features. Lowering and LLVM's code generation for the target. */
static void build_for(te_ctx *ctx, te_target *t, const char *text) {
  te_expr *n = te_int(ctx, 37);
  te_tensor *a = te_placeholder(ctx, "a", TE_F32, 1, &n);
  te_expr *i = te_var(ctx, "i");
  te_expr *body =
      te_add(te_mul(te_at(a, 1, &i), te_float(ctx, TE_F32, 2)), te_float(ctx, TE_F32, 1));
  te_tensor *out = te_compute(ctx, "out", 1, &n, &i, body);
  te_schedule *s = te_schedule_new(ctx, 1, &out);
  te_stage *st = te_stage_of(s, out);
  te_iter *inner = NULL;
  if (!st || te_split(st, te_axis(st, 0), 8, NULL, &inner) != TE_OK ||
      te_vectorize(st, inner) != TE_OK)
    fz_fail(NAME, "cannot schedule the probe kernel", text, te_last_error(ctx));
  te_module *m = NULL;
  te_status bs = te_build(s, "probe", 2, (te_tensor *[]){a, out}, 0, NULL, t, &m);
  if (bs != TE_OK)
    fz_fail(NAME, "an accepted CPU target cannot build a kernel", te_target_str(t),
            te_last_error(ctx));
  const char *asm_text = te_module_source(m, "asm");
  if (!asm_text || !*asm_text)
    fz_fail(NAME, "an accepted CPU target gives no assembly", te_target_str(t), te_last_error(ctx));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fz_text(data, size);
  if (!text)
    return 0;
  te_ctx *ctx = te_ctx_new();
  te_target *t = te_target_parse(ctx, text);
  if (!t) {
    check_refusal(ctx, text);
  } else {
    const char *canon = te_target_str(t);
    if (!canon || !*canon)
      fz_fail(NAME, "an accepted target has no canonical string", text, "");
    te_ctx *c2 = te_ctx_new();
    te_target *t2 = te_target_parse(c2, canon);
    if (!t2)
      fz_fail(NAME, "the canonical string does not parse", canon, te_last_error(c2));
    if (strcmp(canon, te_target_str(t2)) != 0)
      fz_fail(NAME, "the canonical string is not a fixed point", canon, te_target_str(t2));
    if (te_target_vector_bits(t) != te_target_vector_bits(t2))
      fz_fail(NAME, "the canonical string gives another vector width", canon, "");
    te_ctx_free(c2);
    if (strncmp(canon, "llvm", 4) == 0)
      build_for(ctx, t, text);
  }
  te_ctx_free(ctx);
  free(text);
  return 0;
}
