using System.Runtime.CompilerServices;

namespace TraceLab.Core;

/// <summary>
/// An int per non-negative id (a tid), in pages of 1,024 allocated when an id of theirs is first written: read and
/// written with a few array loads instead of a hash, and memory grows with the range of tids seen, never with the
/// events. Unwritten ids read as 0. A mutable struct, kept as a (non-readonly) field of its owner so the hot paths
/// that use it (thread slots, thread instances, the perf.data reader) load its pages directly.
/// </summary>
public struct TidPages
{
    private const int PageBits = 10;
    private const int PageSize = 1 << PageBits;
    private const int PageMask = PageSize - 1;

    private int[]?[]? _pages;

    /// <summary>The value of <paramref name="id"/>; 0 when it was never written (and for a negative id).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly int Get(int id)
    {
        var p = id >> PageBits;
        var pages = _pages;
        return pages is not null && (uint)p < (uint)pages.Length && pages[p] is { } page ? page[id & PageMask] : 0;
    }

    /// <summary>The place of <paramref name="id"/>'s value (≥ 0), its page allocated if it has none yet.</summary>
    public ref int At(int id)
    {
        var p = id >> PageBits;
        _pages ??= new int[]?[64];
        if (p >= _pages.Length) Array.Resize(ref _pages, Math.Max(p + 1, _pages.Length * 2));
        return ref (_pages[p] ??= new int[PageSize])[id & PageMask];
    }
}
