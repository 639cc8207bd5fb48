"""open_clip similarity scorer: image and text embeddings, cached on disk, and image x prompt similarities.

MIOH mines hard pairs from CLIP similarities (paper Sec. 4.3, Appendix B); later builders reuse the scorer.
Design choices, and why:

* **Weights are never fetched behind the user's back.** ``load_scorer`` looks for the weights of a pretrained
  tag in the local Hugging Face cache and open_clip's URL cache itself, and hands open_clip a *file path*, so
  open_clip has no reason to touch the network. When nothing is local it raises :class:`ClipUnavailable` with
  a one-line reason; the builder catches it, skips the CLIP stage and says so. Downloading needs an explicit
  ``allow_download`` (``--clip-download``) and is refused anyway when ``HF_HUB_OFFLINE`` is set.
* **The model is built lazily.** The cache key (the model *identity*: architecture config, weights digest,
  preprocessing, precision, open_clip version) is known without building the model, so a fully cached rerun
  never constructs or runs it.
* **Decode + preprocess run in DataLoader workers** while the main process encodes the previous batch, so the
  model is not left waiting on PNG decoding; each batch is committed to the cache as one transaction.
* **Device auto**: CUDA with fp16 autocast when present, else CPU fp32. Precision is part of the identity, so
  CPU and GPU embeddings never mix in one cache.

Torch and open_clip are imported inside functions: ``import filters.clip`` is cheap and works without them
(mining helpers are re-exported from :mod:`filters.clip_mining`).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from filters.clip_cache import EmbeddingStore, model_key, text_key
from filters.clip_mining import (  # re-exported: the flat public API
    ClipPair,
    MinedPair,
    category_z_scores,
    column_z_scores,
    mine_hard_negatives,
    mine_hard_positives,
    pair_similarities,
    prompt_for,
    similarity_matrix,
)
from sources.errors import ConfigError, MirageError, SourceError
from sources.hashing import file_sha256

__all__ = [
    "ClipConfig",
    "ClipPair",
    "ClipScorer",
    "ClipStats",
    "ClipUnavailable",
    "MinedPair",
    "add_clip_arguments",
    "category_z_scores",
    "column_z_scores",
    "load_scorer",
    "mine_hard_negatives",
    "mine_hard_positives",
    "pair_similarities",
    "prompt_for",
    "similarity_matrix",
]

_PREPROCESS_KEYS = ("mean", "std", "interpolation", "resize_mode", "quick_gelu")


class ClipUnavailable(MirageError):
    """CLIP cannot run here (no local weights, open_clip not installed). The builder skips the CLIP stage,
    prints ``str(error)`` as the notice and records it in build.json."""


@dataclass
class ClipConfig:
    """How to build the scorer. ``pretrained=None`` and no ``checkpoint`` means random weights (tests, bench)."""

    model: str = "ViT-B-32"
    pretrained: str | None = "openai"
    """An open_clip pretrained tag for ``model`` (``open_clip.list_pretrained_tags_by_model``)."""
    checkpoint: str | None = None
    """A local weights file; replaces ``pretrained``. Use a ``-quickgelu`` model name for OpenAI-trained weights."""
    device: str = "auto"
    batch_size: int = 64
    num_workers: int | None = None
    """DataLoader decode workers; ``None``: :func:`default_workers` (one less than the usable CPUs)."""
    cache_dir: str | None = None
    """Mirage's cache dir; embeddings go to ``<cache_dir>/clip/embeddings.sqlite``. ``None``: in memory only."""
    weights_dir: str | None = None
    """Where downloaded weights live, if not in the Hugging Face cache (``HF_HUB_CACHE``/``HF_HOME``) or
    ``~/.cache/clip``."""
    allow_download: bool = False
    low_z: float = -1.5
    """Hard positive when the z-score of a present pair's similarity is at or below this."""
    high_z: float = 1.5
    """Hard negative when the z-score of an absent pair's similarity is at or above this."""
    enabled: bool = True
    seed: int = 0
    """Initialisation seed for random weights, so their embeddings can be cached too."""

    def to_dict(self) -> dict[str, Any]:
        """For build.json."""
        return asdict(self)

    @classmethod
    def from_args(cls, ns: argparse.Namespace, cache_dir: str | os.PathLike[str] | None = None) -> "ClipConfig":
        """The config :func:`add_clip_arguments` parsed."""
        pretrained = ns.clip_pretrained
        return cls(
            model=ns.clip_model,
            pretrained=None if pretrained in (None, "", "none") else pretrained,
            checkpoint=ns.clip_checkpoint,
            device=ns.clip_device,
            batch_size=ns.clip_batch_size,
            num_workers=ns.clip_workers,
            cache_dir=None if cache_dir is None else os.fspath(cache_dir),
            allow_download=ns.clip_download,
            low_z=ns.clip_low_z,
            high_z=ns.clip_high_z,
            enabled=not ns.no_clip,
        )


