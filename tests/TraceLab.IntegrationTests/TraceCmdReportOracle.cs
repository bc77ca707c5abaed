using System.Globalization;
using System.Text.RegularExpressions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// An independent reading of a trace: parses the text of <c>trace-cmd report -N -t -i trace.dat</c> (kernel print
/// formats, full ns timestamps) and computes per-thread run time and switch counts inside the
/// TRACELAB_REGION_BEGIN/END markers. Written from scratch: it shares no code with TraceLab's readers or analyzers.
/// <para>
/// Run-time rule: a thread's run interval ends at its sched_switch out on CPU c. It starts at the sched_switch in on
/// c when that switch was logged (the previous switch on c named it as next). Otherwise the switch-in was lost
/// (chain break: an event on c is logged with a common_pid that is not the CPU's occupant); the interval then
/// starts at the later of (a) the last event on c whose common_pid was the previous occupant and (b) the time the
/// thread stopped running or, if it was blocked, was woken (docs/metrics.md#chain-break-repair: its last switch-out, or
/// the sched_waking that ended its sleep). The previous occupant's interval ends at that same start. Intervals are
/// clipped to [BEGIN, END]. A thread that was runnable when its switch-in was lost counts ready time up to that
/// estimated start, as up to a logged switch-in.
/// </para>
/// <para>
/// Woken before its switch-out: a sched_waking naming a thread that still runs, followed by its sleeping switch-out
/// with no own event in between, ended that sleep (try_to_wake_up found it dequeued but still on its CPU): it is
/// runnable from the switch-out, unless another sched_waking names it before its switch-in (then the first found it
/// running, and it slept until the second). The kernel's own sched_wakeup, logged once the thread is back on a run
/// queue and so never before its switch-out in the first case, counts how often the rule was right
/// (<see cref="EarlyWakingsConfirmed"/> of <see cref="EarlyWakings"/>).
/// </para>
/// </summary>
public sealed class TraceCmdReportOracle
{
    public sealed class ThreadResult
    {
        public long RunNs { get; internal set; }
        public long Voluntary { get; internal set; }
        public long Involuntary { get; internal set; }
        public long SwitchIns { get; internal set; }
        public long RepairedStarts { get; internal set; }
        /// <summary>Run time per CPU (the same intervals as <see cref="RunNs"/>).</summary>
        public Dictionary<int, long> RunNsByCpu { get; } = new();
        /// <summary>sys_enter_NAME lines by NAME, logged by this thread inside the region.</summary>
        public Dictionary<string, long> SyscallEntries { get; } = new();
        /// <summary>sched_waking lines naming this thread inside the region.</summary>
        public long Wakings { get; internal set; }
        /// <summary>sched_migrate_task lines naming this thread inside the region.</summary>
        public long Migrations { get; internal set; }
        /// <summary>
        /// Runnable but not running: from a logged wakeup of a blocked thread, or a preempting switch-out, to its
        /// next logged switch-in (clipped to the region).
        /// </summary>
        public long ReadyNs { get; internal set; }
        /// <summary>Blocked inside a futex call: from a blocking switch-out between sys_enter_futex and
        /// sys_exit_futex to the wakeup that ended it (clipped to the region).</summary>
        public long FutexBlockedNs { get; internal set; }

        internal void Clear()
        {
            RunNs = Voluntary = Involuntary = SwitchIns = RepairedStarts = Wakings = Migrations = 0;
            ReadyNs = FutexBlockedNs = 0;
            RunNsByCpu.Clear();
            SyscallEntries.Clear();
        }
    }

    private sealed class Cpu
    {
        public int Occupant = -1;     // -1: unknown
        public long LastSeen;         // last event on this CPU whose common_pid was the occupant
    }

    private enum Off : byte { Unknown, Runnable, Blocked, Dead }

    private sealed class TaskInfo
    {
        public int RunningOn = -1;
        public long Since;
        /// <summary>
        /// When not running: why, and since when (its switch-out, or the waking that ended its sleep).
        /// </summary>
        public Off State;
        public long OffSince = long.MinValue;
        /// <summary>Between its sys_enter_futex and sys_exit_futex.</summary>
        public bool InFutex;
        /// <summary>Its current block began inside a futex call.</summary>
        public bool BlockedInFutex;
        /// <summary>A sched_waking named it while it ran, and it has logged nothing of its own since.</summary>
        public bool WokenWhileRunning;
        /// <summary>Blocked after such a waking: runnable since the switch-out unless another waking comes.</summary>
        public bool WokenEarly;
        /// <summary>Woken early and a sched_wakeup for it has been seen since its switch-out.</summary>
        public bool WakeupSeen;

        /// <summary>A repaired start can be no earlier than this.</summary>
        public long EarliestStart => RunningOn < 0 && State is Off.Runnable or Off.Blocked ? OffSince : long.MinValue;
    }

