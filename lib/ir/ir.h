/* ir.h — te's intermediate representation: expressions and statements.
 *
 * Semantics (read this before writing a pass):
 *   - Integers wrap (two's complement). FLOORDIV/FLOORMOD round towards -inf (mod takes the
 *     divisor's sign); TRUNCDIV/TRUNCMOD are C's operators and are only made where a pass has
 *     proved the operands non-negative. Index arithmetic is i64.
 *   - Floats are IEEE-754; te may contract a*b+c into fma (the only licence it takes).
 *   - Evaluation order of an expression's operands is unspecified and irrelevant: expressions
 *     have no side effects (loads read memory that no expression writes).
 *   - Every node carries its dtype, lanes included (vectors: RAMP, BROADCAST, vector LOADs).
 *
 * Nodes are immutable. Expressions are hash-consed in the context (or in the build's scratch
 * arena, see ir_scratch_begin), so structural equality is pointer equality; VARs are identities
 * and are never shared by structure. Statements are not consed. A pass builds new nodes and
 * shares untouched subtrees; the default mutator rebuilds a node only when a child changed.
 *
 * Children are uniform arrays (args for expressions, exprs/stmts for statements); nodes.def says
 * what each position means. The payload union holds the rest.
 *
 * The ir layer (lib/ir/) uses lib/base only (contexts, memory, errors, strings, maps: base.h).
 * Tensors are known by their name, dtype and shape (struct te_tensor below), not by the schedule
 * that computes them.
 */
#ifndef TE_IR_H
#define TE_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "te/te.h"

/* ---------------------------------------------------------------- kinds */

typedef enum ir_expr_kind {
#define IR_EXPR(K, name, n) IR_##K,
#define IR_STMT(K, name)
#include "nodes.def"
#undef IR_EXPR
#undef IR_STMT
  IR_EXPR_COUNT
} ir_expr_kind;

typedef enum ir_stmt_kind {
#define IR_STMT(K, name) IR_S_##K,
#define IR_EXPR(K, name, n)
#include "nodes.def"
#undef IR_EXPR
#undef IR_STMT
  IR_STMT_COUNT
} ir_stmt_kind;

enum {
  IR_INTRIN_FLOAT = 1,
  IR_INTRIN_NUMBER = 2,
  IR_INTRIN_BOOL = 4,
  IR_INTRIN_INTERNAL = 8,
  IR_INTRIN_GUARD = 16, /* if_then_else: (bool cond, t, f), only the chosen side evaluated */
  IR_INTRIN_INT = 32,   /* integer operands only */
  IR_INTRIN_SHIFT = 64, /* (x, amount): x's type; the amount brought to it by te_call */
};
typedef enum ir_intrin {
#define IR_INTRIN(ID, name, n, flags) IR_INTRIN_##ID,
#include "intrinsics.def"
#undef IR_INTRIN
  IR_INTRIN_COUNT
} ir_intrin;

typedef struct ir_intrin_info {
  const char *name;
  int nargs;
  int flags;
} ir_intrin_info;
extern const ir_intrin_info ir_intrin_table[IR_INTRIN_COUNT];
/* -1 when not found. */
int ir_intrin_lookup(const char *name);

/* The instructions te_tensorize maps a loop onto (lib/lower/tensorize.c matches them). 0: none.
   The schedule marks the loop with `attr tensorize` (value: the id; node: the te_iter). */
typedef enum ir_tensor_intrin {
  IR_TENSOR_INTRIN_NONE,
  IR_TENSOR_INTRIN_VPDPBUSD,     /* x86 AVX512-VNNI / AVX-VNNI: 4 u8 x s8 products into each s32 */
  IR_TENSOR_INTRIN_VDPBF16PS,    /* x86 AVX512-BF16: 2 bf16 x bf16 products into each f32 */
  IR_TENSOR_INTRIN_MMA_M16N8K16, /* PTX mma.sync m16n8k16: f16/bf16 16x16 x 16x8 into f32 */
  IR_TENSOR_INTRIN_MMA_M16N8K32, /* PTX mma.sync m16n8k32: s8/u8 16x32 x 32x8 into s32 */
  IR_TENSOR_INTRIN_COUNT
} ir_tensor_intrin;
/* Whether id is one of the tensor-core tiles (tensorize_mma.c), which mark the outermost of
   their three loops rather than a reduce loop of the group's size. */
