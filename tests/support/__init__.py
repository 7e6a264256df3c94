"""Helpers the tests share: fakes, generators, paths. No test module imports another."""
