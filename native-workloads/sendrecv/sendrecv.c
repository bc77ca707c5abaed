/*
 * SendRecv: port of "Thread synchronization and context switches" (seed 003).
 * Sender threads publish work to one receiver through a shared value and an
 * auto-reset "available" event; the variant decides where the lock is:
 *
 *   1 event-inside-lock   sender: lock, add, SetEvent, unlock          (SR1)
 *   2 event-outside-lock  sender: lock, add, unlock, SetEvent          (SR2)
 *   3 lock-free           sender: interlocked add, SetEvent;
 *                         receiver: interlocked exchange               (SR3)
 *   4 receiver-only-lock  as 3, but the receiver takes its value inside
 *                         the (never contended) lock                   (SR4)
 *
 * The receiver waits for {stop, available} (WaitForMultipleObjects), then
 * takes everything published so far. Senders poll the stop event with a zero
 * timeout each iteration, as the seed's threads do. The seed's source is not
 * part of the seed text; this follows its prose (see README.md).
 */
#include "args.h"
#include "json.h"
#include "platform.h"
#include "report.h"
#include "workload.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SENDERS 16
#define SEND_DELAY_MASK 63   /* a sender spins 0..63 steps between sends: the seed's "random delays" */

enum { EVENT_INSIDE_LOCK = 1, EVENT_OUTSIDE_LOCK, LOCK_FREE, RECEIVER_ONLY_LOCK, VARIANT_COUNT };
static const char *const variant_names[] = {
    "", "event-inside-lock", "event-outside-lock", "lock-free", "receiver-only-lock"
};

typedef struct {
    int variant, senders;
    long long duration_ms;
} config;

typedef struct {
    int index;
    const char *role;
    long tid;
    long long iterations;
    long long consumed;    /* receiver: items taken */
    int times_ok;
    pl_times times;
} worker;

static wl_common common;
static config cfg;
static pl_cs lock;
static pl_event available;
static pl_stop stop;
/* The shared data: items published and not yet taken. Plain loads and stores
 * under the lock (variants 1, 2); interlocked operations otherwise. */
static atomic_llong pending;

static void usage(FILE *out)
{
    fputs("Usage: sendrecv [options]\n"
          "  Sender threads publish to one receiver through a lock and an auto-reset event.\n"
          "Options:\n"
          "  --variant V       1 event-inside-lock, 2 event-outside-lock, 3 lock-free,\n"
          "                    4 receiver-only-lock (default 1)\n"
          "  --senders N       1..16 sender threads (default 3)\n"
          "  --duration-ms N   how long to run, 1..3600000 (default 5000; the seed ran 60000)\n"
          "  --affinity LIST   all, or CPUs such as 0 / 0,1 / 0-3 (default all)\n"
          "  --priority NICE   -20..19, applied before threads start (default unchanged)\n"
          "  --marker PATH     tracefs trace_marker to annotate the measured region\n"
          "  --result PATH     write the JSON result there instead of stdout\n"
          "  --help            show this text\n",
          out);
}

static void parse_arguments(int argc, char **argv)
{
    args_iter it;
    const char *text;
    int kind;

    wl_init(&common, "sendrecv", usage);
    cfg.variant = EVENT_INSIDE_LOCK;
    cfg.senders = 3;
    cfg.duration_ms = 5000;
    args_init(&it, argc, argv);
    while ((kind = args_next(&it, &text)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL)
            wl_option_error(&common, "Unexpected argument '%s'%s", text, "");
        else if (wl_common_option(&common, &it, text)) {
        } else if (strcmp(text, "--variant") == 0) {
            cfg.variant = wl_choice_value(&common, &it, text, variant_names, VARIANT_COUNT);
        } else if (strcmp(text, "--senders") == 0) {
            cfg.senders = (int)wl_int_value(&common, &it, text, 1, MAX_SENDERS);
        } else if (strcmp(text, "--duration-ms") == 0) {
            cfg.duration_ms = wl_int_value(&common, &it, text, 1, 3600000);
        } else {
            wl_option_error(&common, "Unknown option '%s'%s", text, "");
        }
    }
}

static void fatal(int code, const char *what)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&once)) {
        fprintf(stderr, "%s failed: %s\n", what, pl_last_error_text());
        fflush(NULL);
        _Exit(code);
    }
    for (;;)
        pl_yield();
}

static void enter(void)
{
    if (pl_cs_enter(&lock) < 0)
        fatal(WL_EXIT_SYNC, "EnterCriticalSection");
}

static void set_available(void)
{
    if (pl_event_set(&available) < 0)
        fatal(WL_EXIT_SYNC, "SetEvent");
}

static int stopped(void)
{
    int rc = pl_stop_is_set(&stop);
    if (rc < 0)
        fatal(WL_EXIT_SYNC, "WaitForSingleObject(stop, 0)");
    return rc;
}

