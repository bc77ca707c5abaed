namespace TraceLab.Formats.PerfData;

/// <summary>
/// An int per non-negative key, in pages of 1,024 allocated as keys are seen (tids: memory grows with the threads,
/// never with the events), read and written without hashing. Missing keys read as 0.
/// </summary>
internal sealed class PagedIntMap
{
    private const int PageBits = 10;
    private const int PageMask = (1 << PageBits) - 1;
    private int[]?[] _pages = new int[]?[64];

    /// <summary>True when <paramref name="key"/> already holds <paramref name="value"/>; else stores it.</summary>
    public bool Same(int key, int value)
    {
        var p = key >> PageBits;
        if (p >= _pages.Length) Array.Resize(ref _pages, Math.Max(p + 1, _pages.Length * 2));
        ref var slot = ref (_pages[p] ??= new int[1 << PageBits])[key & PageMask];
        if (slot == value) return true;
        slot = value;
        return false;
    }
}
