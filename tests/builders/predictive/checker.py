"""Independent checker of predictive builds: re-derives every pattern from its parameters and checks the pixels.

Imports no builder code. For each generated ``abstract_pattern`` item it

1. re-derives the state of image ``k = 0..n`` (``n`` the held-out next image) from ``provenance.params`` with its
   own formulas, written from the rule each scenario states (``start + step * k`` and so on);
2. checks the drawn images against those states: where icons are (positions), how many there are (counts), how
   they are turned relative to the first image (angles, by rotating the first image's mask and comparing), their
   colours, sizes, which icon is shown, the digits of seven-segment displays and the cells of Snake and Tetris;
3. checks that ``pred`` (the item's answer) names the derived next state and ``pattern`` the shown states in order.

Demo activity and physics items are checked against the demo video script (``held_out_events``): the held-out
event starts after every context frame, and the reference names the collision's two shapes.

``check_build(build_dir) -> list[str]`` returns problems (empty when the build is right).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
from PIL import Image

from tests.builders.shown_checker import ShownChecker, events_of, sentences

WHITE = (255, 255, 255)
GRID_GREY = (215, 215, 215)
MOVES = {"right": (1, 0), "left": (-1, 0), "up": (0, -1), "down": (0, 1), "up and to the right": (1, -1),
         "up and to the left": (-1, -1), "down and to the right": (1, 1), "down and to the left": (-1, 1)}
COMPASS = ["top", "top-right", "right", "bottom-right", "bottom", "bottom-left", "left", "top-left"]
SEVEN = {"0": "abcdef", "1": "bc", "2": "abdeg", "3": "abcdg", "4": "bcfg", "5": "acdfg", "6": "acdefg",
         "7": "abc", "8": "abcdefg", "9": "abcdfg"}
MIN_IOU = 0.7


# ------------------------------------------------------------------------------------------- pixels helpers


def load(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB")).astype(np.int16)


def foreground(img: np.ndarray) -> np.ndarray:
    white = (img == WHITE).all(-1)
    grey = (img == GRID_GREY).all(-1)
    return ~(white | grey)


def box_mask(shape: tuple[int, ...], cx: float, cy: float, half: float) -> np.ndarray:
    ys, xs = np.mgrid[0:shape[0], 0:shape[1]]
    return (np.abs(xs + 0.5 - cx) <= half) & (np.abs(ys + 0.5 - cy) <= half)


def check_sprites(img: np.ndarray, sprites: list[tuple[float, float, float, bool]], where: str,
                  mask: np.ndarray | None = None) -> list[str]:
    """Each ``(cx, cy, size, turned)`` sprite has drawn pixels centred near ``(cx, cy)``; nothing is drawn
    outside the sprites' boxes."""
    fg = foreground(img) if mask is None else mask
    problems, covered = [], np.zeros(fg.shape, bool)
    for cx, cy, size, turned in sprites:
        half = size * (math.sqrt(2) / 2 if turned else 0.5) + 2
        inside = fg & box_mask(fg.shape, cx, cy, half)
        covered |= box_mask(fg.shape, cx, cy, half)
        if not inside.any():
            problems.append(f"{where}: nothing drawn at ({cx:.0f}, {cy:.0f})")
            continue
        ys, xs = np.nonzero(inside)
        bx, by = (xs.min() + xs.max() + 1) / 2, (ys.min() + ys.max() + 1) / 2
        tolerance = (0.25 if turned else 0.1) * size + 2  # a turned icon's pixel box drifts from its centre
        if abs(bx - cx) > tolerance or abs(by - cy) > tolerance:
            problems.append(f"{where}: icon centred at ({bx:.0f}, {by:.0f}), expected ({cx:.0f}, {cy:.0f})")
    if (fg & ~covered).any():
        ys, xs = np.nonzero(fg & ~covered)
        problems.append(f"{where}: {len(xs)} pixels drawn where no icon should be (e.g. {xs[0]}, {ys[0]})")
    return problems


def rotated_iou(first: np.ndarray, later: np.ndarray, cx: float, cy: float, half: int, clockwise: float,
                mirror: bool = False) -> float:
    """IoU of ``later``'s mask near ``(cx, cy)`` with ``first``'s turned ``clockwise`` degrees (or mirrored)."""
    x0, y0 = int(round(cx)) - half, int(round(cy)) - half
    a = first[max(0, y0): y0 + 2 * half, max(0, x0): x0 + 2 * half]
    b = later[max(0, y0): y0 + 2 * half, max(0, x0): x0 + 2 * half]
    img = Image.fromarray(a.astype(np.uint8) * 255)
    img = img.transpose(Image.FLIP_LEFT_RIGHT) if mirror else img.rotate(-clockwise, resample=Image.NEAREST)
    turned = np.asarray(img) > 0
    union = (turned | b).sum()
    return float((turned & b).sum() / union) if union else 0.0


