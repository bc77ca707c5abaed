using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.Symbols;
using TraceLab.Reporting.Stacks;
using TraceLab.Reporting.Tables;

namespace TraceLab.IntegrationTests.Stacks;

/// <summary>
/// perf record works here (<see cref="PerfEnvironment"/>), and gcc and nm are installed; else skipped.
/// </summary>
public class PerfStacksFactAttribute : FactAttribute
{
    public PerfStacksFactAttribute() => Skip = Missing();

    /// <summary>
    /// Why a perf stack test cannot run on this machine (perf, gcc, nm, then <paramref name="tool"/> from
    /// <paramref name="package"/> when one is named); null when it can.
    /// </summary>
    internal static string? Missing(string? tool = null, string? package = null) =>
        PerfEnvironment.Reason.Value
        ?? (!TestEnvironment.OnPath("gcc") || !TestEnvironment.OnPath("nm")
            ? "gcc and nm not installed (apt-get install -y build-essential)"
            : tool is not null && !TestEnvironment.OnPath(tool)
                ? $"{tool} not installed (apt-get install -y {package ?? tool})"
                : null);
}

/// <summary>As <see cref="PerfStacksFactAttribute"/>, and Debian's sysbench is installed.</summary>
public sealed class SysbenchStacksFactAttribute : FactAttribute
{
    public SysbenchStacksFactAttribute() => Skip = PerfStacksFactAttribute.Missing("sysbench");
}

/// <summary>As <see cref="PerfStacksFactAttribute"/>, and g++ is installed (build-essential has it).</summary>
public sealed class CxxStacksFactAttribute : FactAttribute
{
    public CxxStacksFactAttribute() => Skip = PerfStacksFactAttribute.Missing("g++", "build-essential");
}

/// <summary>As <see cref="PerfStacksFactAttribute"/>, and taskset (util-linux) is installed.</summary>
public sealed class VdsoStacksFactAttribute : FactAttribute
{
    public VdsoStacksFactAttribute() => Skip = PerfStacksFactAttribute.Missing("taskset", "util-linux");
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

    internal sealed class Collect(ThreadTable threads) : IKernelEventSink
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
        var program = BuildLockSites();
        var data = Path.Combine(_dir, "perf.data");
        RecordLockEvents(data, "fp", program, "300000");

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

            // perf script adds no inlined frames to a frame-pointer callchain: the recorded frames are compared.
            var ours = symbolizer.Stack(reader.Stacks, id).Where(f => !f.Inlined).ToList();
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
    /// The same program recorded with --call-graph dwarf (user registers and an 8 KB copy of the user stack per
    /// sample, the callchain kernel-only): TraceLab unwinds the copies with the binaries' .eh_frame and must give
    /// perf script's frames (perf unwinds with libdw; inlined frames left out on both sides, --no-inline) for at
    /// least 99 % of the stacks — full stacks, where the frame-pointer walk of the same program stops in libc.
    /// </summary>
    [PerfStacksFact]
    public void Dwarf_unwound_frames_equal_perf_script_on_a_program_without_frame_pointers()
    {
        var program = BuildLockSites();
        var data = Path.Combine(_dir, "perf.data");
        RecordLockEvents(data, "dwarf,8192", program, "100000");

        using var reader = PerfDataReader.Open(data);
        // Measured: 0–2.7 % of lock_sites' stacks stop early (at a frame beyond the 8 KB copy).
        var (sink, symbolizer) = AssertDwarfFramesEqualPerfScript(reader, data, maxShortShare: 0.10);

        DamagedCopiesReadOrRefuseCleanly(data);
        AssertInlinedFramesEqualPerfScript(reader, data, sink, symbolizer, program);

        // Source lines from the program's DWARF line table equal addr2line's for every frame in the program.
        var ours = Enumerable.Range(1, reader.Stacks.Count).SelectMany(id => symbolizer.Stack(reader.Stacks, id))
            .Where(f => f.Module == program).DistinctBy(f => f.ModuleOffset).ToList();
        Assert.NotEmpty(ours);
        var addr2line = ProcessOutput.Lines("addr2line",
            ["-e", program, .. ours.Select(f => "0x" + f.ModuleOffset.ToString("x", CultureInfo.InvariantCulture))])
            // "??:0" (no compilation unit covers it: a PLT entry), "??:?" (no line) and "FILE:?" (a compilation unit
            // without line rows there: crtstuff.c's __do_global_dtors_aux, in a CI run whose sample fell in the
            // process's exit) all say: no line known. TraceLab names a source only with its line.
            .Select(l => l.Split(" (discriminator")[0]).Select(l => l == "??:0" || l.EndsWith(":?", StringComparison
                .Ordinal) ? "??:?" : l).ToList();
        Assert.Equal(addr2line, ours.Select(f => f.Source is { } s
            ? s.File + ":" + s.Line.ToString(CultureInfo.InvariantCulture) : "??:?"));

        // Without frame pointers the walk stops in libc; the unwind reaches the function that takes the lock and
        // the thread's start (lock_sites.c: update_stats takes g_stats_lock, called from stats_worker).
        var section = StacksReportBuilder.Build(sink.Locks, reader.Stacks, symbolizer);
        var stats = section.Locks.First(l => l.Name == "g_stats_lock");
        // A lock without a variable (the heap queue's, when it blocked at all) is named by its call site and line.
        if (section.Locks.FirstOrDefault(l => l.NameKind != "variable"
                && l.Blocking.Any(b => b.Frames.Any(f => f.Symbol == "queue_push"))) is { } queue)
            Assert.StartsWith(
                "lock taken in queue_push ← queue_worker (lock_sites.c:", queue.Name, StringComparison.Ordinal);
        Assert.Contains(stats.Blocking, b => b.Frames.Select(f => f.Symbol).Take(12).ToList() is var names
            && names.Contains("update_stats") && names.Contains("stats_worker") && names.Contains("start_thread"));
        // The function inlined into update_stats that takes the lock is a frame of its own, marked inlined.
        Assert.Contains(stats.Blocking, b => b.Frames.SkipWhile(f => f.Symbol != "take_stats_lock").Take(2)
            .Select(f => (f.Symbol, f.Inlined)).SequenceEqual([("take_stats_lock", true), ("update_stats", null)]));
    }