@dataclass
class ClipOptions:
    """The ``--clip-*`` options as fields, for a builder's config to inherit (same names as the argparse
    destinations of :func:`add_clip_arguments`, so config files and flags set them alike)."""

    clip_model: str = ClipConfig.model
    clip_pretrained: str | None = ClipConfig.pretrained
    clip_checkpoint: str | None = None
    clip_device: str = ClipConfig.device
    clip_batch_size: int = ClipConfig.batch_size
    clip_workers: int | None = None
    clip_low_z: float = ClipConfig.low_z
    clip_high_z: float = ClipConfig.high_z
    clip_download: bool = False
    no_clip: bool = False

    def clip_config(self, cache_dir: str | os.PathLike[str] | None) -> ClipConfig:
        names = [f.name for f in fields(ClipOptions)]
        return ClipConfig.from_args(argparse.Namespace(**{n: getattr(self, n) for n in names}), cache_dir=cache_dir)


def add_clip_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--clip-*`` options every builder that mines with CLIP shares."""
    d = ClipConfig()
    g = parser.add_argument_group("CLIP mining")
    g.add_argument("--clip-model", default=d.model, metavar="NAME", help="open_clip model name (default %(default)s)")
    g.add_argument("--clip-pretrained", default=d.pretrained, metavar="NAME",
                   help="open_clip pretrained tag, 'none' for random weights (default %(default)s)")
    g.add_argument("--clip-checkpoint", metavar="FILE", help="local weights file (replaces --clip-pretrained)")
    g.add_argument("--clip-device", default=d.device, metavar="NAME",
                   help="auto, cpu, cuda, cuda:N (default %(default)s)")
    g.add_argument("--clip-batch-size", type=int, default=d.batch_size, metavar="N",
                   help="images or prompts encoded per forward pass; lower it if memory runs out (default %(default)s)")
    g.add_argument("--clip-workers", type=int, default=None, metavar="N",
                   help="image decode workers (default the usable CPUs - 1)")
    g.add_argument("--clip-low-z", type=float, default=d.low_z, metavar="X",
                   help="hard positive at or below this z-score (default %(default)s)")
    g.add_argument("--clip-high-z", type=float, default=d.high_z, metavar="X",
                   help="hard negative at or above this z-score (default %(default)s)")
    g.add_argument("--clip-download", action="store_true",
                   help="allow downloading weights (never when HF_HUB_OFFLINE is set)")
    g.add_argument("--no-clip", action="store_true", help="skip the CLIP stage")


@dataclass
class ClipStats:
    """What the CLIP stage did, for build.json and the summary table."""

    images_requested: int = 0
    images_encoded: int = 0
    image_cache_hits: int = 0
    texts_requested: int = 0
    texts_encoded: int = 0
    text_cache_hits: int = 0
    model_load_seconds: float = 0.0
    encode_seconds: float = 0.0
    seconds: float = 0.0


@dataclass(frozen=True)
class _Weights:
    path: str | None
    """File to load; ``None`` for random weights."""
    digest: str
    tag_cfg: dict[str, Any] = field(default_factory=dict)
    """The pretrained tag's preprocessing and activation settings (empty for a checkpoint or random weights)."""


