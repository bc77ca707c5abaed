using System.Diagnostics;
using TraceLab.Workloads.Targets;

namespace TraceLab.Tests.Workloads;

/// <summary>
/// What `trace -- PROGRAM` and `--pid` do before any capture: find the program, parse pids, follow a tree.
/// </summary>
public sealed class TargetsTests
{
    [Fact]
    public void Stat_lines_parse_from_the_last_parenthesis()
    {
        var line = "42 (a (b) c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0";
        Assert.Equal(new ProcStat(42, 7, 'S', 12345), ProcStat.Parse(42, line));
        Assert.Null(ProcStat.Parse(42, "42 (truncated"));
        Assert.Null(ProcStat.Parse(42, "42 (x) S notanumber"));
    }

    [Fact]
    public void A_stat_start_time_converts_from_boot_ticks_to_the_monotonic_trace_clock()
    {
        // 12345 ticks of 10 ms after boot, on a machine that was suspended 2 s: 123.45 s − 2 s of CLOCK_MONOTONIC.
        Assert.Equal(121_450_000_000, new ProcStat(42, 7, 'S', 12345).StartMonotonicNs(2_000_000_000, 100));
        Assert.Equal(12_345_000_000, new ProcStat(42, 7, 'S', 12345).StartMonotonicNs(0, 1000));
    }

    [LinuxFact]
    public void This_process_started_before_now_and_after_boot_on_the_monotonic_clock()
    {
        var (pid, start) = Assert.Single(ProcStarts.Of([Environment.ProcessId]));
        Assert.Equal(Environment.ProcessId, pid);
        var now = (long)(System.Diagnostics.Stopwatch.GetTimestamp() * (1e9 / System.Diagnostics.Stopwatch.Frequency));
        var age = now - start;
        Assert.InRange(age, 0, (long)(Environment.TickCount64 * 1e6) + 10_000_000);
        Assert.InRange(start, -10_000_000, now);
    }

    [Fact]
    public void The_tree_follows_forks_and_orphans_and_ignores_recycled_pids()
    {
        const int self = 1, root = 10;
        var tree = new ProcessTree(root, self, rootStart: 100, carriesMark: _ => true);
        var reaped = new List<int>();
        // 11 is the program's child, 12 its grandchild; 13 an orphan re-parented to TraceLab after 12's parent exited;
        // 14 is unrelated; 15 has a pid a member once had but started before it (recycled): not a member.
        var first = tree.Scan(
        [
            new(root, self, 'S', 100), new(11, root, 'S', 110), new(12, 11, 'R', 120), new(14, 99, 'S', 50),
        ], reaped.Add);
        Assert.Equal(2, first);
        var second = tree.Scan([new(root, self, 'Z', 100), new(12, 11, 'Z', 120), new(13, self, 'S', 130)], reaped.Add);
        Assert.Equal(1, second);                          // 13 runs; 12 is a zombie (not ours to reap: parent 11)
        Assert.Empty(reaped);
        var third = tree.Scan([new(13, self, 'Z', 130), new(11, 99, 'S', 5)], reaped.Add);
        Assert.Equal(0, third);
        Assert.Equal([13], reaped);                        // our orphan, exited: reaped
        Assert.Equal([10, 11, 12, 13], tree.Seen.Order());
    }

    [Fact]
    public void A_program_gone_before_its_start_was_read_does_not_adopt_TraceLabs_guard()
    {
        // `sh -c 'kill -TERM $$'` can exit and be reaped before its /proc start time is read (start unknown: 0).
        // TraceLab's guard (pid 5, started before the program) is TraceLab's child and runs until TraceLab ends: were
        // it taken for an orphan of the tree, the wait for the tree would never end.
        const int self = 1, root = 10, guard = 5;
        // Only what carries the program's mark can be an orphan of its tree: 13 does, the guard does not.
        var tree = new ProcessTree(root, self, rootStart: 0, carriesMark: pid => pid == 13);
        var reaped = new List<int>();
        Assert.Equal(0, tree.Scan([new(guard, self, 'S', 40)], reaped.Add));
        // A real orphan of the tree still counts.
        Assert.Equal(1, tree.Scan([new(guard, self, 'S', 40), new(13, self, 'S', 130)], reaped.Add));
        Assert.Equal([10, 13], tree.Seen.Order());
    }

