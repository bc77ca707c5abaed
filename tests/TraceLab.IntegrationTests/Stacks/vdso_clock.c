/* Two threads that read their CPU clock in a loop for SECONDS (default 1): glibc's clock_gettime calls the vDSO,
 * whose fallback makes the syscall from inside [vdso] (a CPU-time clock has no vDSO fast path). Run on one CPU, the
 * threads preempt each other mostly at that syscall's return: a switch-out whose user stack starts in the vDSO.
 * Usage: vdso_clock [SECONDS] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds = 1.0;

static long spin(void)
{
    struct timespec start, now, cpu;
    long calls = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
        clock_gettime(CLOCK_MONOTONIC, &now);
        calls++;
    } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    return calls;
}

static void *worker(void *arg)
{
    *(long *)arg = spin();
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t threads[2];
    long calls[2];
    if (argc > 1) seconds = atof(argv[1]);
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, worker, &calls[i]);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("%ld %ld\n", calls[0], calls[1]);
    return 0;
}
