using System.Runtime.InteropServices;
using TraceLab.Core;

namespace TraceLab.Formats.Etw;

/// <summary>
/// Records ETW's UTF-16 thread names in a <see cref="ThreadTable"/>, allocating only when a name changes.
/// </summary>
internal static class Utf16ThreadName
{
    public static void Record(ThreadTable threads, int tid, ReadOnlySpan<byte> utf16)
    {
        // Thread rundowns repeat every name at session start and end; most threads have none at all.
        if (tid <= 0) return;
        var chars = MemoryMarshal.Cast<byte, char>(utf16);
        var nul = chars.IndexOf('\0');
        if (nul >= 0) chars = chars[..nul];
        if (chars.IsEmpty) return;
        if (threads.TryGetName(tid, out var known) && chars.SequenceEqual(known)) return;
        threads.SetName(tid, new string(chars));
    }
}
