namespace TraceLab.Core.Capture;

/// <summary>
/// How `trace --stacks` records a thread's user stack on Linux (perf record --call-graph): a copy of the stack that
/// TraceLab unwinds with the binaries' call frame information, or the kernel's walk of the frame pointers.
/// </summary>
public enum UserStackWalk
{
    /// <summary>
    /// `--call-graph dwarf`: registers and an 8 KB copy of the user stack, unwound offline with .eh_frame; whole on
    /// code built without frame pointers (Debian's), ~8.4 KB a stack.
    /// </summary>
    Dwarf,

    /// <summary>
    /// `--call-graph fp`: the kernel follows the frame pointers; ~100–200 bytes a stack, whole only through code
    /// built with frame pointers (Fedora, Ubuntu 24.04 and later, -fno-omit-frame-pointer), cut short elsewhere.
    /// </summary>
    FramePointer,
}
