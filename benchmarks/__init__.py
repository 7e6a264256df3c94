"""ctxview's benchmarks: ``python -m benchmarks`` runs them and prints each figure beside its
target (``benchmarks/README.md``). Not part of the test suite: timings on a shared machine are
figures to read, not assertions."""
