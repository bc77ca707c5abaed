using System.Text.Json;

namespace TraceLab.IntegrationTests.Managed;

/// <summary>
/// .NET's monitor: C#'s `lock` on an object (Monitor.Enter; docs/metrics.md#wait-stack-tags). A program written here
/// and built by the test runs four threads that spend most of each round inside `lock` on one object, traced with
/// `trace --stacks` under the runtime's perf map (DOTNET_PerfMapEnabled=1, DOTNET_ReadyToRun=0: the framework's own
/// methods are compiled at run time and named in the map). A thread that finds the monitor taken spins, then waits in
/// the runtime's native code, which has no symbols: only the managed frames above it (System.Threading.Monitor::
/// Enter…) say that it waits for a lock. Checked against the runtime's own count of contended entries
/// (Monitor.LockContentionCount); the control gives each thread an object of its own.
/// </summary>
public sealed class DotnetMonitorTests(ITestOutputHelper output)
{
    /// <summary>
    /// Four threads (worker-0 .. worker-3) spend most of each round inside `lock` on one object ("shared") or on one
    /// each ("own"), for a given time; then one JSON line: the runtime's contended entries
    /// (Monitor.LockContentionCount) and, from its own ContentionStop events (an in-process EventListener on the
    /// runtime's contention keyword, 0x4000), their count and summed durations: the time the threads spent entering a
    /// taken lock, spinning and waiting, as the JVM's blocked time is.
    /// </summary>
    private const string Program = """
        using System.Diagnostics;
        using System.Diagnostics.Tracing;
        using var contention = new ContentionListener();
        var shared = new object();
        var n = int.Parse(args[1]);
        var deadline = Stopwatch.GetTimestamp() + (long)(double.Parse(args[2]) * Stopwatch.Frequency);
        long sink = 0;
        var threads = Enumerable.Range(0, n).Select(t => new Thread(() =>
        {
            var gate = args[0] == "shared" ? shared : new object();
            while (Stopwatch.GetTimestamp() < deadline)
            {
                lock (gate) { Interlocked.Add(ref sink, Spin(20000)); }
                Interlocked.Add(ref sink, Spin(5000));
            }
        }) { Name = "worker-" + t }).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        Thread.Sleep(200); // the listener's events arrive on a thread of their own
        Console.WriteLine($"{{\"contentions\":{Monitor.LockContentionCount},\"events\":{contention.Count},"
            + $"\"contentionNs\":{contention.Ns}}}");
        static long Spin(long n) { long x = 0; for (long i = 0; i < n; i++) x += i * 31 ^ (x >> 3); return x; }
        sealed class ContentionListener : EventListener
        {
            public long Ns, Count;
            protected override void OnEventSourceCreated(EventSource source)
            {
                if (source.Name == "Microsoft-Windows-DotNETRuntime")
                    EnableEvents(source, EventLevel.Informational, (EventKeywords)0x4000);
            }
            protected override void OnEventWritten(EventWrittenEventArgs e)
            {
                if (e.EventName != "ContentionStop" || e.PayloadNames is null) return;
                var i = e.PayloadNames.IndexOf("DurationNs");
                if (i < 0) return;
                Interlocked.Add(ref Ns, (long)Convert.ToDouble(e.Payload![i]));
                Interlocked.Increment(ref Count);
            }
        }
        """;

    private const string Project = """
        <Project Sdk="Microsoft.NET.Sdk">
          <PropertyGroup>
            <OutputType>Exe</OutputType>
            <TargetFramework>net8.0</TargetFramework>
            <RollForward>LatestMajor</RollForward>
            <ImplicitUsings>enable</ImplicitUsings>
          </PropertyGroup>
        </Project>
        """;

