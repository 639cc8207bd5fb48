"""The ``mirage`` command: one entry to every job, each run by the module that owns it (:mod:`mirage.cli`)."""
