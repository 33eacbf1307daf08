"""Fit verdicts for a repository's models, read from their headers over HTTP (no tensor data is fetched)."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, BinaryIO, cast

from app.core.gguf.errors import GGUFError
from app.core.gguf.model_info import ModelInfo
from app.core.gguf.reader import RawGGUF, read_raw_stream
from app.core.gguf.stream_reader import merge_shards, model_info_from_raw
from app.core.hub.errors import HubError
from app.core.hub.files import HubFile, HubModel, RepoListing
from app.core.hub.fit import FileFit, judge, mark_best, unknown
from app.core.hub.ranged import ReadCount, open_remote
from app.core.hub.source import HubAccess
from app.core.problem import UserError
from app.core.text import T

logger = logging.getLogger(__name__)
PARALLEL_READS = 3


def read_remote_raw(part: HubFile, access: HubAccess, count: ReadCount) -> RawGGUF:
    stream = open_remote(part.url, access, part.size, count)
    return read_raw_stream(cast(BinaryIO, stream), stream.size, part.url)


def remote_model_info(model: HubModel, access: HubAccess, count: ReadCount) -> ModelInfo:
    """The ModelInfo of ``model`` from its header (every shard's header for a split model)."""
    if not model.complete:
        raise HubError(T("Only {have} of the {count} parts of {name} are in the repository.",
                         "仓库中只有 {name} 的 {count} 个分卷中的 {have} 个。", have=len(model.parts),
                         count=model.expected_parts, name=model.name),
                       T("Choose another file.", "请选择其他文件。"))
    raws = [read_remote_raw(part, access, count) for part in model.parts]
    info = model_info_from_raw(raws[0])
    if model.is_split:
        merge_shards(info, raws)
    return info


def fit_model(model: HubModel, access: HubAccess, hw: Any, backend: str, *,
              vram_budget: int | None = None) -> FileFit:
    """The verdict for one model; a header that cannot be read or planned is UNKNOWN with its one sentence."""
    count = ReadCount()
    try:
        info = remote_model_info(model, access, count)
        fit = judge(info, hw, backend, name=model.name, size=model.size, vram_budget=vram_budget)
    except (HubError, GGUFError, UserError) as error:
        logger.info("No verdict for %s: %s", model.name, error)
        fit = unknown(model.name, model.size, error)
    return replace(fit, header_bytes=count.bytes, header_requests=count.requests)


def fit_listing(listing: RepoListing, access: HubAccess, hw: Any, backend: str, *,
                vram_budget: int | None = None) -> list[FileFit]:
    """Every model's verdict (a few headers at a time), the best fit marked."""
    with ThreadPoolExecutor(max_workers=PARALLEL_READS, thread_name_prefix="hub-header") as pool:
        fits = list(pool.map(lambda m: fit_model(m, access, hw, backend, vram_budget=vram_budget), listing.models))
    return mark_best(fits)
