using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Waits;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// Wait classes from blocking stacks (docs/metrics.md#wait-stack-tags): the tags' matching, the default tags on
/// stacks as perf and TraceLab name them, and the move of tagged intervals in a hand-built trace.
/// </summary>
public sealed class WaitStackTagsTests
{
    private const int A = 10, B = 11, C = 12, E = 14, H = 17;
    private const long Mutex = 0x1000, Cond = 0x2000;
    private const int EpollWait = 232, Nanosleep = 35;
    private const int MutexStack = 1, CondStack = 2, EpollStack = 3, SleepStack = 4;

    [Theory]
    [InlineData("*pthread_mutex_lock*", "pthread_mutex_lock", true)]
    [InlineData("*pthread_mutex_lock*", "___pthread_mutex_lock", true)]
    [InlineData("*pthread_mutex_lock*", "__pthread_mutex_lock_full", true)]
    [InlineData("*pthread_mutex_lock*", "pthread_mutex_unlock", false)]
    [InlineData("ProcSleep", "ProcSleep", true)]
    [InlineData("ProcSleep", "ProcSleepX", false)]
    [InlineData("__mutex_lock*", "__mutex_lock.constprop.0", true)]
    [InlineData("*ObjectMonitor*enter*", "_ZN13ObjectMonitor5enterEP10JavaThread", true)]
    [InlineData("a*b*c", "aXbYbZc", true)]
    [InlineData("a*b*c", "aXbYcZ", false)]
    public void A_tag_matches_a_function_name_as_a_glob(string pattern, string name, bool matches) =>
        Assert.Equal(matches, new WaitStackTag(pattern, WaitClass.Lock).Matches(name));

