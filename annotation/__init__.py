"""Three-reviewer validation of a build in Label Studio: ``python -m annotation serve|push|pull``.

- :mod:`annotation.serve` starts a local Label Studio for a team (its own virtualenv, pinned version);
- :mod:`annotation.push` creates or reuses a project and imports, idempotently by item id, the build's items;
- :mod:`annotation.pull` exports every annotation (kept raw), resolves and writes ``review.json`` +
  ``reviewed.jsonl`` beside the build;
- :mod:`annotation.resolve` holds the pure rules: validation, majority of three, Fleiss' kappa, agreement;
- :mod:`annotation.config` the labeling config and task data; :mod:`annotation.client` the REST client.

The reviewer guide and the maintainer's loop are in ``docs/annotation.md``.
"""
