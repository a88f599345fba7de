/* use_aot.c — the generated library only (dkern.h, libdkern.a) and libte_runtime. */
#include <stdio.h>

#include "dkern.h"

int main(void) {
  float x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
  int64_t shape[1] = {5};
  DLTensor tx = {x, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0}, ty = tx;
  ty.data = y;
  if (d_scale(&tx, &ty, 3.0f) != 0) {
    fprintf(stderr, "use_aot: %s\n", te_rt_last_error());
    return 1;
  }
  for (int i = 0; i < 5; i++)
    if (y[i] != x[i] * 3 + 1)
      return 1;
  printf("AOT ok (y[4] = %g)\n", y[4]);
  return 0;
}
