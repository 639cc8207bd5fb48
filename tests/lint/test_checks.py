"""Each lint check on small item sets: a clean set reports nothing, a planted fault of each kind is found."""

from __future__ import annotations

import random
import pytest

from builders.items import Item, make_item
from builders.lint import lint
from builders.lint.blind import wilson
from tests.conftest import have, require

OBJECTS = ["dog", "cat", "car", "cup", "bird", "tree", "boat", "lamp", "bench", "clock"]


def yes_no(image: str, obj: str, answer: str, **prov) -> Item:
    return make_item(benchmark="t", task="existence", question_type="yes_no", pressure="easy", images=[image],
                     question=f"Is there a {obj} in the image?", options=(), answer=answer, provenance=prov)


def mcq(image: str, question: str, options: list[str], answer: str, **prov) -> Item:
    return make_item(benchmark="t", task="attribute", question_type="mcq", pressure="easy", images=[image],
                     question=question, options=options, answer=answer, provenance=prov)


def clean_set() -> list[Item]:
    """40 yes/no items balanced per object, 40 MCQ items with rotating answers: nothing to find."""
    items = []
    for k in range(40):
        obj = OBJECTS[k % 10]
        items.append(yes_no(f"img{k}.jpg", obj, "yes" if (k // 10) % 2 == 0 else "no"))
        opts = [OBJECTS[(k + j) % 10] for j in range(4)]
        items.append(mcq(f"img{k}.jpg", "Which object is in the image?", opts, "ABCD"[(k * 3 + k // 4) % 4]))
    return items


def needs_learner() -> None:
    require(have("sklearn"), "scikit-learn (the blind audit's learner)", "pip install -e '.[lint]'")


def cells(summary) -> dict:
    """The blind audit's cells by name (the test skips without scikit-learn: the audit is then off)."""
    needs_learner()
    return {c["cell"]: c for c in summary["blind"]["cells"]}


def flagged(report, check: str) -> dict[str, list[str]]:
    r = report.results[check]
    return {report.items[i].id: why for i, why in r.reasons.items()}


def test_clean_set_reports_nothing():
    section = lint(clean_set()).section()
    assert section["flagged_items"] == 0, section
    assert section["findings"] == []
    assert section["clean"]


def test_same_question_two_answers_is_a_contradiction():
    a, b = yes_no("x.jpg", "dog", "yes"), yes_no("x.jpg", "dog", "no")
    found = flagged(lint(clean_set() + [a, b]), "contradictions")
    assert set(found) == {a.id, b.id}
    assert "elsewhere" in found[a.id][0]


def test_promised_yes_no_pair_broken():
    """Reefknot promises one yes and one adversarial no per triplet; a lone yes breaks the promise."""
    triplet = {"subject": "dog", "relation": "on", "object": "sofa"}
    ok = [make_item(benchmark="reefknot", task="perception", question_type="yes_no", pressure="none",
                    images=["r.jpg"], question=q, options=(), answer=a, provenance={"triplet": triplet})
          for q, a in (("Is the dog on the sofa?", "yes"), ("Is the dog under the sofa?", "no"))]
    lone = make_item(benchmark="reefknot", task="perception", question_type="yes_no", pressure="none",
                     images=["s.jpg"], question="Is the dog on the sofa?", options=(), answer="yes",
                     provenance={"triplet": triplet})
    report = lint(ok + [lone])
    assert set(flagged(report, "contradictions")) == {lone.id}
    assert report.results["contradictions"].summary["unpaired_groups"] == 1
    # a build that promises pairs per image through build.json
    build = {"benchmark": "t", "lint_promises": {"yes_no_pairs": []}}
    extra = yes_no("img0.jpg", "cup", "yes")
    assert extra.id in flagged(lint(clean_set()[:2] + [extra], build), "contradictions")


def test_exact_and_near_duplicates_found_but_a_new_object_is_not():
    base = yes_no("d.jpg", "dog", "yes")
    exact = Item(**{**base.__dict__, "id": "dupe-of-base"})
    near = make_item(benchmark="t", task="existence", question_type="yes_no", pressure="easy", images=["d.jpg"],
                     question="is there a dog in this picture", options=(), answer="yes")
    other = yes_no("d.jpg", "cat", "yes")
    found = flagged(lint([base, exact, near, other]), "duplicates")
    assert "exact duplicate" in found[base.id][0] and "exact duplicate" in found["dupe-of-base"][0]
    assert "near-duplicate" in found[near.id][0]
    assert other.id not in found


@pytest.mark.parametrize("question, rule", [
    ("Is there two dogs in the image?", "agreement"),
    ("Are there a dog in the image?", "agreement"),
    ("Is the snow is covers ground?", "agreement"),
    ("How many 'cross'(s) are there in the image?", "agreement"),
    ("Is there a apple in the image?", "article"),
    ("Is there an dog in the image?", "article"),
    ("Is there a dog in the the image?", "doubled"),
    ("Is there a {object} in the image?", "slot"),
    ("Is there a None in the image?", "slot"),
    ("How many 3 are in the image?", "slot"),
    ("Is there a dog in the image ?", "punctuation"),
    ("Is there a dog  in the image?", "punctuation"),
    ("Is there a dog in the image", "punctuation"),
    ("Is there a dog,in the image?", "punctuation"),
])
def test_wording_rule_finds_its_planted_fault(question, rule):
    bad = make_item(benchmark="t", task="existence", question_type="yes_no", pressure="easy", images=["w.jpg"],
                    question=question, options=(), answer="yes")
    found = flagged(lint(clean_set() + [bad], checks=["wording"]), "wording")
    assert bad.id in found, question
    assert any(why.startswith(rule) for why in found[bad.id]), found[bad.id]
    assert len(found) == 1


def test_wording_exceptions_are_not_faults():
    good = ["Is there a unicorn in the image?", "Is there an hour glass in the image?",
            "At the start, there are a red star and a blue ring.", "Is there a lot of snow in the image?",
            "How many crosses are there in total across all of these images?"]
    items = [make_item(benchmark="t", task="x", question_type="open", pressure="easy", images=[f"{k}.jpg"],
                       question=q, options=(), answer="A description.") for k, q in enumerate(good)]
    assert lint(items, checks=["wording"]).results["wording"].reasons == {}


def test_pope_imange_fault_is_a_spelling_fault():
    """POPE's generator ran ``template.replace("a", "an")``: "a" became "an" and "image" became "imange"."""
    require(have("spellchecker") and have("wordfreq"), "the word lists", "pip install -e .[lint]")
    template = "Is there a {} in the image?".replace("a", "an")
    items = [make_item(benchmark="pope", task="existence", question_type="yes_no", pressure="random",
                       images=[f"p{k}.jpg"], question=template.format(obj), options=(), answer="yes",
                       provenance={"object": obj}) for k, obj in enumerate(["apple", "hairdrier"])]
    report = lint(items, checks=["wording"])
    found = flagged(report, "wording")
    assert all(any("'imange'" in why for why in whys) for whys in found.values()) and len(found) == 2
    spelling = [why for whys in found.values() for why in whys if why.startswith("spelling")]
    assert not any("hairdrier" in why for why in spelling)  # a category name (provenance) is allowed
    assert any("article: 'an hairdrier'" in why for whys in found.values() for why in whys)
    assert report.results["wording"].summary["unknown_words"] == {"imange": 2}


def test_the_allow_list_is_made_only_when_a_word_is_not_in_the_dictionary(monkeypatch):
    """Walking every item's provenance for category names costs 0.4 s at paper scale: only a word the
    dictionary lacks needs it, and that word is still allowed."""
    require(have("spellchecker") and have("wordfreq"), "the word lists", "pip install -e .[lint]")
    import builders.lint.dictionary as dictionary

    walks: list[int] = []
    walk = dictionary.allow_list
    monkeypatch.setattr(dictionary, "allow_list", lambda items, extra=(): walks.append(len(items)) or walk(items, extra))
    known = [yes_no(f"k{k}.jpg", obj, "yes", object=obj) for k, obj in enumerate(OBJECTS)]
    assert not flagged(lint(known, checks=["wording"]), "wording")
    assert walks == []
    named = known + [yes_no("p.jpg", "tvmonitor", "yes", object="tvmonitor")]  # a Pascal VOC class name
    report = lint(named, checks=["wording"])
    assert walks == [len(named)]
    assert report.results["wording"].summary["unknown_words"] == {}


@pytest.mark.parametrize("options, answer, rule", [
    (["dog", "Dog", "cat", "cup"], "C", "repeated"),
    (["dog", "hot dog", "cat", "cup"], "C", "contained"),
    (["A. dog", "B. cat", "C. cup", "D. car"], "A", "letter"),
    (["dog", "cat", "cup", "car"], "E", "answer"),
    (["next to", "beside", "under", "on"], "A", "synonyms"),
])
def test_option_rule_finds_its_planted_fault(options, answer, rule):
    bad = mcq("o.jpg", "Which one?", options, answer)
    found = flagged(lint(clean_set() + [bad], checks=["options"]), "options")
    assert list(found) == [bad.id]
    assert any(why.startswith(rule) for why in found[bad.id]), found[bad.id]


def test_unbalanced_yes_no_and_letters_are_flagged():
    items = [yes_no(f"b{k}.jpg", OBJECTS[k % 10], "yes" if k % 10 else "no") for k in range(40)]
    items += [mcq(f"b{k}.jpg", "Which?", OBJECTS[k % 10: k % 10 + 4] or OBJECTS[:4], "A") for k in range(40)]
    report = lint(items, checks=["balance"])
    assert report.results["balance"].summary["unbalanced_tasks"] == ["t/attribute", "t/existence"]
    found = flagged(report, "balance")
    assert all(items[i].id in found for i in range(40) if items[i].answer == "yes")
    assert not any(items[i].id in found for i in range(40) if items[i].answer == "no")


def test_blind_baselines_and_the_language_prior_are_flagged():
    """Every dog question is "yes", every cat question "no": the question alone gives the answer away."""
    items = [yes_no(f"i{k}.jpg", "dog" if k % 2 else "cat", "yes" if k % 2 else "no") for k in range(60)]
    report = lint(items, checks=["independence"])
    summary = report.results["independence"].summary
    assert summary["flagged_cells"] == ["t/existence"]
    cell = cells(summary)["t/existence"]
    assert cell["strategies"]["frequent_text"]["accuracy"] == 1.0 and cell["accuracy"] == 1.0
    assert len(report.results["independence"].reasons) == 60
    assert lint(clean_set(), checks=["independence"]).results["independence"].reasons == {}


def test_text_only_model_answers_are_flagged(tmp_path):
    """A model that answers "yes" blind is right on every item of an all-yes task (flagged) and half the time on a
    balanced one (a guess: counted, not flagged)."""
    require(have("openai"), "openai (the llm extra)", "pip install -e .[llm]")
    from builders.llm import LLMConfig
    from tests.support.openai_stub import StubOpenAI

    leaky = [make_item(benchmark="t", task="leaky", question_type="yes_no", pressure="easy", images=[f"l{k}.jpg"],
                       question=f"Is there a {OBJECTS[k % 10]} in the image?", options=(), answer="yes")
             for k in range(40)]
    items = clean_set()[::2] + leaky  # 40 balanced yes/no items and 40 all-yes ones
    with StubOpenAI(responder=lambda body: "Yes.") as stub:
        config = LLMConfig(base_url=stub.base_url, model="stub-model", cache_dir=str(tmp_path), max_retries=0)
        report = lint(items, llm=config, checks=["independence"])
    summary = report.results["independence"].summary
    text_only = summary["text_only_model"]
    assert text_only["tasks"]["t/existence"] == {"items": 40, "right": 20, "unparsed": 0, "accuracy": 0.5,
                                                 "chance": 0.5}
    by_cell = cells(summary)
    assert "text_only_llm" in by_cell["t/leaky"]["above_chance"]
    assert by_cell["t/existence"]["strategies"]["text_only_llm"]["accuracy"] == 0.5
    assert "text_only_llm" not in by_cell["t/existence"]["above_chance"]
    assert {i for i, why in flagged(report, "independence").items() if any("text-only model" in w for w in why)} \
        == {it.id for it in leaky}
    assert all(isinstance(m["content"], str) for body in stub.bodies for m in body["messages"])  # no image sent
    assert any(f.startswith("answerable blind: t/leaky (") and "text_only_llm 100%" in f
               for f in report.section()["findings"])


def test_all_checks_together_on_every_planted_fault():
    """Every check runs over every planted fault at once (an answer off the list must not trip the others)."""
    bad = [mcq("o.jpg", "Which one?", ["dog", "cat", "cup", "car"], "E"),
           mcq("o.jpg", "Which one?", ["dog", "cat", "cup", "car"], "A"),
           mcq("o.jpg", "Which one?", ["dog", "cat", "cup", "car"], "B"),
           make_item(benchmark="t", task="existence", question_type="yes_no", pressure="easy", images=["q.jpg"],
                     question="Is there a {object} in the the image ?", options=(), answer="maybe")]
    report = lint(clean_set() + bad)
    ids = {check: set(flagged(report, check)) for check in report.results}
    assert bad[0].id in ids["options"] and bad[3].id in ids["wording"]
    assert {bad[1].id, bad[2].id} <= ids["contradictions"]
    assert report.section()["flagged_items"] == 4


REFUSAL = "Sorry, I can't help with it"


def refusal_task(n: int = 40, task: str = "beyond") -> list[Item]:
    """A task answered by the refusal in every item (MM-SAP's BeyondVisQA), the refusal's position rotating."""
    items = []
    for k in range(n):
        opts = [OBJECTS[(k + j) % 10] for j in range(4)]
        opts.insert(k % 5, REFUSAL)
        items.append(make_item(benchmark="t", task=task, question_type="mcq", pressure="easy", images=[f"r{k}.jpg"],
                               question=f"What is the name of the {OBJECTS[k % 10]}?", options=opts,
                               answer="ABCDE"[k % 5]))
    return items


PROMISE = {"benchmark": "t", "lint_promises": {"fixed_answers": {"beyond": {"answer": REFUSAL, "why": "formula 1"}}}}


def test_a_fixed_answer_task_without_a_promise_is_flagged():
    needs_learner()
    section = lint(clean_set() + refusal_task()).section()
    assert "t/beyond" in section["checks"]["independence"]["summary"]["flagged_cells"]
    assert section["checks"]["independence"]["flagged"] == 40
    assert section["notes"] == [] and not section["clean"]


def test_a_promised_fixed_answer_is_a_note_and_a_broken_promise_is_flagged():
    report = lint(clean_set() + refusal_task(), PROMISE)
    section = report.section()
    assert section["clean"], section
    summary = section["checks"]["independence"]["summary"]
    assert summary["flagged_cells"] == [] and summary["by_design_tasks"] == ["t/beyond"]
    beyond = cells(summary)["t/beyond"]
    assert beyond["by_design"] == REFUSAL and not beyond["flagged"]
    assert beyond["strategies"]["always_refuse"]["accuracy"] == 1.0  # still measured, only not a finding
    assert section["notes"] == ["t/beyond is answered \"Sorry, I can't help with it\" by design in 40 of 40 "
                                "items (formula 1); blind strategies finding it: learned 100%, longest 100%, "
                                "frequent_text 100%, always_refuse 100%"]
    assert "by design: t/beyond" in dict((r[0], r[2]) for r in report_rows(section))["independence"]
    # a promise for another benchmark's build is not this build's promise
    assert not lint(clean_set() + refusal_task(), {**PROMISE, "benchmark": "other"}).section()["clean"]
    # an item of the promised task answered otherwise breaks the promise
    odd = mcq("r.jpg", "What is the name of the cup?", [REFUSAL, "cup", "dog", "cat", "car"], "B")
    odd = make_item(**{**{k: getattr(odd, k) for k in ("benchmark", "question_type", "pressure", "images",
                                                        "question", "options", "answer", "provenance")},
                       "task": "beyond"})
    found = flagged(lint(clean_set() + refusal_task() + [odd], PROMISE), "independence")
    assert list(found) == [odd.id] and "breaks the promise" in found[odd.id][0]


def report_rows(section):
    from builders.lint import summary_rows

    return summary_rows(section)


def shuffled(questions: int, variants: int, answers: list[str] | None = None) -> list[Item]:
    """``questions`` MCQs, each in ``variants`` option orders linked by ``provenance.group`` (MM-SAP's
    ``--shuffles``). Each question has its own answer and wrong options (nothing to learn across questions) unless
    ``answers`` names the answer text per question. Right and wrong options look alike (an object and the
    question's number), so the text gives nothing away."""
    items = []
    for q in range(questions):
        opts = [f"{obj} {q}" for obj in random.Random(q).sample(OBJECTS, 4)]
        if answers:
            opts[0] = answers[q]
        for k in range(variants):
            slot = (q + k) % 4
            order = opts[1:slot + 1] + [opts[0]] + opts[slot + 1:]
            items.append(make_item(benchmark="t", task="shuffled", question_type="mcq", pressure="easy",
                                   images=[f"s{q}.jpg"], question=f"Which thing is shown in picture {q}?",
                                   options=order, answer="ABCD"[slot], provenance={"group": f"q{q}", "shuffle": k}))
    return items


def test_shuffled_variants_are_left_out_together_by_the_language_prior():
    """Leave-one-out alone would learn each answer from the other four orders of the same question."""
    items = shuffled(40, 5)
    report = lint(items, checks=["independence"])
    entry = cells(report.results["independence"].summary)["t/shuffled"]
    assert entry["strategies"]["frequent_text"]["accuracy"] <= 0.3 and not entry["flagged"] and entry["n"] == 40
    assert entry["items"] == 200
    assert report.results["independence"].reasons == {}
    # the same items without the group link: each variant sees its siblings and the prior "knows" every answer
    ungrouped = [make_item(**{**{k: getattr(it, k) for k in ("benchmark", "task", "question_type", "pressure",
                                                             "images", "question", "options", "answer")},
                              "provenance": {}}) for it in items]
    entry = cells(lint(ungrouped, checks=["independence"]).results["independence"].summary)["t/shuffled"]
    assert entry["strategies"]["frequent_text"]["accuracy"] == 1.0 and "frequent_text" in entry["above_chance"]


def test_a_leak_across_questions_is_still_found_with_shuffles():
    """Every question answered "red" (other questions' variants still teach the prior), and variants count as
    one question in the interval: 2 questions in 5 orders weigh as 2, not 10."""
    items = shuffled(40, 5, answers=["red"] * 40)
    summary = lint(items, checks=["independence"]).results["independence"].summary
    assert cells(summary)["t/shuffled"]["strategies"]["frequent_text"]["accuracy"] == 1.0
    assert summary["flagged_cells"] == ["t/shuffled"]
    few = cells(lint(shuffled(2, 5, answers=["red"] * 2), checks=["independence"]).results["independence"].summary)
    assert few["t/shuffled"]["n"] == 2 and few["t/shuffled"]["items"] == 10
    assert few["t/shuffled"]["low95"] == round(wilson(2, 2)[0], 4) < round(wilson(10, 10)[0], 4)


def test_a_malformed_promise_is_a_one_line_error(tmp_path, capsys):
    from lint.cli import main as lint_main
    from builders.items import write_items

    build = tmp_path / "b"
    build.mkdir()
    write_items(build / "items.jsonl", refusal_task(4))
    (build / "build.json").write_text('{"benchmark": "t", "lint_promises": {"fixed_answers": {"beyond": "sorry"}}}')
    assert lint_main([str(build)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{build}: lint_promises.fixed_answers must map" in err


def test_a_text_only_model_finding_a_promised_answer_is_by_design(tmp_path):
    require(have("openai"), "openai (the llm extra)", "pip install -e .[llm]")
    from builders.llm import LLMConfig
    from tests.support.openai_stub import StubOpenAI

    def refuse(body) -> str:  # the letter of the refusal line: what a blind model learns to do on this task
        text = body["messages"][-1]["content"]
        return next(line[0] for line in text.splitlines() if line.endswith(REFUSAL))

    results = {}
    for promised in (False, True):
        with StubOpenAI(responder=refuse) as stub:
            config = LLMConfig(base_url=stub.base_url, model="stub-model", cache_dir=str(tmp_path), max_retries=0)
            results[promised] = lint(refusal_task(), PROMISE if promised else None, llm=config,
                                     checks=["independence"]).results["independence"]
    assert "text_only_llm" in cells(results[False].summary)["t/beyond"]["above_chance"]
    assert len(results[False].reasons) == 40
    beyond = cells(results[True].summary)["t/beyond"]
    assert beyond["above_chance"] == [] and beyond["by_design"] == REFUSAL
    assert beyond["strategies"]["text_only_llm"]["accuracy"] == 1.0 and results[True].reasons == {}


def test_checks_in_worker_processes_report_what_one_process_reports(monkeypatch):
    """Large item sets run the checks in worker processes; the report is the same, faults included."""
    from builders.lint import report as report_module
    from sources.executors import ProcessExecutor

    items = clean_set() + [yes_no("x.jpg", "dog", "yes"), yes_no("x.jpg", "dog", "no"),
                           mcq("y.jpg", "Which objct is in the the image?", ["dog", "dog", "cat", "cup"], "A")]
    here = lint(items).section()
    mapped = []
    original = ProcessExecutor.map
    monkeypatch.setattr(report_module, "PARALLEL_ITEMS", 0)
    monkeypatch.setattr(report_module, "usable_cores", lambda: 2)
    monkeypatch.setattr(ProcessExecutor, "map", lambda self, fn, names: mapped.append(names) or original(self, fn, names))
    there = lint(items).section()
    assert mapped and mapped[0][:2] == list(report_module.SLOWEST) and sorted(mapped[0]) == sorted(report_module.CHECKS)
    assert there["flagged_items"] >= 3 and there == here
