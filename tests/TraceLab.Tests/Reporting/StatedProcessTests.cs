using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;
using Xunit;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// Processes that predate the trace, grouped by the process the reader states for each thread
/// (<see cref="ThreadTable.Processes"/>: perf's sample pid, ETW thread events) where no fork says whose a thread is
/// (times in µs; answers by inspection).
/// </summary>
public sealed class StatedProcessTests
{
    private const long Us = SystemScript.Us;
    private static readonly (int, string) Idle = (0, "swapper/0");

    /// <summary>
    /// Process 100 ("db": threads 100, 101, 102) and process 300 ("web": 300, 301) run one after the other on CPU 0;
    /// kworker/0:1 (a kernel thread, its own process) too. No fork, no exec, no listing.
    /// </summary>
    private static SystemScript OlderProcesses(bool stated)
    {
        var s = new SystemScript();
        (int, string)[] order =
            [(100, "db"), (101, "db"), (102, "db-io"), (300, "web"), (301, "web-w"), (40, "kworker/0:1")];
        var prev = Idle;
        var t = 0L;
        foreach (var next in order)
        {
            s.Switch(t, 0, prev, TaskState.Interruptible, next);
            prev = next;
            t += 10 * Us;
        }
        s.Switch(t, 0, prev, TaskState.Interruptible, Idle);
        if (stated)
        {
            foreach (var tid in new[] { 100, 101, 102 }) s.Names.SetProcess(tid, 100);
            foreach (var tid in new[] { 300, 301 }) s.Names.SetProcess(tid, 300);
            s.Names.SetProcess(40, 40);
        }
        return s;
    }

    [Fact]
    public void Threads_of_processes_older_than_the_trace_are_grouped_by_their_stated_process()
    {
        var r = OlderProcesses(stated: true).Report();

        var db = r.Processes.Single(p => p.Pid == 100);
        Assert.Equal(("db", 3, 30 * Us), (db.Name, db.ThreadCount, db.RunNs));
        var web = r.Processes.Single(p => p.Pid == 300);
        Assert.Equal(("web", 2, 20 * Us), (web.Name, web.ThreadCount, web.RunNs));
        Assert.Equal(100, r.Threads.Single(x => x.Tid == 102).Pid);
        Assert.Equal(300, r.Threads.Single(x => x.Tid == 301).Pid);
        // A thread stated as its own process keeps the kernel-thread grouping its name gives it.
        Assert.True(r.Processes.Single(p => p.Pid == ProcessLineage.KernelThreadsPid).KernelThreads);
        Assert.Equal(3, r.Processes.Count);
    }

    [Fact]
    public void Without_stated_processes_each_such_thread_is_its_own_process()
    {
        // The same trace as the reader used to deliver it: what the stated processes change.
        var r = OlderProcesses(stated: false).Report();

        Assert.Equal(6, r.Processes.Count);
        Assert.All(r.Processes.Where(p => p.KernelThreads is null), p => Assert.Equal(1, p.ThreadCount));
    }

    [Fact]
    public void A_thread_stated_in_another_process_is_no_kernel_thread_whatever_its_name()
    {
        var s = new SystemScript();
        s.Switch(0, 0, Idle, TaskState.Running, (500, "app"));
        s.Switch(10 * Us, 0, (500, "app"), TaskState.Interruptible, (501, "kworker-like"));
        s.Switch(20 * Us, 0, (501, "kworker-like"), TaskState.Interruptible, (502, "rcu_helper"));
        s.Switch(30 * Us, 0, (502, "rcu_helper"), TaskState.Interruptible, Idle);
        s.Names.SetProcess(500, 500);
        s.Names.SetProcess(501, 500);
        s.Names.SetProcess(502, 500);
        var r = s.Report();

        var app = Assert.Single(r.Processes);
        Assert.Equal((500, 3), (app.Pid, app.ThreadCount));
        Assert.Null(app.KernelThreads);
    }

    [Fact]
    public void A_pid_names_the_threads_of_its_stated_process_as_the_target()
    {
        var r = OlderProcesses(stated: true).Report(pid: 300);

        Assert.Equal([300, 301], r.Threads.Select(t => t.Tid).Order());
    }
}
