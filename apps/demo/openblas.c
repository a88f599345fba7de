/* openblas.c — OpenBLAS, the demo's yardstick, loaded at run time (dlopen): the demo builds
 * without it and, when it is not installed, says so and shows te alone. scripts/setup.sh
 * installs it (Debian's libopenblas-dev).
 *
 * OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, when set, make OpenBLAS use another CPU's kernel or
 * cache size: they are cleared before loading it (as `make bench` does), so te is compared with
 * OpenBLAS at its best on this CPU.
 */
#define _POSIX_C_SOURCE 200809L
#include "demo.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cblas.h's enums, by value (CBLAS fixes them), so the header is not needed either. */
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);

static struct {
  sgemm_fn sgemm;
  void (*set_threads)(int);
  char *(*config)(void);
  char *(*corename)(void);
  char text[256];
} ob;

bool dm_openblas_load(char *why, size_t why_size) {
  const char *cleared = getenv("OPENBLAS_CORETYPE") ? "OPENBLAS_CORETYPE" : NULL;
  if (getenv("OPENBLAS_L2_SIZE"))
    cleared = cleared ? "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE" : "OPENBLAS_L2_SIZE";
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("OPENBLAS_L2_SIZE");
  void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    lib = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, why_size,
             "not installed: scripts/setup.sh installs it, libopenblas-dev; "
             "te is shown alone");
    return false;
  }
  /* dlsym's void * to function pointers: what POSIX guarantees works. */
  *(void **)&ob.sgemm = dlsym(lib, "cblas_sgemm");
  *(void **)&ob.set_threads = dlsym(lib, "openblas_set_num_threads");
  *(void **)&ob.config = dlsym(lib, "openblas_get_config");
  *(void **)&ob.corename = dlsym(lib, "openblas_get_corename");
  if (!ob.sgemm) {
    snprintf(why, why_size, "this libopenblas has no cblas_sgemm; te is shown alone");
    return false;
  }
  /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": its first two words are its version */
  const char *config = ob.config ? ob.config() : "OpenBLAS";
  const char *sp = strchr(config, ' ');
  int version_len = sp && strchr(sp + 1, ' ') ? (int)(strchr(sp + 1, ' ') - config) : 64;
  snprintf(ob.text, sizeof ob.text, "%.*s%s%s%s%s%s", version_len, config,
           ob.corename ? ", its " : "", ob.corename ? ob.corename() : "",
           ob.corename ? " kernel" : "", cleared ? " (cleared for it: " : "",
           cleared ? cleared : "");
  if (cleared)
    snprintf(ob.text + strlen(ob.text), sizeof ob.text - strlen(ob.text), ")");
  return true;
}

const char *dm_openblas_config(void) { return ob.text; }

void dm_openblas_set_threads(int n) {
  if (ob.set_threads)
    ob.set_threads(n);
}

int dm_openblas_run(void *user, char *msg, size_t msg_size) {
  (void)msg, (void)msg_size;
  dm_data *d = user;
  ob.sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, d->n, d->n, d->n, 1.0f, d->a, d->n, d->b, d->n, 0.0f,
           d->c, d->n);
  return 0;
}
