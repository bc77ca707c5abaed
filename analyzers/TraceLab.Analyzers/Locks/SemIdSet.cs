namespace TraceLab.Analyzers.Locks;

/// <summary>
/// The semids one thread holds: almost always none or one, so a linear scan of a small array beats hashing on every
/// semop exit. Grows (doubling) when a thread holds more; never shrinks, so steady state allocates nothing. Every
/// thread has one and most never hold a semid: the array comes with the first.
/// </summary>
internal sealed class SemIdSet
{
    private long[] _ids = [];
    private int _count;

    public bool Contains(long id) => IndexOf(id) >= 0;

    public void Add(long id)
    {
        if (IndexOf(id) >= 0) return;
        if (_count == _ids.Length) Array.Resize(ref _ids, Math.Max(2, _count * 2));
        _ids[_count++] = id;
    }

    public void Remove(long id)
    {
        var i = IndexOf(id);
        if (i < 0) return;
        _ids[i] = _ids[--_count];
    }

    private int IndexOf(long id)
    {
        for (var i = 0; i < _count; i++)
            if (_ids[i] == id) return i;
        return -1;
    }
}
