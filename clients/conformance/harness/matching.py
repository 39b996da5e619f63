"""Expectations of the scenarios: a JSON value that an answer must match.

- an object matches an object that has every key it names, each matching
  (other keys are free); `{"$absent": true}` as a value: the key is missing
  or null;
- a list matches a list of the same length, element by element;
- a scalar matches an equal scalar (1 and 1.0 are equal; true is not 1);
- operators, as an object with one `$` key: `$gt`, `$ge`, `$lt`, `$le`,
  `$ne` (numbers or strings), `$contains` (a list with some element that
  matches), `$count` (`[EXPECTATION, N]`: a list with exactly N elements
  that match), `$len` (a list or string of that length), `$all` (a list
  of expectations, all met), `$any` (anything, present).
"""

from __future__ import annotations

from typing import Any


class Mismatch(AssertionError):
    pass


_COMPARE = {
    "$gt": lambda a, b: a > b,
    "$ge": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$le": lambda a, b: a <= b,
    "$ne": lambda a, b: a != b,
}


def match(expected: Any, actual: Any, path: str = "") -> None:
    if isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)).startswith("$"):
        _operator(next(iter(expected)), next(iter(expected.values())), actual, path)
    elif isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise Mismatch(f"{path}: expected an object like {expected}, got {actual!r}")
        for key, want in expected.items():
            if want == {"$absent": True}:
                if actual.get(key) is not None:
                    raise Mismatch(f"{path}.{key}: expected absent, got {actual[key]!r}")
                continue
            if key not in actual:
                raise Mismatch(f"{path}: expected key {key!r} in {actual!r}")
            match(want, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise Mismatch(
                f"{path}: expected {len(expected)} items like {expected}, got {actual!r}"
            )
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            match(want, got, f"{path}[{i}]")
    elif not _same_scalar(expected, actual):
        raise Mismatch(f"{path}: expected {expected!r}, got {actual!r}")


def _matches(expected: Any, actual: Any) -> bool:
    try:
        match(expected, actual)
    except Mismatch:
        return False
    return True


def _same_scalar(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def _operator(op: str, operand: Any, actual: Any, path: str) -> None:
    if op in _COMPARE:
        try:
            ok = actual is not None and _COMPARE[op](actual, operand)
        except TypeError:
            ok = False
        if not ok:
            raise Mismatch(f"{path}: expected {op} {operand!r}, got {actual!r}")
    elif op == "$contains":
        if not isinstance(actual, list):
            raise Mismatch(f"{path}: expected a list containing {operand}, got {actual!r}")
        if any(_matches(operand, item) for item in actual):
            return
        raise Mismatch(f"{path}: no item matches {operand} in {actual!r}")
    elif op == "$count":
        want, count = operand
        if not isinstance(actual, list):
            raise Mismatch(f"{path}: expected a list, got {actual!r}")
        matching = sum(1 for item in actual if _matches(want, item))
        if matching != count:
            raise Mismatch(
                f"{path}: expected {count} items like {want}, got {matching} in {actual!r}"
            )
    elif op == "$len":
        if not isinstance(actual, (list, str)) or len(actual) != operand:
            raise Mismatch(f"{path}: expected length {operand}, got {actual!r}")
    elif op == "$all":
        for want in operand:
            match(want, actual, path)
    elif op == "$any":
        if actual is None:
            raise Mismatch(f"{path}: expected a value, got null")
    else:
        raise Mismatch(f"{path}: unknown operator {op}")