    /// <summary>
    /// Debian's sysbench (built without frame pointers, stripped: named through .dynsym and its debug link where
    /// installed) under its mutex test, recorded with --call-graph dwarf: the unwound frames equal perf script's.
    /// </summary>
    [SysbenchStacksFact]
    public void Dwarf_unwound_frames_equal_perf_script_on_debian_sysbench()
    {
        var data = Path.Combine(_dir, "perf.data");
        RecordLockEvents(data, "dwarf,8192", "sysbench", "mutex", "--threads=4", "--mutex-num=1",
            "--mutex-locks=20000", "run");

        using var reader = PerfDataReader.Open(data);
        // Measured: 4–27 % of sysbench's stacks stop early (27 %: 53 of 198, in a full test run on a quiet machine),
        // mostly at a return address beyond the 8 KB copy (above glibc's buffered_vfprintf buffer), where perf's unwind
        // cannot go on either: how many depends on how many samples land in sysbench's printf, not on the unwinder,
        // whose early stops are perf's too (every compared stack must equal perf script's, below).
        var (_, symbolizer) = AssertDwarfFramesEqualPerfScript(reader, data, maxShortShare: 0.4);
        // The unwind goes through sysbench's own code to the thread's start, not only libc's lock.
        var deep = Enumerable.Range(1, reader.Stacks.Count).Select(id => symbolizer.Stack(reader.Stacks, id))
            .Count(f => f.Any(x => x.Symbol == "start_thread") && f.Any(x => x.Module.EndsWith("sysbench",
                StringComparison.Ordinal)));
        Assert.True(deep > 0, "no stack reaches from sysbench's code to start_thread");
    }

