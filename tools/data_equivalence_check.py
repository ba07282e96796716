"""The one data layer writes the arrays the two twin layers wrote, bit for bit (issue 21).

Runs the data functions of a baseline checkout (before the merge of the binary and multiclass data
modules; ``--baseline``, default /work/baseline/src) and of this checkout in two subprocesses, each
writing what the workflow would write, and compares them:

* binary label shift (``uci_binary``: cmc.3, yeast): splits, samples (UPP 100 x 250 and 10 x 50) and
  the posteriors of LR, NB, kNN and MLP with the per-sample posteriors ``P_samples``;
* multiclass label shift (``uci_multiclass``: cmc, yeast, min_class_support 100): splits, samples,
  posteriors of the same classifiers;
* the setups built from those files (pool, validation and training arrays, each sample's
  posteriors and labels, the persisted random stream);
* text domains: the tweets airline, apple, claritin, self-driving with two and three classes (the
  parquet files and their frames), the data_root sentence corpora when ``--data-root`` is given;
* covariate shift: the mixture samples of every pair of those tweet domains, covariate setups and
  the language-model accuracy tables from synthetic two- and three-class caches;
* QuaPy's cache pickles the loaders seed.

Arrays are compared bitwise (dtype, shape, bytes) with the keys in file order; an array the new
layer adds to a file is listed apart (the multiclass samples gain the random stream state), a
missing or different one is a difference. ``.npz`` files are not compared byte for byte: NumPy
stamps each member with the time of writing. Run it with the pinned kernels:

    OPENBLAS_CORETYPE=Haswell MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 \\
    NPY_ENABLE_CPU_FEATURES=X86_V3 ARROW_USER_SIMD_LEVEL=AVX2 \\
        .venv/bin/python tools/data_equivalence_check.py [--data-root /work/shared/data]

Not part of the test suite (minutes; needs the baseline checkout).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from unishift.cpu_kernels import DEFAULT_PROFILE, PROFILES

HERE = Path(__file__).resolve().parents[1]
# the CPU kernels of the workflow's default profile (docs/determinism.md), read from the library
# that pins them
PINNED = dict(PROFILES[DEFAULT_PROFILE])
CLASSIFIERS = ("LR", "NB", "kNN", "MLP")
BINARY = ("cmc.3", "yeast")
MULTICLASS = ("cmc", "yeast")
TWEETS = ("airline", "apple", "claritin", "self-driving")
SENTENCES = ("rt", "imdb", "yelp", "amazon")
SAMPLINGS = ((250, 100), (50, 10))


# --------------------------------------------------------------------------------------------------
# worker: runs in a subprocess with PYTHONPATH at one checkout's src


def _old_api():
    # the baseline's modules (this checkout has none of the *_multiclass ones)
    from unishift.data import label_shift as ls  # noqa: I001
    from unishift.data import label_shift_multiclass as lsm
    from unishift.data import text, text_multiclass
    from unishift.data.covariate import lm_accuracies, load_covariate_setup
    from unishift.data.covariate_multiclass import lm_accuracies_k, load_covariate_setup_k

    return {
        "splits": lambda name, home: ls.prepare_splits(name, home, None, 0)[0],
        "splits_k": lambda name, home: lsm.prepare_multiclass_splits(name, home, None, 0, 100)[0],
        "samples": lambda splits, size, n: ls.label_shift_samples(splits, size, n, 0),
        "samples_k": lambda splits, size, n: lsm.multiclass_label_shift_samples(splits, size, n, 0),
        "train": lambda splits, c, samples: ls.train_and_predict(splits, c, 0, samples=samples)[1],
        "train_k": lambda splits, c: lsm.train_and_predict_k(splits, c, 0)[1],
        "setup": lambda s, p, x, d, c, mode: ls.load_label_setup(s, p, x, d, c, 0, mode),
        "setup_k": lambda s, p, x, d, c: lsm.load_multiclass_label_setup(s, p, x, d, c, 0),
        "tweets": lambda d, corpus: text.load_tweet_domain(d, 0, corpus=corpus),
        "tweets_k": lambda d, corpus: text_multiclass.load_tweet_domain_3class(d, 0, corpus=corpus),
        "sentences": lambda root, d: text.load_offline_domain(root, d, 0),
        "covariate_setup": lambda c, s: load_covariate_setup(c, s, "M", "a", "b", 0),
        "covariate_setup_k": lambda c, s: load_covariate_setup_k(c, s, "M", "a", "b", 0, 3),
        "accuracies": lm_accuracies,
        "accuracies_k": lm_accuracies_k,
        "text": text,
    }


def _new_api():
    from unishift.data import label_shift as ls
    from unishift.data import text
    from unishift.data.covariate import lm_accuracies, load_covariate_setup

    multi = {"collection": "uci_multiclass", "min_class_support": 100}
    return {
        "splits": lambda name, home: ls.prepare_splits(name, home, None, 0)[0],
        "splits_k": lambda name, home: ls.prepare_splits(name, home, None, 0, **multi)[0],
        "samples": lambda splits, size, n: ls.label_shift_samples(splits, size, n, 0),
        "samples_k": lambda splits, size, n: ls.label_shift_samples(splits, size, n, 0),
        "train": lambda splits, c, samples: ls.train_and_predict(splits, c, 0, samples=samples)[1],
        "train_k": lambda splits, c: ls.train_and_predict(splits, c, 0)[1],
        "setup": lambda s, p, x, d, c, mode: ls.load_label_setup(s, p, x, d, c, 0, mode),
        "setup_k": lambda s, p, x, d, c: ls.load_label_setup(s, p, x, d, c, 0, "pool"),
        "tweets": lambda d, corpus: text.load_tweet_domain(d, 0, corpus=corpus),
        "tweets_k": lambda d, corpus: text.load_tweet_domain(d, 0, corpus=corpus, classes=3),
        "sentences": lambda root, d: text.load_offline_domain(root, d, 0),
        "covariate_setup": lambda c, s: load_covariate_setup(c, s, "M", "a", "b", 0),
        "covariate_setup_k": lambda c, s: load_covariate_setup(c, s, "M", "a", "b", 0, 3),
        "accuracies": lm_accuracies,
        "accuracies_k": lm_accuracies,
        "text": text,
    }


def _setup_arrays(setup, n_samples: int) -> dict:
    import numpy as np

    arrays = {}
    for part, items in (
        ("validation", setup.setting.validation),
        ("training", setup.setting.training),
        ("pool", setup.pool),
    ):
        for field in ("posteriors", "labels", "features", "logits"):
            value = getattr(items, field)
            if value is not None:
                arrays[f"{part}_{field}"] = np.asarray(value)
    arrays["sample_indices"] = np.asarray(setup.sample_indices)
    arrays["shift_intensity"] = np.asarray(setup.shift_intensity)
    for i in range(n_samples):
        sample, labels = setup.sample(i)
        arrays[f"sample{i}_posteriors"] = np.asarray(sample.posteriors)
        arrays[f"sample{i}_labels"] = np.asarray(labels)
        if sample.features is not None:
            arrays[f"sample{i}_features"] = np.asarray(sample.features)
    stream = getattr(setup, "stream_state", None)
    if stream is not None:
        arrays["stream_key"] = np.asarray(stream[1])
        arrays["stream_rest"] = np.asarray(stream[2:], dtype=float)
    return arrays


def _synthetic_cache(k: int, seed: int) -> dict:
    import numpy as np

    rng = np.random.default_rng(seed)

    def part(n):
        logits = rng.normal(size=(n, k)).astype(np.float32)
        logits[:3, 1] = logits[:3, 0]  # ties between the first two classes
        return {
            "logits": logits,
            "hidden": rng.normal(size=(n, 4)).astype(np.float32),
            "labels": rng.integers(0, k, n),
        }

    return {name: part(60) for name in ("train", "validation", "test", "target_b", "target_c")}


def worker(side: str, out: Path, data_root: str | None) -> None:
    import numpy as np

    from unishift.io import write_npz
    from unishift.protocols.mixture import mixture_indices

    api = _old_api() if side == "old" else _new_api()
    home = out / "quapy_home"

    def save(name, arrays):
        write_npz(out / f"{name}.npz", **arrays)

    for multiclass, names in ((False, BINARY), (True, MULTICLASS)):
        tag = "k" if multiclass else "2"
        for name in names:
            splits = api["splits_k" if multiclass else "splits"](name, home)
            save(f"label{tag}_{name}_split", splits)
            for size, n in SAMPLINGS:
                samples = api["samples_k" if multiclass else "samples"](splits, size, n)
                save(f"label{tag}_{name}_samples_{size}x{n}", samples)
                for c in CLASSIFIERS:
                    if multiclass:
                        if size != SAMPLINGS[0][0]:
                            continue
                        posteriors = api["train_k"](splits, c)
                        setup = api["setup_k"](splits, posteriors, samples, name, c)
                    else:
                        posteriors = api["train"](splits, c, samples)
                        setup = api["setup"](splits, posteriors, samples, name, c, "per_sample")
                        pool = api["setup"](splits, posteriors, samples, name, c, "pool")
                        save(f"setup{tag}_{name}_{c}_{size}x{n}_pool", _setup_arrays(pool, 5))
                    save(f"label{tag}_{name}_{c}_{size}x{n}_posteriors", posteriors)
                    save(f"setup{tag}_{name}_{c}_{size}x{n}", _setup_arrays(setup, 5))

    text = api["text"]
    corpus = text.read_tweet_corpus()
    sizes = {}
    for multiclass in (False, True):
        tag = "k" if multiclass else "2"
        for domain in TWEETS:
            splits = api["tweets_k" if multiclass else "tweets"](domain, corpus)
            for split, frame in splits.items():
                text.write_split(frame, out / f"tweets{tag}_{domain}_{split}.parquet")
            sizes[tag, domain] = len(splits["test"])
        for source in TWEETS:
            for target in TWEETS:
                if source != target:
                    mixture = mixture_indices(
                        sizes[tag, source], sizes[tag, target], 250, 100, seed=0
                    )
                    save(f"mixture{tag}_{source}_{target}", mixture)
    if data_root:
        for domain in SENTENCES:
            for split, frame in api["sentences"](data_root, domain).items():
                text.write_split(frame, out / f"sentences_{domain}_{split}.parquet")

    for multiclass, k in ((False, 2), (True, 3)):
        tag = "k" if multiclass else "2"
        cache = _synthetic_cache(k, seed=k)
        mixture = mixture_indices(60, 60, 20, 6, seed=0)
        setup = api["covariate_setup_k" if multiclass else "covariate_setup"](cache, mixture)
        save(f"covariate{tag}_setup", _setup_arrays(setup, 6))
        caches = {("M", "a"): {"test": cache["test"], "target_b": cache["target_b"]}}
        table = api["accuracies_k" if multiclass else "accuracies"](caches, ["a", "b", "c"])
        table.to_csv(out / f"covariate{tag}_accuracy.csv", index=False)
        save(f"covariate{tag}_accuracy", {"accuracy": table["accuracy"].to_numpy()})
    print(f"{side}: {len(list(out.iterdir()))} entries written", file=sys.stderr)
    del np


# --------------------------------------------------------------------------------------------------
# comparison


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compare(old: Path, new: Path) -> tuple[int, list[str]]:
    """(number of differences, report lines)."""
    import numpy as np
    import pandas as pd

    lines, differences = [], 0

    def differ(text):
        nonlocal differences
        differences += 1
        lines.append("DIFF " + text)

    old_files = sorted(p.relative_to(old) for p in old.rglob("*") if p.is_file())
    new_files = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    compared = arrays = 0
    for rel in old_files:
        if rel not in new_files:
            differ(f"{rel}: not written by the new layer")
            continue
        compared += 1
        a, b = old / rel, new / rel
        if rel.suffix == ".npz":
            with np.load(a, allow_pickle=False) as x, np.load(b, allow_pickle=False) as y:
                old_keys, new_keys = list(x.files), list(y.files)
                if [k for k in new_keys if k in old_keys] != old_keys:
                    differ(f"{rel}: arrays {old_keys} became {new_keys}")
                added = [k for k in new_keys if k not in old_keys]
                if added:
                    lines.append(f"ADDED {rel}: {added}")
                for key in old_keys:
                    if key not in new_keys:
                        continue
                    arrays += 1
                    u, v = x[key], y[key]
                    if u.dtype != v.dtype or u.shape != v.shape or u.tobytes() != v.tobytes():
                        differ(f"{rel}[{key}]: {u.dtype}{u.shape} vs {v.dtype}{v.shape}")
        elif rel.suffix == ".parquet":
            arrays += 1
            if not pd.read_parquet(a).equals(pd.read_parquet(b)):
                differ(f"{rel}: frames differ")
            elif _digest(a) != _digest(b):
                differ(f"{rel}: same frame, other file bytes")
        elif _digest(a) != _digest(b):
            differ(f"{rel}: file bytes differ")
    for rel in sorted(new_files - set(old_files)):
        lines.append(f"NEW FILE {rel}")
    lines.append(
        f"{compared} files ({arrays} arrays or frames) compared: {differences} differences"
    )
    return differences, lines


def run_side(side: str, src: Path, out: Path, data_root: str | None) -> None:
    env = {**os.environ, **PINNED, "PYTHONPATH": str(src)}
    env.pop("NPY_DISABLE_CPU_FEATURES", None)  # NumPy refuses it next to NPY_ENABLE_CPU_FEATURES
    command = [sys.executable, __file__, "--worker", side, "--out", str(out)]
    if data_root:
        command += ["--data-root", data_root]
    subprocess.run(command, env=env, check=True, cwd=tempfile.gettempdir())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="/work/baseline/src")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--keep", default=None, help="folder to keep both sides' files in")
    parser.add_argument("--worker", choices=("old", "new"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, Path(args.out), args.data_root)
        return 0
    for key, value in PINNED.items():
        if os.environ.get(key) != value:
            print(f"warning: {key} is not {value}: run with the pinned kernels", file=sys.stderr)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.keep or scratch)
        for side, src in (("old", Path(args.baseline)), ("new", HERE / "src")):
            (root / side).mkdir(parents=True, exist_ok=True)
            run_side(side, src, root / side, args.data_root)
        differences, lines = compare(root / "old", root / "new")
    print("\n".join(lines))
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
