/*
 * TimeMutex: port of J. M. Hart's Win32 test program (seed 000) comparing
 * critical sections, nested critical sections and mutexes, extended with an
 * auto-reset event and a binary semaphore used as locks.
 *
 *   timemutex [options] Which [Depth [Delay [NumThreads [SleepPoints [NumThActive]]]]]
 *
 * The thread body, defaults, validation and exit codes follow the seed so
 * results stay comparable with its published graphs; what is new is the
 * machine-readable result, trace markers and the shared-counter check.
 */
#include "args.h"
#include "json.h"
#include "platform.h"
#include "report.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ITERATIONS 1000000
#define DEFAULT_THREADS 4
#define MAX_THREADS 64     /* MAXIMUM_WAIT_OBJECTS, the seed's limit */
#define MAX_CPUS 1024

enum { WHICH_CS = 1, WHICH_CS_NESTED, WHICH_MUTEX, WHICH_EVENT, WHICH_SEMAPHORE };
static const char *const which_names[] = { "", "cs", "cs-nested", "mutex", "event", "semaphore" };

enum {
    EXIT_ARGUMENT = 1,
    EXIT_THREAD_COUNT = 2,
    EXIT_GATE = 3,
    EXIT_ALLOC = 4,
    EXIT_OPTION = 5,
    EXIT_COUNTER = 6,
    EXIT_SYNC = 7
};

typedef struct {
    int which, depth, delay, threads, sleep_points, active;
    long long iterations;
    const char *affinity;
    int cpus[MAX_CPUS];
    int cpu_count;
    int priority_given, priority;
    const char *marker, *result;
} config;

typedef struct {
    int index;
    long tid;
    long long iterations;
    int times_ok;
    pl_times times;
} worker;

static config cfg;
static pl_cs cs, cs_a;
static pl_kmutex kmutex;
static pl_event event;
static pl_binsem binsem;
static pl_gate gate;

/* Deliberately not atomic: a lost update shows that mutual exclusion failed. */
static volatile long long shared_counter;

/* ------------------------------------------------------------- usage */

static void usage(FILE *out)
{
    fputs("Usage: timemutex [options] Which [Depth [Delay [NumThreads [SleepPoints [NumThActive]]]]]\n"
          "  Which        1 critical section, 2 two nested critical sections, 3 kernel mutex,\n"
          "               4 auto-reset event, 5 binary semaphore (default 1)\n"
          "  Depth        nested acquires per iteration, 0 = no synchronisation (default 1)\n"
          "  Delay        CPU-wasting factor while holding the lock (default 0)\n"
          "  NumThreads   1..64 (default 4)\n"
          "  SleepPoints  0 none, 1 yield holding, 2 yield after release, 3 both (default 0)\n"
          "  NumThActive  threads admitted at once by the gating semaphore (default NumThreads)\n"
          "Options:\n"
          "  --iterations N    iterations per thread (default 1000000)\n"
          "  --affinity LIST   all, or CPUs such as 0 / 0,1 / 0-3 (default all)\n"
          "  --priority NICE   -20..19, applied before threads start (default unchanged)\n"
          "  --marker PATH     tracefs trace_marker to annotate the measured region\n"
          "  --result PATH     write the JSON result there instead of stdout\n"
          "  --help            show this text\n",
          out);
}

static void option_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    usage(stderr);
    exit(EXIT_OPTION);
}

/* ---------------------------------------------------------- arguments */

static const char *const positional_names[] = {
    "Which", "Depth", "Delay", "NumThreads", "SleepPoints", "NumThActive"
};

