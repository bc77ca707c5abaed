using System.Globalization;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Capture.Linux;

/// <summary>
/// One tracefs capture: a private instance with the scheduler (and optionally syscall) events enabled, per-CPU
/// raw pages copied to disk while the workload runs, and on <see cref="Stop"/> the metadata needed to decode them.
/// Disposing always removes the instance, and the raw page files unless <see cref="Stop"/> handed them over,
/// whatever happened before.
/// </summary>
public sealed class LinuxCaptureSession : IDisposable
{
    private readonly TracefsInstance _instance;
    private readonly CaptureGuard _guard;
    private readonly List<PerCpuPageCopier> _copiers = [];
    private readonly LinuxCaptureOptions _options;
    private readonly List<string> _enabled = [];
    private readonly List<string> _missing = [];
    private readonly int _pageSize;
    private readonly CancellationTokenSource _copyFailed = new();
    private bool _stopped;
    private bool _rawFilesHandedOver;

    private LinuxCaptureSession(TracefsInstance instance, CaptureGuard guard, LinuxCaptureOptions options, int pageSize,
        StaleInstances stale, IReadOnlyList<string> otherTracing)
    {
        OtherTracing = otherTracing;
        _instance = instance;
        _guard = guard;
        _options = options;
        _pageSize = pageSize;
        StaleInstancesRemoved = stale.Removed;
        StaleInstancesKept = stale.Kept;
    }

    /// <summary>File the traced program writes its markers to (lands in this instance's buffer only).</summary>
    public string TraceMarkerPath => _instance.TraceMarkerPath;
    public string InstanceName => _instance.Name;
    /// <summary>The process that removes the instance (and kills registered workloads) if TraceLab dies.</summary>
    public CaptureGuard Guard => _guard;
    /// <summary>Instances of TraceLab runs that died, removed before this capture started.</summary>
    public IReadOnlyList<string> StaleInstancesRemoved { get; }
    /// <summary>One line per stale instance that could not be removed, saying what holds it.</summary>
    public IReadOnlyList<string> StaleInstancesKept { get; }
    /// <summary>Other tracing active when this capture started (<see cref="Linux.OtherTracing.Find"/>).</summary>
    public IReadOnlyList<string> OtherTracing { get; }
    /// <summary>
    /// Cancelled when copying raw pages fails (e.g. disk full): the capture is lost, so the run should stop.
    /// </summary>
    public CancellationToken CopyFailed => _copyFailed.Token;
    public IReadOnlyList<string> MissingEvents => _missing;

    /// <summary>Raw bytes copied so far (all CPUs), for progress display.</summary>
    public long BytesCopied => _copiers.Sum(c => c.BytesCopied);

    public static LinuxCaptureSession Start(LinuxCaptureOptions options)
    {
        var root = Tracefs.Locate();
        var stale = TracefsInstance.RemoveStale(root);
        var headerPage = File.ReadAllText(Path.Combine(root, "events", "header_page"));
        var pageSize = HeaderPageLayout.Parse(headerPage).PageSize;
        var name = TracefsInstance.NameFor(Environment.ProcessId, options.RunId);
        // Looked at before this capture's instance exists: what else traces changes the timings about to be taken.
        var others = Linux.OtherTracing.Find(root, name);
        // The guard first: from the moment the instance exists, TraceLab dying (even by SIGKILL) removes it.
        var path = Path.Combine(root, "instances", name);
        var guard = CaptureGuard.Start(path);
        TracefsInstance instance;
        try
        {
            // Armed before mkdir, so no instant exists in which TraceLab could die and leave the instance behind;
            // a name that is already taken is refused before arming (it is not ours to remove).
            if (Directory.Exists(path))
                throw new TracingUnavailableException(
                    $"tracefs instance '{name}' already exists; refusing to reuse it");
            guard.Arm();
            instance = TracefsInstance.Create(root, name);
        }
        catch
        {
            guard.Dispose();
            throw;
        }
        var session = new LinuxCaptureSession(instance, guard, options, pageSize, stale, others);
        try
        {
            session.Configure();
            session.StartCopying();
            instance.SetTracing(true);
            return session;
        }
        catch
        {
            session.Dispose();
            throw;
        }
    }

    private void Configure()
    {
        _instance.SetTracing(false);
        _instance.Write("buffer_size_kb", _options.BufferSizeKb.ToString(CultureInfo.InvariantCulture));
        try { _instance.Write("trace_clock", _options.Clock); }
        catch (IOException ex)
        {
            throw new TracingUnavailableException(
            $"this kernel has no '{_options.Clock}' trace clock ({ex.Message})");
        }
        foreach (var ev in _options.Events ?? CaptureEventSet.For(_options.Syscalls))
        {
            if (!_instance.HasEvent(ev)) { _missing.Add(ev); continue; }
            _instance.EnableEvent(ev);
            _enabled.Add(ev);
        }
        if (!_enabled.Contains("sched/sched_switch"))
            throw new TracingUnavailableException(
                "this kernel has no sched:sched_switch tracepoint; TraceLab cannot account scheduling without it");
    }

