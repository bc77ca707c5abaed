using System.Buffers;

namespace TraceLab.Cli.CommandLine;

/// <summary>
/// A command as a POSIX shell reads it back: the report's "Workload command" line of `trace -- sh -c 'exit 3'` is
/// what the user typed, not `sh -c exit 3`, which is another command.
/// </summary>
public static class ShellWords
{
    // Characters a word can hold unquoted; anything else (white space, quotes, $, ;, *, …) gets single quotes.
    private static readonly SearchValues<char> Plain =
        SearchValues.Create("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%^");

    /// <summary>The words joined by spaces, each quoted when the shell would otherwise split or expand it.</summary>
    public static string Join(IEnumerable<string> words) => string.Join(' ', words.Select(Quote));

    /// <summary><paramref name="word"/> as it is, or in single quotes (a quote inside as '\'').</summary>
    public static string Quote(string word) =>
        word.Length > 0 && !word.AsSpan().ContainsAnyExcept(Plain) ? word : "'" + word.Replace("'", @"'\''") + "'";
}
