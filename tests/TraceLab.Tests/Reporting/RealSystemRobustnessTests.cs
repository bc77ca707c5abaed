using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;
using Xunit;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// Real-system robustness on hand-built traces whose answers follow from the events by inspection
/// (times in µs): tid reuse, processes named at the right time, kernel threads and idle, CPUs that go offline or
/// never log, lost events on one CPU.
/// </summary>
public sealed class RealSystemRobustnessTests
{
    private const long Us = SystemScript.Us;
    private static readonly (int, string) Idle = (0, "swapper/0");
    private static readonly int Second200 = ThreadIds.Of(200, 2);

    /// <summary>
    /// Tid 200 runs "first" 0 → 100, exits at 90 and leaves dead at 100; init forks a new 200 at 300, which execs
    /// ("second"), waits for a CPU until 400, runs to 500 and sleeps to the end (1000).
    /// </summary>
    private static SystemScript Reuse(bool forkLogged)
    {
        var s = new SystemScript();
        (int, string) first = (200, "first"), second = (200, "second"), init = (1, "init");
        s.Switch(0, 0, Idle, TaskState.Running, first);
        s.Add(KernelEvent.Exit(90 * Us, 0, 200), first);
        s.Switch(100 * Us, 0, first, TaskState.ExitDead, Idle);
        s.Switch(250 * Us, 1, (0, "swapper/1"), TaskState.Running, init);
        if (forkLogged) s.Add(KernelEvent.Fork(300 * Us, 1, 1, 200), init, (200, "init"));
        s.Add(KernelEvent.WakeupNew(300 * Us, 1, 1, 200, 0));
        s.Switch(400 * Us, 0, Idle, TaskState.Running, (200, "init"));
        s.Add(KernelEvent.Exec(410 * Us, 0, 200, 200, 200, "/bin/second"), second);
        s.Switch(500 * Us, 0, second, TaskState.Interruptible, Idle);
        s.Switch(1000 * Us, 1, init, TaskState.Interruptible, (0, "swapper/1"));
        return s;
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void A_tid_that_exits_and_reappears_is_a_new_thread_with_its_own_name_and_times(bool forkLogged)
    {
        var script = Reuse(forkLogged);
        var r = script.Report();
        // The names the trace gave stay as they were: the instances' names went into the session's own table.
        Assert.DoesNotContain(script.Names.Names.Keys, tid => tid >= ThreadIds.FirstLaterInstance);

        var one = r.Threads.Single(t => t.Tid == 200);
        var two = r.Threads.Single(t => t.Tid == Second200);
        Assert.Equal("first", one.Name);
        Assert.Equal(100 * Us, one.RunNs);
        Assert.Equal(0, one.ReadyNs + one.WaitNs);
        Assert.Equal((200, 1), (one.KernelTid, one.Instance));
        Assert.Equal(90 * Us, one.EndNs);
        Assert.Equal("second", two.Name);
        Assert.Equal(100 * Us, two.RunNs);        // 400 → 500
        Assert.Equal(100 * Us, two.ReadyNs);      // woken new at 300, on CPU at 400
        Assert.Equal(500 * Us, two.WaitNs);       // 500 → the end
        Assert.Equal((200, 2), (two.KernelTid, two.Instance));
        Assert.Equal(forkLogged ? 300 * Us : null, two.StartNs);
        Assert.Equal(1, r.System!.ReusedTids);
        Assert.Equal("200#2", ThreadIds.Display(two.Tid));
        Assert.Contains("| 200#2 | second |", ReportMarkdown.Render(r), StringComparison.Ordinal);
        // Each is its own process: the second (exec'd) is named by its program, the first by its comm then.
        Assert.Contains(r.Processes, p => p.Pid == Second200 && p.Name == "second");
        Assert.Contains(r.Processes, p => p.Pid == 200 && p.Name == "first");
        Assert.Contains("\"instance\": 2", ReportJson.Serialize(r), StringComparison.Ordinal);
    }

    [Fact]
    public void A_thread_that_never_exits_keeps_its_tid_and_gets_no_instance()
    {
        var s = new SystemScript();
        s.Switch(0, 0, Idle, TaskState.Running, (300, "steady"));
        s.Switch(100 * Us, 0, (300, "steady"), TaskState.Interruptible, Idle);
        s.Add(KernelEvent.Fork(200 * Us, 0, 0, 301), (301, "steady"));
        s.Switch(300 * Us, 0, Idle, TaskState.Running, (300, "steady"));
        var r = s.Report();

        var t = r.Threads.Single(x => x.Tid == 300);
        Assert.Null(t.Instance);
        Assert.Null(t.KernelTid);
        Assert.Equal(0, r.System!.ReusedTids);
        Assert.DoesNotContain("\"instance\"", ReportJson.Serialize(r), StringComparison.Ordinal);
    }

    /// <summary>
    /// kworker/0:1 (30) and ksoftirqd/1 (15) predate the trace; kthreadd (2) forks kworker/u4:2 (40); "app" (300)
    /// execs. Idle is tid 0 on both CPUs.
    /// </summary>
    [Fact]
    public void Kernel_threads_are_one_group_under_kthreadd_and_idle_is_no_thread()
    {
        var s = new SystemScript();
        (int, string) kworker = (30, "kworker/0:1"), softirq = (15, "ksoftirqd/1"), kthreadd = (2, "kthreadd"),
            unbound = (40, "kworker/u4:2"), app = (300, "app");
        s.Switch(0, 0, Idle, TaskState.Running, kworker);
        s.Switch(50 * Us, 0, kworker, TaskState.Interruptible, app);
        s.Add(KernelEvent.Exec(60 * Us, 0, 300, 300, 300, "/usr/bin/app"), app);
        s.Switch(200 * Us, 0, app, TaskState.Interruptible, Idle);
        s.Switch(0, 1, (0, "swapper/1"), TaskState.Running, softirq);
        s.Switch(20 * Us, 1, softirq, TaskState.Interruptible, kthreadd);
        s.Add(KernelEvent.Fork(30 * Us, 1, 2, 40), kthreadd, unbound);
        s.Add(KernelEvent.WakeupNew(30 * Us, 1, 2, 40, 1));
        s.Switch(40 * Us, 1, kthreadd, TaskState.Interruptible, unbound);
        s.Switch(100 * Us, 1, unbound, TaskState.Interruptible, (0, "swapper/1"));
        var r = s.Report();

        var group = r.Processes.Single(p => p.Pid == ProcessLineage.KernelThreadsPid);
        Assert.Equal("kernel threads", group.Name);
        Assert.True(group.KernelThreads);
        Assert.Equal(4, group.ThreadCount);
        Assert.Equal((50 + 20 + 20 + 60) * Us, group.RunNs);
        var app300 = r.Processes.Single(p => p.Pid == 300);
        Assert.Equal("app", app300.Name);
        Assert.Null(app300.KernelThreads);
        Assert.Equal(2, r.Processes.Count);
        Assert.DoesNotContain(r.Threads, t => t.Tid == 0);
        Assert.All(r.Threads.Where(t => t.Tid != 300), t => Assert.Equal(ProcessLineage.KernelThreadsPid, t.Pid));
        // Idle is what is left of the CPUs: 2 CPUs × 200 µs, 300 µs of it used.
        Assert.Equal(400 * Us, r.System!.CpuCapacityNs);
        Assert.Equal(300 * Us, r.System.BusyNs);
    }

    [Theory]
    [InlineData("kworker/3:2H", true)]
    [InlineData("ksoftirqd/0", true)]
    [InlineData("migration/1", true)]
    [InlineData("rcu_preempt", true)]
    [InlineData("md0_raid1", true)]
    [InlineData("loop7", true)]
    [InlineData("mdadm", false)]
    [InlineData("loopback-test", false)]
    [InlineData("cardiff", false)]
    [InlineData("stress-ng", false)]
    public void Kernel_thread_names(string name, bool kernel) =>
        Assert.Equal(kernel, ProcessLineage.IsKernelName(name));

    /// <summary>
    /// 4 CPUs: CPU 0 runs a (10) 0 → 1000; CPU 2 runs b (20) 0 → 100, then goes offline (its last event is the
    /// switch to idle); b runs again on CPU 0's… no: on CPU 3? No — CPU 3 and CPU 1 never log anything. b migrates
    /// to CPU 0 and runs there 1000 → 1100 after a. Events were lost on CPU 2.
    /// </summary>
    [Fact]
    public void Cpus_that_go_offline_or_never_log_do_not_break_accounting_and_loss_flags_stay_per_thread()
    {
        var s = new SystemScript();
        (int, string) a = (10, "a"), b = (20, "b");
        s.Switch(0, 0, Idle, TaskState.Running, a);
        s.Switch(0, 2, (0, "swapper/2"), TaskState.Running, b);
        s.Switch(100 * Us, 2, b, TaskState.Running, (0, "swapper/2"));
        s.Add(KernelEvent.Migrate(100 * Us, 2, 0, 20, 2, 0));
        s.Switch(1000 * Us, 0, a, TaskState.Interruptible, b);
        s.Switch(1100 * Us, 0, b, TaskState.Interruptible, Idle);
        var r = s.Report(cpus: 4, lostPerCpu: [0, 0, 5, 0]);

        Assert.Equal([1, 3], r.System!.SilentCpus);
        var ta = r.Threads.Single(t => t.Tid == 10);
        var tb = r.Threads.Single(t => t.Tid == 20);
        Assert.Equal(1000 * Us, ta.RunNs);
        Assert.Equal(200 * Us, tb.RunNs);
        Assert.Equal(900 * Us, tb.ReadyNs);       // preempted at 100 when its CPU went offline, on CPU 0 at 1000
        Assert.Equal(4 * 1100 * Us, r.System.CpuCapacityNs);
        // Per-CPU figures: CPU 2 was busy 100 µs; the silent CPUs add nothing.
        Assert.Equal(1100 * Us, r.Smp!.Cpus.Single(c => c.Cpu == 0).BusyNs);
        Assert.Equal(100 * Us, r.Smp.Cpus.Single(c => c.Cpu == 2).BusyNs);
        Assert.Equal(r.Threads.Sum(t => t.RunNs), r.Smp.Cpus.Sum(c => c.BusyNs));
        // Loss on CPU 2 flags the thread that ran there, not the other.
        Assert.True(tb.MayBeAffectedByLoss);
        Assert.NotEqual(true, ta.MayBeAffectedByLoss);
        Assert.Contains("CPU 1, 3 logged no event", ReportMarkdown.Render(r), StringComparison.Ordinal);
    }
}
