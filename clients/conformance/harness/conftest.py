"""Options of the conformance suite (also from the environment, for CTest).

  --driver "CMD ARGS"   the driver to run (LEASEHOLD_CONFORMANCE_DRIVER)
  --mutants             run each scenario against its mutant instead and
                        expect it to fail (LEASEHOLD_CONFORMANCE_MUTANTS=1)
  --tls                 every server over HTTPS, every URL https:// (tls.py;
                        LEASEHOLD_CONFORMANCE_TLS=1)
The server binary comes from LEASEHOLD_BINARY.
"""

from __future__ import annotations

import os

import pytest

from . import tls


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--driver", default=os.environ.get("LEASEHOLD_CONFORMANCE_DRIVER"))
    parser.addoption(
        "--mutants",
        action="store_true",
        default=os.environ.get("LEASEHOLD_CONFORMANCE_MUTANTS") == "1",
    )
    parser.addoption(
        "--tls",
        action="store_true",
        default=os.environ.get("LEASEHOLD_CONFORMANCE_TLS") == "1",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--tls"):
        tls.enable()


@pytest.fixture
def driver_command(request: pytest.FixtureRequest) -> str:
    command = request.config.getoption("--driver")
    if not command:
        pytest.fail("no driver: pass --driver 'CMD ARGS' or set LEASEHOLD_CONFORMANCE_DRIVER")
    return str(command)


@pytest.fixture
def mutants(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--mutants"))


@pytest.fixture
def binary() -> str:
    path = os.environ.get("LEASEHOLD_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"LEASEHOLD_BINARY is not an executable: {path!r}")
    return path