static inline bool ir_tensor_intrin_is_mma(int64_t id) {
  return id == IR_TENSOR_INTRIN_MMA_M16N8K16 || id == IR_TENSOR_INTRIN_MMA_M16N8K32;
}
extern const char *const ir_tensor_intrin_name[IR_TENSOR_INTRIN_COUNT];
/* The id of name, IR_TENSOR_INTRIN_NONE when it is none of them. */
ir_tensor_intrin ir_tensor_intrin_lookup(const char *name);

extern const char *const ir_expr_kind_name[IR_EXPR_COUNT];
extern const int ir_expr_kind_nargs[IR_EXPR_COUNT];
extern const char *const ir_stmt_kind_name[IR_STMT_COUNT];

/* ---------------------------------------------------------------- payloads */

typedef struct ir_stmt ir_stmt;
typedef struct ir_buffer ir_buffer;
typedef struct ir_reduce ir_reduce;

typedef enum ir_var_kind {
  IR_VAR_INDEX,  /* an index variable (te_var, loop variables) or symbolic size: i64 */
  IR_VAR_REDUCE, /* a reduce axis: domain in dom_min/dom_extent */
  IR_VAR_PARAM,  /* a scalar kernel parameter (te_param), any dtype */
  IR_VAR_HANDLE  /* a pointer (codegen and closures) */
} ir_var_kind;

typedef struct ir_var_info {
  const char *name;
  uint32_t id; /* creation order in the context: printing is deterministic */
  ir_var_kind kind;
  te_expr *dom_min, *dom_extent; /* IR_VAR_REDUCE only */
} ir_var_info;

typedef enum ir_reducer_kind {
  IR_REDUCER_SUM,
  IR_REDUCER_PROD,
  IR_REDUCER_MIN,
  IR_REDUCER_MAX,
  IR_REDUCER_CUSTOM
} ir_reducer_kind;

/* A custom commutative reducer over nvalues values: combine(lhs, rhs) -> results, with an
   identity per value. lhs and rhs are VARs that results use. */
typedef struct ir_custom_reducer {
  int nvalues;
  te_expr **lhs, **rhs, **results, **identity;
} ir_custom_reducer;

struct ir_reduce {
  ir_reducer_kind kind;
  ir_custom_reducer *custom; /* IR_REDUCER_CUSTOM */
  int naxes;
  te_expr **axes;  /* IR_VAR_REDUCE vars */
  te_expr *cond;   /* NULL: every point of the domain */
  int value_index; /* which of a tuple reduction's results this node is */
};

typedef enum ir_for_kind {
  IR_FOR_SERIAL,
  IR_FOR_PARALLEL,
  IR_FOR_VECTORIZED,
  IR_FOR_UNROLLED,
  IR_FOR_THREAD
} ir_for_kind;
extern const char *const ir_for_kind_name[]; /* "", "parallel", "vectorized", ... */

/* The words of te_scope, te_thread_tag and te_tail (enums.def): "global", "threadIdx.x",
   "round_up", ... The trace, the IR printer and messages use these tables and nothing else. */
typedef struct ir_enum_words {
  const char *what; /* "scope", "thread tag", "tail strategy": for messages */
  int count;
  const char *const *words;       /* indexed by the enumerator's value */
  const char *const *enumerators; /* the C spelling: "TE_SCOPE_GLOBAL" (te-tune show --as-c) */
} ir_enum_words;
extern const ir_enum_words ir_scope_words, ir_thread_tag_words, ir_tail_words;
/* The word of value, NULL when value is not an enumerator. */
const char *ir_enum_word(const ir_enum_words *, int value);
/* The C spelling of value, NULL when value is not an enumerator. */
const char *ir_enum_enumerator(const ir_enum_words *, int value);
/* The value whose word is word, -1 when none is (or word is NULL). */
int ir_enum_value(const ir_enum_words *, const char *word);