    /// <summary>
    /// A program whose two threads, on one CPU, preempt each other at the syscall the vDSO's clock_gettime makes
    /// (Stacks/vdso_clock.c), recorded with --call-graph dwarf on every switch: the stacks start in [vdso], which is
    /// no file. TraceLab names those frames and unwinds through them with the recorded vDSO image (perf's build-id
    /// cache copy, else the running kernel's), and its frames equal perf script's.
    /// </summary>
    [VdsoStacksFact]
    public void Dwarf_unwound_frames_through_the_vdso_equal_perf_script()
    {
        var program = BuildTestProgram("vdso_clock");
        var data = Path.Combine(_dir, "perf.data");
        // perf itself on CPU 0 (its child inherits that), not `perf record -- taskset -c 0 PROGRAM`: perf script's
        // unwind of a process that exec'd twice went wrong above libc's first frame in every stack in about half of
        // such runs (measured 2 of 4, 3 of 4; TraceLab's frames were whole in all), and in none of 5 run this way.
        Run("taskset", "-c", "0", "perf", "record", "-q", "--call-graph", "dwarf,8192", "-e", "sched:sched_switch",
            "-o", data, "--", program, "1");

        using var reader = PerfDataReader.Open(data);
        var (sink, symbolizer) = AssertDwarfFramesEqualPerfScript(reader, data, maxShortShare: 0.10);
        // The stacks that start in the vDSO are named there and go on through libc to the thread's function.
        var throughVdso = sink.Stacks.Values.Select(id => symbolizer.Stack(reader.Stacks, id)
                .Where(f => !f.Kernel).Select(f => (f.Module, f.Symbol)).ToList())
            .Where(f => f.Count > 0 && f[0].Module == VdsoImage.MappingName).ToList();
        _output.WriteLine($"{throughVdso.Count} of {sink.Stacks.Count} stacks start in the vDSO");
        Assert.True(throughVdso.Count > 0, "no switch-out in the vDSO was recorded");
        // Named __vdso_clock_gettime where they start; a sample in a helper of it that the image's symbol table does
        // not name (seen once in 736 stacks: perf script names it no better, compared above) adds one unnamed frame
        // before that.
        Assert.All(throughVdso, f => Assert.Equal("__vdso_clock_gettime", f
            .TakeWhile(x => x.Module == VdsoImage.MappingName).FirstOrDefault(x => x.Symbol is not null).Symbol));
        Assert.Contains(throughVdso, f => f[0].Symbol == "__vdso_clock_gettime");
        // [vdso] ← clock_gettime (libc) ← spin (inlined) ← worker ← start_thread.
        Assert.All(throughVdso, f => Assert.Contains("start_thread", f.Select(x => x.Symbol)));
        Assert.Contains(throughVdso, f => f.Select(x => x.Symbol).Contains("worker"));
        Assert.DoesNotContain(symbolizer.Notes, n => n.Contains("[vdso]", StringComparison.Ordinal));

        // Through taskset (the process execs twice; perf writes the new program's mappings in its per-CPU buffers,
        // so they can be read before the exec that precedes them): TraceLab's stacks are as whole.
        var chained = Path.Combine(_dir, "chained.data");
        Run("perf", "record", "-q", "--call-graph", "dwarf,8192", "-e", "sched:sched_switch", "-o", chained, "--",
            "taskset", "-c", "0", program, "1");
        using var again = PerfDataReader.Open(chained);
        var chainedSink = new Collect(again.Threads);
        again.Read(chainedSink);
        var named = new StackSymbolizer(again.Maps, again.RecordedBuildIds);
        var chainedVdso = chainedSink.Stacks.Values.Select(id => named.Stack(again.Stacks, id))
            .Where(f => f.FirstOrDefault(x => !x.Kernel) is { Module: VdsoImage.MappingName }).ToList();
        _output.WriteLine($"through taskset: {chainedVdso.Count} stacks start in the vDSO");
        Assert.NotEmpty(chainedVdso);
        Assert.All(chainedVdso, f => Assert.Equal(["__vdso_clock_gettime", "start_thread"],
            f.Where(x => x.Symbol is "__vdso_clock_gettime" or "start_thread").Select(x => x.Symbol)));
    }

