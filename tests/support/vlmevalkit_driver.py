"""Read Mirage's VLMEvalKit sheets with VLMEvalKit itself, inside its virtualenv, and score a result sheet with it.

``LMUData=DIR python vlmevalkit_driver.py OUT_DIR PREDICTIONS_JSON NAME [NAME ...]``

For each dataset NAME (a ``DIR/NAME.tsv`` Mirage exported), ``build_dataset(NAME)`` loads it the way ``run.py
--data NAME`` does (a custom MCQ dataset when it has ``A``/``B`` columns, else a custom VQA one) and
``build_prompt`` gives every row's message (VLMEvalKit writes the row's images to files for it). When
PREDICTIONS_JSON maps NAME to ``{index: prediction}``, a result sheet is made as VLMEvalKit's inference makes one
(the dataset's rows, images dropped, plus ``prediction``) and scored by the dataset's own ``evaluate`` with exact
matching (CircularEval for a name containing "circular"). Written to OUT_DIR/vlmevalkit.json.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path


def main(out_dir: str, predictions_path: str, *names: str) -> int:
    warnings.filterwarnings("ignore")
    # VLMEvalKit writes its intermediate sheets as xlsx unless told otherwise; tsv needs no openpyxl
    os.environ.setdefault("PRED_FORMAT", "tsv")
    os.environ.setdefault("EVAL_FORMAT", "csv")
    from vlmeval.dataset import build_dataset
    from vlmeval.smp import dump

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    predictions = json.loads(Path(predictions_path).read_text(encoding="utf-8"))
    report: dict = {}
    for name in names:
        dataset = build_dataset(name)
        prompts = {}
        for i in range(len(dataset)):
            row = dataset.data.iloc[i]
            messages = dataset.build_prompt(row)
            prompts[str(int(row["index"]))] = {
                "images": [m["value"] for m in messages if m["type"] == "image"],
                "text": "".join(m["value"] for m in messages if m["type"] == "text"),
            }
        entry: dict = {"class": type(dataset).__name__, "prompts": prompts}
        if name in predictions:
            sheet = dataset.data.drop(columns=["image"]).copy()
            sheet["prediction"] = [predictions[name][str(int(i))] for i in sheet["index"]]
            result_file = out / f"standin_{name}.tsv"
            dump(sheet, str(result_file))
            acc = dataset.evaluate(str(result_file), model="exact_matching", nproc=1)
            entry["accuracy"] = {str(k): [float(x) if not isinstance(x, str) else x for x in v]
                                 for k, v in acc.to_dict("list").items()}
            entry["result_sheet"] = str(result_file)
        report[name] = entry
    (out / "vlmevalkit.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
