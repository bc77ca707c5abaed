using TraceLab.Formats.Etl;
using TraceLab.Formats.Registry;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>The registry entry for the managed reader: recognised by content, opened with the salvage option.</summary>
public sealed class EtlFormatTests
{
    [ExternalTraceFact(ExternalEtl.ShutdownLogger)]
    public void A_registry_with_the_etl_format_opens_a_real_etl_whatever_its_name()
    {
        using var dir = new TempDirectory("etl-format");
        var path = dir.File("renamed.dat");
        File.Copy(ExternalTraces.PathOf(ExternalEtl.ShutdownLogger), path);
        var registry = new TraceFormatRegistry([.. TraceFormats.All.Formats, new EtlFormat()]);

        Assert.IsType<EtlFormat>(registry.Detect(path));
        using var reader = registry.Open(path, new TraceReadOptions { Salvage = true });
        Assert.IsType<EtlFileReader>(reader);
        Assert.Equal("etw", reader.Info.Backend);
    }

    [Fact]
    public void The_etl_format_is_registered_for_every_os()
    {
        Assert.Contains(TraceFormats.All.Formats, f => f is EtlFormat);
        Assert.Equal("etl", new EtlFormat().Name);
    }
}