def in_order(text: str, tokens: list[str]) -> bool:
    pos = 0
    for t in tokens:
        found = text.find(t, pos)
        if found < 0:
            return False
        pos = found + len(t)
    return True


# ------------------------------------------------------------------------------------------ derivations


def cell_centre(board: dict[str, int], col: int, row: int) -> tuple[float, float]:
    return board["x0"] + col * board["cell"] + board["cell"] / 2, board["y0"] + row * board["cell"] + board["cell"] / 2


def on_circle(station: int, radius: float, centre: float) -> tuple[float, float]:
    t = math.radians(45 * (station % 8))
    return round(centre + radius * math.sin(t), 1), round(centre - radius * math.cos(t), 1)


def rc(col: int, row: int) -> str:
    return f"row {row + 1}, column {col + 1}"


def single_angles(scenario: str, p: dict[str, Any], n: int) -> list[float]:
    a0 = p["start_angle"]
    sign = -1 if p.get("turn") == "counterclockwise" else 1
    if scenario in ("rotation/clockwise", "rotation/counterclockwise", "rotation/half_turn", "rotation/row"):
        return [a0 + sign * p["step"] * k for k in range(n + 1)]
    if scenario == "rotation/accelerating":
        return [a0 + sign * p["step"] * k * (k + 1) / 2 for k in range(n + 1)]
    if scenario == "rotation/decelerating":
        return [a0 + sign * p["step"] * sum(n - j for j in range(k)) for k in range(n + 1)]
    raise KeyError(scenario)


