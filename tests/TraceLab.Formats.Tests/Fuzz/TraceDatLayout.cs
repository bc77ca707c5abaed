using System.Buffers.Binary;
using System.Text;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// A numeric field of the trace.dat v6 header area that steers the reader: a length, count, size or offset.
/// </summary>
internal readonly record struct LayoutField(string Name, int Offset, int Size);

/// <summary>One CPU's page range, and where its offset/size pair sits in the flyrecord section.</summary>
internal readonly record struct LayoutCpu(int Cpu, long Offset, long Size, int EntryOffset);

/// <summary>
/// Walks a well-formed little-endian trace.dat v6 (trace-cmd.dat(5)) independently of the reader under test, to tell
/// the fuzzer where the steering fields are.
/// </summary>
internal sealed class TraceDatLayout
{
    private readonly byte[] _d;
    private int _p;

    private TraceDatLayout(byte[] data) => _d = data;

    public int PageSize { get; private set; }
    public List<LayoutField> Fields { get; } = new();
    public List<LayoutCpu> Cpus { get; } = new();
    /// <summary>File offset just past the flyrecord CPU table: everything before is metadata.</summary>
    public int MetadataEnd { get; private set; }

    public static TraceDatLayout Parse(byte[] data)
    {
        var l = new TraceDatLayout(data);
        l.Run();
        return l;
    }

    private void Run()
    {
        _p = 10;
        CString();
        _p += 2;
        PageSize = (int)U32("page size");
        Tag();
        Skip64("header_page length");
        Tag();
        Skip64("header_event length");
        var ftrace = U32("ftrace format count");
        for (var i = 0; i < ftrace; i++) Skip64($"ftrace format {i} length");
        var systems = U32("event system count");
        for (var s = 0; s < systems; s++)
        {
            var name = CString();
            var count = U32($"{name} format count");
            for (var i = 0; i < count; i++) Skip64($"{name} format {i} length");
        }

        Skip32("kallsyms length");
        Skip32("printk formats length");
        Skip64("saved cmdlines length");
        var cpus = (int)U32("CPU count");
        while (Tag() == "options  ")
        {
            while (true)
            {
                var id = U16("option id");
                if (id == 0) break;
                var size = (int)U32($"option {id} size");
                if (id == 8) Fields.Add(new LayoutField("CPU count option", _p, 4));
                _p += size;
            }
        }

        for (var cpu = 0; cpu < cpus; cpu++)
        {
            var entry = _p;
            var offset = (long)U64($"CPU {cpu} data offset");
            var size = (long)U64($"CPU {cpu} data size");
            Cpus.Add(new LayoutCpu(cpu, offset, size, entry));
        }

        MetadataEnd = _p;
    }

    private ushort U16(string name)
    {
        Fields.Add(new LayoutField(name, _p, 2));
        var v = BinaryPrimitives.ReadUInt16LittleEndian(_d.AsSpan(_p));
        _p += 2;
        return v;
    }

    private uint U32(string name)
    {
        Fields.Add(new LayoutField(name, _p, 4));
        var v = BinaryPrimitives.ReadUInt32LittleEndian(_d.AsSpan(_p));
        _p += 4;
        return v;
    }

    private ulong U64(string name)
    {
        Fields.Add(new LayoutField(name, _p, 8));
        var v = BinaryPrimitives.ReadUInt64LittleEndian(_d.AsSpan(_p));
        _p += 8;
        return v;
    }

    private void Skip64(string name)
    {
        var length = (int)U64(name);
        _p += length;
    }

    private void Skip32(string name)
    {
        var length = (int)U32(name);
        _p += length;
    }

    private string CString()
    {
        var end = Array.IndexOf(_d, (byte)0, _p);
        var s = Encoding.ASCII.GetString(_d, _p, end - _p);
        _p = end + 1;
        return s;
    }

    private string Tag() => CString();
}
