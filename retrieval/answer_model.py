"""The fitted answer model: which candidate sentence answers a question, and when none does.

The model is a small file shipped inside the package (``retrieval/data/answer-v2.npz``), written by
``bench/fit_answer.py`` from ``../shared`` alone and read once, lazily, on the first answer:

* ``role_weights``: the sentence-role classifier of :mod:`retrieval.roles` (hashed features x roles);
* ``weights``: a conditional logit over :data:`retrieval.answer.FEATURES` - a question's candidate
  sentences compete in one softmax, so only differences between candidates count;
* ``answerable``: a logistic model on the best candidate's features that says whether the corpus
  answers the question at all; below ``abstain_below`` the answer is nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["MODEL_FILE", "MODEL_VERSION", "AnswerModel", "generation", "load_model", "model_path", "using"]

#: Bumped whenever the features or the file's layout change: a file of another version is refused.
MODEL_VERSION = "answer-v2"
MODEL_FILE = f"{MODEL_VERSION}.npz"


@dataclass(frozen=True)
class AnswerModel:
    """A fitted answer model (see the module docstring).

    Attributes:
        features: The feature names ``weights`` was fitted on, in order.
        weights: One weight per feature.
        role_weights: ``(retrieval.roles.ROLE_DIM, len(retrieval.roles.ROLES))``.
        answerable: Weights of the answerable model, one per feature and a bias last; empty when the
            model never abstains.
        abstain_below: The answer is nothing when the answerable probability is below this.
        meta: How it was fitted (data, sizes, settings), for the record.
    """

    features: tuple[str, ...]
    weights: npt.NDArray[np.float64]
    role_weights: npt.NDArray[np.float32]
    answerable: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    abstain_below: float = 0.0
    meta: dict = field(default_factory=dict)

    def scores(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """The model's score of each candidate (rows of ``features``)."""
        return features @ self.weights

    def probabilities(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each candidate's probability of being the answer, among the rows given (one question)."""
        s = self.scores(features)
        s = np.exp(s - s.max())
        return s / s.sum()

    def answerable_probability(self, best: npt.NDArray[np.float64]) -> float:
        """Probability that the corpus answers the question, from its best candidate's features."""
        if not len(self.answerable):
            return 1.0
        z = float(best @ self.answerable[:-1] + self.answerable[-1])
        return 1.0 / (1.0 + np.exp(-z))

    def abstains(self, best: npt.NDArray[np.float64]) -> bool:
        """Whether to answer nothing, given the best candidate's features."""
        return self.answerable_probability(best) < self.abstain_below

    def save(self, path: Path) -> None:
        """Write the model (``.npz``; float32 weights, deterministic bytes for the same model)."""
        arrays = {
            "version": np.array(MODEL_VERSION),
            "features": np.array(self.features),
            "weights": self.weights.astype(np.float64),
            "role_weights": self.role_weights.astype(np.float32),
            "answerable": self.answerable.astype(np.float64),
            "abstain_below": np.array(self.abstain_below, dtype=np.float64),
            "meta": np.array(json.dumps(self.meta, sort_keys=True)),
        }
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as fh:
            np.savez_compressed(fh, **arrays)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path | str, features: Sequence[str] | None = None) -> AnswerModel:
        """Read a model written by :meth:`save`.

        Raises:
            ValueError: The file is of another version, or fitted on other features than ``features``.
        """
        with np.load(path, allow_pickle=False) as data:
            version = str(data["version"])
            if version != MODEL_VERSION:
                raise ValueError(f"{path}: answer model {version!r}, this code reads {MODEL_VERSION!r}")
            model = cls(
                features=tuple(str(x) for x in data["features"]),
                weights=data["weights"].astype(np.float64),
                role_weights=data["role_weights"],
                answerable=data["answerable"].astype(np.float64),
                abstain_below=float(data["abstain_below"]),
                meta=json.loads(str(data["meta"])),
            )
        if features is not None and tuple(features) != model.features:
            raise ValueError(f"{path}: fitted on other features than this code computes; refit it")
        return model


def model_path() -> Path:
    """Where the shipped model file is (inside the installed package)."""
    return Path(str(resources.files("retrieval") / "data" / MODEL_FILE))


_lock = threading.Lock()
_loaded: list[AnswerModel] = []
_override: list[AnswerModel] = []
_generation = [0]


def load_model() -> AnswerModel:
    """The answer model in use: the shipped file, read on first use (thread-safe), or the one a
    :func:`using` block installed."""
    if _override:
        return _override[-1]
    if not _loaded:
        with _lock:
            if not _loaded:
                _loaded.append(AnswerModel.load(model_path()))
    return _loaded[0]


def generation() -> int:
    """Changes whenever another model comes into use (what is derived from a model is cached by it)."""
    return _generation[0]


@contextmanager
def using(model: AnswerModel) -> Iterator[AnswerModel]:
    """Answer with ``model`` instead of the shipped one inside the block (fitting and benchmarks)."""
    _override.append(model)
    _generation[0] += 1
    try:
        yield model
    finally:
        _override.pop()
        _generation[0] += 1
