/* te_test_skip.c — visible skips, and TE_REQUIRE, which turns them into failures.
 *
 * A test that cannot run here (no Vulkan driver, no ptxas, no AVX-512 host) says so on stdout
 * with a "SKIP" line naming the test, so that the log shows what was not tested. CI lists the
 * features its machines have in TE_REQUIRE (.ci/run): there, a missing one is a broken machine
 * or a broken lookup, and the test fails instead of passing quietly.
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "te_test.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tt_required(const char *feature) {
  const char *list = getenv("TE_REQUIRE");
  if (!list || !feature)
    return false;
  size_t n = strlen(feature);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ", ");
    if (len == n && strncmp(p, feature, n) == 0)
      return true;
    p += len;
    p += strspn(p, ", ");
  }
  return false;
}

static void report(const char *feature, const char *fmt, va_list ap, char *msg, size_t size) {
  vsnprintf(msg, size, fmt, ap);
  const char *suite = criterion_current_suite ? criterion_current_suite->name : "?";
  const char *test = criterion_current_test ? criterion_current_test->name : "?";
  if (tt_required(feature))
    cr_assert_fail("%s.%s: %s, but TE_REQUIRE lists '%s' (this machine should have it)", suite,
                   test, msg, feature);
  printf("SKIP %s.%s: %s\n", suite, test, msg);
  fflush(stdout);
}

void tt_skip_part(const char *feature, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  report(feature, fmt, ap, msg, sizeof msg);
  va_end(ap);
}

static void (*on_skip)(void);

void tt_on_skip(void (*cleanup)(void)) { on_skip = cleanup; }

void tt_skip(const char *feature, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  report(feature, fmt, ap, msg, sizeof msg);
  va_end(ap);
  if (on_skip)
    on_skip();
  criterion_skip_test("%s", msg);
}
