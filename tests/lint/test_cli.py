"""The lint command keeps the command-line conventions: every option documented, defaults written one way, and
its table readable at 80 columns."""

from __future__ import annotations

import json
import re

from builders.cli import ArgumentParser, table
from builders.items import make_item
from builders.lint import lint, summary_rows
from lint.cli import parser
from tests.builders.test_cli_usability import assert_readable, render, walk


def test_every_option_documented():
    problems = []
    for p, action in walk(parser()):
        flag = "/".join(action.option_strings) or action.dest
        if not isinstance(p, ArgumentParser):
            problems.append("not builders.cli.ArgumentParser")
        if not action.help or "(default:" in action.help or re.search(r"\bdefault: ", action.help):
            problems.append(f"{flag}: help missing or default not written '(default X)'")
        if action.nargs != 0 and action.metavar is None and action.choices is None:
            problems.append(f"{flag}: no metavar")
    assert not problems, problems


def test_table_fits_80_columns_with_long_findings():
    items = [make_item(benchmark="b", task=f"a_rather_long_task_name_{k}", question_type="yes_no",
                       pressure="easy", images=[f"{k}.jpg"], question="Is there a dog in the image?", options=(),
                       answer="yes") for k in range(3)]
    section = json.loads(json.dumps(lint(items * 20).section()))
    text = render(lambda c: c.print(table("Lint", ["check", "flagged", "finding"], summary_rows(section),
                                          numeric=False)))
    assert "contradictions" in text and "independence" in text
    assert_readable(text)
