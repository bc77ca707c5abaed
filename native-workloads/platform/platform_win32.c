/*
 * Win32 implementation of the platform layer: the seeds' own objects, used
 * directly, so the Windows build reproduces the original programs.
 */
#include "platform.h"

#include <evntprov.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- errors */

const char *pl_last_error_text(void)
{
    static _Thread_local char buf[256];
    DWORD code = GetLastError();
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                             NULL, code, 0, buf, sizeof buf, NULL);
    if (n == 0) {
        snprintf(buf, sizeof buf, "Win32 error %lu", (unsigned long)code);
        return buf;
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return buf;
}

static pl_object_info handle_info(const char *kind, HANDLE h)
{
    pl_object_info info = { kind, "handle", 1, (uint64_t)(uintptr_t)h };
    return info;
}

static int wait_ok(HANDLE h)
{
    /* An abandoned mutex is still acquired; the seed treated it as success. */
    DWORD rc = WaitForSingleObject(h, INFINITE);
    return rc == WAIT_OBJECT_0 || rc == WAIT_ABANDONED ? 0 : -1;
}

/* --------------------------------------------------------------- threads */

struct trampoline {
    pl_thread_fn fn;
    void *arg;
};

static unsigned __stdcall thread_start(void *p)
{
    struct trampoline t = *(struct trampoline *)p;
    free(p);
    t.fn(t.arg);
    return 0;
}

int pl_thread_create(pl_thread *t, pl_thread_fn fn, void *arg)
{
    struct trampoline *tr = malloc(sizeof *tr);
    if (tr == NULL) {
        SetLastError(ERROR_NOT_ENOUGH_MEMORY);
        return -1;
    }
    tr->fn = fn;
    tr->arg = arg;
    /* _beginthreadex rather than CreateThread so the C runtime is set up for
     * the thread, exactly as the seed does. */
    uintptr_t h = _beginthreadex(NULL, 0, thread_start, tr, 0, NULL);
    if (h == 0) {
        free(tr);
        return -1;
    }
    t->handle = (HANDLE)h;
    return 0;
}

int pl_thread_join(pl_thread *t)
{
    if (WaitForSingleObject(t->handle, INFINITE) != WAIT_OBJECT_0)
        return -1;
    CloseHandle(t->handle);
    t->handle = NULL;
    return 0;
}

long pl_current_tid(void)
{
    return (long)GetCurrentThreadId();
}

long pl_current_pid(void)
{
    return (long)GetCurrentProcessId();
}

void pl_yield(void)
{
    Sleep(0);
}

void pl_cleanup_on_signals(void)
{
}

/* ------------------------------------------------ recursive user lock */

int pl_cs_init(pl_cs *cs)
{
    InitializeCriticalSection(&cs->cs);
    return 0;
}

int pl_cs_enter(pl_cs *cs)
{
    EnterCriticalSection(&cs->cs);
    return 0;
}

void pl_cs_leave(pl_cs *cs)
{
    LeaveCriticalSection(&cs->cs);
}

void pl_cs_destroy(pl_cs *cs)
{
    DeleteCriticalSection(&cs->cs);
}

pl_object_info pl_cs_info(const pl_cs *cs)
{
    pl_object_info info = { "critical-section", "address", 1, (uint64_t)(uintptr_t)&cs->cs };
    return info;
}

/* ------------------------------------------------------- kernel mutex */

int pl_kmutex_init(pl_kmutex *m)
{
    m->handle = CreateMutexA(NULL, FALSE, NULL);
    return m->handle == NULL ? -1 : 0;
}

int pl_kmutex_lock(pl_kmutex *m)
{
    return wait_ok(m->handle);
}

int pl_kmutex_unlock(pl_kmutex *m)
{
    return ReleaseMutex(m->handle) ? 0 : -1;
}

void pl_kmutex_destroy(pl_kmutex *m)
{
    if (m->handle != NULL)
        CloseHandle(m->handle);
    m->handle = NULL;
}

pl_object_info pl_kmutex_info(const pl_kmutex *m)
{
    return handle_info("win32-mutex", m->handle);
}

/* ------------------------------------------------------ auto-reset event */

int pl_event_init(pl_event *e, int initially_set)
{
    e->handle = CreateEventA(NULL, FALSE, initially_set ? TRUE : FALSE, NULL);
    return e->handle == NULL ? -1 : 0;
}

