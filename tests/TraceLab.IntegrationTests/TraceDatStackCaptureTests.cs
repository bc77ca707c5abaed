using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Capture.Linux;
using TraceLab.Core;
using TraceLab.Formats.TraceDat;
using TraceLab.Pipeline;
using TraceLab.TestSupport;
using TraceLab.Workloads;
using Xunit;
using Xunit.Abstractions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// A trace.dat recorded with ftrace's own stack options (<c>options/stacktrace</c>, <c>options/userstacktrace</c>)
/// in a private instance and written by <c>trace-cmd extract</c>, as a user who records with trace-cmd does: every
/// event's kernel and user stack as TraceLab reads it equals what <c>trace-cmd report</c> prints after that event.
/// </summary>
public sealed partial class TraceDatStackCaptureTests(ITestOutputHelper output)
{
    [TracingFact(needsTraceCmd: true)]
    public void Each_events_stacks_equal_what_trace_cmd_report_prints_after_it()
    {
        using var tmp = new TempDirectory("tracedat-stacks");
        var file = Path.Combine(tmp.Path, "stacks.dat");
        // How often the workload's threads switch depends on the machine's load: 642–24,315 events with stacks in
        // 5,000 iterations quiet, 48 beside stress-ng --cpu 2. Too few to compare: record again, ten times longer.
        Record(file, 5000);
        if (TraceCmdStacks(file).Values.Sum(l => l.Count) < 50) Record(file, 50_000);

        var ours = new Dictionary<int, List<ulong[]>>();
        using (var reader = TraceDatReader.Open(file))
        {
            Assert.True(reader.HasStacks);
            reader.Read(new Sink(e =>
            {
                if (e.StackId == 0) return;
                if (!ours.TryGetValue(e.Cpu, out var list)) ours[e.Cpu] = list = [];
                list.Add(reader.Stacks.Frames(e.StackId).ToArray());
            }));
            // Only a buffer that wrapped (its oldest event overwritten) starts with stack records of no event: at
            // most a kernel and a user stack per CPU. trace-cmd report prints them before any event and both
            // sides leave them out.
            Assert.InRange(reader.OrphanStackRecords, 0, 2 * reader.Info.CpuCount);
        }
        var theirs = TraceCmdStacks(file);

        var events = theirs.Values.Sum(l => l.Count);
        output.WriteLine(
            $"{events} events with stacks by trace-cmd report, {ours.Values.Sum(l => l.Count)} by TraceLab");
        Assert.True(events >= 50, $"only {events} events with stacks were recorded");
        Assert.Equal(theirs.Keys.Order(), ours.Keys.Order());
        foreach (var (cpu, stacks) in theirs)
        {
            var mine = ours[cpu];
            var first = Enumerable.Range(0, Math.Min(stacks.Count, mine.Count))
                .FirstOrDefault(i => !stacks[i].SequenceEqual(mine[i]), -1);
            Assert.True(first < 0 && stacks.Count == mine.Count,
                $"CPU {cpu}: trace-cmd {stacks.Count} stacks, TraceLab {mine.Count}; first difference at {first}: "
                + (first < 0 ? "" : $"{Hex(stacks[first])} against {Hex(mine[first])}"));
        }
        static string Hex(ulong[] frames) =>
            string.Join(" ", frames.Select(f => f.ToString("x", CultureInfo.InvariantCulture)));
        // Kernel frames carry the wait's reason: the waiters' blocking stacks are inside the semaphore wait.
        var report = TraceAnalysis.Analyze(file);
        Assert.NotNull(report.Stacks);
        var frames = report.Stacks!.OffCpu.Concat(report.Stacks.Locks.SelectMany(l => l.Blocking))
            .SelectMany(s => s.Frames).Select(f => f.Symbol ?? "").ToHashSet();
        Assert.Contains(frames, f => f.Contains("semtimedop", StringComparison.Ordinal));
    }

