using TraceLab.Core;

namespace TraceLab.Analyzers.Parallel;

/// <summary>
/// A batch of events packed for the hand-off between threads (<see cref="KernelEventPacking"/>: each event as its
/// header and only its non-zero fields). An event struct is over 100 bytes, most of them zero for any one kind;
/// packed, a trace's events average ~30–45 bytes, and every byte the reader writes here is a byte the analysis
/// thread's core must fetch from the reader's core. Texts are kept by reference beside the bytes.
/// </summary>
internal sealed class PackedEvents
{
    /// <summary>The most bytes one event takes.</summary>
    public const int MaxPackedBytes = KernelEventPacking.MaxBytes;

    private readonly byte[] _bytes;
    private readonly string?[] _texts;
    private int _length;
    private int _textCount;

    public PackedEvents(int capacity)
    {
        Capacity = capacity;
        _bytes = new byte[capacity * MaxPackedBytes];
        _texts = new string?[capacity];
    }

    /// <summary>Events the batch can hold, whatever their size.</summary>
    public int Capacity { get; }

    public int Count { get; private set; }

    /// <summary>Bytes packed so far.</summary>
    public int Length => _length;

    /// <summary>The packed events, one after another.</summary>
    public ReadOnlySpan<byte> Bytes => _bytes.AsSpan(0, _length);

    /// <summary>The texts the packed events refer to by index.</summary>
    public ReadOnlySpan<string?> Texts => _texts.AsSpan(0, _textCount);

    public bool IsFull => Count == Capacity;

    public void Clear()
    {
        // Texts are dropped so the batch does not keep strings alive while it waits in the pool.
        Array.Clear(_texts, 0, _textCount);
        Count = _length = _textCount = 0;
    }

    public void Add(in KernelEvent e)
    {
        _length += KernelEventPacking.Pack(e, _bytes, _length, _texts, ref _textCount);
        Count++;
    }

    /// <summary>Unpacks the event at byte <paramref name="offset"/> into <paramref name="e"/>; returns the next's.
    /// </summary>
    public int Read(int offset, ref KernelEvent e) => offset + KernelEventPacking.Unpack(_bytes, offset, _texts, ref e);
}
