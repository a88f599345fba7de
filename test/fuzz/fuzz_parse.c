/* fuzz_parse.c — libFuzzer target for te_parse and te_workload_text (how to build and run it:
 * test/fuzz/README.md).
 *
 * Every input is a workload text. Whatever it holds, te_parse must return (never crash, never
 * abort); a failure must carry a "te_parse: " message. When it parses, the canonical text of
 * the result must parse again (in a fresh context) and print byte-identically: the printer and
 * the parser are inverses. A crashing input is a file: run the target on it to replay.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <te/te.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *text, const char *detail) {
  fprintf(stderr, "fuzz_parse: %s\n--- text:\n%s\n--- detail:\n%s\n", what, text, detail);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = 0;
  te_ctx *ctx = te_ctx_new();
  int n = -1;
  te_tensor **outs = NULL;
  te_status st = te_parse(ctx, text, &n, &outs);
  if (st != TE_OK) {
    if (n != 0 || outs)
      fail("failed parse left outputs", text, te_last_error(ctx));
    if (strncmp(te_last_error(ctx), "te_parse: ", 10) != 0)
      fail("error message without the te_parse prefix", text, te_last_error(ctx));
  } else {
    char *t1 = te_workload_text(n, outs);
    if (!t1)
      fail("cannot print a parsed workload", text, te_last_error(ctx));
    te_ctx *c2 = te_ctx_new();
    int n2;
    te_tensor **o2;
    if (te_parse(c2, t1, &n2, &o2) != TE_OK)
      fail("canonical text does not parse", t1, te_last_error(c2));
    if (n2 != n)
      fail("canonical text gives another number of outputs", t1, "");
    char *t2 = te_workload_text(n2, o2);
    if (!t2)
      fail("cannot print the parsed canonical text", t1, te_last_error(c2));
    if (strcmp(t1, t2) != 0)
      fail("canonical text is not a fixed point", t1, t2);
    if (te_workload_hash(t1) != te_workload_hash(t2))
      fail("hash differs", t1, t2);
    te_free(t1);
    te_free(t2);
    te_ctx_free(c2);
  }
  te_ctx_free(ctx);
  free(text);
  return 0;
}
