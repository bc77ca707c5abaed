/*
 * Throttle: port of the "Semaphore throttle" test (seed 001). N CPU-bound
 * threads each sum a slice of 1 + 2 + ... + threads*chunk, `repeat` times over;
 * a counting semaphore (the throttle) optionally limits how many run at once.
 *
 *   throttle [options] [active]
 *
 * The seed ran 64 threads with CHUNK = 30000000 and repeated each partial sum
 * 20 times, compiled without optimisation ({$O-}); the loop variables here are
 * volatile so -O2 keeps the same memory traffic and cannot fold the loop.
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

#define MAX_THREADS 1024

typedef struct {
    int threads, active;
    long long chunk, repeat;
    int miscount;   /* --miscount: test hook, thread 0 skips its first term */
} config;

typedef struct {
    int index;
    long tid;
    long long base, count;
    long long sum;
    int times_ok;
    pl_times times;
} worker;

static wl_common common;
static config cfg;
static pl_gate throttle_sem;

static void usage(FILE *out)
{
    fputs("Usage: throttle [options] [active]\n"
          "  Sums 1 + 2 + ... + threads*chunk on `threads` CPU-bound threads; a semaphore\n"
          "  with `active` slots limits how many run at once (0 = no semaphore).\n"
          "Options:\n"
          "  --threads N       1..1024 (default 64)\n"
          "  --active N        0..1024 semaphore slots, 0 = no semaphore (default 0; also the positional argument)\n"
          "  --chunk N         terms per thread (default 30000000, the seed's CHUNK)\n"
          "  --repeat N        times each thread recomputes its partial sum (default 20)\n"
          "  --affinity LIST   all, or CPUs such as 0 / 0,1 / 0-3 (default all)\n"
          "  --priority NICE   -20..19, applied before threads start (default unchanged)\n"
          "  --miscount        test hook: thread 0 skips its first term, so the sum check must fail\n"
          "  --marker PATH     tracefs trace_marker to annotate the measured region\n"
          "  --result PATH     write the JSON result there instead of stdout\n"
          "  --help            show this text\n",
          out);
}

static void parse_arguments(int argc, char **argv)
{
    args_iter it;
    const char *text;
    int kind, npos = 0;

    wl_init(&common, "throttle", usage);
    cfg.threads = 64;
    cfg.active = 0;
    cfg.chunk = 30000000;
    cfg.repeat = 20;
    args_init(&it, argc, argv);
    while ((kind = args_next(&it, &text)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL) {
            long long n;
            /* The seed's only argument: the number of concurrent threads. */
            if (npos++ > 0)
                wl_option_error(&common, "Too many arguments: '%s'%s", text, "");
            if (args_parse_ll(text, &n) < 0 || n < 0 || n > MAX_THREADS)
                wl_option_error(&common, "Invalid number of concurrent threads: '%s' (0..1024)%s", text, "");
            cfg.active = (int)n;
        } else if (wl_common_option(&common, &it, text)) {
        } else if (strcmp(text, "--miscount") == 0) {
            cfg.miscount = 1;
        } else if (strcmp(text, "--threads") == 0) {
            cfg.threads = (int)wl_int_value(&common, &it, text, 1, MAX_THREADS);
        } else if (strcmp(text, "--active") == 0) {
            cfg.active = (int)wl_int_value(&common, &it, text, 0, MAX_THREADS);
        } else if (strcmp(text, "--chunk") == 0) {
            cfg.chunk = wl_int_value(&common, &it, text, 1, 4000000000LL);
        } else if (strcmp(text, "--repeat") == 0) {
            cfg.repeat = wl_int_value(&common, &it, text, 1, 1000000);
        } else {
            wl_option_error(&common, "Unknown option '%s'%s", text, "");
        }
    }
    /* n(n+1)/2 must fit in a signed 64-bit sum, as it did for the seed's 64 x 30000000. */
    unsigned __int128 n = (unsigned __int128)cfg.threads * (unsigned long long)cfg.chunk;
    if (n * (n + 1) / 2 > (unsigned __int128)INT64_MAX) {
        fprintf(stderr, "threads x chunk is too large: the sum 1 + ... + %lld overflows 64 bits\n",
                (long long)cfg.threads * cfg.chunk);
        exit(WL_EXIT_OPTION);
    }
}

/* A failed synchronisation call leaves the run meaningless: report once, exit. */
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

static void worker_main(void *arg)
{
    worker *w = arg;
    w->tid = pl_current_tid();
    if (cfg.active > 0 && pl_gate_wait(&throttle_sem) < 0)
        fatal(WL_EXIT_SYNC, "WaitForSingleObject(semaphore)");
    /* volatile stands in for the seed's {$O-}: every step loads and stores. */
    volatile long long s, value, cnt;
    for (long long j = cfg.repeat; j > 0; j--) {
        value = w->base;
        cnt = w->count;
        s = 0;
        do {
            s = s + value;
            value = value + 1;
            cnt = cnt - 1;
        } while (cnt != 0);
        w->sum = s;
    }
    if (cfg.active > 0 && pl_gate_post(&throttle_sem) < 0)
        fatal(WL_EXIT_SYNC, "ReleaseSemaphore");
    w->times_ok = pl_thread_times(&w->times) == 0;
}

