using TraceLab.Capture.Windows;
using TraceLab.Core.Capture;
using Xunit;

namespace TraceLab.Tests.Capture;

/// <summary>
/// What the ETW guard stops when TraceLab dies, and what a run puts in the kill-on-close job: the decision logic,
/// through the fake session API and a real pipe (the guard process itself runs under wine in
/// <c>EtwGuardWineTests</c>; ETW does not run there).
/// </summary>
public sealed class EtwGuardTests : IDisposable
{
    private const int OwnPid = 4242;
    private readonly string _dir =
        Path.Combine(Path.GetTempPath(), "tracelab-etwguard-" + Guid.NewGuid().ToString("N"));
    private readonly FakeEtwController _etw = new();
    private readonly List<InProcessEtwGuard> _guards = [];
    private readonly List<FakeProcessJob> _jobs = [];

    public void Dispose()
    {
        foreach (var g in _guards) g.Dispose();
        if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
    }

    private EtwCaptureBackend Backend() => new(_etw, pid => pid is OwnPid or 777, (from, to) => File.Copy(from, to),
        OwnPid,
        owner =>
        {
            var g = new InProcessEtwGuard(owner, _etw);
            _guards.Add(g);
            return g;
        },
        () =>
        {
            var j = new FakeProcessJob();
            _jobs.Add(j);
            return j;
        });

    private CaptureRequest Request() => new() { RunId = "run-1", WorkDirectory = _dir, BufferSizeKb = 1024 };

    private static string Own(string run) => $"TraceLab-{OwnPid}-{run}";

    [Fact]
    public void At_end_of_input_the_loop_stops_exactly_the_watched_sessions_of_its_owner()
    {
        _etw.Active.AddRange([Own("a"), Own("b"), Own("a-live"), "TraceLab-777-other", "NT Kernel Logger"]);
        var input = new StringReader(string.Join('\n',
            $"w {Own("a")}", $"w {Own("b")}", $"w {Own("a-live")}", $"f {Own("b")}",
            "w TraceLab-777-other", "w NT Kernel Logger", "x junk", $"w {Own("a")}", ""));
        var log = new StringWriter();

        var stopped = EtwGuardLoop.Run(input, OwnPid, _etw, log);

        Assert.Equal([Own("a"), Own("a-live")], stopped);
        Assert.Equal([Own("a"), Own("a-live")], _etw.StopCalls);
        Assert.Equal([Own("b"), "TraceLab-777-other", "NT Kernel Logger"], _etw.Active);
        Assert.Contains("ignored 'w TraceLab-777-other'", log.ToString(), StringComparison.Ordinal);
        Assert.Contains("ignored 'w NT Kernel Logger'", log.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_session_that_cannot_be_stopped_is_reported_with_the_command_and_the_rest_still_stopped()
    {
        _etw.Active.AddRange([Own("a"), Own("b")]);
        _etw.RefuseToStop.Add(Own("a"));
        var log = new StringWriter();

        var stopped = EtwGuardLoop.Run(new StringReader($"w {Own("a")}\nw {Own("b")}\n"), OwnPid, _etw, log);

        Assert.Equal([Own("b")], stopped);
        Assert.Contains($"logman stop {Own("a")} -ets", log.ToString(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(new[] { "123" }, 123)]
    [InlineData(new string[0], null)]
    [InlineData(new[] { "-5" }, null)]
    [InlineData(new[] { "0" }, null)]
    [InlineData(new[] { "12", "13" }, null)]
    [InlineData(new[] { "abc" }, null)]
    public void The_guard_takes_exactly_one_owner_pid(string[] args, int? owner) =>
        Assert.Equal(owner, EtwGuardLoop.ParseOwner(args));

    [Fact]
    public void The_guard_watches_the_session_before_it_starts_and_forgets_it_once_the_run_stopped_it()
    {
        var backend = Backend();
        using var session = (EtwCaptureSession)backend.Start(Request());
        var guard = Assert.Single(_guards);
        Assert.Equal([$"w {Own("run-1")}"], guard.Sent);
        Assert.Equal(Own("run-1"), Assert.Single(_etw.Started).Name);

        session.Stop();
        Assert.Equal([$"w {Own("run-1")}", $"f {Own("run-1")}"], guard.Sent);
        session.Dispose();

        // The normal end closes the pipe too: the guard then has nothing left to stop.
        Assert.True(guard.Disposed);
        Assert.Equal([], guard.Stopped);
        Assert.Empty(_etw.Active);
    }

    [Fact]
    public void TraceLab_dying_mid_run_gets_its_session_stopped_by_the_guard_and_nothing_else()
    {
        _etw.Active.Add("TraceLab-777-live-run");
        var session = (EtwCaptureSession)Backend().Start(Request());
        Assert.Contains(Own("run-1"), _etw.Active);

        // No Stop, no Dispose: the process is gone and only its handles close.
        var guard = Assert.Single(_guards);
        guard.Die();

        Assert.Equal([Own("run-1")], guard.Stopped);
        Assert.Equal(["TraceLab-777-live-run"], _etw.Active);
        Assert.Contains($"stopped ETW session {Own("run-1")}", guard.Log, StringComparison.Ordinal);
        GC.KeepAlive(session);
    }

    [Fact]
    public void A_session_that_fails_to_start_releases_its_guard()
    {
        _etw.StartFailure = new UnauthorizedAccessException("Access is denied");
        Assert.Throws<CaptureUnavailableException>(() => Backend().Start(Request()));
        var guard = Assert.Single(_guards);
        Assert.True(guard.Disposed);
        Assert.Empty(_etw.Active);
    }

    [Fact]
    public void A_built_in_workload_goes_into_the_job_which_is_closed_with_the_session()
    {
        var session = (EtwCaptureSession)Backend().Start(Request());
        Assert.Empty(_jobs);                       // made only when a workload needs it
        var guard = Assert.IsAssignableFrom<ICaptureGuard>(session);
        guard.KillWithCapture(1234);
        guard.Release(1234);
        var job = Assert.Single(_jobs);
        Assert.Equal([1234], job.Added);
        Assert.False(job.Disposed);
        session.Dispose();
        Assert.True(job.Disposed);
    }

    [Theory]
    [InlineData(@"C:\tools\tracelab.exe", @"C:\tools\tracelab.dll", @"C:\tools\tracelab.exe", new string[0])]
    [InlineData(@"C:\Program Files\dotnet\dotnet.exe", @"C:\src\tracelab.dll",
        @"C:\Program Files\dotnet\dotnet.exe", new[] { @"C:\src\tracelab.dll" })]
    [InlineData(
        "/usr/share/dotnet/dotnet", "/src/tracelab.dll", "/usr/share/dotnet/dotnet", new[] { "/src/tracelab.dll" })]
    [InlineData(@"C:\tools\tracelab.exe", "", @"C:\tools\tracelab.exe", new string[0])]
    public void TraceLab_starts_itself_again_through_its_own_executable_or_the_dotnet_host(
        string processPath, string entry, string file, string[] arguments)
    {
        var self = SelfCommand.For(processPath, entry);
        Assert.Equal(file, self.FileName);
        Assert.Equal(arguments, self.Arguments);
    }
}