    [Fact]
    public void A_child_of_TraceLab_without_the_mark_is_neither_counted_nor_reaped()
    {
        // 13 is an orphan of the tree (it carries the mark); 20 and 21 are children TraceLab's host started itself
        // after the program (a library user, a test running beside): counting them would make the wait last as long
        // as they run, reaping one makes .NET end the process when it reaps it in turn.
        const int self = 1, root = 10;
        var asked = new List<int>();
        var tree = new ProcessTree(root, self, rootStart: 100, carriesMark: pid =>
        {
            asked.Add(pid);
            return pid == 13;
        });
        var reaped = new List<int>();
        Assert.Equal(1, tree.Scan([new(root, self, 'S', 100), new(13, self, 'S', 130), new(20, self, 'S', 140)],
            reaped.Add));
        Assert.Equal(1, tree.Scan([new(root, self, 'S', 100), new(13, self, 'S', 130), new(20, self, 'Z', 140),
            new(21, self, 'Z', 150)], reaped.Add));
        Assert.Empty(reaped);
        Assert.Equal(0, tree.Scan([new(root, self, 'Z', 100), new(13, self, 'Z', 130), new(20, self, 'Z', 140)],
            reaped.Add));
        Assert.Equal([13], reaped);
        Assert.Equal([10, 13], tree.Seen.Order());
        // Each unmarked child's environment is read once; a zombie's (empty) never.
        Assert.Equal([13, 20], asked.Order());
    }

    [Fact]
    public void The_mark_is_a_whole_environment_entry()
    {
        var environ = "PATH=/bin\0TRACELAB_PROGRAM_TREE=7-ab\0HOME=/root\0"u8;
        Assert.True(ProcEnvironment.Contains(environ, "TRACELAB_PROGRAM_TREE", "7-ab"));
        Assert.False(ProcEnvironment.Contains(environ, "TRACELAB_PROGRAM_TREE", "7-a"));
        Assert.False(ProcEnvironment.Contains(environ, "PROGRAM_TREE", "7-ab"));
        Assert.True(ProcEnvironment.Contains("X=1"u8, "X", "1"));
        Assert.False(ProcEnvironment.Contains([], "X", "1"));
    }

    [LinuxFact]
    public async Task The_programs_orphan_is_waited_for_and_the_hosts_own_children_are_left_to_it()
    {
        // The program leaves a child that outlives it (re-parented to this process, the subreaper); meanwhile this
        // process starts children of its own, one short (it must exit and be reaped by .NET, not by the tree: were
        // the tree to reap it, .NET would end this test process), one long (the wait must not last for it).
        // The orphan leaves a file as it ends: the wait returned after it, whatever the machine's speed; and the
        // host's long child is still running, so the wait did not last for it.
        using var done = new TempDirectory("tracelab-orphan");
        var orphanDone = done.File("orphan-done");
        using var program = TargetProgram.Start("/bin/sh", ["-c", $"(sleep 0.6; touch {orphanDone}) & exit 0"], null,
            null);
        using var mine = Process.Start("sleep", "0.2");
        using var mineLong = Process.Start("sleep", "600");
        try
        {
            await program.WaitForTreeAsync(CancellationToken.None, (_, _) => { });
            Assert.True(File.Exists(orphanDone), "the wait returned before the program's orphan ended");
            Assert.DoesNotContain(mine.Id, program.TreePids);
            Assert.DoesNotContain(mineLong.Id, program.TreePids);
            Assert.True(program.TreePids.Count >= 2, "the program's orphan was not in its tree");
            await mine.WaitForExitAsync();
            Assert.Equal(0, mine.ExitCode);
            Assert.False(mineLong.HasExited);
        }
        finally
        {
            mineLong.Kill();
        }
    }

    [LinuxFact]
    public void Programs_are_found_like_a_shell_finds_them_or_refused_with_127()
    {
        Assert.Equal("/bin/sh", TargetProgram.Resolve("/bin/sh"));
        Assert.EndsWith("/sh", TargetProgram.Resolve("sh"), StringComparison.Ordinal);
        var missing = Assert.Throws<TargetException>(() => TargetProgram.Resolve("no-such-program-tracelab"));
        Assert.Equal(127, missing.ExitCode);
        var dir = Assert.Throws<TargetException>(() => TargetProgram.Resolve("./no/such/file"));
        Assert.Equal(127, dir.ExitCode);
        using var dir2 = new TempDirectory("tracelab-resolve");
        File.WriteAllText(dir2.File("data"), "not a program");
        if (OperatingSystem.IsLinux())
            File.SetUnixFileMode(dir2.File("data"), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        var notExec = Assert.Throws<TargetException>(() => TargetProgram.Resolve(dir2.File("data")));
        Assert.Equal(127, notExec.ExitCode);
        Assert.Contains("not executable", notExec.Message, StringComparison.Ordinal);
    }

    [LinuxFact]
    public void Pid_lists_are_checked_before_any_capture()
    {
        Assert.Equal([Environment.ProcessId], AttachedProcesses.Find(Environment.ProcessId.ToString()).Pids);
        foreach (var bad in new[] { "", "abc", "0", "-5", "1,x", "999999999" })
            Assert.Equal(2, Assert.Throws<TargetException>(() => AttachedProcesses.Find(bad)).ExitCode);
    }
}
