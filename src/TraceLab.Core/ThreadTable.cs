namespace TraceLab.Core;

/// <summary>
/// tid → name, filled from whatever the trace says (saved cmdlines, comm fields).
/// Names are interned: asking for the same name bytes again costs no allocation.
/// </summary>
public sealed class ThreadTable
{
    private readonly Dictionary<int, string> _names = new();

    public IReadOnlyDictionary<int, string> Names => _names;

    public string NameOf(int tid) => tid == 0 ? "<idle>" : _names.TryGetValue(tid, out var n) ? n : $"tid {tid}";

    public bool TryGetName(int tid, out string name) => _names.TryGetValue(tid, out name!);

    public void SetName(int tid, string name) => _names[tid] = name;

    /// <summary>Sets the name from NUL-padded comm bytes, allocating only when it differs from the known one.</summary>
    public void SetName(int tid, ReadOnlySpan<byte> comm)
    {
        var len = comm.IndexOf((byte)0);
        if (len >= 0) comm = comm[..len];
        if (_names.TryGetValue(tid, out var existing) && SameAscii(existing, comm)) return;
        _names[tid] = System.Text.Encoding.UTF8.GetString(comm);
    }

    private static bool SameAscii(string s, ReadOnlySpan<byte> bytes)
    {
        if (s.Length != bytes.Length) return false;
        for (var i = 0; i < bytes.Length; i++)
            if (s[i] != bytes[i]) return false;
        return true;
    }
}
