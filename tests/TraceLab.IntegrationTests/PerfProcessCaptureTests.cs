using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Analyzers;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;

namespace TraceLab.IntegrationTests;

/// <summary>
/// System-wide perf.data captures of a busy machine, compared with what perf itself says of the same file: which
/// process each thread belongs to (a process that started before the recording, so no FORK record says it), and
/// the lost events per CPU when the buffers overflow.
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
            RedirectStandardOutput = true,
            UseShellExecute = false,
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

        var report = TraceAnalysis.Analyze(perfData, workload: null, pid: null);
        var process = report.Processes.Single(p => p.Pid == sysbench.Id);
        var reported = report.Threads.Where(t => t.Pid == sysbench.Id).Select(t => t.Tid).Order().ToList();
        _output.WriteLine($"TraceLab: process {process.Pid} {process.Name}, {process.ThreadCount} threads: " +
            string.Join(", ", reported));
        Assert.Equal("sysbench", process.Name);
        Assert.Equal(sysbenchTids.Where(t => report.Threads.Any(r => r.Tid == t)), reported);
        Assert.True(process.ThreadCount >= 4, $"{process.ThreadCount} threads in sysbench's process");
        // Every user thread is reported under perf's pid (kernel threads are one group, pid 2).
        var wrong = report.Threads.Where(t => t.Pid != ProcessLineage.KernelThreadsPid
            && perfPid.TryGetValue(t.Tid, out var pid) && pid != t.Pid).Select(t => $"{t.Tid}: {t.Pid}").ToList();
        Assert.True(wrong.Count == 0, "threads under another process than perf's: " + string.Join("; ", wrong));
    }

    /// <summary>
    /// One-page buffers overflow under `stress-ng --switch`: per CPU, TraceLab's lost count is the larger of perf's
    /// LOST and LOST_SAMPLES records on that CPU, as perf prints them (`perf report -D`). A LOST record is placed
    /// by the kernel on its CPU; a LOST_SAMPLES record perf record writes with CPU 0 and only its event id, whose
    /// CPU is the id's place in the event's id list (`perf report --header-only`) — a rule the test first checks on
    /// every LOST record, which carries both its CPU and its id.
    /// </summary>
    [PerfProgramFact("stress-ng")]
    public void Lost_events_per_cpu_match_perfs_own_records()
    {
        using var dir = new TempDirectory("tracelab-perf-lost");
        var perfData = Path.Combine(dir.Path, "lossy.perf.data");
        var (code, _, err) = ProcessOutput.Run("perf", "record", "-q", "-m", "1", "-o", perfData, "-a", "-e",
            "sched:*", "--", "stress-ng", "--switch", "2", "-t", "1", "-q");
        Assert.True(code == 0, $"perf record exited {code}: {err}");

        var cpuOfId = new Dictionary<ulong, int>();
        foreach (var line in ProcessOutput.Lines("perf", "report", "--header-only", "-i", perfData))
        {
            var ids = Regex.Match(line, @"^# event : .*\bid = \{ ([0-9, ]+) \}");
            if (!ids.Success) continue;
            var list = ids.Groups[1].Value.Split(',', StringSplitOptions.TrimEntries);
            for (var i = 0; i < list.Length; i++) cpuOfId[ulong.Parse(list[i], CultureInfo.InvariantCulture)] = i;
        }

        var lost = new long[Environment.ProcessorCount];
        var lostSamples = new long[Environment.ProcessorCount];
        long lostRecords = 0, misplaced = 0;
        var lostLine = new Regex(@"^(\d+) \d+ 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_LOST: id:(\d+): lost:(\d+)");
        var samplesLine = new Regex(@"\]: PERF_RECORD_LOST_SAMPLES: id:(\d+): lost samples :(\d+)");
        foreach (var line in ProcessOutput.Lines("perf", "report", "-D", "-i", perfData))
        {
            if (!line.Contains("PERF_RECORD_LOST", StringComparison.Ordinal)) continue;
            if (lostLine.Match(line) is { Success: true } l)
            {
                var cpu = int.Parse(l.Groups[1].Value, CultureInfo.InvariantCulture);
                lostRecords++;
                if (cpuOfId[ulong.Parse(l.Groups[2].Value, CultureInfo.InvariantCulture)] != cpu) misplaced++;
                lost[cpu] += long.Parse(l.Groups[3].Value, CultureInfo.InvariantCulture);
            }
            else if (samplesLine.Match(line) is { Success: true } s)
            {
                lostSamples[cpuOfId[ulong.Parse(s.Groups[1].Value, CultureInfo.InvariantCulture)]] +=
                    long.Parse(s.Groups[2].Value, CultureInfo.InvariantCulture);
            }
        }
        var expected = lost.Zip(lostSamples, Math.Max).ToArray();
        _output.WriteLine($"perf: LOST records {lostRecords} ({misplaced} not on their id's CPU), per CPU " +
            $"{string.Join(" / ", lost)}; LOST_SAMPLES per CPU {string.Join(" / ", lostSamples)}");

        var report = TraceAnalysis.Analyze(perfData, workload: null, pid: null,
            analyses: AnalysisSelection.Threads);
        _output.WriteLine($"TraceLab: lost {report.Capture.LostEvents:N0}, per CPU " +
            string.Join(" / ", report.Capture.LostEventsPerCpu ?? []));

        Assert.True(lostSamples.Sum() > 0, "one-page buffers were expected to overflow");
        Assert.True(lostRecords > 0 && misplaced == 0, $"{misplaced} of {lostRecords} LOST records off their id's CPU");
        Assert.Equal(expected, report.Capture.LostEventsPerCpu);
    }
}
