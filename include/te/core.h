/* te/core.h — contexts, status codes, errors, data types.
 *
 * Every object te makes (expressions, tensors, schedules, targets, modules) belongs to one
 * context and dies with it. A context is used by one thread at a time; different contexts may be
 * used in parallel from different threads.
 *
 * Errors are values. A failure records a te_status and a message on the context; messages name
 * the API function, the object and the rule broken, e.g.
 *   "te_split: stage 'C': factor must be > 0 (got 0)".
 * te_last_status() and te_last_error() read the record; te_clear_error() empties it. What the
 * record holds follows three rules (SQLite's for calls that do work, cairo's for constructors):
 *
 *   1. A call given valid arguments works whatever failed earlier in the context and was not
 *      cleared: an old failure never makes a later te_build, te_split or te_compute fail, and
 *      never changes what it makes.
 *   2. A call that returns a te_status reports its own outcome. When it fails, its status and
 *      message replace the record (te_last_status() is what it returned, te_last_error() its
 *      message); when it succeeds, the record is left as it was.
 *   3. A constructor (a call that returns an object or a string, NULL on failure) that fails
 *      records its status and message only when the record is empty: the first message is
 *      kept, so a whole computation can be built and checked once at the end.
 *
 * NULL operands. A call given NULL where it needs a te object (typically the NULL result of an
 * earlier failed constructor) fails. When an error is recorded, the NULL is taken to be its
 * consequence: the call returns that error's status and the record keeps its message, so the
 * root cause is what the user reads, not "operand is NULL". Otherwise the call records
 * TE_ERR_INVALID_ARG naming the function and the operand ("te_add: left operand is NULL").
 * A call whose every context-carrying operand is NULL (te_add(NULL, NULL), te_split(NULL, ...))
 * has no context to record on: it returns NULL or TE_ERR_INVALID_ARG and records nothing.
 *
 * Out of memory is TE_ERR_NOMEM, recorded like any failure; nothing leaks, the context stays
 * usable and te_ctx_free releases everything. A schedule primitive refused for its arguments
 * leaves the schedule as it was; one that fails after it began changing the schedule (out of
 * memory, an internal error) leaves it unusable, and later calls on that schedule fail with the
 * same status and a message naming the call that broke it.
 */
#ifndef TE_CORE_H
#define TE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TE_BUILDING_LIBRARY) && defined(__GNUC__)
#define TE_API __attribute__((visibility("default")))
#else
#define TE_API
#endif

#define TE_VERSION_MAJOR 0
#define TE_VERSION_MINOR 1
#define TE_VERSION_PATCH 0
#define TE_VERSION_STRING "0.1.0"

typedef struct te_ctx te_ctx;

/* Status codes. TE_OK is 0; every other value is a failure with a message on the context. */
typedef enum te_status {
  TE_OK = 0,
  TE_ERR_INVALID_ARG, /* NULL or out-of-range argument, wrong arity, object of another context */
  TE_ERR_TYPE,        /* dtype mismatch or an operation that makes no sense for a dtype */
  TE_ERR_SHAPE,       /* wrong rank or extent, of a tensor or of a buffer given at call time */
  TE_ERR_SCHEDULE,    /* a schedule primitive that breaks a rule (foreign axis, bad order, ...) */
  TE_ERR_BOUNDS,      /* bound inference could not prove an access in range */
  TE_ERR_TARGET,      /* unknown or unusable target, or a schedule the target cannot run */
  TE_ERR_CODEGEN,     /* the back end refused the code (a bug in te if it happens) */
  TE_ERR_RUNTIME,     /* a kernel returned an error when called */
  TE_ERR_IO,          /* a file could not be read or written */
  TE_ERR_PARSE,       /* malformed text: target string, trace, workload */
  TE_ERR_NOMEM,       /* allocation failed */
  TE_ERR_UNSUPPORTED, /* valid request that this version of te does not implement */
  TE_ERR_NOT_FOUND,   /* a name or record that does not exist */
  TE_ERR_INTERNAL     /* an internal invariant failed: a bug in te, please report it */
} te_status;

/* The name of a status, e.g. "TE_ERR_SHAPE". Never NULL. */
TE_API const char *te_status_str(te_status);

/* A new, empty context; NULL only when memory is exhausted. */
TE_API te_ctx *te_ctx_new(void);
/* Frees the context and everything made in it (expressions, tensors, schedules, modules).
   NULL is allowed. */
TE_API void te_ctx_free(te_ctx *);

/* The recorded status (TE_OK when none; the rules above say which failure it is): that of the
   last failed call returning a te_status, or of the first failed constructor since then.
   TE_ERR_INVALID_ARG for a NULL context. */
TE_API te_status te_last_status(const te_ctx *);
/* The recorded message ("" when none). Owned by the context, which rewrites it as the record
   changes (copy it to keep it); valid until te_ctx_free. */
TE_API const char *te_last_error(const te_ctx *);
/* Empties the record. NULL is allowed. */
TE_API void te_clear_error(te_ctx *);

/* Frees a string that te returned to the caller (te_lower_text, te_schedule_trace, ...). */
TE_API void te_free(void *);

/* Data types are DLPack's. Bool is one bit in expressions and one byte in memory. f16 (IEEE
   binary16) and bf16 (bfloat16: f32's exponent, 8 significant bits) are stored in 2 bytes and
   rounded after every operation, which targets without native 16-bit arithmetic compute in f32
   (the result is the same for + - * / and sqrt: f32 holds the exact product to round).
   docs/low-precision.md has the rules. */
typedef DLDataType te_dtype;

#define TE_DTYPE(code, bits) ((te_dtype){(uint8_t)(code), (uint8_t)(bits), 1})
#define TE_F16 TE_DTYPE(kDLFloat, 16)
#define TE_BF16 TE_DTYPE(kDLBfloat, 16)
#define TE_F32 TE_DTYPE(kDLFloat, 32)
#define TE_F64 TE_DTYPE(kDLFloat, 64)
#define TE_I8 TE_DTYPE(kDLInt, 8)
#define TE_I16 TE_DTYPE(kDLInt, 16)
#define TE_I32 TE_DTYPE(kDLInt, 32)
#define TE_I64 TE_DTYPE(kDLInt, 64)
#define TE_U8 TE_DTYPE(kDLUInt, 8)
#define TE_U16 TE_DTYPE(kDLUInt, 16)
#define TE_U32 TE_DTYPE(kDLUInt, 32)
#define TE_U64 TE_DTYPE(kDLUInt, 64)
#define TE_BOOL TE_DTYPE(kDLUInt, 1)

/* Writes the dtype's name ("f32", "i64", "bool", "f32x16") into buf; returns buf. */
TE_API const char *te_dtype_str(te_dtype, char *buf, size_t size);
/* 1 when the two dtypes are equal (code, bits and lanes). */
TE_API int te_dtype_eq(te_dtype, te_dtype);

#ifdef __cplusplus
}
#endif
#endif