static void parse_option(args_iter *it, const char *name)
{
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        exit(0);
    }
    int known = strcmp(name, "--iterations") == 0 || strcmp(name, "--affinity") == 0
             || strcmp(name, "--priority") == 0 || strcmp(name, "--marker") == 0
             || strcmp(name, "--result") == 0;
    if (!known)
        option_error("Unknown option '%s'%s", name, "");
    const char *value = args_value(it);
    if (value == NULL)
        option_error("Option %s needs a value%s", name, "");

    long long n;
    if (strcmp(name, "--iterations") == 0) {
        if (args_parse_ll(value, &n) < 0 || n < 0)
            option_error("Option %s must be a non-negative integer: '%s'", name, value);
        cfg.iterations = n;
    } else if (strcmp(name, "--affinity") == 0) {
        if (strcmp(value, "all") != 0
            && args_parse_cpu_list(value, cfg.cpus, MAX_CPUS, &cfg.cpu_count) < 0)
            option_error("Option %s must be 'all' or a CPU list such as 0,1 or 0-3: '%s'", name, value);
        cfg.affinity = value;
        if (strcmp(value, "all") == 0)
            cfg.cpu_count = 0;
    } else if (strcmp(name, "--priority") == 0) {
        if (args_parse_ll(value, &n) < 0 || n < -20 || n > 19)
            option_error("Option %s must be a nice level between -20 and 19: '%s'", name, value);
        cfg.priority_given = 1;
        cfg.priority = (int)n;
    } else if (strcmp(name, "--marker") == 0) {
        cfg.marker = value;
    } else {
        cfg.result = value;
    }
}

static int int_in_range(const char *name, long long v, int lo, int hi)
{
    if (v < lo || v > hi) {
        fprintf(stderr, "%s must be between %d and %d (got %lld)\n", name, lo, hi, v);
        exit(EXIT_ARGUMENT);
    }
    return (int)v;
}

static void parse_arguments(int argc, char **argv)
{
    long long pos[6] = { 1, 1, 0, DEFAULT_THREADS, 0, 0 };
    int npos = 0;
    args_iter it;
    const char *text;
    int kind;

    cfg.iterations = DEFAULT_ITERATIONS;
    cfg.affinity = "all";
    args_init(&it, argc, argv);
    while ((kind = args_next(&it, &text)) != ARGS_END) {
        if (kind == ARGS_OPTION) {
            parse_option(&it, text);
            continue;
        }
        if (npos == 6)
            option_error("Too many arguments: '%s'%s", text, "");
        if (args_parse_ll(text, &pos[npos]) < 0) {
            fprintf(stderr, "Argument %s must be an integer: '%s'\n", positional_names[npos], text);
            exit(EXIT_ARGUMENT);
        }
        npos++;
    }

    /* Same checks, order, messages and exit codes as the seed, then the new ones. */
    if (pos[0] < WHICH_CS || pos[0] > WHICH_SEMAPHORE) {
        fprintf(stderr, "The first command line argument must be 1, 2, 3, 4 or 5\n");
        exit(EXIT_ARGUMENT);
    }
    cfg.which = (int)pos[0];
    cfg.depth = int_in_range("Depth", pos[1], 0, INT_MAX);
    cfg.delay = int_in_range("Delay", pos[2], 0, INT_MAX);
    if ((cfg.which == WHICH_EVENT || cfg.which == WHICH_SEMAPHORE) && cfg.depth > 1) {
        /* Re-acquiring an ownerless object from the same thread deadlocks. */
        fprintf(stderr, "Events and semaphores have no owner: Depth must be 0 or 1 for Which 4 and 5\n");
        exit(EXIT_ARGUMENT);
    }
    if (pos[3] < 1 || pos[3] > MAX_THREADS) {
        fprintf(stderr, "Number of threads must be between 1 and %d\n", MAX_THREADS);
        exit(EXIT_THREAD_COUNT);
    }
    cfg.threads = (int)pos[3];
    long long active = npos >= 6 ? (pos[5] > 1 ? pos[5] : 1) : cfg.threads;
    cfg.active = active < cfg.threads ? (int)active : cfg.threads;
    cfg.sleep_points = pos[4] >= 0 && pos[4] <= 3 ? (int)pos[4] : 0;
}

/* ----------------------------------------------------------- objects */

