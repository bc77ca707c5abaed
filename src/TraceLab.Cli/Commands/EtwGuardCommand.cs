using TraceLab.Capture.Windows;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab __etw-guard OWNER_PID`: not for users. The process the ETW backend starts next to a run
/// (<see cref="EtwSessionGuard"/>): it stops the run's sessions when the run's TraceLab dies.
/// </summary>
internal static class EtwGuardCommand
{
    public static bool Matches(IReadOnlyList<string> args) => args.Count > 0 && args[0] == EtwGuardLoop.Subcommand;

    public static int Run(IReadOnlyList<string> args)
    {
        if (EtwGuardLoop.ParseOwner(args.Skip(1).ToList()) is not { } owner)
        {
            Console.Error.WriteLine($"tracelab: {EtwGuardLoop.Subcommand} takes the owner pid (internal command)");
            return ExitCodes.Usage;
        }
        if (!OperatingSystem.IsWindows())
        {
            Console.Error.WriteLine("tracelab: the ETW guard runs on Windows only");
            return ExitCodes.Failure;
        }
        // Its own console already keeps Ctrl-C away; a console it shares by accident must not end it either.
        Console.CancelKeyPress += (_, e) => e.Cancel = true;
        EtwGuardLoop.Run(Console.In, owner, new TraceEventSessionController(), Console.Error);
        return ExitCodes.Ok;
    }
}
