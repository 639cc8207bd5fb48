"""ActivityNet Captions (Krishna et al., 2017): YouTube videos with captioned, time-stamped segments.

File, as the release ships it (``train.json``, ``val_1.json``, ``val_2.json``): one JSON object, video id ->
``{"duration": seconds, "timestamps": [[start, end], ...], "sentences": [...]}``, one sentence per timestamp.
Sentences often carry a leading space (stripped here); some timestamps run past ``duration`` (their end is
clamped to it; a segment that *starts* at or past the end is dropped and counted in ``meta["dropped"]``).
Videos are ``<videos_dir>/<video id>.<ext>`` (``v_QOlSCBRmfWY.mp4``; any suffix of
:data:`sources.video.VIDEO_SUFFIXES`, also without the ``v_`` prefix, as some downloaders write them). A
video not downloaded is not an error (YouTube videos disappear): the record's ``file`` is empty and the builder
skips it with the reason.

:func:`read_activitynet` returns one :class:`VideoRecord` per video, sorted by id, with the segments in time
order (start, then end) in ``meta["segments"]`` (``{"start", "end", "sentence"}``).
"""

from __future__ import annotations

from pathlib import Path

from .errors import SourceError
from .jsonio import load_json
from .validate import expect_dict, expect_list, is_number, require_key
from .records import VideoRecord
from .video import natural_key
from .video_backends import video_files_by_stem

SOURCE = "activitynet"
LICENSE = "ActivityNet Captions: see https://cs.stanford.edu/people/ranjaykrishna/densevid/ (YouTube videos)"


def read_activitynet(json_path: str | Path, videos_dir: str | Path) -> list[VideoRecord]:
    """Records of every video of an ActivityNet Captions file; see the module docstring."""
    data = load_json(json_path, "ActivityNet Captions file")
    path = Path(json_path)
    if not isinstance(data, dict) or not data:
        raise SourceError(path, "", "expected a non-empty object mapping video id to its captions")
    files = video_files_by_stem(videos_dir)
    records = []
    for video_id, entry in data.items():
        where = f"video {video_id}"
        entry = expect_dict(entry, path, where, "entry")
        duration = require_key(entry, "duration", path, where)
        if not is_number(duration) or duration <= 0:
            raise SourceError(path, where, f"'duration' must be a positive number, got {duration!r}")
        stamps = expect_list(require_key(entry, "timestamps", path, where), path, where, "timestamps")
        sentences = expect_list(require_key(entry, "sentences", path, where), path, where, "sentences")
        if len(stamps) != len(sentences):
            raise SourceError(path, where, f"{len(stamps)} timestamps but {len(sentences)} sentences")
        segments, dropped = [], 0
        for k, (stamp, sentence) in enumerate(zip(stamps, sentences)):
            at = f"{where} timestamps[{k}]"
            if not (isinstance(stamp, list) and len(stamp) == 2 and all(is_number(t) for t in stamp)):
                raise SourceError(path, at, f"expected [start, end] in seconds, got {stamp!r}")
            start, end = float(stamp[0]), float(stamp[1])
            if start < 0 or end < start:
                raise SourceError(path, at, f"[{start:g}, {end:g}] is not a time span (0 <= start <= end)")
            if not isinstance(sentence, str) or not sentence.strip():
                raise SourceError(path, f"{where} sentences[{k}]", f"expected a non-empty sentence, got {sentence!r}")
            if start >= duration:
                dropped += 1
                continue
            segments.append({"start": start, "end": min(end, float(duration)), "sentence": sentence.strip()})
        segments.sort(key=lambda s: (s["start"], s["end"]))
        file = files.get(video_id) or files.get(video_id.removeprefix("v_"))
        records.append(VideoRecord(id=video_id, source=SOURCE, file=str(file) if file else "", fps=None,
                                   meta={"duration": float(duration), "segments": segments, "dropped": dropped}))
    return sorted(records, key=lambda r: natural_key(r.id))
