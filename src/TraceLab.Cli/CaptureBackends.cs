using TraceLab.Capture.Linux;
using TraceLab.Capture.Windows;
using TraceLab.Core.Capture;

namespace TraceLab.Cli;

/// <summary>Picks the capture backend for the OS TraceLab runs on: ETW on Windows, tracefs elsewhere.</summary>
public static class CaptureBackends
{
    public static ICaptureBackend ForThisMachine() => For(OperatingSystem.IsWindows());

    public static ICaptureBackend For(bool windows) => windows ? new EtwCaptureBackend() : new TracefsCaptureBackend();

    public static CaptureSyscalls Syscalls(SyscallSet set) => set switch
    {
        SyscallSet.None => CaptureSyscalls.None,
        SyscallSet.Lock => CaptureSyscalls.Lock,
        SyscallSet.Waits => CaptureSyscalls.Waits,
        SyscallSet.All => CaptureSyscalls.All,
        _ => throw new ArgumentOutOfRangeException(nameof(set)),
    };
}
