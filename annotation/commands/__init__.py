"""The subcommands of ``mirage review`` (``python -m annotation``), one module a job: :mod:`.serve` (serve,
restart-room), :mod:`.push`, :mod:`.pull`, :mod:`.author`; what they share (the server and project options, the
clients) in :mod:`.server`. The parser that puts them together is :mod:`annotation.cli`."""