    // "<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>"; comm may contain spaces and dashes.
    private static readonly Regex Line = new(
        @"^\s*(?<comm>.*?)-(?<pid>\d+)\s+\[(?<cpu>\d+)\]\s+(?<sec>\d+)\.(?<frac>\d+):"
            + @"\s+(?<event>[A-Za-z0-9_]+):\s*(?<rest>.*)$",
        RegexOptions.Compiled | RegexOptions.CultureInvariant);

    private readonly Dictionary<int, Cpu> _cpus = new();
    private readonly Dictionary<int, TaskInfo> _tasks = new();
    private readonly Dictionary<int, ThreadResult> _results = new();

    public long Begin { get; private set; } = long.MinValue;
    public long End { get; private set; } = long.MaxValue;
    public bool HasBegin { get; private set; }
    public bool HasEnd { get; private set; }
    public long SwitchLines { get; private set; }
    public long EventLines { get; private set; }
    public long ChainBreaks { get; private set; }
    /// <summary>
    /// Sleeps ended by a waking logged before their own switch-out (no other waking before the switch-in).
    /// </summary>
    public long EarlyWakings { get; private set; }
    /// <summary>Of <see cref="EarlyWakings"/>, those with a sched_wakeup logged after the switch-out.</summary>
    public long EarlyWakingsConfirmed { get; private set; }
    public long LastTimestamp { get; private set; }
    public IReadOnlyDictionary<int, ThreadResult> Threads => _results;

    /// <summary>Runs trace-cmd on <paramref name="traceDat"/> and computes the oracle.</summary>
    public static TraceCmdReportOracle FromTraceDat(string traceDat)
    {
        var oracle = new TraceCmdReportOracle();
        oracle.Feed(ProcessOutput.Lines("trace-cmd", "report", "-N", "-t", "-i", traceDat));
        return oracle;
    }

    public static TraceCmdReportOracle FromLines(IEnumerable<string> lines)
    {
        var oracle = new TraceCmdReportOracle();
        oracle.Feed(lines);
        return oracle;
    }

    public ThreadResult Of(int tid) => _results.TryGetValue(tid, out var r) ? r : new ThreadResult();

    /// <summary>Exact ns from "SSS.ffffff" or "SSS.fffffffff": no floating point anywhere.</summary>
    public static long ParseTimestamp(ReadOnlySpan<char> seconds, ReadOnlySpan<char> fraction)
    {
        var s = long.Parse(seconds, NumberStyles.None, CultureInfo.InvariantCulture);
        var f = long.Parse(fraction, NumberStyles.None, CultureInfo.InvariantCulture);
        return fraction.Length switch
        {
            9 => checked(s * 1_000_000_000 + f),
            6 => checked(s * 1_000_000_000 + f * 1000),
            _ => throw new FormatException($"timestamp {seconds}.{fraction}: expected 6 or 9 decimal digits"),
        };
    }

    private void Feed(IEnumerable<string> lines)
    {
        var lineNo = 0;
        foreach (var text in lines)
        {
            lineNo++;
            var m = Line.Match(text);
            if (!m.Success) continue; // header lines such as "cpus=2"
            EventLines++;
            var pid = int.Parse(m.Groups["pid"].ValueSpan, CultureInfo.InvariantCulture);
            var cpu = int.Parse(m.Groups["cpu"].ValueSpan, CultureInfo.InvariantCulture);
            var t = ParseTimestamp(m.Groups["sec"].ValueSpan, m.Groups["frac"].ValueSpan);
            if (t < LastTimestamp) throw new FormatException($"line {lineNo}: time goes backwards: {text}");
            LastTimestamp = t;
            var ev = m.Groups["event"].Value;
            var rest = m.Groups["rest"].Value;

            Sighting(cpu, pid, t);
            if (ev.StartsWith("sys_", StringComparison.Ordinal) && pid > 0) TaskOf(pid).WokenWhileRunning = false;
            switch (ev)
            {
                case "sched_switch":
                    SwitchLines++;
                    OnSwitch(cpu, t, rest, lineNo);
                    break;
                case "sched_waking":
                case "sched_wakeup_new":
                    {
                        var woken = IntField(rest, " pid=", lineNo);
                        var task = TaskOf(woken);
                        if (task.RunningOn >= 0 && ev == "sched_waking") task.WokenWhileRunning = true;
                        task.WokenEarly = false; // a second waking: the first found it running
                        if (task.RunningOn < 0 && task.State != Off.Runnable)
                        {
                            if (task.State == Off.Blocked && task.BlockedInFutex && woken > 0)
                                Result(woken).FutexBlockedNs += Clip(task.OffSince, t);
                            task.BlockedInFutex = false;
                            task.State = Off.Runnable;
                            task.OffSince = t;
                        }
                        if (ev == "sched_waking" && InRegion(t)) Result(woken).Wakings++;
                        break;
                    }
                case "sched_wakeup":
                    {
                        var task = TaskOf(IntField(rest, " pid=", lineNo));
                        if (task.WokenEarly) task.WakeupSeen = true;
                        break;
                    }
                case "sched_migrate_task":
                    if (InRegion(t)) Result(IntField(rest, " pid=", lineNo)).Migrations++;
                    break;
                case "sys_exit_futex":
                    if (pid > 0) TaskOf(pid).InFutex = false;
                    break;
                case var enter when enter.StartsWith("sys_enter_", StringComparison.Ordinal):
                    if (pid > 0) TaskOf(pid).InFutex = enter == "sys_enter_futex";
                    if (InRegion(t) && pid > 0)
                    {
                        var name = enter["sys_enter_".Length..];
                        var entries = Result(pid).SyscallEntries;
                        entries[name] = entries.GetValueOrDefault(name) + 1;
                    }
                    break;
                case "print":
                case "tracing_mark_write":
                    OnMarker(rest, t);
                    break;
            }
        }
        // Close what is still running at the end of the region (or of the trace).
        var end = HasEnd ? End : LastTimestamp;
        foreach (var (tid, task) in _tasks)
        {
            if (task.RunningOn >= 0) AddRun(tid, task.RunningOn, task.Since, end);
            else if (tid > 0 && task.State == Off.Runnable && task.OffSince != long.MinValue)
                Result(tid).ReadyNs += Clip(task.OffSince, end);
            else if (tid > 0 && task.State == Off.Blocked && task.BlockedInFutex)
                Result(tid).FutexBlockedNs += Clip(task.OffSince, end);
        }
    }