int pl_event_wait(pl_event *e)
{
    return wait_ok(e->handle);
}

int pl_event_set(pl_event *e)
{
    return SetEvent(e->handle) ? 0 : -1;
}

void pl_event_destroy(pl_event *e)
{
    if (e->handle != NULL)
        CloseHandle(e->handle);
    e->handle = NULL;
}

pl_object_info pl_event_info(const pl_event *e)
{
    return handle_info("win32-event", e->handle);
}

/* ---------------------------------------------------- binary semaphore */

int pl_binsem_init(pl_binsem *s, int initial)
{
    s->handle = CreateSemaphoreA(NULL, initial, 1, NULL);
    return s->handle == NULL ? -1 : 0;
}

int pl_binsem_wait(pl_binsem *s)
{
    return wait_ok(s->handle);
}

int pl_binsem_post(pl_binsem *s)
{
    return ReleaseSemaphore(s->handle, 1, NULL) ? 0 : -1;
}

void pl_binsem_destroy(pl_binsem *s)
{
    if (s->handle != NULL)
        CloseHandle(s->handle);
    s->handle = NULL;
}

pl_object_info pl_binsem_info(const pl_binsem *s)
{
    return handle_info("win32-semaphore", s->handle);
}

/* ------------------------------------------------------ gating semaphore */

int pl_gate_init(pl_gate *g, unsigned initial)
{
    /* Maximum = initial count, as in the seed; Win32 rejects a maximum of 0. */
    LONG max = initial > 0 ? (LONG)initial : 1;
    g->handle = CreateSemaphoreA(NULL, (LONG)initial, max, NULL);
    return g->handle == NULL ? -1 : 0;
}

int pl_gate_wait(pl_gate *g)
{
    return wait_ok(g->handle);
}

int pl_gate_post(pl_gate *g)
{
    return ReleaseSemaphore(g->handle, 1, NULL) ? 0 : -1;
}

void pl_gate_destroy(pl_gate *g)
{
    if (g->handle != NULL)
        CloseHandle(g->handle);
    g->handle = NULL;
}

pl_object_info pl_gate_info(const pl_gate *g)
{
    return handle_info("win32-semaphore", g->handle);
}

/* ---------------------------------------------------- counting semaphore */

int pl_sem_init(pl_sem *s, unsigned initial, unsigned max)
{
    s->handle = CreateSemaphoreA(NULL, (LONG)initial, (LONG)(max > 0 ? max : 1), NULL);
    return s->handle == NULL ? -1 : 0;
}

int pl_sem_wait(pl_sem *s)
{
    return wait_ok(s->handle);
}

int pl_sem_trywait(pl_sem *s)
{
    DWORD rc = WaitForSingleObject(s->handle, 0);
    return rc == WAIT_OBJECT_0 ? 1 : rc == WAIT_TIMEOUT ? 0 : -1;
}

int pl_sem_post(pl_sem *s)
{
    return ReleaseSemaphore(s->handle, 1, NULL) ? 0 : -1;
}

void pl_sem_destroy(pl_sem *s)
{
    if (s->handle != NULL)
        CloseHandle(s->handle);
    s->handle = NULL;
}

pl_object_info pl_sem_info(const pl_sem *s)
{
    return handle_info("win32-semaphore", s->handle);
}

/* --------------------------------------------------------- stop event */

int pl_stop_init(pl_stop *s)
{
    s->handle = CreateEventA(NULL, TRUE, FALSE, NULL);
    return s->handle == NULL ? -1 : 0;
}

int pl_stop_set(pl_stop *s)
{
    return SetEvent(s->handle) ? 0 : -1;
}

int pl_stop_is_set(pl_stop *s)
{
    DWORD rc = WaitForSingleObject(s->handle, 0);
    return rc == WAIT_OBJECT_0 ? 1 : rc == WAIT_TIMEOUT ? 0 : -1;
}

void pl_stop_destroy(pl_stop *s)
{
    if (s->handle != NULL)
        CloseHandle(s->handle);
    s->handle = NULL;
}

pl_object_info pl_stop_info(const pl_stop *s)
{
    return handle_info("win32-event", s->handle);
}

