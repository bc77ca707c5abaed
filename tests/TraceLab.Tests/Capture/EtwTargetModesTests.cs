using System.Diagnostics;
using System.Globalization;
using Spectre.Console;
using TraceLab.Capture.Linux;
using TraceLab.Capture.Windows;
using TraceLab.Cli.Commands;

namespace TraceLab.Tests.Capture;

/// <summary>
/// `trace -- PROGRAM`, `--pid`, `--system` on the ETW backend through the fake session API: the session runs from
/// before the program starts until its tree has exited (or the duration has passed), the program is never killed,
/// and the session is stopped whatever happens after. The analysis then fails (the fake session's .etl holds no
/// events).
/// </summary>
public sealed class EtwTargetModesTests : IDisposable
{
    private readonly string _out =
        Path.Combine(Path.GetTempPath(), "tracelab-etwmodes-" + Guid.NewGuid().ToString("N"));
    private readonly TimedController _etw = new();
    private readonly FakeProcessJob _job = new();

    public void Dispose()
    {
        if (Directory.Exists(_out)) Directory.Delete(_out, recursive: true);
    }

    private TraceTargetCommand Command() => new(
        AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(TextWriter.Null), Interactive = InteractionSupport.No,
        }),
        new EtwCaptureBackend(_etw, pid => pid == Environment.ProcessId, (from, to) => File.Copy(from, to),
            Environment.ProcessId, createJob: () => _job));

    private TraceTargetCommand.Settings Settings(TraceTargetMode mode, IReadOnlyList<string> command,
        string? pids = null, double duration = 0) =>
        new(mode, command, pids, User: null, duration, _out, Force: true, BufferKb: 1024, SyscallSet.Lock);

    [EtwOffWindowsLinuxFact]
    public async Task Program_runs_inside_the_session_with_its_children()
    {
        var stamp = Path.Combine(Path.GetTempPath(), "tracelab-etwmodes-" + Guid.NewGuid().ToString("N"));
        try
        {
            // The child outlives the shell: the session must last until it has written its time too.
            var script = $"date +%s%N > {stamp}.a; (sleep 0.3; date +%s%N > {stamp}.b) & exit 3";
            await Assert.ThrowsAnyAsync<Exception>(() =>
                Command().RunAsync(Settings(TraceTargetMode.Program, ["sh", "-c", script])));
            var started = ReadNs(stamp + ".a");
            var childEnded = ReadNs(stamp + ".b");
            Assert.True(_etw.StartedNs < started, "the program ran before the ETW session started");
            Assert.True(_etw.StoppedNs > childEnded, "the ETW session stopped before the program's child ended");
            Assert.Empty(_etw.Inner.Active);
            // A user's program never dies with TraceLab: it is not put in the kill-on-close job.
            Assert.Empty(_job.Added);
        }
        finally
        {
            File.Delete(stamp + ".a");
            File.Delete(stamp + ".b");
        }
    }

    [EtwOffWindowsLinuxFact]
    public async Task Attach_records_for_the_duration_and_leaves_the_process_running()
    {
        using var target = Process.Start("sleep", "30");
        try
        {
            await Assert.ThrowsAnyAsync<Exception>(() => Command().RunAsync(
                Settings(TraceTargetMode.Attach, [], target.Id.ToString(CultureInfo.InvariantCulture), duration: 0.5)));
            Assert.InRange(_etw.StoppedNs - _etw.StartedNs, 400_000_000, 30_000_000_000);
            Assert.False(target.HasExited);
            Assert.Empty(_etw.Inner.Active);
            Assert.Empty(_job.Added);
        }
        finally
        {
            target.Kill();
        }
    }

    [EtwOffWindowsLinuxFact]
    public async Task Attach_to_a_missing_process_starts_no_session()
    {
        Assert.Equal(2, await Command().RunAsync(Settings(TraceTargetMode.Attach, [], "999999999")));
        Assert.Empty(_etw.Inner.Started);
    }

    [EtwOffWindowsLinuxFact]
    public async Task System_records_for_the_duration()
    {
        await Assert.ThrowsAnyAsync<Exception>(() =>
            Command().RunAsync(Settings(TraceTargetMode.System, [], duration: 0.3)));
        Assert.InRange(_etw.StoppedNs - _etw.StartedNs, 250_000_000, 30_000_000_000);
        Assert.Single(_etw.Inner.Started);
        Assert.Empty(_etw.Inner.Active);
    }

    private static long ReadNs(string path) => long.Parse(File.ReadAllText(path).Trim(), CultureInfo.InvariantCulture);

    private static long NowNs() => (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;

    /// <summary>The fake controller, with the wall-clock times its session started and stopped.</summary>
    private sealed class TimedController : IEtwSessionController
    {
        public FakeEtwController Inner { get; } = new();
        public long StartedNs { get; private set; }
        public long StoppedNs { get; private set; }

        public bool IsElevated() => Inner.IsElevated();
        public IReadOnlyList<string> ActiveSessionNames() => Inner.ActiveSessionNames();
        public bool StopSession(string name) => Inner.StopSession(name);

        public IEtwRecordingSession Start(EtwSessionSettings settings)
        {
            StartedNs = NowNs();
            return new Timed(Inner.Start(settings), this);
        }

        private sealed class Timed(IEtwRecordingSession inner, TimedController owner) : IEtwRecordingSession
        {
            public string Name => inner.Name;
            public IReadOnlyList<string> Notes => inner.Notes;
            public int EventsLost => inner.EventsLost;

            public void Stop()
            {
                if (owner.StoppedNs == 0) owner.StoppedNs = NowNs();
                inner.Stop();
            }

            public void Dispose() => inner.Dispose();
        }
    }
}

/// <summary>Off Windows (the .etl read must fail) with Linux processes (sh, date, sleep); reason computed.</summary>
public sealed class EtwOffWindowsLinuxFactAttribute : FactAttribute
{
    public EtwOffWindowsLinuxFactAttribute()
    {
        var reason = TestEnvironment.EtwAvailableReason() ?? TestEnvironment.LinuxProcessesReason();
        if (reason is not null) Skip = reason;
    }
}
