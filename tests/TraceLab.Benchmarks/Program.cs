using BenchmarkDotNet.Running;
using TraceLab.Benchmarks;

// dotnet run -c Release --project tests/TraceLab.Benchmarks [-- --filter *]   (TRACELAB_BENCH_TRACE=path for another trace)
BenchmarkSwitcher.FromAssembly(typeof(HotPathBenchmarks).Assembly).Run(args);
