using System.Xml.Linq;

namespace TraceLab.Tests.Html;

/// <summary>
/// The shipped WPA preset cannot be loaded here (WPA is Windows-only); this checks what can be: well-formed XML in
/// WPA's profile container, on the CPU Usage (Precise) graph, with the columns docs/viewers.md promises.
/// </summary>
public sealed class WpaProfileTests
{
    [Fact]
    public void Convoy_profile_is_a_cpu_usage_precise_table_with_the_documented_columns()
    {
        var doc = XDocument.Load(Path.Combine(RepoPaths.Root, "tools", "wpa", "TraceLab-Convoys.wpaProfile"));
        XNamespace ns = "http://tempuri.org/SerializableElement.xsd";
        Assert.Equal(ns + "WpaProfileContainer", doc.Root!.Name);
        // WPA's identifier of the CPU Usage (Precise) graph.
        var graph = Assert.Single(doc.Descendants(ns + "Graph"));
        Assert.Equal("c58f5fea-0319-4046-932d-e695ebe20b47", graph.Attribute("Guid")!.Value);
        var columns = doc.Descendants(ns + "Column").Where(c => c.Attribute("IsVisible")?.Value == "true")
            .Select(c => c.Attribute("Name")!.Value).ToList();
        foreach (var name in new[] { "New Thread Id", "Readying Thread Id", "Ready", "Waits", "New Prev Wait Reason" })
            Assert.Contains(name, columns);
        var sorted = Assert.Single(doc.Descendants(ns + "Column"), c => c.Attribute("SortPriority")?.Value == "0");
        Assert.Equal(("Ready", "Sum", "Descending"), (sorted.Attribute("Name")!.Value,
            sorted.Attribute("AggregationMode")!.Value, sorted.Attribute("SortOrder")!.Value));
    }
}
