using TraceLab.Capture.Linux;
using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests;

public sealed class TracefsIntegrationTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-fmt-it-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [TracingFact(needsTraceCmd: true, needsWorkloads: false)]
    public void WriterAndReaderAgreeWithTraceCmd()
    {
        var root = Tracefs.Locate();
        // Two captures of the same activity: ours through TraceLab's capture session (trace_pipe_raw → trace.dat),
        // the other through `trace-cmd extract`, which consumes (and removes) its instance.
        var theirs =
            Path.Combine(root, "instances", $"fmt-test-{Environment.ProcessId}-{DateTime.UtcNow.Ticks % 100000}");
        try
        {
            Directory.CreateDirectory(theirs);
            File.WriteAllText(Path.Combine(theirs, "buffer_size_kb"), "2048");
            File.WriteAllText(Path.Combine(theirs, "events", "sched", "sched_switch", "enable"), "1");
            File.WriteAllText(Path.Combine(theirs, "events", "sched", "sched_waking", "enable"), "1");
            File.WriteAllText(Path.Combine(theirs, "tracing_on"), "1");

            using var session = LinuxCaptureSession.Start(new LinuxCaptureOptions
            {
                RunId = "fmt-test",
                WorkDirectory = _dir,
                BufferSizeKb = 2048,
                Syscalls = SyscallSet.None,
            });
            for (var i = 0; i < 10; i++)
            {
                File.WriteAllText(session.TraceMarkerPath, $"tracelab step {i}\n");
                File.WriteAllText(Path.Combine(theirs, "trace_marker"), $"tracelab step {i}\n");
                Run("sleep", "0.01");
            }

            File.WriteAllText(Path.Combine(theirs, "tracing_on"), "0");
            var outDat = Path.Combine(_dir, "ours.dat");
            session.Stop().WriteTraceDat(outDat);

            // (a) trace-cmd reads our file and sees the same switches we decode.
            var report = Run("trace-cmd", "report", "-i", outDat);
            var reportSwitches = CountSwitchLines(report);
            var (ourSwitches, markers) = CountWithReader(outDat);
            Assert.True(ourSwitches > 0, "no sched_switch events were captured");
            Assert.Equal(reportSwitches, ourSwitches);
            Assert.True(markers >= 10, $"expected the 10 markers, decoded {markers}");
            Assert.Contains("tracelab step 3", report, StringComparison.Ordinal);
            var stat = Run("trace-cmd", "report", "--stat", "-i", outDat);
            Assert.Contains("CPU: 0", stat, StringComparison.Ordinal);
            Assert.Contains("overrun:", stat, StringComparison.Ordinal);

            // (b) we read what trace-cmd extract writes (zstd v7 by default), directly and through uncompressed
            // conversions to v7 and v6.
            var extracted = Path.Combine(_dir, "extract.dat");
            // The file holds the top-level buffer too, which is not empty when anything else wrote to it (a
            // trace_marker write outside any instance): read the instance by name.
            var instance = Path.GetFileName(theirs);
            Run("trace-cmd", "extract", "-B", Path.GetFileName(theirs), "-o", extracted);
            var theirSwitches = CountSwitchLines(Run("trace-cmd", "report", "-i", extracted));
            Assert.True(theirSwitches > 0, "trace-cmd extract captured no switches");
            var readable = extracted;
            if (IsCompressed(extracted))
            {
                Assert.Equal(theirSwitches, CountWithReader(extracted, instance).Switches);
                readable = Path.Combine(_dir, "extract-v7.dat");
                Run("trace-cmd", "convert", "-i", extracted, "-o", readable, "--file-version", "7", "--compression",
                    "none");
                Assert.Equal(theirSwitches, CountWithReader(readable, instance).Switches);
                readable = Path.Combine(_dir, "extract-v6.dat");
                Run("trace-cmd", "convert", "-i", extracted, "-o", readable, "--file-version", "6", "--compression",
                    "none");
            }

            Assert.Equal(theirSwitches, CountWithReader(readable, instance).Switches);
        }
        finally
        {
            if (Directory.Exists(theirs))
            {
                try { File.WriteAllText(Path.Combine(theirs, "tracing_on"), "0"); } catch (IOException) { }
                Directory.Delete(theirs);
            }
        }
    }

    private static (long Switches, long Markers) CountWithReader(string path, string? buffer = null)
    {
        using var reader = TraceDatReader.Open(path, new TraceReadOptions { BufferName = buffer });
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

    private static string Run(string file, params string[] args)
    {
        var (code, stdout, stderr) = ProcessOutput.Run(file, args);
        Assert.True(code == 0, $"{file} {string.Join(' ', args)} failed ({code}): {stderr}");
        return stdout;
    }
}
