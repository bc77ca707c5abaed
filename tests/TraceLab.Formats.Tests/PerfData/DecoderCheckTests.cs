using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// The perf.data scan checks every payload with <see cref="KernelEventDecoder.Check"/> (a table-driven length check
/// that calls <see cref="KernelEventDecoder.Inspect"/> only for events naming threads): it must answer exactly as
/// <see cref="KernelEventDecoder.Inspect"/> and leave the same thread names, for whole, cut and garbled payloads of
/// every event type the resources hold, and of unknown types.
/// </summary>
public sealed class DecoderCheckTests
{
    [Fact]
    public void Check_answers_and_names_threads_as_Inspect_does()
    {
        var formats = TestData.AllFormats().Select(f => FtraceEventFormat.Parse(f.Text, f.System)).ToList();
        var byInspect = new ThreadTable();
        var byCheck = new ThreadTable();
        var inspect = new KernelEventDecoder(formats, byInspect);
        var check = new KernelEventDecoder(formats, byCheck);
        var random = new Random(11);
        var tooShort = 0;
        var named = 0;

        foreach (var payload in Payloads(formats, random))
        {
            var expected = inspect.Inspect(payload, 0);
            Assert.Equal(expected, check.Check(payload, 0));
            if (!expected) tooShort++;
        }

        foreach (var (tid, name) in byInspect.Names)
        {
            Assert.Equal(name, byCheck.Names[tid]);
            named++;
        }

        Assert.Equal(byInspect.Names.Count, byCheck.Names.Count);
        // The inputs must exercise both answers and the naming path, or the comparison proves little.
        Assert.True(tooShort > 100, $"only {tooShort} payloads too short");
        Assert.True(named > 100, $"only {named} threads named");
    }

    private static IEnumerable<byte[]> Payloads(List<FtraceEventFormat> formats, Random random)
    {
        var maxId = formats.Max(f => f.Id);
        for (var i = 0; i < 20_000; i++)
        {
            var f = formats[random.Next(formats.Count)];
            var size = f.Fields.Max(x => x.Offset + x.Size) + random.Next(0, 24);
            var payload = new byte[size];
            random.NextBytes(payload);
            // Mostly real type ids (a few unknown ones), small tids, printable comms (so names get set).
            var id = random.Next(20) == 0 ? maxId + 1 + random.Next(100) : f.Id;
            BitConverter.TryWriteBytes(payload.AsSpan(f.Field("common_type")!.Offset), (ushort)id);
            foreach (var field in f.Fields.Where(
                x => !x.IsCommon && x.Name.EndsWith("pid", StringComparison.Ordinal) && x.Size == 4))
                BitConverter.TryWriteBytes(payload.AsSpan(field.Offset), random.Next(-2, 400));
            foreach (var field in f.Fields.Where(
                x => x.Name.EndsWith("comm", StringComparison.Ordinal) && !x.IsDynamic))
            {
                var name = $"t{random.Next(50)}";
                for (var b = 0; b < field.Size; b++) payload[field.Offset + b] =
                    b < name.Length ? (byte)name[b] : (byte)0;
            }

            // Cut a quarter of them anywhere (too short for their type, or for the common fields).
            yield return random.Next(4) == 0 ? payload[..random.Next(0, size)] : payload;
        }
    }
}