    /// <summary>
    /// The Perfetto export of a --call-graph dwarf recording of Stacks/ping_pong.c (two threads handing a turn back
    /// and forth through a condition variable, each blocking once a round): each off-CPU interval is a
    /// slice from the blocking switch-out to the switch-in, carrying its stack. Checked against perf script (the
    /// slice's frames, outermost first in Perfetto, are the switch-out sample's frames as perf script prints them,
    /// for at least 99 % of the slices) and against the pipeline's own off-CPU sums (slice count and time per stack).
    /// </summary>
    [PerfStacksFact]
    public void Perfetto_export_carries_each_off_cpu_interval_with_perf_scripts_stack()
    {
        var program = BuildTestProgram("ping_pong");
        var data = Path.Combine(_dir, "perf.data");
        // On one CPU: a per-task recording has a thread's switch-in only when the thread it replaces is recorded too
        // (the tracepoint fires in the outgoing thread), so the players must hand the CPU to each other. Unpinned, the
        // scheduler may keep them on two CPUs, each switched in from idle: 1 switch-in of 3,236 switches in one run
        // here, 24 off-CPU slices in a CI run; pinned, 5,140-5,316 of 6,268-6,474 in every run.
        RecordLockEventsOnCpu0(data, "dwarf,8192", program, "2000");

        using var reader = PerfDataReader.Open(data);
        using var output = new MemoryStream();
        var summary = TraceLab.Export.Perfetto.PerfettoExporter.Export(reader, output);
        var trace = Perfetto.Protos.Trace.Parser.ParseFrom(output.ToArray());
        var packets = trace.Packet.Where(p => p.TrustedPacketSequenceId == 2).ToList();
        var interned = packets.Where(p => p.InternedData is not null).Select(p => p.InternedData).ToList();
        var frames = interned.SelectMany(i => i.Frames).ToDictionary(f => f.Iid);
        var callstacks = interned.SelectMany(i => i.Callstacks).ToDictionary(c => c.Iid);
        var tracks = trace.Packet.Where(p => p.TrackDescriptor is not null)
            .ToDictionary(p => p.TrackDescriptor.Uuid, p => p.TrackDescriptor);
        var events = packets.Where(p => p.TrackEvent is not null).ToList();
        var begins = events.Where(p => p.TrackEvent.Type == Perfetto.Protos.TrackEvent.Types.Type.SliceBegin).ToList();
        var ends = events.Where(p => p.TrackEvent.Type == Perfetto.Protos.TrackEvent.Types.Type.SliceEnd).ToList();
        Assert.Equal(summary.OffCpuSlices, begins.Count);
        Assert.Equal(begins.Count, ends.Count);
        using var again = PerfDataReader.Open(data);
        var sink = new Collect(again.Threads);
        again.Read(sink);
        _output.WriteLine($"{begins.Count} slices; the pipeline's off-CPU intervals with a stack: " +
            $"{sink.Locks.OffCpu.Values.Sum(t => t.Count)}; events with stacks {sink.Stacks.Count}");
        // Enough slices for the comparison below to mean something: on one CPU each player blocks in most of its 2,000
        // rounds (the other cannot be running), so thousands; the 100 asked leave room for a host that preempts them.
        Assert.True(begins.Count > 100, $"only {begins.Count} off-CPU slices; " + WhatWasRecorded(data));

        // Against perf script: the switch-out sample of the slice's thread at the slice's start.
        var perf = PerfScriptStacks(data, "--no-inline");
        int compared = 0, equal = 0;
        string? first = null;
        foreach (var b in begins)
        {
            var tid = tracks[b.TrackEvent.TrackUuid].Thread.Tid;
            if (!perf.TryGetValue(((int)tid, (long)b.Timestamp), out var theirs)) continue;
            compared++;
            // Inlined frames repeat their address: perf --no-inline lists it once.
            var ours = callstacks[b.TrackEvent.CallstackIid].FrameIds.Select(id => frames[id].RelPc).Reverse()
                .Aggregate(new List<ulong>(), (l, pc) => { if (l.Count == 0 || l[^1] != pc) l.Add(pc); return l; });
            if (ours.SequenceEqual(theirs.Select(f => f.Item1))) equal++;
            else first ??= $"{tid} at {b.Timestamp}: ours {string.Join(" ", ours.Select(a => a.ToString("x")))}"
                + $" | perf {string.Join(" ", theirs.Select(f => f.Item1.ToString("x")))}";
        }

        _output.WriteLine($"{equal} of {compared} slices' stacks equal perf script's ({begins.Count} slices); " +
            $"first difference: {first}");
        Assert.True(compared >= begins.Count * 0.9, $"{compared} of {begins.Count} slices found in perf script");
        Assert.True(equal >= compared * 0.99, $"{equal} of {compared} equal; first: {first}");

        // Against the pipeline's off-CPU sums (LockStackAnalyzer, what the report and the folded export use).
        Assert.Equal(sink.Locks.OffCpu.Values.Sum(t => t.Count), begins.Count);
        var endOf = ends.GroupBy(e => e.TrackEvent.TrackUuid).ToDictionary(g => g.Key, g => g.ToList());
        var sliceNs = begins.GroupBy(b => b.TrackEvent.TrackUuid).Sum(g => g.Zip(endOf[g.Key])
            .Sum(p => (long)(p.Second.Timestamp - p.First.Timestamp)));
        Assert.Equal(sink.Locks.OffCpu.Values.Sum(t => t.Nanoseconds), sliceNs);
        // The players' slices are named by where they wait: wait_for_turn ← player.
        Assert.True(begins.Count(b => b.TrackEvent.Name.Contains("wait_for_turn ← player", StringComparison.Ordinal))
            > begins.Count / 2, "the slices do not name wait_for_turn ← player: " + begins[0].TrackEvent.Name);
    }