static void sender_main(void *arg)
{
    worker *w = arg;
    uint32_t rng = (uint32_t)pl_monotonic_ns() ^ ((uint32_t)(w->index + 1) * 2654435761u);
    long long n = 0;
    w->tid = pl_current_tid();
    while (!stopped()) {
        switch (cfg.variant) {
        case EVENT_INSIDE_LOCK:
            enter();
            atomic_store_explicit(&pending, atomic_load_explicit(&pending, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            set_available();   /* the receiver wakes while the lock is still held */
            pl_cs_leave(&lock);
            break;
        case EVENT_OUTSIDE_LOCK:
            enter();
            atomic_store_explicit(&pending, atomic_load_explicit(&pending, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            pl_cs_leave(&lock);
            set_available();
            break;
        default:
            atomic_fetch_add(&pending, 1);
            set_available();
            break;
        }
        n++;
        /* Small random delay; volatile so -O2 keeps it. */
        volatile int spin = wl_rand(&rng) & SEND_DELAY_MASK;
        while (spin > 0)
            spin = spin - 1;
    }
    w->iterations = n;
    w->times_ok = pl_thread_times(&w->times) == 0;
}

static void receiver_main(void *arg)
{
    worker *w = arg;
    long long n = 0, consumed = 0;
    int rc;
    w->tid = pl_current_tid();
    while ((rc = pl_wait_event_or_stop(&available, &stop)) == 0) {
        long long taken;
        switch (cfg.variant) {
        case EVENT_INSIDE_LOCK:
        case EVENT_OUTSIDE_LOCK:
            enter();
            taken = atomic_load_explicit(&pending, memory_order_relaxed);
            atomic_store_explicit(&pending, 0, memory_order_relaxed);
            pl_cs_leave(&lock);
            break;
        case RECEIVER_ONLY_LOCK:
            enter();   /* only this thread ever takes the lock */
            taken = atomic_exchange(&pending, 0);
            pl_cs_leave(&lock);
            break;
        default:
            taken = atomic_exchange(&pending, 0);
            break;
        }
        consumed += taken;
        n++;
    }
    if (rc < 0)
        fatal(WL_EXIT_SYNC, "WaitForMultipleObjects");
    w->iterations = n;
    w->consumed = consumed;
    w->times_ok = pl_thread_times(&w->times) == 0;
}

static long long switches(const pl_times *t)
{
    return t->voluntary_switches < 0 ? -1 : t->voluntary_switches + t->involuntary_switches;
}

static void print_times(const char *label, const pl_times *t, int with_switches)
{
    char u[32], k[32], s[32];
    printf("%-20s User %10s ms, Kernel %10s ms", label, wl_grouped(t->user_ns / 1000000, u, sizeof u),
           wl_grouped(t->system_ns / 1000000, k, sizeof k));
    if (with_switches) {
        long long n = switches(t);
        if (n < 0)
            printf(", Context Switches %15s", "n/a");
        else
            printf(", Context Switches %15s", wl_grouped(n, s, sizeof s));
    }
    putchar('\n');
}

/* The seed's table: counts, process times, then one line per thread. */
static void print_table(const worker *workers, const pl_times *process, long long sends)
{
    char a[32];
    const worker *receiver = &workers[cfg.senders];
    printf("Send Count:        %15s  (sender 0; all senders %s)\n",
           wl_grouped(workers[0].iterations, a, sizeof a), wl_grouped(sends, (char[32]){ 0 }, 32));
    printf("Receive Count:     %15s\n\n", wl_grouped(receiver->iterations, a, sizeof a));
    if (process != NULL)
        print_times("Process Time:", process, 0);
    for (int i = 0; i < cfg.senders; i++) {
        char label[32];
        snprintf(label, sizeof label, "Send Thread %d Time:", i);
        if (workers[i].times_ok)
            print_times(label, &workers[i].times, 1);
    }
    if (receiver->times_ok)
        print_times("Receive Thread Time:", &receiver->times, 1);
    fflush(stdout);
}

static void write_result(const worker *workers, int64_t begin, int64_t end, const pl_times *process,
                         long long sends, long long consumed, long long left)
{
    const worker *receiver = &workers[cfg.senders];
    json_writer w;
    json_init(&w, common.result_file);
    json_begin_object(&w, NULL);
    json_string(&w, "workload", "sendrecv");
    json_int(&w, "pid", pl_current_pid());
    json_begin_object(&w, "params");
    json_int(&w, "variant", cfg.variant);
    json_string(&w, "variantName", variant_names[cfg.variant]);
    json_int(&w, "senders", cfg.senders);
    json_int(&w, "durationMs", cfg.duration_ms);
    wl_write_placement(&common, &w);
    json_end_object(&w);

    json_begin_array(&w, "objects");
    if (cfg.variant != LOCK_FREE)
        report_object(&w, "lock", pl_cs_info(&lock));
    report_object(&w, "available", pl_event_info(&available));
    report_object(&w, "stop", pl_stop_info(&stop));
    json_end_array(&w);
    report_region(&w, begin, end, process);

    long long sender_switches = 0;
    for (int i = 0; i < cfg.senders; i++)
        sender_switches += workers[i].times_ok && switches(&workers[i].times) >= 0 ? switches(&workers[i].times) : 0;
    json_begin_object(&w, "metrics");
    json_int(&w, "sendCount", sends);
    json_int(&w, "sendCount0", workers[0].iterations);
    json_int(&w, "receiveCount", receiver->iterations);
    json_int(&w, "itemsConsumed", consumed);
    json_int(&w, "itemsLeft", left);
    json_double(&w, "itemsPerReceive",
                receiver->iterations > 0 ? (double)consumed / (double)receiver->iterations : 0.0);
    json_int(&w, "senderContextSwitches", sender_switches);
    json_int(&w, "receiverContextSwitches", receiver->times_ok ? switches(&receiver->times) : -1);
    json_end_object(&w);

    json_begin_array(&w, "threads");
    for (int i = 0; i <= cfg.senders; i++) {
        const worker *t = &workers[i];
        json_begin_object(&w, NULL);
        json_int(&w, "index", t->index);
        json_int(&w, "tid", t->tid);
        json_string(&w, "role", t->role);
        report_times(&w, t->times_ok ? &t->times : NULL);
        json_int(&w, "iterations", t->iterations);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    fputc('\n', common.result_file);
}

int main(int argc, char **argv)
{
    parse_arguments(argc, argv);
    wl_start(&common);

    if (pl_cs_init(&lock) < 0 || pl_event_init(&available, 0) < 0 || pl_stop_init(&stop) < 0) {
        fprintf(stderr, "Cannot create the synchronisation objects: %s\n", pl_last_error_text());
        return WL_EXIT_SYNC;
    }
    int nthreads = cfg.senders + 1;
    worker *workers = calloc((size_t)nthreads, sizeof *workers);
    pl_thread *threads = calloc((size_t)nthreads, sizeof *threads);
    char(*roles)[24] = calloc((size_t)nthreads, sizeof *roles);
    if (workers == NULL || threads == NULL || roles == NULL) {
        fprintf(stderr, "Cannot allocate memory for %d threads\n", nthreads);
        return WL_EXIT_ALLOC;
    }
    for (int i = 0; i < nthreads; i++) {
        workers[i].index = i;
        if (i < cfg.senders)
            snprintf(roles[i], sizeof roles[i], "sender %d", i);
        else
            snprintf(roles[i], sizeof roles[i], "receiver");
        workers[i].role = roles[i];
    }

    printf("Variant = %s, Senders = %d, Duration = %lld ms\n", variant_names[cfg.variant], cfg.senders,
           cfg.duration_ms);
    fflush(stdout);

    pl_marker_write("TRACELAB_REGION_BEGIN");
    int64_t begin = pl_monotonic_ns();
    for (int i = 0; i < nthreads; i++) {
        if (pl_thread_create(&threads[i], i < cfg.senders ? sender_main : receiver_main, &workers[i]) < 0) {
            fprintf(stderr, "Error creating thread %d: %s\n", i, pl_last_error_text());
            fflush(NULL);
            _Exit(WL_EXIT_THREAD);
        }
    }
    pl_sleep_ms((int)cfg.duration_ms);
    if (pl_stop_set(&stop) < 0)
        fatal(WL_EXIT_SYNC, "SetEvent(stop)");
    for (int i = 0; i < nthreads; i++) {
        if (pl_thread_join(&threads[i]) < 0)
            fatal(WL_EXIT_SYNC, "Thread join");
    }
    int64_t end = pl_monotonic_ns();
    pl_marker_write("TRACELAB_REGION_END");
    pl_marker_close();

    pl_times process;
    int process_ok = pl_process_times(&process) == 0;
    long long sends = 0;
    for (int i = 0; i < cfg.senders; i++)
        sends += workers[i].iterations;
    long long consumed = workers[cfg.senders].consumed;
    long long left = atomic_load(&pending);

    print_table(workers, process_ok ? &process : NULL, sends);
    write_result(workers, begin, end, process_ok ? &process : NULL, sends, consumed, left);
    int rc = wl_finish_result(&common);
    pl_stop_destroy(&stop);
    pl_event_destroy(&available);
    pl_cs_destroy(&lock);
    free(roles);
    free(threads);
    free(workers);
    if (rc != 0)
        return rc;
    /* Every item published was taken or is still pending: nothing was lost. */
    if (consumed + left != sends) {
        fprintf(stderr, "Item check failed: consumed %lld + left %lld != sent %lld\n", consumed, left, sends);
        return WL_EXIT_CHECK;
    }
    return 0;
}
