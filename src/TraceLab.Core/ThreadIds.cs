namespace TraceLab.Core;

/// <summary>
/// TraceLab's thread ids. The kernel reuses a tid once its thread has exited; a trace of a busy system holds several
/// threads with the same tid. The first thread with a tid keeps it as its id; the k-th (k ≥ 2) gets
/// <c>(k − 1) · 2^22 + tid</c> (<see cref="ThreadInstanceMap"/>). Linux tids stay below 2^22 (PID_MAX_LIMIT), so
/// the id alone says both the kernel's tid and which thread of that tid it is (docs/metrics.md, "Thread instances").
/// </summary>
public static class ThreadIds
{
    /// <summary>Bits of the kernel's tid in an id: Linux's PID_MAX_LIMIT is 2^22.</summary>
    public const int TidBits = 22;

    /// <summary>Ids of later threads of a tid start here; tids at or above it are never split.</summary>
    public const int FirstLaterInstance = 1 << TidBits;

    /// <summary>The most threads one tid is split into; later reuses stay with the last one.</summary>
    public const int MaxInstances = int.MaxValue / FirstLaterInstance;

    private const int TidMask = FirstLaterInstance - 1;

    /// <summary>
    /// The id of the <paramref name="instance"/>-th thread (1-based) that had <paramref name="tid"/>.
    /// </summary>
    public static int Of(int tid, int instance) => instance <= 1 ? tid : ((instance - 1) << TidBits) | tid;

    /// <summary>The kernel's tid of a thread id.</summary>
    public static int KernelTid(int id) => id >= FirstLaterInstance ? id & TidMask : id;

    /// <summary>Which thread with its tid the id is (1 = the first, or the only one).</summary>
    public static int Instance(int id) => id >= FirstLaterInstance ? (id >> TidBits) + 1 : 1;

    /// <summary>How reports show an id: the tid, with "#k" for the k-th thread that had it ("1234#2").</summary>
    public static string Display(int id) =>
        id >= FirstLaterInstance ? $"{KernelTid(id)}#{Instance(id)}"
            : id.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
