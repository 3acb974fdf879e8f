"""history.png: val score per step, accepted and rejected candidates marked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def plot_history(history: Sequence[dict], path: Path, initial_val: float | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [h["step"] for h in history]
    values = [h["val_after"] for h in history]
    if initial_val is not None:
        steps, values = [0, *steps], [initial_val, *values]
    ax.plot(steps, values, "-", color="tab:blue", marker=".", label="val score (current skill)")
    for action, marker, color, label in (
        ("accept", "o", "tab:green", "accepted candidate"),
        ("accept_ungated", "o", "tab:olive", "accepted (gate off)"),
        ("reject", "x", "tab:red", "rejected candidate (on the val items evaluated)"),
    ):
        pts = [(h["step"], h["val_candidate"]) for h in history
               if h["action"] == action and h["val_candidate"] is not None]
        if pts:
            ax.scatter(*zip(*pts, strict=True), marker=marker, color=color, label=label, zorder=3)
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("val score")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("SkillOpt training")
    ax.grid(alpha=0.3)
    if history:
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