    /// <summary>
    /// Damaged copies of a dwarf recording (most of its bytes are user stack copies and registers, so most damage
    /// lands in what the unwinder reads): each is read with its stacks and symbolized, or refused with a
    /// <see cref="TraceFormatException"/>; nothing else is thrown and every read ends.
    /// </summary>
    private void DamagedCopiesReadOrRefuseCleanly(string data)
    {
        var intact = File.ReadAllBytes(data);
        var random = new Random(20261128);
        int read = 0, refused = 0, withStacks = 0;
        var copy = Path.Combine(_dir, "damaged.data");
        for (var i = 0; i < 100; i++)
        {
            var bytes = (byte[])intact.Clone();
            for (var f = 0; f < 64; f++) bytes[random.Next(bytes.Length)] = (byte)random.Next(256);
            File.WriteAllBytes(copy, bytes);
            try
            {
                using var reader = PerfDataReader.Open(copy, new TraceReadOptions { Salvage = true });
                var sink = new Collect(reader.Threads);
                reader.Read(sink);
                // Without debug files: libc6-dbg's line table, read again for each copy, would be most of the time.
                var symbolizer = new StackSymbolizer(reader.Maps, reader.RecordedBuildIds,
                    new SymbolOptions { DebugDirectories = [] });
                for (var id = 1; id <= reader.Stacks.Count; id++) symbolizer.Stack(reader.Stacks, id);
                read++;
                if (reader.Stacks.Count > 0) withStacks++;
            }
            catch (TraceFormatException)
            {
                refused++;
            }
        }

        _output.WriteLine($"damaged copies: {read} read ({withStacks} with stacks), {refused} refused");
        Assert.Equal(100, read + refused);
        Assert.True(withStacks > 50, $"only {withStacks} damaged copies reached the unwinder");
    }

    /// <summary>
    /// A C++ program (a class template's method taking a std::mutex, lambdas run by std::thread, libstdc++ between
    /// them) recorded with --call-graph dwarf: its stacks' frames equal perf script's, names included. perf
    /// demangles C++ names and prints a function without its parameters ("shop::Ledger&lt;long&gt;::post"), as
    /// TraceLab does (docs/formats.md#demangling).
    /// </summary>
    [CxxStacksFact]
    public void Cxx_frames_equal_perf_script()
    {
        var program = Path.Combine(_dir, "cxx_lock_sites");
        var source = Path.Combine(RepoPaths.Root, "tests", "TraceLab.IntegrationTests", "Stacks", "cxx_lock_sites.cpp");
        Run("g++", "-g", "-O2", "-pthread", "-o", program, source);
        var data = Path.Combine(_dir, "cxx.perf.data");
        RecordLockEvents(data, "dwarf", program, "300000");

        using var reader = PerfDataReader.Open(data);
        var (sink, symbolizer) = AssertDwarfFramesEqualPerfScript(reader, data, maxShortShare: 0.10);
        var names = sink.Stacks.Values.Distinct()
            .SelectMany(id => symbolizer.Stack(reader.Stacks, id)).Select(f => f.Symbol).ToHashSet();
        // The names themselves (equal to perf's above): the template's method and std::thread's runner of the lambda.
        Assert.Contains("shop::Ledger<long>::post", names);
        Assert.Contains(names, n => n?.StartsWith("std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::" +
            "{lambda()#1}> > >::_M_run", StringComparison.Ordinal) == true);
        Assert.DoesNotContain(names, n => n?.StartsWith("_Z", StringComparison.Ordinal) == true);

        // `analyze --no-demangle`: the pipeline's symbolizer names the same frames as linked.
        var linked = TraceLab.Pipeline.TraceAnalysis.Symbolizer(reader, demangle: false);
        var asLinked = sink.Stacks.Values.Distinct()
            .SelectMany(id => linked.Stack(reader.Stacks, id)).Select(f => f.Symbol).ToHashSet();
        Assert.Contains("_ZN4shop6LedgerIlE4postEl", asLinked);
        Assert.DoesNotContain("shop::Ledger<long>::post", asLinked);

        // `export --to folded|perfetto [--no-demangle]`: the flame graph's frames and the off-CPU slices' interned
        // function names, the same two ways (Latin-1 reads the protobuf's bytes one to one).
        string Exported(TraceLab.Export.ITraceExporter exporter, bool demangle)
        {
            using var again = PerfDataReader.Open(data);
            using var output = new MemoryStream();
            exporter.Export(again, output, new TraceLab.Export.ExportOptions { Demangle = demangle });
            return System.Text.Encoding.Latin1.GetString(output.ToArray());
        }

        var folded = new TraceLab.Export.Folded.FoldedStacksExporter();
        var (demangled, mangled) = (Exported(folded, demangle: true), Exported(folded, demangle: false));
        Assert.Contains(";shop::Ledger<long>::post;", demangled, StringComparison.Ordinal);
        Assert.DoesNotContain("_ZN4shop6LedgerIlE4postEl", demangled, StringComparison.Ordinal);
        Assert.Contains(";_ZN4shop6LedgerIlE4postEl;", mangled, StringComparison.Ordinal);
        Assert.DoesNotContain("shop::Ledger<long>::post", mangled, StringComparison.Ordinal);
        var perfetto = new TraceLab.Export.Perfetto.PerfettoTraceExporter();
        var (named, linkedNames) = (Exported(perfetto, demangle: true), Exported(perfetto, demangle: false));
        Assert.Contains("shop::Ledger<long>::post", named, StringComparison.Ordinal);
        Assert.DoesNotContain("_ZN4shop6LedgerIlE4postEl", named, StringComparison.Ordinal);
        Assert.Contains("_ZN4shop6LedgerIlE4postEl", linkedNames, StringComparison.Ordinal);
        Assert.DoesNotContain("shop::Ledger<long>::post", linkedNames, StringComparison.Ordinal);
    }

