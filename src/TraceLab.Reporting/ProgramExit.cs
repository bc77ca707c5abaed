using System.Globalization;

namespace TraceLab.Reporting;

/// <summary>
/// A run whose program failed: `trace -- PROGRAM` reports whatever the program did, so a report of a program that
/// exited early (a wrong argument, a crash) must say so at its top, or its few events read as a calm run.
/// </summary>
public static class ProgramExit
{
    /// <summary>
    /// "exit code 1: …", or "exit code 139 = 128 + 11 (SIGSEGV): …" for a program a signal ended (the form .NET and
    /// the shell give it); null when the run exited with 0, was interrupted (its code is then not the program's) or
    /// has no run section (`analyze` of a trace TraceLab did not record).
    /// </summary>
    public static string? Describe(RunReport report)
    {
        if (report.Run is not { ExitCode: not 0 and var code } || report.Capture.Partial) return null;
        var signal = code - 128;
        var how = signal is > 0 and <= 64
            ? string.Create(CultureInfo.InvariantCulture,
                $"exit code {code} = 128 + {signal} ({SignalName(signal)}): a signal ended the program")
            : string.Create(CultureInfo.InvariantCulture, $"exit code {code}: the program failed");
        return how + "; the report covers only what it did until then";
    }

    private static string SignalName(int signal) => signal switch
    {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => string.Create(CultureInfo.InvariantCulture, $"signal {signal}"),
    };
}
