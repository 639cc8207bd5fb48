"""MIOH with its model services: CLIP mining (real open_clip path, skip notice, injected scorer) and LLM contexts."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from builders import mioh
from builders.mioh.clip import compute_signals
from builders.mioh.llm_context import problems_with
from tests.builders.pair_check import pair_problems
from builders.mioh.pools import Pools
from builders.mioh.render import Claim, Wording
from filters.geometry import measure
from sources.tables import tables_of
from tests.builders.mioh.checker import Checker, demo_truth
from tests.conftest import require

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def items_of(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from sources.demo import load_demo

    cache = tmp_path_factory.mktemp("cache")
    return load_demo(seed=0, n_images=600, cache_dir=cache), cache


# --------------------------------------------------------------------------------------------- CLIP


class FakeScorer:
    """Similarity 0.5 everywhere, except the pairs the test makes abnormal (a column with no spread has no z)."""

    def __init__(self, special: dict[tuple[str, str], float]) -> None:
        self.special = special

    def similarity(self, image_paths, prompts) -> np.ndarray:
        out = np.empty((len(image_paths), len(prompts)), dtype=np.float32)
        for i, path in enumerate(image_paths):
            for j, prompt in enumerate(prompts):
                out[i, j] = self.special.get((Path(path).name, prompt), 0.5)
        return out


def test_low_and_high_clip_z_choose_the_intended_pairs(demo):
    records, _ = demo
    config = mioh.MiohConfig().pool_config(exhaustive_relations=True)
    tables = tables_of(records)
    measures = measure(tables, config.geometry)
    plain = Pools.build(tables, measures, config, ["existence"])
    # an easy present circle and an absent, not co-occurring star: neither is hard without CLIP
    present = next(i for i in range(len(records.images))
                   if (l := plain.label("existence", i, "circle")) and l.status == "pos" and not l.hard)
    absent = next(i for i in range(len(records.images))
                  if (l := plain.label("existence", i, "star")) and l.status == "neg" and not l.hard)
    name = lambda i: Path(records.images[i].file).name  # noqa: E731
    scorer = FakeScorer({(name(present), "A photo of circle"): 0.0, (name(absent), "A photo of star"): 1.0})
    pools = Pools.build(tables, measures, config, ["existence"],
                        lambda inc: compute_signals(scorer, tables, inc, -1.5, 1.5, with_attributes=False))
    hp = pools.label("existence", present, "circle")
    assert (hp.status, hp.hard, hp.signal) == ("pos", True, "clip") and hp.clip_z < -1.5
    hn = pools.label("existence", absent, "star")
    assert (hn.status, hn.hard, hn.signal) == ("neg", True, "clip") and hn.clip_z > 1.5
    assert absent in pools.images("existence", "star", "neg", True)
    # everything else keeps the label geometry and co-occurrence gave it
    for img in range(0, len(records.images), 37):
        for cat in ("circle", "star", "heart"):
            if (img, cat) in ((present, "circle"), (absent, "star")):
                continue
            a, b = plain.label("existence", img, cat), pools.label("existence", img, cat)
            assert (a is None) == (b is None) and (a is None or (a.status, a.hard) == (b.status, b.hard))


def test_build_with_a_tiny_open_clip_model_then_a_cached_rerun(tmp_path, demo):
    require(has("open_clip") and has("torch"), "open_clip_torch and torch")
    from tests.support.tiny_clip import register_tiny_clip

    _, cache = demo
    model = register_tiny_clip(tmp_path / "configs")
    args = ["--n-images", "2", "--n-questions", "2", "--tasks", "existence", "attribute", "--pressures", "easy",
            "hard_positive", "hard_negative", "--clip-model", model, "--clip-pretrained", "none", "--clip-workers", "0",
            "--cache-dir", str(cache), "--no-progress"]
    assert mioh.main([*args, "--out", str(tmp_path / "a")]) == 0
    build = json.loads((tmp_path / "a" / "n2-seed0" / "build.json").read_text())
    clip = build["stats"]["clip"]
    assert clip["ran"] and clip["stats"]["images_encoded"] == 600
    items = items_of(tmp_path / "a" / "n2-seed0")
    assert all("clip_z" in img for it in items for img in it["provenance"]["images"] if img.get("label") == "pos")
    assert "clip_z" in build["stats"]["quality"]
    assert mioh.main([*args, "--out", str(tmp_path / "b")]) == 0
    rerun = json.loads((tmp_path / "b" / "n2-seed0" / "build.json").read_text())["stats"]["clip"]["stats"]
    assert rerun["images_encoded"] == 0 and rerun["image_cache_hits"] == rerun["images_requested"] >= 600
    assert (tmp_path / "a" / "n2-seed0" / "items.jsonl").read_bytes() == (tmp_path / "b" / "n2-seed0" / "items.jsonl").read_bytes()


def test_without_weights_the_clip_stage_is_skipped_with_a_notice(tmp_path, demo, capsys, monkeypatch):
    require(has("open_clip") and has("torch"), "open_clip_torch and torch")
    _, cache = demo
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert mioh.main(["--n-images", "2", "--n-questions", "1", "--tasks", "existence", "--pressures", "easy",
                      "--cache-dir", str(cache), "--out", str(tmp_path), "--no-progress"]) == 0
    assert "CLIP stage skipped" in capsys.readouterr().err
    clip = json.loads((tmp_path / "n2-seed0" / "build.json").read_text())["stats"]["clip"]
    assert clip["ran"] is False and "no local weights" in clip["skipped"]


# ---------------------------------------------------------------------------------------------- LLM


def test_context_check_accepts_faithful_and_rejects_unfaithful_sentences():
    w = Wording("existence")
    deny = Claim("absent", "dog")
    assert problems_with("I don't think there's a dog in any of these images, but I'm not sure.", w, deny, "sycophantic") is None
    assert "denies" in problems_with("I think there is a dog here.", w, deny, "sycophantic")
    assert "drops" in problems_with("Analysis confirms there is no cat.", w, deny, "instructional_override")
    assert "authoritative" in problems_with("Maybe there is no dog.", w, deny, "instructional_override")
    count = Claim("count", "dog", image=1, value=3)
    assert problems_with("Verified: Image 2 has exactly 3 'dog'(s).", Wording("counting"), count, "instructional_override") is None
    assert "drops" in problems_with("Verified: Image 3 has exactly 3 dogs.", Wording("counting"), count, "instructional_override")
    assert "uncertain" in problems_with("Image 2 has exactly 3 dog.", Wording("counting"), count, "sycophantic")


def test_llm_writes_contexts_checked_against_the_truth(tmp_path, demo, monkeypatch):
    require(has("openai"), "openai")
    from tests.support.openai_stub import StubOpenAI

    records, cache = demo

    def responder(body):
        statement = re.search(r"Statement: (.*)", body["messages"][1]["content"]).group(1)
        style = "sycophantic" if "Sycophantic" in body["messages"][1]["content"] else "override"
        if "Image" in statement:  # the stub "forgets" image numbers: those must fall back to the template
            return json.dumps({"context": "I think there is something somewhere."})
        text = f"I think {statement}, but I'm not sure." if style == "sycophantic" else f"Records confirm that {statement}."
        return json.dumps({"context": text})

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-123")
    with StubOpenAI(responder=responder) as stub:
        code = mioh.main(["--n-images", "4", "--n-questions", "4", "--pressures", "sycophantic", "instructional_override",
                          "--llm-base-url", stub.base_url, "--llm-model", "stub-model", "--cache-dir", str(cache),
                          "--out", str(tmp_path), "--no-progress"])
        requests = len(stub.bodies)
    assert code == 0
    build_dir = tmp_path / "n4-seed0"
    items = items_of(build_dir)
    writers = {it["provenance"]["context"]["writer"] for it in items}
    assert writers == {"llm", "template"}
    for it in items:
        ctx = it["provenance"]["context"]
        if ctx["writer"] == "llm":
            assert it["context"] != ctx["template_text"] and "Image" not in it["context"]
        else:
            assert ctx["llm_rejected"] and ctx["attempts"] == 2
    build = json.loads((build_dir / "build.json").read_text())
    counts = build["stats"]["llm"]["contexts"]
    contexts = {it["provenance"].get("pair", {}).get("id", it["id"]) for it in items}  # one per pair (issue 55)
    assert counts["llm"] + counts["template_fallback"] == len(items) and requests >= len(contexts)
    assert len(contexts) < len(items) and pair_problems(items) == []  # both items of a pair: one context
    for path in build_dir.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            assert "SECRET" not in path.read_text()
    for f in (Path(cache) / "llm").rglob("*"):
        if f.is_file():
            assert "SECRET" not in f.read_text()
    (records_json,) = Path(cache).glob("demo/*/records.json")
    checker = Checker(demo_truth(records_json), dict(records.attribute_types), exhaustive=True)
    assert not [p for it in items if (p := checker.check(it))]