def seven_segment_boxes(text: str, p: dict[str, Any], width: int, height: int) -> dict[tuple[int, int], bool]:
    """Centre pixel of every segment of the display -> lit or not."""
    w, h, t, gap = p["digit"]
    total = sum((t if ch == ":" else w) + gap for ch in text) - gap
    x, y0 = (width - total) // 2, (height - h) // 2
    out: dict[tuple[int, int], bool] = {}
    for ch in text:
        if ch == ":":
            out[(x + t // 2, y0 + h // 3)] = True
            x += t + gap
            continue
        mid = y0 + (h - t) // 2
        segs = {"a": (x + w // 2, y0 + t // 2), "d": (x + w // 2, y0 + h - 1 - t // 2), "g": (x + w // 2, mid + t // 2),
                "f": (x + t // 2, (y0 + t + mid) // 2), "b": (x + w - 1 - t // 2, (y0 + t + mid) // 2),
                "e": (x + t // 2, (mid + t + y0 + h - t) // 2), "c": (x + w - 1 - t // 2, (mid + t + y0 + h - t) // 2)}
        for s, xy in segs.items():
            out[xy] = s in SEVEN[ch]
        x += w + gap
    return out


def board_cells(p: dict[str, Any], scenario: str, n: int) -> list[dict[tuple[int, int], tuple[int, ...]]]:
    """Snake / Tetris: board square -> colour, for each image."""
    b = p["board"]
    out = []
    for k in range(n + 1):
        cells: dict[tuple[int, int], tuple[int, ...]] = {}
        if scenario == "games/snake":
            dx, dy = {"right": (1, 0), "left": (-1, 0), "up": (0, -1), "down": (0, 1)}[p["heading"]]
            size, start = (p["length"], k) if p["mode"] == "slides" else (p["length"] + k, 0)
            body = [(p["tail"][0] + dx * (start + j), p["tail"][1] + dy * (start + j)) for j in range(size)]
            for j, c in enumerate(body):
                cells[c] = tuple(p["head_rgb"] if j == size - 1 else p["body_rgb"])
        else:
            for c in range(b["cols"]):
                if c not in p["gaps"]:
                    cells[(c, b["rows"] - 1)] = tuple(p["floor_rgb"])
            for dc, dr in p["cells"]:
                cells[(p["column"] + dc, p["top"] + k + dr)] = tuple(p["rgb"])
        out.append(cells)
    return out


# ------------------------------------------------------------------------------------- per-scenario checks


def check_pattern(item: dict[str, Any], frames: list[np.ndarray]) -> list[str]:
    prov, p = item["provenance"], item["provenance"]["params"]
    s, n, pred, text = prov["scenario"], len(frames), item["answer"], prov["pattern"]
    width, height = prov["canvas"]
    bad: list[str] = []
    tag = f"{item['id']} ({s})"

    def expect_pred(*tokens: str) -> None:
        for t in tokens:
            if t not in pred:
                bad.append(f"{tag}: pred does not say {t!r}: {pred!r}")

    def expect_pattern(tokens: list[str]) -> None:
        if not in_order(text, tokens):
            bad.append(f"{tag}: pattern does not list {tokens} in order")

    if s in ("motion/uniform", "motion/variable", "motion/several"):
        board, size = p["board"], p["icon_size"]
        if s == "motion/uniform":
            dx, dy = MOVES[p["direction"]]
            tracks = [[(p["start"][0] + dx * p["step"] * k, p["start"][1] + dy * p["step"] * k) for k in range(n + 1)]]
        elif s == "motion/variable":
            steps = list(range(1, n + 1)) if p["mode"] == "speeds up" else list(range(n, 0, -1))
            dx = 1 if p["direction"] == "right" else -1
            tracks = [[(p["start"][0] + dx * sum(steps[:k]), p["start"][1]) for k in range(n + 1)]]
        else:
            tracks = [[(p["start"][0] + k, p["rows"][0]) for k in range(n + 1)],
                      [(p["start"][1] - k, p["rows"][1]) for k in range(n + 1)]]
        for k, img in enumerate(frames):
            bad += check_sprites(img, [(*cell_centre(board, *t[k]), size, False) for t in tracks], f"{tag} image {k}")
        if s == "motion/variable":
            expect_pred(f"column {tracks[0][n][0] + 1}")
            expect_pattern([str(t[0] + 1) for t in tracks[0][:n]])
        else:
            expect_pred(*[rc(*t[n]) for t in tracks])
            for t in tracks:
                expect_pattern([rc(*c) for c in t[:n]])
    elif s in ("motion/trajectory", "rotation/shadow", "rotation/revolution"):
        sign = -1 if p["turn"] == "counterclockwise" else 1
        step = p.get("step", 1)
        stations = [(p["start"] + sign * step * k) % 8 for k in range(n + 1)]
        for k, img in enumerate(frames):
            where = f"{tag} image {k}"
            if s == "motion/trajectory":
                bad += check_sprites(img, [(*on_circle(stations[k], p["radius"], p["centre"]), p["icon_size"], False)],
                                     where)
            elif s == "rotation/shadow":
                shade = (img == tuple(p["shadow_colour"])).all(-1)
                c = p["centre"]
                bad += check_sprites(img, [(*on_circle(stations[k], p["radius"], c), p["icon_size"], False)], where, shade)
                bad += check_sprites(img, [(c, c, p["icon_size"], False)], where, foreground(img) & ~shade)
            else:
                c = p["centre"]
                bad += check_sprites(img, [(c, c, p["sizes"][0], False),
                                           (*on_circle(stations[k], p["radius"], c), p["sizes"][1], True)], where)
                if k:
                    x, y = on_circle(stations[k], p["radius"], c)
                    x0, y0 = on_circle(stations[0], p["radius"], c)
                    moved = np.zeros_like(foreground(frames[0]))
                    half = int(p["sizes"][1] * 0.75)
                    src = foreground(frames[0])[int(y0) - half:int(y0) + half, int(x0) - half:int(x0) + half]
                    moved[int(y) - half:int(y) + half, int(x) - half:int(x) + half] = src
                    iou = rotated_iou(moved, foreground(img), int(x), int(y), half, 45 * (stations[k] - stations[0]))
                    if iou < MIN_IOU:
                        bad.append(f"{where}: the revolving icon is not turned with its orbit (IoU {iou:.2f})")
        expect_pred(COMPASS[stations[n]])
        expect_pattern([COMPASS[x] for x in stations[:n]])
        if s == "rotation/revolution":
            expect_pred(f"{45 * stations[n] % 360} degrees")
    elif s in ("rotation/clockwise", "rotation/counterclockwise", "rotation/half_turn", "rotation/accelerating",
               "rotation/decelerating", "rotation/row", "rotation/opposite_pair", "rotation/clock_hand"):
        if s == "rotation/opposite_pair":
            spots = [tuple(c) for c in p["centres"]]
            per = [[p["start_angle"] + p["step"] * k for k in range(n + 1)],
                   [p["start_angle"] - p["step"] * k for k in range(n + 1)]]
            size = p["icon_size"]
        elif s == "rotation/row":
            spots = [(x, p["y"]) for x in p["xs"]]
            per = [single_angles(s, p, n)] * 3
            size = p["icon_size"]
        elif s == "rotation/clock_hand":
            spots = [(p["centre"], p["centre"])]
            hours = [(p["start_hour"] + p["step_hours"] * k) % 12 for k in range(n + 1)]
            per = [[30 * h for h in hours]]
            size = p["icon_size"]
        else:
            spots = [(p["centre"], p["centre"])]
            per = [single_angles(s, p, n)]
            size = p["icon_size"]
        half = int(size * 0.75)
        first = foreground(frames[0])
        for k, img in enumerate(frames):
            where = f"{tag} image {k}"
            mask = foreground(img)
            if s == "rotation/clock_hand":
                ys, xs = np.mgrid[0:mask.shape[0], 0:mask.shape[1]]
                marks = np.hypot(xs + 0.5 - p["centre"], ys + 0.5 - p["centre"]) > p["dial_radius"] - p["mark"]
                ring = mask & marks
                if ring.sum() != 12 * p["mark"] ** 2:
                    bad.append(f"{where}: the dial does not have its twelve marks")
                mask = mask & ~marks
            else:
                bad += check_sprites(img, [(x, y, size, True) for x, y in spots], where)
            for (x, y), angles in zip(spots, per):
                if k and (iou := rotated_iou(first, mask, x, y, half, angles[k] - angles[0])) < MIN_IOU:
                    bad.append(f"{where}: icon at ({x}, {y}) is not turned {angles[k] - angles[0]:g} degrees from "
                               f"the first image (IoU {iou:.2f})")
        if s == "rotation/clock_hand":
            expect_pred(f"{hours[n] or 12} o'clock")
            expect_pattern([f"{h or 12}" for h in hours[:n]])
        else:
            for angles in per[:2]:
                expect_pred(f"{int(angles[n]) % 360} degrees")
                expect_pattern([str(int(a) % 360) for a in angles[:n]])
    elif s == "rotation/flip":
        states = [(int(p["start_mirrored"]) + k) % 2 == 1 for k in range(n + 1)]
        first = foreground(frames[0])
        c, half = p["centre"], int(p["icon_size"] * 0.55)
        for k, img in enumerate(frames):
            bad += check_sprites(img, [(c, c, p["icon_size"], False)], f"{tag} image {k}")
            flipped = states[k] != states[0]
            iou = rotated_iou(first, foreground(img), c, c, half, 0, mirror=flipped)
            if iou < MIN_IOU:
                bad.append(f"{tag} image {k}: icon is not {'mirrored' if flipped else 'as in image 0'} (IoU {iou:.2f})")
        expect_pred("mirrored" if states[n] else "as drawn")
        expect_pattern(["mirrored" if m else "as drawn" for m in states[:n]])
    elif s.startswith("quantity/"):
        if s in ("quantity/increase", "quantity/decrease"):
            counts = [p["start"] + p["step"] * k for k in range(n + 1)]
        elif s == "quantity/doubling":
            counts = [p["start"] * 2 ** k for k in range(n + 1)]
        else:
            counts = [p["start"] // 2 ** k for k in range(n + 1)]
        slots = p["slots"]
        for k, img in enumerate(frames):
            spots = [(*cell_centre(slots, i % slots["cols"], i // slots["cols"]), p["icon_size"], False)
                     for i in range(counts[k])]
            bad += check_sprites(img, spots, f"{tag} image {k}")
        expect_pred(f"there will be {counts[n]} ")
        expect_pattern([str(c) for c in counts[:n]])
    elif s == "properties/colour_cycle":
        cycle = [p["cycle"][k % len(p["cycle"])] for k in range(n + 1)]
        for k, img in enumerate(frames):
            colours = {tuple(v) for v in img[foreground(img)]}
            if colours != {tuple(p["rgb"][cycle[k]])}:
                bad.append(f"{tag} image {k}: colours {sorted(colours)[:3]}, expected only {cycle[k]}")
        expect_pred(f"will be {cycle[n]}")
        expect_pattern(cycle[:n])
    elif s == "properties/shape_cycle":
        names = [p["icons"][k % len(p["icons"])] for k in range(n + 1)]
        for j in range(n):
            for k in range(j + 1, n):
                same = bool((frames[j] == frames[k]).all())
                if same != (names[j] == names[k]):
                    bad.append(f"{tag}: images {j} and {k} {'differ' if not same else 'are equal'} but show "
                               f"{names[j]} and {names[k]}")
        expect_pred(f" {names[n]}.")
        expect_pattern(names[:n])
    elif s == "properties/size":
        sizes = [p["start"] + p["step"] * k for k in range(n + 1)]
        widths = []
        for k, img in enumerate(frames):
            bad += check_sprites(img, [(p["centre"], p["centre"], sizes[k], False)], f"{tag} image {k}")
            ys, xs = np.nonzero(foreground(img))
            widths.append(max(xs.max() - xs.min() + 1, ys.max() - ys.min() + 1))
        for k in range(1, n):
            expected = widths[0] * sizes[k] / sizes[0]
            if abs(widths[k] - expected) > 0.06 * expected + 3:  # nearest-neighbour rounding at small sizes
                bad.append(f"{tag} image {k}: drawn {widths[k]} px wide against {widths[0]} in image 0, expected the "
                           f"ratio {sizes[k]}/{sizes[0]}")
        expect_pred(f"{sizes[n]} pixels")
        expect_pattern([str(x) for x in sizes[:n]])
    elif s in ("properties/numbers", "games/digital_clock"):
        if s == "games/digital_clock":
            shown = [f"{(p['start_minutes'] + p['step_minutes'] * k) % 1440 // 60:02d}:"
                     f"{(p['start_minutes'] + p['step_minutes'] * k) % 60:02d}" for k in range(n + 1)]
        elif p["kind"] == "doubles":
            shown = [str(p["start"] * 2 ** k) for k in range(n + 1)]
        else:
            sign = 1 if p["kind"] == "adds" else -1
            shown = [str(p["start"] + sign * p["step"] * k) for k in range(n + 1)]
        for k, img in enumerate(frames):
            for (x, y), lit in seven_segment_boxes(shown[k], p, width, height).items():
                colour = tuple(img[y, x])
                if colour != (tuple(p["rgb"]) if lit else WHITE):
                    bad.append(f"{tag} image {k}: segment at ({x}, {y}) of {shown[k]!r} is "
                               f"{'dark' if lit else 'lit'}")
                    break
        expect_pred(shown[n])
        expect_pattern(shown[:n])
    elif s in ("games/snake", "games/tetris"):
        states = board_cells(p, s, n)
        b = p["board"]
        for k, img in enumerate(frames):
            for col in range(b["cols"]):
                for row in range(b["rows"]):
                    x, y = cell_centre(b, col, row)
                    want = states[k].get((col, row), WHITE)
                    if tuple(img[int(y), int(x)]) != tuple(want):
                        bad.append(f"{tag} image {k}: square {rc(col, row)} is {tuple(img[int(y), int(x)])}, "
                                   f"expected {want}")
        if s == "games/snake":
            head = [max(c, key=lambda q: c[q] == tuple(p["head_rgb"])) for k, c in enumerate(states)]
            expect_pred(rc(*head[n]), f"{len(states[n])}" if len(states[n]) > 9 else "")
            expect_pattern([rc(*h) for h in head[:n]])
        else:
            expect_pred(f"row {p['top'] + n + 1}", f"column {p['column'] + 1}")
            expect_pattern([f"{p['top'] + k + 1}" for k in range(n)])
    else:
        bad.append(f"{tag}: unknown scenario")
    return bad


def check_clip(item: dict[str, Any]) -> list[str]:
    prov, bad = item["provenance"], []
    held = prov["held_out_events"]
    start = min(e.get("frame", e.get("start")) for e in held)
    if max(prov["frame_indices"]) >= start:
        bad.append(f"{item['id']}: a context frame ({max(prov['frame_indices'])}) shows the held-out event "
                   f"(starts at {start})")
    if item["task"] == "physical_interaction":
        hit = held[0]
        if hit["action"] not in ("collides with", "stops short of", "passes") or hit["object"] not in item["answer"] \
                or hit["target"] not in item["answer"]:
            bad.append(f"{item['id']}: reference {item['answer']!r} does not name the interaction {hit}")
    return bad


def check_build(build_dir: str | Path, only: set[str] | None = None) -> list[str]:
    """Problems of the build's items (of the items with ids in ``only``, when given)."""
    build_dir = Path(build_dir)
    problems: list[str] = []
    for line in (build_dir / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        if only is not None and item["id"] not in only:
            continue
        prov = item["provenance"]
        if item["task"] == "abstract_pattern" and prov.get("source") == "generated":
            if item["answer"] != prov["pred"]:
                problems.append(f"{item['id']}: answer is not the pred text")
            frames = [load(build_dir / rel) for rel in item["images"]]
            if not 3 <= len(frames) <= 5:
                problems.append(f"{item['id']}: {len(frames)} images")
            problems += check_pattern(item, frames)
        elif item["task"] in ("human_activity", "physical_interaction"):
            problems += check_clip(item)
    return problems


def _touching(a: np.ndarray, b: np.ndarray) -> bool:
    """Two masks share a pixel or lie side by side (one pixel apart horizontally or vertically)."""
    return bool((a & b).any() or (a[:, :-1] & b[:, 1:]).any() or (a[:, 1:] & b[:, :-1]).any()
                or (a[:-1] & b[1:]).any() or (a[1:] & b[:-1]).any())


def check_clips_against_scripts(build_dir: str | Path, scripts: dict[str, dict[str, Any]],
                                frames: Callable[[str], Callable[[int], np.ndarray]]) -> list[str]:
    """Re-derive every demo clip item from its video's raw script (``{video id: meta}``) and decoded frames
    (``frames(video id)(t)``: RGB pixels of frame ``t``):

    * human activity: the held-out events start on one frame, after every context frame; the reference is their
      sentences, each showing (:mod:`tests.builders.shown_checker`) between the last context frame and the event's
      end (a collision: the end of the move that follows it); the context captions show in the context frames and
      at least one of them is an event, and no two consecutive context frames are mostly the same;
    * physical interaction: the context ends before the staged interaction, and a mover that stops short or passes
      never touches the other shape afterwards (the gold itself is re-derived from the context's pixels by
      :mod:`tests.builders.predictive.clip_checker`)."""
    problems = []
    for line in (Path(build_dir) / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item["task"] not in ("human_activity", "physical_interaction"):
            continue
        prov, meta = item["provenance"], scripts[item["provenance"]["video_id"]]
        frame = frames(prov["video_id"])
        context = prov["frame_indices"]
        captions = ShownChecker(meta, context, frame)
        for p in captions.problems(" ".join(prov["context_captions"])):
            problems.append(f"{item['id']}: context caption {p}")
        same = sum(np.array_equal(frame(a), frame(b)) for a, b in zip(context, context[1:]))
        if 2 * same > len(context) - 1:
            problems.append(f"{item['id']}: {same} of {len(context) - 1} consecutive context frames are the same")
        if item["task"] == "human_activity":
            events = [e for e in meta["events"] if not (e["action"] == "appears" and e["frame"] == 0)]
            if len(prov["context_captions"]) < 2:
                problems.append(f"{item['id']}: nothing moves in the context")
            held = prov["held_out_events"]
            cutoff = {e.get("frame", e.get("start")) for e in held}
            if len(cutoff) != 1 or any(e not in events for e in held):
                problems.append(f"{item['id']}: held-out events {held} are not script events of one frame")
                continue
            cut = cutoff.pop()
            for s in sentences(item["answer"]):
                e = next((x for x in events_of(s, meta) if x.get("frame", x.get("start")) == cut), None)
                if e is None:
                    problems.append(f"{item['id']}: {s!r} is no event starting at the cut {cut}")
                    continue
                if e["action"] == "collides with":
                    then = next((x for x in meta["events"] if x["action"] == "moves" and x["start"] == cut
                                 and x["object"] in (e["object"], e["target"])), None)
                    e = then or e
                end = e.get("end", e.get("frame"))
                after = ShownChecker(meta, sorted({cut - 1, (cut + end) // 2, end}), frame)
                if not after.shows(e):
                    problems.append(f"{item['id']}: {s!r} does not show after the cut")
        else:
            staged = meta["interaction"]
            mover, other, t = staged["object"], staged["target"], staged["frame"]
            if staged["outcome"] in ("stops short", "passes"):
                masks = ShownChecker(meta, [t], frame)
                end = t + 11 if staged["outcome"] == "stops short" else max(
                    e["end"] for e in meta["events"] if e["object"] == mover and e["action"] == "moves"
                    and e["start"] < t <= e["end"]) + 1
                if any(_touching(masks.mask(mover, k), masks.mask(other, k)) for k in range(t, end)
                       if masks.seen(mover, k) and masks.seen(other, k)):
                    problems.append(f"{item['id']}: the {mover} touches the {other} though they do not collide")
            if max(context) >= t:
                problems.append(f"{item['id']}: context frame {max(context)} reaches the interaction at {t}")
    return problems
