"""Model predictions: Mirage's JSONL, and the result files of lmms-eval and VLMEvalKit mapped back to item ids.

Mirage's file (written by ``python -m scoring.run``) has one JSON object per line::

    {"id": "00c5c24e3c1f287c", "output": "The answer is (B).", "model": "qwen2-vl-7b", "params": {...}}

``output`` is the raw model output (thinking blocks and all): extraction happens at scoring time
(:mod:`builders.semantics.extract`), so a better extractor re-scores old runs without re-asking the model. For files
written before this format, ``prediction`` is read as ``output`` (Mementos' earlier scorer read that key).

Harness outputs:

* lmms-eval ``--log_samples`` (``samples_<task>.jsonl``): one line per document with ``doc_id``, ``doc`` (the
  row, which carries Mirage's item ``id``), ``resps`` (nested lists of raw outputs) and ``filtered_resps``;
  the raw response is used. lmms-eval 0.7 saves no ``doc``: the id is then read from the logged metrics
  (every metric of Mirage's task folder carries it), else mapped through ``doc_id`` to the task's rows in
  release order, when the caller gives them;
* VLMEvalKit result sheets (``<model>_<dataset>.xlsx``, or ``.tsv``/``.csv`` with ``PRED_FORMAT``): one row
  per question with ``index`` and ``prediction``; the item id is read from an ``id`` (or ``item_id``) column,
  which Mirage's TSV exports carry, else through ``index`` when the caller maps indices to ids. Circular
  variants (several rows per item, rotated options) are not merged here: each row keeps its own index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from sources.atomic import write_atomic
from sources.errors import ConfigError


@dataclass(frozen=True)
class Prediction:
    """One model output for one item."""

    id: str
    output: str
    model: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"id": self.id, "output": self.output, "model": self.model, "params": dict(self.params)},
                          ensure_ascii=False, sort_keys=True)


def output_of(prediction: Prediction | str) -> str:
    """The raw output of a :class:`Prediction` (or anything with ``.output``), or the string itself: scorers'
    ``run`` accepts either, so tests and callers may pass ``{id: output}``."""
    return getattr(prediction, "output", prediction)


def outputs_of(predictions: Mapping[str, Prediction | str]) -> dict[str, str]:
    """``{id: raw output}`` of ``predictions`` (see :func:`output_of`)."""
    return {i: output_of(p) for i, p in predictions.items()}


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"{path}: predictions file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read predictions ({exc})") from None


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSONL file; bad JSON is a one-line error."""
    for n, line in enumerate(_lines(path), 1):
        if line.strip():
            try:
                yield n, json.loads(line)
            except ValueError:
                raise ConfigError(f"{path}: line {n}: not valid JSON") from None


def read_predictions(path: str | Path) -> dict[str, Prediction]:
    """``{id: Prediction}`` from Mirage's JSONL; malformed lines and duplicate ids are one-line errors."""
    path = Path(path)
    out: dict[str, Prediction] = {}
    for n, row in _json_lines(path):
        if not isinstance(row, dict) or "id" not in row or not ("output" in row or "prediction" in row):
            raise ConfigError(f"{path}: line {n}: expected a JSON object with 'id' and 'output'")
        output = row.get("output", row.get("prediction"))
        if not isinstance(output, str):
            raise ConfigError(f"{path}: line {n}: 'output' must be a string")
        params = row.get("params")
        params = {} if params is None else params
        if not isinstance(params, dict):
            raise ConfigError(f"{path}: line {n}: 'params' must be a JSON object")
        item_id = str(row["id"])
        if item_id in out:
            raise ConfigError(f"{path}: line {n}: a second prediction for item {item_id}")
        out[item_id] = Prediction(item_id, output, str(row.get("model") or ""), params)
    return out


def write_predictions(path: str | Path, predictions: Iterable[Prediction]) -> Path:
    """Write predictions (sorted by id) atomically: a crash never leaves a file that looks complete."""
    text = "".join(p.to_json() + "\n" for p in sorted(predictions, key=lambda p: p.id))
    return write_atomic(Path(path), text.encode("utf-8"))


# ------------------------------------------------------------------------------------------------ lmms-eval


