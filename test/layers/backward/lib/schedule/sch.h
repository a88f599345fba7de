/* sch.h — the upper layer of this test tree; it may include the lower one. */
#include "ir/ir.h"
