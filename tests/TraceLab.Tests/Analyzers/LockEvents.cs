using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Tests.Analyzers;

/// <summary>Hand-built syscall events for lock tests, and a runner for analyzers that need the full pass.</summary>
internal static class LockEvents
{
    public const long S = TaskState.Interruptible, R = TaskState.Running;
    public const int FutexWait = 0 | 128, FutexWake = 1 | 128; // FUTEX_*_PRIVATE, as glibc issues them

    public static KernelEvent Enter(long ts, int cpu, int tid, int nr, long arg0, long arg1 = 0) => new()
    {
        Timestamp = ts,
        Cpu = cpu,
        CurrentTid = tid,
        Kind = KernelEventKind.SyscallEnter,
        SyscallNr = nr,
        Arg0 = arg0,
        Arg1 =
            arg1,
    };

    public static KernelEvent Exit(long ts, int cpu, int tid, int nr, long ret = 0) => new()
    {
        Timestamp = ts,
        Cpu = cpu,
        CurrentTid = tid,
        Kind = KernelEventKind.SyscallExit,
        SyscallNr = nr,
        Ret = ret,
    };

    public static KernelEvent Semop(long ts, int tid, long semid) => Enter(ts, 0, tid, LinuxSyscalls.Semtimedop, semid);
    public static KernelEvent SemopDone(long ts, int tid) => Exit(ts, 0, tid, LinuxSyscalls.Semtimedop);
    public static KernelEvent Futex(long ts, int tid, long uaddr, int op) =>
        Enter(ts, 0, tid, LinuxSyscalls.Futex, uaddr, op);
    public static KernelEvent FutexDone(long ts, int tid, long ret = 0) => Exit(ts, 0, tid, LinuxSyscalls.Futex, ret);

    /// <summary>
    /// Runs <paramref name="analyzer"/> (built from the pass's accounting) over the events, in order, and completes it.
    /// </summary>
    public static T Run<T>(Func<ThreadAccounting, T> analyzer, params KernelEvent[] events) where T : IKernelAnalyzer
    {
        var accounting = new ThreadAccounting();
        var a = analyzer(accounting);
        var pass = new AnalysisPass(accounting, a);
        long last = long.MinValue;
        foreach (var e in events)
        {
            if (e.Timestamp < last) throw new InvalidOperationException($"test script out of order at {e}");
            last = e.Timestamp;
            pass.OnEvent(e);
        }
        pass.Complete();
        return a;
    }
}