    /// <summary>
    /// Reads <paramref name="data"/> (recorded with --call-graph dwarf) and asserts that at least 99 % of its stacks
    /// equal perf script's, inlined frames left out on both sides.
    /// </summary>
    /// <param name="threads">Compare only these threads' stacks (a system-wide file: the program's, not those of
    /// JIT runtimes beside it, whose code perf names by offset in its memfd); all when null.</param>
    internal (Collect Sink, StackSymbolizer Symbolizer) AssertDwarfFramesEqualPerfScript(PerfDataReader reader,
        string data, double maxShortShare, IReadOnlySet<int>? threads = null)
    {
        var sink = new Collect(reader.Threads);
        reader.Read(sink);
        var symbolizer = new StackSymbolizer(reader.Maps, reader.RecordedBuildIds,
            new SymbolOptions { KernelSymbols = SymbolOptions.RunningKernel(reader.Info.KernelRelease) });
        var perf = PerfScriptStacks(data, "--no-inline");
        int compared = 0, equal = 0, userFrames = 0, perfEndFrames = 0;
        var differences = new List<string>();
        foreach (var ((tid, time), recorded) in perf)
        {
            if (threads is not null && !threads.Contains(tid)) continue;
            var frames = recorded;
            compared++;
            if (!sink.Stacks.TryGetValue((tid, time), out var id))
            {
                differences.Add($"{tid} at {time}: no stack in TraceLab");
                continue;
            }

            // Inlined frames are compared below, with perf's.
            var ours = symbolizer.Stack(reader.Stacks, id).Where(f => !f.Inlined).ToList();
            userFrames += ours.Count(f => !f.Kernel);
            // Where libdw cannot go on, perf still prints last frames in no mapping: at address 0 − 1 after a
            // return address it could not read (it lay beyond the copied 8 KB, e.g. above buffered_vfprintf's 8 KB
            // buffer), or a guessed return address (a word off the stack) where the interrupted function has no CFI
            // (hand-written assembly such as libnettle's _nettle_cpuid). TraceLab ends the stack there; the frames
            // before those must be equal.
            if (frames.Count > ours.Count && frames.Skip(ours.Count).All(f => f.Item2 == "[unknown]"))
            {
                frames = frames[..ours.Count];
                perfEndFrames++;
            }

            var why = Difference(frames, ours);
            if (why is null) equal++;
            else differences.Add($"{tid} at {time}: {why}");
        }

        _output.WriteLine($"{equal} of {compared} stacks equal perf script's ({userFrames} user frames; " +
            $"{perfEndFrames} with perf's last frames in no mapping left out); differences:");
        foreach (var d in differences.Take(20)) _output.WriteLine("  " + d);
        Assert.True(compared > 50, $"only {compared} stacks recorded");
        // Every sample's copy was unwound; those that stopped early are counted (the report says how many).
        _output.WriteLine($"unwound {reader.Stacks.Unwound}, stopped early {reader.Stacks.UnwoundShort}");
        Assert.True(reader.Stacks.Unwound >= compared * 0.9, $"{reader.Stacks.Unwound} unwound of {compared}");
        Assert.True(reader.Stacks.UnwoundShort <= reader.Stacks.Unwound * maxShortShare,
            $"{reader.Stacks.UnwoundShort} of {reader.Stacks.Unwound} stopped early");
        Assert.True(equal >= compared * 0.99,
            $"{equal} of {compared} stacks equal; first: {differences.FirstOrDefault()}");
        return (sink, symbolizer);
    }