    /// <summary>
    /// Stacks as TraceLab names them (innermost first; glibc with libc6-dbg, PostgreSQL 15, kernel 6.x): the first
    /// tagged frame from the inside decides, and a condition variable's wait, which may be a lock's queue or an idle
    /// worker, is left to the trace's rules unless a caller further out is tagged.
    /// </summary>
    [Theory]
    [InlineData("lock", "ProcSleep", "__schedule", "schedule_hrtimeout_range", "do_epoll_wait", "epoll_wait",
        "WaitEventSetWait", "WaitLatch", "ProcSleep", "LockAcquireExtended", "XactLockTableWait", "heap_update")]
    [InlineData("io", "secure_read", "__schedule", "do_epoll_wait", "epoll_wait", "WaitEventSetWait",
        "secure_read", "pq_recvbuf", "pq_getbyte", "PostgresMain")]
    [InlineData("lock", "*lll_lock_wait*", "__schedule", "futex_wait", "__GI___lll_lock_wait",
        "___pthread_mutex_lock", "update_stats", "stats_worker", "start_thread")]
    [InlineData("lock", "*lll_lock_wait*", "futex_wait", "__GI___lll_lock_wait",
        "__pthread_mutex_cond_lock", "__pthread_cond_wait_common", "___pthread_cond_wait", "worker")]
    [InlineData(null, null, "__schedule", "futex_wait", "__futex_abstimed_wait_common",
        "__pthread_cond_wait_common", "___pthread_cond_wait", "pool_worker", "start_thread")]
    [InlineData("lock", "rwsem_down_read_slowpath", "__schedule", "rwsem_down_read_slowpath",
        "lock_mm_and_find_vma", "exc_page_fault", "asm_exc_page_fault", "memcpy")]
    [InlineData("memory", "handle_mm_fault", "__schedule", "io_schedule", "folio_wait_bit_common",
        "filemap_fault", "__do_fault", "handle_mm_fault", "exc_page_fault")]
    [InlineData(null, null, "__schedule", "do_nanosleep", "clock_nanosleep", "main")]
    // HotSpot (OpenJDK 17, Debian's libjvm.so): a contended `synchronized`, Object.wait(), the monitor re-entered
    // after a notify, and a compiler thread's idle wait on a VM-internal Monitor (no tag: the rules decide).
    [InlineData("lock", "*ObjectMonitor*EnterI*", "__schedule", "futex_wait", "__futex_abstimed_wait_common",
        "___pthread_cond_wait", "_ZN2os13PlatformEvent4parkEv", "_ZN13ObjectMonitor6EnterIEP10JavaThread",
        "_ZN13ObjectMonitor5enterEP10JavaThread", "_ZN18ObjectSynchronizer5enterE6HandleP9BasicLockP10JavaThread")]
    [InlineData("condition", "*ObjectMonitor*4wait*", "__schedule", "futex_wait", "___pthread_cond_wait",
        "_ZN2os13PlatformEvent4parkEl", "_ZN13ObjectMonitor4waitElbP10JavaThread",
        "_ZN18ObjectSynchronizer4waitE6HandlelP10JavaThread", "JVM_MonitorWait")]
    [InlineData("lock", "*ObjectMonitor*ReenterI*", "__schedule", "futex_wait", "___pthread_cond_wait",
        "_ZN2os13PlatformEvent4parkEv", "_ZN13ObjectMonitor8ReenterIEP10JavaThreadP13ObjectWaiter",
        "_ZN13ObjectMonitor4waitElbP10JavaThread", "JVM_MonitorWait")]
    [InlineData(null, null, "__schedule", "futex_wait", "___pthread_cond_timedwait", "_ZN2os15PlatformMonitor4waitEl",
        "_ZN7Monitor4waitEl", "_ZN12CompileQueue3getEv", "_ZN13CompileBroker20compiler_thread_loopEv")]
    // MariaDB 10.11 (Debian's mariadbd under sysbench oltp_update_non_index, trace --stacks): a connection waiting
    // for its commit's pending operations before it answers, and one waiting for its client's next query.
    [InlineData("commit", "net_real_write", "__schedule", "futex_wait", "__futex_abstimed_wait_common",
        "__pthread_cond_wait_common", "pthread_cond_wait@@GLIBC_2.3.2", "net_real_write", "net_flush",
        "Protocol::net_send_ok", "Protocol::end_statement", "dispatch_command", "do_command")]
    [InlineData("io", "vio_io_wait", "__schedule", "do_sys_poll", "__poll", "vio_io_wait", "vio_socket_io_wait",
        "vio_read", null, "my_net_read_packet_reallen", "my_net_read_packet", "do_command")]
    // A blocked socket write under net_real_write is io: the socket's frames are inside and found first.
    [InlineData("io", "vio_io_wait", "__schedule", "do_sys_poll", "__poll", "vio_io_wait", "vio_socket_io_wait",
        "vio_write", "net_real_write", "net_flush", "Protocol::net_send_ok")]
    // InnoDB's latch in commit (a futex syscall of its own, static functions unnamed): left to the trace's rules.
    [InlineData(null, null, "__schedule", "futex_wait", "syscall", null, null, null, null, null, "ha_commit_trans",
        "trans_commit_stmt", "mysql_execute_command")]
    // The same stacks as the symbolizer names them, demangled as perf script prints them.
    [InlineData("lock", "*ObjectMonitor*EnterI*", "__schedule", "futex_wait", "___pthread_cond_wait",
        "os::PlatformEvent::park", "ObjectMonitor::EnterI", "ObjectMonitor::enter", "ObjectSynchronizer::enter")]
    [InlineData("condition", "*ObjectMonitor::wait*", "__schedule", "futex_wait", "___pthread_cond_wait",
        "os::PlatformEvent::park", "ObjectMonitor::wait", "ObjectSynchronizer::wait", "JVM_MonitorWait")]
    [InlineData("lock", "*ObjectMonitor*ReenterI*", "__schedule", "futex_wait", "___pthread_cond_wait",
        "os::PlatformEvent::park", "ObjectMonitor::ReenterI", "ObjectMonitor::wait", "JVM_MonitorWait")]
    [InlineData(null, null, "__schedule", "futex_wait", "___pthread_cond_timedwait", "os::PlatformMonitor::wait",
        "Monitor::wait", "CompileQueue::get", "CompileBroker::compiler_thread_loop")]
    // .NET, JIT frames named from the runtime's perf map (libcoreclr's own frames have no names).
    [InlineData("lock", "*System.Threading.Monitor::Enter*", "__schedule", "futex_wait", "___pthread_cond_wait",
        null, null, "void [System.Private.CoreLib] System.Threading.Monitor::Enter(class System.Object)[Optimized]",
        "void [app] Program::Worker()[Optimized]")]
    [InlineData("lock", "*System.Threading.Lock::TryEnter*", "__schedule", "futex_wait", null,
        "instance bool [System.Private.CoreLib] System.Threading.Lock::TryEnterSlow(int32,int32)[Optimized]")]
    [InlineData("condition", "*System.Threading.Monitor::Wait*", "__schedule", "futex_wait", null,
        "bool [System.Private.CoreLib] System.Threading.Monitor::Wait(class System.Object,int32)[Optimized]")]
    [InlineData("sleep", "*System.Threading.Thread::Sleep*", "__schedule", "do_nanosleep", null,
        "void [System.Private.CoreLib] System.Threading.Thread::Sleep(int32)[Optimized]")]
    public void The_first_tagged_frame_from_the_inside_decides(string? cls, string? tag, params string?[] frames)
    {
        var tagged = WaitStackTags.Default.ClassOf([null, .. frames]);
        Assert.Equal(cls, tagged is { } t ? WaitClasses.Name(t.Class) : null);
        Assert.Equal(tag, tagged?.Tag.Pattern);
    }