    /// <summary>
    /// The contended kernel mutex (a System V semaphore) in its own instance, kernel and user stacks on every event.
    /// </summary>
    private static void Record(string file, int iterations)
    {
        var exe = new NativeWorkloadBuilder(RepoPaths.Root).EnsureBuilt("timemutex");
        var name = $"tracelab-test-stacks-{Environment.ProcessId}";
        var dir = Instances.PathOf(name);
        Directory.CreateDirectory(dir);
        try
        {
            void Write(string relative, string value) => File.WriteAllText(Path.Combine(dir, relative), value);
            Write("options/record-tgid", "1");
            Write("options/event-fork", "1"); // the workload's threads join set_event_pid as they are created
            Write("buffer_size_kb", "16384");
            foreach (var e in new[] { "sched/sched_switch", "sched/sched_waking", "syscalls/sys_enter_semop",
                         "syscalls/sys_exit_semop" })
                Write($"events/{e}/enable", "1");
            Write("options/stacktrace", "1");
            Write("options/userstacktrace", "1");
            // The workload alone: set_event_pid holds the shell, which then becomes the workload.
            var run = ProcessOutput.Run("sh", "-c",
                $"echo $$ > {Path.Combine(dir, "set_event_pid")}; exec {exe} --iterations {iterations} 3 1 0 4");
            Assert.True(run.ExitCode == 0, run.Stderr);
            Write("tracing_on", "0");
            var extract = ProcessOutput.Run("trace-cmd", "extract", "-B", name, "-o", file);
            Assert.True(extract.ExitCode == 0, extract.Stderr);
        }
        finally
        {
            Instances.RemoveTestInstance(name);
        }
    }

    /// <summary>
    /// Per CPU, in order, the stack of each event that has one, from <c>trace-cmd report</c>: the kernel stack's
    /// addresses (innermost first), then the user stack's (its zero slots left out).
    /// </summary>
    private static Dictionary<int, List<ulong[]>> TraceCmdStacks(string file)
    {
        var report = ProcessOutput.Run("trace-cmd", "report", "-i", file);
        Assert.True(report.ExitCode == 0, report.Stderr);
        // The report interleaves CPUs by time: a stack record belongs to the last event of its own CPU.
        var result = new Dictionary<int, List<ulong[]>>();
        var open = new Dictionary<int, List<ulong>>();
        List<ulong>? current = null;
        foreach (var line in report.Stdout.Split('\n'))
        {
            var head = EventLine().Match(line);
            if (head.Success)
            {
                var cpu = int.Parse(head.Groups["cpu"].Value, CultureInfo.InvariantCulture);
                if (head.Groups["name"].Value is "kernel_stack" or "user_stack")
                {
                    current = open.TryGetValue(cpu, out var pending) ? pending : null;
                    if (StackEntry().Match(line) is { Success: true } first) Add(current, first);
                }
                else
                {
                    Close(cpu);
                    open[cpu] = [];
                    current = null;
                }
                continue;
            }
            if (StackEntry().Match(line) is { Success: true } entry) Add(current, entry);
        }
        foreach (var cpu in open.Keys.ToList()) Close(cpu);
        return result;

        void Close(int cpu)
        {
            if (!open.Remove(cpu, out var stack) || stack.Count == 0) return;
            if (!result.TryGetValue(cpu, out var list)) result[cpu] = list = [];
            list.Add([.. stack]);
        }

        static void Add(List<ulong>? stack, Match m)
        {
            var a = ulong.Parse(m.Groups["a"].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            if (a != 0 && a != ulong.MaxValue) stack?.Add(a);
        }
    }

    [GeneratedRegex(@"\[(?<cpu>\d+)\]\s+\d+\.\d+:\s+(?<name>[\w:]+):")]
    private static partial Regex EventLine();

    /// <summary>"=> symbol (ffffffff813a02c5)" (kernel) or "=> 0x7fb686dcf8d9" (user).</summary>
    [GeneratedRegex(@"=>\s+(?:0x(?<a>[0-9a-f]+)\s*$|\S.*\((?<a>[0-9a-f]+)\)\s*$)")]
    private static partial Regex StackEntry();

    private sealed class Sink(Action<KernelEvent> each) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e) => each(e);
    }
}
