/*
 * What every workload after timemutex shares: the options that place the run
 * (--affinity, --priority), annotate it (--marker) and collect it (--result),
 * applied the same way and with the same exit codes as timemutex, plus the
 * per-thread MSVC-style random generator the seeds' rand() calls become.
 */
#ifndef TRACELAB_WORKLOAD_H
#define TRACELAB_WORKLOAD_H

#include "args.h"
#include "json.h"

#include <stdint.h>
#include <stdio.h>

#define WL_MAX_CPUS 1024

/* Exit codes shared by the workloads (timemutex's numbering). */
enum {
    WL_EXIT_THREAD = 1,   /* a thread could not be created */
    WL_EXIT_ALLOC = 4,    /* memory allocation failed */
    WL_EXIT_OPTION = 5,   /* bad option or value; affinity/priority/marker/result unusable */
    WL_EXIT_CHECK = 6,    /* the workload's own result check failed; the JSON is still written */
    WL_EXIT_SYNC = 7      /* a synchronisation object could not be created or used */
};

typedef struct {
    const char *name;         /* program name for messages */
    void (*usage)(FILE *out); /* prints the workload's usage text */
    const char *affinity;
    int cpus[WL_MAX_CPUS];
    int cpu_count;
    int priority_given, priority;
    const char *marker, *result;
    FILE *result_file;
} wl_common;

void wl_init(wl_common *c, const char *name, void (*usage)(FILE *out));

/* Prints "fmt" (with up to two string arguments), then usage, and exits WL_EXIT_OPTION. */
void wl_option_error(const wl_common *c, const char *fmt, const char *a, const char *b);

/* Handles --help, --affinity, --priority, --marker and --result. Returns 1 if
 * name was one of them (its value consumed), 0 otherwise. */
int wl_common_option(wl_common *c, args_iter *it, const char *name);

/* The value of the option just returned, or an error exit if it has none. */
const char *wl_value(wl_common *c, args_iter *it, const char *name);

/* Integer option value in [lo, hi], or an error exit naming the range. */
long long wl_int_value(wl_common *c, args_iter *it, const char *name, long long lo, long long hi);

/* A value that is one of names[1..count-1] or its index; names[0] is unused.
 * Returns the index, or an error exit listing the names. */
int wl_choice_value(wl_common *c, args_iter *it, const char *name, const char *const *names, int count);

/* Applies priority and affinity (threads created later inherit them), opens
 * the result file and the trace marker; exits WL_EXIT_OPTION on failure. */
void wl_start(wl_common *c);

/* "affinity" and "priority" into the current params object. */
void wl_write_placement(const wl_common *c, json_writer *w);

/* Flushes and closes the result; returns 0, or WL_EXIT_OPTION after a message. */
int wl_finish_result(wl_common *c);

/* MSVC's rand() with per-thread state: glibc's rand() takes a process-wide
 * lock, which would add contention the seeds never had. */
#define WL_RAND_MAX 0x7fff
static inline int wl_rand(uint32_t *state)
{
    *state = *state * 214013u + 2531011u;
    return (int)((*state >> 16) & WL_RAND_MAX);
}

/* Formats n with thousands separators ("1,234,567") into buf. */
const char *wl_grouped(long long n, char *buf, size_t size);

#endif
