"""What-if over a grid of limits: many replays of the same workloads, in parallel.

```python
from quotactor.sweep import load_sweep, rank, parse_objective, figures_for, run_sweep

spec = load_sweep(Path("sweep.yaml"))               # SweepError naming the place at fault
outcome = run_sweep(spec, Path("out"), workers=2)    # or executor="ray"; resumable in "out"
best = rank(outcome.rows, parse_objective("p95_wait", figures_for(spec.model)))
```
`quotactor sweep` (`quotactor.sweep.cli`) wraps this with the summary and plots. The replay is
used only through `quotactor.sim`'s public functions; `headline` is the one adapter from a
replay's result to the sweep's figures.
"""

from quotactor.sweep.errors import SweepError
from quotactor.sweep.grid import Grid, InvalidPoint, Point, expand
from quotactor.sweep.headline import Figure, figures_for, headline, jain
from quotactor.sweep.ranking import (
    Constraint,
    Objective,
    Ranking,
    parse_constraint,
    parse_objective,
    rank,
)
from quotactor.sweep.runner import SweepOutcome, default_workers, run_sweep
from quotactor.sweep.spec import Parameter, SweepSpec, load_sweep, parse_sweep

__all__ = [
    "Constraint",
    "Figure",
    "Grid",
    "InvalidPoint",
    "Objective",
    "Parameter",
    "Point",
    "Ranking",
    "SweepError",
    "SweepOutcome",
    "SweepSpec",
    "default_workers",
    "expand",
    "figures_for",
    "headline",
    "jain",
    "load_sweep",
    "parse_constraint",
    "parse_objective",
    "parse_sweep",
    "rank",
    "run_sweep",
]
