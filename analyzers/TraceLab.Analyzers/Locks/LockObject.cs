using System.Globalization;

namespace TraceLab.Analyzers.Locks;

public enum LockObjectKind : byte
{
    /// <summary>A futex word (its user-space address; per process for private futexes).</summary>
    Futex,
    /// <summary>A System V semaphore set (semid).</summary>
    SysVSemaphore,
    /// <summary>A file descriptor a thread blocks in read on (eventfd, pipe): per process.</summary>
    FileDescriptor,
    /// <summary>
    /// No syscall names the object (ETW without SystemCall, or no lock syscalls captured): the process's threads waking
    /// each other.
    /// </summary>
    Inferred,
    /// <summary>
    /// A lock found through its wake chain (docs/metrics.md#wake-chains): waiters parked on objects of their own,
    /// released one after another by the previous holder; <see cref="LockObject.Id"/> numbers the chain.
    /// </summary>
    WakeChain,
}

/// <summary>
/// What a wait was for: the identity the kernel gives the object in the syscall that waits on it. Objects private to a
/// process carry it: a private futex is (process, address) and a file descriptor (process, fd), so equal addresses in
/// two processes (forked workers have the same layout) stay two objects. A shared futex (its address is a key the
/// kernel resolves to the shared page) and a System V semaphore set are system-wide: <see cref="Process"/> 0.
/// </summary>
/// <param name="Process">Owning process; 0: system-wide; <see cref="PerProcess"/>: per process, but the trace does not
/// say which (named by its number alone).</param>
public readonly record struct LockObject(LockObjectKind Kind, long Id, int Process = 0)
{
    /// <summary>Placeholder <see cref="Process"/>: the object is per process; the analyzer knows which.</summary>
    public const int PerProcess = -1;

    public override string ToString() => Kind switch
    {
        LockObjectKind.Futex => "futex 0x" + Id.ToString("x", CultureInfo.InvariantCulture) + Scope(),
        LockObjectKind.SysVSemaphore => "sysv-sem " + Id.ToString(CultureInfo.InvariantCulture) + " (system-wide)",
        LockObjectKind.FileDescriptor => "fd " + Id.ToString(CultureInfo.InvariantCulture) + Scope(),
        LockObjectKind.WakeChain => "wake chain " + Id.ToString(CultureInfo.InvariantCulture),
        _ => "inferred (process " + Id.ToString(CultureInfo.InvariantCulture) + ")",
    };

    private string Scope() => Process > 0 ? " (pid " + Process.ToString(CultureInfo.InvariantCulture) + ")"
        : Process == 0 ? " (shared)" : "";
}
