using TraceLab.Core;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// The transitions of lock operations as <see cref="LockOperationTracker"/> decides them, for the analyses built on
/// them (convoys, findings evidence). Each call comes while the tracker handles the event <c>e</c>, before any
/// analyzer of the pass sees that event, with <c>op</c> already in its new phase (an exit: still in the operation).
/// Implement only the ones needed and name them when subscribing (<see cref="LockOperationTracker.Subscribe"/>).
/// </summary>
public interface ILockOperationObserver
{
    /// <summary><paramref name="op"/>'s thread entered a syscall on a lock object (<c>e</c>: the entry).</summary>
    void OnEntered(ThreadLockOperation op, in KernelEvent e)
    {
    }

    /// <summary>The first voluntary switch-out inside <paramref name="op"/> (<c>e</c>: the switch).</summary>
    void OnBlocked(ThreadLockOperation op, in KernelEvent e)
    {
    }

    /// <summary>
    /// <paramref name="op"/>'s syscall returns (<c>e</c>: the exit); <see cref="ThreadLockOperation.Kind"/> is cleared
    /// after every observer has seen it.
    /// </summary>
    void OnExiting(ThreadLockOperation op, in KernelEvent e)
    {
    }

    /// <summary>
    /// An inferred wait (no lock syscalls in the trace) ran after its release: the lock was handed over
    /// (<c>e</c>: the switch-in). The release is cleared after every observer has seen it.
    /// </summary>
    void OnInferredAcquired(ThreadLockOperation op, in KernelEvent e)
    {
    }
}

/// <summary>The transitions an <see cref="ILockOperationObserver"/> subscribes to.</summary>
[Flags]
public enum LockTransitions
{
    None = 0,
    /// <summary><see cref="ILockOperationObserver.OnEntered"/>.</summary>
    Entered = 1,
    /// <summary><see cref="ILockOperationObserver.OnBlocked"/>.</summary>
    Blocked = 2,
    /// <summary><see cref="ILockOperationObserver.OnExiting"/>.</summary>
    Exiting = 4,
    /// <summary><see cref="ILockOperationObserver.OnInferredAcquired"/>.</summary>
    InferredAcquired = 8,
}
