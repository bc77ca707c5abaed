using System.Reflection;
using TraceLab.Analyzers.Parallel;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers.Parallel;

public sealed class PackedEventsTests
{
    /// <summary>
    /// Every field set to a value of its own (none zero) unless its bit in <paramref name="zeros"/> is set.
    /// </summary>
    private static KernelEvent Event(Random random, int zeros, string? text)
    {
        long Pick(int bit, long value) => (zeros >> bit & 1) != 0 ? 0 : value;
        long Any() => random.Next(4) switch
        {
            0 => long.MinValue,
            1 => long.MaxValue,
            2 => -random.NextInt64(1, 1000),
            _ => random.NextInt64(1, long.MaxValue)
        };
        int AnyInt() =>
            random.Next(3) switch { 0 => int.MinValue, 1 => -random.Next(1, 1000), _ => random.Next(1, int.MaxValue) };
        return new KernelEvent
        {
            Timestamp = Any(),
            Kind = (KernelEventKind)random.Next(0, 11),
            Flags = (byte)random.Next(0, 256),
            Cpu = (int)Pick(0, AnyInt()),
            CurrentTid = (int)Pick(1, AnyInt()),
            Tid = (int)Pick(2, AnyInt()),
            Tid2 = (int)Pick(3, AnyInt()),
            Prio = (int)Pick(4, AnyInt()),
            Prio2 = (int)Pick(5, AnyInt()),
            State = Pick(6, Any()),
            Cpu2 = (int)Pick(7, AnyInt()),
            Cpu3 = (int)Pick(8, AnyInt()),
            SyscallNr = (int)Pick(9, AnyInt()),
            Arg0 = Pick(10, Any()),
            Arg1 = Pick(11, Any()),
            Arg2 = Pick(12, Any()),
            Arg3 = Pick(13, Any()),
            Ret = Pick(14, Any()),
            WaitReasonPlusOne = (ushort)Pick(15, random.Next(1, 65536)),
            Stack = (int)Pick(16, random.Next(1, int.MaxValue)),
            Text = text,
        };
    }

    private static List<KernelEvent> Unpack(PackedEvents packed)
    {
        var events = new List<KernelEvent>();
        var e = Event(new Random(1), 0, "stale"); // every field set: unpacking must overwrite all of them
        for (int i = 0, at = 0; i < packed.Count; i++)
        {
            at = packed.Read(at, ref e);
            events.Add(e);
        }

        return events;
    }

    [Fact]
    public void Unpacking_gives_every_field_back_whatever_is_zero()
    {
        var random = new Random(42);
        var packed = new PackedEvents(4096);
        var expected = new List<KernelEvent>();
        for (var i = 0; i < packed.Capacity; i++)
        {
            // All zero patterns of the first fields and random ones of the rest; texts on some events, index 0
            // included.
            var zeros = i < 1024 ? i * 32 + (i & 31) : random.Next(1 << 16);
            var e = Event(random, zeros, i % 7 == 0 ? $"text {i}" : null);
            expected.Add(e);
            packed.Add(e);
        }

        Assert.True(packed.IsFull);
        Assert.Equal(expected, Unpack(packed));
    }

    [Fact]
    public void A_full_batch_of_the_largest_events_fits_and_clear_starts_over()
    {
        var random = new Random(7);
        var packed = new PackedEvents(64);
        var largest = Enumerable.Range(0, packed.Capacity).Select(i => Event(random, 0, "t")).ToList();
        foreach (var e in largest) packed.Add(e);
        Assert.Equal(packed.Capacity * PackedEvents.MaxPackedBytes, packed.Length);
        Assert.Equal(largest, Unpack(packed));

        packed.Clear();
        Assert.Equal(0, packed.Count);
        var one = KernelEvent.Switch(5, 1, 10, 120, 1, 11, 120);
        packed.Add(one);
        Assert.Equal([one], Unpack(packed));
        Assert.True(packed.Length < 48, $"a switch packs into {packed.Length} bytes, not a whole event");
    }

    [Fact]
    public void Packs_exactly_the_fields_KernelEvent_has()
    {
        // A field added to KernelEvent must be packed too, or analysis threads would see it as zero.
        var fields = typeof(KernelEvent).GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic)
            .Select(f => f.Name).Order().ToArray();
        string[] packed =
        [
            "Arg0", "Arg1", "Arg2", "Arg3", "Cpu", "Cpu2", "Cpu3", "CurrentTid", "Flags", "Kind", "Prio", "Prio2",
                "Ret",
            "Stack", "State", "SyscallNr", "Text", "Tid", "Tid2", "Timestamp", "WaitReasonPlusOne",
        ];
        Assert.Equal(packed.Order().ToArray(), fields);
    }
}
