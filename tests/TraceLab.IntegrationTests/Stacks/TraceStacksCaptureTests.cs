using System.Globalization;
using TraceLab.Capture.Linux;
using TraceLab.Formats.StackJoin;
using TraceLab.Reporting;
using TraceLab.Reporting.Stacks;

namespace TraceLab.IntegrationTests.Stacks;

/// <summary>
/// Needs kernel tracing (tracefs, root), a working perf, gcc and nm; skipped, saying which is missing, elsewhere.
/// </summary>
public sealed class TraceStacksFactAttribute : FactAttribute
{
    public TraceStacksFactAttribute()
    {
        var reason = TestEnvironment.Reason(needsTraceCmd: true, needsWorkloads: false)
            ?? PerfStacksFactAttribute.Missing();
        if (reason is not null) Skip = reason;
    }
}

/// <summary>
/// `tracelab trace --stacks -- PROGRAM` as the real CLI on a program built without frame pointers (lock_sites): perf
/// records the blocking switches and wakeups with copied user stacks beside the tracefs capture, and the report names
/// each lock by its variable or call site with the stacks that waited and released, checked against perf script and
/// trace-cmd on the same files.
/// </summary>
public sealed class TraceStacksCaptureTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(180);
    private readonly string _dir = RepoPaths.NewTempDirectory("tracelab-trace-stacks");

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [TraceStacksFact]
    public void Trace_stacks_names_the_program_locks_with_whole_stacks_joined_from_perf_beside_the_trace()
    {
        var program = LockSitesProgram.Build(_dir);
        var outDir = Path.Combine(_dir, "out");
        var run = TraceTargetCaptureTests.Run(Deadline, null, "trace", "--stacks", "--out", outDir, "--", program,
            "100000");
        Assert.True(run.ExitCode == 0, run.Stderr);
        var stackFile = StackFile.PathFor(Path.Combine(outDir, "trace.dat"));
        Assert.True(File.Exists(stackFile), "no " + stackFile);
        var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(outDir, "report.json")));
        var stacks = report.Stacks!;
        var joined = stacks.StackFile!;
        var pid = report.Process!.Pid;
        output.WriteLine($"recorded {joined.Recorded}, joined {joined.Joined}, unmatched {joined.Unmatched}, after " +
            $"the trace {joined.AfterTrace}, lost {joined.Lost}, max offset {joined.MaxOffsetNs} ns; " +
            $"{new FileInfo(stackFile).Length:N0} bytes");

        // Independent: perf script's own count of the stack file's samples; every one is joined, unmatched or after
        // the trace, and all but a few in the trace's time found their event.
        var samples = ProcessOutput.Lines("perf", "script", "-i", stackFile, "-F", "time").Count();
        Assert.Equal(samples, joined.Recorded);
        Assert.Equal(joined.Recorded, joined.Joined + joined.Unmatched + joined.AfterTrace);
        Assert.True(joined.Joined > 0 && joined.Unmatched <= Math.Max(5, (joined.Joined + joined.Unmatched) / 20),
            $"{joined.Unmatched} of {joined.Joined + joined.Unmatched} stacks in the trace's time found no event");
        Assert.True(joined.MaxOffsetNs <= StackJoin.Window);

        // perf compresses what it writes when it can (the stack copies repeat; uncompressed, a busy server's outran
        // the page cache and lost most of them), and the reader joins the compressed records.
        Assert.Equal(PerfStackRecorder.Compresses("perf"), IsCompressed(stackFile));

        // TraceLab's own processes (the CLI, its guard, perf) are in no lock of the report: only the program's.
        foreach (var l in stacks.Locks) Assert.Equal(pid, l.Process);

        // The global mutex, named by its variable (nm), waited on in update_stats ← stats_worker, released in
        // stats_worker's unlock: whole stacks on a program without frame pointers.
        var stats = Assert.Single(stacks.Locks, l => l.Name == "g_stats_lock");
        Assert.Contains("g_stats_lock", Nm(program));
        var blocked = stats.Blocking.Where(b => b.Frames.Count > 0).ToList();
        Assert.Contains(blocked, b => Symbols(b).Contains("update_stats") && Symbols(b).Contains("stats_worker")
            && Symbols(b).Contains("start_thread"));
        if (stats.Releasing.Count > 0)
            Assert.Contains(stats.Releasing, r => Symbols(r).Any(s => s.Contains("pthread_mutex_unlock",
                StringComparison.Ordinal)) && Symbols(r).Contains("stats_worker"));
        // The heap mutex has no variable: named by its call site, with its source line.
        if (stacks.Locks.FirstOrDefault(l => l.Blocking.Any(b => Symbols(b).Contains("queue_push"))) is { } queue)
            Assert.StartsWith("lock taken in queue_push ← queue_worker (lock_sites.c:", queue.Name,
                StringComparison.Ordinal);

        // `analyze` of the committed trace joins the same file again: the same stacks section.
        var again = TraceTargetCaptureTests.Run(Deadline, null, "analyze", Path.Combine(outDir, "trace.dat"), "--out",
            Path.Combine(_dir, "again"));
        Assert.True(again.ExitCode == 0, again.Stderr);
        var second = ReportJson.Deserialize(File.ReadAllText(Path.Combine(_dir, "again", "report.json"))).Stacks!;
        Assert.Equal(stacks.Locks.Select(l => (l.Name, l.Waits, l.WaitMs)),
            second.Locks.Select(l => (l.Name, l.Waits, l.WaitMs)));
        Assert.Equal(joined.Joined, second.StackFile!.Joined);

        DamagedStackFilesCostOnlyTheirStacks(outDir);

        // Nothing TraceLab started records on: no perf writing into this directory.
        Assert.DoesNotContain(PerfProcesses(), cmdline => cmdline.Contains(outDir, StringComparison.Ordinal));
    }

    /// <summary>
    /// `--call-graph fp` (no --stacks needed): perf records the kernel's frame-pointer walk instead of a stack copy.
    /// On lock_sites built with frame pointers the program's frames are there (glibc, built without them, loses a
    /// frame or two, as any frame-pointer walk does), at a fraction of the dwarf copies' size, and nothing is unwound.
    /// </summary>
    [TraceStacksFact]
    public void Trace_call_graph_fp_records_frame_pointer_walks_at_a_fraction_of_the_size()
    {
        var program = LockSitesProgram.Build(_dir, framePointers: true);
        var outDir = Path.Combine(_dir, "out");
        var run = TraceTargetCaptureTests.Run(Deadline, null, "trace", "--call-graph", "fp", "--out", outDir, "--",
            program, "100000");
        Assert.True(run.ExitCode == 0, run.Stderr);
        var stackFile = StackFile.PathFor(Path.Combine(outDir, "trace.dat"));
        var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(outDir, "report.json")));
        var stacks = report.Stacks!;
        var joined = stacks.StackFile!;
        // The samples' own size as perf dumps them (perf report -D: decompressed when perf compressed the file), what
        // each stack costs perf's buffers.
        var bytesPerStack = MeanSampleBytes(stackFile);
        output.WriteLine($"recorded {joined.Recorded}, joined {joined.Joined}, lost {joined.Lost}; " +
            $"{bytesPerStack:0} bytes a stack");
        Assert.True(joined.Joined > 0);
        // No copies to unwind: perf's own callchains.
        Assert.Null(stacks.UnwoundStacks);
        Assert.True(bytesPerStack < 2048, $"{bytesPerStack:0} bytes a stack (dwarf copies take ~8,400)");
        Assert.Contains(ProcessOutput.Lines("perf", "evlist", "-v", "-i", stackFile),
            l => l.Contains("CALLCHAIN", StringComparison.Ordinal)
                && !l.Contains("STACK_USER", StringComparison.Ordinal));
        var stats = Assert.Single(stacks.Locks, l => l.Name == "g_stats_lock");
        Assert.Contains(stats.Blocking,
            b => Symbols(b).Contains("stats_worker") && Symbols(b).Contains("start_thread"));
    }

    /// <summary>Whether perf's header says it compressed the file (<c># compressed : Zstd, level = 1, ratio = 43</c>).
    /// </summary>
    private static bool IsCompressed(string perfData) =>
        ProcessOutput.Lines("perf", "report", "--header-only", "-i", perfData)
            .Any(l => l.StartsWith("# compressed :", StringComparison.Ordinal));

    /// <summary>The mean size of the file's sample records in <c>perf report -D</c>'s dump (<c>0x14ee68 [0x2180]:
    /// PERF_RECORD_SAMPLE…</c>: the record's size in brackets).</summary>
    private static double MeanSampleBytes(string perfData)
    {
        var sizes = ProcessOutput.Lines("perf", "report", "-D", "-i", perfData)
            .Where(l => l.Contains("PERF_RECORD_SAMPLE", StringComparison.Ordinal))
            .Select(l => l[(l.IndexOf("[0x", StringComparison.Ordinal) + 3)..l.IndexOf("]:", StringComparison.Ordinal)])
            .Select(h => long.Parse(h, NumberStyles.HexNumber, CultureInfo.InvariantCulture)).ToList();
        Assert.NotEmpty(sizes);
        return sizes.Average();
    }

    [TraceStacksFact]
    public void Trace_stacks_without_perf_says_so_in_one_line_before_running_anything()
    {
        var outDir = Path.Combine(_dir, "out");
        var marker = Path.Combine(_dir, "ran");
        // A PATH with the shell's tools and no perf (dotnet is started by its full path).
        var bin = Path.Combine(_dir, "bin");
        Directory.CreateDirectory(bin);
        foreach (var tool in new[] { "sh", "touch" })
            File.CreateSymbolicLink(Path.Combine(bin, tool), FullPath(tool));
        var path = new Dictionary<string, string> { ["PATH"] = bin };
        var (run, _) = TraceTargetCaptureTests.RunWithPid(Deadline, null, path, "trace", "--stacks", "--out", outDir,
            "--", "sh", "-c", $"touch {marker}");
        Assert.NotEqual(0, run.ExitCode);
        var line = Assert.Single(run.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.Contains("--stacks needs perf", line, StringComparison.Ordinal);
        Assert.False(File.Exists(marker), "the program ran although --stacks could not record");
        Assert.False(Directory.Exists(outDir) && Directory.EnumerateFileSystemEntries(outDir).Any(),
            "files were written although nothing was recorded");
    }

    /// <summary>
    /// Waits whose syscall says nothing of what they wait for, told apart by their blocking stacks
    /// (docs/metrics.md#wait-stack-tags): kernel_waits' two mapper threads queue for their process's mmap_lock
    /// beneath mmap/munmap (a lock: the kernel's rwsem slow path) and its faulter blocks in major faults on a file
    /// whose cache it dropped (memory: no syscall is open, so the rules alone say unknown). The waits the rwsem tag
    /// moved are counted independently in perf script: the program's sched_switch samples with that frame.
    /// </summary>
    [TraceStacksFact]
    public void Trace_stacks_tells_a_kernel_lock_wait_and_a_page_fault_by_their_stacks()
    {
        var program = Path.Combine(_dir, "kernel_waits");
        var source = Path.Combine(RepoPaths.Root, "tests", "TraceLab.IntegrationTests", "Stacks", "kernel_waits.c");
        var cc = ProcessOutput.Run("gcc", "-O2", "-pthread", "-o", program, source);
        Assert.True(cc.ExitCode == 0, cc.Stderr);
        var outDir = Path.Combine(_dir, "out");
        var run = TraceTargetCaptureTests.Run(Deadline, null, "trace", "--stacks", "--out", outDir, "--", program,
            Path.Combine(_dir, "pages"), "1");
        Assert.True(run.ExitCode == 0, run.Stderr);
        var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(outDir, "report.json")));
        var waits = Assert.IsType<Reporting.Waits.WaitsSection>(
            report.SectionOf(AnalysisReports.Of<Reporting.Waits.WaitsReport>()));
        var tagged = waits.Stacks!;
        foreach (var m in tagged.Moves)
            output.WriteLine($"moved {m.From} → {m.To} {m.Ns / 1e6:F1} ms in {m.Waits} waits ({m.Tag})");

        var rwsem = tagged.Moves.Where(m => m.Tag.StartsWith("rwsem_down_", StringComparison.Ordinal)).ToList();
        Assert.NotEmpty(rwsem);
        Assert.All(rwsem, m => Assert.Equal("lock", m.To));
        var faults = tagged.Moves.Where(m => m.Tag is "handle_mm_fault" or "exc_page_fault").ToList();
        Assert.Contains(faults, m => m.From == "unknown" && m.To == "memory" && m.Ns > 0);

        // Independent: perf script's blocking switches of the program's threads whose stack has the rwsem slow path.
        var tids = report.Threads.Select(t => t.Tid).ToHashSet();
        var perfCount = PerfSwitchesWithFrame(StackFile.PathFor(Path.Combine(outDir, "trace.dat")), tids,
            f => f.StartsWith("rwsem_down_", StringComparison.Ordinal));
        var moved = rwsem.Sum(m => m.Waits);
        var unmatched = report.Stacks!.StackFile!.Unmatched;
        output.WriteLine($"rwsem waits: {moved} moved by the tag, {perfCount} switches with the frame in perf " +
            $"script; {unmatched} stacks of the file found no event");
        // Every such switch perf recorded is a moved wait, or among the stacks the join could not match to an event
        // (docs/formats.md#stack-join), or one of the few waits cut by the trace's ends.
        Assert.InRange(moved, perfCount - unmatched - 3, perfCount);

        // A user's tag file (`analyze --wait-tags`): the main thread's wait in pthread_join, which no shipped tag
        // names, is given the file's class through the program's own frame (main), for the second it waits.
        var tagFile = Path.Combine(_dir, "mine.tags");
        File.WriteAllText(tagFile, "# kernel_waits' main only joins its threads\nsleep main\n");
        var again = TraceTargetCaptureTests.Run(Deadline, null, "analyze", Path.Combine(outDir, "trace.dat"),
            "--wait-tags", tagFile, "--out", Path.Combine(_dir, "tagged"));
        Assert.True(again.ExitCode == 0, again.Stderr);
        var retagged = Assert.IsType<Reporting.Waits.WaitsSection>(ReportJson.Deserialize(File.ReadAllText(
            Path.Combine(_dir, "tagged", "report.json"))).SectionOf(AnalysisReports.Of<Reporting.Waits.WaitsReport>()));
        var joins = retagged.Stacks!.Moves.Where(m => m.Tag == "main").ToList();
        foreach (var m in joins)
            output.WriteLine($"with the tag file: {m.From} → {m.To} {m.Ns / 1e6:F1} ms in {m.Waits} waits");
        Assert.NotEmpty(joins);
        Assert.All(joins, m => Assert.Equal("sleep", m.To));
        Assert.True(joins.Sum(m => m.Ns) > 900_000_000, $"{joins.Sum(m => m.Ns)} ns");
        var main = retagged.Threads.Single(t => t.Tid == report.Process!.Pid);
        Assert.Equal(joins.Sum(m => m.Ns), main.Ns[(int)Analyzers.Waits.WaitClass.Sleep]);
    }

    /// <summary>
    /// sched:sched_switch samples of <paramref name="tids"/> in a perf.data whose callchain has a frame
    /// <paramref name="frame"/> accepts, as perf script prints them.
    /// </summary>
    private static long PerfSwitchesWithFrame(string perfData, HashSet<int> tids, Func<string, bool> frame)
    {
        long count = 0;
        var inSwitch = false;
        var found = false;
        foreach (var line in ProcessOutput.Lines("perf", "script", "-i", perfData, "-F", "tid,event,ip,sym")
                     .Append(""))
        {
            if (line.Length == 0)
            {
                if (inSwitch && found) count++;
                inSwitch = found = false;
                continue;
            }
            if (!char.IsWhiteSpace(line[0]) || !line.TrimStart().StartsWith("ffff", StringComparison.Ordinal)
                && line.Contains("sched:", StringComparison.Ordinal))
            {
                var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                inSwitch = line.Contains("sched:sched_switch", StringComparison.Ordinal)
                    && int.TryParse(fields[0], CultureInfo.InvariantCulture, out var tid) && tids.Contains(tid);
                continue;
            }
            var parts = line.Trim().Split(' ', 2);
            if (inSwitch && parts.Length == 2 && frame(parts[1])) found = true;
        }
        return count;
    }

    /// <summary>
    /// Copies of the trace with damaged copies of its stack file: each reads to the end with every event of the trace
    /// (the damage costs stacks, said in the summary), or is refused with a
    /// <see cref="Core.TraceFormatException"/> when the stack file's header is what broke; nothing else is thrown and
    /// every read ends.
    /// </summary>
    private void DamagedStackFilesCostOnlyTheirStacks(string outDir)
    {
        var trace = Path.Combine(outDir, "trace.dat");
        var intact = File.ReadAllBytes(StackFile.PathFor(trace));
        var copyDir = Path.Combine(_dir, "damaged");
        Directory.CreateDirectory(copyDir);
        var copy = Path.Combine(copyDir, "trace.dat");
        File.Copy(trace, copy);
        long events;
        using (var whole = Formats.Registry.TraceFormats.All.Open(trace, Formats.Registry.TraceReadOptions.Default))
        {
            whole.Read(new CountingSink());
            events = whole.Info.EventCount;
        }

        var random = new Random(20261128);
        int read = 0, refused = 0, damaged = 0;
        for (var i = 0; i < 30; i++)
        {
            var bytes = (byte[])intact.Clone();
            for (var f = 0; f < 32; f++) bytes[random.Next(bytes.Length)] = (byte)random.Next(256);
            File.WriteAllBytes(StackFile.PathFor(copy), bytes);
            try
            {
                using var reader =
                    Formats.Registry.TraceFormats.All.Open(copy, Formats.Registry.TraceReadOptions.Default);
                var counter = new CountingSink();
                reader.Read(counter);
                Assert.Equal(events, counter.Count);
                read++;
                if ((reader as StackJoinedReader)?.Summary?.Damage is not null) damaged++;
            }
            catch (Core.TraceFormatException)
            {
                refused++;
            }
        }

        output.WriteLine($"damaged stack files: {read} read ({damaged} said where), {refused} refused");
        Assert.Equal(30, read + refused);
    }

    private sealed class CountingSink : Core.IKernelEventSink
    {
        public long Count { get; private set; }

        public void OnEvent(in Core.KernelEvent e) => Count++;
    }

    private static List<string> Symbols(StackEntry e) => e.Frames.Select(f => f.Symbol ?? "").ToList();

    private static string Nm(string program) => ProcessOutput.Run("nm", program).Stdout;

    private static List<string> PerfProcesses()
    {
        var found = new List<string>();
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), CultureInfo.InvariantCulture, out _)) continue;
            try
            {
                var cmdline = File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' ');
                if (cmdline.StartsWith("perf ", StringComparison.Ordinal)
                    || cmdline.Contains("/perf ", StringComparison.Ordinal))
                    found.Add(cmdline);
            }
            catch (IOException)
            {
                // The process exited meanwhile.
            }
        }

        return found;
    }

    private static string FullPath(string tool) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "/usr/bin:/bin").Split(':').Where(d => d.Length > 0)
        .Select(d => Path.Combine(d, tool)).First(File.Exists);
}
