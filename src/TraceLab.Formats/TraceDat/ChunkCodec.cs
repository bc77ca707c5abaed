using System.IO.Compression;
using TraceLab.Core;
using ZstdSharp;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// The compression algorithm named in a v7 file header. trace-cmd compresses every block whole (zlib's compress2 and
/// ZSTD_compressCCtx), so a block is one zlib stream (RFC 1950: 2-byte header, deflate, Adler-32) or one zstd frame,
/// and the header next to it declares the decompressed size. Decompression writes into a buffer of exactly that size
/// and fails on anything else, which caps a decompression bomb at the declared (and separately limited) size.
/// </summary>
internal abstract class ChunkCodec : IDisposable
{
    /// <summary>The codec for the file header's algorithm name; null for "none".</summary>
    /// <exception cref="TraceFormatException">An algorithm this reader does not have.</exception>
    public static ChunkCodec? For(string name, string file, long at) => name switch
    {
        "none" => null,
        "zlib" => new ZlibCodec(),
        "zstd" => new ZstdCodec(),
        _ => throw new TraceFormatException(file, at, $"compression 'zlib', 'zstd' or 'none', found '{name}'"),
    };

    public abstract string Name { get; }

    /// <summary>
    /// Decompresses <paramref name="source"/> into all of <paramref name="target"/>, no more, no less.
    /// </summary>
    /// <exception cref="TraceFormatException">
    /// Corrupt data, or data that does not decompress to the target's size.
    /// </exception>
    public void Decompress(ReadOnlySpan<byte> source, Span<byte> target, string file, long at, string what)
    {
        int produced;
        bool more;
        try
        {
            produced = Run(source, target, out more);
        }
        catch (Exception e) when (e is InvalidDataException or ZstdException or IOException)
        {
            throw new TraceFormatException(file, at, $"{Name}-compressed {what} that decompresses ({e.Message})");
        }

        if (produced != target.Length || more)
            throw new TraceFormatException(file, at,
                $"{what} that decompresses to its declared {target.Length} bytes, found " +
                (more ? "more" : $"{produced}"));
    }

    /// <summary>Returns the bytes written; <paramref name="more"/> is set when the data would produce more.</summary>
    protected abstract int Run(ReadOnlySpan<byte> source, Span<byte> target, out bool more);

    public virtual void Dispose() { }

    private sealed class ZlibCodec : ChunkCodec
    {
        public override string Name => "zlib";

        protected override unsafe int Run(ReadOnlySpan<byte> source, Span<byte> target, out bool more)
        {
            more = false;
            // An empty stream decompresses to nothing (and would give UnmanagedMemoryStream a null pointer).
            if (source.IsEmpty) return 0;
            fixed (byte* p = source)
            {
                using var input = new UnmanagedMemoryStream(p, source.Length);
                using var zlib = new ZLibStream(input, CompressionMode.Decompress);
                var done = 0;
                while (done < target.Length)
                {
                    var n = zlib.Read(target[done..]);
                    if (n == 0) break;
                    done += n;
                }

                Span<byte> probe = stackalloc byte[1];
                more = done == target.Length && zlib.Read(probe) > 0;
                return done;
            }
        }
    }

    private sealed class ZstdCodec : ChunkCodec
    {
        private readonly Decompressor _decompressor = new();

        public override string Name => "zstd";

        protected override int Run(ReadOnlySpan<byte> source, Span<byte> target, out bool more)
        {
            // TryUnwrap refuses (false) rather than overrunning a target too small for the frame.
            more = !_decompressor.TryUnwrap(source, target, out var written);
            return written;
        }

        public override void Dispose()
        {
            _decompressor.Dispose();
            base.Dispose();
        }
    }
}
