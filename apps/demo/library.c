/* library.c — the demo's last step: the kernel saved ahead of time (te_module_save) as a static
 * library and a header, and use_kernel.c, a program that links them with libte_runtime only,
 * compiled with the C compiler te was built with and run on the spot.
 *
 * Where things are comes from the build (apps/CMakeLists.txt): TE_DEMO_CC (the compiler),
 * TE_DEMO_CFLAGS (a sanitizer build's flags), TE_DEMO_USE_KERNEL_C (the program's source),
 * TE_DEMO_RUNTIME_DIR (libte_runtime's folder), TE_DEMO_DLPACK_DIR (the folder holding
 * dlpack/dlpack.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "demo.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* Runs cmd through the shell, printing its output indented; true when it exits 0. */
static bool run_shown(const char *cmd) {
  char full[4096];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  fflush(stdout);
  FILE *p = popen(full, "r");
  if (!p)
    return false;
  char line[1024];
  while (fgets(line, sizeof line, p))
    printf("    %s", line);
  int st = pclose(p);
  return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

bool dm_library(te_module *mod, const char *kernel, int n, const char *dir, const char *shown) {
  char prefix[1024];
  snprintf(prefix, sizeof prefix, "%s/%s", dir, kernel);
  if (te_module_save(mod, prefix, TE_SAVE_STATIC_LIB | TE_SAVE_HEADER) != TE_OK)
    return false; /* the message is on the module's context: the caller prints it */
  printf("  te_module_save wrote %s/lib%s.a and %s/%s.h\n", shown, kernel, shown, kernel);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "'%s' %s -std=c11 -O2 -DN=%d '%s' -I'%s' -I'%s' '%s/lib%s.a' -L'%s' -Wl,-rpath,'%s' "
           "-lte_runtime -lm -o '%s/use_kernel'",
           TE_DEMO_CC, TE_DEMO_CFLAGS, n, TE_DEMO_USE_KERNEL_C, dir, TE_DEMO_DLPACK_DIR, dir,
           kernel, TE_DEMO_RUNTIME_DIR, TE_DEMO_RUNTIME_DIR, dir);
  printf("  cc use_kernel.c lib%s.a -lte_runtime -lm   (no libte, no LLVM)\n", kernel);
  if (!run_shown(cmd)) {
    printf("  compiling the program failed: %s\n", cmd);
    return false;
  }
  /* on as many threads as the demo's timings (libte_runtime reads TE_NUM_THREADS) */
  snprintf(cmd, sizeof cmd, "TE_NUM_THREADS=%d '%s/use_kernel'", te_num_threads(), dir);
  printf("  TE_NUM_THREADS=%d %s/use_kernel:\n", te_num_threads(), shown);
  return run_shown(cmd);
}
