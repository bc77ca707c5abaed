using TraceLab.Cli.CommandLine;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Cli;

/// <summary>The command a report names is the one the user typed, read back by a POSIX shell.</summary>
public sealed class ShellWordsTests
{
    [Theory]
    [InlineData(new[] { "sysbench", "mutex", "--threads=4", "run" }, "sysbench mutex --threads=4 run")]
    [InlineData(new[] { "sh", "-c", "exit 3" }, "sh -c 'exit 3'")]
    [InlineData(new[] { "sh", "-c", "kill -TERM $$" }, "sh -c 'kill -TERM $$'")]
    [InlineData(new[] { "echo", "it's", "" }, @"echo 'it'\''s' ''")]
    [InlineData(new[] { "ls", "*.c", "a;b", "x|y", "~" }, "ls '*.c' 'a;b' 'x|y' '~'")]
    public void Words_the_shell_would_split_or_expand_are_quoted(string[] words, string line) =>
        Assert.Equal(line, ShellWords.Join(words));

    [LinuxFact]
    public void The_shell_reads_the_quoted_line_back_as_the_same_words()
    {
        string[] words = ["printf", "%s\\n", "a b", "it's", "$HOME", "`id`", "\"q\"", "", "tab\there"];
        var (code, stdout, _) = ProcessOutput.Run("/bin/sh", "-c", ShellWords.Join(words));
        Assert.Equal(0, code);
        Assert.Equal(string.Join("\n", words[2..]) + "\n", stdout);
    }
}