typedef struct ir_loop_info {
  ir_for_kind kind;
  te_thread_tag tag; /* IR_FOR_THREAD */
} ir_loop_info;

/* A tensor, as the IR refers to it (ACCESS and PROVIDE nodes, REALIZE, buffers, "produce"
   attributes): its name, element dtype and shape. The operation that computes it is the schedule
   layer's (lib/schedule/sch.h: te_compute, te_placeholder); the IR never looks at op. */
struct te_tensor {
  te_ctx *ctx;
  const char *name;
  te_dtype dtype;
  int ndim;
  te_expr **shape;
  struct sch_op *op; /* the placeholder or compute making it (schedule layer) */
  int value_index;   /* which of op's outputs it is */
  te_expr **strides; /* a placeholder's declared layout (te_placeholder_strided): element
                        [i_0, ...] is at sum i_d * strides[d] elements from element 0; NULL:
                        compact row-major */
};

/* A flat buffer (after storage flattening): a kernel argument or an allocation. Element i of a
   buffer is at data + i * sizeof(element). An argument whose tensor declares strides keeps them
   (strides, i64 expressions of sizes and stride variables): its accesses are flattened with them
   and the entry binds and checks them; NULL: compact row-major. */
struct ir_buffer {
  const char *name;
  te_dtype dtype; /* element type, lanes 1 */
  int ndim;       /* logical shape, for argument checks and printing */
  te_expr **shape;
  te_scope scope;
  te_tensor *tensor; /* the tensor it stores, when it stores one */
  int arg_index;     /* position among the kernel's arguments, -1 for allocations */
  te_expr **strides; /* an argument's declared strides in elements (ndim of them), or NULL */
};

/* A storage dim of a realize (order[k]): dim d (its outer part when split[d] > 0), or
   IR_STORAGE_INNER + d, the inner part of dim d: index (i_d - min_d) % split[d], extent split[d];
   the outer part's index is (i_d - min_d) / split[d], its extent ceil(extent_d / split[d]). */
enum { IR_STORAGE_INNER = TE_MAX_DIMS };
typedef struct ir_realize_info {
  te_tensor *tensor;
  te_scope scope;
  int8_t norder;                 /* 0: row-major storage; else ndim plus one per split dim, */
  int8_t order[2 * TE_MAX_DIMS]; /* the storage dims, outermost first */
  int64_t split[TE_MAX_DIMS];    /* per dim: the factor it is stored split by, 0 none */
} ir_realize_info;

typedef struct ir_attr_info {
  const char *key; /* "produce", "pragma_unroll_max_step", "thread_extent", ... */
  void *node;      /* what the attribute is about (a te_tensor, ir_buffer, ...), may be NULL */
} ir_attr_info;
/* The calling convention's attributes (lowering's make_entry and make_closures):
     "buffer_bind"    node: an ir_buffer; value: a handle, the address of its element 0 in body
     "compute_scope"  node: the ir_closure the entry calls (the kernel's loops); value: 0
     "closure"        node: an ir_closure; body: a parallel FOR run through it; value: 0 */

/* An assert fails with status and a message (codegen prefixes "kernel 'NAME': "). Its values
   (exprs after the condition, i64, evaluated only when it fails) complete the message as the
   runtime writes it: none "message"; one got "message (got G)"; two, expected and got,
   "message: expected E, got G" (te_rt_arg_error's form). */
typedef struct ir_assert_info {
  te_status status;
  const char *message;
} ir_assert_info;

/* An outlined function: the body of `attr compute_scope` (the kernel body the entry calls after
   its checks, lowering's make_entry) or of `attr closure` around a parallel loop (a body
   te_rt_parallel_for runs once per iteration, make_closures). Its parameters are the captures,
   in order (a parallel closure's loop variable comes first, before them); each capture is a
   variable or a buffer (a pointer to element 0) bound where the attribute is. */
typedef struct ir_capture {
  te_expr *var;      /* a variable, or NULL */
  ir_buffer *buffer; /* a buffer, when var is NULL */
} ir_capture;

typedef struct ir_closure {
  const char *name; /* the function's symbol: "NAME_impl", "NAME_par0", ... */
  int ncaptures;
  ir_capture *captures;
} ir_closure;