/* Only kernel-persistent objects matter here: SysV semaphores outlive us. */
static void remove_persistent_objects(void)
{
    if (cfg.which == WHICH_MUTEX)
        pl_kmutex_destroy(&kmutex);
    if (cfg.which == WHICH_SEMAPHORE)
        pl_binsem_destroy(&binsem);
}

/* A failed synchronisation call leaves the run meaningless; the first failing
 * thread reports and ends the process, any others wait for that. */
static void fatal(int code, const char *what)
{
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&once)) {
        fprintf(stderr, "%s failed: %s\n", what, pl_last_error_text());
        remove_persistent_objects();
        fflush(NULL);
        _Exit(code);
    }
    for (;;)
        pl_yield();
}

static void create_objects(void)
{
    int rc = 0;
    switch (cfg.which) {
    case WHICH_CS:
        rc = pl_cs_init(&cs);
        break;
    case WHICH_CS_NESTED:
        rc = pl_cs_init(&cs);
        if (rc == 0)
            rc = pl_cs_init(&cs_a);
        break;
    case WHICH_MUTEX:
        rc = pl_kmutex_init(&kmutex);
        break;
    case WHICH_EVENT:
        rc = pl_event_init(&event, 1);   /* signaled = lock free */
        break;
    case WHICH_SEMAPHORE:
        rc = pl_binsem_init(&binsem, 1);
        break;
    }
    if (rc < 0)
        fatal(EXIT_SYNC, "Creating the synchronisation object");
    if (pl_gate_init(&gate, (unsigned)cfg.active) < 0) {
        fprintf(stderr, "Cannot create gating semaphore. %s\n", pl_last_error_text());
        remove_persistent_objects();
        exit(EXIT_GATE);
    }
}

static void destroy_objects(void)
{
    switch (cfg.which) {
    case WHICH_CS:
        pl_cs_destroy(&cs);
        break;
    case WHICH_CS_NESTED:
        pl_cs_destroy(&cs);
        pl_cs_destroy(&cs_a);
        break;
    case WHICH_EVENT:
        pl_event_destroy(&event);
        break;
    default:
        remove_persistent_objects();
        break;
    }
    pl_gate_destroy(&gate);
}

static void write_objects(json_writer *w)
{
    json_begin_array(w, "objects");
    switch (cfg.which) {
    case WHICH_CS:
        report_object(w, "cs", pl_cs_info(&cs));
        break;
    case WHICH_CS_NESTED:
        report_object(w, "cs", pl_cs_info(&cs));
        report_object(w, "csA", pl_cs_info(&cs_a));
        break;
    case WHICH_MUTEX:
        report_object(w, "mutex", pl_kmutex_info(&kmutex));
        break;
    case WHICH_EVENT:
        report_object(w, "event", pl_event_info(&event));
        break;
    case WHICH_SEMAPHORE:
        report_object(w, "semaphore", pl_binsem_info(&binsem));
        break;
    }
    report_object(w, "gate", pl_gate_info(&gate));
    json_end_array(w);
}

/* ------------------------------------------------------ thread body */

/* MSVC's rand(), per thread: glibc rand() takes a process-wide lock, which
 * would add a second, unintended point of contention. */
#define MS_RAND_MAX 0x7fff

static int ms_rand(uint32_t *state)
{
    *state = *state * 214013u + 2531011u;
    return (int)((*state >> 16) & MS_RAND_MAX);
}

static void waste_time(int delay_factor, uint32_t *rng)
{
    if (delay_factor == 0)
        return;
    int delay = (int)(delay_factor * (float)ms_rand(rng) / MS_RAND_MAX);
    /* volatile keeps -O2 from deleting the loop, as the seed's k would be. */
    volatile int sink;
    for (int i = 0; i < delay; i++)
        sink = ms_rand(rng) * ms_rand(rng);
    (void)sink;
}

