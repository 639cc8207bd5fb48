"""Lint: every benchmark checked for the faults published benchmarks ship with (issue 16).

The published benchmarks Mirage rebuilds carry faults a machine can find: Reefknot's release labels 34 (image,
prompt) keys both "yes" and "no" and repeats 98 yes/no prompts; POPE's generator wrote "imange" for "image"
(``template.replace("a", "an")``); Mementos' description CSVs use four column schemes. Six checks look for them
(each gives a score per item, a flag and a summary, as cleanlab's Datalab does, and never changes an item):

* :mod:`~builders.lint.contradictions`: the same question with different answers; broken yes/no pairs;
* :mod:`~builders.lint.duplicates`: exact and near-duplicate questions, by hashing (no pairwise comparison);
* :mod:`~builders.lint.wording`: agreement, a/an, doubled words, template slots, spelling, punctuation, and
  grammar from a parse (:mod:`~builders.lint.grammar`);
* :mod:`~builders.lint.choices`: repeated, nested, self-lettered and near-synonym options; answers off the list;
* :mod:`~builders.lint.balance`: answer letters and yes/no per task (chi-square), refusal / NOTA share;
* :mod:`~builders.lint.independence`: blind baselines and a language prior per task, a text-only LLM on request.

Where it lives: in the ``builders`` layer, beside ``quality.py``, because :func:`builders.run.open_build` runs
it at the end of every build (results in build.json's ``"lint"``, a table in the summary, a section in the
data card) and a layer may only import upwards. The command ``python -m lint PATH`` (the top-level ``lint/``
package, which only wires the command line) lints a build dir, an items.jsonl, a release dir or a Hub repo@tag
(read by ``scoring.releases.load_items``) and the published benchmarks' own files (:mod:`builders.imports`).
"""

from builders.lint.report import CHECKS, LintReport, lint, lint_build_dir, markdown, summary_rows

__all__ = ["CHECKS", "LintReport", "lint", "lint_build_dir", "markdown", "summary_rows"]
