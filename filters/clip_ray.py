"""CLIP image embeddings as a Ray Data pipeline: decode on CPU, encode in GPU (or CPU) actors.

:class:`filters.clip.ClipScorer` hands the images its cache lacks to :func:`encode_images_on_ray` when it was
given a :class:`sources.executors.RayExecutor`; everything else (content hashing, cache look-ups, text prompts,
the similarity matrix) stays on the driver. The pipeline:

* with GPU actors: ``from_items(batches) -> map_batches(decode_batch, CPU tasks) ->
  map_batches(ClipImageEncoder, GPU actors) -> driver``;
* on a CPU-only cluster: ``from_items(batches) -> map_batches(ClipImageEncoder, CPU actors) -> driver``, each
  actor decoding its own batch (Ray Data would fuse the two stages anyway when their resources are equal; doing
  it explicitly means decode tasks can never wait for CPUs the actors hold).

Choices, and why:

* **A row is one batch of the local executor** (``--clip-batch-size`` images, or ``--ray-batch-size``), in the
  same order: the encoder sees the very batches the local DataLoader would make, so the embeddings are the same
  numbers and a build through Ray is byte-identical to a local one (CPU matrix products may depend on how many
  rows are multiplied together). It is also the unit a dead worker loses: a task or actor call is retried
  whole, nothing of it has reached the cache.
* **Workers return vectors to the driver, which writes the cache** (one SQLite transaction per batch, as
  locally). SQLite on a network file system is not safe for concurrent writers, and the vectors are small
  (512 floats an image), so no shared path is needed for the CLIP stage: only the images must be readable
  from every node (paths are sent, not pixels).
* **Decode and preprocess run on CPU**, with the driver's open_clip transform shipped to the workers, so GPU
  actors only ever run the model - by the decode path the cache key names, as locally: ``pil-draft``
  (:func:`filters.clip_decode.open_for_model`) when the driver has no GPU; when the driver runs CLIP on CUDA the key
  names ``nvjpeg``, and the GPU actors decode their batches on the device
  (:func:`filters.clip_decode.decode_batch_on_device`) instead. Errors travel back as values: a corrupt image becomes the same one-line
  :class:`SourceError` as locally (raised on the driver, at the first batch in input order that has one;
  batches before it are cached, as locally).
* **Encoder actors** hold ``--ray-gpus-per-actor`` GPUs (a fraction shares one GPU between several actors) or
  none (CPU actors). They encode at the precision the cache key names (fp32, or fp16 autocast when the driver
  runs CLIP on CUDA), never another, so embeddings of different precisions never share a cache entry. A model
  registered only on the driver (a custom open_clip config) is registered on the actors from the
  architecture in the model identity. Failures are Ray Data's to handle, as its users expect: a decode task
  whose worker died is retried, a dead actor is restarted and its call retried (without limit).
* **Order**: results are consumed in input order (``preserve_order``), which keeps the first-error rule above
  and the cache writes in the local order.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from typing import Any, Callable, Sequence

import numpy as np

from filters.clip_cache import EmbeddingStore
from filters.clip_decode import decode_batch_on_device, model_input_side, open_for_model
from sources.errors import ConfigError, SourceError

__all__ = ["ClipImageEncoder", "batch_listeners", "decode_batch", "encode_images_on_ray"]

batch_listeners: list[Callable[[dict[str, Any]], None]] = []
"""Called on the driver with each encoded batch's metadata (``batch``, ``pid`` of the actor, ``images``):
for monitoring, and for the fault tests, which kill the reporting actor by its process id."""


def decode_batch(rows: dict[str, np.ndarray], preprocess: Callable[[Any], Any], side: int | None = None
                 ) -> dict[str, np.ndarray]:
    """Ray Data CPU stage: decode and preprocess each row's images into one ``[n, 3, H, W]`` float32 array, the
    way the local DataLoader does (:func:`filters.clip_decode.open_for_model`: the ``pil-draft`` decode path).

    A file that cannot be decoded ends the row's decoding: its position and the one-line reason travel on
    (the driver raises it, as the local DataLoader path does)."""
    out: dict[str, list[Any]] = {"batch": [], "pixels": [], "error": [], "error_at": []}
    for batch, paths in zip(rows["batch"], rows["paths"]):
        tensors, error, error_at = [], "", -1
        for i, path in enumerate(paths):
            try:
                tensors.append(preprocess(open_for_model(path, side)).numpy())
            except Exception as e:  # a broken file must name itself, whatever PIL raised
                error, error_at = f"cannot decode image: {type(e).__name__}: {e}", i
                break
        empty = error or not tensors
        pixels = np.zeros((0,), np.float32) if empty else np.stack(tensors).astype(np.float32, copy=False)
        out["batch"].append(int(batch))
        out["pixels"].append(pixels)
        out["error"].append(error)
        out["error_at"].append(error_at)
    return {"batch": np.array(out["batch"], dtype=np.int64), "pixels": _ragged(out["pixels"]),
            "error": np.array(out["error"], dtype=object), "error_at": np.array(out["error_at"], dtype=np.int64)}


def _ragged(arrays: list[np.ndarray]) -> np.ndarray:
    """An object array of arrays (Ray Data stores it as a variable-shaped tensor column)."""
    holder = np.empty(len(arrays), dtype=object)
    for i, a in enumerate(arrays):
        holder[i] = a
    return holder


class ClipImageEncoder:
    """Ray Data actor: builds the scorer's model once, then encodes decoded batches to unit vectors.

    The driver's scorer class travels in the spec (``scorer_type``, pickled by reference), so this module, which
    :mod:`filters.clip` calls, never imports it back."""

    def __init__(self, spec: dict[str, Any]) -> None:
        import open_clip
        import torch

        config, weights, identity = spec["config"], spec["weights"], spec["identity"]
        if open_clip.get_model_config(config.model) is None:  # registered on the driver only: ship its arch
            folder = tempfile.mkdtemp(prefix="mirage-clip-arch-")
            path = os.path.join(folder, f"{config.model}.json")
            with open(path, "w") as fh:
                json.dump(identity["arch"], fh)
            open_clip.add_model_config(path)
        device = "cuda" if spec["gpus"] > 0 and torch.cuda.is_available() else "cpu"
        self.fp16 = identity["precision"] == "fp16-autocast"  # checked on the driver: then the actor has a GPU
        self.preprocess, self.side = spec["preprocess"], spec["side"]
        self.on_device = identity.get("decode") == "nvjpeg"  # the driver's key names GPU decoding: do it here
        self.scorer = spec["scorer_type"](config, weights, identity, device, EmbeddingStore(None))
        self.model = self.scorer.model
        self.device = device
        self.pid = os.getpid()

    def _decode_on_device(self, rows: dict[str, np.ndarray]) -> dict[str, Any]:
        """The ``nvjpeg`` decode path of the local CUDA executor (:func:`filters.clip_decode.decode_batch_on_device`)."""
        out: dict[str, list[Any]] = {"batch": [], "pixels": [], "error": [], "error_at": []}
        for batch, paths in zip(rows["batch"], rows["paths"]):
            pixels, errors = decode_batch_on_device(list(paths), self.device, self.scorer.preprocess_cfg,
                                                    lambda p: self.preprocess(open_for_model(p, None)))
            out["batch"].append(batch)
            out["pixels"].append(None if errors else pixels)
            out["error"].append(errors[0][1] if errors else "")
            out["error_at"].append(errors[0][0] if errors else -1)
        return out

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        import torch

        return torch.autocast("cuda", dtype=torch.float16) if self.fp16 else contextlib.nullcontext()

    def __call__(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        import torch

        if "paths" in rows and self.on_device:
            rows = self._decode_on_device(rows)
        elif "paths" in rows:  # CPU actors decode their own batches
            rows = decode_batch(rows, self.preprocess, self.side)
        vectors = []
        with torch.inference_mode(), self._autocast():
            for pixels, error in zip(rows["pixels"], rows["error"]):
                if error:
                    vectors.append(np.zeros((0,), np.float32))
                    continue
                batch = pixels if torch.is_tensor(pixels) else torch.tensor(pixels)  # a copy: Ray's is read-only
                feats = self.model.encode_image(batch.to(self.device))
                vectors.append(torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy())
        return {"batch": rows["batch"], "vectors": _ragged(vectors), "error": rows["error"],
                "error_at": rows["error_at"], "pid": np.full(len(vectors), self.pid, dtype=np.int64)}


def _actor_count(executor: Any, n_batches: int) -> int:
    """``--ray-actors``, else one per GPU share, else one per ``--ray-cpus-per-task`` CPUs; never more actors
    than batches. A layout the cluster cannot hold is a :class:`ConfigError`, not a hang."""
    s = executor.settings
    resources = executor.cluster_resources()
    gpus, cpus = resources.get("GPU", 0.0), resources.get("CPU", 0.0)
    if s.actors is not None:
        wanted = s.actors
    else:
        wanted = int(gpus / s.gpus_per_actor) if s.gpus_per_actor > 0 and gpus else int(cpus // s.cpus_per_task)
    actors = max(1, min(wanted, n_batches))
    if s.gpus_per_actor > 0 and gpus < s.gpus_per_actor:
        raise ConfigError(f"--ray-gpus-per-actor {s.gpus_per_actor:g}: the Ray cluster has {gpus:g} GPUs")
    if s.gpus_per_actor > 0 and cpus < s.cpus_per_task:
        raise ConfigError(f"the Ray cluster has {cpus:g} CPUs: no decode task of {s.cpus_per_task:g} CPU fits")
    if s.gpus_per_actor == 0 and actors * s.cpus_per_task > cpus:
        raise ConfigError(f"the Ray cluster has {cpus:g} CPUs: {actors} CPU encoder actors of {s.cpus_per_task:g} "
                          "CPU do not fit; lower --ray-actors or --ray-cpus-per-task")
    return actors


def encode_images_on_ray(
    scorer: Any,
    executor: Any,
    todo: Sequence[tuple[str, str]],
    found: dict[str, np.ndarray],
    on_progress: Callable[[int, int], None] | None,
) -> None:
    """Encode ``todo`` (``(sha256, path)`` pairs) on the cluster; store and return the vectors through
    ``ClipScorer._keep_encoded``, as the local paths do (cache, ``found``, stats, progress)."""
    executor.ray  # noqa: B018 - connects (starts or joins the cluster) before Ray Data plans anything
    from ray import data as ray_data

    settings = executor.settings
    t0 = time.perf_counter()
    size = settings.batch_size or scorer.config.batch_size
    batches = [list(todo[i : i + size]) for i in range(0, len(todo), size)]
    rows = [{"batch": k, "paths": [p for _, p in b]} for k, b in enumerate(batches)]
    side = model_input_side(scorer.preprocess_cfg)
    spec = {"scorer_type": type(scorer), "config": scorer.config, "weights": scorer._weights,
            "identity": scorer.identity, "gpus": settings.gpus_per_actor, "preprocess": scorer.preprocess,
            "side": side}
    decode_in_tasks = settings.gpus_per_actor > 0 and scorer.identity.get("decode") != "nvjpeg"
    if scorer.identity["precision"] == "fp16-autocast" and not settings.gpus_per_actor:
        raise ConfigError("the CLIP cache key names fp16 autocast (the driver runs CLIP on CUDA), but the Ray "
                          "encoder actors have no GPU: give --ray-gpus-per-actor, or --clip-device cpu")
    actors = _actor_count(executor, len(batches))
    ctx = ray_data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ds = ray_data.from_items(rows, override_num_blocks=len(rows))
    if decode_in_tasks:  # decode on CPU tasks, so that the GPU actors only run the model
        ds = ds.map_batches(decode_batch, fn_kwargs={"preprocess": scorer.preprocess, "side": side}, batch_size=1,
                            batch_format="numpy", num_cpus=settings.cpus_per_task)
    # Ray Data's own fault tolerance: a dead decode task is retried, a dead actor restarted and its call retried
    ds = ds.map_batches(ClipImageEncoder, fn_constructor_kwargs={"spec": spec}, batch_size=1, batch_format="numpy",
                        compute=ray_data.ActorPoolStrategy(size=actors), num_gpus=settings.gpus_per_actor or None,
                        num_cpus=0 if settings.gpus_per_actor else settings.cpus_per_task)
    done, pids = 0, set()
    for out in ds.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=2):
        for batch, vecs, error, error_at, pid in zip(out["batch"], out["vectors"], out["error"], out["error_at"],
                                                      out["pid"]):
            pairs = batches[int(batch)]
            if error:
                raise SourceError(pairs[int(error_at)][1], "", str(error))
            keys = [d for d, _ in pairs]
            done = scorer._keep_encoded(keys, np.asarray(vecs, dtype=np.float32), found, done, len(todo),
                                        on_progress)
            pids.add(int(pid))
            for listener in batch_listeners:
                listener({"batch": int(batch), "pid": int(pid), "images": len(keys)})
    scorer.stats.encode_seconds += time.perf_counter() - t0
    executor.notes.setdefault("clip", []).append({  # one entry per pipeline (MIOH runs one per source)
        "images": len(todo), "batches": len(batches), "batch_size": size, "actors": actors,
        "actor_processes_seen": len(pids), "gpus_per_actor": settings.gpus_per_actor})
