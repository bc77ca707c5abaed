using System.Globalization;
using TraceLab.Core;
using TraceLab.Core.Capture;

namespace TraceLab.Cli.Live;

/// <summary>
/// `trace --live`: per-second, per-thread switches, ready time and run time of the workload while it runs: on ETW
/// from a real-time session, on tracefs from the raw pages as they are copied.
/// </summary>
public sealed class LiveView : IDisposable
{
    private readonly LiveThreadRates _rates;
    private readonly IDisposable _stream;
    private bool _disposed;

    private LiveView(LiveThreadRates rates, IDisposable stream)
    {
        _rates = rates;
        _stream = stream;
    }

    public static LiveView Start(ICaptureSession session, TextWriter output)
    {
        if (session is not ILiveCapture live)
            throw new UsageException("--live needs a capture that can deliver events while it runs; this backend "
                + "cannot: run without --live and read the report");
        var rates = new LiveThreadRates(interval => Print(output, interval));
        return new LiveView(rates, live.StartLive(rates));
    }

    /// <summary>From now on only the workload's threads are shown.</summary>
    public void Follow(int pid) => _rates.Follow(pid);

    internal static string Format(LiveInterval interval)
    {
        var seconds = (interval.EndNs - interval.BeginNs) / 1e9;
        var parts = interval.Threads.Select(t => string.Create(CultureInfo.InvariantCulture,
            $"{t.Tid}: {t.Switches / seconds:N0} sw/s ready {t.ReadyNs / 1e6 / seconds:0.0} ms/s ")
            + string.Create(CultureInfo.InvariantCulture, $"run {t.RunNs / 1e6 / seconds:0.0} ms/s"));
        return $"live {(interval.EndNs - interval.OriginNs) / 1e9:0.0} s | "
            + (interval.Threads.Count == 0 ? "no activity" : string.Join(" | ", parts));
    }

    private static void Print(TextWriter output, LiveInterval interval)
    {
        lock (output) output.WriteLine(Format(interval));
    }

    public void Dispose()
    {
        if (_disposed) return;
        _disposed = true;
        _stream.Dispose();
    }
}
