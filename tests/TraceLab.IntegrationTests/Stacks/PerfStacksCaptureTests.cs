using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Symbols;
using TraceLab.Reporting.Stacks;
using TraceLab.Reporting.Tables;

namespace TraceLab.IntegrationTests.Stacks;

/// <summary>
/// perf record works here (<see cref="PerfEnvironment"/>), and gcc and nm are installed; else skipped.
/// </summary>
public sealed class PerfStacksFactAttribute : FactAttribute
{
    public PerfStacksFactAttribute()
    {
        var reason = PerfEnvironment.Reason.Value;
        if (reason is null && (!TestEnvironment.OnPath("gcc") || !TestEnvironment.OnPath("nm")))
            reason = "gcc and nm not installed (apt-get install -y build-essential)";
        if (reason is not null) Skip = reason;
    }
}

/// <summary>
/// A C program written for this test (a contended global mutex, a contended heap mutex, an uncontended static one;
/// Stacks/lock_sites.c), built with Debian's default flags (no frame pointers) and recorded by perf itself
/// (perf record -g on sched and futex tracepoints): TraceLab's frames are compared with perf script's on the same
/// file (the same addresses, perf printing a frame in a file mapping as its module offset, and the same function
/// names where perf names one), and its lock names with nm's symbol containing each futex address.
/// </summary>
public sealed partial class PerfStacksCaptureTests : IDisposable
{
    private readonly ITestOutputHelper _output;
    private readonly string _dir = RepoPaths.NewTempDirectory("tracelab-stacks");

    public PerfStacksCaptureTests(ITestOutputHelper output) => _output = output;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private sealed class Collect(ThreadTable threads) : IKernelEventSink
    {
        public Dictionary<(int Tid, long Time), int> Stacks { get; } = new();
        public LockStackAnalyzer Locks { get; } = new(tid => threads.TryGetProcess(tid, out var p) ? p : tid);

        public void OnEvent(in KernelEvent e)
        {
            Locks.OnEvent(e);
            if (e.StackId == 0) return;
            var tid = e.Kind == KernelEventKind.Switch ? e.PrevTid : e.CurrentTid;
            Stacks.TryAdd((tid, e.Timestamp), e.StackId);
        }
    }

