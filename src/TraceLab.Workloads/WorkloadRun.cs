using System.Diagnostics;

namespace TraceLab.Workloads;

/// <summary>
/// One execution of a native workload: started with its marker and result files, its console output logged to a
/// file, stopped (whole process tree) on cancellation or timeout.
/// </summary>
public sealed class WorkloadRun : IDisposable
{
    private readonly Process _process;
    private readonly StreamWriter _log;
    private readonly Task _pumpOut;
    private readonly Task _pumpErr;
    private readonly List<string> _stderrLines = [];

    private WorkloadRun(Process process, StreamWriter log, string resultPath)
    {
        _process = process;
        _log = log;
        ResultPath = resultPath;
        _pumpOut = Pump(process.StandardOutput, null);
        _pumpErr = Pump(process.StandardError, _stderrLines);
        StartedAt = Stopwatch.StartNew();
    }

    public int Pid => _process.Id;
    public string ResultPath { get; }
    public Stopwatch StartedAt { get; }
    public bool HasExited => _process.HasExited;

    public static WorkloadRun Start(
        string executable, IReadOnlyList<string> arguments, string? markerPath, string resultPath, string logPath)
    {
        var psi = new ProcessStartInfo(executable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        if (markerPath is not null)
        {
            psi.ArgumentList.Add("--marker");
            psi.ArgumentList.Add(markerPath);
        }
        psi.ArgumentList.Add("--result");
        psi.ArgumentList.Add(resultPath);
        foreach (var a in arguments) psi.ArgumentList.Add(a);
        var log = new StreamWriter(logPath) { AutoFlush = true };
        log.WriteLine($"$ {executable} {string.Join(' ', psi.ArgumentList)}");
        try
        {
            var p = Process.Start(psi) ?? throw new WorkloadException($"cannot start {executable}");
            return new WorkloadRun(p, log, resultPath);
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            log.Dispose();
            throw new WorkloadException($"cannot start {executable}: {ex.Message}");
        }
    }

    private async Task Pump(StreamReader reader, List<string>? keep)
    {
        while (await reader.ReadLineAsync().ConfigureAwait(false) is { } line)
        {
            lock (_log) _log.WriteLine(line);
            if (keep is not null) lock (keep) keep.Add(line);
        }
    }

    /// <summary>Waits for exit; on cancellation kills the whole process tree and rethrows.</summary>
    public async Task<int> WaitAsync(CancellationToken cancellationToken)
    {
        try
        {
            await _process.WaitForExitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            Kill();
            throw;
        }
        await Task.WhenAll(_pumpOut, _pumpErr).ConfigureAwait(false);
        return _process.ExitCode;
    }

    public void Kill()
    {
        try
        {
            if (!_process.HasExited) _process.Kill(entireProcessTree: true);
            _process.WaitForExit(5000);
        }
        catch (InvalidOperationException)
        {
        }
    }

    /// <summary>The workload's own error lines (its validation messages), for a one-line report.</summary>
    public string ErrorText()
    {
        lock (_stderrLines) return string.Join(" ", _stderrLines).Trim();
    }

    public WorkloadResult ReadResult()
    {
        if (!File.Exists(ResultPath)) throw new WorkloadException($"the workload wrote no result ({ResultPath})");
        return WorkloadResult.Parse(File.ReadAllText(ResultPath), ResultPath);
    }

    public void Dispose()
    {
        Kill();
        try { Task.WaitAll([_pumpOut, _pumpErr], TimeSpan.FromSeconds(2)); }
        catch (AggregateException) { }
        _process.Dispose();
        lock (_log) _log.Dispose();
    }
}