def _hf_hub_cache() -> str:
    """The Hugging Face hub cache, read from the environment now (huggingface_hub reads it at import)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return os.path.join(home, "hub")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _safe_alternatives(filename: str) -> list[str]:
    """The .safetensors names open_clip prefers for a weights file name."""
    try:
        from open_clip.pretrained import _get_safe_alternatives

        return list(_get_safe_alternatives(filename))
    except ImportError:  # private helper moved: the plain name is still tried
        return []


def _find_local_tag_weights(tag_cfg: dict[str, Any], weights_dir: str | None) -> str | None:
    """The file open_clip would download for this tag, if it already lies on disk. Never touches the network."""
    if tag_cfg.get("file") and os.path.isfile(tag_cfg["file"]):
        return str(tag_cfg["file"])
    hf = tag_cfg.get("hf_hub")
    if hf:
        repo, filename = os.path.split(hf)
        names = [filename] if filename else ["open_clip_pytorch_model.bin"]
        names = [alt for n in names for alt in _safe_alternatives(n)] + names
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:  # pragma: no cover - open_clip depends on huggingface_hub
            try_to_load_from_cache = None
        if try_to_load_from_cache is not None:
            for cache in [c for c in (weights_dir, _hf_hub_cache()) if c]:
                for name in names:
                    found = try_to_load_from_cache(repo, name, cache_dir=cache)
                    if isinstance(found, str) and os.path.isfile(found):
                        return found
    url = tag_cfg.get("url")
    if url:
        for d in [c for c in (weights_dir, os.path.expanduser("~/.cache/clip")) if c]:
            candidate = os.path.join(d, os.path.basename(url))
            if os.path.isfile(candidate):
                return candidate
    return None


def _resolve_weights(config: ClipConfig, store: EmbeddingStore) -> _Weights:
    """Which weights the scorer will load, located on disk before anything is built."""
    import open_clip

    if config.checkpoint:
        path = os.path.expanduser(config.checkpoint)
        if not os.path.isfile(path):
            raise ConfigError(f"--clip-checkpoint {config.checkpoint}: no such file")
        return _Weights(path, "sha256:" + store.weights_digest(path))
    if not config.pretrained:
        import torch

        return _Weights(None, f"random-init:seed={config.seed}:torch={torch.__version__}")
    tag_cfg = dict(open_clip.get_pretrained_cfg(config.model, config.pretrained))
    if not tag_cfg:
        if os.path.isfile(config.pretrained):  # open_clip also accepts a file here
            return _Weights(config.pretrained, "sha256:" + store.weights_digest(config.pretrained))
        tags = open_clip.list_pretrained_tags_by_model(config.model)
        raise ConfigError(
            f"--clip-pretrained {config.pretrained!r} is not a pretrained tag of {config.model}"
            f" (known: {', '.join(tags) if tags else 'none; use --clip-checkpoint FILE'})"
        )
    path = _find_local_tag_weights(tag_cfg, config.weights_dir)
    if path is None and config.allow_download and not _offline():
        try:
            path = open_clip.download_pretrained(tag_cfg, cache_dir=config.weights_dir) or None
        except Exception as e:  # any download failure means the same thing to the build: no CLIP
            raise ClipUnavailable(f"CLIP weights {config.model}/{config.pretrained} could not be downloaded: "
                                  f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e
    if path is None:
        why = "HF_HUB_OFFLINE is set" if _offline() else "downloads are off (--clip-download enables them)"
        raise ClipUnavailable(
            f"no local weights for CLIP {config.model}/{config.pretrained} ({why}); "
            f"looked in {_hf_hub_cache()} and ~/.cache/clip; pass --clip-checkpoint FILE to use a local file"
        )
    kept = {k: (list(v) if isinstance(v, tuple) else v) for k, v in tag_cfg.items() if k in _PREPROCESS_KEYS}
    return _Weights(path, "sha256:" + store.weights_digest(path), kept)


def _pick_device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--clip-device {requested}: CUDA is not available on this machine")
    return requested


def load_scorer(config: ClipConfig, executor: Any = None) -> "ClipScorer":
    """Resolve model and weights (locally) and return a scorer; the model itself is built on first use.

    ``executor`` (:mod:`sources.executors`): where images the cache lacks are encoded; ``None`` or a local
    executor encodes in this process, a Ray executor on the cluster (:mod:`filters.clip_ray`).

    Raises :class:`ClipUnavailable` when CLIP cannot run here, :class:`ConfigError` for a bad name or path.
    Because the model is built lazily (a cached rerun never builds it), the first encoding call can raise
    :class:`ClipUnavailable` too (e.g. a model whose Hugging Face text tower is not in the local cache): wrap the
    whole CLIP stage, not just this call, in ``except ClipUnavailable``.
    """
    try:
        import open_clip
        import torch  # noqa: F401
    except ImportError as e:
        raise ClipUnavailable(f"open_clip is not installed ({e.name}); pip install 'mirage-bench[clip]'") from e
    if config.batch_size < 1:
        raise ConfigError(f"--clip-batch-size must be at least 1, got {config.batch_size}")
    if config.model.startswith("hf-hub:"):
        raise ConfigError("--clip-model: hf-hub: names are not supported; download the weights and use "
                          "--clip-checkpoint FILE with a built-in model name")
    arch_cfg = open_clip.get_model_config(config.model)
    if arch_cfg is None:
        names = open_clip.list_models()
        close = difflib.get_close_matches(config.model, names, n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"{len(names)} names in open_clip.list_models()"
        raise ConfigError(f"--clip-model {config.model!r} is not an open_clip model; {hint}")
    store = EmbeddingStore(None if config.cache_dir is None else Path(config.cache_dir) / "clip" / "embeddings.sqlite")
    try:
        weights = _resolve_weights(config, store)
        device = _pick_device(config.device)
    except BaseException:
        store.close()
        raise
    identity = {
        "model": config.model,
        "arch": arch_cfg,
        "weights": weights.digest,
        "preprocess": weights.tag_cfg,
        "precision": "fp16-autocast" if device.startswith("cuda") else "fp32",
        "open_clip": open_clip.__version__,
        "decode": decode_path(device),
    }
    return ClipScorer(config, weights, identity, device, store, executor)


def default_workers() -> int:
    """Decode workers when ``--clip-workers`` is not given: one less than the CPUs this process may use
    (``sched_getaffinity``, which honours container and ``taskset`` limits), at least 0.

    Why not capped: the stage is decode-bound (issue #17: on a 16-core GPU machine 4 workers fed ViT-B-32 at 337
    images/s, 15 workers at 651), so every core that can decode should."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        usable = os.cpu_count() or 1
    return max(0, usable - 1)


