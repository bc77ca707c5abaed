namespace TraceLab.Formats.PerfData;

/// <summary>
/// Bytes of the file the run cursors have mapped (their views), now and at most: what holding events costs instead of
/// the events.
/// </summary>
internal sealed class ViewBudget
{
    public long Current { get; private set; }
    public long Peak { get; private set; }

    public void Add(long bytes)
    {
        Current += bytes;
        if (Current > Peak) Peak = Current;
    }
}
