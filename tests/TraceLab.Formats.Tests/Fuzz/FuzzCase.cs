namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>One damaged variant of the base trace: an optional cut, then byte overwrites.</summary>
/// <param name="MetadataIntact">Only CPU data was touched, so a salvaging read must succeed.</param>
internal sealed record FuzzCase(
    string Description, int? CutAt, IReadOnlyList<(int Offset, byte[] Bytes)> Writes, bool MetadataIntact)
{
    public byte[] Apply(byte[] source)
    {
        var bytes = source.AsSpan(0, Math.Min(CutAt ?? source.Length, source.Length)).ToArray();
        foreach (var (offset, data) in Writes)
        {
            for (var i = 0; i < data.Length && offset + i < bytes.Length; i++) bytes[offset + i] = data[i];
        }

        return bytes;
    }

    public override string ToString() => Description;
}
