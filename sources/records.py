"""The record types every source reader returns.

Readers of public datasets (COCO-ReM, PACO, SVG, Visual Genome, ...) and the demo world all produce the same
frozen dataclasses, so filters and builders never know which file format a record came from.

Conventions:

* boxes are ``(x, y, w, h)`` in pixels, origin at the top-left corner;
* masks stay encoded as COCO run-length encoding (``{"size": [h, w], "counts": str}``, compressed counts) until
  a filter needs them (``pycocotools.mask.decode``); decoding every mask up front would cost memory for nothing;
* ids are strings so that sources with integer and string ids look alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

BBox = tuple[float, float, float, float]
"""A box as ``(x, y, w, h)`` in pixels."""

RLE = Mapping[str, Any]
"""A COCO run-length-encoded mask: ``{"size": [height, width], "counts": str}``."""


@dataclass(frozen=True)
class Instance:
    """One annotated object in an image."""

    id: str
    category: str
    bbox: BBox
    area: float
    """Visible pixel area (of the mask when there is one, else of the box)."""
    rle: RLE | None = None
    """Visible (modal) mask, compressed RLE; ``None`` when the source has boxes only."""
    iscrowd: bool = False
    """A crowd region covers several objects of the category: it can be neither counted nor trusted alone."""
    attributes: tuple[str, ...] = ()
    """Object-level attribute names (PACO colour, pattern, material, transparency; demo colour and pattern)."""
    amodal_area: float | None = None
    """Area of the whole object including occluded parts, when known exactly (the demo world)."""
    z: int | None = None
    """Draw order when known (the demo world): a larger value is in front of a smaller one."""
    amodal_rle: RLE | None = None
    """Whole-object mask inside the image, occluded parts included (compressed RLE), when known exactly (the
    demo world); ``None`` otherwise. The demo world's "in front of"/"behind" relations are defined on it."""
    unknown_attribute_types: frozenset[str] = frozenset()
    """Attribute types (``colour``, ``pattern``, ``material``, ``transparency``) the annotators could not
    determine for this object (PACO's ``unknown_color``, ``unknown_pattern_marking``, ... flags): no attribute of
    such a type may be denied for it."""


@dataclass(frozen=True)
class Relation:
    """A directed relation ``subject predicate object`` between two instances of one image."""

    subject: str
    """``Instance.id`` of the subject."""
    predicate: str
    object: str
    """``Instance.id`` of the object."""


@dataclass(frozen=True)
class ImageRecord:
    """An image with its annotations."""

    id: str
    source: str
    file: str
    """Path of the image file as the user gave it (source images) or inside the cache (generated images)."""
    width: int
    height: int
    instances: tuple[Instance, ...] = ()
    relations: tuple[Relation, ...] = ()
    verified_absent: frozenset[str] = frozenset()
    """Categories someone looked for and did not find (LVIS/PACO ``neg_category_ids``, or categories an
    exhaustive source covering the same image does not show). Only read when the record set is not
    :attr:`RecordSet.exhaustive`: there, a category without an instance is absent anyway."""
    not_exhaustive: frozenset[str] = frozenset()
    """Categories present but not every instance annotated (LVIS/PACO ``not_exhaustive_category_ids``): they
    cannot be counted, and an unannotated instance may carry any attribute."""
    attributes_verified_absent: frozenset[str] = frozenset()
    """Categories verified absent by the attribute annotation pass (PACO ``neg_category_ids_attrs``)."""
    attributes_not_exhaustive: frozenset[str] = frozenset()
    """Categories whose instances' attributes are not all annotated (PACO ``not_exhaustive_category_ids_attrs``)."""
    coco_id: str | None = None
    """The COCO image id when the source says the image is a COCO image (Visual Genome's ``coco_id``, an SVG
    row's ``coco_id``), so an exhaustive COCO file can verify absence there (:mod:`sources.absence`)."""

    def instance(self, instance_id: str) -> Instance:
        """The instance with this id (``KeyError`` when absent)."""
        for inst in self.instances:
            if inst.id == instance_id:
                return inst
        raise KeyError(instance_id)

    @property
    def categories(self) -> frozenset[str]:
        """Categories with at least one instance (crowd regions included)."""
        return frozenset(inst.category for inst in self.instances)


@dataclass(frozen=True)
class RecordSet:
    """Everything one reader returned for one annotation file."""

    source: str
    """Short source name: ``"coco-rem"``, ``"paco"``, ``"svg"``, ``"visual_genome"``, ``"demo"``, ..."""
    path: str
    """The annotation file that was read (or ``"demo:seed=N"`` for the demo world)."""
    categories: tuple[str, ...]
    """The whole category vocabulary, including categories absent from every image (they are negatives too)."""
    images: tuple[ImageRecord, ...]
    attribute_types: Mapping[str, str] = field(default_factory=dict)
    """Attribute name -> type (``colour``, ``pattern``, ``material``, ``transparency``)."""
    exhaustive: bool = False
    """Every instance of every category in :attr:`categories` is annotated in every image (COCO, COCO-ReM, the
    demo world): a category without an instance is absent. ``False`` for federated sources (LVIS/PACO: only
    the categories in an image's ``neg_category_ids`` are known absent) and open-vocabulary scene graphs (SVG,
    Visual Genome: nobody lists what is *not* there); their absences come from
    :attr:`ImageRecord.verified_absent` only."""
    generated: bool = False
    """True when Mirage made the images itself (the demo world): builds copy them into their ``images/``."""
    license: str = ""
    """Licence of the source's annotations and images, for data cards."""


@dataclass(frozen=True)
class VideoRecord:
    """A video file (or a folder of frames) with what is known about it."""

    id: str
    source: str
    file: str
    frame_count: int | None = None
    fps: float | None = None
    width: int | None = None
    height: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Source-specific fields (NExT-QA question rows, demo event script, ...)."""
