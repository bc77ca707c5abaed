using Google.Protobuf;
using Perfetto.Protos;
using TraceLab.Analyzers.Waits;
using TraceLab.Core;
using TraceLab.Formats.Symbols;
using TraceLab.Reporting.Stacks;
using FrameKind = Perfetto.Protos.Frame.Types.Kind;

namespace TraceLab.Export.Perfetto;

/// <summary>
/// The off-CPU intervals of a trace recorded with stacks, as Perfetto slices that carry their call stacks
/// (docs/viewers.md, "Perfetto mapping"): each interval from a thread's blocking switch-out to its next switch-in (what
/// bcc's offcputime and the folded export sum) is a slice on a "off CPU (stacks)" track of the thread, named by where
/// it blocked, with the blocking stack as its callstack (ui.perfetto.dev shows it in the slice's details: WPA's New
/// Thread Stack). The waking that ended it, from another thread outside interrupt context, is an instant on the
/// waker's track with the waker's stack (WPA's Ready Thread Stack). Stacks, frames, function names and modules are
/// interned on this writer's own packet sequence, each once; the slices are written while the trace is read. Memory
/// grows with threads and distinct stacks, not with events.
/// </summary>
public sealed class OffCpuStackWriter : IKernelEventSink
{
    /// <summary>The packet sequence the slices and their interned stacks are written on.</summary>
    public const uint SequenceId = 2;
    public const string Category = "tracelab.offcpu";

    private const ulong TrackBase = 5UL << 32;

    private readonly TrackEventSequence _sequence;
    private readonly IStackTraceReader _reader;
    private readonly StackSymbolizer _symbolizer;
    private readonly ThreadTable _names;
    private readonly Func<int, int> _idOf;
    private readonly bool _switchStackOfNext;
    private readonly Dictionary<int, Blocked> _blocked = new();
    private readonly HashSet<int> _tracks = new();
    private readonly Dictionary<int, ulong> _callstacks = new();
    private readonly Dictionary<(string Module, ulong Offset, string Function, uint Line), ulong> _frames = new();
    private readonly Dictionary<string, ulong> _functionNames = new(StringComparer.Ordinal);
    private readonly Dictionary<string, ulong> _mappingPaths = new(StringComparer.Ordinal);
    private readonly Dictionary<string, ulong> _sourcePaths = new(StringComparer.Ordinal);
    private readonly Dictionary<string, ulong> _mappings = new(StringComparer.Ordinal);
    private readonly Dictionary<int, string> _sites = new();

    /// <summary>A thread off CPU since <see cref="Start"/>, and who woke it (0: nobody yet, or an interrupt).</summary>
    private sealed class Blocked
    {
        public long Start = -1;
        public int Stack;
        public int Waker;
        public int WakerStack;
        public long WokenAt;
    }

    /// <param name="writer">The export's packet writer.</param>
    /// <param name="reader">The trace, with its stacks.</param>
    /// <param name="symbolizer">Names the stacks (the one `analyze` uses: <c>TraceAnalysis.Symbolizer</c>).</param>
    /// <param name="names">Thread names and processes.</param>
    /// <param name="idOf">A kernel tid's thread id in the pass (a later thread of a reused tid has its own).</param>
    public OffCpuStackWriter(PerfettoPacketWriter writer, IStackTraceReader reader, StackSymbolizer symbolizer,
        ThreadTable names, Func<int, int> idOf)
    {
        _sequence = new TrackEventSequence(writer, SequenceId);
        _reader = reader;
        _symbolizer = symbolizer;
        _names = names;
        _idOf = idOf;
        _switchStackOfNext = reader.SwitchStacksAreOfNextThread;
    }

    /// <summary>Off-CPU slices written (intervals with a blocking stack).</summary>
    public long Slices { get; private set; }

    /// <summary>Waker instants written (wakings by a thread, with its stack).</summary>
    public long WakerInstants { get; private set; }

    /// <summary>Distinct call stacks interned.</summary>
    public int Callstacks => _callstacks.Count;

    /// <inheritdoc/>
    public void OnEvent(in KernelEvent e)
    {
        switch (e.Kind)
        {
            case KernelEventKind.Waking:
                Waking(e);
                break;
            case KernelEventKind.Switch:
                Switch(e);
                break;
        }
    }

    private void Waking(in KernelEvent e)
    {
        if (e.WokenTid <= 0 || !_blocked.TryGetValue(_idOf(e.WokenTid), out var b) || b.Start < 0) return;
        // A waking in interrupt context carries the interrupted thread's stack, not a waker's.
        b.Waker = EventFlags.InInterrupt(e.Flags) || e.CurrentTid == 0 ? 0 : _idOf(e.CurrentTid);
        b.WakerStack = b.Waker == 0 ? 0 : e.StackId;
        b.WokenAt = e.Timestamp;
    }

    private void Switch(in KernelEvent e)
    {
        if (!TaskState.IsPreempted(e.PrevState) && e.PrevTid != 0)
        {
            var prev = _idOf(e.PrevTid);
            if (!_blocked.TryGetValue(prev, out var p)) _blocked[prev] = p = new Blocked();
            p.Start = e.Timestamp;
            p.Stack = _switchStackOfNext ? 0 : e.StackId;
            p.Waker = p.WakerStack = 0;
        }

        if (e.NextTid == 0) return;
        var next = _idOf(e.NextTid);
        if (!_blocked.TryGetValue(next, out var b) || b.Start < 0) return;
        // ETW: the stack where the incoming thread had blocked comes with its switch-in.
        var stack = _switchStackOfNext ? e.StackId : b.Stack;
        if (stack != 0) Write(next, b, stack, e.Timestamp);
        b.Start = -1;
    }