    [Stacks.PerfStacksFact]
    public void Dotnet_threads_entering_a_contended_lock_wait_for_a_lock_under_monitor_enter()
    {
        using var dir = new TempDirectory("tracelab-dotnet-lock");
        var dll = Build(dir.Path);

        var shared = Traced(dir.Path, dll, "shared");
        output.WriteLine($"shared: {shared.Contentions} contended entries, {shared.ContentionMs:0.0} ms contended "
            + $"(the runtime's ContentionStop events, {shared.ContentionEvents}); trace: lock waits "
            + $"{shared.LockNs / 1e6:0.0} ms of the workers' {shared.TimeNs / 1e6:0.0} ms; {shared.UnderEnter} futex "
            + $"waits, {shared.UnderEnterMs:0.0} ms, under Monitor::Enter");
        Assert.True(shared.Contentions > 0 && shared.ContentionEvents > 0, "the runtime saw no contended entry");
        // The futex waits under Monitor::Enter (blocked, then runnable until the call returns) are part of the
        // runtime's contended time, which also holds the spinning before them: measured 0.9-1.0 of it quiet.
        Assert.InRange(shared.UnderEnterMs, ContendedFloor * shared.ContentionMs, 1.05 * shared.ContentionMs + 5);
        // Their blocked part is lock waits (the stack tag, whatever the rules said).
        Assert.InRange(shared.LockNs / 1e6, LockFloor * shared.ContentionMs, shared.UnderEnterMs * 1.01 + 5);

        var own = Traced(dir.Path, dll, "own");
        output.WriteLine($"own: {own.Contentions} contended entries; lock waits {own.LockNs / 1e6:0.0} ms");
        Assert.Equal(0, own.Contentions);
        Assert.Equal(0, own.UnderEnter);
        Assert.True(own.LockNs < shared.LockNs / 10, $"control {own.LockNs} ns, shared {shared.LockNs} ns");
    }

    /// <summary>
    /// How far below the runtime's contended time the futex waits under Monitor::Enter may lie: the runtime also
    /// counts the spinning before a thread waits, which the machine's load stretches (0.9-1.0 quiet on 2 CPUs).
    /// </summary>
    private const double ContendedFloor = 0.6;

    /// <summary>The same for the lock waits alone, which leave out the runnable time after each wake too.</summary>
    private const double LockFloor = 0.4;

    private sealed record DotnetRun(long Contentions, long ContentionEvents, double ContentionMs, long LockNs,
        long TimeNs, long UnderEnter, double UnderEnterMs);

    private static string Build(string dir)
    {
        var project = Path.Combine(dir, "lockcontention");
        Directory.CreateDirectory(project);
        File.WriteAllText(Path.Combine(project, "lockcontention.csproj"), Project);
        File.WriteAllText(Path.Combine(project, "Program.cs"), Program);
        var bin = Path.Combine(dir, "bin");
        var (code, stdout, stderr) = ProcessOutput.Run("dotnet", "build", project, "-c", "Release", "-o", bin,
            "-nologo", "-v", "q");
        Assert.True(code == 0, $"dotnet build failed ({code}): {stdout} {stderr}");
        return Path.Combine(bin, "lockcontention.dll");
    }

    private DotnetRun Traced(string dir, string dll, string mode)
    {
        var run = ManagedRun.Trace(output, Path.Combine(dir, mode), "env", "DOTNET_PerfMapEnabled=1",
            "DOTNET_ReadyToRun=0", "DOTNET_TieredCompilation=0", "dotnet", dll, mode, "4", "2");
        // The runtime names each thread's native thread after Thread.Name (the comm).
        var workers = run.Report.Threads.Where(t => t.Name.StartsWith("worker-", StringComparison.Ordinal)).ToList();
        Assert.Equal(4, workers.Count);
        var (underEnter, underEnterMs) = run.BlockedUnder("System.Threading.Monitor::Enter");
        using var json = JsonDocument.Parse(run.LastLine);
        var root = json.RootElement;
        return new DotnetRun(root.GetProperty("contentions").GetInt64(), root.GetProperty("events").GetInt64(),
            root.GetProperty("contentionNs").GetInt64() / 1e6, workers.Sum(t => run.LockNs(t.Tid)),
            workers.Sum(t => t.RunNs + t.ReadyNs + t.WaitNs), underEnter, underEnterMs);
    }
}