def decode_path(device: str) -> str:
    """How images are decoded and preprocessed on ``device``; part of the embedding cache's identity, because
    the paths give (slightly) different pixels: ``"nvjpeg"`` (JPEGs decoded, resized and normalised on the
    GPU in batches, other files by PIL) on CUDA, ``"pil-draft"`` (PIL, JPEGs decoded at a reduced scale when
    the model's input is at most half their size) elsewhere. Both stay within cosine 0.999 of plain PIL
    decoding (tested)."""
    return "nvjpeg" if device.startswith("cuda") else "pil-draft"


def _model_input_side(preprocess_cfg: dict[str, Any]) -> int:
    size = preprocess_cfg.get("size", 224)
    return int(min(size)) if isinstance(size, (tuple, list)) else int(size)


def open_for_model(path: str, side: int | None) -> Any:
    """The image at ``path`` as RGB; a JPEG at least twice ``side`` in both dimensions is decoded at a reduced
    scale (libjpeg's DCT scaling, 1/2 to 1/8, never below ``side``), which skips most of the decoding work; the
    model's resize to ``side`` follows anyway."""
    from PIL import Image

    with Image.open(path) as im:
        if side and im.format == "JPEG" and min(im.size) >= 2 * side:
            im.draft("RGB", (side, side))
        return im.convert("RGB")


class _ImageFiles:
    """Decode + preprocess one image per item; runs in DataLoader workers. Errors travel back as text so the
    main process can raise a one-line :class:`SourceError` instead of a worker traceback."""

    def __init__(self, paths: Sequence[str], preprocess: Callable[[Any], Any], side: int | None = None) -> None:
        self.paths = list(paths)
        self.preprocess = preprocess
        self.side = side

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> tuple[int, Any, str]:
        try:
            return i, self.preprocess(open_for_model(self.paths[i], self.side)), ""
        except Exception as e:  # a broken file must name itself, whatever PIL raised
            return i, None, f"cannot decode image: {type(e).__name__}: {e}"


