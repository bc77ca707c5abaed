/* Blocking waits whose syscall says nothing of what they wait for, for the stack tags
 * (docs/metrics.md#wait-stack-tags): two threads map and unmap memory in a loop and queue for the process's
 * mmap_lock (rwsem_down_write_slowpath beneath mmap/munmap), and one thread faults in a file whose page cache it
 * dropped (a major fault: handle_mm_fault beneath, outside any syscall). Usage: kernel_waits FILE SECONDS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { FileBytes = 64 << 20, MapBytes = 1 << 20 };
static double g_seconds;
static const char *g_file;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *mapper(void *arg)
{
    (void)arg;
    double end = now() + g_seconds;
    while (now() < end) {
        char *p = mmap(NULL, MapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { perror("mmap"); exit(1); }
        p[0] = 1;
        munmap(p, MapBytes);
        usleep(50); /* enough overlap to queue hundreds of times a second, not so many stacks that perf falls behind */
    }
    return NULL;
}

static void *faulter(void *arg)
{
    (void)arg;
    int fd = open(g_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror("open"); exit(1); }
    char block[65536];
    for (size_t i = 0; i < sizeof block; i++) block[i] = (char)i;
    for (int i = 0; i < FileBytes / (int)sizeof block; i++)
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block) { perror("write"); exit(1); }
    fsync(fd);
    double end = now() + g_seconds;
    long sum = 0;
    while (now() < end) {
        /* Drop the file's cached pages, then fault them in again through a mapping: major faults. */
        posix_fadvise(fd, 0, FileBytes, POSIX_FADV_DONTNEED);
        char *p = mmap(NULL, FileBytes, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) { perror("mmap file"); exit(1); }
        madvise(p, FileBytes, MADV_RANDOM); /* no read-ahead: each page its own fault */
        for (long off = 0; off < FileBytes && now() < end; off += 4096) sum += p[off];
        munmap(p, FileBytes);
    }
    close(fd);
    return (void *)sum;
}

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: kernel_waits FILE SECONDS\n"); return 2; }
    g_file = argv[1];
    g_seconds = atof(argv[2]);
    pthread_t t[3];
    pthread_create(&t[0], NULL, mapper, NULL);
    pthread_create(&t[1], NULL, mapper, NULL);
    pthread_create(&t[2], NULL, faulter, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    unlink(g_file);
    return 0;
}
