"""The sweep file: grid expansion, seeded samples, path and template binding, and the errors
that name the parameter (or key) at fault before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from quotactor.sweep import SweepError, expand, load_sweep, parse_sweep

from .conftest import TINY


def test_grid_is_the_product_in_file_order(tiny_sweep: Path) -> None:
    spec = load_sweep(tiny_sweep)
    assert spec.grid_size == 8
    grid = expand(spec)
    combos = [dict(p.values) for p in grid.points]
    assert combos == [{"user_vcore": 8, "queue_apps": 2, "group_apps": 2},
                      {"user_vcore": 8, "queue_apps": 6, "group_apps": 2},
                      {"user_vcore": 16, "queue_apps": 2, "group_apps": 2},
                      {"user_vcore": 16, "queue_apps": 6, "group_apps": 2}]
    assert [p.index for p in grid.points] == [0, 2, 4, 6]
    assert [i.index for i in grid.invalid] == [1, 3, 5, 7]
    assert len({p.key for p in grid.points}) == 4


def test_path_binding_keeps_the_type_of_the_value_it_replaces(tiny_sweep: Path) -> None:
    point = expand(load_sweep(tiny_sweep)).points[-1]
    config = yaml.safe_load(point.config_text)
    work = config["partitions"][0]["queues"][0]["queues"][0]
    assert work["limits"][0]["maxresources"]["vcore"] == "16"  # a quantity stays a string
    assert work["maxapplications"] == 6
    assert work["limits"][1]["maxapplications"] == 2  # the template, typed


def test_null_removes_the_key_and_ranges_expand_inclusively() -> None:
    text = TINY.replace("range: {from: 2, to: 6, step: 4}", "values: [3, null]").replace(
        "values: [8, 16]", "range: {from: 4, to: 12, step: 4}")
    spec = parse_sweep(text)
    assert spec.parameters[0].values == (4, 8, 12)
    grid = expand(spec)
    unlimited = [p for p in grid.points if dict(p.values)["queue_apps"] is None]
    assert unlimited
    work = yaml.safe_load(unlimited[0].config_text)["partitions"][0]["queues"][0]["queues"][0]
    assert "maxapplications" not in work


def test_a_seeded_sample_is_the_same_subset_every_time() -> None:
    text = TINY + "sample: {count: 3, seed: 11}\n"
    first = [p.index for p in expand(parse_sweep(text)).points + expand(parse_sweep(text)).invalid]
    again = [p.index for p in expand(parse_sweep(text)).points + expand(parse_sweep(text)).invalid]
    assert first == again
    assert len(set(first)) == 3 and set(first) <= set(range(8))
    other = TINY + "sample: {count: 3, seed: 12}\n"
    grid = expand(parse_sweep(other))
    assert len(grid.points) + len(grid.invalid) == 3


@pytest.mark.parametrize(("path", "message"), [
    ("partitions[0].queues[0].queues[3].maxapplications", "no item 3 in a list of 1"),
    ("partitions[0].queues[0].queus[0].maxapplications", "no key 'queus'"),
    ("partitions[0].queues[0].queues[0].limits.maxapplications",
     "limits is a list: index it with [N]"),
    ("partitions[0].queues[0].queues[0].limits[0].maxresources", "ends at a mapping"),
    ("partitions[0].name[0].x", "indexes a list"),
    ("partitions[0]..queues", "malformed path"),
])
def test_invalid_paths_name_the_parameter(path: str, message: str) -> None:
    text = TINY.replace("partitions[0].queues[0].queues[0].maxapplications", path)
    with pytest.raises(SweepError, match=r"parameter 'queue_apps'") as caught:
        parse_sweep(text)
    assert message in str(caught.value)


@pytest.mark.parametrize(("values", "message"), [
    ("values: []", "values must be a non-empty list"),
    ("values: [2, 2]", "listed twice"),
    ("values: [{a: 1}]", "is not a single value"),
    ("range: {from: 6, to: 2}", "below from"),
    ("range: {from: 2, to: 6, step: 0}", "step must be positive"),
    ("range: {from: a, to: 6}", "range from must be a number"),
    ("values: [2]\n    range: {from: 1, to: 2}", "exactly one of `values` and `range`"),
])
def test_invalid_values_name_the_parameter(values: str, message: str) -> None:
    text = TINY.replace("range: {from: 2, to: 6, step: 4}", values)
    with pytest.raises(SweepError, match=r"parameter 'queue_apps'") as caught:
        parse_sweep(text)
    assert message in str(caught.value)


def test_null_cannot_remove_a_list_item() -> None:
    text = TINY.replace("path: partitions[0].queues[0].queues[0].maxapplications",
                        "path: partitions[0].queues[0].queues[0].limits[0].users[0]").replace(
        "range: {from: 2, to: 6, step: 4}", "values: [u1, null]")
    with pytest.raises(SweepError, match=r"parameter 'queue_apps'.*list item"):
        parse_sweep(text)


def test_templates_must_be_bound_and_used() -> None:
    with pytest.raises(SweepError, match=r"\$\{group_apps\} is bound by no parameter"):
        parse_sweep(TINY.replace("  group_apps:\n    template: group_apps\n    values: [2, 0]\n",
                                 ""))
    with pytest.raises(SweepError, match="parameter 'group_apps': the config never uses"):
        parse_sweep(TINY.replace("${group_apps}", "3"))


@pytest.mark.parametrize(("model", "message"), [("elastic", "expected ElasticQuota objects"),
                                                ("quotatree", "expected a QuotaTree")])
def test_a_queue_config_is_not_another_models_base(model: str, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        parse_sweep(f"model: {model}\n" + TINY)
    with pytest.raises(SweepError, match="not a quota model"):
        parse_sweep("model: slurm\n" + TINY)


def test_unknown_keys_and_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="the sweep file: unknown key paramters"):
        parse_sweep(TINY + "paramters: {}\n")
    document = yaml.safe_load(TINY)
    document["config"] = "missing.yaml"
    with pytest.raises(SweepError, match=r"config: cannot read .*missing\.yaml"):
        parse_sweep(yaml.safe_dump(document), folder=tmp_path)
    with pytest.raises(SweepError, match=r"cannot read .*nowhere\.yaml"):
        load_sweep(tmp_path / "nowhere.yaml")


def test_the_config_can_be_a_file_beside_the_sweep(tmp_path: Path) -> None:
    document = yaml.safe_load(TINY)
    (tmp_path / "queues.yaml").write_text(yaml.safe_dump(document.pop("config")),
                                          encoding="utf-8")
    document["config"] = "queues.yaml"
    (tmp_path / "sweep.yaml").write_text(json.dumps(document), encoding="utf-8")
    assert len(expand(load_sweep(tmp_path / "sweep.yaml")).points) == 4


def test_the_bundled_example_is_valid() -> None:
    from importlib.resources import files

    text = (files("quotactor.sweep") / "data" / "nasa-sweep.yaml").read_text(encoding="utf-8")
    grid = expand(parse_sweep(text))
    assert len(grid.points) + len(grid.invalid) == 27
    assert grid.invalid == ()
