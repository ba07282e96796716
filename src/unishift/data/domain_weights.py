"""Domain-weights files (docs/domain-weights.md): one per (setup, plan), written by the upstream rule
(:mod:`unishift.domain_weight_artifacts` computes them) and attached to the setups an evaluation
job reads, as their per-sample artifacts.

Kept apart from the computation so that the evaluation script reaches no method code through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from unishift.data.setups import SetupData
from unishift.io import read_npz, write_npz
from unishift.methods.domain_weights import MEMO_KEY, CallKey, DomainWeightMemo

FORMAT = 1
_KEY_FIELDS = (
    "setting_key",
    "sample_id",
    "feature_set",
    "stream_before",
    "sample_digest",
    "n_training",
    "n_validation",
)


def write_domain_weights(
    path, memo: DomainWeightMemo, setup: SetupData, plan: str, domain_stream: str
) -> None:
    keys = list(memo.entries)
    entries = [memo.entries[k] for k in keys]
    lengths = [len(e.weights) for e in entries]
    columns = {name: [getattr(k, name) for k in keys] for name in _KEY_FIELDS}
    write_npz(
        path,
        format=np.asarray(FORMAT),
        setup_key=np.asarray(setup.key),
        plan=np.asarray(plan),
        domain_stream=np.asarray(domain_stream),
        **{
            name: np.asarray(
                values, dtype=np.int64 if name.startswith(("n_", "sample_id")) else str
            )
            for name, values in columns.items()
        },  # fmt: skip
        stream_after=np.asarray([e.stream_after for e in entries], dtype=str),
        has_fallback=np.asarray([e.fallback is not None for e in entries], dtype=bool),
        fallback=np.asarray([e.fallback or "" for e in entries], dtype=str),
        offsets=np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))).astype(np.int64),
        weights=np.concatenate([e.weights.reshape(-1) for e in entries])
        if entries
        else np.zeros(0),
    )


def read_domain_weights(path) -> tuple[dict, DomainWeightMemo]:
    """(``{"setup_key", "plan", "domain_stream"}``, the memo) of a weights file."""
    arrays = read_npz(path, ("format", "setup_key", "plan", "offsets", "weights", *_KEY_FIELDS))
    if int(arrays["format"]) != FORMAT:
        raise ValueError(
            f"{path}: domain-weights format {int(arrays['format'])}, expected {FORMAT}; rebuild it"
        )
    memo = DomainWeightMemo()
    offsets, weights = arrays["offsets"], arrays["weights"]
    for i in range(len(arrays["setting_key"])):
        key = CallKey(
            str(arrays["setting_key"][i]),
            int(arrays["sample_id"][i]),
            str(arrays["feature_set"][i]),
            str(arrays["stream_before"][i]),
            str(arrays["sample_digest"][i]),
            int(arrays["n_training"][i]),
            int(arrays["n_validation"][i]),
        )
        fallback = str(arrays["fallback"][i]) if arrays["has_fallback"][i] else None
        memo.add(
            key,
            weights[offsets[i] : offsets[i + 1]].reshape(-1, 1),
            fallback,
            str(arrays["stream_after"][i]),
        )
    meta = {name: str(arrays[name]) for name in ("setup_key", "plan", "domain_stream")}
    return meta, memo


def attach_domain_weights(setups: Iterable[SetupData], paths: Iterable[str]) -> Iterator[SetupData]:
    """The setups, each reading the weights files written for it (matched by setup key)."""
    by_setup: dict[str, list[DomainWeightMemo]] = {}
    for path in paths:
        meta, memo = read_domain_weights(path)
        by_setup.setdefault(meta["setup_key"], []).append(memo)
    for setup in setups:
        memos = by_setup.pop(setup.key, [])
        if memos:
            merged = DomainWeightMemo()
            for memo in memos:
                merged.entries.update(memo.entries)
            setup.sample_artifacts = lambda sample_id, memo=merged: {MEMO_KEY: memo}
        yield setup
    if by_setup:
        raise ValueError(
            f"domain-weights files of setups {sorted(by_setup)} match no evaluated setup"
        )
