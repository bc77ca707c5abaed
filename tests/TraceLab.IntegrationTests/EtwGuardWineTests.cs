using System.Diagnostics;
using System.Globalization;
using System.Text;
using TraceLab.TestSupport;
using Xunit;
using Xunit.Abstractions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The ETW guard as Windows runs it: the real TraceLab, published for win-x64 (self-contained), started as
/// `tracelab.exe __etw-guard OWNER` under wine, reading a pipe whose write end another process holds. That process
/// is SIGKILLed, as TraceLab would be; the guard must see the end of the pipe, act on exactly its owner's session,
/// and exit. ETW itself does not run under wine (its advapi32 has no EnumerateTraceGuidsEx, and its
/// ControlTrace/QueryAllTraces are stubs): the stop the guard issues fails there, and that failure line is what shows
/// it issued it for the right session. Stopping a real session is checked by the Windows workflow.
/// </summary>
public sealed class EtwGuardWineTests(ITestOutputHelper output)
{
    private const int Owner = 4242;

    [WineFact]
    public void Under_wine_the_guard_acts_on_its_owners_session_once_the_pipe_holder_is_killed()
    {
        // Everything the test makes (the win-x64 build, ~0.3 GB, and the wine prefix, ~0.7 GB) lives in this one
        // directory, deleted when the test ends; a process-exit hook did not run under the test host and left
        // a gigabyte per run behind.
        using var dir = new TempDirectory("tracelab-wine-guard");
        var exe = WineTraceLab.Publish(dir.File("winx64"));
        var prefix = WineTraceLab.CreatePrefix(dir.File("prefix"));
        var holderPid = dir.File("holder.pid");
        // The holder (standing for TraceLab) writes the guard's commands, then sleeps holding the pipe's write end.
        var script = $"sh -c 'echo $$ > {holderPid}; echo \"w TraceLab-{Owner}-run-1\"; " +
            $"echo \"w TraceLab-777-other-run\"; exec sleep 600' | {WineTraceLab.Wine} {exe} __etw-guard {Owner}; " +
            "echo \"guard exit $?\" >&2";
        var psi = new ProcessStartInfo("sh") { RedirectStandardError = true, RedirectStandardOutput = true };
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(script);
        psi.Environment["WINEPREFIX"] = prefix;
        psi.Environment["WINEDEBUG"] = "-all";
        using var sh = Process.Start(psi)!;
        var stderr = new StringBuilder();
        sh.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (stderr) stderr.AppendLine(e.Data); };
        sh.OutputDataReceived += (_, _) => { };
        sh.BeginErrorReadLine();
        sh.BeginOutputReadLine();
        string Err() { lock (stderr) return stderr.ToString(); }
        try
        {
            // The guard has read both lines once it refused the other owner's session (wine starts slowly).
            Processes.WaitFor(() => Err().Contains("ignored 'w TraceLab-777-other-run'", StringComparison.Ordinal)
                ? "" : null, TimeSpan.FromSeconds(120), "the guard under wine to read its commands: " + Err());
            Assert.DoesNotContain("guard exit", Err(), StringComparison.Ordinal);
            var holder = int.Parse(File.ReadAllText(holderPid).Trim(), CultureInfo.InvariantCulture);

            var clock = Stopwatch.StartNew();
            Process.GetProcessById(holder).Kill();
            Assert.True(sh.WaitForExit(30_000), "the guard did not exit after the pipe's holder was killed: " + Err());
            sh.WaitForExit();
            var text = Err();
            output.WriteLine($"guard under wine exited {clock.Elapsed.TotalMilliseconds:0} ms after SIGKILL of the " +
                $"pipe's holder (load {File.ReadAllText("/proc/loadavg").Trim()}):\n{text}");
            Assert.Contains("guard exit 0", text, StringComparison.Ordinal);
            // Acted on its owner's session — the stop itself cannot succeed without ETW — and on nothing else.
            Assert.Contains($"ETW session TraceLab-{Owner}-run-1", text, StringComparison.Ordinal);
            Assert.DoesNotContain("ETW session TraceLab-777", text, StringComparison.Ordinal);
        }
        finally
        {
            if (!sh.HasExited) sh.Kill(entireProcessTree: true);
            WineTraceLab.StopServer(prefix);
        }
    }
}

/// <summary>TraceLab published for win-x64, and a wine prefix that reports Windows 10, each in a directory the
/// caller owns and deletes.</summary>
internal static class WineTraceLab
{
    public static string Wine =>
        File.Exists("/usr/lib/wine/wine64") ? "/usr/lib/wine/wine64" : TestEnvironment.OnPath("wine64") ? "wine64"
            : "wine";

    /// <summary>
    /// `dotnet publish` into <paramref name="root"/>, with its own obj/bin (the repository's are untouched).
    /// </summary>
    public static string Publish(string root)
    {
        var publish = ProcessOutput.Run("dotnet", "publish", Path.Combine(RepoPaths.Root, "src", "TraceLab.Cli"),
            "-r", "win-x64", "--self-contained", "-c", "Release", "--artifacts-path", Path.Combine(root, "artifacts"),
            "-o", Path.Combine(root, "out"), "-v", "q");
        Assert.True(publish.ExitCode == 0, $"win-x64 publish failed: {publish.Stdout}{publish.Stderr}");
        return Path.Combine(root, "out", "tracelab.exe");
    }

    /// <summary>TraceEvent refuses Windows versions before 10, which is what a new wine prefix reports.</summary>
    public static string CreatePrefix(string prefix)
    {
        Directory.CreateDirectory(prefix);
        Assert.True(RunInPrefix(prefix, Wine, ["winecfg", "/v", "win10"], 180_000), "wine prefix setup timed out");
        return prefix;
    }

    private static readonly string[] WineServers = ["/usr/lib/wine/wineserver64", "/usr/lib/wine/wineserver"];

    /// <summary>Stops the prefix's wineserver (it lingers after the last wine process, holding the prefix open),
    /// so nothing the test started keeps running and the prefix can be deleted.</summary>
    public static void StopServer(string prefix)
    {
        try
        {
            RunInPrefix(prefix, WineServers.FirstOrDefault(File.Exists) ?? "wineserver", ["-k"], 30_000);
        }
        catch (System.ComponentModel.Win32Exception) { } // no wineserver binary: nothing of wine is left running
    }

    /// <summary>Runs a wine program quietly in <paramref name="prefix"/>; false (and killed) if it outlasted the
    /// timeout.</summary>
    private static bool RunInPrefix(string prefix, string file, string[] args, int timeoutMs)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var a in args) psi.ArgumentList.Add(a);
        psi.Environment["WINEPREFIX"] = prefix;
        psi.Environment["WINEDEBUG"] = "-all";
        using var p = Process.Start(psi)!;
        p.StandardOutput.ReadToEndAsync();
        p.StandardError.ReadToEndAsync();
        if (p.WaitForExit(timeoutMs)) return true;
        p.Kill(entireProcessTree: true);
        return false;
    }
}

/// <summary>Needs Linux and wine (to run the win-x64 build); skipped with the reason otherwise.</summary>
public sealed class WineFactAttribute : FactAttribute
{
    private const string NoWine =
        "wine not installed (apt-get install -y wine64): the win-x64 guard cannot be run here";

    public WineFactAttribute()
    {
        if (TestEnvironment.LinuxProcessesReason() is { } linux) Skip = linux;
        else if (!File.Exists("/usr/lib/wine/wine64") && !TestEnvironment.OnPath("wine64")
            && !TestEnvironment.OnPath("wine"))
            Skip = NoWine;
    }
}
