/* error.c — kernel error messages (libte_runtime).
 *
 * Generated kernels report a failure by returning a nonzero te_status code after recording a
 * message here. The message lives in a thread-local buffer, so kernels running on different
 * threads never see each other's messages and no locking is needed. te_module_call (and any
 * caller of a static-library kernel) reads it with te_rt_last_error() right after the call.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "te/runtime.h"

enum { RT_MSG_MAX = 1024 };
static _Thread_local char rt_msg[RT_MSG_MAX];

const char *te_rt_last_error(void) { return rt_msg; }

int32_t te_rt_error(int32_t code, const char *msg) {
  if (!msg)
    msg = "(no message)";
  size_t n = strlen(msg);
  if (n >= RT_MSG_MAX)
    n = RT_MSG_MAX - 1;
  memcpy(rt_msg, msg, n);
  rt_msg[n] = '\0';
  return code;
}

int32_t te_rt_arg_error(int32_t code, const char *what, int64_t expected, int64_t got) {
  snprintf(rt_msg, RT_MSG_MAX, "%s: expected %" PRId64 ", got %" PRId64, what ? what : "argument",
           expected, got);
  return code;
}

int32_t te_rt_value_error(int32_t code, const char *what, int64_t got) {
  snprintf(rt_msg, RT_MSG_MAX, "%s (got %" PRId64 ")", what ? what : "argument", got);
  return code;
}
