using TraceLab.Core;
using TraceLab.Formats.Etw;

namespace TraceLab.Formats.Etl;

/// <summary>
/// Turns one .etl event record into a <see cref="KernelEvent"/>: kernel hooks become the classic task GUID and
/// opcode the <see cref="EtwKernelEventMapper"/> expects, workload markers become Marker events, and everything
/// else an Other event (its payload never looked at). Events of a newer layout version than TraceLab knows, and
/// records of unknown header kinds, are delivered as Other events too, and counted.
/// </summary>
internal sealed class EtlEventDispatcher(EtwKernelEventMapper mapper)
{
    private static readonly Guid EventTraceGuid = new("68fdd900-4a3e-11d1-84f4-0000f80464e3");
    private static readonly Guid[] GroupGuids = BuildGroupGuids();
    private readonly EtwKernelEventMapper _mapper = mapper;
    private readonly HashSet<(Guid, byte, byte)> _newerFormats = [];

    /// <summary>Events whose version is above the newest layout TraceLab decodes for that event.</summary>
    public long NewerVersionEvents { get; private set; }

    /// <summary>Distinct (event, version) pairs among <see cref="NewerVersionEvents"/>.</summary>
    public int NewerFormats => _newerFormats.Count;

    /// <summary>Records whose header kind this reader does not know.</summary>
    public long UnknownHeaderEvents { get; private set; }

    /// <summary>Fills <paramref name="e"/>; false when the payload is too short for the event its header
    /// names.</summary>
    public bool Map(in EtlEventRecord r, int cpu, long timestamp, ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        var guid = GuidOf(r);
        if (r.Kind == EtlHeaderKind.Unknown) UnknownHeaderEvents++;
        else if (r.Kind == EtlHeaderKind.EventHeader && guid == WorkloadMarkers.ProviderGuid)
        {
            e = WorkloadMarkers.ToEvent(timestamp, cpu, r.ThreadId, payload);
            return true;
        }

        var header = new EtwEventHeader(guid, r.Opcode, r.Version, timestamp, cpu, r.ThreadId, r.PointerSize);
        if (EtlKnownVersions.IsNewer(guid, r.Opcode, r.Version))
        {
            NewerVersionEvents++;
            if (_newerFormats.Count < 1024) _newerFormats.Add((guid, r.Opcode, r.Version));
            // Mapping a neutral GUID keeps the running-thread bookkeeping and yields an Other event.
            header = header with { EventGuid = Guid.Empty };
        }

        return _mapper.Map(header, payload, ref e);
    }

    /// <summary>The event's provider (task) GUID: its kernel group's classic GUID, or the one in its header.</summary>
    public static Guid GuidOf(in EtlEventRecord r) => r.IsKernelStyle ? GroupGuids[r.Hook >> 8] : r.Guid;

    private static Guid[] BuildGroupGuids()
    {
        var guids = new Guid[256];
        guids[0x00] = EventTraceGuid;
        guids[0x03] = EtwKernelEvents.ProcessGuid;
        guids[0x05] = EtwKernelEvents.ThreadGuid;
        guids[0x0F] = EtwKernelEvents.PerfInfoGuid;
        guids[0x0A] = EtwKernelEvents.ImageGuid;
        guids[0x20] = EtwKernelEvents.StackWalkGuid;
        return guids;
    }
}
