"""Named, seeded random generators: the only source of randomness in builders.

Each stage asks for its own generator by name (``rng(seed, "mioh/counting/selective")``), so adding a stage or
drawing more numbers in one place never shifts the draws of another, and a build is reproducible from its seed.
"""

from __future__ import annotations

import hashlib

import numpy as np


def rng(seed: int, name: str) -> np.random.Generator:
    """A generator determined by ``seed`` and ``name`` alone."""
    digest = hashlib.sha256(f"{int(seed)}\x00{name}".encode("utf-8")).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence(words))
