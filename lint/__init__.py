"""``python -m lint PATH``: the lint command (issue 16).

The checks live in :mod:`builders.lint` (the builders layer, so every build runs them); this package only wires
the command, at the bottom of the layer order because it reads releases and Hub repos through
``scoring.releases.load_items`` and published files through :mod:`builders.imports`. See docs/architecture.md.
"""