    /// <summary>
    /// The frames of <paramref name="program"/> with the functions inlined at their addresses (its DWARF .debug_info)
    /// equal perf script's with its inlined frames ("take_stats_lock (inlined)" before update_stats), address by
    /// address, in at least 99 % of the stacks. Only the program's frames: perf names libc's last inlined frame by
    /// its DWARF name and drops the ELF symbol's frame (`___pthread_mutex_lock (inlined)` for pthread_mutex_lock).
    /// </summary>
    private void AssertInlinedFramesEqualPerfScript(PerfDataReader reader, string data, Collect sink,
        StackSymbolizer symbolizer, string program)
    {
        int compared = 0, equal = 0, inlined = 0;
        string? first = null;
        foreach (var ((tid, time), perf) in PerfScriptStacks(data))
        {
            if (!sink.Stacks.TryGetValue((tid, time), out var id)) continue;
            var all = symbolizer.Stack(reader.Stacks, id);
            var addresses = all.Where(f => f.Module == program).Select(f => f.ModuleOffset).ToHashSet();
            if (addresses.Count == 0) continue;
            var ours = all.Where(f => f.Module == program).Select(f => (f.ModuleOffset, f.Symbol)).ToList();
            var theirs = perf.Where(f => addresses.Contains(f.Item1))
                .Select(f => (f.Item1, (string?)f.Item2.Replace(" (inlined)", "", StringComparison.Ordinal)))
                .ToList();
            compared++;
            inlined += all.Count(f => f.Module == program && f.Inlined);
            if (ours.SequenceEqual(theirs)) equal++;
            else first ??= $"{tid} at {time}: ours {string.Join(" ", ours)} | perf {string.Join(" ", theirs)}";
        }

        _output.WriteLine($"inlined: {equal} of {compared} stacks' program frames equal perf script's " +
            $"({inlined} inlined frames); first difference: {first}");
        Assert.True(inlined > 0, "no inlined frame of the program");
        Assert.True(equal >= compared * 0.99, $"{equal} of {compared} equal; first: {first}");
    }

