"""How fast (and how right) is Mirage's answer extraction + MIOH scoring, and what does ``scoring.run`` add per item?

1. **Extraction and scoring of 100,000 predictions** (target: under 5 s on one core). Synthetic MIOH items
   (five options with "None of the above", 10 % single-image yes/no questions) get outputs in a mix of real
   styles, each written for a known intended answer: bare letters, ``(B)``, "The correct answer is (B)",
   reasoning before the answer, thinking blocks, the option's text, "yes." / "No, there is none", refusals
   and answers that choose nothing. Timed: ``builders.semantics.extract.extract`` alone, and
   ``scoring.mioh.score`` (extraction plus every table). Side by side, the plain-regex approach of the harnesses: the first capital A-E anywhere
   for multiple choice, ``"yes" in output.lower()`` for yes/no, a random letter when nothing matches. Both are
   also checked against the intended answers (how often each reads the answer the output meant). Wall and
   CPU time are both printed: on a shared machine the CPU time is the one-core figure.
2. **``scoring.run`` overhead per item** against the loopback stub (tests/support/openai_stub.py) answering after
   a fixed delay: the same requests sent with the bare ``openai`` client (prebuilt messages, sequential) vs
   ``scoring.run``'s path (reading images, data URLs, cache lookups and writes, predictions file), both with one
   request in flight. The ratio says how much of a run is Mirage rather than the model.

Run: ``python benchmarks/bench_scoring.py`` (``--n 100000 --run-items 100 --delay 0.02``). Never asserted in tests.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OPTIONS = ("cat", "dog", "red cross", "cross", "None of the above")
LETTERS = "ABCDE"

# (template, intended): {L} the letter, {T} the option text; intended "letter" | "none" (chooses nothing)
MCQ_STYLES = [
    ("{L}", "letter"), ("({L})", "letter"), ("{L}.", "letter"), ("**{L}**", "letter"), ("{L}. {T}", "letter"),
    ("The answer is {L}.", "letter"), ("The correct answer is ({L}).", "letter"), ("Answer: {L}", "letter"),
    ("Looking at each image, the shapes differ in colour and size. Comparing them with the options, the "
     "correct answer is ({L}).", "letter"),
    ("<think>Image 1 has a cat; Image 2 too. Not sure about the rest.</think>\n{L}", "letter"),
    ("{T}", "letter"), ("The object is the {T}.", "letter"), ("Final answer: {L}", "letter"),
    ("I cannot tell from these images.", "none"), ("These are some shapes on a plain background.", "none"),
]
YES_NO_STYLES = [
    ("{Y}", "yn"), ("{Y}.", "yn"), ("{Yc}.", "yn"), ("The answer is {Y}.", "yn"), ("**{Yc}**", "yn"),
    ("{Yc}, there is {what} in the image.", "yn"), ("I notice the shapes carefully. So the answer is {Y}.", "yn"),
    ("Sorry, I can't help with it.", "none"),
]


def make_data(n: int, seed: int = 0):
    """``n`` items, their outputs, and the answer each output meant (a letter, yes/no, or "" for none)."""
    from builders.items import make_item

    rng = random.Random(seed)
    items, outputs, meant = [], {}, {}
    pressures = ("easy", "hard_negative", "hard_positive", "n_images", "sycophantic", "instructional_override")
    for i in range(n):
        task = ("existence", "counting", "attribute", "position")[i % 4]
        if i % 10 == 9:
            truth = rng.choice(("yes", "no"))
            item = make_item(benchmark="mioh", task="existence", question_type="decomposed",
                             pressure=pressures[i % 6], images=[f"img-{i}.png"], question=f"Is there a cat? {i}",
                             options=(), answer=truth, provenance={"groups": [], "group_sizes": {}})
            said = truth if rng.random() < 0.6 else ("no" if truth == "yes" else "yes")
            style, kind = rng.choice(YES_NO_STYLES)
            text = style.format(Y=said, Yc=said.capitalize(), what="a cat" if said == "yes" else "no cat")
            meant[item.id] = said if kind == "yn" else ""
        else:
            truth = LETTERS[rng.randrange(5)]
            item = make_item(benchmark="mioh", task=task, question_type=("comprehensive", "comparative",
                             "selective")[i % 3], pressure=pressures[i % 6], images=[f"a{i}.png", f"b{i}.png"],
                             question=f"Which object appears in all images? {i}", options=OPTIONS, answer=truth,
                             provenance={"n_images": 2, **({"family": f"f{i // 2}"} if i % 6 == 3 else {})})
            said = truth if rng.random() < 0.5 else LETTERS[rng.randrange(5)]
            style, kind = rng.choice(MCQ_STYLES)
            text = style.format(L=said, T=OPTIONS[LETTERS.index(said)])
            meant[item.id] = said if kind == "letter" else ""
        items.append(item)
        outputs[item.id] = text
    return items, outputs, meant


_FIRST_CAPITAL = re.compile(r"[ABCDE]")


def naive_extract(output: str, item, rng: random.Random) -> str:
    """The harnesses' plain approach: first capital A-E anywhere, "yes" substring, else a random letter."""
    if item.answer in ("yes", "no"):
        return "yes" if "yes" in output.lower() else "no"
    m = _FIRST_CAPITAL.search(output)
    return m.group(0) if m else rng.choice(LETTERS)


