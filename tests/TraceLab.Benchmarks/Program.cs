using BenchmarkDotNet.Running;
using TraceLab.Benchmarks;

// dotnet run -c Release --project tests/TraceLab.Benchmarks [-- --filter *] (TRACELAB_BENCH_TRACE=path for another
// trace) dotnet run -c Release --project tests/TraceLab.Benchmarks -- harness [--events N] [--rounds R] touch threads
// waitgraph
if (args is ["harness", .. var rest]) return AnalysisHarness.Run(rest);
BenchmarkSwitcher.FromAssembly(typeof(HotPathBenchmarks).Assembly).Run(args);
return 0;
