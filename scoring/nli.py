"""Semantic equivalence of two sentences by bidirectional entailment with an NLI model (``transformers``).

Reefknot scores open (VQA) answers this way (App. A.7, Fig. 15, after Kuhn et al. 2023): the reference and the
response are equivalent only when each entails the other - the NLI model's most probable label is *entailment*
for (reference, response) and for (response, reference). The paper's model is
``microsoft/deberta-v2-xlarge-mnli``; it is loaded with ``AutoTokenizer``/``AutoModelForSequenceClassification``
from a local directory or the Hugging Face cache (offline unless the user allows downloads). The entailment label
is found by name in the model's ``id2label`` (the MNLI checkpoints use index 2), not assumed.

``transformers`` and ``torch`` are an optional extra: ``pip install 'mirage-bench[nli]'``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

from sources.errors import ConfigError

PAPER_MODEL = "microsoft/deberta-v2-xlarge-mnli"
INSTALL_HINT = "pip install 'mirage-bench[nli]' (transformers, torch, sentencepiece)"


def entailment_index(id2label: dict[int, str]) -> int:
    """The class index whose label names entailment (``ENTAILMENT``, ``entailment``, ...)."""
    for index, label in id2label.items():
        if str(label).lower().startswith("entail"):
            return int(index)
    raise ConfigError(f"the NLI model's labels {dict(id2label)} name no entailment class")


def equivalent(forward: int, backward: int, entail: int) -> bool:
    """Fig. 15: equivalent only when both directions' most probable label is entailment."""
    return forward == entail and backward == entail


class NliJudge:
    """Loads an NLI model once and judges (reference, response) pairs in batches."""

    def __init__(self, model: str = PAPER_MODEL, device: str | None = None, batch_size: int = 16) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError:
            raise ConfigError(f"VQA scoring by entailment needs transformers and torch: {INSTALL_HINT}") from None
        self.torch = torch
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model)
            self.model = AutoModelForSequenceClassification.from_pretrained(model)
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConfigError(
                f"cannot load the NLI model {model!r} ({first[:160]}); download it first "
                f"(huggingface-cli download {PAPER_MODEL}), pass --nli-model DIR, or use --vqa-judge llm|exact"
            ) from None
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.entail = entailment_index(self.model.config.id2label)
        self.batch_size = batch_size
        self.name = model

    def _labels(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[int]:
        out: list[int] = []
        for start in range(0, len(premises), self.batch_size):
            batch = self.tokenizer(
                list(premises[start : start + self.batch_size]),
                list(hypotheses[start : start + self.batch_size]),
                return_tensors="pt",
                padding=True,
                truncation=True,
            )
            with self.torch.no_grad():
                logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits
            out.extend(int(i) for i in logits.argmax(dim=-1).tolist())
        return out

    def judge(self, references: Sequence[str], responses: Sequence[str]) -> list[bool]:
        """Equivalence of every (reference, response) pair."""
        if not references:
            return []
        forward = self._labels(references, responses)
        backward = self._labels(responses, references)
        return [equivalent(f, b, self.entail) for f, b in zip(forward, backward)]


@lru_cache(maxsize=2)
def load_judge(model: str = PAPER_MODEL) -> NliJudge:
    return NliJudge(model)


def describe(judge: Any) -> str:
    return f"nli:{getattr(judge, 'name', '?')}"
