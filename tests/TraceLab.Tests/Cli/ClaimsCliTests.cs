using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Sweeps;
using TraceLab.Tests.Sweeps;
using TraceLab.Tests.Workloads;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Cli;

/// <summary>The real `tracelab claims`: report from a results folder, bad input, and Ctrl-C during `--run`.</summary>
public sealed class ClaimsCliTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");

    private static (int Code, string Out, string Err) Run(params string[] args)
    {
        var (code, stdout, stderr) = ProcessOutput.Run("dotnet", [Tool, .. args]);
        return (code, Regex.Replace(stdout, "\u001b\\[[0-9;]*m", ""), stderr);
    }

    private static void AssertOneLineError(int expectedCode, (int Code, string Out, string Err) r, string text)
    {
        Assert.True(r.Code == expectedCode, $"exit {r.Code}: {r.Err}\n{r.Out}");
        var lines = r.Err.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.True(lines.Length == 1, r.Err);
        Assert.StartsWith("tracelab: ", lines[0]);
        Assert.Contains(text, lines[0]);
    }

    [Fact]
    public void Report_from_a_results_folder_on_the_terminal_in_claims_md_and_in_the_markdown_file()
    {
        using var tmp = new TempDirectory("claims-cli");
        var full = Path.Combine(tmp.Path, "full");
        HandMadeResults.Write(full, "tm1", (p, r) => p.Values["which"] == "1"
            ? HandMadeResults.Elapsed(0.01 + 0.001 * r, system: 0.001)
            : HandMadeResults.Elapsed(1 + 0.01 * r, system: 0.5));
        // Measured on a 2-CPU machine (the run log says so), whatever machine runs the test.
        HandMadeResults.Log(full, cpus: 2);
        var md = tmp.File("out.md");
        var (code, stdout, err) = Run("claims", "--results", tmp.Path, "--markdown", md);
        Assert.True(code == 0, $"exit {code}: {err}\n{stdout}");
        Assert.True(Regex.IsMatch(stdout, @"TM1\s+reproduced\s+timemutex tm1\s+24/24"), stdout);
        Assert.True(Regex.IsMatch(stdout, @"TM4\s+not measured.*no: needs ≥ 4 CPUs"), stdout);
        Assert.Contains("Cannot be decided on this machine", stdout);
        var written = File.ReadAllText(Path.Combine(full, "claims.md"));
        Assert.Contains("| [TM1](claims.md#TM1) | **reproduced** |", written);
        Assert.Equal(written, File.ReadAllText(md));

        // The markdown file is not overwritten without --force, and nothing else is touched.
        AssertOneLineError(2, Run("claims", "--results", tmp.Path, "--markdown", md), "add --force");
        Assert.Equal(0, Run("claims", "--results", tmp.Path, "--markdown", md, "--force").Code);
    }

    [Fact]
    public void Bad_input_is_one_line_and_a_non_zero_exit()
    {
        using var tmp = new TempDirectory("claims-bad-cli");
        File.WriteAllText(tmp.File("file"), "x");
        AssertOneLineError(2, Run("claims", "--results", tmp.File("file")), "is a file, not a folder");
        AssertOneLineError(2, Run("claims", "--run", "--timeout", "-1", "--results", tmp.Path), "--timeout");
        AssertOneLineError(2, Run("claims", "--frobnicate"), "--frobnicate");
        var nowhere = Path.Combine(tmp.Path, "no", "such", "x.md");
        AssertOneLineError(2, Run("claims", "--results", tmp.Path, "--markdown", nowhere), "does not exist");

        Directory.CreateDirectory(Path.Combine(tmp.Path, "full", "tm4"));
        File.WriteAllText(Path.Combine(tmp.Path, "full", "tm4", "state.json"), "{\"runs\": [ {\"point\": ");
        AssertOneLineError(1, Run("claims", "--results", tmp.Path), "not a valid sweep state");
        // --run refuses the damaged folder before measuring anything, and leaves it as it was.
        AssertOneLineError(1, Run("claims", "--run", "--results", tmp.Path), "not a valid sweep state");
        Assert.False(Directory.Exists(Path.Combine(tmp.Path, "full", "tm1")));
        Assert.Equal("{\"runs\": [ {\"point\": ",
            File.ReadAllText(Path.Combine(tmp.Path, "full", "tm4", "state.json")));
    }

    [NativeToolsFact]
    public void Ctrl_c_during_a_run_keeps_every_finished_run_and_leaves_nothing_running() =>
        // Ctrl-C is SIGINT; a process started with SIGINT ignored (a background job of a non-interactive shell, as
        // test runners often are) cannot receive it, and TraceLab treats SIGTERM the same way: send that instead.
        StopARunWith(pid => SigIntIgnored(pid) ? "-TERM" : "-INT", wholeGroup: false);

    /// <summary>
    /// Closing the terminal sends SIGHUP to its foreground process group: `claims --run` and the workload it is
    /// running. Before, that ended the run where it stood, without the report (the runs already recorded were
    /// kept). Now it stops like Ctrl-C; the workload killed by the same signal is not recorded as a failed run.
    /// The run gets its own session (setsid) so the signal reaches its group and not the test's.
    /// </summary>
    [NativeToolsFact]
    public void A_closed_terminal_sighup_stops_the_run_like_ctrl_c_and_writes_the_report() =>
        StopARunWith(_ => "-HUP", wholeGroup: true);

    private static void StopARunWith(Func<int, string> signal, bool wholeGroup)
    {
        using var tmp = new TempDirectory("claims-signal");
        var psi = new ProcessStartInfo(wholeGroup ? "env" : "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        // setsid execs dotnet in place (same pid), as the leader of a new process group. A SIGHUP this test process
        // ignores (started under nohup, as a CI job or a test loop may be) would be ignored by the run as well, as
        // nohup asks: the run then keeps going and only its workload dies. So the run starts with SIGHUP at its
        // default, as a run in a terminal has it (env --default-signal, coreutils 8.31).
        if (wholeGroup)
            foreach (var a in new[] { "--default-signal=HUP", "setsid", "dotnet" }) psi.ArgumentList.Add(a);
        foreach (var a in new[] { Tool, "claims", "--run", "--quick", "--results", tmp.Path }) psi.ArgumentList.Add(a);
        using var p = Process.Start(psi)!;
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        var state = Path.Combine(tmp.Path, "quick", "tm1");
        var deadline = Stopwatch.StartNew();
        while (RecordedRuns(state) < 3 && deadline.Elapsed < TimeSpan.FromSeconds(120) && !p.HasExited)
            Thread.Sleep(100);
        Assert.True(!p.HasExited && Directory.Exists($"/proc/{p.Id}"),
            $"runs {RecordedRuns(state)} after {deadline.Elapsed}, exited {p.HasExited}");
        var sent = signal(p.Id);
        var target = (wholeGroup ? "-" : "") + p.Id.ToString(CultureInfo.InvariantCulture);
        using (var kill = Process.Start("kill", [sent, "--", target])) kill.WaitForExit();
        if (!p.WaitForExit(60_000))
        {
            // Say where it stands before ending it: no test may leave a run behind.
            var where = ProcessStates(p.Id, tmp.Path);
            using (var end = Process.Start("kill", ["-KILL", "--", target])) end.WaitForExit();
            p.WaitForExit(10_000);
            Assert.Fail($"claims --run did not stop within 60 s after {sent}: {where}\nits output:\n{stdout.Result}"
                + stderr.Result);
        }

        Assert.True(p.ExitCode == 130, $"{sent}: exit {p.ExitCode}: {stderr.Result}\n{stdout.Result}");
        Assert.Contains("interrupted: every finished run is kept", stdout.Result);
        Assert.True(RecordedRuns(state) >= 3);
        // A workload that died of the signal is not a result: no failed run.
        Assert.All(SweepStateStore.Load(state).Runs, r => Assert.True(r.Ok, r.Error));
        Assert.True(File.Exists(Path.Combine(state, "sweep.json")));
        // The report of what was measured, written after the signal.
        var report = File.ReadAllText(Path.Combine(tmp.Path, "quick", "claims.md"));
        Assert.Matches(
            @"\| \[TM1\]\(claims.md#TM1\) \| \*\*[a-z ]+\*\* \| `timemutex tm1` \| \d+ / 24 \(incomplete\)", report);
        // No workload left behind: no process still has the results folder on its command line.
        Assert.Empty(ProcessesMentioning(tmp.Path));
    }

    /// <summary>
    /// What a run that did not stop is doing: each thread's state and kernel wait channel, and every process whose
    /// command line names the results folder (the workload in flight).
    /// </summary>
    private static string ProcessStates(int pid, string resultsFolder)
    {
        // Pending, blocked, ignored and caught signals: whether the signal arrived and what the process does with it.
        var lines = Read($"/proc/{pid}", "status").Split('\n')
            .Where(l => l.StartsWith("Sig", StringComparison.Ordinal)
                || l.StartsWith("ShdPnd", StringComparison.Ordinal))
            .Select(l => l.Replace("\t", " ", StringComparison.Ordinal)).ToList();
        foreach (var task in SafeDirectories($"/proc/{pid}/task"))
            lines.Add($"thread {Path.GetFileName(task)} {Read(task, "comm")} {State(task)} in {Read(task, "wchan")}");
        foreach (var other in ProcessesMentioning(resultsFolder).Where(o => o != pid))
        {
            var cmdline = Read($"/proc/{other}", "cmdline").Replace('\0', ' ');
            lines.Add($"process {other} {State($"/proc/{other}")}: {cmdline}");
        }
        return string.Join("; ", lines);

        static string Read(string dir, string file)
        {
            try { return File.ReadAllText(Path.Combine(dir, file)).Trim(); }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { return "?"; }
        }
        static string State(string dir) =>
            Read(dir, "status").Split('\n').FirstOrDefault(l => l.StartsWith("State:", StringComparison.Ordinal))
                ?.Replace("\t", " ", StringComparison.Ordinal) ?? "gone";
        static IEnumerable<string> SafeDirectories(string dir)
        {
            try { return Directory.GetDirectories(dir); }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { return []; }
        }
    }

    /// <summary>Bit 2 (SIGINT) of the process's ignored-signal mask in /proc/PID/status.</summary>
    private static bool SigIntIgnored(int pid)
    {
        var line = File.ReadLines($"/proc/{pid}/status").First(l => l.StartsWith("SigIgn:", StringComparison.Ordinal));
        var mask = ulong.Parse(line["SigIgn:".Length..].Trim(), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        return (mask & 2) != 0;
    }

    private static int RecordedRuns(string sweepDirectory)
    {
        try { return SweepStateStore.Load(sweepDirectory).Runs.Count; }
        catch (Exception e) when (e is SweepException or IOException) { return 0; }
    }

    private static IEnumerable<int> ProcessesMentioning(string text)
    {
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out var pid)) continue;
            string cmdline;
            try { cmdline = File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' '); }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { continue; }
            if (cmdline.Contains(text, StringComparison.Ordinal)) yield return pid;
        }
    }
}
