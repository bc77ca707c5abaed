/*
 * ThrdPerf: port of R. R. Asche's THRDPERF test (seed 004). A set of
 * independent computations of lengths bias, 2*bias, ..., n*bias ms runs
 * either serially (DoSerial: one after another in one thread) or
 * concurrently (DoForAllObjects: one thread per computation, at most
 * max-concurrency running). Computations are CPU-bound (a calibrated empty
 * loop) or I/O-bound (Sleep). For each one the test records when it started
 * and when its terminator ran, and its response ratio: time from the start of
 * the test to its termination, divided by its length.
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

#define MAX_COMPUTATIONS 20
#define CALIBRATION_RUNS 100
#define CALIBRATION_LOOP 100000

enum { KIND_CPU = 1, KIND_IO, KIND_COUNT };
enum { MODE_SERIAL = 1, MODE_CONCURRENT, MODE_COUNT };
enum { ORDER_DESCENDING = 1, ORDER_ASCENDING, ORDER_COUNT };
static const char *const kind_names[] = { "", "cpu", "io" };
static const char *const mode_names[] = { "", "serial", "concurrent" };
static const char *const order_names[] = { "", "descending", "ascending" };

typedef struct {
    int kind, mode, order, computations, max_concurrency;
    long long bias_ms;
} config;

/* The seed's THREADBLOCKSTRUCT plus the thread's own times. */
typedef struct {
    int index;               /* position in the object array = start order */
    long long length_ms;     /* iDelay */
    long tid;
    int64_t start_ns;        /* liStart: the processor started */
    int64_t finish_ns;       /* liFinish: the terminator ran */
    int end_order;           /* iEndOrder */
    atomic_int done;         /* the processor returned (concurrent mode) */
    int terminated;
    pl_gate resume;          /* stands in for CREATE_SUSPENDED / ResumeThread */
    int times_ok;
    pl_times times;
} computation;

static wl_common common;
static config cfg;
static computation comps[MAX_COMPUTATIONS];
static double loops_per_ms;  /* m_iBiasFactor / 1000 */
static pl_sem finished;      /* one unit per processor that returned */
static int end_index;        /* iEndIndex */

static void usage(FILE *out)
{
    fputs("Usage: thrdperf [options]\n"
          "  Runs computations of length bias, 2*bias, ..., n*bias ms serially or concurrently.\n"
          "Options:\n"
          "  --kind K              cpu (calibrated busy loop) or io (Sleep) (default cpu)\n"
          "  --mode M              serial or concurrent (default serial)\n"
          "  --computations N      2..20 (default 5)\n"
          "  --bias MS             delay bias: computation k lasts k*bias ms, 1..100000 (default 10)\n"
          "  --order O             descending (the seed's worst case, longest first) or ascending\n"
          "                        (default descending)\n"
          "  --max-concurrency N   computations running at once when concurrent, 0 = all (default 0)\n"
          "  --affinity LIST       all, or CPUs such as 0 / 0,1 / 0-3 (default all)\n"
          "  --priority NICE       -20..19, applied before threads start (default unchanged)\n"
          "  --marker PATH         tracefs trace_marker to annotate the measured region\n"
          "  --result PATH         write the JSON result there instead of stdout\n"
          "  --help                show this text\n",
          out);
}