static void acquire(void)
{
    switch (cfg.which) {
    case WHICH_CS:
        if (pl_cs_enter(&cs) < 0)
            fatal(EXIT_SYNC, "EnterCriticalSection");
        break;
    case WHICH_CS_NESTED:
        if (pl_cs_enter(&cs) < 0 || pl_cs_enter(&cs_a) < 0)
            fatal(EXIT_SYNC, "EnterCriticalSection");
        break;
    case WHICH_MUTEX:
        if (pl_kmutex_lock(&kmutex) < 0)
            fatal(EXIT_SYNC, "Wait for mutex");
        break;
    case WHICH_EVENT:
        if (pl_event_wait(&event) < 0)
            fatal(EXIT_SYNC, "Wait for event");
        break;
    case WHICH_SEMAPHORE:
        if (pl_binsem_wait(&binsem) < 0)
            fatal(EXIT_SYNC, "Wait for semaphore");
        break;
    }
}

static void release(void)
{
    switch (cfg.which) {
    case WHICH_CS:
        pl_cs_leave(&cs);
        break;
    case WHICH_CS_NESTED:
        pl_cs_leave(&cs_a);
        pl_cs_leave(&cs);
        break;
    case WHICH_MUTEX:
        if (pl_kmutex_unlock(&kmutex) < 0)
            fatal(EXIT_SYNC, "ReleaseMutex");
        break;
    case WHICH_EVENT:
        if (pl_event_set(&event) < 0)
            fatal(EXIT_SYNC, "SetEvent");
        break;
    case WHICH_SEMAPHORE:
        if (pl_binsem_post(&binsem) < 0)
            fatal(EXIT_SYNC, "ReleaseSemaphore");
        break;
    }
}

static void worker_main(void *arg)
{
    worker *w = arg;
    const int depth = cfg.depth, sleep_points = cfg.sleep_points, delay = cfg.delay;
    const long long iterations = cfg.iterations;
    uint32_t rng = (uint32_t)pl_monotonic_ns() ^ ((uint32_t)w->index * 2654435761u);
    long long i;

    w->tid = pl_current_tid();
    if (pl_gate_wait(&gate) < 0)
        fatal(EXIT_SYNC, "Wait for gating semaphore");
    for (i = 0; i < iterations; i++) {
        for (int k = 0; k < depth; k++)
            acquire();
        shared_counter = shared_counter + 1;
        if (sleep_points % 2 == 1)
            pl_yield();   /* yield holding the resources */
        waste_time(delay, &rng);
        for (int k = 0; k < depth; k++)
            release();
        if (sleep_points >= 2)
            pl_yield();   /* yield not holding the resources */
    }
    w->iterations = i;
    if (pl_gate_post(&gate) < 0)
        fatal(EXIT_SYNC, "Release gating semaphore");
    w->times_ok = pl_thread_times(&w->times) == 0;
}

/* ------------------------------------------------------------ result */

