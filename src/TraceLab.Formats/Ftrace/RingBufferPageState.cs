namespace TraceLab.Formats.Ftrace;

/// <summary>
/// Position inside one ring-buffer page, kept outside the page reader so a long-lived per-CPU cursor (a class holding
/// a reusable page buffer) can resume decoding without re-creating a ref struct.
/// </summary>
public struct RingBufferPageState
{
    /// <summary>Absolute byte offset in the page of the next record header.</summary>
    public int Position;
    /// <summary>Absolute byte offset in the page where committed data ends.</summary>
    public int End;
    /// <summary>Running timestamp (page timestamp plus deltas so far).</summary>
    public ulong Timestamp;
}
