using System.Text;
using TraceLab.Formats.Symbols.Dwarf;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// The DWARF line table reader on a hand-built DWARF 5 unit with known rows (directory and file entry formats,
/// set_address, special opcodes, set_file, end_sequence), and damaged copies of it that must never throw. Real
/// tables (gcc 12's DWARF 5, libc6-dbg's compressed one) are checked against addr2line in PerfStacksCaptureTests.
/// </summary>
public sealed class DwarfLineTableTests
{
    private static byte[] Unit()
    {
        var header = new List<byte>
        {
            1, 1, 1, 0xfb, 14, 13, // min_inst, max_ops, default_is_stmt, line_base −5, line_range 14, opcode_base 13
            0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, // standard opcode lengths
            1, 1, 0x08, // directory formats: path as string
            2,
        };
        header.AddRange(Encoding.ASCII.GetBytes("/src\0inc\0"));
        header.AddRange([2, 1, 0x08, 2, 0x0b, 2]); // file formats: path string, directory data1; two files
        header.AddRange(Encoding.ASCII.GetBytes("a.c\0"));
        header.Add(0);
        header.AddRange(Encoding.ASCII.GetBytes("b.h\0"));
        header.Add(1);
        var program = new List<byte> { 0, 9, 2 };
        program.AddRange(BitConverter.GetBytes(0x1000UL)); // set_address
        program.AddRange([3, 9, 1]); // line 10; copy
        program.Add(75); // special: address +4, line +1
        program.AddRange([4, 1, 2, 8, 3, 20, 1]); // file 1; address +8; line +20; copy
        program.AddRange([2, 4, 0, 1, 1]); // address +4; end_sequence
        var unit = new List<byte>();
        unit.AddRange(BitConverter.GetBytes((ushort)5));
        unit.AddRange([8, 0]);
        unit.AddRange(BitConverter.GetBytes((uint)header.Count));
        unit.AddRange(header);
        unit.AddRange(program);
        return [.. BitConverter.GetBytes((uint)unit.Count), .. unit];
    }

    [Fact]
    public void Rows_give_the_file_and_line_of_each_address_and_nothing_outside_the_sequence()
    {
        var table = DwarfLineTable.Read(Unit(), null, null);
        Assert.Equal(0, table.DamagedUnits);
        Assert.Equal(new SourceLine("/src/a.c", 10), table.Find(0x1000));
        Assert.Equal(new SourceLine("/src/a.c", 10), table.Find(0x1003));
        Assert.Equal(new SourceLine("/src/a.c", 11), table.Find(0x1004));
        Assert.Equal(new SourceLine("/src/inc/b.h", 31), table.Find(0x100c));
        Assert.Equal("b.h:31", table.Find(0x100f)!.Value.Short);
        Assert.Null(table.Find(0x1010));
        Assert.Null(table.Find(0xfff));
    }

    [Fact]
    public void Damaged_tables_never_throw()
    {
        var intact = Unit();
        var random = new Random(20261128);
        int found = 0, damaged = 0;
        for (var i = 0; i < 5000; i++)
        {
            var bytes = (byte[])intact.Clone();
            for (var f = 1 + random.Next(3); f > 0; f--) bytes[random.Next(bytes.Length)] = (byte)random.Next(256);
            if (i % 7 == 0) bytes = bytes[..random.Next(bytes.Length)];
            var table = DwarfLineTable.Read(bytes, bytes, bytes);
            damaged += table.DamagedUnits;
            for (var a = 0xff8UL; a < 0x1018; a += 3)
                if (table.Find(a) is not null) found++;
        }

        // The damage reached the reader both ways: some units refused, others still gave lines.
        Assert.True(damaged > 100, $"{damaged} damaged units");
        Assert.True(found > 1000, $"{found} lines found");
    }
}
