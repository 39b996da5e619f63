"""Every scenario against the driver given (conftest.py), or, with
--mutants, every scenario against the mutant it names, expecting it to fail:
a scenario that a client without the behaviour still passes proves nothing."""

from __future__ import annotations

import pytest

from .runner import Run, ScenarioFailed, load, names


@pytest.mark.parametrize("scenario", names())
def test_scenario(scenario: str, driver_command: str, binary: str, mutants: bool) -> None:
    if not mutants:
        Run(scenario, driver_command, binary).run()
        return
    mutant = load(scenario).get("mutant")
    if not mutant:
        pytest.fail(f"{scenario} names no mutant: nothing shows it can fail")
    try:
        Run(scenario, f"{driver_command} --mutant {mutant}", binary).run()
    except ScenarioFailed as failure:
        print(f"{scenario} fails against mutant {mutant}, as it must:\n{failure}")
        return
    pytest.fail(f"{scenario} passed against mutant {mutant}: it does not check that behaviour")


def test_every_mutant_is_described() -> None:
    """The README's table names every mutant a scenario uses."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for scenario in names():
        mutant = load(scenario).get("mutant")
        assert mutant and f"`{mutant}`" in readme, f"{scenario}: mutant {mutant!r} not in README.md"