def bench_extraction(n: int) -> list[list[str]]:
    from builders.semantics.extract import extract
    from scoring.mioh import score

    items, outputs, meant = make_data(n)

    def timed(fn):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        return value, time.perf_counter() - wall, time.process_time() - cpu

    answers, t_extract, c_extract = timed(lambda: [extract(outputs[it.id], it) for it in items])
    _, t_score, c_score = timed(lambda: score(items, outputs))
    rng = random.Random(1)
    naive, t_naive, c_naive = timed(lambda: [naive_extract(outputs[it.id], it, rng) for it in items])

    def agreement(values: list[str]) -> float:
        return sum(v == meant[it.id] for v, it in zip(values, items)) / n

    ours = [a.value if a.kind in ("option", "yes_no") else "" for a in answers]
    unparsed = sum(a.kind == "unparsed" for a in answers)
    return [
        ["extract (Mirage)", f"{t_extract:.2f} s", f"{c_extract:.2f} s", f"{1e6 * c_extract / n:.1f} us",
         f"{100 * agreement(ours):.1f}%", f"{unparsed} unparsed"],
        ["extract + all MIOH tables", f"{t_score:.2f} s", f"{c_score:.2f} s", f"{1e6 * c_score / n:.1f} us", "",
         "target < 5 s"],
        ["plain regex (harnesses)", f"{t_naive:.2f} s", f"{c_naive:.2f} s", f"{1e6 * c_naive / n:.1f} us",
         f"{100 * agreement(naive):.1f}%", "guesses instead"],
    ]


def bench_run(n_items: int, delay: float) -> list[list[str]]:
    """Per-item wall time of bare openai calls vs scoring.run against the stub (one request in flight)."""
    import openai
    from PIL import Image

    from builders.items import make_item, write_items
    from scoring.run import main as run_main, messages_for
    from tests.support.openai_stub import StubOpenAI

    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp) / "build"
        items = []
        for i in range(n_items):
            paths = []
            for k in range(4):
                rel = f"images/{i}-{k}.png"
                (build / "images").mkdir(parents=True, exist_ok=True)
                Image.new("RGB", (256, 256), ((i * 7) % 256, k * 60, 90)).save(build / rel)
                paths.append(rel)
            items.append(make_item(benchmark="mioh", task="existence", question_type="selective", pressure="easy",
                                   images=paths, question=f"In which image is there a cat? ({i})",
                                   options=("Image 1", "Image 2", "Image 3", "Image 4", "None of the above"),
                                   answer="A"))
        write_items(build / "items.jsonl", items)
        (build / "build.json").write_text('{"benchmark": "mioh", "name": "bench"}')
        resolved = [it.__class__(**{**it.__dict__, "images": tuple(str(build / p) for p in it.images)})
                    for it in items]
        with StubOpenAI(responder=lambda body: "A", delay=delay) as stub:
            client = openai.OpenAI(api_key="x", base_url=stub.base_url, max_retries=0)
            bodies = [messages_for(it) for it in resolved]
            t0 = time.perf_counter()
            for messages in bodies:
                client.chat.completions.create(model="m", messages=messages, temperature=0)
            t_bare = time.perf_counter() - t0
            t0 = time.perf_counter()
            assert run_main([str(build), "--llm-model", "m", "--llm-base-url", stub.base_url, "--llm-concurrency",
                             "1", "--out", str(Path(tmp) / "p.jsonl"), "--cache-dir", str(Path(tmp) / "c"),
                             "--no-progress"]) == 0
            t_run = time.perf_counter() - t0
            t0 = time.perf_counter()
            assert run_main([str(build), "--llm-model", "m", "--llm-base-url", stub.base_url, "--out",
                             str(Path(tmp) / "p2.jsonl"), "--cache-dir", str(Path(tmp) / "c"), "--no-progress"]) == 0
            t_resume = time.perf_counter() - t0
    per_bare, per_run = t_bare / n_items, t_run / n_items
    overhead = per_run - per_bare
    return [
        ["bare openai client + stub", f"{1e3 * per_bare:.1f} ms", "", f"stub delay {1e3 * delay:.0f} ms"],
        ["scoring.run + stub", f"{1e3 * per_run:.1f} ms", f"{1e3 * overhead:+.1f} ms",
         f"overhead / stub = {overhead / per_bare:.2f}"],
        ["scoring.run, all cached", f"{1e3 * t_resume / n_items:.1f} ms", "", "a resumed run"],
    ]


def main() -> int:
    from builders.cli import stdout, table

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000, metavar="N", help="predictions to extract (default 100000)")
    p.add_argument("--run-items", type=int, default=100, metavar="N", help="items for scoring.run (default 100)")
    p.add_argument("--delay", type=float, default=0.02, metavar="S", help="stub latency in seconds (default 0.02)")
    ns = p.parse_args()
    stdout.print(table(f"Extraction and scoring of {ns.n:,} predictions (one core)",
                       ["", "wall", "CPU", "CPU per item", "reads meant answer", "note"], bench_extraction(ns.n)))
    stdout.print(table(f"scoring.run per item ({ns.run_items} items x 4 images, one request in flight)",
                       ["", "per item", "overhead", "note"], bench_run(ns.run_items, ns.delay)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
