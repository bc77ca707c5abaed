using System.Diagnostics;

namespace TraceLab.Capture.Windows;

/// <summary>
/// The TraceLab side of the ETW guard: a second TraceLab process (<see cref="EtwGuardLoop.Subcommand"/>) reading a
/// pipe whose only write end this process holds (.NET makes the parent's end non-inheritable, so no other child
/// keeps it open). When TraceLab exits, however it dies, Windows closes that handle, the guard's read ends, and it
/// stops every session still watched — in milliseconds, not at the next run's stale sweep. The guard gets its own
/// (hidden) console, so Ctrl-C in TraceLab's console does not reach it.
/// </summary>
public sealed class EtwSessionGuard : IEtwGuard
{
    private readonly Core.Capture.GuardPipe _pipe;

    // Stopping a session can take seconds on a busy machine: wait longer than the Linux guard.
    private EtwSessionGuard(Process process) =>
        _pipe = new Core.Capture.GuardPipe(process, TimeSpan.FromSeconds(5));

    public int Pid => _pipe.Pid;

    /// <summary>Starts the guard for sessions named after <paramref name="ownerPid"/>.</summary>
    /// <param name="self">How to start this TraceLab again (<see cref="SelfCommand.Current"/>).</param>
    public static EtwSessionGuard Start(SelfCommand self, int ownerPid)
    {
        var psi = new ProcessStartInfo(self.FileName)
        {
            RedirectStandardInput = true,
            // Its lines are for diagnosis only; redirected so it holds none of TraceLab's own output handles.
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            CreateNoWindow = true,
            WorkingDirectory = Path.GetTempPath(),
        };
        foreach (var a in self.Arguments) psi.ArgumentList.Add(a);
        psi.ArgumentList.Add(EtwGuardLoop.Subcommand);
        psi.ArgumentList.Add(ownerPid.ToString(System.Globalization.CultureInfo.InvariantCulture));
        try
        {
            var p = Process.Start(psi)
                ?? throw new Core.Capture.CaptureUnavailableException($"cannot start the ETW guard ({self.FileName})");
            p.StandardInput.AutoFlush = true;
            // Drained so a chatty guard can never block on a full pipe.
            p.OutputDataReceived += (_, _) => { };
            p.ErrorDataReceived += (_, _) => { };
            p.BeginOutputReadLine();
            p.BeginErrorReadLine();
            return new EtwSessionGuard(p);
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            throw new Core.Capture.CaptureUnavailableException(
                $"cannot start the ETW guard {self.FileName}: {ex.Message}", ex);
        }
    }

    public void Watch(string sessionName) => Send($"{EtwGuardLoop.WatchCommand} {sessionName}");

    public void Forget(string sessionName) => Send($"{EtwGuardLoop.ForgetCommand} {sessionName}");

    private void Send(string line) => _pipe.Send(line);

    /// <summary>Closes the pipe (the guard then cleans whatever is left and exits) and waits briefly for it.</summary>
    public void Dispose() => _pipe.Dispose();
}

/// <summary>
/// How to start the running TraceLab again: its executable, plus the entry assembly under `dotnet x.dll`.
/// </summary>
public sealed record SelfCommand(string FileName, IReadOnlyList<string> Arguments)
{
    /// <summary>
    /// The apphost / single-file executable / tool shim runs as itself; `dotnet tracelab.dll` (host named dotnet)
    /// needs the dll again. The dll is named from the application's directory and the entry assembly's name, not
    /// <c>Assembly.Location</c>, which is empty in a single-file or Native AOT build (where it is not needed).
    /// </summary>
    public static SelfCommand Current() =>
        For(Environment.ProcessPath ?? throw new InvalidOperationException("the TraceLab executable is unknown"),
            System.Reflection.Assembly.GetEntryAssembly()?.GetName().Name is { } name
                ? Path.Combine(AppContext.BaseDirectory, name + ".dll")
                : null);

    public static SelfCommand For(string processPath, string? entryAssembly)
    {
        // Either separator: the path is a Windows one whatever OS the logic is tested on.
        var file = processPath[(processPath.LastIndexOfAny(['/', '\\']) + 1)..];
        var host = file.EndsWith(".exe", StringComparison.OrdinalIgnoreCase) ? file[..^4] : file;
        return string.Equals(host, "dotnet", StringComparison.OrdinalIgnoreCase) && !string.IsNullOrEmpty(entryAssembly)
            ? new SelfCommand(processPath, [entryAssembly])
            : new SelfCommand(processPath, []);
    }
}