/* A call of an extern stage's function (te_extern): fn(ninputs, inputs, output) with a DLTensor
   for each argument, made from its data pointer (element 0), dtype, extents and strides (the
   statement's exprs, in argument order). Before storage flattening the arguments are tensors,
   after it buffers. A non-zero return stops the kernel with TE_ERR_RUNTIME (codegen). */
typedef struct ir_extern_call {
  const char *stage;   /* the extern stage's name, for messages */
  const char *symbol;  /* the C name an ahead-of-time kernel calls, or NULL */
  te_extern_fn fn;     /* the function a JIT-compiled kernel calls, or NULL */
  int nargs;           /* inputs, then the output */
  te_tensor **tensors; /* before storage_flatten */
  ir_buffer **buffers; /* after storage_flatten (NULL before) */
} ir_extern_call;

/* ---------------------------------------------------------------- nodes */

struct te_expr {
  uint16_t kind; /* ir_expr_kind */
  uint16_t nargs;
  te_dtype dtype;
  uint32_t hash;
  te_ctx *ctx;
  te_expr **args;
  union {
    int64_t i;
    double f;
    ir_var_info var;
    ir_intrin call;
    te_tensor *tensor; /* ACCESS */
    ir_buffer *buffer; /* LOAD */
    ir_reduce *reduce; /* REDUCE */
  } u;
};

struct ir_stmt {
  uint16_t kind; /* ir_stmt_kind */
  uint16_t nexprs;
  uint32_t nstmts;
  te_expr **exprs;
  ir_stmt **stmts;
  union {
    ir_loop_info loop;       /* FOR */
    ir_buffer *buffer;       /* STORE, ALLOCATE */
    te_tensor *tensor;       /* PROVIDE */
    ir_realize_info realize; /* REALIZE */
    ir_attr_info attr;       /* ATTR */
    ir_assert_info assert_;  /* ASSERT */
    ir_extern_call *ext;     /* CALL_EXTERN */
  } u;
};

/* Named accessors for readability in passes. */
#define IR_FOR_VAR(s) ((s)->exprs[0])
#define IR_FOR_MIN(s) ((s)->exprs[1])
#define IR_FOR_EXTENT(s) ((s)->exprs[2])
#define IR_FOR_BODY(s) ((s)->stmts[0])

/* ---------------------------------------------------------------- dtypes */

static inline bool ir_is_int(te_dtype t) { return t.code == kDLInt; }
static inline bool ir_is_uint(te_dtype t) { return t.code == kDLUInt && t.bits > 1; }
static inline bool ir_is_bool(te_dtype t) { return t.code == kDLUInt && t.bits == 1; }
/* bf16 is a float everywhere a float can go; ir_is_half tells the two 16-bit kinds apart from
   f32/f64 where a back end stores them narrow and computes wide. */
