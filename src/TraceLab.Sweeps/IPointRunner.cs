namespace TraceLab.Sweeps;

/// <summary>
/// Runs one point once, writing its files into <c>runDirectory</c>; throws on failure (the sweep records it and goes
/// on).
/// </summary>
public interface IPointRunner
{
    Task<SweepRunRecord> RunAsync(
        SweepPoint point, int repeat, string runDirectory, CancellationToken cancellationToken);
}
