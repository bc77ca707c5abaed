namespace TraceLab.Cli;

public static class ExitCodes
{
    public const int Ok = 0;
    /// <summary>Runtime failure: tracing unavailable, workload failed, corrupt trace, I/O error.</summary>
    public const int Failure = 1;
    /// <summary>Bad command line: unknown workload/scenario/parameter, out-of-range value, existing output.</summary>
    public const int Usage = 2;
    /// <summary>Interrupted by Ctrl-C / SIGTERM, or SIGHUP for sweep and claims --run (partial results kept).</summary>
    public const int Interrupted = 130;
}
