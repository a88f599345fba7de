/* boundary.c — the error contract of include/te/core.h, kept where the user's calls enter te.
 *
 * Inside te a failure is recorded once (ir_error: the first since te_clear_error wins) and
 * passes up as a NULL or a status; code below the boundary asks ir_failed / te_last_status
 * whether something went wrong. That question must be about the call in progress, not about an
 * earlier call of the user's that failed and was not cleared, or a valid te_build would fail
 * with the old message. So the outermost public call sets the recorded error aside when it
 * begins and decides at its end what the context keeps:
 *   - a call returning te_status reports its own outcome (SQLite's rule): its failure replaces
 *     the recorded error, its success leaves the earlier one in place; what it returns is the
 *     first failure recorded while it ran (a check that fails because memory ran out earlier
 *     in the call reports TE_ERR_NOMEM, not its own complaint);
 *   - a constructor keeps the earlier error when there was one (cairo's sticky rule: the first
 *     message of a chain of NULLs names the root cause), else its own.
 * A NULL operand is the one place where an earlier error matters inside a call: the NULL is
 * most likely that error's result, so ir_error_null takes the set-aside error back as this
 * call's (the user sees the root cause, not "operand is NULL").
 */
#include <stdio.h>
#include <string.h>

#include "ctx_internal.h"

/* The context of the outermost public call in progress on this thread (ir_call_ctx). */
static _Thread_local te_ctx *call_ctx;

te_ctx *ir_call_ctx(void) { return call_ctx; }

static void copy_error(te_status *to_st, char *to_msg, te_status st, const char *msg) {
  *to_st = st;
  if (st == TE_OK)
    to_msg[0] = '\0';
  else
    memcpy(to_msg, msg, IR_ERRMSG_MAX);
}

void ir_call_begin(te_ctx *ctx) {
  if (!ctx || ctx->call_depth++ > 0)
    return;
  ctx->outer_call_ctx = call_ctx;
  call_ctx = ctx;
  copy_error(&ctx->outer_status, ctx->outer_msg, ctx->status, ctx->errmsg);
  ctx->outer_taken = false;
  ctx->status = TE_OK;
  ctx->errmsg[0] = '\0';
}

static void restore_outer(te_ctx *ctx) {
  copy_error(&ctx->status, ctx->errmsg, ctx->outer_status, ctx->outer_msg);
}

/* The end of the outermost call: this thread's call context is the one before it again. */
static bool outermost_ends(te_ctx *ctx) {
  if (--ctx->call_depth > 0)
    return false;
  call_ctx = ctx->outer_call_ctx;
  return true;
}

te_status ir_call_end(te_ctx *ctx, te_status st) {
  if (!ctx || !outermost_ends(ctx))
    return st;
  if (ctx->status != TE_OK)
    st = ctx->status; /* the call's first failure: recorded but not returned (or followed by
                         one it caused, e.g. a check misled by memory running out) */
  if (st == TE_OK) {
    restore_outer(ctx);
    return TE_OK;
  }
  if (ctx->status == TE_OK) /* a failure without a message: still the call's own */
    ir_error(ctx, st, "%s (no message was recorded: a bug in te, please report it)",
             te_status_str(st));
  return st;
}

void *ir_call_end_ptr(te_ctx *ctx, void *p) {
  if (!ctx || !outermost_ends(ctx))
    return p;
  if (ctx->outer_status != TE_OK)
    restore_outer(ctx); /* the first message wins */
  return p;
}

te_status ir_error_null(te_ctx *ctx, const char *fmt, ...) {
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  if (ctx->status == TE_OK && ctx->call_depth > 0 && ctx->outer_status != TE_OK) {
    restore_outer(ctx);
    ctx->outer_taken = true;
  }
  if (ctx->status != TE_OK)
    return ctx->status;
  va_list ap;
  va_start(ap, fmt);
  ir_verror(ctx, TE_ERR_INVALID_ARG, fmt, ap);
  va_end(ap);
  return TE_ERR_INVALID_ARG;
}

bool ir_call_took_earlier_error(const te_ctx *ctx) { return ctx && ctx->outer_taken; }
