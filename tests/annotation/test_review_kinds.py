"""A review push refuses an item of a kind its benchmark's spec does not declare (``review_kinds``)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from annotation.builddir import load_build
from annotation.errors import AnnotationError
from annotation.push import check_kinds
from builders.items import read_items, write_items
from tests.annotation.builds import make_build


def test_an_item_of_an_undeclared_kind_is_refused(tmp_path):
    path = make_build(tmp_path, 6)  # mixed kinds, benchmark "demo": not in the registry, so not checked
    check_kinds(load_build(path))
    items = [replace(it, benchmark="mmsap") for it in read_items(path / "items.jsonl")]
    write_items(path / "items.jsonl", items)
    (path / "build.json").write_text(json.dumps({"benchmark": "mmsap", "name": "test", "seed": 0}))
    with pytest.raises(AnnotationError, match="which mmsap items never are \\(multiple choice\\); not pushed"):
        check_kinds(load_build(path))
    write_items(path / "items.jsonl", [it for it in items if it.options and it.options != ("yes", "no")])
    check_kinds(load_build(path))  # multiple choice only: what MM-SAP makes
