"""Frame sampling of many videos on an executor (this process, or a Ray cluster): a map of
:func:`sources.video.sample_video` over videos.

Choices, and why:

* **Workers write the frames through a shared path.** Each task samples one video into
  ``<cache_dir>/frames/<sha256>/<decoder>/<policy>/`` exactly as :func:`sample_video` does locally (temporary
  folder, then rename, so two workers sampling the same content cannot leave a half folder) and returns the
  :class:`SampledVideo`, paths only. The videos must be readable from every node anyway, so the cache dir is put
  on the same shared file system (NFS, a mounted bucket); shipping every PNG back through the driver would make
  the driver the bottleneck of a stage that exists to spread I/O. A rerun, local or on Ray, finds the frames by
  content.
* **Errors are values on the worker and exceptions on the driver**: a video the policy leaves out, or an
  unreadable one with ``on_error="skip"``, comes back as :class:`VideoSkipped` with the same reason as locally;
  with ``on_error="fail"`` the driver raises the same one-line :class:`SourceError` for the first failing video in
  input order (videos after it may have been sampled on the cluster meanwhile: their frames are simply cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import SourceError
from .video import OnError, Policy, SampledVideo, VideoLike, VideoSkipped, sample_video

__all__ = ["VideoJob", "sample_videos"]


@dataclass(frozen=True)
class VideoJob:
    """One video to sample: the arguments of :func:`sample_video`."""

    video: VideoLike
    policy: Policy | str
    cache_dir: str | Path | None
    backend: str = "auto"
    on_error: OnError = "skip"

    def run(self) -> SampledVideo:
        return sample_video(self.video, self.policy, self.cache_dir, backend=self.backend, on_error=self.on_error)


@dataclass(frozen=True)
class _Failed:
    """A :class:`VideoSkipped` or :class:`SourceError` as plain fields (exceptions lose theirs in pickling)."""

    kind: str
    file: str
    record: str
    reason: str

    def exception(self) -> Exception:
        if self.kind == "error":
            return SourceError(self.file, self.record, self.reason)
        return VideoSkipped(self.reason, self.file)


def _sample_job(job: VideoJob) -> SampledVideo | _Failed:
    """The task body: sample one video; failures a user can act on are returned, not raised."""
    try:
        return job.run()
    except VideoSkipped as e:
        return _Failed("skipped", e.file, "", e.reason)
    except SourceError as e:
        return _Failed("error", e.file, e.record, e.problem)


def sample_videos(
    jobs: Sequence[VideoJob], executor: Any = None, on_progress: Callable[[int, int], None] | None = None
) -> list[SampledVideo | VideoSkipped]:
    """Sample every job on ``executor`` (``None``: in this process); one result per job, in order: the frames,
    or the :class:`VideoSkipped` that left the video out. Raises :class:`SourceError` (the first in input order)
    when a job with ``on_error="fail"`` met an unreadable video."""
    if getattr(executor, "name", "local") == "local":  # today's loop: an unreadable video stops it at once
        out: list[SampledVideo | VideoSkipped] = []
        for done, job in enumerate(jobs, 1):
            try:
                out.append(job.run())
            except VideoSkipped as e:
                out.append(e)
            if on_progress is not None:
                on_progress(done, len(jobs))
        return out
    results = executor.map(_sample_job, list(jobs), on_progress)
    for r in results:
        if isinstance(r, _Failed) and r.kind == "error":
            raise r.exception()
    return [r.exception() if isinstance(r, _Failed) else r for r in results]  # type: ignore[misc]
