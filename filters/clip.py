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
from filters.clip_decode import (  # re-exported: callers and tests name them from here
    DeviceBatches,
    ImageFiles,
    collate,
    decode_batch_on_device,
    decode_path,
    default_workers,
    model_input_side,
    open_for_model,
)
from commandline.options import add_options, option
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
from filters.clip_ray import encode_images_on_ray
from sources.errors import ConfigError, MirageError, SourceError
from sources.hashing import file_sha256, settled, signature_text

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
    "decode_batch_on_device",
    "decode_path",
    "default_workers",
    "load_scorer",
    "mine_hard_negatives",
    "mine_hard_positives",
    "open_for_model",
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
    def from_args(cls, ns: argparse.Namespace, cache_dir: str | os.PathLike[str] | None = None) -> ClipConfig:
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


CLIP_GROUP = "CLIP mining"


@dataclass
class ClipOptions:
    """The ``--clip-*`` options, declared once as fields (:mod:`commandline.options`), for a builder's config to
    inherit."""

    clip_model: str = option(ClipConfig.model, metavar="NAME", group=CLIP_GROUP,
                             help="open_clip model name (default {default})")
    clip_pretrained: str | None = option(ClipConfig.pretrained, metavar="NAME", group=CLIP_GROUP,
                                         help="open_clip pretrained tag, 'none' for random weights (default {default})")
    clip_checkpoint: str | None = option(None, metavar="FILE", group=CLIP_GROUP,
                                         help="local weights file (replaces --clip-pretrained)")
    clip_device: str = option(ClipConfig.device, metavar="NAME", group=CLIP_GROUP,
                              help="auto, cpu, cuda, cuda:N (default {default})")
    clip_batch_size: int = option(
        ClipConfig.batch_size, metavar="N", group=CLIP_GROUP,
        help="images or prompts encoded per forward pass; lower it if memory runs out (default {default})")
    clip_workers: int | None = option(None, metavar="N", group=CLIP_GROUP,
                                      help="image decode workers (default the usable CPUs - 1)")
    clip_low_z: float = option(ClipConfig.low_z, metavar="X", group=CLIP_GROUP,
                               help="hard positive at or below this z-score (default {default})")
    clip_high_z: float = option(ClipConfig.high_z, metavar="X", group=CLIP_GROUP,
                                help="hard negative at or above this z-score (default {default})")
    clip_download: bool = option(False, group=CLIP_GROUP,
                                 help="allow downloading weights (never when HF_HUB_OFFLINE is set)")
    no_clip: bool = option(False, group=CLIP_GROUP, help="skip the CLIP stage")

    def clip_config(self, cache_dir: str | os.PathLike[str] | None) -> ClipConfig:
        names = [f.name for f in fields(ClipOptions)]
        return ClipConfig.from_args(argparse.Namespace(**{n: getattr(self, n) for n in names}), cache_dir=cache_dir)