    [PerfStacksFact]
    public void Frames_equal_perf_script_and_lock_names_equal_nm()
    {
        var program = Path.Combine(_dir, "lock_sites");
        var source = Path.Combine(RepoPaths.Root, "tests", "TraceLab.IntegrationTests", "Stacks", "lock_sites.c");
        // dpkg-buildflags' CFLAGS and LDFLAGS on Debian 12: -O2 -g, no frame pointers, PIE by default.
        Run("gcc", "-g", "-O2", "-fstack-protector-strong", "-Wformat", "-Werror=format-security", "-Wl,-z,relro",
            "-pthread", "-o", program, source);
        var data = Path.Combine(_dir, "perf.data");
        Run("perf", "record", "-q", "-g", "-e", "sched:sched_switch", "-e", "sched:sched_waking",
            "-e", "syscalls:sys_enter_futex", "-e", "syscalls:sys_exit_futex", "-o", data, "--", program, "300000");

        using var reader = PerfDataReader.Open(data);
        var sink = new Collect(reader.Threads);
        reader.Read(sink);
        var symbolizer = new StackSymbolizer(reader.Maps, reader.RecordedBuildIds,
            new SymbolOptions { KernelSymbols = SymbolOptions.RunningKernel(reader.Info.KernelRelease) });

        // perf script's stacks, keyed by thread and time (ns), innermost frame first.
        var perf = PerfScriptStacks(data);
        Assert.NotEmpty(perf);
        int compared = 0, equal = 0;
        var differences = new List<string>();
        foreach (var ((tid, time), frames) in perf)
        {
            compared++;
            if (!sink.Stacks.TryGetValue((tid, time), out var id))
            {
                differences.Add($"{tid} at {time}: no stack in TraceLab");
                continue;
            }

            var ours = symbolizer.Stack(reader.Stacks, id);
            var why = Difference(frames, ours);
            if (why is null) equal++;
            else differences.Add($"{tid} at {time}: {why}");
        }

        _output.WriteLine($"{equal} of {compared} stacks equal perf script's; differences:");
        foreach (var d in differences.Take(20)) _output.WriteLine("  " + d);
        Assert.True(equal >= compared * 0.99,
            $"{equal} of {compared} stacks equal; first: {differences.FirstOrDefault()}");

        // Lock names: nm's object symbol containing each futex address (less the load bias perf script shows).
        var section = StacksReportBuilder.Build(sink.Locks, reader.Stacks, symbolizer);
        var bias = LoadBias(data, program);
        var nm = NmObjects(program);
        var named = 0;
        foreach (var l in section.Locks)
        {
            var address = ulong.Parse(l.Address.AsSpan(2), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            var expected = nm.FirstOrDefault(s => address - bias >= s.Start && address - bias < s.Start + s.Size);
            _output.WriteLine($"lock {l.Address}: {l.Name} ({l.NameKind}), nm: {expected.Name ?? "none"}");
            if (expected.Name is null)
            {
                Assert.NotEqual("variable", l.NameKind);
                continue;
            }

            var offset = address - bias - expected.Start;
            Assert.Equal(offset == 0 ? expected.Name : $"{expected.Name}+0x{offset:x}", l.Name);
            named++;
        }

        Assert.Contains(section.Locks, l => l.Name == "g_stats_lock" && l.Waits > 0);

        // report.md (and report.html, made from it) shows the named lock with its stacks as report.json has them.
        var md = new StringBuilder();
        MarkdownRenderer.Write(md, StacksView.View(section)!);
        var stats = section.Locks.First(l => l.Name == "g_stats_lock");
        Assert.Contains($"### g_stats_lock (futex {stats.Address}, pid {stats.Process}): ", md.ToString());
        var top = stats.Blocking[0];
        var innermost = top.Frames.First(f => f.Module != "[kernel.kallsyms]").Symbol;
        Assert.Contains(string.Create(CultureInfo.InvariantCulture,
            $"- blocked in ×{top.Count:N0} {top.Ms:0.###} ms: `{innermost}"), md.ToString());
        // The heap mutex (when it blocked at all: its contention depends on the machine's load) has no variable;
        // the loop above holds it to that, as nm has no symbol for it.
        // The static lock is never contended: no futex call names it.
        Assert.DoesNotContain(section.Locks, l => l.Name.StartsWith("s_quiet_lock", StringComparison.Ordinal));
        Assert.True(named > 0);
    }

    /// <summary>
    /// Null when perf's frames and TraceLab's agree: same addresses, same names where perf names one.
    /// </summary>
    private static string? Difference(List<(ulong Address, string Name)> perf, IReadOnlyList<SymbolFrame> ours)
    {
        if (perf.Count != ours.Count) return $"{perf.Count} frames in perf script, {ours.Count} in TraceLab";
        for (var i = 0; i < perf.Count; i++)
        {
            // perf script prints a frame in a file mapping as its module offset (map_ip), others as recorded.
            if (perf[i].Address != ours[i].Address && perf[i].Address != ours[i].ModuleOffset)
                return $"frame {i}: {perf[i].Address:x} in perf script, {ours[i].Address:x} " +
                    $"({ours[i].ModuleOffset:x} in {ours[i].Module}) in TraceLab";
            var name = perf[i].Name == "[unknown]" ? null : perf[i].Name;
            if (name != ours[i].Symbol)
                return $"frame {i} ({perf[i].Address:x}): '{perf[i].Name}' in perf script, " +
                    $"'{ours[i].Symbol ?? "[unknown]"}' in TraceLab ({ours[i].Module})";
        }

        return null;
    }

    private static Dictionary<(int, long), List<(ulong, string)>> PerfScriptStacks(string data)
    {
        var stacks = new Dictionary<(int, long), List<(ulong, string)>>();
        List<(ulong, string)>? current = null;
        foreach (var line in ProcessOutput.Lines("perf", "script", "-i", data, "--ns", "-F", "tid,time,ip,sym"))
        {
            if (HeaderLine().Match(line) is { Success: true } h)
            {
                var tid = int.Parse(h.Groups[1].Value, CultureInfo.InvariantCulture);
                var ns = long.Parse(h.Groups[2].Value, CultureInfo.InvariantCulture) * 1_000_000_000
                    + long.Parse(h.Groups[3].Value, CultureInfo.InvariantCulture);
                current = [];
                stacks.TryAdd((tid, ns), current);
            }
            else if (current is not null && FrameLine().Match(line) is { Success: true } f)
                current.Add((ulong.Parse(f.Groups[1].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                    f.Groups[2].Value.Trim()));
        }

        return stacks.Where(s => s.Value.Count > 0).ToDictionary(s => s.Key, s => s.Value);
    }

    /// <summary>The program's load bias from perf script's MMAP2 of its text: start − pgoff (text at vaddr = offset).
    /// </summary>
    private static ulong LoadBias(string data, string program)
    {
        foreach (var line in ProcessOutput.Lines("perf", "script", "-i", data, "--show-mmap-events", "-F", "tid"))
            if (line.Contains("PERF_RECORD_MMAP", StringComparison.Ordinal)
                && line.EndsWith(program, StringComparison.Ordinal)
                && MmapLine().Match(line) is { Success: true } m)
                return ulong.Parse(m.Groups[1].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture)
                    - ulong.Parse(m.Groups[2].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        throw new InvalidOperationException("perf script shows no mapping of " + program);
    }

    private static List<(ulong Start, ulong Size, string? Name)> NmObjects(string program) =>
        ProcessOutput.Lines("nm", "-S", program).Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(p => p.Length == 4 && "bBdD".Contains(p[2], StringComparison.Ordinal))
            .Select(p => (ulong.Parse(p[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                ulong.Parse(p[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture), (string?)p[3]))
            .ToList();

    private static void Run(string file, params string[] args)
    {
        var (code, _, stderr) = ProcessOutput.Run(file, args);
        Assert.True(code == 0, $"{file} failed ({code}): {stderr}");
    }

    [GeneratedRegex(@"^\s*(\d+)\s+(\d+)\.(\d{9}):")]
    private static partial Regex HeaderLine();

    [GeneratedRegex(@"^\s+([0-9a-f]+)\s+(.*)$")]
    private static partial Regex FrameLine();

    [GeneratedRegex(@"\[0x([0-9a-f]+)\(0x[0-9a-f]+\) @ 0x([0-9a-f]+) ")]
    private static partial Regex MmapLine();
}
