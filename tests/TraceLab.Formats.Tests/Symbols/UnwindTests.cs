using System.Buffers.Binary;
using TraceLab.Formats.Symbols.Unwind;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// The call frame information reader and the user stack unwinder on a hand-built .eh_frame with known rows: a
/// function with a frame-pointer prologue and an epilogue inside remember/restore_state, and a PLT-like range whose
/// CFA is a DWARF expression (what gcc emits for .plt); then a two-frame stack unwound through both, and damaged
/// sections and stacks that must end the unwind, never throw or loop.
/// </summary>
public sealed class UnwindTests
{
    private const ulong Section = 0x2000;

    /// <summary>.eh_frame: one CIE (zR, pcrel|sdata4, code 1, data −8, RA 16), two FDEs, the terminator.</summary>
    private static byte[] EhFrame()
    {
        var b = new List<byte>();
        void U32(uint v) => b.AddRange(BitConverter.GetBytes(v));
        void Entry(Action body)
        {
            var lengthAt = b.Count;
            U32(0);
            body();
            while ((b.Count - lengthAt) % 4 != 0) b.Add(0); // DW_CFA_nop padding
            BinaryPrimitives.WriteUInt32LittleEndian(
                System.Runtime.InteropServices.CollectionsMarshal.AsSpan(b)[lengthAt..],
                (uint)(b.Count - lengthAt - 4));
        }

        void Fde(ulong start, uint range, byte[] program) => Entry(() =>
        {
            U32((uint)(b.Count)); // CIE pointer: back to offset 0 from this field
            var at = Section + (ulong)b.Count;
            U32((uint)(int)(long)(start - at)); // pc_begin, pc-relative
            U32(range);
            b.Add(0); // augmentation data length
            b.AddRange(program);
        });

        Entry(() =>
        {
            U32(0); // CIE id
            b.Add(1);
            b.AddRange("zR\0"u8.ToArray());
            b.Add(1); // code alignment
            b.Add(0x78); // data alignment −8
            b.Add(16); // return address register
            b.Add(1); // augmentation data length
            b.Add(0x1b); // FDE pointers: pcrel | sdata4
            b.AddRange([0x0c, 7, 8]); // def_cfa rsp+8
            b.AddRange([0x90, 1]); // offset r16 (RA) at cfa−8
        });
        Fde(0x1000, 0x100,
        [
            0x41, 0x0e, 0x10, 0x86, 0x02, // +1: def_cfa_offset 16; rbp at cfa−16
            0x43, 0x0d, 0x06, // +3: def_cfa_register rbp
            0x02, 0x4c, 0x0a, 0x0c, 0x07, 0x08, // to 0x1050: remember_state; def_cfa rsp+8
            0x41, 0x0b, // +1: restore_state
        ]);
        // PLT: CFA = rsp + 8 + (((rip & 15) >= 11) << 3)
        Fde(0x1200, 0x40, [0x0f, 11, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22]);
        U32(0); // terminator
        return [.. b];
    }

    private static string Describe(CallFrameInfo cfi, ulong pc)
    {
        var row = new UnwindRow();
        if (!cfi.TryRow(pc, row)) return "none";
        var cfa = row.Cfa.Kind == UnwindRuleKind.Register
            ? $"r{row.Cfa.Start}+{row.Cfa.Value}"
            : $"expression({row.Cfa.Length})";
        var rbp = row.Rule(6).Kind == UnwindRuleKind.Offset ? $" rbp@{row.Rule(6).Value}" : "";
        return $"{cfa} ra@{row.Rule(16).Value}{rbp}";
    }

    [Fact]
    public void Rows_follow_the_cfa_program_to_the_address()
    {
        var cfi = CallFrameInfo.Read(EhFrame(), Section);
        Assert.Equal(2, cfi.Count);
        Assert.Equal(0, cfi.Damaged);
        Assert.Equal("r7+8 ra@-8", Describe(cfi, 0x1000));
        Assert.Equal("r7+16 ra@-8 rbp@-16", Describe(cfi, 0x1001));
        Assert.Equal("r6+16 ra@-8 rbp@-16", Describe(cfi, 0x1004));
        Assert.Equal("r6+16 ra@-8 rbp@-16", Describe(cfi, 0x104f));
        // The epilogue: remembered, CFA back on rsp; restored after the return, the CFA's rule included.
        Assert.Equal("r7+8 ra@-8 rbp@-16", Describe(cfi, 0x1050));
        Assert.Equal("r6+16 ra@-8 rbp@-16", Describe(cfi, 0x1051));
        Assert.Equal("expression(11) ra@-8", Describe(cfi, 0x1210));
        Assert.Equal("none", Describe(cfi, 0x0fff));
        Assert.Equal("none", Describe(cfi, 0x1100));
        Assert.Equal("none", Describe(cfi, 0x1240));
    }