def decode_batch_on_device(
    paths: Sequence[str], device: str, preprocess_cfg: dict[str, Any], fallback: Callable[[str], Any]
) -> tuple[Any, list[tuple[int, str]]]:
    """A ``[n, 3, side, side]`` float batch of ``paths`` preprocessed like open_clip's transform, decoded on
    ``device``: JPEGs by ``torchvision.io.decode_jpeg`` in one batched call (nvJPEG on CUDA), then resized
    (shortest side, antialiased, the model's interpolation), centre-cropped and normalised there. A file that is
    not a JPEG or that the batched decoder rejects is decoded on its own, and if that fails too, by
    ``fallback(path)`` (the CPU transform, returning a ``[3, side, side]`` tensor). Errors come back as
    ``(index, message)`` and the batch holds only the other images, in order.
    """
    import torch
    from torchvision.io import ImageReadMode, decode_jpeg, read_file
    from torchvision.transforms.v2 import InterpolationMode
    from torchvision.transforms.v2 import functional as F

    side = _model_input_side(preprocess_cfg)
    interpolation = InterpolationMode(preprocess_cfg.get("interpolation", "bicubic"))
    mean = torch.tensor(preprocess_cfg["mean"], device=device).view(3, 1, 1)
    std = torch.tensor(preprocess_cfg["std"], device=device).view(3, 1, 1)
    out: list[Any] = [None] * len(paths)
    errors: list[tuple[int, str]] = []
    raw: dict[int, Any] = {}
    for k, p in enumerate(paths):
        try:
            data = read_file(p)
        except Exception as e:
            errors.append((k, f"cannot read image: {type(e).__name__}: {e}"))
            continue
        if data.numel() > 2 and data[0] == 0xFF and data[1] == 0xD8:  # JPEG start-of-image marker
            raw[k] = data
    decoded: dict[int, Any] = {}
    if raw:
        try:
            decoded = dict(zip(raw, decode_jpeg(list(raw.values()), mode=ImageReadMode.RGB, device=device)))
        except Exception:  # one bad file fails the batch: decode them one by one
            for k, data in raw.items():
                try:
                    decoded[k] = decode_jpeg(data, mode=ImageReadMode.RGB, device=device)
                except Exception:
                    pass
    failed = {k for k, _ in errors}
    for k, p in enumerate(paths):
        if k in failed:
            continue
        if k in decoded:
            img = F.resize(decoded[k].float(), [side], interpolation=interpolation, antialias=True)
            img = F.center_crop(img, [side, side]).clamp_(0, 255) / 255.0
            out[k] = (img - mean) / std
            continue
        try:
            out[k] = fallback(p).to(device)
        except Exception as e:
            errors.append((k, f"cannot decode image: {type(e).__name__}: {e}"))
    kept = [t for t in out if t is not None]
    return (torch.stack(kept) if kept else None), sorted(errors)


def _collate(items: list[tuple[int, Any, str]]) -> tuple[list[int], Any, list[tuple[int, str]]]:
    import torch

    ok = [(i, t) for i, t, err in items if not err]
    errors = [(i, err) for i, _, err in items if err]
    batch = torch.stack([t for _, t in ok]) if ok else None
    return [i for i, _ in ok], batch, errors


