"""MM-SAP BasicVisQA at VQAv2 scale: question selection and wrong options, ours vs plain Python, side by side.

A synthetic corpus the size of VQAv2 val (214,000 questions, 2.14 million human answers) with VQAv2's shape:
real question_type prefixes and answer types (yes/no included), Zipf-distributed answers per type, colours and
counts, answers spelled several ways ("Two", "2", "dogs", "Dog.") and some disagreement between annotators.

Timed on one core (``time.process_time``), parsing excluded (it is the same ``json.load`` for both):

* **ours** - :func:`builders.mmsap.vqa.intern_corpus` (type map with cached prefix rules, answer keys cached per
  distinct string, agreement in numpy), :func:`selected`, :func:`distractors` for every selected question
  (one numpy pass per question_type, hashed uniforms);
* **plain Python** - the same rules written the obvious way: every answer normalised afresh, every rule tried
  per question, per question a filtered candidate list and a seeded ``random.Random`` weighted draw.

Target: ours < 30 s. Both must select the same questions (checked).

    python benchmarks/bench_mmsap.py [--questions 214000] [--baseline-questions N]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from builders.mmsap.answers import answer_table  # noqa: E402
from builders.mmsap.vqa import distractors, intern_corpus, selected, type_map  # noqa: E402
from sources.vqav2 import VqaQuestion  # noqa: E402

TARGET_S = 30.0
VQAV2_QUESTIONS = 214_000
QUESTION_TYPES = [  # (question_type, answer_type, question template, answer family, share)
    ("is the", "yes/no", "Is the {x} here?", "yesno", 0.30),
    ("are there", "yes/no", "Are there {x}?", "yesno", 0.08),
    ("how many", "number", "How many {x} are there?", "count", 0.12),
    ("what color is the", "other", "What color is the {x}?", "colour", 0.08),
    ("what is the man", "other", "What is the man doing with the {x}?", "action", 0.05),
    ("what is the man", "other", "What is the man holding near the {x}?", "object", 0.04),
    ("what is the", "other", "What is the {x} made of?", "object", 0.08),
    ("where is the", "other", "Where is the {x}?", "place", 0.05),
    ("what does the", "other", "What does the {x} sign say?", "text", 0.03),
    ("what room is", "other", "What room is this {x} in?", "room", 0.03),
    ("what", "other", "What shape is the {x}?", "shape", 0.02),
    ("what kind of", "other", "What kind of {x} is this?", "object", 0.07),
    ("why", "other", "Why is the {x} here?", "reason", 0.05),
]
THINGS = [f"thing{k}" for k in range(300)]
COLOURS = ["white", "black", "red", "blue", "green", "yellow", "brown", "gray", "orange", "pink", "purple", "silver"]


def families(rng: np.random.Generator) -> dict[str, list[str]]:
    words = lambda stem, n: [f"{stem}{k}" for k in range(n)]  # noqa: E731
    return {"yesno": ["yes", "no"], "count": [str(k) for k in range(0, 21)], "colour": COLOURS,
            "action": words("doing", 400), "object": words("object", 3000), "place": words("place", 800),
            "text": words("word", 2000), "room": words("room", 40), "shape": ["round", "square", "oval",
                                                                           "rectangle", "triangle", "circle"],
            "reason": words("because", 1500)}


SPELLINGS = (lambda a: a, lambda a: a.capitalize(), lambda a: a + ".", lambda a: a + "s", lambda a: "the " + a)
NUMBER_WORDS = {"1": "one", "2": "two", "3": "three", "4": "four"}


def synthetic_corpus(n: int, seed: int = 0) -> list[VqaQuestion]:
    rng = np.random.default_rng(seed)
    fams = families(rng)
    shares = np.array([t[4] for t in QUESTION_TYPES])
    kinds = rng.choice(len(QUESTION_TYPES), size=n, p=shares / shares.sum())
    out = []
    for qid, k in enumerate(kinds.tolist()):
        qtype, atype, template, fam, _ = QUESTION_TYPES[k]
        pool = fams[fam]
        weights = 1.0 / np.arange(1, len(pool) + 1)
        right = pool[int(min(len(pool) - 1, rng.zipf(1.6) - 1))]
        agree = int(rng.choice([10, 9, 8, 7, 5, 4], p=[0.35, 0.2, 0.15, 0.12, 0.1, 0.08]))
        others = [pool[int(i)] for i in rng.choice(len(pool), size=10 - agree, p=weights / weights.sum())]
        answers = [right] * agree + others
        spelled = []
        for a in answers:
            r = rng.random()
            if fam == "count" and a in NUMBER_WORDS and r < 0.2:
                spelled.append(NUMBER_WORDS[a])
            elif fam not in ("count", "yesno") and r < 0.25:
                spelled.append(SPELLINGS[int(rng.integers(len(SPELLINGS)))](a))
            else:
                spelled.append(a)
        out.append(VqaQuestion(qid, qid // 5, template.format(x=THINGS[qid % len(THINGS)]), qtype, atype, right,
                               tuple(spelled), ("yes",) * 10))
    return out


# ------------------------------------------------------------------------------------------------ ours


def ours(questions: list[VqaQuestion], min_agreement: float, seed: int) -> tuple[float, set[int], int]:
    answer_table.cache_clear()
    type_map.cache_clear()
    table, types = answer_table(), type_map()
    t0 = time.process_time()
    corpus = intern_corpus(questions, types, table)
    rows = selected(corpus, min_agreement)
    wrong = distractors(corpus, rows, types, table, seed)
    seconds = time.process_time() - t0
    return seconds, {questions[r].question_id for r in rows}, int((wrong >= 0).all(axis=1).sum())


# ------------------------------------------------------------------------------------------------ plain Python


def plain(questions: list[VqaQuestion], min_agreement: float, seed: int) -> tuple[float, set[int], int]:
    """The same rules, the obvious way: no caches, no interning, a Python loop per question and per candidate."""
    table = answer_table()
    rules = type_map().rules
    canonical = table._canonical

    def key(text: str) -> str:
        stem = table._stem(table.normalise(text))
        return canonical.get(stem, stem)

    def assign(q: VqaQuestion) -> str | None:
        if q.answer_type == "yes/no":
            return None
        words = set(re.findall(r"[a-z]+", q.question.lower()))
        for rule in rules:
            if not any(q.question_type.lower().startswith(p) for p in rule.prefixes):
                continue
            if rule.answer_types and q.answer_type not in rule.answer_types:
                continue
            if rule.keywords and not (rule.keywords & words):
                continue
            if rule.exclude_keywords & words:
                continue
            return rule.name
        return None

    t0 = time.process_time()
    keep = []
    stats: dict[str, Counter] = defaultdict(Counter)
    by_qtype: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for q in questions:
        t = assign(q)
        keys = [key(a) for a in q.answers]
        right = key(q.multiple_choice_answer)
        if t is None:
            continue
        stats[t][right] += 1
        by_qtype[(t, q.question_type)][right] += 1
        if sum(k == right for k in keys) / len(keys) >= min_agreement - 1e-9:
            keep.append((q, t, set(keys), right))
    complete = 0
    vocab = [key(c) for c in table.vocabulary("colours")]
    for q, t, human, right in keep:
        rng = random.Random(f"{seed}/{q.question_id}")
        kind = next(r.distractors for r in rules if r.name == t)
        if kind == "number":
            if not right.isdigit():
                continue
            n = int(right)
            cands = [c for d in range(1, 7) for c in (n - d, n + d) if c >= 0 and str(c) not in human]
            rng.shuffle(cands)
            cands.sort(key=lambda c: abs(c - n))
            picked = cands[:3]
        else:
            if kind == "vocabulary":
                pool = [(v, stats[t][v] + 1) for v in vocab]
            else:
                ranked = sorted(by_qtype[(t, q.question_type)].items(), key=lambda kv: (-kv[1], kv[0]))[:25]
                ranked += sorted(stats[t].items(), key=lambda kv: (-kv[1], kv[0]))[:25]
                pool = ranked
            pool = [(c, w) for c, w in pool if c not in human and c != right and c not in ("yes", "no")]
            picked = []
            while pool and len(picked) < 3:
                c = rng.choices([c for c, _ in pool], weights=[w for _, w in pool])[0]
                picked.append(c)
                pool = [(x, w) for x, w in pool if x != c]
        complete += len(picked) == 3
    seconds = time.process_time() - t0
    return seconds, {q.question_id for q, *_ in keep}, complete


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=VQAV2_QUESTIONS, help=f"corpus size (default {VQAV2_QUESTIONS})")
    p.add_argument("--baseline-questions", type=int, default=None,
                   help="run plain Python on the first N questions only and scale its time (default: all)")
    p.add_argument("--min-agreement", type=float, default=0.8, help="agreement threshold (default 0.8)")
    args = p.parse_args()
    console = Console()
    t0 = time.perf_counter()
    corpus = synthetic_corpus(args.questions)
    console.print(f"synthetic corpus: {len(corpus):,} questions, {sum(len(q.answers) for q in corpus):,} answers "
                  f"({time.perf_counter() - t0:.1f} s to make)")
    ours_s, ours_kept, ours_complete = ours(corpus, args.min_agreement, 0)
    base = corpus[: args.baseline_questions] if args.baseline_questions else corpus
    plain_s, plain_kept, plain_complete = plain(base, args.min_agreement, 0)
    scale = len(corpus) / len(base)
    if scale == 1 and plain_kept != ours_kept:
        console.print("[red]the two selections differ[/red]")
        return 1
    table = Table(title="MM-SAP selection + distractors (CPU seconds, one core)", title_justify="left")
    for col in ("", "ours", "plain Python", "target"):
        table.add_column(col, justify="right" if col else "left")
    table.add_row("questions", f"{len(corpus):,}", f"{len(base):,}" + (" (scaled)" if scale != 1 else ""), "")
    table.add_row("selected (typed, agreeing)", f"{len(ours_kept):,}", f"{round(len(plain_kept) * scale):,}", "")
    table.add_row("with 3 wrong options", f"{ours_complete:,}", f"{round(plain_complete * scale):,}", "")
    table.add_row("seconds", f"{ours_s:.1f}", f"{plain_s * scale:.1f}", f"< {TARGET_S:.0f}")
    table.add_row("speed-up", f"x{plain_s * scale / ours_s:.1f}", "", "")
    console.print(table)
    return 0 if ours_s < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
