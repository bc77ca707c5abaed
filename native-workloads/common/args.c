#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int args_parse_ll(const char *text, long long *out)
{
    char *end;
    if (text == NULL || *text == '\0' || isspace((unsigned char)*text))
        return -1;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static int parse_cpu(const char **p, int *out)
{
    if (!isdigit((unsigned char)**p))
        return -1;
    long v = 0;
    while (isdigit((unsigned char)**p)) {
        v = v * 10 + (**p - '0');
        if (v > 1000000)
            return -1;
        (*p)++;
    }
    *out = (int)v;
    return 0;
}

static int add_cpu(int cpu, int *cpus, int max, int *count)
{
    for (int i = 0; i < *count; i++) {
        if (cpus[i] == cpu)
            return 0;
    }
    if (*count >= max)
        return -1;
    cpus[(*count)++] = cpu;
    return 0;
}

int args_parse_cpu_list(const char *text, int *cpus, int max, int *count)
{
    const char *p = text;
    *count = 0;
    for (;;) {
        int lo, hi;
        if (parse_cpu(&p, &lo) < 0)
            return -1;
        hi = lo;
        if (*p == '-') {
            p++;
            if (parse_cpu(&p, &hi) < 0 || hi < lo)
                return -1;
        }
        for (int c = lo; c <= hi; c++) {
            if (add_cpu(c, cpus, max, count) < 0)
                return -1;
        }
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return -1;
        p++;
    }
}

void args_init(args_iter *it, int argc, char **argv)
{
    memset(it, 0, sizeof *it);
    it->argc = argc;
    it->argv = argv;
    it->index = 1;
}

int args_next(args_iter *it, const char **text)
{
    it->inline_value = NULL;
    if (it->index >= it->argc)
        return ARGS_END;
    const char *arg = it->argv[it->index++];
    if (!it->options_done && strcmp(arg, "--") == 0) {
        it->options_done = 1;
        return args_next(it, text);
    }
    if (it->options_done || arg[0] != '-' || isdigit((unsigned char)arg[1])) {
        *text = arg;
        return ARGS_POSITIONAL;
    }
    const char *eq = strchr(arg, '=');
    size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
    if (len >= sizeof it->name)
        len = sizeof it->name - 1;
    memcpy(it->name, arg, len);
    it->name[len] = '\0';
    if (eq != NULL)
        it->inline_value = eq + 1;
    *text = it->name;
    return ARGS_OPTION;
}

const char *args_value(args_iter *it)
{
    if (it->inline_value != NULL)
        return it->inline_value;
    if (it->index >= it->argc)
        return NULL;
    return it->argv[it->index++];
}
