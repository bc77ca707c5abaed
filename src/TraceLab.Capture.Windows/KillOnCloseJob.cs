using System.ComponentModel;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;

namespace TraceLab.Capture.Windows;

/// <summary>
/// A Windows job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE whose only handle TraceLab holds (not inheritable):
/// when TraceLab exits — TerminateProcess included — the handle closes and Windows kills every process in the job.
/// It holds the processes themselves, not their ids, so a pid reused after the workload exited is never touched.
/// Processes a workload starts after it was added are in the job too (a job's children inherit it).
/// </summary>
[SupportedOSPlatform("windows")]
public sealed partial class KillOnCloseJob : IProcessJob
{
    private const int JobObjectExtendedLimitInformation = 9;
    private const uint JobObjectLimitKillOnJobClose = 0x2000;
    private const uint ProcessSetQuota = 0x0100;
    private const uint ProcessTerminate = 0x0001;

    private readonly SafeFileHandle _job;

    public KillOnCloseJob()
    {
        _job = CreateJobObjectW(IntPtr.Zero, null);
        if (_job.IsInvalid) throw new Win32Exception(Marshal.GetLastPInvokeError(), "CreateJobObject failed");
        var limits = new ExtendedLimitInformation { LimitFlags = JobObjectLimitKillOnJobClose };
        if (!SetInformationJobObject(_job, JobObjectExtendedLimitInformation, ref limits,
                (uint)Marshal.SizeOf<ExtendedLimitInformation>()))
        {
            var error = Marshal.GetLastPInvokeError();
            _job.Dispose();
            throw new Win32Exception(error, "SetInformationJobObject(KILL_ON_JOB_CLOSE) failed");
        }
    }

    public void Add(int pid)
    {
        using var process = OpenProcess(ProcessSetQuota | ProcessTerminate, false, (uint)pid);
        // Gone already: nothing to take down.
        if (process.IsInvalid) return;
        if (!AssignProcessToJobObject(_job, process))
            throw new Win32Exception(Marshal.GetLastPInvokeError(), $"AssignProcessToJobObject({pid}) failed");
    }

    /// <summary>Closing the last handle kills what is still in the job (normally nothing: the run ended it).</summary>
    public void Dispose() => _job.Dispose();

    // JOBOBJECT_EXTENDED_LIMIT_INFORMATION: the basic limits, IO counters, then four SIZE_T memory fields.
    [StructLayout(LayoutKind.Sequential)]
    private struct ExtendedLimitInformation
    {
        public long PerProcessUserTimeLimit;
        public long PerJobUserTimeLimit;
        public uint LimitFlags;
        public nuint MinimumWorkingSetSize;
        public nuint MaximumWorkingSetSize;
        public uint ActiveProcessLimit;
        public nuint Affinity;
        public uint PriorityClass;
        public uint SchedulingClass;
        public ulong ReadOperationCount;
        public ulong WriteOperationCount;
        public ulong OtherOperationCount;
        public ulong ReadTransferCount;
        public ulong WriteTransferCount;
        public ulong OtherTransferCount;
        public nuint ProcessMemoryLimit;
        public nuint JobMemoryLimit;
        public nuint PeakProcessMemoryUsed;
        public nuint PeakJobMemoryUsed;
    }

    [LibraryImport("kernel32.dll", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    private static partial SafeFileHandle CreateJobObjectW(IntPtr attributes, string? name);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool SetInformationJobObject(SafeFileHandle job, int infoClass,
        ref ExtendedLimitInformation info, uint length);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    private static partial SafeFileHandle OpenProcess(uint access, [MarshalAs(UnmanagedType.Bool)] bool inherit,
        uint pid);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool AssignProcessToJobObject(SafeFileHandle job, SafeFileHandle process);
}
