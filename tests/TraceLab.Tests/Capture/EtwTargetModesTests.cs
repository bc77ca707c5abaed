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
/// events). The duration runs on a clock the test advances, so nothing here depends on how fast the machine is.
/// </summary>
public sealed class EtwTargetModesTests : IDisposable
{
    private readonly string _out =
        Path.Combine(Path.GetTempPath(), "tracelab-etwmodes-" + Guid.NewGuid().ToString("N"));
    private readonly ObservedController _etw = new();
    private readonly FakeProcessJob _job = new();
    private readonly ManualClock _clock = new();

    public void Dispose()
    {
        if (Directory.Exists(_out)) Directory.Delete(_out, recursive: true);
    }

    private TraceTargetCommand Command() => new(
        AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(TextWriter.Null),
            Interactive = InteractionSupport.No,
        }),
        new EtwCaptureBackend(_etw, pid => pid == Environment.ProcessId, (from, to) => File.Copy(from, to),
            Environment.ProcessId, createJob: () => _job),
        _clock);

    private TraceTargetCommand.Settings Settings(TraceTargetMode mode, IReadOnlyList<string> command,
        string? pids = null, double duration = 0) =>
        new(mode, command, pids, User: null, duration, _out, Force: true, BufferKb: 1024, SyscallSet.Lock);

    /// <summary>
    /// The fake session's .etl holds no events, so the capture ends in the analysis refusing it: the one error
    /// TraceLab reports for an empty trace, naming the file (any other exception is a failure of the mode itself).
    /// </summary>
    private async Task AssertAnalysisRefusesTheEmptyTrace(Task<int> run)
    {
        var ex = await Assert.ThrowsAsync<TraceLab.Core.TraceFormatException>(() => run);
        Assert.Contains(_out, ex.Message, StringComparison.Ordinal);
    }

    [EtwOffWindowsLinuxFact]
    public async Task Program_runs_inside_the_session_with_its_children()
    {
        var stamp = Path.Combine(Path.GetTempPath(), "tracelab-etwmodes-" + Guid.NewGuid().ToString("N"));
        try
        {
            // The child outlives the shell: the session must last until it has written its file too. The order is
            // read from the files each side left when the session started and stopped, not from clocks.
            var script = $"touch {stamp}.a; (sleep 0.3; touch {stamp}.b) & exit 3";
            _etw.AtStart = () => File.Exists(stamp + ".a");
            _etw.AtStop = () => File.Exists(stamp + ".b");
            await AssertAnalysisRefusesTheEmptyTrace(Command().RunAsync(
                Settings(TraceTargetMode.Program, ["sh", "-c", script])));
            Assert.True(File.Exists(stamp + ".a"), "the program never ran");
            Assert.False(_etw.SeenAtStart, "the program ran before the ETW session started");
            Assert.True(_etw.SeenAtStop, "the ETW session stopped before the program's child ended");
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
        using var target = Process.Start("sleep", "600");
        try
        {
            var run = Command().RunAsync(
                Settings(TraceTargetMode.Attach, [], target.Id.ToString(CultureInfo.InvariantCulture), duration: 0.5));
            // The duration is one timer of exactly --duration on the command's clock; until it fires, the session
            // records (the process would run for 10 minutes more).
            var timer = await _clock.Created.WaitAsync(TimeSpan.FromMinutes(2));
            Assert.Equal(TimeSpan.FromSeconds(0.5), timer.Due);
            Assert.Single(_etw.Inner.Active);
            Assert.False(run.IsCompleted, "the attach ended before its duration passed");
            timer.Fire();
            await AssertAnalysisRefusesTheEmptyTrace(run);
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
        var run = Command().RunAsync(Settings(TraceTargetMode.System, [], duration: 0.3));
        var timer = await _clock.Created.WaitAsync(TimeSpan.FromMinutes(2));
        Assert.Equal(TimeSpan.FromSeconds(0.3), timer.Due);
        Assert.Single(_etw.Inner.Active);
        Assert.False(run.IsCompleted, "the system capture ended before its duration passed");
        timer.Fire();
        await AssertAnalysisRefusesTheEmptyTrace(run);
        Assert.Single(_etw.Inner.Started);
        Assert.Empty(_etw.Inner.Active);
    }

    /// <summary>The fake controller, with what <see cref="AtStart"/> and <see cref="AtStop"/> saw.</summary>
    private sealed class ObservedController : IEtwSessionController
    {
        public FakeEtwController Inner { get; } = new();
        public Func<bool> AtStart { get; set; } = () => false;
        public Func<bool> AtStop { get; set; } = () => false;
        public bool SeenAtStart { get; private set; }
        public bool SeenAtStop { get; private set; }
        private bool _stopped;

        public bool IsElevated() => Inner.IsElevated();
        public IReadOnlyList<string> ActiveSessionNames() => Inner.ActiveSessionNames();
        public bool StopSession(string name) => Inner.StopSession(name);

        public IEtwRecordingSession Start(EtwSessionSettings settings)
        {
            SeenAtStart = AtStart();
            return new Observed(Inner.Start(settings), this);
        }

        private sealed class Observed(IEtwRecordingSession inner, ObservedController owner) : IEtwRecordingSession
        {
            public string Name => inner.Name;
            public IReadOnlyList<string> Notes => inner.Notes;
            public int EventsLost => inner.EventsLost;

            public void Stop()
            {
                if (!owner._stopped) owner.SeenAtStop = owner.AtStop();
                owner._stopped = true;
                inner.Stop();
            }

            public void Dispose() => inner.Dispose();
        }
    }

    /// <summary>A clock whose one timer fires only when the test says so.</summary>
    private sealed class ManualClock : TimeProvider
    {
        private readonly TaskCompletionSource<ManualTimer> _created =
            new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task<ManualTimer> Created => _created.Task;

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            var timer = new ManualTimer(() => callback(state), dueTime);
            Assert.True(_created.TrySetResult(timer), "the command started a second timer");
            return timer;
        }
    }

    /// <summary>A timer that remembers its due time and runs its callback on <see cref="Fire"/>.</summary>
    private sealed class ManualTimer(Action callback, TimeSpan due) : ITimer
    {
        public TimeSpan Due { get; private set; } = due;

        public void Fire() => callback();

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            Due = dueTime;
            return true;
        }

        public void Dispose() { }

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
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
