#include "report.h"

void report_object(json_writer *w, const char *name, pl_object_info info)
{
    json_begin_object(w, NULL);
    json_string(w, "name", name);
    json_string(w, "kind", info.kind);
    if (info.hex)
        json_hex(w, info.key, info.value);
    else
        json_int(w, info.key, (long long)info.value);
    json_end_object(w);
}

void report_times(json_writer *w, const pl_times *t)
{
    static const pl_times unavailable = { -1, -1, -1, -1 };
    if (t == NULL)
        t = &unavailable;
    json_int(w, "userNs", t->user_ns);
    json_int(w, "systemNs", t->system_ns);
    json_int(w, "voluntarySwitches", t->voluntary_switches);
    json_int(w, "involuntarySwitches", t->involuntary_switches);
}

void report_region(json_writer *w, long long begin, long long end, const pl_times *process)
{
    json_int(w, "beginNs", begin);
    json_int(w, "endNs", end);
    json_int(w, "elapsedNs", end - begin);
    json_begin_object(w, "process");
    report_times(w, process);
    json_end_object(w);
}
