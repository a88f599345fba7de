/* te/core.h — contexts, status codes, errors, data types.
 *
 * Every object te makes (expressions, tensors, schedules, targets, modules) belongs to one
 * context and dies with it. A context is used by one thread at a time; different contexts may be
 * used in parallel from different threads.
 *
 * Errors are values, and sticky. A call that does work returns a te_status. A constructor that
 * fails returns NULL; a constructor given NULL (for instance the result of an earlier failed
 * call) returns NULL too, without overwriting the first message, so a whole expression can be
 * built and checked once (as cairo does). te_last_error() gives the first message since the last
 * te_clear_error(); messages name the API function, the object and the rule broken, e.g.
 *   "te_split: stage 'C': factor must be > 0 (got 0)".
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

/* The status of the first failure since te_clear_error (TE_OK when none). */
TE_API te_status te_last_status(const te_ctx *);
/* The message of the first failure since te_clear_error ("" when none). Owned by the context,
   valid until the next te_clear_error or te_ctx_free. */
TE_API const char *te_last_error(const te_ctx *);
TE_API void te_clear_error(te_ctx *);

/* Frees a string that te returned to the caller (te_lower_text, te_schedule_trace, ...). */
TE_API void te_free(void *);

/* Data types are DLPack's. Bool is one bit in expressions and one byte in memory. f16 and bf16
   are recognised and refused with TE_ERR_UNSUPPORTED by this version. */
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
