#include "workload.h"

#include "platform.h"

#include <stdlib.h>
#include <string.h>

void wl_init(wl_common *c, const char *name, void (*usage)(FILE *out))
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->usage = usage;
    c->affinity = "all";
}

void wl_option_error(const wl_common *c, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    c->usage(stderr);
    exit(WL_EXIT_OPTION);
}

const char *wl_value(wl_common *c, args_iter *it, const char *name)
{
    const char *value = args_value(it);
    if (value == NULL)
        wl_option_error(c, "Option %s needs a value%s", name, "");
    return value;
}

long long wl_int_value(wl_common *c, args_iter *it, const char *name, long long lo, long long hi)
{
    const char *value = wl_value(c, it, name);
    long long n;
    if (args_parse_ll(value, &n) < 0 || n < lo || n > hi) {
        fprintf(stderr, "Option %s must be an integer between %lld and %lld: '%s'\n", name, lo, hi, value);
        c->usage(stderr);
        exit(WL_EXIT_OPTION);
    }
    return n;
}

int wl_choice_value(wl_common *c, args_iter *it, const char *name, const char *const *names, int count)
{
    const char *value = wl_value(c, it, name);
    long long n;
    for (int i = 1; i < count; i++) {
        if (strcmp(value, names[i]) == 0)
            return i;
    }
    if (args_parse_ll(value, &n) == 0 && n >= 1 && n < count)
        return (int)n;
    fprintf(stderr, "Option %s must be one of", name);
    for (int i = 1; i < count; i++)
        fprintf(stderr, "%s %s (%d)", i > 1 ? "," : "", names[i], i);
    fprintf(stderr, ": '%s'\n", value);
    c->usage(stderr);
    exit(WL_EXIT_OPTION);
}

int wl_common_option(wl_common *c, args_iter *it, const char *name)
{
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        c->usage(stdout);
        exit(0);
    }
    if (strcmp(name, "--affinity") == 0) {
        const char *value = wl_value(c, it, name);
        if (strcmp(value, "all") == 0) {
            c->cpu_count = 0;
        } else if (args_parse_cpu_list(value, c->cpus, WL_MAX_CPUS, &c->cpu_count) < 0) {
            wl_option_error(c, "Option %s must be 'all' or a CPU list such as 0,1 or 0-3: '%s'", name, value);
        }
        c->affinity = value;
        return 1;
    }
    if (strcmp(name, "--priority") == 0) {
        long long n;
        const char *value = wl_value(c, it, name);
        if (args_parse_ll(value, &n) < 0 || n < -20 || n > 19)
            wl_option_error(c, "Option %s must be a nice level between -20 and 19: '%s'", name, value);
        c->priority_given = 1;
        c->priority = (int)n;
        return 1;
    }
    if (strcmp(name, "--marker") == 0) {
        c->marker = wl_value(c, it, name);
        return 1;
    }
    if (strcmp(name, "--result") == 0) {
        c->result = wl_value(c, it, name);
        return 1;
    }
    return 0;
}

void wl_start(wl_common *c)
{
    if (c->priority_given && pl_set_priority(c->priority) < 0) {
        fprintf(stderr, "Cannot set priority %d: %s\n", c->priority, pl_last_error_text());
        exit(WL_EXIT_OPTION);
    }
    if (c->cpu_count > 0 && pl_set_affinity(c->cpus, c->cpu_count) < 0) {
        fprintf(stderr, "Cannot set affinity '%s': %s\n", c->affinity, pl_last_error_text());
        exit(WL_EXIT_OPTION);
    }
    /* Fail on an unusable path before spending the run, not after. */
    c->result_file = stdout;
    if (c->result != NULL && (c->result_file = fopen(c->result, "w")) == NULL) {
        fprintf(stderr, "Cannot open result file '%s'\n", c->result);
        exit(WL_EXIT_OPTION);
    }
    if (pl_marker_open(c->marker) < 0) {
        fprintf(stderr, "Cannot open trace marker '%s': %s\n",
                c->marker != NULL ? c->marker : "(ETW provider)", pl_last_error_text());
        exit(WL_EXIT_OPTION);
    }
}

void wl_write_placement(const wl_common *c, json_writer *w)
{
    json_string(w, "affinity", c->affinity);
    json_int(w, "priority", c->priority_given ? c->priority : pl_get_priority());
}

int wl_finish_result(wl_common *c)
{
    FILE *f = c->result_file != NULL ? c->result_file : stdout;
    int failed = fflush(f) != 0 || (f != stdout && fclose(f) != 0);
    c->result_file = NULL;
    if (failed) {
        fprintf(stderr, "Cannot write result file '%s'\n", c->result != NULL ? c->result : "(stdout)");
        return WL_EXIT_OPTION;
    }
    return 0;
}

const char *wl_grouped(long long n, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%lld", n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < size)
        buf[o++] = '-';
    for (int i = 0; i < len && o + 1 < size; i++) {
        buf[o++] = digits[i];
        int left = len - i - 1;
        if (left > 0 && left % 3 == 0 && o + 1 < size)
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}
