"""COCO's presence read once per build where ``--coco-rem`` and ``--verify-absence-with`` name the same file.

Why: in the paper's setup the file that verifies SVG's absences (:mod:`sources.absence`) is COCO's instances
file, the one the COCO source reads. Verification used to read it a second time: a COCO-train-sized file parsed
again and its 860,000 annotations walked again, about 5 s of CPU, in the process that prepares SVG, which is the
last to finish in a cold paper-scale build. Now the COCO reader hands over what it read
(:func:`sources.absence.presence_of`, equal to what :func:`sources.absence.read_coco_presence` reads from the same
file): in memory where one process reads both, through a file in the scratch folder of
:mod:`builders.mioh.source_workers` where each source has a process of its own. Where none comes (COCO's reading
failed before it got that far; the files differ), verification reads the file itself, as before, and fails the way
it always did.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

from builders.mioh.config import MiohConfig
from sources.absence import CocoPresence
from sources.atomic import write_atomic

FILE = "coco-presence.pkl"
"""The hand-off's file name in the scratch folder."""

POLL_S = 0.05
"""How often a waiting reader looks for the hand-off."""


def same_file(a: str | None, b: str | None) -> bool:
    """Whether two paths name one existing file (a missing one is reported by the reader that needs it)."""
    try:
        return bool(a and b) and os.path.samefile(a, b)  # type: ignore[arg-type]
    except OSError:
        return False


class SharedPresence:
    """The presence of ``path`` (the file both options name; ``None``: nothing to share), given by the COCO
    reader and taken by absence verification.

    In one process :meth:`give` keeps it for :meth:`take`. Across forked children (:meth:`across`) it is
    written to the scratch folder, and :meth:`take` waits for it until the COCO child is seen to have finished
    reading (its ``k.read`` or ``k.error`` marker, written after :meth:`give`) or the process that forked them
    is gone."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._held: CocoPresence | None = None
        self._folder: Path | None = None
        self._giver: int | None = None
        self._parent: int | None = None

    @classmethod
    def of(cls, config: MiohConfig) -> SharedPresence:
        """What ``config``'s sources can share: COCO-ReM's file when SVG's absences are verified with it."""
        shared = config.svg and same_file(config.coco_rem, config.verify_absence_with)
        return cls(config.coco_rem if shared else None)

    def across(self, folder: Path, giver: int) -> None:
        """From now on the presence travels through ``folder``, given by the child numbered ``giver``."""
        self._folder, self._giver, self._parent = folder, giver, os.getpid()

    def give(self, presence: CocoPresence) -> None:
        self._held = presence
        if self._folder is not None:
            try:
                write_atomic(self._folder / FILE, pickle.dumps(presence, protocol=pickle.HIGHEST_PROTOCOL))
            except OSError:  # a full disk: the taker reads the file itself
                pass

    def take(self) -> CocoPresence | None:
        """The presence given, waiting for it across processes; ``None`` when none will come."""
        if self._held is not None or self._folder is None:
            return self._held
        folder, giver, file = self._folder, self._giver, self._folder / FILE
        while True:
            done = (folder / f"{giver}.read").exists() or (folder / f"{giver}.error").exists()
            if file.exists():  # written before the giver's markers: looked for after them
                self._held = pickle.loads(file.read_bytes())
                return self._held
            if done or os.getppid() != self._parent:
                return None
            time.sleep(POLL_S)
