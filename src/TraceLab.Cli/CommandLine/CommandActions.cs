using System.CommandLine;
using TraceLab.Capture.Linux;
using TraceLab.Core;
using TraceLab.Core.Capture;
using TraceLab.Sweeps;
using TraceLab.Workloads;

namespace TraceLab.Cli.CommandLine;

/// <summary>Sets a command's action so that every failure reaches the user as one line and an exit code.</summary>
internal static class CommandActions
{
    public static void Set(Command command, Func<ParseResult, CancellationToken, Task<int>> action) =>
        command.SetAction((result, token) => Guard(() => action(result, token)));

    public static void Set(Command command, Func<ParseResult, int> action) =>
        command.SetAction((result, _) => Guard(() => Task.FromResult(action(result))));

    /// <summary>Maps every failure to one line on stderr and an exit code, never a stack trace.</summary>
    internal static async Task<int> Guard(Func<Task<int>> action)
    {
        try
        {
            return await action();
        }
        catch (UsageException ex)
        {
            return Fail(ex.Message, ExitCodes.Usage);
        }
        catch (Exception ex) when (IsEnvironmentOrInput(ex))
        {
            return Fail(ex.Message, ExitCodes.Failure);
        }
        catch (OperationCanceledException)
        {
            return Fail("interrupted", ExitCodes.Interrupted);
        }
        catch (Exception ex)
        {
            if (Environment.GetEnvironmentVariable("TRACELAB_DEBUG") == "1") Console.Error.WriteLine(ex);
            return Fail($"internal error: {ex.GetType().Name}: {ex.Message} (set TRACELAB_DEBUG=1 for details)",
                ExitCodes.Failure);
        }
    }

    /// <summary>Failures whose message is written for the user: the machine, the workload or the input file.</summary>
    private static bool IsEnvironmentOrInput(Exception ex) => ex is WorkloadException or SweepException
        or TracingUnavailableException or CaptureUnavailableException or TraceFormatException or IOException
        or UnauthorizedAccessException or PlatformNotSupportedException;

    /// <summary>Writes `tracelab: MESSAGE` as one line (a message that quotes input may hold line breaks).</summary>
    internal static int Fail(string message, int code)
    {
        Console.Error.WriteLine($"tracelab: {SweepException.OneLine(message)}");
        return code;
    }
}
