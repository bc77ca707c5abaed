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
    /// <summary>No syscall names the object (ETW without SystemCall, or no lock syscalls captured): the process's threads waking each other.</summary>
    Inferred,
}

/// <summary>What a wait was for: the identity the kernel gives the object in the syscall that waits on it.</summary>
public readonly record struct LockObject(LockObjectKind Kind, long Id)
{
    public override string ToString() => Kind switch
    {
        LockObjectKind.Futex => "futex 0x" + Id.ToString("x", CultureInfo.InvariantCulture),
        LockObjectKind.SysVSemaphore => "sysv-sem " + Id.ToString(CultureInfo.InvariantCulture),
        LockObjectKind.FileDescriptor => "fd " + Id.ToString(CultureInfo.InvariantCulture),
        _ => "inferred (process " + Id.ToString(CultureInfo.InvariantCulture) + ")",
    };
}
