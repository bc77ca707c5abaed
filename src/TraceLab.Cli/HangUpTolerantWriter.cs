using System.Text;

namespace TraceLab.Cli;

/// <summary>
/// Standard output or error that outlives its terminal. Once the terminal is closed every write to it fails with
/// EIO, which .NET throws as an IOException — from the progress bar's own thread too, where it ends the process
/// before a stopped `claims --run` or sweep can write its report. Output that cannot be written is dropped instead:
/// nobody is left to read it (a broken pipe is already ignored by .NET the same way).
/// </summary>
internal sealed class HangUpTolerantWriter : TextWriter
{
    private readonly TextWriter _inner;
    private volatile bool _gone;

    private HangUpTolerantWriter(TextWriter inner) => _inner = inner;

    /// <summary>In front of Console.Out and Console.Error; call before any console is created.</summary>
    public static void Install()
    {
        Console.SetOut(new HangUpTolerantWriter(Console.Out));
        Console.SetError(new HangUpTolerantWriter(Console.Error));
    }

    public override Encoding Encoding => _inner.Encoding;

    public override void Write(char value) => Try(w => w.Write(value));

    public override void Write(string? value) => Try(w => w.Write(value));

    public override void Write(char[] buffer, int index, int count) => Try(w => w.Write(buffer, index, count));

    public override void Flush() => Try(w => w.Flush());

    private void Try(Action<TextWriter> write)
    {
        if (_gone) return;
        try
        {
            write(_inner);
        }
        catch (IOException)
        {
            _gone = true;
        }
    }
}
