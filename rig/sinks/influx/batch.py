"""Batched writes, for spool replay and backfill alike, and the one split-and-retry for
a request whose data the server rejects: one bad report never holds back the others."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from rig.sinks.influx.client import Client, InfluxError

T = TypeVar("T")


def batches(
    items: Iterable[T],
    points: Callable[[T], int],
    limit: int,
    key: Callable[[T], object] = lambda _: None,
) -> Iterator[list[T]]:
    """Consecutive items in lists of at least `limit` points (the last may hold fewer);
    a change of `key` (the precision, one per request) starts a new list. Lazy: item
    k+1 is read after the batch before it is written."""
    batch: list[T] = []
    size = 0
    for item in items:
        if batch and key(item) != key(batch[0]):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += points(item)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def write_split(
    client: Client,
    batch: Sequence[T],
    body: Callable[[T], bytes],
    precision: str | None = None,
) -> Iterator[tuple[Sequence[T], InfluxError | None]]:
    """Write `batch` as one request; yields `(items, None)` once the server acknowledged
    them. Rejected data (400, 413) is split in halves and retried, down to the single
    item refused, yielded as `([item], error)`; any other InfluxError is raised."""
    if not batch:
        return
    try:
        client.write(b"\n".join(body(item) for item in batch), precision)
    except InfluxError as e:
        if not e.data_rejected:
            raise
        if len(batch) == 1:
            yield batch, e
            return
        half = len(batch) // 2
        yield from write_split(client, batch[:half], body, precision)
        yield from write_split(client, batch[half:], body, precision)
        return
    yield batch, None