    private void OnMarker(string rest, long t)
    {
        // print: "0xffffffff814aa001: TEXT" (ip, then the buffer); tracing_mark_write: "TEXT".
        var text = rest.Trim();
        var colon = text.IndexOf(": ", StringComparison.Ordinal);
        if (text.StartsWith("0x", StringComparison.Ordinal) && colon > 0) text = text[(colon + 2)..].Trim();
        if (!HasBegin && (text.StartsWith("TRACELAB_REGION_BEGIN", StringComparison.Ordinal)
            || text.StartsWith("TRACELAB_TARGET_BEGIN", StringComparison.Ordinal)))
        {
            HasBegin = true;
            Begin = t;
            // Everything closed so far lies before the region; open intervals keep their start and are clipped.
            foreach (var r in _results.Values) r.Clear();
        }
        else if (HasBegin && !HasEnd && (text.StartsWith("TRACELAB_REGION_END", StringComparison.Ordinal)
            || text.StartsWith("TRACELAB_TARGET_END", StringComparison.Ordinal)))
        {
            HasEnd = true;
            End = t;
        }
    }

    private bool InRegion(long t) => t >= Begin && t <= End;

    /// <summary>The part of [from, to) inside the region.</summary>
    private long Clip(long from, long to) => Math.Max(0, Math.Min(to, End) - Math.Max(from, Begin));

    private Cpu CpuOf(int cpu)
    {
        if (!_cpus.TryGetValue(cpu, out var c)) _cpus[cpu] = c = new Cpu();
        return c;
    }

    private TaskInfo TaskOf(int tid)
    {
        if (!_tasks.TryGetValue(tid, out var s)) _tasks[tid] = s = new TaskInfo();
        return s;
    }

    private ThreadResult Result(int tid)
    {
        if (!_results.TryGetValue(tid, out var r)) _results[tid] = r = new ThreadResult();
        return r;
    }

    private void AddRun(int tid, int cpu, long from, long to)
    {
        if (tid <= 0) return;
        var lo = Math.Max(from, Begin);
        var hi = Math.Min(to, End);
        if (hi <= lo) return;
        var r = Result(tid);
        r.RunNs += hi - lo;
        r.RunNsByCpu[cpu] = r.RunNsByCpu.GetValueOrDefault(cpu) + (hi - lo);
    }

    /// <summary>Ends <paramref name="tid"/>'s open interval at <paramref name="at"/>, wherever it is.</summary>
    private void StopRunning(int tid, long at)
    {
        if (tid <= 0) return;
        var task = TaskOf(tid);
        if (task.RunningOn < 0) return;
        AddRun(tid, task.RunningOn, task.Since, Math.Max(task.Since, at));
        task.RunningOn = -1;
    }

