using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Real `perf record -z` captures of the kernel-mutex workload: TraceLab's report of the compressed file equals its
/// report of the same capture rewritten uncompressed (<see cref="Decompress"/>; perf 6.1's `perf inject` keeps the
/// COMPRESSED records), read through the uncompressed path, and agrees with perf's own view of the -z file —
/// `perf sched timehist` for sched tracepoints, `perf script --show-switch-events` for a `--switch-events -a`
/// capture without sched tracepoints (switch records as the evidence).
/// </summary>
public sealed partial class PerfDataCompressedCaptureTests
{
    private readonly ITestOutputHelper _output;

    public PerfDataCompressedCaptureTests(ITestOutputHelper output) => _output = output;

    [PerfFact]
    public void A_compressed_sched_capture_reads_like_its_decompressed_copy_and_agrees_with_perf_sched()
    {
        using var dir = new TempDirectory("tracelab-perfz");
        var events = string.Join(',', PerfRecord.Events(TraceLab.Capture.Linux.SyscallSet.Lock));
        var (z, workload) = Record(dir.Path, ["-z", "-e", events]);
        var (zReport, plainReport) = BothWays(z, dir.Path, workload);
        var perf = PerfSchedOracle.From(z);

        var failures = new List<string>();
        foreach (var wt in workload.Threads)
        {
            var ours = zReport.Threads.Single(t => t.Tid == wt.Tid);
            Assert.True(perf.Timehist.TryGetValue(wt.Tid, out var th), $"perf sched timehist has no row for {wt.Tid}");
            var switches = ours.VoluntarySwitches + ours.InvoluntarySwitches;
            var exitSlice = perf.ExitSliceNs.GetValueOrDefault(wt.Tid);
            _output.WriteLine($"tid {wt.Tid}: run {ours.RunNs} ns vs timehist {th.RunNs} + exit slice {exitSlice}; " +
                $"switches {switches} vs sched-in {th.SchedIns}");
            PerfSchedOracle.Check(failures, $"{wt.Tid} switches vs timehist sched-in", switches, th.SchedIns, 0);
            if (zReport.Capture.ChainBreaksInRegion == 0)
                PerfSchedOracle.Check(failures, $"{wt.Tid} run time", ours.RunNs, th.RunNs + exitSlice, 1000);
        }

        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    [PerfFact]
    public void A_switch_events_capture_without_sched_tracepoints_agrees_with_perf_script()
    {
        using var dir = new TempDirectory("tracelab-perfsw");
        var (z, workload) = Record(dir.Path, ["-z", "--switch-events"]);
        var (report, _) = BothWays(z, dir.Path, workload);
        var oracle = SwitchRecordOracle(z);

        _output.WriteLine($"{report.Capture.Events:N0} events, {report.Capture.ChainBreaksInRegion} chain breaks");
        var failures = new List<string>();
        foreach (var wt in workload.Threads)
        {
            var ours = report.Threads.Single(t => t.Tid == wt.Tid);
            var (run, switches) = oracle.GetValueOrDefault(wt.Tid);
            var ourSwitches = ours.VoluntarySwitches + ours.InvoluntarySwitches;
            _output.WriteLine(
                $"tid {wt.Tid}: run {ours.RunNs} ns vs perf script {run}; switches {ourSwitches} vs {switches}");
            PerfSchedOracle.Check(failures, $"{wt.Tid} switches", ourSwitches, switches, 0);
            if (report.Capture.ChainBreaksInRegion == 0)
                PerfSchedOracle.Check(failures, $"{wt.Tid} run time", ours.RunNs, run, 1000);
        }

        var all = report.Threads.Sum(t => t.VoluntarySwitches + t.InvoluntarySwitches);
        Assert.True(all > 0, "the workload's threads switched");
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    /// <summary>
    /// The report of the -z file and of its copy rewritten uncompressed (the uncompressed path): every per-thread
    /// figure equal. Returns both (compressed first).
    /// </summary>
    private (RunReport Compressed, RunReport Plain) BothWays(string z, string dir, WorkloadResult workload)
    {
        var plain = Path.Combine(dir, "plain.perf.data");
        File.WriteAllBytes(plain, Decompress(File.ReadAllBytes(z)));
        var zr = TraceAnalysis.Analyze(z, workload, pid: workload.Pid);
        var pr = TraceAnalysis.Analyze(plain, workload, pid: workload.Pid);
        _output.WriteLine($"-z: {new FileInfo(z).Length:N0} bytes, {zr.Capture.Events:N0} events; " +
            $"decompressed: {new FileInfo(plain).Length:N0} bytes, {pr.Capture.Events:N0} events");
        Assert.True(new FileInfo(z).Length < new FileInfo(plain).Length, "the capture was compressed");
        Assert.Equal(pr.Capture.Events, zr.Capture.Events);
        Assert.Equal(pr.Capture.LostEvents, zr.Capture.LostEvents);
        Assert.Equal(
            pr.Threads.Select(t => (t.Tid, t.RunNs, t.VoluntarySwitches, t.InvoluntarySwitches, t.ReadyLatency.MaxNs)),
            zr.Threads.Select(t => (t.Tid, t.RunNs, t.VoluntarySwitches, t.InvoluntarySwitches, t.ReadyLatency.MaxNs)));
        return (zr, pr);
    }

    /// <summary>
    /// The perf.data as perf record without -z would have written it: each COMPRESSED record replaced by the records
    /// its zstd data completes (one zstd stream for the file; a record cut at a record's end waits for the next one;
    /// uncompressed records stay where they are), the HEADER_COMPRESSED feature dropped, feature offsets moved.
    /// </summary>
    private static byte[] Decompress(byte[] file)
    {
        const int compressedFeature = 27;
        var dataOffset = (int)BitConverter.ToUInt64(file, 40);
        var dataSize = (int)BitConverter.ToUInt64(file, 48);
        var data = new MemoryStream();
        var pending = new MemoryStream();
        using var zstd = new ZstdSharp.Decompressor();
        var buffer = new byte[1 << 20];
        for (var at = dataOffset; at < dataOffset + dataSize;)
        {
            var type = BitConverter.ToUInt32(file, at);
            int size = BitConverter.ToUInt16(file, at + 6);
            if (type != 81)
            {
                data.Write(file, at, size);
                at += size;
                continue;
            }

            ReadOnlySpan<byte> input = file.AsSpan(at + 8, size - 8);
            while (true)
            {
                var status = zstd.UnwrapStream(input, buffer, out var consumed, out var written);
                Assert.NotEqual(System.Buffers.OperationStatus.InvalidData, status);
                pending.Write(buffer, 0, written);
                input = input[consumed..];
                if (input.IsEmpty && written < buffer.Length) break;
            }

            // Whole records go out; a cut one waits.
            var bytes = pending.ToArray();
            var done = 0;
            while (bytes.Length - done >= 8 && bytes.Length - done >= BitConverter.ToUInt16(bytes, done + 6))
                done += BitConverter.ToUInt16(bytes, done + 6);
            data.Write(bytes, 0, done);
            pending = new MemoryStream();
            pending.Write(bytes, done, bytes.Length - done);
            at += size;
        }

        // perf record may end its stream inside a record; perf's reader leaves such a tail unread (so does TraceLab).
        var features = BitConverter.ToUInt64(file, 72);
        var entries = System.Numerics.BitOperations.PopCount(features)
            + System.Numerics.BitOperations.PopCount(BitConverter.ToUInt64(file, 80))
            + System.Numerics.BitOperations.PopCount(BitConverter.ToUInt64(file, 88))
            + System.Numerics.BitOperations.PopCount(BitConverter.ToUInt64(file, 96));
        var tableAt = dataOffset + dataSize;
        var shift = data.Length - dataSize - 16;
        var output = new MemoryStream();
        var header = file[..dataOffset];
        BitConverter.TryWriteBytes(header.AsSpan(48), (ulong)data.Length);
        BitConverter.TryWriteBytes(header.AsSpan(72), features & ~(1UL << compressedFeature));
        output.Write(header);
        output.Write(data.ToArray());
        // The table lists the set bits in order: all of the first word's bits lie below 64, bit 27 among them.
        var index = 0;
        for (var bit = 0; bit < 256 && index < entries; bit++)
        {
            if ((BitConverter.ToUInt64(file, 72 + 8 * (bit / 64)) & (1UL << (bit % 64))) == 0) continue;
            var entry = tableAt + 16 * index++;
            if (bit == compressedFeature) continue;
            output.Write(BitConverter.GetBytes(BitConverter.ToUInt64(file, entry) + (ulong)shift));
            output.Write(file, entry + 8, 8);
        }

        output.Write(file, tableAt + 16 * entries, file.Length - tableAt - 16 * entries);
        return output.ToArray();
    }

    /// <summary>Records the timemutex mutex scenario with `perf record -a` and the given options.</summary>
    private static (string PerfData, WorkloadResult Workload) Record(string dir, string[] options)
    {
        var def = WorkloadCatalog.All.Single(w => w.Name == "timemutex");
        var iterations = new Dictionary<string, string> { ["iterations"] = "20000" };
        var values = def.Resolve(def.FindScenario("mutex")!, iterations);
        var exe = new NativeWorkloadBuilder(RepoPaths.Root).EnsureBuilt("timemutex");
        var perfData = Path.Combine(dir, "capture.perf.data");
        var result = Path.Combine(dir, "workload.json");
        var args = new List<string> { "record", "-q", "-m", "16M", "-o", perfData, "-a" };
        args.AddRange(options);
        args.AddRange(["--", exe, "--result", result]);
        args.AddRange(def.Arguments(values));
        var (code, _, err) = ProcessOutput.Run("perf", [.. args]);
        if (code != 0) throw new InvalidOperationException($"perf record exited {code}: {err}");
        return (perfData, WorkloadResult.Parse(File.ReadAllText(result), result));
    }

    /// <summary>
    /// Per thread, run time and switch count from perf's text of the SWITCH_CPU_WIDE switch-out records (an
    /// independent reading of the rule in docs/formats.md): on each CPU a switch-out ends the running thread's slice
    /// and
    /// starts next's; it counts as the thread's switch unless its tid is -1 (the kernel's value for a task no longer
    /// alive: the running thread's exit).
    /// </summary>
    private static Dictionary<int, (long RunNs, long Switches)> SwitchRecordOracle(string perfData)
    {
        var result = new Dictionary<int, (long RunNs, long Switches)>();
        var running = new Dictionary<int, (int Tid, long Since)>();
        var lines = ProcessOutput.Lines(
            "perf", "script", "-i", perfData, "--ns", "--show-switch-events", "-F", "tid,cpu,time");
        foreach (var line in lines)
        {
            // "13746 [001]   455.433033123: PERF_RECORD_SWITCH_CPU_WIDE OUT preempt  next pid/tid: 13747/13799"
            var m = SwitchOut().Match(line);
            if (!m.Success) continue;
            var cpu = int.Parse(m.Groups["cpu"].Value, CultureInfo.InvariantCulture);
            var t = long.Parse(m.Groups["s"].Value, CultureInfo.InvariantCulture) * 1_000_000_000
                + long.Parse(m.Groups["ns"].Value.PadRight(9, '0'), CultureInfo.InvariantCulture);
            var tid = int.Parse(m.Groups["tid"].Value, CultureInfo.InvariantCulture);
            var next = int.Parse(m.Groups["next"].Value, CultureInfo.InvariantCulture);
            if (running.TryGetValue(cpu, out var r))
            {
                var prev = tid == -1 ? r.Tid : tid;
                var (run, n) = result.GetValueOrDefault(prev);
                if (prev == r.Tid) run += t - r.Since;
                result[prev] = (run, n + (tid == -1 ? 0 : 1));
            }

            running[cpu] = (next, t);
        }

        return result;
    }

    [GeneratedRegex(@"^\s*(?<tid>-?\d+)\s+\[(?<cpu>\d+)\]\s+(?<s>\d+)\.(?<ns>\d+):\s+PERF_RECORD_SWITCH_CPU_WIDE OUT\s"
        + @".*next pid/tid:\s*-?\d+/\s*(?<next>-?\d+)")]
    private static partial Regex SwitchOut();

}
