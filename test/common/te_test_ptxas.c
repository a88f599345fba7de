/* te_test_ptxas.c — PTX assembled by NVIDIA's ptxas where it is installed (PATH, $PTXAS or
 * /usr/local/cuda/bin), for the PTX tests (unit.ptx, unit.ptx_mma). Without ptxas it prints a
 * skip line (a failure under TE_REQUIRE=ptxas, which CI sets).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "te_test.h"

static const char *ptxas_path(void) {
  static char found[700];
  static int done;
  if (done)
    return found[0] ? found : NULL;
  done = 1;
  const char *env = getenv("PTXAS");
  if (env && access(env, X_OK) == 0) {
    snprintf(found, sizeof found, "%s", env);
    return found;
  }
  const char *path = getenv("PATH");
  char *copy = strdup(path ? path : "");
  for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir;
       dir = strtok_r(NULL, ":", &save)) {
    char cand[600];
    snprintf(cand, sizeof cand, "%s/ptxas", dir);
    if (access(cand, X_OK) == 0) {
      snprintf(found, sizeof found, "%s", cand);
      break;
    }
  }
  free(copy);
  if (!found[0] && access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
    snprintf(found, sizeof found, "/usr/local/cuda/bin/ptxas");
  return found[0] ? found : NULL;
}

/* Assembles ptx for arch with ptxas (when installed); the log on failure. */
void tt_ptxas_assemble(const char *what, const char *ptx, const char *arch) {
  const char *ptxas = ptxas_path();
  if (!ptxas) {
    tt_skip_part("ptxas",
                 "ptxas not found on PATH, in $PTXAS or in /usr/local/cuda/bin: %s not "
                 "assembled (textual checks only)",
                 what);
    return;
  }
  char dir[] = "/tmp/te_ptx_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char src[600], out[600], log[600], cmd[3200];
  snprintf(src, sizeof src, "%s/k.ptx", dir);
  snprintf(out, sizeof out, "%s/k.cubin", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  FILE *f = fopen(src, "w");
  cr_assert_not_null(f);
  fputs(ptx, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o '%s' > '%s' 2>&1", ptxas, arch, src, out, log);
  int rc = system(cmd);
  FILE *lf = fopen(log, "r");
  char text[2000] = "";
  if (lf) {
    size_t n = fread(text, 1, sizeof text - 1, lf);
    text[n] = '\0';
    fclose(lf);
  }
  struct stat sb;
  cr_expect(rc == 0 && stat(out, &sb) == 0 && sb.st_size > 0,
            "ptxas -arch=%s failed on %s:\n%s\n%s", arch, what, text, ptx);
  if (rc == 0)
    printf("ptxas -arch=%s %s: ok\n", arch, what);
  unlink(src), unlink(out), unlink(log), rmdir(dir);
}