    [Fact]
    public void A_tag_file_is_read_line_by_line_and_its_tags_go_before_the_shipped_ones()
    {
        var tags = WaitStackTags.Parse("# my program's locks\n\nlock   MyMutex::lock*  # the slow path\n" +
            "condition\tWorkQueue::pop\r\nio secure_read\n", "my.tags");
        Assert.Equal([new WaitStackTag("MyMutex::lock*", WaitClass.Lock),
            new WaitStackTag("WorkQueue::pop", WaitClass.Condition), new WaitStackTag("secure_read", WaitClass.Io)],
            tags);
        var set = WaitStackTags.Default.With(tags);
        Assert.Equal(WaitStackTags.Default.Tags.Count + 3, set.Tags.Count);
        Assert.Equal(WaitClass.Condition, set.ClassOf(["futex_wait", "WorkQueue::pop", "worker"])?.Class);
        Assert.Null(WaitStackTags.Default.ClassOf(["futex_wait", "WorkQueue::pop", "worker"]));
        // On the same frame the user's tag wins over the shipped one.
        var mine = WaitStackTags.Default.With([new WaitStackTag("ProcSleep", WaitClass.Condition)]);
        Assert.Equal(WaitClass.Condition, mine.ClassOf(["epoll_wait", "ProcSleep"])?.Class);
        Assert.Same(WaitStackTags.Default, WaitStackTags.Default.With([]));
    }

    [Theory]
    [InlineData("locks MyMutex::lock", "my.tags:1: expected a class (lock, condition, io, commit, sleep, memory, " +
        "unknown) and one function name pattern, not 'locks MyMutex::lock'")]
    [InlineData("# ok\nlock", "my.tags:2: expected a class")]
    [InlineData("lock a b", "my.tags:1: expected a class")]
    public void A_bad_tag_line_is_refused_with_its_file_and_line(string text, string message)
    {
        var e = Assert.Throws<FormatException>(() => WaitStackTags.Parse(text, "my.tags"));
        Assert.StartsWith(message, e.Message, StringComparison.Ordinal);
    }

    private static KernelEvent In(long ts, int tid) => KernelEvent.Switch(ts, tid - 10, 0, 120, R, tid, 120);

    private static KernelEvent Out(long ts, int tid, int stack) =>
        KernelEvent.Switch(ts, tid - 10, tid, 120, S, 0, 120).WithStack(stack);

    private static KernelEvent Sys(long ts, int tid, int nr, long arg0 = 0, long arg1 = 0) =>
        Enter(ts, tid - 10, tid, nr, arg0, arg1);

    private static KernelEvent Ret(long ts, int tid, int nr, long ret = 0) => Exit(ts, tid - 10, tid, nr, ret);

