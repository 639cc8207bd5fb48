"""The release's licence, read from what the build recorded about its sources.

Deny by default: a source whose licence the build did not record and Mirage does not know makes the card's licence
``unknown``, said in bold, until the release names one with ``--license``.
"""

from __future__ import annotations

from typing import Any, Mapping

from builders.registry import specs
from sources.errors import ConfigError

def known_licences() -> dict[str, tuple[str, str]]:
    """Source name -> (Hub licence id, note) of every source a known benchmark declares it reads (its spec's
    ``licences``); two benchmarks giving one source different licences is an error, not a silent choice."""
    out: dict[str, tuple[str, str]] = {}
    for spec in specs():
        for name, licence in spec.licences.items():
            if out.setdefault(name, licence) != licence:
                raise ConfigError(f"source {name!r}: benchmarks declare different licences ({out[name][0]}, "
                                  f"{licence[0]}); {spec.name}'s spec is one")
    return out


def source_options() -> dict[str, str]:
    """Build config option -> source name, over every known benchmark's spec, for builds that list no ``sources``."""
    return {option: source for spec in specs() for option, source in spec.source_options.items()}


def source_entries(build: Mapping[str, Any]) -> list[dict[str, str]]:
    """Normalise whatever the build recorded about its sources into ``[{name, license, url}]``."""
    config = build.get("config") or {}
    raw: Any = config.get("sources", build.get("sources"))
    if raw is None and isinstance(config.get("source"), str):
        raw = [config["source"]]
    entries: list[dict[str, str]] = []
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, Mapping):
        raw = [
            {"name": k, **(v if isinstance(v, Mapping) else {"license": v} if isinstance(v, str) else {})}
            for k, v in raw.items()
        ]
    for entry in raw or []:
        if isinstance(entry, str):
            entries.append({"name": entry})
        elif isinstance(entry, Mapping):
            name = entry.get("name") or entry.get("id") or entry.get("source") or entry.get("kind") or "?"
            e = {"name": str(name)}
            lic = entry.get("license") or entry.get("licence")
            if lic:
                e["license"] = str(lic)
            if entry.get("url"):
                e["url"] = str(entry["url"])
            entries.append(e)
    if raw is None:
        # Builders that do not list their sources: the sources they say they generated from, and the source
        # options (paths to a dataset's files) that were given.
        stats = build.get("stats") or {}
        names = [str(n) for n in stats.get("generated_sources") or [] if n]
        options = source_options()
        names += [k for k, v in config.items() if v and k in options]
        seen: set[str] = set()
        for n in names:
            n = options.get(n, n)
            if n not in seen:
                seen.add(n)
                entries.append({"name": n})
    extra = build.get("licenses") or build.get("licences") or config.get("licenses") or config.get("licences")
    if isinstance(extra, Mapping):
        for name, lic in extra.items():
            for e in entries:
                if e["name"] == name and "license" not in e:
                    e["license"] = str(lic)
            if not any(e["name"] == name for e in entries):
                entries.append({"name": str(name), "license": str(lic)})
    return entries


def resolve_license(build: Mapping[str, Any], override: str | None = None) -> dict[str, Any]:
    """The card's licence: ``--license`` if given, else the sources' licences, else ``unknown`` (said clearly)."""
    sources = source_entries(build)
    known = known_licences()
    rows = []
    found: list[str] = []
    missing: list[str] = []
    for e in sources:
        lic, note = e.get("license"), "recorded in build.json"
        if not lic and e["name"].lower() in known:
            lic, note = known[e["name"].lower()]
        if lic:
            found.append(lic.lower())
        else:
            missing.append(e["name"])
            note = "not recorded: check the source's terms before redistributing"
        rows.append({"source": e["name"], "license": lic or "unknown", "note": note, "url": e.get("url", "")})
    distinct = sorted(set(found))
    if override:
        value: Any = override
        text = f"`{override}` (chosen at release time)"
        note = "The release licence was set explicitly with `--license`."
    elif distinct and not missing:
        value = distinct[0] if len(distinct) == 1 else distinct
        text = ", ".join(f"`{d}`" for d in distinct) + " (from the sources)"
        note = (
            "The licence above is taken from the sources."
            if len(distinct) == 1
            else "The sources carry different licences; each item's source is in its `provenance`, and every "
            "licence above applies to the items from that source."
        )
    else:
        value = "unknown"
        text = "`unknown`"
        what = ", ".join(missing) if missing else "no source was recorded in build.json"
        note = (
            f"**Licence unknown**: the build did not record a licence for: {what}. Check the terms of every source "
            "before using or redistributing this dataset, and set the licence with `--license` in the next release."
        )
    return {"value": value, "text": text, "rows": rows, "note": note}
