using System.Text;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// Maps byte strings to shared string instances without allocating on a hit. Marker texts repeat (a workload writes
/// the same few annotations millions of times), so one allocation per distinct text is enough. The table is capped so
/// a trace with unbounded distinct texts cannot grow memory without limit; past the cap texts are simply decoded.
/// </summary>
internal sealed class StringInterner
{
    private const int MaxEntries = 1 << 14;
    private const int MaxInternedLength = 256;

    private Entry[] _slots = new Entry[256];
    private int _count;

    private struct Entry
    {
        public int Hash;
        public byte[]? Bytes;
        public string? Text;
    }

    public int Count => _count;

    public string Get(ReadOnlySpan<byte> utf8)
    {
        if (utf8.Length > MaxInternedLength) return Encoding.UTF8.GetString(utf8);
        var hash = Hash(utf8);
        var mask = _slots.Length - 1;
        var i = hash & mask;
        while (true)
        {
            ref var slot = ref _slots[i];
            if (slot.Bytes is null) break;
            if (slot.Hash == hash && utf8.SequenceEqual(slot.Bytes)) return slot.Text!;
            i = (i + 1) & mask;
        }

        var text = Encoding.UTF8.GetString(utf8);
        if (_count >= MaxEntries) return text;
        if ((_count + 1) * 2 > _slots.Length)
        {
            Grow();
            mask = _slots.Length - 1;
            i = hash & mask;
            while (_slots[i].Bytes is not null) i = (i + 1) & mask;
        }

        _slots[i] = new Entry { Hash = hash, Bytes = utf8.ToArray(), Text = text };
        _count++;
        return text;
    }

    private void Grow()
    {
        var old = _slots;
        _slots = new Entry[old.Length * 2];
        var mask = _slots.Length - 1;
        foreach (var e in old)
        {
            if (e.Bytes is null) continue;
            var i = e.Hash & mask;
            while (_slots[i].Bytes is not null) i = (i + 1) & mask;
            _slots[i] = e;
        }
    }

    private static int Hash(ReadOnlySpan<byte> bytes)
    {
        // FNV-1a: deterministic and cheap for the short texts markers are.
        var h = 2166136261u;
        foreach (var b in bytes) h = (h ^ b) * 16777619u;
        return (int)(h & 0x7FFFFFFF);
    }
}
