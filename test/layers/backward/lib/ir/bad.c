/* bad.c — a backward include: the IR may not see the schedule (the check must say so). */
#include "ir.h"
#include "schedule/sch.h"