    /// <summary>
    /// A and B take turns on a mutex (lock, stack tagged lock: no move); C waits 4,000 ns on a condition A signals
    /// (condition by the trace's rules; its stack tagged lock: moved, object and thread); E's epoll_wait ends in the
    /// network softirq after 6,000 ns (io; tagged lock: moved); H sleeps 8,000 ns with an untagged stack (stays).
    /// </summary>
    private static WaitClassAnalyzer Analyze()
    {
        KernelEvent[] events =
        [
            In(1000, A), In(1000, B), In(1000, C), In(1000, E), In(1000, H),
            Sys(2000, A, LinuxSyscalls.Futex, Mutex, FutexWait),
            Sys(2000, C, LinuxSyscalls.Futex, Cond, FutexWait),
            Sys(2000, E, EpollWait),
            Sys(2000, H, Nanosleep),
            Out(2100, A, MutexStack), Out(2100, C, CondStack), Out(2100, E, EpollStack), Out(2100, H, SleepStack),
            Sys(3000, B, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(3100, 1, B, A, 0),
            Ret(3200, B, LinuxSyscalls.Futex),
            In(3300, A), Ret(3400, A, LinuxSyscalls.Futex),
            Sys(4000, B, LinuxSyscalls.Futex, Mutex, FutexWait),
            Out(4100, B, MutexStack),
            Sys(5000, A, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(5100, 0, A, B, 1),
            Ret(5200, A, LinuxSyscalls.Futex),
            In(5300, B), Ret(5400, B, LinuxSyscalls.Futex),
            Sys(6000, A, LinuxSyscalls.Futex, Cond, FutexWake),
            KernelEvent.Waking(6100, 0, A, C, 2),
            Ret(6200, A, LinuxSyscalls.Futex),
            In(6300, C), Ret(6400, C, LinuxSyscalls.Futex),
            KernelEvent.Waking(8100, 4, 0, E, 4).WithFlags(EventFlags.SoftIrq),
            In(8200, E), Ret(8300, E, EpollWait, 1),
            KernelEvent.Waking(10100, 7, 0, H, 7).WithFlags(EventFlags.HardIrq),
            In(10200, H), Ret(10300, H, Nanosleep),
            Out(13000, A, 0),
        ];
        var accounting = new ThreadAccounting();
        var waits = new WaitClassAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, waits);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return waits;
    }

    private static (WaitClass, string)? Tags(int stack) => stack switch
    {
        MutexStack or CondStack or EpollStack => (WaitClass.Lock, "tag" + stack),
        _ => null,
    };

    [Fact]
    public void Tagged_intervals_move_to_the_tags_class_in_threads_and_objects()
    {
        var waits = Analyze();
        var cond = new LockObject(LockObjectKind.Futex, Cond, LockObject.PerProcess);
        // Before: the trace's rules.
        Assert.Equal(4000, waits.Threads[C].Ns(WaitClass.Condition));
        Assert.Equal(6000, waits.Threads[E].Ns(WaitClass.Io));
        Assert.True(waits.IsNotALock(cond));

        var outcome = waits.ApplyStackTags(Tags);

        Assert.Equal(4000, waits.Threads[C].Ns(WaitClass.Lock));
        Assert.Equal(0, waits.Threads[C].Ns(WaitClass.Condition));
        Assert.Equal(1, waits.Threads[C].Waits(WaitClass.Lock));
        Assert.Equal(6000, waits.Threads[E].Ns(WaitClass.Lock));
        Assert.Equal(0, waits.Threads[E].Ns(WaitClass.Io));
        // The wake source stays: the softirq still ended E's wait.
        Assert.Equal(6000, waits.Threads[E].SourceNs(WakeSource.SoftIrq));
        Assert.Equal(8000, waits.Threads[H].Ns(WaitClass.Sleep));
        Assert.Equal(1000, waits.Threads[A].Ns(WaitClass.Lock));
        Assert.False(waits.IsNotALock(cond));

        Assert.Equal([(C, WaitClass.Condition, WaitClass.Lock, "tag2", 4000L, 1L),
            (E, WaitClass.Io, WaitClass.Lock, "tag3", 6000L, 1L)],
            outcome.Moves.Select(m => (m.Tid, m.From, m.To, m.Tag, m.Ns, m.Waits)));
        Assert.Equal(new WaitStackFigures(8000, 1, 0), outcome.Threads[H]);
        Assert.Equal(new WaitStackFigures(1000, 1, 1000), outcome.Threads[A]);
        Assert.Same(outcome, waits.StackOutcome);
        Assert.Throws<InvalidOperationException>(() => waits.ApplyStackTags(Tags));
    }

    [Fact]
    public void Without_stacks_nothing_is_tagged()
    {
        var waits = new WaitClassAnalyzer(new ThreadAccounting());
        waits.Complete(0);
        var outcome = waits.ApplyStackTags(_ => (WaitClass.Lock, "any"));
        Assert.Empty(outcome.Moves);
        Assert.Empty(outcome.Threads);
    }
}