    private void StartCopying()
    {
        Directory.CreateDirectory(_options.WorkDirectory);
        var cpus = _instance.CpuCount;
        for (var cpu = 0; cpu < cpus; cpu++)
        {
            var file = Path.Combine(_options.WorkDirectory, $".cpu{cpu}.raw");
            _copiers.Add(new PerCpuPageCopier(cpu, _instance.PerCpuPipe(cpu), file, _pageSize, OnCopyFailed));
        }
        foreach (var c in _copiers) c.Start();
    }

    private void OnCopyFailed()
    {
        try { _copyFailed.Cancel(); }
        catch (ObjectDisposedException) { }
    }

    /// <summary>
    /// Starts decoding the raw pages as they are copied (the `--live` view) and delivering them to
    /// <paramref name="sink"/>; dispose the result before <see cref="Stop"/>.
    /// </summary>
    public IDisposable StartLive(IKernelEventSink sink)
    {
        var root = _instance.TracefsRoot;
        var layout = HeaderPageLayout.Parse(File.ReadAllText(Path.Combine(root, "events", "header_page")));
        var formats = _enabled.Select(ev => FtraceEventFormat.Parse(
            _instance.EventFormat(ev), ev[..ev.IndexOf('/', StringComparison.Ordinal)])).ToList();
        formats.Add(FtraceEventFormat.Parse(
            File.ReadAllText(Path.Combine(root, "events", "ftrace", "print", "format")), "ftrace"));
        var pump = new TracefsLivePump(layout, formats, _copiers.Select(c => c.OutputPath).ToList(), sink);
        pump.Start();
        return pump;
    }

    /// <summary>The first copy failure (as an <see cref="IOException"/> naming the CPU), if copying failed.</summary>
    public void ThrowIfCopyFailed()
    {
        if (_copiers.Select(c => c.Failure).FirstOrDefault(f => f is not null) is { } failure) throw failure;
    }

    /// <summary>
    /// Switches tracing off, drains every CPU's buffer, reads loss counters and formats, removes the instance.
    /// </summary>
    public RawCapture Stop()
    {
        if (_stopped) throw new InvalidOperationException("capture already stopped");
        _stopped = true;
        _instance.SetTracing(false);
        foreach (var c in _copiers) c.StopAndDrain();
        var stats = Enumerable.Range(0, _copiers.Count).Select(_instance.CpuStats).ToArray();
        var formats = _enabled.ToDictionary(e => e, _instance.EventFormat);
        var root = _instance.TracefsRoot;
        var capture = new RawCapture
        {
            CpuCount = _copiers.Count,
            PageSize = _pageSize,
            HeaderPage = File.ReadAllText(Path.Combine(root, "events", "header_page")),
            HeaderEvent = File.ReadAllText(Path.Combine(root, "events", "header_event")),
            EventFormats = formats,
            PrintFormat = File.ReadAllText(Path.Combine(root, "events", "ftrace", "print", "format")),
            SavedCmdlines = TryRead(Path.Combine(root, "saved_cmdlines")),
            CpuStats = stats,
            CpuDataFiles = _copiers.Select(c => c.OutputPath).ToArray(),
            Clock = _options.Clock,
            KernelRelease = TryRead("/proc/sys/kernel/osrelease").Trim(),
            MissingEvents = _missing.ToArray(),
            PagesCopied = _copiers.Sum(c => c.PagesCopied),
        };
        DisposeCopiers();
        _instance.Remove();
        _rawFilesHandedOver = true;
        return capture;
    }

    private static string TryRead(string path)
    {
        try { return File.ReadAllText(path); }
        catch (IOException) { return ""; }
        catch (UnauthorizedAccessException) { return ""; }
    }

    private void DisposeCopiers()
    {
        foreach (var c in _copiers)
        {
            // One copier failing to close must not keep the others' pipes open: rmdir of the instance needs them
            // closed.
            try { c.Dispose(); }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException) { }
        }
    }

    public void Dispose()
    {
        DisposeCopiers();
        _instance.Remove();
        if (!_rawFilesHandedOver)
        {
            foreach (var c in _copiers)
            {
                try { File.Delete(c.OutputPath); }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException) { }
            }
        }
        _copyFailed.Dispose();
        _guard.Dispose();
    }
}
