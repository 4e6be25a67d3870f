"""The per-quota-group plot of the elastic and tree models: used against runtime, min, max.

Runtime is what a group may use at each moment (its min plus what it borrowed, or less when
it lent): where used touches runtime the group was held back, where runtime drops below used
its jobs were revoked. Over long traces used is drawn as a mean line with a band up to the
maximum per bucket and runtime as its bucket mean, like the other usage plots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quotactor.sim.plots import _DAY, _band, _bucket_width, _pyplot, _unit, bucketed
from quotactor.sim.result import QuotaTrack, SimulationResult

__all__ = ["QUOTAS_PNG", "plot_quotas"]

QUOTAS_PNG = "quota-groups.png"


def plot_quotas(result: SimulationResult, out_dir: Path) -> Path:
    """One panel per quota group; returns the PNG's path."""
    plt = _pyplot()
    resource = result.primary_resource
    scale, unit = _unit(resource)
    tracks = result.quota_tracks
    span = (result.start_time, result.end_time)
    width, width_name = _bucket_width(span[1] - span[0])
    rows = max(1, len(tracks))
    fig, axes = plt.subplots(rows, 1, figsize=(11, 1.9 * rows + 0.9), squeeze=False,
                             sharex=True)
    for index, track in enumerate(tracks):
        _panel(axes[index][0], track, resource, scale, unit, span, width)
    axes[-1][0].set_xlabel(f"days since the first submission (mean per {width_name}; band: "
                           "used up to the maximum)", fontsize=8)
    fig.suptitle(f"{result.label}: {resource} per quota group ({result.model} model): used "
                 "against runtime, min and max", fontsize=10)
    fig.tight_layout()
    path = out_dir / QUOTAS_PNG
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _panel(axis: Any, track: QuotaTrack, resource: str, scale: float, unit: str,
           span: tuple[float, float], width: float) -> None:
    start, end = span
    _band(axis, track.times, [v.get(resource, 0) / scale for v in track.used], span,
          "tab:blue", "used (mean, band to max)", width)
    starts, means, _ = bucketed(track.times, [v.get(resource, 0) / scale
                                              for v in track.runtime], start, end, width)
    days = [(t - start) / _DAY for t in starts] + [(end - start) / _DAY]
    axis.step(days, [*means, means[-1]], where="post", color="tab:green", linewidth=1.2,
              linestyle=(0, (3, 2)),
              label="runtime (mean)")
    for bound, style, name in ((track.min, "--", "min"), (track.max, ":", "max")):
        if resource in bound:
            axis.axhline(bound[resource] / scale, color="tab:red", linestyle=style,
                         linewidth=1.0, label=name)
    axis.set_title(f"quota {track.name}", fontsize=9)
    axis.set_ylabel(unit, fontsize=8)
    axis.set_ylim(bottom=0)
    axis.tick_params(labelsize=7)
    axis.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                frameon=False)
