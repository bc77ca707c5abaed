/*
 * Linux implementation of the platform layer. See platform.h for the contract
 * and README.md for why each Win32 object maps to the primitive used here.
 */
#define _GNU_SOURCE
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- errors */

const char *pl_last_error_text(void)
{
    static _Thread_local char buf[128];
    /* GNU strerror_r may return a static string instead of filling buf. */
    return strerror_r(errno, buf, sizeof buf);
}

/* --------------------------------------------------------------- threads */

struct trampoline {
    pl_thread_fn fn;
    void *arg;
};

static void *thread_start(void *p)
{
    struct trampoline t = *(struct trampoline *)p;
    free(p);
    t.fn(t.arg);
    return NULL;
}

int pl_thread_create(pl_thread *t, pl_thread_fn fn, void *arg)
{
    struct trampoline *tr = malloc(sizeof *tr);
    if (tr == NULL)
        return -1;
    tr->fn = fn;
    tr->arg = arg;
    int rc = pthread_create(&t->id, NULL, thread_start, tr);
    if (rc != 0) {
        free(tr);
        errno = rc;
        return -1;
    }
    return 0;
}

int pl_thread_join(pl_thread *t)
{
    int rc = pthread_join(t->id, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

long pl_current_tid(void)
{
    /* Cached: the kernel mutex asks on every acquire and an extra gettid
     * syscall per acquire would pollute the very trace being measured. */
    static _Thread_local long tid;
    if (tid == 0)
        tid = (long)gettid();
    return tid;
}

long pl_current_pid(void)
{
    return (long)getpid();
}

void pl_yield(void)
{
    sched_yield();
}

/* ------------------------------------------------ SysV cleanup on signal */

/* SysV semaphores outlive the process; remember them so an interrupted run
 * (e.g. a tracer's timeout) does not leak them. Slots hold semid + 1, 0 = free. */
#define MAX_SYSV 64
static volatile sig_atomic_t sysv_slots[MAX_SYSV];

static void sysv_remember(int semid)
{
    for (int i = 0; i < MAX_SYSV; i++) {
        if (sysv_slots[i] == 0) {
            sysv_slots[i] = semid + 1;
            return;
        }
    }
}

static void sysv_forget(int semid)
{
    for (int i = 0; i < MAX_SYSV; i++) {
        if (sysv_slots[i] == semid + 1)
            sysv_slots[i] = 0;
    }
}

static void cleanup_signal_handler(int sig)
{
    for (int i = 0; i < MAX_SYSV; i++) {
        if (sysv_slots[i] != 0)
            semctl(sysv_slots[i] - 1, 0, IPC_RMID);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void pl_cleanup_on_signals(void)
{
    signal(SIGINT, cleanup_signal_handler);
    signal(SIGTERM, cleanup_signal_handler);
    signal(SIGHUP, cleanup_signal_handler);
}

static int sysv_create(int initial)
{
    int semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    if (semid < 0)
        return -1;
    if (semctl(semid, 0, SETVAL, initial) < 0) {
        int saved = errno;
        semctl(semid, 0, IPC_RMID);
        errno = saved;
        return -1;
    }
    sysv_remember(semid);
    return semid;
}

static void sysv_destroy(int semid)
{
    if (semid < 0)
        return;
    sysv_forget(semid);
    semctl(semid, 0, IPC_RMID);
}

static int sysv_op(int semid, short delta, short flags)
{
    struct sembuf op = { .sem_num = 0, .sem_op = delta, .sem_flg = flags };
    int rc;
    do {
        rc = semop(semid, &op, 1);
    } while (rc < 0 && errno == EINTR);
    return rc;
}

static pl_object_info sysv_info(int semid)
{
    pl_object_info info = { "sysv-sem", "id", 0, (uint64_t)semid };
    return info;
}

/* ------------------------------------------------ recursive user lock */

int pl_cs_init(pl_cs *cs)
{
    pthread_mutexattr_t attr;
    int rc = pthread_mutexattr_init(&attr);
    if (rc == 0)
        rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    if (rc == 0)
        rc = pthread_mutex_init(&cs->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

int pl_cs_enter(pl_cs *cs)
{
    int rc = pthread_mutex_lock(&cs->mutex);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

void pl_cs_leave(pl_cs *cs)
{
    pthread_mutex_unlock(&cs->mutex);
}

void pl_cs_destroy(pl_cs *cs)
{
    pthread_mutex_destroy(&cs->mutex);
}

pl_object_info pl_cs_info(const pl_cs *cs)
{
    /* glibc's pthread_mutex_t begins with __data.__lock, the futex word that
     * FUTEX_WAIT/FUTEX_WAKE name, so the mutex address is the futex address. */
    pl_object_info info = { "futex", "address", 1, (uint64_t)(uintptr_t)&cs->mutex };
    return info;
}

/* ------------------------------------------------------- kernel mutex */

/*
 * A Win32 mutex enters the kernel on every WaitForSingleObject/ReleaseMutex,
 * even uncontended and even when the owner re-acquires it. semop() is always
 * a system call, and SEM_UNDO gives the "released if the owner dies" flavour
 * of mutex ownership at process granularity.
 *
 * SysV semaphores know nothing of thread ownership, so recursion is tracked
 * here: the owner tid and depth live in user space. A recursive acquire or an
 * inner release still makes a system call, semop {sem_op = 0, IPC_NOWAIT},
 * which "waits for zero" and succeeds at once because the value is 0 while
 * the mutex is held. That keeps one kernel entry per call, as on Windows, and
 * doubles as a check that the semaphore really is held.
 */
int pl_kmutex_init(pl_kmutex *m)
{
    atomic_init(&m->owner, 0);
    m->depth = 0;
    m->semid = sysv_create(1);
    return m->semid < 0 ? -1 : 0;
}

int pl_kmutex_lock(pl_kmutex *m)
{
    long self = pl_current_tid();
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) == self) {
        if (sysv_op(m->semid, 0, IPC_NOWAIT) < 0)
            return -1;
        m->depth++;
        return 0;
    }
    if (sysv_op(m->semid, -1, SEM_UNDO) < 0)
        return -1;
    atomic_store_explicit(&m->owner, self, memory_order_relaxed);
    m->depth = 1;
    return 0;
}

int pl_kmutex_unlock(pl_kmutex *m)
{
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) != pl_current_tid()) {
        errno = EPERM;
        return -1;
    }
    if (m->depth > 1) {
        if (sysv_op(m->semid, 0, IPC_NOWAIT) < 0)
            return -1;
        m->depth--;
        return 0;
    }
    m->depth = 0;
    atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
    return sysv_op(m->semid, 1, SEM_UNDO);
}

void pl_kmutex_destroy(pl_kmutex *m)
{
    sysv_destroy(m->semid);
    m->semid = -1;
}

pl_object_info pl_kmutex_info(const pl_kmutex *m)
{
    return sysv_info(m->semid);
}

/* ------------------------------------------------------ auto-reset event */

/*
 * eventfd in counter mode behaves like an auto-reset event: read() blocks
 * while the counter is 0 and otherwise returns it and resets it to 0, so one
 * waiter consumes the signal; write(1) signals, and signalling twice still
 * releases one waiter. Both are system calls, as SetEvent/Wait are on Windows.
 */
int pl_event_init(pl_event *e, int initially_set)
{
    e->fd = eventfd(initially_set ? 1u : 0u, EFD_CLOEXEC);
    return e->fd < 0 ? -1 : 0;
}

int pl_event_wait(pl_event *e)
{
    uint64_t value;
    ssize_t n;
    do {
        n = read(e->fd, &value, sizeof value);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof value ? 0 : -1;
}

int pl_event_set(pl_event *e)
{
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(e->fd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof one ? 0 : -1;
}

void pl_event_destroy(pl_event *e)
{
    if (e->fd >= 0)
        close(e->fd);
    e->fd = -1;
}

pl_object_info pl_event_info(const pl_event *e)
{
    pl_object_info info = { "eventfd", "fd", 0, (uint64_t)e->fd };
    return info;
}

/* ---------------------------------------------------- binary semaphore */

/* No SEM_UNDO: a semaphore has no owner, so nothing may be given back on exit.
 * SysV has no maximum count; the caller's protocol keeps it at 0 or 1. */
int pl_binsem_init(pl_binsem *s, int initial)
{
    s->semid = sysv_create(initial);
    return s->semid < 0 ? -1 : 0;
}

int pl_binsem_wait(pl_binsem *s)
{
    return sysv_op(s->semid, -1, 0);
}

int pl_binsem_post(pl_binsem *s)
{
    return sysv_op(s->semid, 1, 0);
}

void pl_binsem_destroy(pl_binsem *s)
{
    sysv_destroy(s->semid);
    s->semid = -1;
}

pl_object_info pl_binsem_info(const pl_binsem *s)
{
    return sysv_info(s->semid);
}

/* ------------------------------------------------------ gating semaphore */

int pl_gate_init(pl_gate *g, unsigned initial)
{
    return sem_init(&g->sem, 0, initial);
}

int pl_gate_wait(pl_gate *g)
{
    int rc;
    do {
        rc = sem_wait(&g->sem);
    } while (rc < 0 && errno == EINTR);
    return rc;
}

int pl_gate_post(pl_gate *g)
{
    return sem_post(&g->sem);
}

void pl_gate_destroy(pl_gate *g)
{
    sem_destroy(&g->sem);
}

pl_object_info pl_gate_info(const pl_gate *g)
{
    /* On 64-bit glibc the sem_t value is the low half of its first 64-bit
     * word, i.e. the futex word sits at the sem_t address (little endian). */
    pl_object_info info = { "futex", "address", 1, (uint64_t)(uintptr_t)&g->sem };
    return info;
}

/* ---------------------------------------------------- counting semaphore */

int pl_sem_init(pl_sem *s, unsigned initial, unsigned max)
{
    /* sem_t has no maximum; callers never post beyond theirs. */
    (void)max;
    return sem_init(&s->sem, 0, initial);
}

int pl_sem_wait(pl_sem *s)
{
    int rc;
    do {
        rc = sem_wait(&s->sem);
    } while (rc < 0 && errno == EINTR);
    return rc;
}

int pl_sem_trywait(pl_sem *s)
{
    int rc;
    do {
        rc = sem_trywait(&s->sem);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0)
        return 1;
    return errno == EAGAIN ? 0 : -1;
}

int pl_sem_post(pl_sem *s)
{
    return sem_post(&s->sem);
}

void pl_sem_destroy(pl_sem *s)
{
    sem_destroy(&s->sem);
}

pl_object_info pl_sem_info(const pl_sem *s)
{
    /* Same layout argument as pl_gate_info. */
    pl_object_info info = { "futex", "address", 1, (uint64_t)(uintptr_t)&s->sem };
    return info;
}

/* --------------------------------------------------------- stop event */

/* An eventfd that is written once and never read stays readable: poll()
 * then reports it set forever, which is a manual-reset event. */
int pl_stop_init(pl_stop *s)
{
    s->fd = eventfd(0, EFD_CLOEXEC);
    return s->fd < 0 ? -1 : 0;
}

int pl_stop_set(pl_stop *s)
{
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(s->fd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof one ? 0 : -1;
}

int pl_stop_is_set(pl_stop *s)
{
    struct pollfd p = { .fd = s->fd, .events = POLLIN };
    int rc;
    do {
        rc = poll(&p, 1, 0);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0)
        return -1;
    return rc > 0 && (p.revents & POLLIN) != 0;
}

void pl_stop_destroy(pl_stop *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

pl_object_info pl_stop_info(const pl_stop *s)
{
    pl_object_info info = { "eventfd", "fd", 0, (uint64_t)s->fd };
    return info;
}

int pl_wait_event_or_stop(pl_event *e, pl_stop *s)
{
    for (;;) {
        struct pollfd p[2] = { { .fd = s->fd, .events = POLLIN }, { .fd = e->fd, .events = POLLIN } };
        int rc = poll(p, 2, -1);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (p[0].revents & POLLIN)
            return 1;
        if (p[1].revents & POLLIN)
            return pl_event_wait(e) == 0 ? 0 : -1;
        if ((p[0].revents | p[1].revents) & (POLLERR | POLLNVAL)) {
            errno = EBADF;
            return -1;
        }
    }
}

/* ------------------------------------------------------------------ time */

int64_t pl_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pl_sleep_ms(int ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static int64_t timeval_ns(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000;
}

static int rusage_times(int who, pl_times *out)
{
    struct rusage ru;
    if (getrusage(who, &ru) < 0)
        return -1;
    out->user_ns = timeval_ns(ru.ru_utime);
    out->system_ns = timeval_ns(ru.ru_stime);
    out->voluntary_switches = ru.ru_nvcsw;
    out->involuntary_switches = ru.ru_nivcsw;
    return 0;
}

int pl_thread_times(pl_times *out)
{
    return rusage_times(RUSAGE_THREAD, out);
}

int pl_process_times(pl_times *out)
{
    return rusage_times(RUSAGE_SELF, out);
}

/* ------------------------------------------------------------ scheduling */

int pl_set_affinity(const int *cpus, int count)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) {
        if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE) {
            errno = EINVAL;
            return -1;
        }
        CPU_SET(cpus[i], &set);
    }
    /* pid 0 = the calling (main) thread; threads created later inherit it. */
    return sched_setaffinity(0, sizeof set, &set);
}

int pl_set_priority(int nice)
{
    /* On Linux PRIO_PROCESS with who 0 changes only the calling thread; the
     * workers inherit it because they are created afterwards. */
    return setpriority(PRIO_PROCESS, 0, nice);
}

int pl_get_priority(void)
{
    return getpriority(PRIO_PROCESS, 0);
}

/* --------------------------------------------------------------- markers */

static int marker_fd = -1;

int pl_marker_open(const char *path)
{
    if (path == NULL)
        return 0;
    marker_fd = open(path, O_WRONLY | O_CLOEXEC);
    return marker_fd < 0 ? -1 : 0;
}

void pl_marker_write(const char *text)
{
    if (marker_fd < 0)
        return;
    /* A lost marker must not change the workload's behaviour; ignore errors. */
    if (write(marker_fd, text, strlen(text)) < 0)
        return;
}

void pl_marker_close(void)
{
    if (marker_fd >= 0)
        close(marker_fd);
    marker_fd = -1;
}