int pl_wait_event_or_stop(pl_event *e, pl_stop *s)
{
    HANDLE handles[2] = { s->handle, e->handle };
    DWORD rc = WaitForMultipleObjects(2, handles, FALSE, INFINITE);
    return rc == WAIT_OBJECT_0 ? 1 : rc == WAIT_OBJECT_0 + 1 ? 0 : -1;
}

/* ------------------------------------------------------------------ time */

int64_t pl_monotonic_ns(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER now;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    /* Split to avoid overflowing 64 bits when multiplying by 1e9. */
    int64_t f = freq.QuadPart, c = now.QuadPart;
    return (c / f) * 1000000000 + (c % f) * 1000000000 / f;
}

void pl_sleep_ms(int ms)
{
    Sleep((DWORD)ms);
}

static int64_t filetime_ns(FILETIME ft)
{
    ULARGE_INTEGER u;
    u.LowPart = ft.dwLowDateTime;
    u.HighPart = ft.dwHighDateTime;
    return (int64_t)u.QuadPart * 100;
}

int pl_thread_times(pl_times *out)
{
    FILETIME created, exited, kernel, user;
    if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user))
        return -1;
    out->user_ns = filetime_ns(user);
    out->system_ns = filetime_ns(kernel);
    out->voluntary_switches = -1;
    out->involuntary_switches = -1;
    return 0;
}

int pl_process_times(pl_times *out)
{
    FILETIME created, exited, kernel, user;
    if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
        return -1;
    out->user_ns = filetime_ns(user);
    out->system_ns = filetime_ns(kernel);
    out->voluntary_switches = -1;
    out->involuntary_switches = -1;
    return 0;
}

/* ------------------------------------------------------------ scheduling */

int pl_set_affinity(const int *cpus, int count)
{
    DWORD_PTR mask = 0;
    for (int i = 0; i < count; i++) {
        if (cpus[i] < 0 || cpus[i] >= (int)(8 * sizeof mask)) {
            SetLastError(ERROR_INVALID_PARAMETER);
            return -1;
        }
        mask |= (DWORD_PTR)1 << cpus[i];
    }
    return SetProcessAffinityMask(GetCurrentProcess(), mask) ? 0 : -1;
}

int pl_set_priority(int nice)
{
    DWORD cls = nice <= -15 ? HIGH_PRIORITY_CLASS
              : nice < 0    ? ABOVE_NORMAL_PRIORITY_CLASS
              : nice == 0   ? NORMAL_PRIORITY_CLASS
              : nice < 15   ? BELOW_NORMAL_PRIORITY_CLASS
                            : IDLE_PRIORITY_CLASS;
    return SetPriorityClass(GetCurrentProcess(), cls) ? 0 : -1;
}

int pl_get_priority(void)
{
    /* A representative nice value for each class; the mapping is not 1:1. */
    switch (GetPriorityClass(GetCurrentProcess())) {
    case REALTIME_PRIORITY_CLASS:     return -20;
    case HIGH_PRIORITY_CLASS:         return -15;
    case ABOVE_NORMAL_PRIORITY_CLASS: return -5;
    case BELOW_NORMAL_PRIORITY_CLASS: return 5;
    case IDLE_PRIORITY_CLASS:         return 19;
    default:                          return 0;
    }
}

/* --------------------------------------------------------------- markers */

/* {6b1e5b9a-3f0e-4c55-9a2e-7d1f0c3a5e11}, provider name "TraceLab-Workload". */
static const GUID marker_provider = {
    0x6b1e5b9a, 0x3f0e, 0x4c55, { 0x9a, 0x2e, 0x7d, 0x1f, 0x0c, 0x3a, 0x5e, 0x11 }
};
static REGHANDLE marker_handle;

int pl_marker_open(const char *path)
{
    (void)path;
    if (EventRegister(&marker_provider, NULL, NULL, &marker_handle) != ERROR_SUCCESS) {
        marker_handle = 0;
        return -1;
    }
    return 0;
}

void pl_marker_write(const char *text)
{
    wchar_t wide[256];
    if (marker_handle == 0)
        return;
    if (MultiByteToWideChar(CP_UTF8, 0, text, -1, wide, (int)(sizeof wide / sizeof wide[0])) == 0)
        return;
    EventWriteString(marker_handle, 0, 0, wide);
}

void pl_marker_close(void)
{
    if (marker_handle != 0)
        EventUnregister(marker_handle);
    marker_handle = 0;
}
