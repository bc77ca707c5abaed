using Perfetto.Protos;
using TraceLab.Core;
using TraceLab.Export.Perfetto;
using Xunit;

namespace TraceLab.Tests.Export;

/// <summary>
/// A tid reused by a new thread is a new thread in the Perfetto export, as in TraceLab's reports (200 and 200#2).
/// The check replays the written ftrace events with trace_processor's rule for thread lifetimes (ftrace_parser:
/// task_newtask starts a new thread for its pid, sched_process_free ends the thread of its pid, any other event
/// names the tid's current thread, creating one when it has none) and compares with the hand-built trace's known
/// lifetimes.
/// </summary>
public sealed class PerfettoTidReuseTests
{
    /// <summary>
    /// Hand-built, times in ns. Tid 200 ("first") runs 0 → 100, exits at 90, leaves dead at 100; init (1) forks a new
    /// process 200 at 300, which runs 400 → 500 as "second" and writes a marker at 450. Tid 210 ("old") runs
    /// 600 → 700, exits and leaves dead; a new 210 ("new", its fork not in the trace) runs 800 → 900.
    /// </summary>
    private sealed class ReuseReader : IKernelTraceReader
    {
        public TraceInfo Info { get; } = new() { Backend = "test", TraceFile = "reuse", CpuCount = 2 };
        public ThreadTable Threads { get; } = new();

        public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
        {
            void Emit(KernelEvent e, params (int Tid, string Name)[] names)
            {
                foreach (var (tid, name) in names) Threads.SetName(tid, name);
                sink.OnEvent(e);
            }

            Emit(KernelEvent.Switch(0, 0, 0, 120, TaskState.Running, 200, 120), (200, "first"));
            Emit(KernelEvent.Exit(90, 0, 200, comm: "first"));
            Emit(KernelEvent.Switch(100, 0, 200, 120, TaskState.ExitDead, 0, 120));
            Emit(KernelEvent.Switch(250, 1, 0, 120, TaskState.Running, 1, 120), (1, "init"));
            Emit(KernelEvent.Fork(300, 1, 1, 200, ForkChild.Process), (200, "init"));
            Emit(KernelEvent.Switch(400, 0, 0, 120, TaskState.Running, 200, 120), (200, "second"));
            Emit(KernelEvent.Marker(450, 0, 200, "hello from the second 200"));
            Emit(KernelEvent.Switch(500, 0, 200, 120, TaskState.Interruptible, 0, 120));
            Emit(KernelEvent.Switch(600, 0, 0, 120, TaskState.Running, 210, 120), (210, "old"));
            Emit(KernelEvent.Exit(650, 0, 210, comm: "old"));
            Emit(KernelEvent.Switch(700, 0, 210, 120, TaskState.ExitDead, 0, 120));
            Emit(KernelEvent.Switch(800, 0, 0, 120, TaskState.Running, 210, 120), (210, "new"));
            Emit(KernelEvent.Switch(900, 0, 210, 120, TaskState.Interruptible, 0, 120));
            Emit(KernelEvent.Switch(1000, 1, 1, 120, TaskState.Interruptible, 0, 120));
        }

        public void Dispose() { }
    }

    private static (PerfettoTraceFile File, PerfettoExportSummary Summary) Export()
    {
        using var ms = new MemoryStream();
        var summary = PerfettoExporter.Export(new ReuseReader(), ms);
        return (new PerfettoTraceFile(ms.ToArray()), summary);
    }

    /// <summary>trace_processor's thread bookkeeping, reduced to what decides a utid.</summary>
    private sealed class Utids
    {
        private readonly Dictionary<int, int> _current = [];
        private int _next = 1;

        public int Of(int tid) => _current.TryGetValue(tid, out var u) ? u : _current[tid] = _next++;

        public void Start(int tid) => _current[tid] = _next++;

        public void End(int tid) => _current.Remove(tid);
    }

    [Fact]
    public void Each_lifetime_of_a_reused_tid_is_its_own_thread_in_perfetto()
    {
        var (file, summary) = Export();
        var utids = new Utids();
        var switchIns = new List<(ulong Ts, int Tid, int Utid)>();
        foreach (var (_, e) in file.Ftrace.OrderBy(x => x.Event.Timestamp))
        {
            if (e.TaskNewtask is { } task) utids.Start(task.Pid);
            else if (e.SchedProcessFree is { } free) utids.End(free.Pid);
            else if (e.SchedSwitch is { } sw && sw.NextPid > 0)
            {
                utids.Of(sw.PrevPid);
                switchIns.Add((e.Timestamp, sw.NextPid, utids.Of(sw.NextPid)));
            }
        }

        int UtidAt(ulong ts) => switchIns.Single(s => s.Ts == ts).Utid;
        Assert.NotEqual(UtidAt(0), UtidAt(400));      // 200, then the 200 forked at 300
        Assert.NotEqual(UtidAt(600), UtidAt(800));    // 210, then a 210 whose fork is not in the trace
        Assert.Equal(1, summary.NewTasks);
        Assert.Equal(2, summary.Frees);
        var newTask = file.Ftrace.Single(x => x.Event.TaskNewtask is not null).Event;
        Assert.Equal((300UL, 1u, 200, 0UL), (newTask.Timestamp, newTask.Pid, newTask.TaskNewtask.Pid,
            newTask.TaskNewtask.CloneFlags));
        // Each free follows its thread's dead switch-out at the same time.
        Assert.Equal([(100UL, 200), (700UL, 210)], file.Ftrace.Where(x => x.Event.SchedProcessFree is not null)
            .Select(x => (x.Event.Timestamp, x.Event.SchedProcessFree.Pid)));
    }

    [Fact]
    public void The_second_threads_marker_is_on_its_own_track_with_the_kernels_tid_and_its_name()
    {
        var (file, _) = Export();
        var tracks = file.Tracks;
        var marker = file.TrackEvents.Single(t => t.Event.Name == "hello from the second 200");
        var track = tracks[marker.Event.TrackUuid];

        Assert.Equal(200, track.Thread.Tid);
        Assert.Equal("second", track.Thread.ThreadName);
        // Its process: the new process 200#2 is reported with the kernel's pid.
        Assert.Equal(200, track.Thread.Pid);
        Assert.NotEqual(AnalysisTrackUuidOf(200), marker.Event.TrackUuid);
    }

    /// <summary>
    /// The uuid the first thread with a tid gets (a thread track's uuid is its base plus its thread id).
    /// </summary>
    private static ulong AnalysisTrackUuidOf(int tid) => (1UL << 32) + (uint)tid;
}
