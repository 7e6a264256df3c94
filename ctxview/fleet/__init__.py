"""The fleet: every request of many sessions as a Parquet dataset (``ctxview scan``), and the
questions a team asks of it answered with DuckDB (``ctxview report DIR``). docs/fleet.md.

Below the views and beside the live sources: it reads session files through
``ctxview.sessions`` and writes plain Parquet; it imports neither Textual nor an SDK.

* :mod:`~ctxview.fleet.schema`: the tables' columns and the schema's version;
* :mod:`~ctxview.fleet.rows`: one file -> Arrow record batches (the library call an engine runs
  across a cluster);
* :mod:`~ctxview.fleet.files`: which files a scan reads, and the shards;
* :mod:`~ctxview.fleet.manifest`: what a scan read (size, mtime, a hash of the head);
* :mod:`~ctxview.fleet.dataset`: the atomic writes of the Parquet files;
* :mod:`~ctxview.fleet.scan`: the incremental scan over a process pool;
* :mod:`~ctxview.fleet.query`: DuckDB over the dataset, the SQL of ``sql/``.
"""
