using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Core;

namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>
/// A sample trace.dat (v6, captured by TraceLab) converted by `trace-cmd convert` to v7 compressed with zstd and to
/// uncompressed v7: each reads event for event as `trace-cmd report` reads the same file, and as the v6 original.
/// </summary>
public sealed partial class TraceDatV7ConvertTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-v7-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [TraceCmdConvertFact]
    public void Zstd_and_uncompressed_v7_agree_with_trace_cmd_report_and_with_the_v6_original()
    {
        var v6 = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");
        var zstd = Convert(v6, "zstd");
        var none = Convert(v6, "none");

        var original = TraceDatV7ExternalTests.ReadEvents(v6);
        Assert.True(original.Count > 10_000, $"the sample has only {original.Count} events");
        foreach (var (file, compression) in new[] { (zstd, "zstd"), (none, "none") })
        {
            using (var reader = TraceLab.Formats.TraceDat.TraceDatReader.Open(file))
            {
                Assert.Equal(7, reader.FileVersion);
                Assert.Equal(compression, reader.Compression);
            }

            var ours = TraceDatV7ExternalTests.ReadEvents(file);
            // Same decoder, same merge: the v7 file must give exactly the v6 file's events, in the same order.
            Assert.Equal(original, ours);

            var theirs = Report(file);
            Assert.Equal(theirs.Count, ours.Count);
            Assert.Equal(
                theirs.Select(t => (t.Ts, t.Cpu, t.Name == "sched_switch")).Order(),
                ours.Select(e => (e.Timestamp, e.Cpu, e.Kind == KernelEventKind.Switch)).Order());
        }

        Assert.True(new FileInfo(zstd).Length * 4 < new FileInfo(none).Length, "the zstd file is not compressed");
    }

    /// <summary>
    /// The installed trace-cmd cannot read zlib, so the real zlib guest file is rewritten uncompressed (V7Writer, same
    /// options: TSC2NSEC, TIME_SHIFT) and trace-cmd's timestamps for it are compared with ours for the zlib original:
    /// the tsc2nsec conversion and the guest time shift match trace-cmd's, event for event.
    /// </summary>
    [TraceCmdConvertFact("tracecmd/hip24_test_guest_v7zlib.dat")]
    public void A_zlib_tsc2nsec_guest_file_has_trace_cmds_timestamps()
    {
        var zlib = ExternalTraces.PathOf("tracecmd/hip24_test_guest_v7zlib.dat");
        var plain = Path.Combine(_dir, "guest-none.dat");
        V7Writer.Rewrite(zlib, plain, "none");

        var ours = TraceDatV7ExternalTests.ReadEvents(zlib);
        var theirs = Report(plain);
        Assert.Equal(90_029, theirs.Count);
        Assert.Equal(theirs.Select(t => (t.Ts, t.Cpu, t.Name == "sched_switch")).Order(),
            ours.Select(e => (e.Timestamp, e.Cpu, e.Kind == KernelEventKind.Switch)).Order());
        Assert.Equal(ours, TraceDatV7ExternalTests.ReadEvents(plain));
    }

    private string Convert(string input, string compression)
    {
        var output = Path.Combine(_dir, $"v7-{compression}.dat");
        var (exit, _, stderr) = ProcessOutput.Run("trace-cmd", "convert", "-i", input, "-o", output,
            "--file-version", "7", "--compression", compression);
        Assert.True(exit == 0, $"trace-cmd convert --compression {compression} failed: {stderr}");
        return output;
    }

    /// <summary>
    /// Every event line of `trace-cmd report -t` (nanosecond timestamps): timestamp, CPU, event name.
    /// </summary>
    private static List<(long Ts, int Cpu, string Name)> Report(string file)
    {
        var events = new List<(long, int, string)>();
        foreach (var line in ProcessOutput.Lines("trace-cmd", "report", "-t", "-i", file))
        {
            var m = EventLine().Match(line);
            if (!m.Success) continue;
            var ns = long.Parse(m.Groups["s"].Value, CultureInfo.InvariantCulture) * 1_000_000_000
                + long.Parse(m.Groups["ns"].Value.PadRight(9, '0'), CultureInfo.InvariantCulture);
            events.Add((ns, int.Parse(m.Groups["cpu"].Value, CultureInfo.InvariantCulture), m.Groups["name"].Value));
        }

        return events;
    }

    [GeneratedRegex(@"\[(?<cpu>\d+)\]\s+(?:\S+\s+)?(?<s>\d+)\.(?<ns>\d+):\s+(?<name>[\w:]+):")]
    private static partial Regex EventLine();
}