static void write_result(FILE *out, const worker *workers, int64_t begin, int64_t end,
                         const pl_times *process, long long expected)
{
    json_writer w;
    json_init(&w, out);
    json_begin_object(&w, NULL);
    json_string(&w, "workload", "timemutex");
    json_int(&w, "pid", pl_current_pid());

    json_begin_object(&w, "params");
    json_int(&w, "which", cfg.which);
    json_string(&w, "whichName", which_names[cfg.which]);
    json_int(&w, "depth", cfg.depth);
    json_int(&w, "delay", cfg.delay);
    json_int(&w, "threads", cfg.threads);
    json_int(&w, "sleepPoints", cfg.sleep_points);
    json_int(&w, "active", cfg.active);
    json_int(&w, "iterations", cfg.iterations);
    json_string(&w, "affinity", cfg.affinity);
    json_int(&w, "priority", cfg.priority_given ? cfg.priority : pl_get_priority());
    json_end_object(&w);

    write_objects(&w);
    report_region(&w, begin, end, process);
    json_int(&w, "sharedCounter", shared_counter);
    if (expected >= 0)
        json_int(&w, "expectedCounter", expected);
    else
        json_null(&w, "expectedCounter");

    json_begin_array(&w, "threads");
    for (int i = 0; i < cfg.threads; i++) {
        const worker *t = &workers[i];
        json_begin_object(&w, NULL);
        json_int(&w, "index", t->index);
        json_int(&w, "tid", t->tid);
        report_times(&w, t->times_ok ? &t->times : NULL);
        json_int(&w, "iterations", t->iterations);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
    fputc('\n', out);
}

/* -------------------------------------------------------------- main */

static void apply_scheduling(void)
{
    if (cfg.priority_given && pl_set_priority(cfg.priority) < 0) {
        fprintf(stderr, "Cannot set priority %d: %s\n", cfg.priority, pl_last_error_text());
        exit(EXIT_OPTION);
    }
    if (cfg.cpu_count > 0 && pl_set_affinity(cfg.cpus, cfg.cpu_count) < 0) {
        fprintf(stderr, "Cannot set affinity '%s': %s\n", cfg.affinity, pl_last_error_text());
        exit(EXIT_OPTION);
    }
}

int main(int argc, char **argv)
{
    parse_arguments(argc, argv);
    apply_scheduling();

    /* Fail on an unusable path before spending the run, not after. */
    FILE *result = stdout;
    if (cfg.result != NULL && (result = fopen(cfg.result, "w")) == NULL) {
        fprintf(stderr, "Cannot open result file '%s'\n", cfg.result);
        return EXIT_OPTION;
    }
    if (pl_marker_open(cfg.marker) < 0) {
        fprintf(stderr, "Cannot open trace marker '%s': %s\n",
                cfg.marker != NULL ? cfg.marker : "(ETW provider)", pl_last_error_text());
        return EXIT_OPTION;
    }

    printf("Which = %d, Depth = %d, Delay = %d, NumThreads = %d, SleepPoints = %d, NumThActive = %d\n",
           cfg.which, cfg.depth, cfg.delay, cfg.threads, cfg.sleep_points, cfg.active);
    fflush(stdout);

    pl_cleanup_on_signals();
    create_objects();

    worker *workers = calloc((size_t)cfg.threads, sizeof *workers);
    pl_thread *threads = calloc((size_t)cfg.threads, sizeof *threads);
    if (workers == NULL || threads == NULL) {
        fprintf(stderr, "Cannot allocate memory for thread handles.\n");
        remove_persistent_objects();
        return EXIT_ALLOC;
    }

    /* The markers enclose the timed span, so the traced region contains
     * everything the elapsed time measures. */
    pl_marker_write("TRACELAB_REGION_BEGIN");
    int64_t begin = pl_monotonic_ns();
    for (int i = 0; i < cfg.threads; i++) {
        workers[i].index = i;
        if (pl_thread_create(&threads[i], worker_main, &workers[i]) < 0) {
            fprintf(stderr, "Error Creating Thread %d\n", i);
            fatal(EXIT_ARGUMENT, "Thread creation");
        }
    }
    for (int i = 0; i < cfg.threads; i++) {
        if (pl_thread_join(&threads[i]) < 0)
            fatal(EXIT_SYNC, "Thread join");
    }
    int64_t end = pl_monotonic_ns();
    pl_marker_write("TRACELAB_REGION_END");
    pl_marker_close();

    pl_times process;
    int process_ok = pl_process_times(&process) == 0;
    long long expected = cfg.depth >= 1 ? (long long)cfg.threads * cfg.iterations : -1;

    write_result(result, workers, begin, end, process_ok ? &process : NULL, expected);
    int write_failed = fflush(result) != 0 || (result != stdout && fclose(result) != 0);
    destroy_objects();
    free(threads);
    free(workers);

    if (write_failed) {
        fprintf(stderr, "Cannot write result file '%s'\n", cfg.result);
        return EXIT_OPTION;
    }
    if (expected >= 0 && shared_counter != expected) {
        fprintf(stderr, "Mutual exclusion failed: sharedCounter %lld != expectedCounter %lld\n",
                (long long)shared_counter, expected);
        return EXIT_COUNTER;
    }
    return 0;
}