def add_clip_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--clip-*`` options of :class:`ClipOptions` on a parser of its own (a builder's config inherits
    them instead)."""
    add_options(parser, ClipOptions)


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


_StatPath = tuple[str, os.stat_result]
"""A file to hash: its path and the ``stat`` its signature was taken from."""


class _Done:
    """The event of a copy that is already complete (CPU tensors): ``synchronize`` returns at once."""

    def synchronize(self) -> None:
        return None


def _copy_done(device: str) -> Any:
    """An event recorded after the work queued so far on ``device``'s current stream (CUDA), or :class:`_Done`."""
    import torch

    if not device.startswith("cuda"):
        return _Done()
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(torch.device(device)))
    return event


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
        """The content hash of one image (see :meth:`_digests_of`)."""
        return self._digests_of([path])[0]

    def _digests_of(self, paths: list[str]) -> list[str]:
        """Content hashes of ``paths``, in order (see :meth:`_known_digests`); the rest are hashed here."""
        keys, digest_of, unhashed = self._known_digests(paths)
        digest_of.update(self._hash_files(unhashed))
        return [digest_of[k] for k in keys]

    def _known_digests(self, paths: list[str]) -> tuple[list[str], dict[str, str], dict[str, _StatPath]]:
        """What the embedding cache is keyed by: each file's content hash, so a renamed or copied image is not
        encoded twice. Returns each path's :func:`~sources.hashing.signature` (device, inode, size, mtime, ctime)
        as text, ``{signature: sha256}`` for the files the store already knows, which are not read at all (a
        rerun over 4,000 images costs 4,000 ``stat`` calls instead of hashing 240 MB), and ``{signature: (path,
        stat)}`` for the others. The first missing file, in order, raises."""
        stats = []
        for p in paths:
            try:
                stats.append(os.stat(p))
            except OSError as e:
                raise SourceError(p, "", f"image file not readable: {e.strerror or e}") from e
        keys = [signature_text(st) for st in stats]
        known = self.store.content_digests(keys)
        unhashed = {k: (p, st) for k, p, st in zip(keys, paths, stats) if k not in known}
        return keys, known, unhashed

    def _hash_files(self, files: dict[str, _StatPath]) -> dict[str, str]:
        """sha256 of each file, remembered by the store under its signature. In this thread: threads were
        measured slower (4,000 JPEGs on 16 cores: 0.29 s in one, 0.37 to 0.65 s in 4 to 16)."""
        out = {}
        for key, (path, st) in files.items():
            try:
                out[key] = file_sha256(path, st=st)
            except OSError as e:
                raise SourceError(path, "", f"image file not readable: {e.strerror or e}") from e
        self._remember(files, out)
        return out

    def _remember(self, files: dict[str, _StatPath], digests: dict[str, str]) -> None:
        """Store ``{signature: sha256}`` of the files that have not changed in the last seconds
        (:func:`~sources.hashing.settled`: a newer one may change again without its signature moving)."""
        self.store.put_content_digests({k: d for k, d in digests.items() if settled(files[k][1])})

    def image_embeddings(
        self, paths: Sequence[str | os.PathLike[str]], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        """Unit-length float32 embeddings ``[len(paths), dim]``; cached images are not decoded or encoded.

        ``on_progress(done, total)`` is called after each encoded batch (for a progress bar). On the CUDA path,
        files the store has never seen are hashed by the threads that read them for decoding
        (:meth:`_encode_images_on_device`), so hashing overlaps the GPU's work instead of preceding it.
        """
        t0 = time.perf_counter()
        paths = [os.fspath(p) for p in paths]
        keys, digest_of, unhashed = self._known_digests(paths)
        on_ray = getattr(self.executor, "name", "local") == "ray"
        streamed = unhashed if self.identity.get("decode") == "nvjpeg" and not on_ray else {}
        if unhashed and not streamed:
            digest_of.update(self._hash_files(unhashed))
        first_path: dict[str, str] = {}  # digest -> first path with that content
        for k, p in zip(keys, paths):
            if k in digest_of:
                first_path.setdefault(digest_of[k], p)
        found = self.store.get_many(self.key, "image", first_path)
        todo = [(d, p) for d, p in first_path.items() if d not in found]
        self.stats.image_cache_hits += len(first_path) - len(todo)
        if todo and on_ray:
            encode_images_on_ray(self, self.executor, todo, found, on_progress)
        elif todo or streamed:
            digest_of.update(self._encode_images(todo, found, on_progress, streamed))
        self.stats.images_requested += len({digest_of[k] for k in keys})
        self.stats.seconds += time.perf_counter() - t0
        if not paths:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[digest_of[k]] for k in keys])

    def _encode_images(
        self, todo: list[tuple[str, str]], found: dict[str, np.ndarray], on_progress: Callable[[int, int], None] | None,
        unhashed: dict[str, _StatPath],
    ) -> dict[str, str]:
        """Encode ``todo`` (``(sha256, path)``) into ``found`` and the cache; on the CUDA path also the
        ``unhashed`` files (hashed on the way), returning their ``{signature: sha256}``."""
        import torch
        from torch.utils.data import DataLoader

        model, preprocess = self.model, self.preprocess
        if self.identity.get("decode") == "nvjpeg":
            return self._encode_images_on_device(todo, found, on_progress, unhashed)
        t0 = time.perf_counter()
        workers = self._workers_for(len(todo))
        side = model_input_side(self.preprocess_cfg)
        loader = DataLoader(
            ImageFiles([p for _, p in todo], preprocess, side),  # type: ignore[arg-type]
            batch_size=self.config.batch_size,
            num_workers=workers,
            collate_fn=collate,
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
        return {}

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
        self, todo: list[tuple[str, str]], found: dict[str, np.ndarray], on_progress: Callable[[int, int], None] | None,
        unhashed: dict[str, _StatPath],
    ) -> dict[str, str]:
        """The CUDA path: batches read, hashed (``unhashed`` files) and decoded by threads ahead of the GPU, then
        resized, normalised and encoded there (:class:`DeviceBatches`). A file hashed on the way whose content is
        cached already, or was met earlier in this call, is dropped from its batch before the forward pass.
        Each batch's vectors are copied to the host without waiting and cached once the next batch is queued,
        so the GPU works while the CPU writes SQLite. Returns ``{signature: sha256}`` of ``unhashed``."""
        import torch

        model, preprocess, cfg = self.model, self.preprocess, self.preprocess_cfg
        t0 = time.perf_counter()
        paths = [p for _, p in todo] + [p for p, _ in unhashed.values()]
        digests: list[str | None] = [d for d, _ in todo] + [None] * len(unhashed)
        signatures = [None] * len(todo) + list(unhashed)
        new: dict[str, str] = {}
        seen: set[str] = set()
        done = 0
        pending: tuple[list[str], Any, Any] | None = None  # (digests, host tensor, copy-done event)

        def keep(item: tuple[list[str], Any, Any]) -> int:
            keys, host, copied = item
            copied.synchronize()
            return self._keep_encoded(keys, host.numpy(), found, done, len(paths), on_progress)

        try:
            with DeviceBatches(paths, self.config.batch_size, self.device, cfg,
                               lambda p: preprocess(open_for_model(p, None)), hashed=range(len(todo), len(paths))
                               ) as batches, torch.inference_mode(), self._autocast():
                for start, batch, errors, hashed in batches:
                    if errors:
                        i, err = errors[0]
                        raise SourceError(paths[start + i], "", err)
                    for j, d in hashed.items():
                        digests[start + j] = new[signatures[start + j]] = d  # type: ignore[index]
                    rows = self._rows_to_encode(digests[start:start + len(batch)], list(hashed.values()), found, seen)
                    done += len(batch) - len(rows)
                    if not rows:
                        continue
                    if len(rows) < len(batch):
                        batch = batch[torch.tensor(rows, device=batch.device)]
                    feats = torch.nn.functional.normalize(model.encode_image(batch).float(), dim=-1)
                    host = feats.to("cpu", non_blocking=True)  # pinned: returns at once
                    copied = _copy_done(self.device)
                    if pending is not None:
                        done, pending = keep(pending), None
                    pending = ([digests[start + j] for j in rows], host, copied)  # type: ignore[misc]
        finally:  # also on an error or Ctrl-C: the batch already encoded reaches the cache
            if pending is not None:
                keep(pending)
            self._remember(unhashed, new)
        self.stats.encode_seconds += time.perf_counter() - t0
        return new

    def _rows_to_encode(
        self, digests: list[str | None], hashed: list[str], found: dict[str, np.ndarray], seen: set[str]
    ) -> list[int]:
        """Rows of a batch whose content is neither cached (looked up now for ``hashed``, the digests learnt on
        the way; their vectors join ``found``) nor already met in this call (``seen``, updated)."""
        cached = self.store.get_many(self.key, "image", [d for d in hashed if d not in found and d not in seen])
        found.update(cached)
        self.stats.image_cache_hits += len(cached)
        rows = []
        for j, d in enumerate(digests):
            if d is not None and d not in found and d not in seen:
                seen.add(d)
                rows.append(j)
        return rows

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
