using System.Globalization;
using TraceLab.Core;
using TraceLab.Core.Capture;

namespace TraceLab.Cli.Live;

/// <summary>
/// `trace --live`: per-second, per-thread switches, ready time and run time of the workload while it runs, from the
/// backend's real-time stream. Only the ETW backend has one; on tracefs the raw pages are parsed after the run.
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

    /// <summary>Refuses --live, before anything is created, where the backend has no real-time stream.</summary>
    public static void EnsureSupported(ICaptureBackend backend)
    {
        if (backend is not ILiveCaptureBackend)
            throw new UsageException($"--live needs a real-time event source; the {backend.Name} backend has none (ETW on Windows has): run without --live and read the report");
    }

    public static LiveView Start(ICaptureBackend backend, string runId, TextWriter output)
    {
        EnsureSupported(backend);
        var live = (ILiveCaptureBackend)backend;
        var rates = new LiveThreadRates(interval => Print(output, interval));
        return new LiveView(rates, live.StartLive(runId, rates));
    }

    /// <summary>From now on only the workload's threads are shown.</summary>
    public void Follow(int pid) => _rates.Follow(pid);

    internal static string Format(LiveInterval interval)
    {
        var seconds = (interval.EndNs - interval.BeginNs) / 1e9;
        var parts = interval.Threads.Select(t => string.Create(CultureInfo.InvariantCulture,
            $"{t.Tid}: {t.Switches / seconds:N0} sw/s ready {t.ReadyNs / 1e6 / seconds:0.0} ms/s run {t.RunNs / 1e6 / seconds:0.0} ms/s"));
        return $"live {interval.EndNs / 1e9:0.0} s | " + (interval.Threads.Count == 0 ? "no activity" : string.Join(" | ", parts));
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