    private sealed class OneModule(CallFrameInfo? cfi) : IUnwindModules
    {
        public CallFrameInfo? Find(ulong address, out ulong linkAddress)
        {
            linkAddress = address;
            return cfi;
        }
    }

    /// <summary>
    /// A stack copy from 0x7000: saved rbp at 0x7010, the return into the PLT at 0x7018, 0 at 0x7020.
    /// </summary>
    private static byte[] Stack(int length = 0x30)
    {
        var stack = new byte[length];
        if (length >= 0x18) BinaryPrimitives.WriteUInt64LittleEndian(stack.AsSpan(0x10), 0x7040);
        if (length >= 0x20) BinaryPrimitives.WriteUInt64LittleEndian(stack.AsSpan(0x18), 0x1211);
        return stack;
    }

    private static (ulong[] Frames, long[] Ends) Unwind(CallFrameInfo? cfi, byte[] stack, ulong ip = 0x1010,
        ulong rbp = 0x7010)
    {
        var registers = new ulong[CallFrameInfo.Registers];
        registers[UserStackUnwinder.Ip] = ip;
        registers[UserStackUnwinder.Sp] = 0x7000;
        registers[6] = rbp;
        var context = new UserContext
        {
            Registers = registers,
            Known = (1u << UserStackUnwinder.Ip) | (1u << UserStackUnwinder.Sp) | (1u << 6),
            Stack = stack,
            StackStart = 0x7000,
        };
        var unwinder = new UserStackUnwinder();
        var frames = new ulong[16];
        var n = unwinder.Unwind(ref context, new OneModule(cfi), frames);
        return (frames[..n], unwinder.Ends);
    }

    [Fact]
    public void A_stack_unwinds_through_the_frame_pointer_function_and_the_plt_to_its_end()
    {
        var (frames, ends) = Unwind(CallFrameInfo.Read(EhFrame(), Section), Stack());
        // The sampled ip, then the caller's return address less one (inside its call), as perf prints them.
        Assert.Equal([0x1010UL, 0x1210UL], frames);
        Assert.Equal(1, ends[(int)UnwindEnd.Complete]);
    }

    [Fact]
    public void An_unwind_ends_with_its_reason_where_the_copy_the_rules_or_the_module_end()
    {
        var cfi = CallFrameInfo.Read(EhFrame(), Section);
        // The return address lies past a 0x18-byte copy.
        var (frames, ends) = Unwind(cfi, Stack(0x18));
        Assert.Equal([0x1010UL], frames);
        Assert.Equal(1, ends[(int)UnwindEnd.StackCopy]);
        // A frame pointer below the stack pointer: the CFA would not move up; the unwind stops instead of looping.
        (frames, ends) = Unwind(cfi, Stack(), rbp: 0x6000);
        Assert.Single(frames);
        Assert.Equal(1, ends[(int)UnwindEnd.BadRule] + ends[(int)UnwindEnd.StackCopy]);
        // An address no FDE covers, and a module without CFI.
        (frames, ends) = Unwind(cfi, Stack(), ip: 0x3000);
        Assert.Equal([0x3000UL], frames);
        Assert.Equal(1, ends[(int)UnwindEnd.NoRow]);
        (frames, ends) = Unwind(null, Stack());
        Assert.Equal([0x1010UL], frames);
        Assert.Equal(1, ends[(int)UnwindEnd.NoCfi]);
    }

    [Fact]
    public void Damaged_sections_and_stacks_never_throw_or_loop()
    {
        var intact = EhFrame();
        var random = new Random(20261128);
        int cases = 0, rows = 0, unwound = 0;
        for (var i = 0; i < 4000; i++)
        {
            var bytes = (byte[])intact.Clone();
            var flips = 1 + random.Next(4);
            for (var f = 0; f < flips; f++) bytes[random.Next(bytes.Length)] = (byte)random.Next(256);
            if (i % 5 == 0) bytes = bytes[..random.Next(bytes.Length)];
            var cfi = CallFrameInfo.Read(bytes, Section);
            cases++;
            var row = new UnwindRow();
            for (var pc = 0xff0UL; pc < 0x1250; pc += 7)
                if (cfi.TryRow(pc, row)) rows++;
            var stack = new byte[random.Next(0x40)];
            random.NextBytes(stack);
            var (frames, _) = Unwind(cfi, stack, ip: 0x1000 + (ulong)random.Next(0x260),
                rbp: 0x7000 + (ulong)random.Next(0x40));
            Assert.InRange(frames.Length, 1, 16);
            if (frames.Length > 1) unwound++;
        }

        // The damage reached the reader and the unwinder: rows were still found and stacks still unwound.
        Assert.Equal(4000, cases);
        Assert.True(rows > 10_000, $"{rows} rows found");
        Assert.True(unwound > 100, $"{unwound} stacks unwound past their first frame");
    }
}