static void parse_arguments(int argc, char **argv)
{
    args_iter it;
    const char *text;
    int kind;

    wl_init(&common, "thrdperf", usage);
    cfg.kind = KIND_CPU;
    cfg.mode = MODE_SERIAL;
    cfg.order = ORDER_DESCENDING;
    cfg.computations = 5;
    cfg.bias_ms = 10;
    cfg.max_concurrency = 0;
    args_init(&it, argc, argv);
    while ((kind = args_next(&it, &text)) != ARGS_END) {
        if (kind == ARGS_POSITIONAL)
            wl_option_error(&common, "Unexpected argument '%s'%s", text, "");
        else if (wl_common_option(&common, &it, text)) {
        } else if (strcmp(text, "--kind") == 0) {
            cfg.kind = wl_choice_value(&common, &it, text, kind_names, KIND_COUNT);
        } else if (strcmp(text, "--mode") == 0) {
            cfg.mode = wl_choice_value(&common, &it, text, mode_names, MODE_COUNT);
        } else if (strcmp(text, "--order") == 0) {
            cfg.order = wl_choice_value(&common, &it, text, order_names, ORDER_COUNT);
        } else if (strcmp(text, "--computations") == 0) {
            cfg.computations = (int)wl_int_value(&common, &it, text, 2, MAX_COMPUTATIONS);
        } else if (strcmp(text, "--bias") == 0) {
            cfg.bias_ms = wl_int_value(&common, &it, text, 1, 100000);
        } else if (strcmp(text, "--max-concurrency") == 0) {
            cfg.max_concurrency = (int)wl_int_value(&common, &it, text, 0, MAX_COMPUTATIONS);
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

/* The seed's empty for loop; a volatile counter keeps -O2 from deleting it
 * (the seed's own warning about "Minimize execution time"). */
static void busy_loop(long long count)
{
    for (volatile long long i = 0; i < count; i = i + 1) {
    }
}

/* OnCreate's bias factor: time 100 runs of a 100,000-step loop. The median
 * run, not the mean, so one preemption on a shared machine does not skew it. */
static int compare_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void calibrate(void)
{
    long long ns[CALIBRATION_RUNS];
    for (int r = 0; r < CALIBRATION_RUNS; r++) {
        int64_t t0 = pl_monotonic_ns();
        busy_loop(CALIBRATION_LOOP);
        ns[r] = pl_monotonic_ns() - t0;
    }
    qsort(ns, CALIBRATION_RUNS, sizeof ns[0], compare_ll);
    long long median = ns[CALIBRATION_RUNS / 2] > 0 ? ns[CALIBRATION_RUNS / 2] : 1;
    loops_per_ms = (double)CALIBRATION_LOOP * 1e6 / (double)median;
}

/* pProcessor */
static void process(computation *c)
{
    c->tid = pl_current_tid();
    if (cfg.kind == KIND_CPU) {
        long long loops = (long long)((double)c->length_ms * loops_per_ms);
        c->start_ns = pl_monotonic_ns();
        busy_loop(loops);
    } else {
        c->start_ns = pl_monotonic_ns();
        pl_sleep_ms((int)c->length_ms);
    }
}

/* pTerminator: runs in the thread that drives the test. */
static void terminate(computation *c)
{
    c->finish_ns = pl_monotonic_ns();
    c->end_order = end_index++;
    c->terminated = 1;
}

static void serial_main(void *arg)
{
    (void)arg;
    /* DoSerial: processor then terminator, object by object. */
    for (int i = 0; i < cfg.computations; i++) {
        process(&comps[i]);
        terminate(&comps[i]);
    }
    comps[0].times_ok = pl_thread_times(&comps[0].times) == 0;
}

static void concurrent_main(void *arg)
{
    computation *c = arg;
    if (pl_gate_wait(&c->resume) < 0)
        fatal(WL_EXIT_SYNC, "Wait for resume");
    process(c);
    c->times_ok = pl_thread_times(&c->times) == 0;
    atomic_store(&c->done, 1);
    if (pl_sem_post(&finished) < 0)
        fatal(WL_EXIT_SYNC, "Signal completion");
}

/* Terminates one computation that has finished; blocks for one if wait. Returns 0 if none. */
static int reap(int wait)
{
    int got = wait ? pl_sem_wait(&finished) : pl_sem_trywait(&finished);
    if (got < 0)
        fatal(WL_EXIT_SYNC, "Wait for a finished computation");
    if (!wait && got == 0)
        return 0;
    for (int i = 0; i < cfg.computations; i++) {
        if (atomic_load(&comps[i].done) && !comps[i].terminated) {
            terminate(&comps[i]);
            return 1;
        }
    }
    return 1;
}

/* DoForAllObjects: all threads created suspended, then resumed one slot at a
 * time; a slot is recycled (its terminator run first) as soon as one frees. */
static int run_concurrent(pl_thread *threads)
{
    int max = cfg.max_concurrency > 0 ? cfg.max_concurrency : cfg.computations;
    int running = 0, peak = 0;
    for (int i = 0; i < cfg.computations; i++) {
        if (pl_thread_create(&threads[i], concurrent_main, &comps[i]) < 0) {
            fprintf(stderr, "Error creating thread %d: %s\n", i, pl_last_error_text());
            fflush(NULL);
            _Exit(WL_EXIT_THREAD);
        }
    }
    for (int i = 0; i < cfg.computations; i++) {
        if (running > 0) {
            if (reap(0))
                running--;
            else if (running >= max) {
                reap(1);
                running--;
            }
        }
        if (pl_gate_post(&comps[i].resume) < 0)
            fatal(WL_EXIT_SYNC, "ResumeThread");
        running++;
        if (running > peak)
            peak = running;
    }
    while (running > 0) {
        reap(1);
        running--;
    }
    for (int i = 0; i < cfg.computations; i++) {
        if (pl_thread_join(&threads[i]) < 0)
            fatal(WL_EXIT_SYNC, "Thread join");
    }
    return peak;
}

static void write_result(int64_t begin, int64_t end, const pl_times *process_times, int threads_used,
                         double elapsed_ms, double avg_response, long long ideal_ms)
{
    json_writer w;
    json_init(&w, common.result_file);
    json_begin_object(&w, NULL);
    json_string(&w, "workload", "thrdperf");
    json_int(&w, "pid", pl_current_pid());
    json_begin_object(&w, "params");
    json_string(&w, "kind", kind_names[cfg.kind]);
    json_string(&w, "mode", mode_names[cfg.mode]);
    json_int(&w, "computations", cfg.computations);
    json_int(&w, "bias", cfg.bias_ms);
    json_string(&w, "order", order_names[cfg.order]);
    json_int(&w, "maxConcurrency", cfg.max_concurrency);
    wl_write_placement(&common, &w);
    json_end_object(&w);

    json_begin_array(&w, "objects");
    if (cfg.mode == MODE_CONCURRENT)
        report_object(&w, "finished", pl_sem_info(&finished));
    json_end_array(&w);
    report_region(&w, begin, end, process_times);

    json_begin_object(&w, "metrics");
    json_double(&w, "elapsedMs", elapsed_ms);
    json_double(&w, "averageResponse", avg_response);
    json_int(&w, "idealMs", ideal_ms);
    json_int(&w, "threadsUsed", threads_used);
    json_double(&w, "loopsPerMs", cfg.kind == KIND_CPU ? loops_per_ms : 0.0);
    json_end_object(&w);

    json_begin_array(&w, "computations");
    for (int i = 0; i < cfg.computations; i++) {
        const computation *c = &comps[i];
        int64_t turnaround = c->finish_ns - begin;
        json_begin_object(&w, NULL);
        json_int(&w, "index", c->index);
        json_int(&w, "lengthMs", c->length_ms);
        json_int(&w, "tid", c->tid);
        json_int(&w, "startNs", c->start_ns - begin);
        json_int(&w, "finishNs", c->finish_ns - begin);
        json_int(&w, "turnaroundNs", turnaround);
        json_double(&w, "responseRatio", (double)turnaround / ((double)c->length_ms * 1e6));
        json_int(&w, "endOrder", c->end_order);
        json_end_object(&w);
    }
    json_end_array(&w);

    /* One entry per thread that ran computations: one in serial mode. */
    int nthreads = cfg.mode == MODE_SERIAL ? 1 : cfg.computations;
    json_begin_array(&w, "threads");
    for (int i = 0; i < nthreads; i++) {
        const computation *c = &comps[i];
        char role[32];
        if (cfg.mode == MODE_SERIAL)
            snprintf(role, sizeof role, "serial");
        else
            snprintf(role, sizeof role, "computation %d", i);
        json_begin_object(&w, NULL);
        json_int(&w, "index", i);
        json_int(&w, "tid", c->tid);
        json_string(&w, "role", role);
        report_times(&w, c->times_ok ? &c->times : NULL);
        json_int(&w, "iterations", cfg.mode == MODE_SERIAL ? cfg.computations : 1);
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

    long long ideal_ms = 0;
    for (int i = 0; i < cfg.computations; i++) {
        /* Object i has multiple (n - i) of the bias when descending (worst case). */
        int k = cfg.order == ORDER_DESCENDING ? cfg.computations - i : i + 1;
        comps[i].index = i;
        comps[i].length_ms = k * cfg.bias_ms;
        ideal_ms += comps[i].length_ms;
        atomic_init(&comps[i].done, 0);
        if (pl_gate_init(&comps[i].resume, 0) < 0) {
            fprintf(stderr, "Cannot create a resume semaphore: %s\n", pl_last_error_text());
            return WL_EXIT_SYNC;
        }
    }
    if (pl_sem_init(&finished, 0, (unsigned)cfg.computations) < 0) {
        fprintf(stderr, "Cannot create the completion semaphore: %s\n", pl_last_error_text());
        return WL_EXIT_SYNC;
    }
    if (cfg.kind == KIND_CPU)
        calibrate();

    printf("Kind = %s, Mode = %s, Computations = %d, Bias = %lld ms, Order = %s, MaxConcurrency = %d",
           kind_names[cfg.kind], mode_names[cfg.mode], cfg.computations, cfg.bias_ms, order_names[cfg.order],
           cfg.max_concurrency);
    if (cfg.kind == KIND_CPU)
        printf(", Bias factor = %.0f loops/ms", loops_per_ms);
    putchar('\n');
    fflush(stdout);

    pl_thread threads[MAX_COMPUTATIONS];
    int threads_used = 1;
    pl_marker_write("TRACELAB_REGION_BEGIN");
    int64_t begin = pl_monotonic_ns();   /* ExecuteTest's QueryPerformanceCounter */
    if (cfg.mode == MODE_SERIAL) {
        if (pl_thread_create(&threads[0], serial_main, NULL) < 0) {
            fprintf(stderr, "Error creating thread: %s\n", pl_last_error_text());
            return WL_EXIT_THREAD;
        }
        if (pl_thread_join(&threads[0]) < 0)
            fatal(WL_EXIT_SYNC, "Thread join");
    } else {
        threads_used = run_concurrent(threads);
    }
    int64_t end = pl_monotonic_ns();
    pl_marker_write("TRACELAB_REGION_END");
    pl_marker_close();

    pl_times process_times;
    int process_ok = pl_process_times(&process_times) == 0;
    int64_t last = begin;
    double response_sum = 0;
    /* Turnaround = terminator time - test start, so it is also the finish time on the test's clock. */
    printf("%-11s %9s %10s %14s %9s %6s\n", "Computation", "Length ms", "Start ms", "Turnaround ms", "Response",
           "End#");
    for (int i = 0; i < cfg.computations; i++) {
        const computation *c = &comps[i];
        double turnaround_ms = (double)(c->finish_ns - begin) / 1e6;
        double response = turnaround_ms / (double)c->length_ms;
        response_sum += response;
        if (c->finish_ns > last)
            last = c->finish_ns;
        printf("%-11d %9lld %10.1f %14.1f %9.2f %6d\n", i, c->length_ms, (double)(c->start_ns - begin) / 1e6,
               turnaround_ms, response, c->end_order);
    }
    double elapsed_ms = (double)(last - begin) / 1e6;
    double avg_response = response_sum / cfg.computations;
    printf("Elapsed %.1f ms (ideal %lld ms serial sum), average response %.2f, threads used %d\n", elapsed_ms,
           ideal_ms, avg_response, threads_used);
    fflush(stdout);

    write_result(begin, end, process_ok ? &process_times : NULL, threads_used, elapsed_ms, avg_response, ideal_ms);
    int rc = wl_finish_result(&common);
    for (int i = 0; i < cfg.computations; i++)
        pl_gate_destroy(&comps[i].resume);
    pl_sem_destroy(&finished);
    return rc;
}