static inline bool ir_is_float(te_dtype t) { return t.code == kDLFloat || t.code == kDLBfloat; }
static inline bool ir_is_half(te_dtype t) { return ir_is_float(t) && t.bits == 16; }
/* A tensor-core tile's call (mma_m16n8k16, mma_m16n8k32: the value of the store of a tile). */
static inline bool ir_is_mma_call(const te_expr *e) {
  return e->kind == IR_CALL &&
         (e->u.call == IR_INTRIN_MMA_M16N8K16 || e->u.call == IR_INTRIN_MMA_M16N8K32);
}
/* A pointer (a DLTensor *, a data pointer): the calling convention's values, never data. */
static inline bool ir_is_handle(te_dtype t) { return t.code == kDLOpaqueHandle; }
#define IR_HANDLE ((te_dtype){kDLOpaqueHandle, 64, 1})
static inline bool ir_is_intlike(te_dtype t) { return t.code == kDLInt || t.code == kDLUInt; }
static inline bool ir_dtype_eq(te_dtype a, te_dtype b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline te_dtype ir_with_lanes(te_dtype t, int lanes) {
  t.lanes = (uint16_t)lanes;
  return t;
}

/* FLOORDIV and FLOORMOD of two constants (b != 0), the one definition every constant fold uses:
   rounds towards -inf, the remainder takes b's sign. INT64_MIN / -1 wraps to INT64_MIN (and its
   remainder is 0), as i64 arithmetic does. */
int64_t ir_floordiv64(int64_t a, int64_t b);
int64_t ir_floormod64(int64_t a, int64_t b);
static inline te_dtype ir_elem(te_dtype t) {
  t.lanes = 1;
  return t;
}
static inline te_dtype ir_bool_of(te_dtype t) {
  te_dtype b = TE_BOOL;
  b.lanes = t.lanes;
  return b;
}
/* Bytes an element takes in memory (bool: 1). */
static inline int ir_dtype_bytes(te_dtype t) { return t.bits == 1 ? 1 : t.bits / 8; }
/* 1 for the dtypes te computes with: i8..i64, u8..u64, bool, f16, bf16, f32, f64. */
bool ir_dtype_supported(te_dtype);
/* v rounded to the nearest value of float dtype t (ties to even; NaN and inf kept; past the
   largest finite value: inf), as a double. f64: v itself. */
double ir_float_round(te_dtype t, double v);
/* The 16-bit pattern of v rounded to f16/bf16 t (NaN: the quiet NaN of v's sign), and the value
   of a pattern: for code that fills or reads 16-bit float memory (the tuner's measurer). */
uint16_t ir_half_bits(te_dtype t, double v);
double ir_half_value(te_dtype t, uint16_t h);
const char *ir_dtype_name(te_dtype, char *buf, size_t size); /* = te_dtype_str */

/* ---------------------------------------------------------------- constructors
 *
 * ir_* constructors do no promotion: operands must already have the types the node needs
 * (ir_check fails otherwise). The public te_* constructors (expr_api.c) check types, promote and
 * then call these. None of them simplifies, except ir_make_int-style immediates.
 */
/* payload points at a value of the kind's u member (&(int64_t){5}, &(double){x}, &intrin_id,
   &tensor, &buffer, &reduce_ptr; &e->u works for any kind), NULL for kinds without one. An
   IR_VAR payload makes a new variable (VARs are never consed). */
te_expr *ir_make(te_ctx *, ir_expr_kind, te_dtype, int nargs, te_expr *const args[],
                 const void *payload /* the u member's value, or NULL */);
te_expr *ir_int(te_ctx *, te_dtype, int64_t);
te_expr *ir_i64(te_ctx *, int64_t);
te_expr *ir_float(te_ctx *, te_dtype, double);
te_expr *ir_bool(te_ctx *, bool);
te_expr *ir_var_new(te_ctx *, const char *name, te_dtype, ir_var_kind);
te_expr *ir_reduce_axis_new(te_ctx *, const char *name, te_expr *min, te_expr *extent);
te_expr *ir_binary(ir_expr_kind, te_expr *a, te_expr *b); /* arith, min/max, cmp, and/or */
te_expr *ir_not(te_expr *);
te_expr *ir_select(te_expr *c, te_expr *t, te_expr *f);
te_expr *ir_cast(te_dtype, te_expr *); /* returns e itself when the dtype already matches */
te_expr *ir_call(te_ctx *, ir_intrin, te_dtype, int n, te_expr *const args[]);
/* A shift call (IR_INTRIN_SHIFT) of x by amount, checked: the amount brought to x's type and
   clamped to its width (expr_bits.c); records TE_ERR_TYPE on lanes that differ. */
te_expr *ir_shift_call(te_ctx *, ir_intrin, te_expr *x, te_expr *amount);
te_expr *ir_access(te_tensor *, int n, te_expr *const idx[]);
te_expr *ir_load(ir_buffer *, te_dtype /* element type with lanes */, te_expr *index);
te_expr *ir_ramp(te_expr *base, te_expr *stride, int lanes);
te_expr *ir_broadcast(te_expr *v, int lanes);
te_expr *ir_let(te_expr *var, te_expr *value, te_expr *body);
te_expr *ir_reduce_make(te_ctx *, te_dtype, const ir_reduce *, int nsrc, te_expr *const src[]);

/* Shorthands for index arithmetic (i64 operands). */
#define ir_add(a, b) ir_binary(IR_ADD, (a), (b))
#define ir_sub(a, b) ir_binary(IR_SUB, (a), (b))
#define ir_mul(a, b) ir_binary(IR_MUL, (a), (b))
#define ir_floordiv(a, b) ir_binary(IR_FLOORDIV, (a), (b))
#define ir_floormod(a, b) ir_binary(IR_FLOORMOD, (a), (b))
#define ir_min(a, b) ir_binary(IR_MIN, (a), (b))
#define ir_max(a, b) ir_binary(IR_MAX, (a), (b))
#define ir_lt(a, b) ir_binary(IR_LT, (a), (b))
#define ir_le(a, b) ir_binary(IR_LE, (a), (b))
#define ir_and(a, b) ir_binary(IR_AND, (a), (b))

static inline bool ir_is_const_int(const te_expr *e, int64_t *v) {
  if (e && e->kind == IR_INT) {
    if (v)
      *v = e->u.i;
    return true;
  }
  return false;
}
static inline bool ir_is_var(const te_expr *e) { return e && e->kind == IR_VAR; }

ir_stmt *ir_stmt_make(te_ctx *, ir_stmt_kind, int nexprs, te_expr *const exprs[], int nstmts,
                      ir_stmt *const stmts[], const void *payload);
ir_stmt *ir_for(te_expr *var, te_expr *min, te_expr *extent, ir_for_kind, te_thread_tag,
                ir_stmt *body);
ir_stmt *ir_store(ir_buffer *, te_expr *value, te_expr *index);
ir_stmt *ir_provide(te_tensor *, te_expr *value, int n, te_expr *const idx[]);
ir_stmt *ir_allocate(te_ctx *, ir_buffer *, te_expr *count, ir_stmt *body);
ir_stmt *ir_realize(te_tensor *, te_scope, int ndim, te_expr *const mins[],
                    te_expr *const extents[], ir_stmt *body);
/* The same realize with its dims stored in order (a permutation of 0 .. ndim-1, outermost
   first); NULL order or ndim < 2: row-major. */
ir_stmt *ir_realize_ordered(te_tensor *, te_scope, int ndim, te_expr *const mins[],
                            te_expr *const extents[], const int8_t *order, ir_stmt *body);
/* The same with split dims (te_reorder_storage of split axes): norder storage dims encoded as
   ir_realize_info.order, split[d] the factor of dim d (0 none; NULL: no split dims). */
ir_stmt *ir_realize_laid_out(te_tensor *, te_scope, int ndim, te_expr *const mins[],
                             te_expr *const extents[], int norder, const int8_t *order,
                             const int64_t *split, ir_stmt *body);
ir_stmt *ir_let_stmt(te_expr *var, te_expr *value, ir_stmt *body);
ir_stmt *ir_if(te_expr *cond, ir_stmt *then_s, ir_stmt *else_s /* may be NULL */);
/* A sequence; NULL entries are dropped, nested SEQs flattened, one statement returned as is,
   zero gives NULL. */
ir_stmt *ir_seq(te_ctx *, int n, ir_stmt *const stmts[]);
ir_stmt *ir_seq2(te_ctx *, ir_stmt *a, ir_stmt *b);
ir_stmt *ir_evaluate(te_expr *);
/* key "produce": node is the te_tensor produced (printed as "produce NAME {"). */
ir_stmt *ir_attr(te_ctx *, const char *key, void *node, te_expr *value, ir_stmt *body);
ir_stmt *ir_assert(te_expr *cond, te_status, const char *message, ir_stmt *body);
/* An assert with nvalues (0, 1: got; 2: expected, got) i64 values completing its message (see
   ir_assert_info); body may be NULL (nothing after the check). */
ir_stmt *ir_assert_values(te_expr *cond, te_status, const char *message, int nvalues,
                          te_expr *const values[], ir_stmt *body);
ir_stmt *ir_barrier(te_ctx *);
/* A CALL_EXTERN of call (the struct is the caller's, in the context's memory); exprs as
   nodes.def says. */
ir_stmt *ir_call_extern(te_ctx *, ir_extern_call *call, int nexprs, te_expr *const exprs[]);

ir_buffer *ir_buffer_new(te_ctx *, const char *name, te_dtype, int ndim, te_expr *const shape[],
                         te_scope, te_tensor *, int arg_index);

/* ---------------------------------------------------------------- walking
 *
 * Visitor: pre-order. A callback returns IR_CONTINUE (visit the children), IR_PRUNE (skip them)
 * or IR_ABORT (stop the whole walk). NULL slots visit children. Expressions shared in the DAG
 * are visited each time they occur. A REDUCE's condition is visited after its args.
 */
enum { IR_CONTINUE = 0, IR_PRUNE = 1, IR_ABORT = 2 };
typedef struct ir_visitor ir_visitor;
struct ir_visitor {
  int (*expr[IR_EXPR_COUNT])(ir_visitor *, te_expr *);
  int (*stmt[IR_STMT_COUNT])(ir_visitor *, ir_stmt *);
  void *data;
};
int ir_visit_expr(ir_visitor *, te_expr *); /* returns IR_ABORT if aborted, else IR_CONTINUE */
int ir_visit_stmt(ir_visitor *, ir_stmt *);

/* Mutator: a callback returns the replacement (or the node itself). NULL slots recurse with
   ir_mutate_*_children, which rebuilds the node only when a child changed. A NULL result means
   failure (the context holds the error) and propagates. With memo set, results for expressions
   are cached by node (only for context-free rewrites such as substitution).
   Statements: a NULL result with no error on the context means "no statement": a SEQ drops it,
   an IF whose then-branch empties keeps the else under !cond, a statement whose body empties
   (FOR, LET_STMT, ALLOCATE, ATTR, ...) empties too. The default REDUCE recursion also mutates
   the condition and the axes (an axis mapped to another VAR is renamed). */
typedef struct ir_mutator ir_mutator;
struct ir_mutator {
  te_ctx *ctx;
  te_expr *(*expr[IR_EXPR_COUNT])(ir_mutator *, te_expr *);
  ir_stmt *(*stmt[IR_STMT_COUNT])(ir_mutator *, ir_stmt *);
  void *data;
  bool memo;
  struct ir_map *memo_map; /* internal */
};
te_expr *ir_mutate_expr(ir_mutator *, te_expr *);
ir_stmt *ir_mutate_stmt(ir_mutator *, ir_stmt *);
te_expr *ir_mutate_expr_children(ir_mutator *, te_expr *);
ir_stmt *ir_mutate_stmt_children(ir_mutator *, ir_stmt *);
/* The same node with new children (payload copied). */
te_expr *ir_expr_with_args(te_expr *, int nargs, te_expr *const args[]);
ir_stmt *ir_stmt_with_children(te_ctx *, ir_stmt *, te_expr *const exprs[], ir_stmt *const stmts[]);

/* Substitution of variables (pointer identity) by expressions. */
te_expr *ir_substitute(te_ctx *, te_expr *, int n, te_expr *const from[], te_expr *const to[]);
ir_stmt *ir_substitute_stmt(te_ctx *, ir_stmt *, int n, te_expr *const from[], te_expr *const to[]);
/* True when e uses var (or, for ir_uses_any, any var in the list). */
bool ir_expr_uses(te_expr *e, te_expr *var);
bool ir_expr_uses_any(te_expr *e, int n, te_expr *const vars[]);
bool ir_stmt_uses(ir_stmt *s, te_expr *var);

/* ---------------------------------------------------------------- printing */

/* Printing: deterministic text (see docs/ir-text.md). Variables print by name; distinct
   variables with the same name get suffixes (i, i_1, ...) in order of first appearance. */
typedef struct ir_printer ir_printer;
void ir_print_expr(ir_str *, te_expr *);
void ir_print_stmt(ir_str *, ir_stmt *, int indent);
char *ir_expr_to_string(te_expr *);
char *ir_stmt_to_string(ir_stmt *);

/* Structural checks of a statement (variables bound before use, child dtypes consistent, no
   ACCESS/PROVIDE after flattening when flattened is set). Returns TE_OK or TE_ERR_INTERNAL
   with a message naming the pass. */
te_status ir_verify_stmt(te_ctx *, ir_stmt *, const char *after_pass, bool flattened);

#endif
