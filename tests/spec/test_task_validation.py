"""The task validator reports each kind of broken spec with file and key.

Each case copies the valid fixture task ``fixtures/tasks/scale``, breaks one thing, and checks the
exact problem reported.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from d2k_spec.catalogue import load_catalogue
from d2k_spec.inputs_check import check_inputs
from d2k_spec.schema import SpecError
from d2k_spec.task import check_task, load_task

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue(FIXTURES / "properties.toml")


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    dst = tmp_path / "scale"
    shutil.copytree(FIXTURES / "tasks" / "scale", dst)
    return dst


def edit(folder: Path, old: str, new: str, file: str = "task.toml") -> None:
    path = folder / file
    text = path.read_text()
    assert old in text, f"fixture no longer contains {old!r}"
    path.write_text(text.replace(old, new, 1))


def problems_of(folder: Path, catalogue) -> list[str]:
    _, problems = check_task(folder, catalogue)
    return [f"{p.key}: {p.message}" for p in problems]


def test_fixture_is_valid(task_dir, catalogue):
    task = load_task(task_dir, catalogue)
    assert task.id == "scale"
    assert [w.name for w in task.workloads] == ["big"]
    assert task.smoke.params["N"] == 64
    assert task.design_item("any_of").require == "any"
    assert check_inputs(task) == []


BROKEN = [
    ("unknown top-level key", ('category = "elementwise"', 'category = "elementwise"\ncolour = "blue"'), "colour: unknown key"),
    ("misspelt key", ("forbidden_ops", "forbiden_ops"), "interface.forbiden_ops: unknown key"),
    ("missing field", ('title = "Scale a vector"\n', ""), "title: missing key"),
    ("wrong type", ("atol = 1e-6", 'atol = "small"'), "tolerance.float32.atol: expected float, got str 'small'"),
    ("bad level", ('level = "L1"', 'level = "L4"'), "design[4].level: expected one of 'L1' | 'L2' | 'L3', got 'L4'"),
    ("unknown property", ('properties = ["fast_math"]', 'properties = ["warp_magic"]'),
     "design[2].properties: unknown property 'warp_magic' (not in the catalogue)"),
    ("unknown dependency", ('depends_on = ["stride"]', 'depends_on = ["strides"]'), "design[2].depends_on: unknown design item 'strides'"),
    ("self dependency", ('depends_on = ["stride"]', 'depends_on = ["fast"]'), "design[2].depends_on: an item cannot depend on itself"),
    ("dependency cycle", ('guidance = "Loop over the data with a grid stride."',
                          'guidance = "Loop over the data with a grid stride."\ndepends_on = ["vector_stride"]'),
     "design: dependency cycle: stride -> vector_stride -> stride"),
    ("missing shape parameter", ("params = { N = 64,", "params = { M = 64,"), "workload[1].params: missing parameter 'N' used by the interface"),
    ("non-positive shape", ("N = 1048576", "N = 0"), "workload[0].params.N: shape parameter must be a positive integer, got 0"),
    ("unknown dtype", ('N = 1048576, dtype = "float32"', 'N = 1048576, dtype = "float33"'), "workload[0].params.dtype: unknown dtype 'float33'"),
    ("missing tolerance", ('N = 1048576, dtype = "float32"', 'N = 1048576, dtype = "bfloat16"'), "tolerance: no tolerance for dtype 'bfloat16' used by a workload"),
    ("no smoke workload", ("smoke = true", "smoke = false"), "workload: needs exactly one workload with smoke = true, found 0"),
    ("duplicate workload", ('name = "smoke"', 'name = "big"'), "workload[1].name: duplicate workload name 'big'"),
    ("duplicate design id", ('id = "fast"', 'id = "vector"'), "design[2].id: duplicate design item id 'vector'"),
    ("id not folder", ('id = "scale"', 'id = "scaled"'), "id: task id 'scaled' does not match its folder 'scale'"),
]


@pytest.mark.parametrize("name,change,expected", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_spec_is_reported(task_dir, catalogue, name, change, expected):
    edit(task_dir, *change)
    found = problems_of(task_dir, catalogue)
    assert any(p.startswith(expected) for p in found), found
    assert len(found) == 1, f"one mistake should give one problem: {found}"


def test_toml_syntax_error_names_the_line(task_dir, catalogue):
    edit(task_dir, 'title = "Scale a vector"', "title = ")
    (problem,) = problems_of(task_dir, catalogue)
    assert "TOML syntax error" in problem and "line 3" in problem


def test_too_few_design_items(task_dir, catalogue):
    text = (task_dir / "task.toml").read_text()
    (task_dir / "task.toml").write_text(text[: text.index('[[design]]\nid = "any_of"')])
    assert "design: expected 5-9 design items, found 4" in problems_of(task_dir, catalogue)


def test_missing_reference_and_expert(task_dir, catalogue):
    (task_dir / "reference.py").unlink()
    shutil.rmtree(task_dir / "expert")
    found = problems_of(task_dir, catalogue)
    assert ": missing reference.py beside task.toml" in found
    assert any(p.startswith("baseline.expert: expert 'expert' not found") for p in found)


def test_every_problem_is_reported_at_once(task_dir, catalogue):
    edit(task_dir, 'level = "L1"', 'level = "L9"')
    edit(task_dir, "atol = 1e-6", 'atol = "x"')
    assert len(problems_of(task_dir, catalogue)) == 2


def test_load_task_raises_with_file_and_key(task_dir, catalogue):
    edit(task_dir, "forbidden_ops", "forbiden_ops")
    with pytest.raises(SpecError) as err:
        load_task(task_dir, catalogue)
    assert f"{task_dir / 'task.toml'}: interface.forbiden_ops: unknown key" in str(err.value)


def test_inputs_that_cannot_be_built(task_dir, catalogue):
    edit(task_dir, "p = workload.params", 'p = workload.params\n    p["N"] + "x"', file="reference.py")
    (problem, *_) = check_inputs(load_task(task_dir, catalogue))
    assert problem.key == "workload[0] (big)"
    assert "inputs cannot be built" in problem.message and "reference.py:12" in problem.message


def test_inputs_that_disagree_with_the_interface(task_dir, catalogue):
    edit(task_dir, '(p["N"],)', '(p["N"], 2)', file="reference.py")
    found = [p.message for p in check_inputs(load_task(task_dir, catalogue))]
    assert "input 'x' has shape (1048576, 2), the interface says (1048576,)" in found


def test_slow_smoke_workload(task_dir, catalogue):
    edit(task_dir, "return 2 * x", "import time; time.sleep(1.2)\n    return 2 * x", file="reference.py")
    messages = [p.message for p in check_inputs(load_task(task_dir, catalogue))]
    assert any(m.startswith("smoke workload took") and "budget 3 s" in m for m in messages)


def test_reference_missing_functions(task_dir, catalogue):
    edit(task_dir, "def flops(params):", "def flop_count(params):", file="reference.py")
    (problem,) = check_inputs(load_task(task_dir, catalogue))
    assert problem.message == "missing function(s): flops"


def test_zero_flops_is_data_movement_but_zero_bytes_is_not(task_dir, catalogue):
    """A transpose computes nothing (flops 0 is valid); negative flops or zero bytes are bugs."""
    edit(task_dir, 'return float(params["N"])', "return 0.0", file="reference.py")
    assert check_inputs(load_task(task_dir, catalogue)) == []
    edit(task_dir, "return 0.0", "return -1.0", file="reference.py")
    assert any(p.message == "flops() returned -1.0, expected a non-negative number" for p in check_inputs(load_task(task_dir, catalogue)))
    edit(task_dir, "return 8.0 * params[\"N\"]", "return 0.0", file="reference.py")
    assert any(p.message == "bytes_moved() returned 0.0, expected a positive number" for p in check_inputs(load_task(task_dir, catalogue)))


def _with_int_input(folder: Path, param: str = "k") -> None:
    """The fixture task with a second input ``k``: a Python int passed by value (dtype "int")."""
    edit(folder, 'inputs = [{ name = "x", shape = ["N"], dtype = "dtype" }]',
         f'inputs = [{{ name = "x", shape = ["N"], dtype = "dtype" }}, {{ name = "{param}", shape = [], dtype = "int" }}]')
    text = (folder / "task.toml").read_text()
    (folder / "task.toml").write_text(text.replace("params = { N = ", "params = { k = 3, N = "))
    edit(folder, 'return (sample((p["N"],), p["dtype"], workload.distribution, generator(seed, device), device),)',
         'return (sample((p["N"],), p["dtype"], workload.distribution, generator(seed, device), device), int(p["k"]))',
         file="reference.py")
    edit(folder, "def reference(x):\n    return 2 * x", "def reference(x, k):\n    return k * x", file="reference.py")


def test_an_int_input_passed_by_value(task_dir, catalogue):
    _with_int_input(task_dir)
    assert problems_of(task_dir, catalogue) == []
    assert check_inputs(load_task(task_dir, catalogue)) == []


def test_an_int_input_needs_its_workload_parameter_and_an_empty_shape(task_dir, catalogue):
    _with_int_input(task_dir)
    edit(task_dir, 'name = "k", shape = []', 'name = "k", shape = ["N"]')
    assert "interface.inputs: 'k' is an int passed by value: its shape must be []" in problems_of(task_dir, catalogue)
    edit(task_dir, 'name = "k", shape = ["N"]', 'name = "kk", shape = []')
    assert any(p.endswith("missing parameter 'kk' used by the interface") for p in problems_of(task_dir, catalogue))


def test_an_int_input_must_be_the_int_of_the_workload(task_dir, catalogue):
    _with_int_input(task_dir)
    edit(task_dir, 'int(p["k"]))', 'float(p["k"]))', file="reference.py")
    messages = [p.message for p in check_inputs(load_task(task_dir, catalogue))]
    assert "input 'k' is 3.0, the interface passes the int workload parameter k = 3" in messages


def test_an_output_cannot_be_an_int(task_dir, catalogue):
    edit(task_dir, 'outputs = [{ name = "y", shape = ["N"], dtype = "dtype" }]', 'outputs = [{ name = "y", shape = [], dtype = "int" }]')
    assert "interface.outputs: 'y': outputs are tensors (dtype 'int' is for inputs passed by value)" in problems_of(task_dir, catalogue)