    private void Write(int thread, Blocked b, int stack, long end)
    {
        var interned = new InternedData();
        var callstack = Callstack(stack, interned);
        var track = Track(thread);
        var begin = TrackEventSequence.Event(TrackEvent.Types.Type.SliceBegin, track, "off CPU at " + Site(stack),
            Category);
        begin.CallstackIid = callstack;
        begin.DebugAnnotations.Add(new DebugAnnotation
        {
            Name = "woken by",
            StringValue = b.Waker != 0 ? $"{_names.NameOf(b.Waker)} ({ThreadIds.Display(b.Waker)})"
                : b.WokenAt > 0 ? "an interrupt (no waker stack)" : "no waking seen",
        });
        _sequence.Emit(b.Start, begin, interned, usesInterned: true);
        _sequence.Emit(Math.Max(b.Start, end),
            new TrackEvent { Type = TrackEvent.Types.Type.SliceEnd, TrackUuid = track });
        Slices++;

        if (b.Waker == 0 || b.WakerStack == 0) return;
        interned = new InternedData();
        var wake = TrackEventSequence.Event(TrackEvent.Types.Type.Instant, Track(b.Waker),
            $"wakes {_names.NameOf(thread)} ({ThreadIds.Display(thread)})", Category);
        wake.CallstackIid = Callstack(b.WakerStack, interned);
        _sequence.Emit(b.WokenAt, wake, interned, usesInterned: true);
        WakerInstants++;
    }

    /// <summary>Where a stack blocked: the waiting function and two callers outside the lock implementation.
    /// </summary>
    private string Site(int stack)
    {
        if (_sites.TryGetValue(stack, out var site)) return site;
        var frames = _symbolizer.Stack(_reader.Stacks, stack);
        site = WakeChainCallSite.Of(frames, WaitStackTags.Default) ?? Innermost(frames);
        _sites[stack] = site;
        return site;
    }

    /// <summary>The innermost user frame's name (else the innermost frame's), for a stack no site names.</summary>
    private static string Innermost(IReadOnlyList<SymbolFrame> frames)
    {
        foreach (var f in frames)
            if (!f.Kernel) return f.Name;
        return frames.Count > 0 ? frames[0].Name : SymbolFrame.Unknown;
    }

    /// <summary>The interned callstack of a stack id, adding what is new to <paramref name="interned"/>.</summary>
    private ulong Callstack(int stack, InternedData interned)
    {
        if (_callstacks.TryGetValue(stack, out var iid)) return iid;
        var frames = _symbolizer.Stack(_reader.Stacks, stack);
        var callstack = new Callstack { Iid = (ulong)_callstacks.Count + 1 };
        // Perfetto lists a callstack's frames outermost first; TraceLab's are innermost first.
        for (var i = frames.Count - 1; i >= 0; i--) callstack.FrameIds.Add(Frame(frames[i], interned));
        interned.Callstacks.Add(callstack);
        _callstacks[stack] = callstack.Iid;
        return callstack.Iid;
    }

    private ulong Frame(SymbolFrame f, InternedData interned)
    {
        var line = (uint)Math.Max(0, f.Source?.Line ?? 0);
        var key = (f.Module, f.ModuleOffset, f.Symbol is null ? "" : f.Symbol, line);
        if (_frames.TryGetValue(key, out var iid)) return iid;
        iid = (ulong)_frames.Count + 1;
        var frame = new Frame
        {
            Iid = iid,
            FunctionNameId = Interned(_functionNames, f.Name, interned.FunctionNames),
            MappingId = Mapping(f.Module, interned),
            RelPc = f.ModuleOffset,
            Kind = f.Kernel ? FrameKind.Kernel : FrameKind.Native,
        };
        if (f.Source is { } source)
        {
            frame.SourcePathIid = Interned(_sourcePaths, source.File, interned.SourcePaths);
            frame.LineNumber = line;
        }

        interned.Frames.Add(frame);
        _frames[key] = iid;
        return iid;
    }

    private ulong Mapping(string module, InternedData interned)
    {
        if (_mappings.TryGetValue(module, out var iid)) return iid;
        iid = (ulong)_mappings.Count + 1;
        var mapping = new Mapping { Iid = iid };
        // Perfetto joins a mapping's path components with '/'.
        foreach (var part in module.Split('/', StringSplitOptions.RemoveEmptyEntries))
            mapping.PathStringIds.Add(Interned(_mappingPaths, part, interned.MappingPaths));
        interned.Mappings.Add(mapping);
        _mappings[module] = iid;
        return iid;
    }

    private static ulong Interned(Dictionary<string, ulong> table, string text,
        Google.Protobuf.Collections.RepeatedField<InternedString> into)
    {
        if (table.TryGetValue(text, out var iid)) return iid;
        iid = (ulong)table.Count + 1;
        table[text] = iid;
        into.Add(new InternedString { Iid = iid, Str = ByteString.CopyFromUtf8(text) });
        return iid;
    }

    /// <summary>The thread's off-CPU track, described on first use.</summary>
    private ulong Track(int thread)
    {
        var uuid = TrackBase + (uint)thread;
        if (!_tracks.Add(thread)) return uuid;
        var tid = ThreadIds.KernelTid(thread);
        var pid = _names.TryGetProcess(thread, out var p) ? ThreadIds.KernelTid(p) : tid;
        _sequence.Describe(new TrackDescriptor
        {
            Uuid = uuid,
            Name = "off CPU (stacks)",
            Thread = new ThreadDescriptor { Pid = pid, Tid = tid, ThreadName = _names.NameOf(thread) },
        });
        return uuid;
    }

}
