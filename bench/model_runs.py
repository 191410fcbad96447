"""What the model benches share: one text's inputs to the pinned model and its mean-pooled,
normalized vector from a session's run (what ``LocalOnnxEmbedder`` gives a text alone)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def text_feeds(ids: Sequence[int]) -> dict[str, np.ndarray]:
    """The inputs of one text of token ``ids``: no padding, one segment."""
    row = np.asarray([ids], dtype=np.int64)
    return {"input_ids": row, "attention_mask": np.ones_like(row), "token_type_ids": np.zeros_like(row)}


def mean_pooled(session: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """The normalized mean of the tokens' hidden states that ``session`` gives for ``feeds`` (one text)."""
    (hidden,) = session.run(["last_hidden_state"], feeds)
    pooled = hidden[0].mean(axis=0)
    return pooled / np.linalg.norm(pooled)