def _first_text(value: Any) -> str | None:
    """The first string inside lmms-eval's nested ``resps`` lists."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def read_lmms_eval_samples(
    path: str | Path, rows: Sequence[str] | None = None, model: str = ""
) -> dict[str, Prediction]:
    """Predictions from an lmms-eval ``--log_samples`` JSONL file (see the module docstring).

    ``rows``: the item ids of the task in document order, used when a logged ``doc`` has no ``id``.
    """
    path = Path(path)
    out: dict[str, Prediction] = {}
    for n, row in _json_lines(path):
        if not isinstance(row, dict):
            raise ConfigError(f"{path}: line {n}: expected a JSON object (an lmms-eval sample)")
        doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
        item_id = doc.get("id")
        if item_id is None:
            # lmms-eval >= 0.7 drops `doc` from the saved samples but keeps the logged metrics, and every metric
            # of Mirage's task folder (scoring.harness.lmms_eval_utils) carries the item id
            item_id = next((v["id"] for v in row.values() if isinstance(v, dict) and isinstance(v.get("id"), str)),
                           None)
        if item_id is None and rows is not None and isinstance(row.get("doc_id"), int) and row["doc_id"] < len(rows):
            item_id = rows[row["doc_id"]]
        if item_id is None:
            raise ConfigError(f"{path}: line {n}: the sample's doc has no 'id' (log with Mirage's task folder, "
                              "or give the task's ids in order)")
        output = _first_text(row.get("resps"))
        if output is None:
            output = _first_text(row.get("filtered_resps"))
        if output is None:
            raise ConfigError(f"{path}: line {n}: no response text in 'resps' or 'filtered_resps'")
        item_id = str(item_id)
        if item_id in out:
            raise ConfigError(f"{path}: line {n}: a second sample for item {item_id}")
        out[item_id] = Prediction(item_id, output, model, {"harness": "lmms-eval", "doc_id": row.get("doc_id")})
    return out


# ------------------------------------------------------------------------------------------------ VLMEvalKit


def read_sheet(path: str | Path) -> tuple[list[str], list[dict[str, str]]]:
    """The columns and rows (every cell as text) of a VLMEvalKit result sheet: ``.xlsx`` (needs openpyxl),
    ``.tsv`` or ``.csv``; a missing, unreadable or unknown file is a one-line ``ConfigError``. The one sheet
    reader of Mirage: the predictions below and the circular scorer read sheets alike."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: result sheet not found")
    suffix = path.suffix.lower()
    if suffix not in (".xlsx", ".tsv", ".csv"):
        raise ConfigError(f"{path}: unknown result sheet format (expected .xlsx, .tsv or .csv)")
    try:
        if suffix == ".xlsx":
            frame = pd.read_excel(path, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    except ImportError:
        raise ConfigError(f"{path}: reading .xlsx needs openpyxl: pip install openpyxl") from None
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read the result sheet ({exc})") from None
    return [str(c) for c in frame.columns], frame.to_dict("records")


def read_vlmevalkit_sheet(
    path: str | Path, index_to_id: Mapping[int, str] | None = None, model: str = ""
) -> dict[str, Prediction]:
    """Predictions from a VLMEvalKit result sheet (``.xlsx`` needs openpyxl; ``.tsv``, ``.csv`` do not)."""
    columns, rows = read_sheet(path)
    if "prediction" not in columns:
        raise ConfigError(f"{path}: no 'prediction' column (columns: {', '.join(columns)})")
    id_column = next((c for c in ("id", "item_id") if c in columns), None)
    if id_column is None and (index_to_id is None or "index" not in columns):
        raise ConfigError(f"{path}: no 'id' column and no index-to-id mapping for its 'index' column")
    out: dict[str, Prediction] = {}
    for n, row in enumerate(rows, 2):  # line 1 is the header
        if id_column is not None:
            item_id = str(row[id_column])
        else:
            try:
                item_id = index_to_id[int(row["index"])]  # type: ignore[index]
            except (KeyError, ValueError):
                raise ConfigError(f"{path}: row {n}: index {row['index']!r} is not an exported item") from None
        if item_id in out:
            raise ConfigError(f"{path}: row {n}: a second prediction for item {item_id} (a circular sheet? "
                              "score it per row)")
        out[item_id] = Prediction(item_id, str(row["prediction"]), model,
                                  {"harness": "vlmevalkit", "index": row.get("index")})
    return out


# ------------------------------------------------------------------------------------------------ any format

FORMATS = ("mirage", "lmms-eval", "vlmevalkit")


def guess_format(path: Path) -> str:
    """The format of a predictions file by its name: sheets are VLMEvalKit's, ``samples_*.jsonl`` lmms-eval's."""
    if path.suffix.lower() in (".xlsx", ".tsv", ".csv"):
        return "vlmevalkit"
    if path.name.startswith("samples_") or "samples" in path.stem.split("_"):
        return "lmms-eval"
    return "mirage"


def read_any_predictions(path: str | Path, fmt: str | None, model: str = "") -> dict[str, Prediction]:
    """``{id: Prediction}`` of a file in ``fmt`` (one of :data:`FORMATS`; ``None``: :func:`guess_format`): the one
    entry point of every command that reads predictions."""
    path = Path(path)
    fmt = fmt or guess_format(path)
    if fmt == "lmms-eval":
        return read_lmms_eval_samples(path, model=model)
    if fmt == "vlmevalkit":
        return read_vlmevalkit_sheet(path, model=model)
    return read_predictions(path)
