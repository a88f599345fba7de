/* trace.h — schedule steps, declared once in steps.def (internal).
 *
 * A primitive that succeeds records its step with sch_trace_step, giving its arguments as the
 * step's word kinds say; te_schedule_trace prints the steps, te_schedule_replay (trace.c) parses
 * them back with the same kinds and calls the primitive, and `te-tune show --as-c`
 * (autotune/show_c.c) renders them as C calls from the same table.
 */
#ifndef TE_SCH_TRACE_H
#define TE_SCH_TRACE_H

#include "sch.h"

typedef enum sch_step_id {
#define SCH_STEP(verb, words, outs, adds, call) SCH_STEP_##verb,
#include "steps.def"
#undef SCH_STEP
  SCH_STEP_COUNT
} sch_step_id;

/* One word of a step after its verb; which member holds it is the word's kind (steps.def). */
typedef union sch_arg {
  te_stage *stage;   /* S */
  te_tensor *tensor; /* T */
  te_iter *iter;     /* I, A */
  int64_t i;         /* N, P */
  int e;             /* C, G, L: the enumerator */
  const char *word;  /* K */
  struct {
    int n;
    te_stage *const *v;
  } stages; /* S* */
  struct {
    int n;
    te_iter *const *v;
  } iters; /* I*, A* */
} sch_arg;

typedef struct sch_step_info {
  const char *verb;  /* the first word; the primitive is te_<verb> */
  const char *words; /* the kinds of the words after it: "SIN", "SI*", ... */
  const char *outs;  /* show --as-c: out-parameters for the loops it makes, or NULL */
  const char *adds;  /* the name of the stage it adds (printf of words 1 and 2), or NULL */
} sch_step_info;
extern const sch_step_info sch_steps[SCH_STEP_COUNT];

/* The step whose verb is verb, or -1. */
int sch_step_find(const char *verb);
/* The number of word kinds of a step (a list counts once), and whether the last is a list. */
int sch_step_nkinds(const sch_step_info *, bool *list);
/* The words of a C, G or L word (scope, thread tag, tail strategy); NULL for other kinds. */
const ir_enum_words *sch_kind_enum(char kind);

/* Appends the step with words args (one per kind of the step, a list as one) to the trace.
   TE_OK, or TE_ERR_NOMEM (recorded on the context) when the step could not be stored. */
te_status sch_trace_step(te_schedule *, sch_step_id, const sch_arg args[]);

#endif
