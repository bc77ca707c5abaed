namespace TraceLab.Reporting.Tables;

/// <summary>One piece of a report section: a table or a note. A section is a list of these, built once.</summary>
public abstract record ReportBlock;

/// <summary>A table (<see cref="ReportTable.In"/> says where it shows).</summary>
public sealed record TableBlock(ReportTable Table) : ReportBlock;

/// <summary>Lines of report.md (and so report.html); "" is a blank line.</summary>
public sealed record MarkdownText(params string[] Lines) : ReportBlock;

/// <summary>One line on the terminal, in Spectre.Console markup (escape what is data).</summary>
public sealed record TerminalLine(string Markup) : ReportBlock;
