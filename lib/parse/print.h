/* print.h — state of te_workload_text shared by print.c (what to print, in which order),
 * print_text.c (naming and writing) and names.c (maps, sets, unique names). Internal.
 */
#ifndef TE_PS_PRINT_H
#define TE_PS_PRINT_H

#include "parse.h"
#include "schedule/sch.h"

/* Pointer -> pointer, open addressing, malloc'd. Keys non-NULL. */
typedef struct ps_ptrmap {
  const void **keys;
  void **vals;
  size_t cap, n;
} ps_ptrmap;
bool ps_ptrmap_put(ps_ptrmap *, const void *key, void *val); /* false on NOMEM */
void *ps_ptrmap_get(const ps_ptrmap *, const void *key);     /* NULL when absent */
void ps_ptrmap_free(ps_ptrmap *);

/* A set of strings (copied in). */
typedef struct ps_strset {
  char **keys;
  size_t cap, n;
} ps_strset;
bool ps_strset_add(ps_strset *, const char *); /* false on NOMEM */
bool ps_strset_has(const ps_strset *, const char *);
void ps_strset_free(ps_strset *);

struct ps_names {
  ps_ptrmap names;       /* var, tensor, op, custom reducer -> its printed name */
  ps_ptrmap axes;        /* reduce axis var -> non-NULL */
  ps_strset taken;       /* global names given (with NAME_vK of multi-output statements) */
  ps_strset orig;        /* every global object's own name */
  ps_strset vars;        /* global variable names given (sizes, parameters, reduce axes) */
  ps_strset *local_orig; /* the own names of the scope being named (index or reducer vars) */
  char **strings;        /* the names given (owned) */
  int nstr, capstr;
  bool oom;
};

/* Names key (NULL: none) after base (see names.c); nderived: NAME_v0.. must be free too;
   local: the scope's set for index or reducer variables (NULL for a global name). Returns the
   name (owned by n), NULL on NOMEM. */
const char *ps_names_give(ps_names *, const void *key, const char *base, int nderived,
                          ps_strset *local);
bool ps_names_set(ps_names *, const void *key, const char *name); /* false on NOMEM */
/* A copy of s owned by n (NULL on NOMEM). */
const char *ps_names_keep(ps_names *, const char *s);
/* Records a global variable's name (index and reducer variables must differ from it). */
bool ps_names_var_taken(ps_names *, const char *name);
void ps_names_free(ps_names *);

/* ---------------------------------------------------------------- te_workload_text */

/* What print.c collects about a computation (all arrays malloc'd). */
typedef struct ps_wp {
  te_ctx *ctx;
  ps_names n;
  ps_ptrmap seen;    /* ops, placeholders, variables and reducers already collected */
  ps_ptrmap read;    /* ops some statement reads */
  ps_ptrmap axis_of; /* reduce axis var -> its declaration (index + 1) */
  sch_op **stmts;
  int nstmt, capstmt;
  te_tensor **phs;
  int nph, capph;
  te_expr **vars; /* sizes and parameters, first appearance first */
  int nvar, capvar;
  te_expr **axes; /* one reduce axis per declaration */
  int naxis, capaxis;
  const ir_custom_reducer **reds;
  int nred, capred;
  bool *size_decl;   /* vars[i] is a size that needs `N: size` (capvar entries) */
  int nshape_vars;   /* vars[0..nshape_vars) appear in shapes and ranges */
  bool sizes_by_id;  /* those sizes are declared, in creation order (print.c, walk_shape) */
  const sch_op *cur; /* the statement whose body is walked */
  const ir_custom_reducer *cur_red; /* the reducer whose results are walked */
  bool in_shape;
  te_expr *bad; /* a node the text cannot express */
  const char *bad_in;
  bool oom;
} ps_wp;

/* Adds k -> v to m (false and w->oom on NOMEM). */
bool ps_wp_mark(ps_wp *, ps_ptrmap *m, const void *k, intptr_t v);
/* print_text.c: names every object, then writes the text. */
bool ps_wp_give_names(ps_wp *);
bool ps_wp_layout(ps_wp *, ir_str *, int nout, te_tensor *const outs[]);

#endif
