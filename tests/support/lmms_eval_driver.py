"""Run Mirage's exported lmms-eval tasks with a stand-in model, inside the lmms-eval virtualenv.

``python lmms_eval_driver.py INCLUDE_PATH TASK ANSWERS_JSON OUT_DIR``

The stand-in answers every document from a fixed ``{item id: output}`` mapping, as a model wrapper does: it asks
the task for the document's images (``doc_to_visual``) and gets the prompt lmms-eval built (``doc_to_text``). The
run goes through lmms-eval's own API: ``TaskManager(include_path=...)`` indexes the folder, ``simple_evaluate``
loads the dataset the YAMLs name (``load_dataset(repo, config, revision=tag)``), and an ``EvaluationTracker`` writes
the ``--log_samples`` files exactly as ``lmms-eval --log_samples`` does. Written to OUT_DIR: ``results.json``
(lmms-eval's ``results`` and ``groups``), ``requests.json`` (what the stand-in saw per item) and the samples; then
the same through the chat protocol: ``results_chat.json`` and ``requests_chat.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lmms_eval.api.model import lmms
from lmms_eval.evaluator import simple_evaluate
from lmms_eval.loggers.evaluation_tracker import EvaluationTracker
from lmms_eval.tasks import TaskManager
from lmms_eval.utils import get_datetime_str


class StandIn(lmms):
    """Answers from a mapping keyed by Mirage item id; records each request's prompt and images."""

    def __init__(self, answers: dict[str, str]) -> None:
        super().__init__()
        self.answers = answers
        self.seen: dict[str, dict] = {}

    def generate_until(self, requests) -> list[str]:
        out = []
        for request in requests:
            context, gen_kwargs, doc_to_visual, doc_id, task, split = request.args
            doc = self.task_dict[task][split][doc_id]
            images = doc_to_visual(doc)
            self.seen[doc["id"]] = {
                "task": task, "doc_id": doc_id, "prompt": context, "gen_kwargs": gen_kwargs,
                "images": [[im.mode, *im.size] for im in images],
                "pixel": [list(im.getpixel((0, 0))) for im in images],
            }
            out.append(self.answers[doc["id"]])
        return out

    def loglikelihood(self, requests):  # pragma: no cover - Mirage's tasks generate
        raise NotImplementedError

    def generate_until_multi_round(self, requests):  # pragma: no cover
        raise NotImplementedError


class ChatStandIn(StandIn):
    """The same answers through lmms-eval's chat protocol (``is_simple = False``): the request carries
    ``doc_to_messages``, which lmms-eval builds from the task's ``doc_to_visual`` and ``doc_to_text``."""

    is_simple = False

    def generate_until(self, requests) -> list[str]:
        out = []
        for request in requests:
            context, doc_to_messages, gen_kwargs, doc_id, task, split = request.args
            doc = self.task_dict[task][split][doc_id]
            content = doc_to_messages(doc)[-1]["content"]
            self.seen[doc["id"]] = {
                "task": task, "doc_id": doc_id, "gen_kwargs": gen_kwargs,
                "prompt": "".join(part["text"] for part in content if part["type"] == "text"),
                "images": [part["type"] for part in content if part["type"] != "text"],
            }
            out.append(self.answers[doc["id"]])
        return out


def main(include_path: str, task: str, answers_path: str, out_dir: str) -> int:
    out = Path(out_dir)
    model = StandIn(json.loads(Path(answers_path).read_text(encoding="utf-8")))
    manager = TaskManager(include_path=include_path, include_defaults=False)
    tracker = EvaluationTracker(output_path=str(out / "samples"))
    results = simple_evaluate(model=model, tasks=[task], task_manager=manager, log_samples=True, bootstrap_iters=0,
                              evaluation_tracker=tracker, process_docs_parallel=1)
    samples = results.pop("samples")
    # what `lmms-eval --log_samples --output_path` does after evaluating
    tracker.save_results_aggregated(results=results, samples=samples, datetime_str=get_datetime_str())
    for name in results["configs"]:
        tracker.save_results_samples(task_name=name, samples=samples[name])
    (out / "results.json").write_text(
        json.dumps({"results": results["results"], "groups": results.get("groups", {}),
                    "tasks": manager.all_tasks}, default=str, indent=1), encoding="utf-8")
    (out / "requests.json").write_text(json.dumps(model.seen, indent=1), encoding="utf-8")

    chat = ChatStandIn(model.answers)
    results = simple_evaluate(model=chat, tasks=[task], task_manager=TaskManager(include_path=include_path,
                              include_defaults=False), log_samples=False, bootstrap_iters=0, process_docs_parallel=1)
    (out / "results_chat.json").write_text(json.dumps({"results": results["results"]}, default=str, indent=1),
                                           encoding="utf-8")
    (out / "requests_chat.json").write_text(json.dumps(chat.seen, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
