namespace TraceLab.Formats.Symbols;

/// <summary>The binary search of the address tables sorted by start (line rows, inlined ranges, FDEs).</summary>
internal static class SortedAddresses
{
    /// <summary>
    /// The index of the last start at or below <paramref name="address"/> in ascending <paramref name="starts"/>;
    /// −1 when every start is above it.
    /// </summary>
    public static int LastAtOrBelow(ReadOnlySpan<ulong> starts, ulong address)
    {
        int lo = 0, hi = starts.Length - 1, found = -1;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            if (starts[mid] <= address)
            {
                found = mid;
                lo = mid + 1;
            }
            else hi = mid - 1;
        }

        return found;
    }
}
