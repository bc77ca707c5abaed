/* Three locks for the stack and lock-naming tests: a contended global mutex (taken in an inlined function), a
 * contended heap mutex and an uncontended static one. Built with Debian's default flags (no frame pointers) and -g.
 * Usage: lock_sites ITERATIONS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t g_stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t s_quiet_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long g_counter;
static long iterations;

struct queue {
    long pad[3];
    pthread_mutex_t lock;
    volatile unsigned long items;
};

static struct queue *q;

static void __attribute__((noinline)) spin(int n)
{
    for (volatile int i = 0; i < n; i++) {
    }
}

/* Inlined into update_stats: the blocking stacks' frame for it is an inlined one (DWARF .debug_info, perf script's
 * "(inlined)"). */
static inline __attribute__((always_inline)) void take_stats_lock(void)
{
    pthread_mutex_lock(&g_stats_lock);
}

void __attribute__((noinline)) update_stats(void)
{
    take_stats_lock();
    g_counter++;
    spin(200);
    pthread_mutex_unlock(&g_stats_lock);
}

void __attribute__((noinline)) queue_push(struct queue *target)
{
    pthread_mutex_lock(&target->lock);
    target->items++;
    spin(200);
    pthread_mutex_unlock(&target->lock);
}

static void *stats_worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iterations; i++) {
        update_stats();
        spin(100);
    }
    return NULL;
}

static void *queue_worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iterations; i++) {
        queue_push(q);
        spin(100);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    iterations = argc > 1 ? atol(argv[1]) : 20000;
    q = calloc(1, sizeof *q);
    if (q == NULL || pthread_mutex_init(&q->lock, NULL) != 0)
        return 1;
    pthread_t t[6];
    for (int i = 0; i < 6; i++)
        pthread_create(&t[i], NULL, i % 2 ? queue_worker : stats_worker, NULL);
    for (int i = 0; i < 6; i++)
        pthread_join(t[i], NULL);
    /* The static lock is taken by one thread only: it never contends, so it never reaches the kernel. */
    pthread_mutex_lock(&s_quiet_lock);
    g_counter++;
    pthread_mutex_unlock(&s_quiet_lock);
    printf("%lu %lu\n", g_counter, q->items);
    return 0;
}
