using System.Diagnostics;
using System.Runtime.InteropServices;
using TraceLab.Core;
using TraceLab.Formats.TraceDat;
using Xunit;

namespace TraceLab.Formats.Tests;

public sealed partial class TracefsIntegrationTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-fmt-it-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [TracefsFact]
    public void WriterAndReaderAgreeWithTraceCmd()
    {
        var root = TracefsFactAttribute.Root;
        var suffix = $"{Environment.ProcessId}-{DateTime.UtcNow.Ticks % 100000}";
        // Two instances traced together: ours is consumed through trace_pipe_raw, trace-cmd extract consumes (and removes) the other.
        var ours = Path.Combine(root, "instances", $"fmt-test-{suffix}-a");
        var theirs = Path.Combine(root, "instances", $"fmt-test-{suffix}-b");
        try
        {
            foreach (var inst in new[] { ours, theirs })
            {
                Directory.CreateDirectory(inst);
                File.WriteAllText(Path.Combine(inst, "buffer_size_kb"), "2048");
                File.WriteAllText(Path.Combine(inst, "events", "sched", "sched_switch", "enable"), "1");
                File.WriteAllText(Path.Combine(inst, "events", "sched", "sched_waking", "enable"), "1");
                File.WriteAllText(Path.Combine(inst, "tracing_on"), "1");
            }

            for (var i = 0; i < 10; i++)
            {
                File.WriteAllText(Path.Combine(ours, "trace_marker"), $"tracelab step {i}\n");
                File.WriteAllText(Path.Combine(theirs, "trace_marker"), $"tracelab step {i}\n");
                Run("/bin/sh", "-c \"sleep 0.01\"");
            }

            foreach (var inst in new[] { ours, theirs }) File.WriteAllText(Path.Combine(inst, "tracing_on"), "0");

            var cpus = Directory.GetDirectories(Path.Combine(ours, "per_cpu")).Length;
            var files = new List<string>();
            for (var cpu = 0; cpu < cpus; cpu++)
            {
                var raw = Path.Combine(_dir, $"cpu{cpu}.raw");
                DrainNonBlocking(Path.Combine(ours, "per_cpu", $"cpu{cpu}", "trace_pipe_raw"), raw);
                files.Add(raw);
            }

            var contents = TraceDatContents.FromTracefs(root, ours, new[] { "sched/sched_switch", "sched/sched_waking" }, files);
            var outDat = Path.Combine(_dir, "ours.dat");
            TraceDatWriter.Write(outDat, contents);

            // (a) trace-cmd reads our file and sees the same switches we decode.
            var report = Run("trace-cmd", $"report -i {outDat}");
            var reportSwitches = CountSwitchLines(report);
            var (ourSwitches, markers) = CountWithReader(outDat);
            Assert.True(ourSwitches > 0, "no sched_switch events were captured");
            Assert.Equal(reportSwitches, ourSwitches);
            Assert.True(markers >= 10, $"expected the 10 markers, decoded {markers}");
            Assert.Contains("tracelab step 3", report, StringComparison.Ordinal);
            var stat = Run("trace-cmd", $"report --stat -i {outDat}");
            Assert.Contains("CPU: 0", stat, StringComparison.Ordinal);
            Assert.Contains("overrun:", stat, StringComparison.Ordinal);

            // (b) we read what trace-cmd extract writes (zstd v7 by default, so also via an uncompressed conversion).
            var extracted = Path.Combine(_dir, "extract.dat");
            Run("trace-cmd", $"extract -B {Path.GetFileName(theirs)} -o {extracted}");
            var theirSwitches = CountSwitchLines(Run("trace-cmd", $"report -i {extracted}"));
            Assert.True(theirSwitches > 0, "trace-cmd extract captured no switches");
            var readable = extracted;
            if (IsCompressed(extracted))
            {
                var ex = Assert.Throws<TraceFormatException>(() => TraceDatReader.Open(extracted));
                Assert.Contains("compressed trace.dat v7 is not supported", ex.Message, StringComparison.Ordinal);
                readable = Path.Combine(_dir, "extract-v7.dat");
                Run("trace-cmd", $"convert -i {extracted} -o {readable} --file-version 7 --compression none");
                Assert.Equal(theirSwitches, CountWithReader(readable).Switches);
                readable = Path.Combine(_dir, "extract-v6.dat");
                Run("trace-cmd", $"convert -i {extracted} -o {readable} --file-version 6 --compression none");
            }

            Assert.Equal(theirSwitches, CountWithReader(readable).Switches);
        }
        finally
        {
            foreach (var inst in new[] { ours, theirs })
            {
                if (!Directory.Exists(inst)) continue;
                try { File.WriteAllText(Path.Combine(inst, "tracing_on"), "0"); } catch (IOException) { }
                Directory.Delete(inst);
            }
        }
    }

    private static (long Switches, long Markers) CountWithReader(string path)
    {
        using var reader = TraceDatReader.Open(path);
        var sink = new MarkerCountingSink();
        reader.Read(sink);
        Assert.Equal(sink.All, reader.Info.EventCount);
        return (sink.Switches, sink.Markers);
    }

    private sealed class MarkerCountingSink : IKernelEventSink
    {
        public long Switches, Markers, All;
        public void OnEvent(in KernelEvent e)
        {
            All++;
            if (e.Kind == KernelEventKind.Switch) Switches++;
            else if (e.Kind == KernelEventKind.Marker) Markers++;
        }
    }

    private static long CountSwitchLines(string report) =>
        report.Split('\n').Count(l => l.Contains(" sched_switch:", StringComparison.Ordinal));

    private static bool IsCompressed(string path)
    {
        var head = new byte[64];
        using (var fs = File.OpenRead(path)) fs.ReadExactly(head, 0, 32);
        if (head[10] != (byte)'7') return false;
        return !System.Text.Encoding.ASCII.GetString(head, 18, 5).StartsWith("none\0", StringComparison.Ordinal);
    }

    private static string Run(string file, string args)
    {
        var psi = new ProcessStartInfo(file, args) { RedirectStandardOutput = true, RedirectStandardError = true };
        using var p = Process.Start(psi)!;
        var stderr = p.StandardError.ReadToEndAsync();
        var stdout = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        Assert.True(p.ExitCode == 0, $"{file} {args} failed ({p.ExitCode}): {stderr.Result}");
        return stdout;
    }

    private const int ONonBlock = 0x800;

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int open(string path, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial nint read(int fd, Span<byte> buffer, nint count);

    [LibraryImport("libc")]
    private static partial int close(int fd);

    /// <summary>trace_pipe_raw blocks when empty; non-blocking reads stop at EAGAIN once the buffer is drained.</summary>
    private static void DrainNonBlocking(string pipe, string output)
    {
        var fd = open(pipe, ONonBlock);
        Assert.True(fd >= 0, $"open {pipe} failed: errno {Marshal.GetLastPInvokeError()}");
        try
        {
            using var outFile = File.Create(output);
            var page = new byte[4096];
            while (true)
            {
                var n = read(fd, page, page.Length);
                if (n <= 0) break;
                outFile.Write(page, 0, (int)n);
            }
        }
        finally
        {
            close(fd);
        }
    }
}
