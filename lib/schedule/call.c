/* call.c — the error contract (core.h) for the calls that change a schedule.
 *
 * Every primitive checks its arguments before it changes anything, so a refused primitive
 * leaves the schedule as it was and the user may go on using it. Only a failure after the
 * change began (memory exhausted half way through a cache_read's rewrite of its readers, an
 * internal error) can leave a half-changed schedule; such a schedule is marked unusable, and
 * every later call on it (primitives, te_build, te_lower_text, te_schedule_trace) fails with
 * the original status and a message naming the call that broke it.
 */
#include "sch.h"

te_status sch_check_usable(te_schedule *s, const char *fn) {
  if (s->broken == TE_OK)
    return TE_OK;
  return ir_error(s->ctx, s->broken,
                  "%s: the schedule is unusable: an earlier %s failed (%s) while changing it; "
                  "make a new schedule",
                  fn, s->broken_by, te_status_str(s->broken));
}

te_status sch_call_begin(te_schedule *s, const char *fn) {
  ir_call_begin(s->ctx);
  return sch_check_usable(s, fn);
}

te_status sch_call_end(te_schedule *s, const char *fn, te_status st) {
  bool own = !ir_call_took_earlier_error(s->ctx);
  st = ir_call_end(s->ctx, st);
  if ((st == TE_ERR_NOMEM || st == TE_ERR_INTERNAL) && own && s->broken == TE_OK) {
    s->broken = st;
    s->broken_by = fn;
  }
  return st;
}
