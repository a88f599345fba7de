/* te/te.h — the whole public API of te. See ../../docs/guide.md for a tour. */
#ifndef TE_TE_H
#define TE_TE_H

#include "build.h"
#include "core.h"
#include "expr.h"
#include "ops.h"
#include "parse.h"
#include "runtime.h"
#include "schedule.h"
#include "tensor.h"
#include "tune.h"

#endif
