using System.Diagnostics;
using System.Globalization;
using TraceLab.Cli;
using TraceLab.Reporting;

namespace TraceLab.IntegrationTests;

/// <summary>
/// System-wide perf.data captures of a busy machine, compared with what perf itself says of the same file: which
/// process each thread belongs to (a process that started before the recording, so no FORK record says it).
/// </summary>
public sealed class PerfProcessCaptureTests
{
    private readonly ITestOutputHelper _output;

    public PerfProcessCaptureTests(ITestOutputHelper output) => _output = output;

    /// <summary>
    /// `sysbench threads --threads=4` starts, then `perf record -e 'sched:*' -a -- sleep 1` records while it runs: its
    /// five threads are one process with sysbench's pid, as `perf script -F pid,tid` shows them.
    /// </summary>
    [PerfProgramFact("sysbench")]
    public void Threads_of_a_process_older_than_the_recording_are_one_process_with_perfs_pid()
    {
        using var dir = new TempDirectory("tracelab-perf-pid");
        var perfData = Path.Combine(dir.Path, "older.perf.data");
        using var sysbench = Process.Start(new ProcessStartInfo("sysbench")
        {
            ArgumentList = { "threads", "--threads=4", "--time=6", "run" },
            RedirectStandardOutput = true, UseShellExecute = false,
        })!;
        try
        {
            // Its worker threads exist before perf starts.
            var deadline = DateTime.UtcNow.AddSeconds(5);
            while (Directory.GetDirectories($"/proc/{sysbench.Id}/task").Length < 5 && DateTime.UtcNow < deadline)
                Thread.Sleep(50);
            var (code, _, err) = ProcessOutput.Run("perf", "record", "-q", "-m", "16M", "-o", perfData, "-a", "-e",
                "sched:*", "--", "sleep", "1");
            Assert.True(code == 0, $"perf record exited {code}: {err}");
        }
        finally
        {
            if (!sysbench.HasExited) sysbench.Kill();
            sysbench.WaitForExit();
        }

        // perf's own view: pid and tid of every sample.
        var perfPid = new Dictionary<int, int>();
        foreach (var line in ProcessOutput.Lines("perf", "script", "-i", perfData, "-F", "pid,tid"))
        {
            var parts = line.Trim().Split('/', StringSplitOptions.TrimEntries);
            if (parts.Length == 2 && int.TryParse(parts[0], CultureInfo.InvariantCulture, out var pid)
                && int.TryParse(parts[1], CultureInfo.InvariantCulture, out var tid) && tid > 0)
                perfPid[tid] = pid;
        }
        var sysbenchTids = perfPid.Where(kv => kv.Value == sysbench.Id).Select(kv => kv.Key).Order().ToList();
        _output.WriteLine($"sysbench pid {sysbench.Id}: perf script tids {string.Join(", ", sysbenchTids)}");
        Assert.True(sysbenchTids.Count >= 4, $"perf script shows {sysbenchTids.Count} sysbench threads");

        var report = AnalysisPipeline.Analyze(perfData, workload: null, run: null, partial: false, pid: null);
        var process = report.Processes.Single(p => p.Pid == sysbench.Id);
        var reported = report.Threads.Where(t => t.Pid == sysbench.Id).Select(t => t.Tid).Order().ToList();
        _output.WriteLine($"TraceLab: process {process.Pid} {process.Name}, {process.ThreadCount} threads: " +
            string.Join(", ", reported));
        Assert.Equal("sysbench", process.Name);
        Assert.Equal(sysbenchTids.Where(t => report.Threads.Any(r => r.Tid == t)), reported);
        Assert.True(process.ThreadCount >= 4, $"{process.ThreadCount} threads in sysbench's process");
        // Every user thread is reported under perf's pid (kernel threads are one group, pid 2).
        var wrong = report.Threads.Where(t => t.Pid != ProcessGrouping.KernelThreadsPid
            && perfPid.TryGetValue(t.Tid, out var pid) && pid != t.Pid).Select(t => $"{t.Tid}: {t.Pid}").ToList();
        Assert.True(wrong.Count == 0, "threads under another process than perf's: " + string.Join("; ", wrong));
    }
}
