using System.Buffers.Binary;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.Tests;

internal static class TestData
{
    public static string ResourceDir => Path.Combine(AppContext.BaseDirectory, "Resources");

    public static string Resource(string name) => File.ReadAllText(Path.Combine(ResourceDir, name));

    public static FtraceEventFormat Format(string system, string name) =>
        FtraceEventFormat.Parse(Resource($"{system}_{name}.format"), system);

    public static IEnumerable<(string System, string Text)> AllFormats()
    {
        foreach (var path in Directory.GetFiles(ResourceDir, "*.format"))
        {
            var file = Path.GetFileNameWithoutExtension(path);
            var system =
                file.StartsWith("raw_syscalls_", StringComparison.Ordinal) ? "raw_syscalls" : file[..file.IndexOf('_')];
            yield return (system, File.ReadAllText(path));
        }
    }
}

/// <summary>
/// Builds raw ring-buffer pages the way the kernel lays them out (4-byte record headers, 4-byte alignment).
/// </summary>
internal sealed class PageBuilder
{
    private readonly byte[] _page;
    private int _pos = 16;

    public PageBuilder(ulong timestamp, int pageSize = 4096)
    {
        _page = new byte[pageSize];
        BinaryPrimitives.WriteUInt64LittleEndian(_page, timestamp);
    }

    private void Header(int typeLen, uint delta)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(_page.AsSpan(_pos), (delta << 5) | (uint)typeLen);
        _pos += 4;
    }

    private void Word(uint value)
    {
        BinaryPrimitives.WriteUInt32LittleEndian(_page.AsSpan(_pos), value);
        _pos += 4;
    }

    public PageBuilder Data(uint delta, byte[] payload, bool forceLengthWord = false)
    {
        var padded = (payload.Length + 3) & ~3;
        if (!forceLengthWord && padded <= 28 * 4 && padded > 0)
        {
            Header(padded / 4, delta);
        }
        else
        {
            Header(0, delta);
            Word((uint)payload.Length + 4);
        }

        payload.CopyTo(_page, _pos);
        _pos += padded;
        return this;
    }

    public PageBuilder TimeExtend(ulong delta)
    {
        Header(30, (uint)(delta & ((1u << 27) - 1)));
        Word((uint)(delta >> 27));
        return this;
    }

    public PageBuilder AbsoluteStamp(ulong ts)
    {
        Header(31, (uint)(ts & ((1u << 27) - 1)));
        Word((uint)(ts >> 27));
        return this;
    }

    /// <summary>
    /// A discarded event: padding with a non-zero delta and <paramref name="length"/> bytes after the header.
    /// </summary>
    public PageBuilder Discarded(uint delta, int length)
    {
        Header(29, delta);
        Word((uint)length);
        _pos += length - 4;
        return this;
    }

    /// <summary>Tail padding (delta 0): the rest of the page is unused.</summary>
    public PageBuilder TailPadding()
    {
        Header(29, 0);
        return this;
    }

    public PageBuilder Raw(uint word)
    {
        Word(word);
        return this;
    }

    public int Length => _pos - 16;

    public byte[] Build(ulong flags = 0, long? storedMissed = null, int? commitOverride = null)
    {
        var commit = (ulong)(commitOverride ?? Length);
        BinaryPrimitives.WriteUInt64LittleEndian(_page.AsSpan(8), commit | flags);
        if (storedMissed is { } m) BinaryPrimitives.WriteInt64LittleEndian(_page.AsSpan(16 + (int)commit), m);
        return _page;
    }
}