static void write_result(const worker *workers, int64_t begin, int64_t end, const pl_times *process,
                         long long sum, long long expected)
{
    json_writer w;
    json_init(&w, common.result_file);
    json_begin_object(&w, NULL);
    json_string(&w, "workload", "throttle");
    json_int(&w, "pid", pl_current_pid());
    json_begin_object(&w, "params");
    json_int(&w, "threads", cfg.threads);
    json_int(&w, "active", cfg.active);
    json_int(&w, "chunk", cfg.chunk);
    json_int(&w, "repeat", cfg.repeat);
    wl_write_placement(&common, &w);
    json_end_object(&w);

    json_begin_array(&w, "objects");
    if (cfg.active > 0)
        report_object(&w, "throttle", pl_gate_info(&throttle_sem));
    json_end_array(&w);
    report_region(&w, begin, end, process);

    json_begin_object(&w, "metrics");
    json_int(&w, "sum", sum);
    json_int(&w, "expectedSum", expected);
    json_int(&w, "sumOk", sum == expected);
    json_int(&w, "activeLimit", cfg.active);
    json_double(&w, "elapsedSeconds", (double)(end - begin) / 1e9);
    json_end_object(&w);

    json_begin_array(&w, "threads");
    for (int i = 0; i < cfg.threads; i++) {
        const worker *t = &workers[i];
        json_begin_object(&w, NULL);
        json_int(&w, "index", t->index);
        json_int(&w, "tid", t->tid);
        report_times(&w, t->times_ok ? &t->times : NULL);
        json_int(&w, "iterations", t->count * cfg.repeat);
        json_int(&w, "partialSum", t->sum);
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

    if (cfg.active > 0 && pl_gate_init(&throttle_sem, (unsigned)cfg.active) < 0) {
        fprintf(stderr, "Cannot create the semaphore: %s\n", pl_last_error_text());
        return WL_EXIT_SYNC;
    }
    worker *workers = calloc((size_t)cfg.threads, sizeof *workers);
    pl_thread *threads = calloc((size_t)cfg.threads, sizeof *threads);
    if (workers == NULL || threads == NULL) {
        fprintf(stderr, "Cannot allocate memory for %d threads\n", cfg.threads);
        return WL_EXIT_ALLOC;
    }
    for (int i = 0; i < cfg.threads; i++) {
        workers[i].index = i;
        workers[i].base = 1 + (long long)i * cfg.chunk;
        workers[i].count = cfg.chunk;
    }
    if (cfg.miscount && cfg.chunk > 1) {
        workers[0].base++;
        workers[0].count--;
    }

    pl_marker_write("TRACELAB_REGION_BEGIN");
    int64_t begin = pl_monotonic_ns();
    for (int i = 0; i < cfg.threads; i++) {
        if (pl_thread_create(&threads[i], worker_main, &workers[i]) < 0) {
            fprintf(stderr, "Error creating thread %d: %s\n", i, pl_last_error_text());
            fflush(NULL);
            _Exit(WL_EXIT_THREAD);
        }
    }
    for (int i = 0; i < cfg.threads; i++) {
        if (pl_thread_join(&threads[i]) < 0)
            fatal(WL_EXIT_SYNC, "Thread join");
    }
    int64_t end = pl_monotonic_ns();
    pl_marker_write("TRACELAB_REGION_END");
    pl_marker_close();

    pl_times process;
    int process_ok = pl_process_times(&process) == 0;
    long long sum = 0;
    for (int i = 0; i < cfg.threads; i++)
        sum += workers[i].sum;
    long long n = (long long)cfg.threads * cfg.chunk;
    long long expected = n % 2 == 0 ? (n / 2) * (n + 1) : n * ((n + 1) / 2);

    /* The seed's one line: concurrent-thread limit and seconds. */
    printf("%5d -- %.2f\n", cfg.active, (double)(end - begin) / 1e9);
    fflush(stdout);

    write_result(workers, begin, end, process_ok ? &process : NULL, sum, expected);
    int rc = wl_finish_result(&common);
    if (cfg.active > 0)
        pl_gate_destroy(&throttle_sem);
    free(threads);
    free(workers);
    if (rc != 0)
        return rc;
    if (sum != expected) {
        fprintf(stderr, "Sum check failed: sum %lld != expected %lld\n", sum, expected);
        return WL_EXIT_CHECK;
    }
    return 0;
}