    /// <summary>
    /// Null when perf's frames and TraceLab's agree: same addresses, same names where perf names one.
    /// </summary>
    private static string? Difference(List<(ulong Address, string Name)> perf, List<SymbolFrame> ours)
    {
        if (perf.Count != ours.Count)
            return $"{perf.Count} frames in perf script, {ours.Count} in TraceLab: " +
                string.Join(" ", perf.Select(f => $"{f.Address:x}:{f.Name}")) + " | " +
                string.Join(" ", ours.Select(f => $"{f.ModuleOffset:x}:{f.Symbol ?? "?"}"));
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

    private static Dictionary<(int, long), List<(ulong, string)>> PerfScriptStacks(string data,
        params string[] options)
    {
        var stacks = new Dictionary<(int, long), List<(ulong, string)>>();
        List<(ulong, string)>? current = null;
        foreach (var line in ProcessOutput.Lines("perf",
                     ["script", "-i", data, "--ns", "-F", "tid,time,ip,sym", .. options]))
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

    /// <summary>
    /// Stacks/lock_sites.c built with dpkg-buildflags' CFLAGS and LDFLAGS on Debian 12 (-O2 -g, no frame pointers,
    /// PIE by default); its path.
    /// </summary>
    private string BuildLockSites() => LockSitesProgram.Build(_dir);

    /// <summary>Stacks/NAME.c built with gcc -g -O2 -pthread (no frame pointers) into the test's folder.</summary>
    private string BuildTestProgram(string name)
    {
        var program = Path.Combine(_dir, name);
        var source = Path.Combine(RepoPaths.Root, "tests", "TraceLab.IntegrationTests", "Stacks", name + ".c");
        Run("gcc", "-g", "-O2", "-pthread", "-o", program, source);
        return program;
    }

    /// <summary>
    /// perf record of <paramref name="command"/> on the scheduler and futex tracepoints with
    /// <c>--call-graph <paramref name="callGraph"/></c> (fp: the frame-pointer walk, dwarf: copied stacks).
    /// </summary>
    private static void RecordLockEvents(string data, string callGraph, params string[] command) =>
        Run("perf", LockEventsRecord(data, callGraph, command));

    /// <summary>
    /// <see cref="RecordLockEvents"/> with perf, and so the program it starts, on CPU 0 (not `perf record -- taskset`:
    /// see <see cref="Dwarf_unwound_frames_through_the_vdso_equal_perf_script"/>).
    /// </summary>
    private static void RecordLockEventsOnCpu0(string data, string callGraph, params string[] command) =>
        Run("taskset", ["-c", "0", "perf", .. LockEventsRecord(data, callGraph, command)]);

    private static string[] LockEventsRecord(string data, string callGraph, string[] command) =>
        ["record", "-q", "--call-graph", callGraph, "-e", "sched:sched_switch", "-e", "sched:sched_waking",
            "-e", "syscalls:sys_enter_futex", "-e", "syscalls:sys_exit_futex", "-o", data, "--", .. command];

    /// <summary>
    /// For a failure's message: what perf itself finds in <paramref name="data"/> (events per name, and how many carry
    /// a call chain), and where the file is kept: a capture that yields nothing cannot be recorded again.
    /// </summary>
    private static string WhatWasRecorded(string data)
    {
        var kept = Path.Combine(Path.GetTempPath(), "tracelab-failed-captures",
            $"{DateTime.UtcNow:yyyyMMdd-HHmmss}-{Path.GetFileName(data)}");
        Directory.CreateDirectory(Path.GetDirectoryName(kept)!);
        File.Copy(data, kept, overwrite: true);
        List<PerfScriptSample> samples;
        try
        {
            samples = PerfScriptSamples.Read(data).ToList();
        }
        catch (Exception e) when (e is InvalidOperationException or IOException)
        {
            return $"perf script failed ({e.Message}); the file is kept as {kept}";
        }
        var counts = samples.GroupBy(x => x.Event).OrderBy(g => g.Key, StringComparer.Ordinal)
            .Select(g => (g.Key, Value: g.Count()));
        var withChain = samples.Count(x => x.Frames.Count > 0);
        return $"perf script: {string.Join(", ", counts.Select(c => $"{c.Key} {c.Value}"))}; {withChain} with a call "
            + $"chain; the file is kept as {kept}";
    }

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

/// <summary>
/// Stacks/lock_sites.c (a contended global mutex g_stats_lock, a contended heap mutex taken in queue_push, an
/// uncontended static one) built with Debian's default flags: no frame pointers.
/// </summary>
internal static class LockSitesProgram
{
    /// <summary>Builds it into <paramref name="dir"/> and returns its path.</summary>
    /// <param name="framePointers">Built with -fno-omit-frame-pointer (as Fedora and Ubuntu 24.04 build).</param>
    public static string Build(string dir, bool framePointers = false)
    {
        var program = Path.Combine(dir, framePointers ? "lock_sites_fp" : "lock_sites");
        var source = Path.Combine(RepoPaths.Root, "tests", "TraceLab.IntegrationTests", "Stacks", "lock_sites.c");
        var (code, _, stderr) = ProcessOutput.Run("gcc", "-g", "-O2",
            framePointers ? "-fno-omit-frame-pointer" : "-fomit-frame-pointer", "-fstack-protector-strong", "-Wformat",
            "-Werror=format-security", "-Wl,-z,relro", "-pthread", "-o", program, source);
        Assert.True(code == 0, $"gcc failed ({code}): {stderr}");
        return program;
    }
}
