/*
 * Command-line helpers shared by the workloads: strict integer parsing, CPU
 * lists, and an iterator that separates options from positional arguments.
 */
#ifndef TRACELAB_ARGS_H
#define TRACELAB_ARGS_H

/* Base-10 integer with optional sign, whole string, no overflow.
 * Returns 0 on success, -1 otherwise (atoi would silently yield 0). */
int args_parse_ll(const char *text, long long *out);

/* "0", "0,1", "0-3", "0-1,6": fills cpus (in the order written, without
 * duplicates) and *count. Returns 0 on success, -1 on syntax error or overflow. */
int args_parse_cpu_list(const char *text, int *cpus, int max, int *count);

enum { ARGS_END, ARGS_OPTION, ARGS_POSITIONAL };

typedef struct {
    int argc;
    char **argv;
    int index;
    int options_done;      /* set after "--" */
    const char *inline_value;
    char name[64];
} args_iter;

void args_init(args_iter *it, int argc, char **argv);

/* Returns ARGS_END, ARGS_OPTION (*text = option name such as "--iterations",
 * without any "=value") or ARGS_POSITIONAL (*text = the argument). Options may
 * appear anywhere; a dash followed by a digit is a (negative) positional so
 * range errors get their own message instead of "unknown option". */
int args_next(args_iter *it, const char **text);

/* The value of the option just returned: "--name=value" or the next argument.
 * NULL if there is none. */
const char *args_value(args_iter *it);

#endif