class ClipScorer:
    """Embeddings and cosine similarities for one model; build with :func:`load_scorer`."""

    def __init__(
        self, config: ClipConfig, weights: _Weights, identity: dict[str, Any], device: str, store: EmbeddingStore,
        executor: Any = None,
    ) -> None:
        self.config = config
        self.executor = executor
        self.identity = identity
        self.key = model_key(identity)
        self.device = device
        self.store = store
        self.stats = ClipStats()
        self._weights = weights
        self._model: Any = None
        self._preprocess: Any = None
        self._tokenizer: Any = None
        self._digests: dict[tuple[str, int, int], str] = {}

    # -- model -------------------------------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        """The open_clip model, built on first access."""
        if self._model is None:
            self._build()
        return self._model

    @property
    def preprocess(self) -> Callable[[Any], Any]:
        if self._model is None:
            self._build()
        return self._preprocess

    def _build(self) -> None:
        import open_clip
        import torch

        t0 = time.perf_counter()
        w, cfg = self._weights, self.config
        kwargs: dict[str, Any] = dict(pretrained_image=False, pretrained_text=False, device="cpu")
        if w.tag_cfg:
            kwargs.update(force_quick_gelu=bool(w.tag_cfg.get("quick_gelu", False)),
                          image_mean=w.tag_cfg.get("mean"), image_std=w.tag_cfg.get("std"),
                          image_interpolation=w.tag_cfg.get("interpolation"),
                          image_resize_mode=w.tag_cfg.get("resize_mode"))
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(cfg.seed)  # random weights are reproducible, hence cacheable
                model, _, preprocess = open_clip.create_model_and_transforms(cfg.model, pretrained=w.path, **kwargs)
            tokenizer = open_clip.get_tokenizer(cfg.model)  # HF-tokenizer models may need files that are not here
        except Exception as e:
            first = str(e).splitlines()[0] if str(e) else ""
            msg = f"cannot load CLIP weights {w.path} into {cfg.model}: {type(e).__name__}: {first}"
            raise (ConfigError(msg) if cfg.checkpoint else ClipUnavailable(msg)) from e
        self._model = model.eval().to(self.device)
        self._preprocess = preprocess
        self._tokenizer = tokenizer
        self.stats.model_load_seconds += time.perf_counter() - t0

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        import torch

        if self.device.startswith("cuda"):
            return torch.autocast("cuda", dtype=torch.float16)
        return contextlib.nullcontext()

    def _workers_for(self, n: int) -> int:
        if n <= self.config.batch_size:
            return 0  # one batch: a worker process would only add its start-up time
        if self.config.num_workers is not None:
            return max(0, self.config.num_workers)
        return default_workers()

    # -- embeddings --------------------------------------------------------------------------------------------
    def _digest(self, path: str) -> str:
        try:
            st = os.stat(path)
        except OSError as e:
            raise SourceError(path, "", f"image file not readable: {e.strerror or e}") from e
        sig = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        digest = self._digests.get(sig)
        if digest is None:
            digest = self._digests[sig] = file_sha256(path)
        return digest

    def image_embeddings(
        self, paths: Sequence[str | os.PathLike[str]], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        """Unit-length float32 embeddings ``[len(paths), dim]``; cached images are not decoded or encoded.

        ``on_progress(done, total)`` is called after each encoded batch (for a progress bar).
        """
        t0 = time.perf_counter()
        paths = [os.fspath(p) for p in paths]
        digests = [self._digest(p) for p in paths]
        first_path: dict[str, str] = {}  # digest -> first path with that content
        for d, p in zip(digests, paths):
            first_path.setdefault(d, p)
        found = self.store.get_many(self.key, "image", first_path)
        todo = [(d, p) for d, p in first_path.items() if d not in found]
        self.stats.images_requested += len(first_path)
        self.stats.image_cache_hits += len(first_path) - len(todo)
        if todo and getattr(self.executor, "name", "local") == "ray":
            from filters.clip_ray import encode_images_on_ray

            encode_images_on_ray(self, self.executor, todo, found, on_progress)
        elif todo:
            self._encode_images(todo, found, on_progress)
        self.stats.seconds += time.perf_counter() - t0
        if not paths:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[d] for d in digests])

    def _encode_images(
        self, todo: list[tuple[str, str]], found: dict[str, np.ndarray], on_progress: Callable[[int, int], None] | None
    ) -> None:
        import torch
        from torch.utils.data import DataLoader

        model, preprocess = self.model, self.preprocess
        if self.identity.get("decode") == "nvjpeg":
            self._encode_images_on_device(todo, found, on_progress)
            return
        t0 = time.perf_counter()
        workers = self._workers_for(len(todo))
        side = _model_input_side(self.preprocess_cfg)
        loader = DataLoader(
            _ImageFiles([p for _, p in todo], preprocess, side),  # type: ignore[arg-type]
            batch_size=self.config.batch_size,
            num_workers=workers,
            collate_fn=_collate,
            pin_memory=self.device.startswith("cuda"),
            prefetch_factor=4 if workers else None,
        )
        done = 0
        with torch.inference_mode(), self._autocast():
            for idx, batch, errors in loader:
                if errors:
                    i, err = errors[0]
                    raise SourceError(todo[i][1], "", err)
                feats = model.encode_image(batch.to(self.device, non_blocking=True))
                vecs = torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy()
                done = self._keep_encoded([todo[i][0] for i in idx], vecs, found, done, len(todo), on_progress)
        self.stats.encode_seconds += time.perf_counter() - t0

    def _keep_encoded(
        self, keys: list[str], vecs: np.ndarray, found: dict[str, np.ndarray], done: int, total: int,
        on_progress: Callable[[int, int], None] | None,
    ) -> int:
        """Cache one encoded batch (one SQLite transaction), add it to ``found`` and the stats, report progress;
        the count of images done so far. Every encode path (DataLoader, on-device decoding, Ray) ends here."""
        self.store.put_many(self.key, "image", keys, vecs)
        found.update(zip(keys, vecs))
        done += len(keys)
        self.stats.images_encoded += len(keys)
        if on_progress is not None:
            on_progress(done, total)
        return done

    @property
    def preprocess_cfg(self) -> dict[str, Any]:
        """open_clip's preprocessing settings of the model (size, mean, std, interpolation)."""
        return dict(getattr(self.model.visual, "preprocess_cfg", None) or {"size": 224})

    def _encode_images_on_device(
        self, todo: list[tuple[str, str]], found: dict[str, np.ndarray], on_progress: Callable[[int, int], None] | None
    ) -> None:
        """The CUDA path: batches decoded, resized and normalised on the GPU (:func:`decode_batch_on_device`)."""
        import torch

        model, preprocess, cfg = self.model, self.preprocess, self.preprocess_cfg
        t0 = time.perf_counter()
        done = 0
        with torch.inference_mode(), self._autocast():
            for start in range(0, len(todo), self.config.batch_size):
                chunk = todo[start:start + self.config.batch_size]
                batch, errors = decode_batch_on_device(
                    [p for _, p in chunk], self.device, cfg, lambda p: preprocess(open_for_model(p, None)))
                if errors:
                    i, err = errors[0]
                    raise SourceError(chunk[i][1], "", err)
                feats = model.encode_image(batch)
                vecs = torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy()
                done = self._keep_encoded([d for d, _ in chunk], vecs, found, done, len(todo), on_progress)
        self.stats.encode_seconds += time.perf_counter() - t0

    def text_embeddings(self, prompts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 embeddings ``[len(prompts), dim]`` of the prompts, cached like images."""
        import torch

        t0 = time.perf_counter()
        keys = [text_key(p) for p in prompts]
        unique: dict[str, str] = {}
        for k, p in zip(keys, prompts):
            unique.setdefault(k, p)
        found = self.store.get_many(self.key, "text", unique)
        todo = [(k, p) for k, p in unique.items() if k not in found]
        self.stats.texts_requested += len(unique)
        self.stats.text_cache_hits += len(unique) - len(todo)
        if todo:
            model = self.model
            t1 = time.perf_counter()
            with torch.inference_mode(), self._autocast():
                for start in range(0, len(todo), self.config.batch_size):
                    chunk = todo[start : start + self.config.batch_size]
                    tokens = self._tokenizer([p for _, p in chunk]).to(self.device)
                    feats = model.encode_text(tokens)
                    vecs = torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy()
                    self.store.put_many(self.key, "text", [k for k, _ in chunk], vecs)
                    found.update(zip((k for k, _ in chunk), vecs))
                    self.stats.texts_encoded += len(chunk)
            self.stats.encode_seconds += time.perf_counter() - t1
        self.stats.seconds += time.perf_counter() - t0
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def similarity(self, image_paths: Sequence[str | os.PathLike[str]], prompts: Sequence[str]) -> np.ndarray:
        """Cosine similarity ``[len(image_paths), len(prompts)]`` (float32)."""
        if not image_paths or not prompts:
            return np.zeros((len(image_paths), len(prompts)), dtype=np.float32)
        return self.image_embeddings(image_paths) @ self.text_embeddings(prompts).T

    def describe(self) -> dict[str, Any]:
        """Model identity and stage statistics for build.json (no paths of the user's home, no secrets)."""
        return {
            "model": self.config.model,
            "pretrained": None if self.config.checkpoint else self.config.pretrained,
            "checkpoint": os.path.basename(self.config.checkpoint) if self.config.checkpoint else None,
            "weights": self._weights.digest,
            "device": self.device,
            "precision": self.identity["precision"],
            "cache_key": self.key,
            "stats": asdict(self.stats),
        }

    def close(self) -> None:
        self.store.close()
