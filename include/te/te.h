/* te/te.h — the whole public API of te. See ../../docs/guide.md for a tour. */
#ifndef TE_TE_H
#define TE_TE_H

#include "core.h"
#include "expr.h"
#include "tensor.h"
#include "schedule.h"
#include "build.h"
#include "runtime.h"
#include "ops.h"
#include "parse.h"
#include "tune.h"

#endif
