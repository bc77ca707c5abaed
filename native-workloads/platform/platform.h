/*
 * Platform layer shared by all TraceLab workloads.
 *
 * Each primitive is chosen so that its kernel footprint matches the Win32 object
 * it stands in for: a trace of the Linux build must show the same pattern of
 * kernel entries (or absence of them) that the seed programs show on Windows.
 * The object types are concrete (not opaque) so workloads can embed them and
 * report their addresses/ids, which is how a trace analyser finds them again.
 *
 * All functions that can fail return 0 on success and -1 on failure; on POSIX
 * errno says why, on Win32 GetLastError() does (pl_last_error_text covers both).
 */
#ifndef TRACELAB_PLATFORM_H
#define TRACELAB_PLATFORM_H

#include <stdint.h>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

typedef struct { HANDLE handle; } pl_thread;
typedef struct { CRITICAL_SECTION cs; } pl_cs;
typedef struct { HANDLE handle; } pl_kmutex;
typedef struct { HANDLE handle; } pl_event;
typedef struct { HANDLE handle; } pl_binsem;
typedef struct { HANDLE handle; } pl_gate;
typedef struct { HANDLE handle; } pl_sem;
typedef struct { HANDLE handle; } pl_stop;
#else
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

typedef struct { pthread_t id; } pl_thread;
typedef struct { pthread_mutex_t mutex; } pl_cs;
typedef struct {
    int semid;
    /* Only the owner ever stores its own tid here, so a relaxed read by any
     * other thread can never mistake itself for the owner. */
    atomic_long owner;
    unsigned long depth;
} pl_kmutex;
typedef struct { int fd; } pl_event;
typedef struct { int semid; } pl_binsem;
typedef struct { sem_t sem; } pl_gate;
typedef struct { sem_t sem; } pl_sem;
typedef struct { int fd; } pl_stop;
#endif

/* How a synchronisation object can be recognised in a trace. Exactly one
 * identifier applies: "address"/"handle" are printed as hex strings,
 * "id"/"fd" as JSON numbers. */
typedef struct {
    const char *kind;   /* "futex", "sysv-sem", "eventfd", "critical-section", ... */
    const char *key;    /* "address", "handle", "id" or "fd" */
    int hex;            /* nonzero: value is an address/handle (hex string) */
    uint64_t value;
} pl_object_info;

typedef struct {
    int64_t user_ns;
    int64_t system_ns;
    int64_t voluntary_switches;   /* -1 where the OS does not report it */
    int64_t involuntary_switches; /* -1 where the OS does not report it */
} pl_times;

typedef void (*pl_thread_fn)(void *arg);

/* Threads */
int pl_thread_create(pl_thread *t, pl_thread_fn fn, void *arg);
int pl_thread_join(pl_thread *t);
long pl_current_tid(void);
long pl_current_pid(void);
void pl_yield(void);

/* Recursive user-space lock: no kernel entry unless contended. */
int pl_cs_init(pl_cs *cs);
int pl_cs_enter(pl_cs *cs);
void pl_cs_leave(pl_cs *cs);
void pl_cs_destroy(pl_cs *cs);
pl_object_info pl_cs_info(const pl_cs *cs);

/* Recursive kernel mutex: every acquire and release enters the kernel. */
int pl_kmutex_init(pl_kmutex *m);
int pl_kmutex_lock(pl_kmutex *m);
int pl_kmutex_unlock(pl_kmutex *m);
void pl_kmutex_destroy(pl_kmutex *m);
pl_object_info pl_kmutex_info(const pl_kmutex *m);

/* Auto-reset event: a wait consumes the signal; every wait and set enters the kernel. */
int pl_event_init(pl_event *e, int initially_set);
int pl_event_wait(pl_event *e);
int pl_event_set(pl_event *e);
void pl_event_destroy(pl_event *e);
pl_object_info pl_event_info(const pl_event *e);

/* Binary kernel semaphore without owner (no undo on process exit). */
int pl_binsem_init(pl_binsem *s, int initial);
int pl_binsem_wait(pl_binsem *s);
int pl_binsem_post(pl_binsem *s);
void pl_binsem_destroy(pl_binsem *s);
pl_object_info pl_binsem_info(const pl_binsem *s);

/* Counting semaphore used to gate how many threads run at once. */
int pl_gate_init(pl_gate *g, unsigned initial);
int pl_gate_wait(pl_gate *g);
int pl_gate_post(pl_gate *g);
void pl_gate_destroy(pl_gate *g);
pl_object_info pl_gate_info(const pl_gate *g);

/* Counting semaphore with an explicit maximum (Win32 semaphore / POSIX sem_t).
 * pl_sem_trywait returns 1 if it took a unit, 0 if none was available. */
int pl_sem_init(pl_sem *s, unsigned initial, unsigned max);
int pl_sem_wait(pl_sem *s);
int pl_sem_trywait(pl_sem *s);
int pl_sem_post(pl_sem *s);
void pl_sem_destroy(pl_sem *s);
pl_object_info pl_sem_info(const pl_sem *s);

/* Manual-reset "stop" event: once set it stays set. pl_stop_is_set polls it
 * with a zero timeout, a system call on both platforms, as the seeds'
 * WaitForSingleObject(hStop, 0) is. Linux: an eventfd that is never read. */
int pl_stop_init(pl_stop *s);
int pl_stop_set(pl_stop *s);
int pl_stop_is_set(pl_stop *s);       /* 1 set, 0 not set, -1 error */
void pl_stop_destroy(pl_stop *s);
pl_object_info pl_stop_info(const pl_stop *s);

/* WaitForMultipleObjects({stop, event}, FALSE, INFINITE): returns 1 when the
 * stop event is set (checked first, like WAIT_OBJECT_0), 0 when the
 * auto-reset event was signaled (the signal is consumed), -1 on error.
 * Linux: poll() on both eventfds, then read() the event. Only one thread may
 * wait on the event this way. */
int pl_wait_event_or_stop(pl_event *e, pl_stop *s);

/* Removes kernel objects that would outlive the process (SysV semaphores) when
 * it is interrupted by SIGINT/SIGTERM/SIGHUP; a no-op on Win32. */
void pl_cleanup_on_signals(void);

/* Time */
int64_t pl_monotonic_ns(void);
void pl_sleep_ms(int ms);             /* Sleep(ms) / nanosleep, resumed after signals */
int pl_thread_times(pl_times *out);   /* calling thread */
int pl_process_times(pl_times *out);

/* Scheduling; both must be called before any thread is created so that the
 * threads inherit the setting. */
int pl_set_affinity(const int *cpus, int count);
int pl_set_priority(int nice);        /* -20..19 */
int pl_get_priority(void);

/* Trace markers. Linux: path names a tracefs trace_marker, NULL disables
 * markers. Win32: path is ignored and an ETW provider is always registered,
 * because writing to an unlistened provider costs next to nothing. */
int pl_marker_open(const char *path);
void pl_marker_write(const char *text);
void pl_marker_close(void);

/* Text for the most recent failure of a platform call on this thread. */
const char *pl_last_error_text(void);

#endif
