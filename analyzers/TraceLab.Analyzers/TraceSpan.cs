using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers;

/// <summary>The earliest and latest timestamps seen in a pass.</summary>
internal struct TraceSpan
{
    public long First = long.MaxValue;
    public long Last = long.MinValue;

    public TraceSpan()
    {
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void See(long t)
    {
        if (t < First) First = t;
        if (t > Last) Last = t;
    }
}