    /// <summary>An event on <paramref name="cpu"/> says <paramref name="pid"/> is running there.</summary>
    private void Sighting(int cpu, int pid, long t)
    {
        var c = CpuOf(cpu);
        if (c.Occupant == pid)
        {
            c.LastSeen = t;
            return;
        }
        var known = c.Occupant >= 0;
        if (known) ChainBreaks++;
        var start = known ? c.LastSeen : t;
        if (pid > 0)
        {
            var task = TaskOf(pid);
            if (task.EarliestStart > start) start = Math.Min(task.EarliestStart, t);
            // Still believed to run on another CPU: its switch-out there was lost; it left after its last sighting
            // there.
            if (task.RunningOn >= 0 && task.RunningOn != cpu)
            {
                var other = CpuOf(task.RunningOn);
                var end = Math.Min(other.LastSeen, start);
                StopRunning(pid, end);
                task.State = Off.Unknown;
                other.Occupant = -1;
            }
        }
        if (known && c.Occupant > 0 && TaskOf(c.Occupant).RunningOn == cpu)
        {
            StopRunning(c.Occupant, start);
            TaskOf(c.Occupant).State = Off.Unknown; // why it left was not logged
        }
        if (pid > 0)
        {
            var task = TaskOf(pid);
            if (task.RunningOn != cpu)
            {
                // Until its estimated start it was in the state it was left in: a runnable thread's ready time runs
                // up to there (docs/metrics.md#thread-states, "any → Running (repaired)"), as at a logged switch-in.
                if (task.State == Off.Blocked && task.WokenEarly) task.State = Off.Runnable;
                if (task.State == Off.Runnable && task.OffSince != long.MinValue)
                    Result(pid).ReadyNs += Clip(task.OffSince, start);
                task.State = Off.Unknown;
                task.WokenEarly = task.WokenWhileRunning = false;
                task.RunningOn = cpu;
                task.Since = start;
                if (known && InRegion(t)) Result(pid).RepairedStarts++;
            }
        }
        c.Occupant = pid;
        c.LastSeen = t;
    }

    private void OnSwitch(int cpu, long t, string rest, int lineNo)
    {
        var arrow = rest.IndexOf(" ==> ", StringComparison.Ordinal);
        if (arrow < 0) throw new FormatException(
            $"line {lineNo}: sched_switch without ' ==> ' (run trace-cmd report with -N): {rest}");
        var left = rest[..arrow];
        var right = rest[(arrow + 5)..];
        var prev = IntField(left, " prev_pid=", lineNo);
        var state = Field(left, " prev_state=", lineNo);
        var next = IntField(right, " next_pid=", lineNo);

        var c = CpuOf(cpu);
        if (prev > 0)
        {
            StopRunning(prev, t);
            var task = TaskOf(prev);
            var preempted = state.StartsWith('R') || state.Contains('+');
            var dead = !preempted && (state.Contains('X') || state.Contains('Z'));
            task.State = preempted ? Off.Runnable : dead ? Off.Dead : Off.Blocked;
            task.BlockedInFutex = task.State == Off.Blocked && task.InFutex;
            task.WokenEarly = task.State == Off.Blocked && task.WokenWhileRunning;
            task.WakeupSeen = false;
            task.WokenWhileRunning = false;
            task.OffSince = t;
            if (InRegion(t))
            {
                if (preempted) Result(prev).Involuntary++;
                else if (!dead) Result(prev).Voluntary++;
            }
        }
        if (next > 0)
        {
            var task = TaskOf(next);
            if (task.RunningOn >= 0 && task.RunningOn != cpu)
            {
                var other = CpuOf(task.RunningOn);
                StopRunning(next, Math.Min(other.LastSeen, t));
                other.Occupant = -1;
            }
            if (task.RunningOn < 0 && task.State == Off.Blocked && task.WokenEarly)
            {
                task.State = Off.Runnable; // its waking came before its switch-out
                EarlyWakings++;
                if (task.WakeupSeen) EarlyWakingsConfirmed++;
            }
            task.WokenEarly = task.WokenWhileRunning = false;
            if (task.RunningOn < 0 && task.State == Off.Runnable && task.OffSince != long.MinValue)
                Result(next).ReadyNs += Clip(task.OffSince, t);
            task.State = Off.Unknown;
            task.RunningOn = cpu;
            task.Since = t;
            if (InRegion(t)) Result(next).SwitchIns++;
        }
        c.Occupant = next;
        c.LastSeen = t;
    }

    private static string Field(string s, string key, int lineNo)
    {
        var i = s.LastIndexOf(key, StringComparison.Ordinal);
        if (i < 0) throw new FormatException($"line {lineNo}: no '{key.Trim()}' in: {s}");
        i += key.Length;
        var j = s.IndexOf(' ', i);
        return j < 0 ? s[i..] : s[i..j];
    }

    private static int IntField(string s, string key, int lineNo) =>
        int.Parse(Field(s, key, lineNo), NumberStyles.None, CultureInfo.InvariantCulture);
}
