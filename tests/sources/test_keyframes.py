"""The predictive keyframe policies (sources/keyframes.py) against frame indices worked out by hand."""

from __future__ import annotations

import pytest

from sources.keyframes import BeforeCut, Fractions, TimeSpans
from sources.video import VideoSkipped


def test_time_spans_centres_and_middle_frames() -> None:
    # 10 fps, spans [0, 4) and [4, 8): 2 per span at 1 s, 3 s and 5 s, 7 s -> frames 10, 30, 50, 70
    policy = TimeSpans(((0.0, 4.0), (4.0, 8.0)), 2)
    assert policy.groups(100, 10.0) == [[10, 30], [50, 70]]
    assert policy.indices(100, 10.0) == [10, 30, 50, 70]
    assert TimeSpans(((2.0, 3.0),), 1).indices(100, 10.0) == [25]  # the middle frame
    assert TimeSpans(((8.0, 30.0),), 1).indices(100, 10.0) == [99]  # a span past the end is clamped
    assert TimeSpans(((0.0, 4.0),), 2).name != TimeSpans(((0.0, 4.5),), 2).name


def test_before_cut_ends_on_the_frame_before_the_action() -> None:
    # 5 fps, cut at 6 s: frame 30 is the action's first, context frames 0..29, five evenly spaced
    assert BeforeCut(6.0, 5).indices(50, 5.0) == [0, 7, 15, 22, 29]
    with pytest.raises(VideoSkipped, match="only 0 frames before the cut"):
        BeforeCut(0.0, 5).indices(50, 5.0)
    with pytest.raises(VideoSkipped, match="frame rate is unknown"):
        BeforeCut(6.0, 5).indices(50, None)


def test_fractions_pick_middle_and_last() -> None:
    assert Fractions((0.5, 1.0)).indices(20) == [9, 19]
    assert Fractions((1.0,)).indices(12) == [11]
    with pytest.raises(VideoSkipped):
        Fractions((0.5, 1.0)).indices(1)
