/*
 * JSON fragments every workload reports the same way, so the trace analyser
 * can read objects and CPU times without knowing which workload produced them.
 */
#ifndef TRACELAB_REPORT_H
#define TRACELAB_REPORT_H

#include "json.h"
#include "platform.h"

/* {"name":..,"kind":..,"address"|"handle":"0x.."|"id"|"fd":N} */
void report_object(json_writer *w, const char *name, pl_object_info info);

/* "userNs","systemNs","voluntarySwitches","involuntarySwitches" into the
 * current object; NULL (times unavailable) writes -1 for each. */
void report_times(json_writer *w, const pl_times *t);

/* "beginNs","endNs","elapsedNs" of the measured region and the "process"
 * object with the process's CPU times, as every workload result has them. */
void report_region(json_writer *w, long long begin, long long end, const pl_times *process);

#endif
