"""What the interop drivers share: exact JSON comparison and a tally of checks."""

import json
from typing import Any


def same(got: Any, want: Any) -> bool:
    """Equal as JSON values: numbers by value, never a boolean for a number, the rest exactly."""
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, (int, float)):
        return isinstance(got, (int, float)) and got == want
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    return type(got) is type(want) and got == want


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    def equal(self, what: str, got: Any, want: Any) -> bool:
        if same(got, want):
            self.passed += 1
            return True
        self.failed.append(
            f"{what}:\n    got  {json.dumps(got, ensure_ascii=False)}\n    want {json.dumps(want, ensure_ascii=False)}"
        )
        return False

    def true(self, what: str, condition: bool, detail: str) -> bool:
        if condition:
            self.passed += 1
        else:
            self.failed.append(f"{what}: {detail}")
        return condition

    def report(self) -> int:
        """Prints the tally (and each failure); the exit status."""
        for failure in self.failed:
            print(f"FAIL {failure}")
        print(f"{self.passed} checks passed, {len(self.failed)} failed")
        return 1 if self.failed else 0

    def summary(self, label: str) -> int:
        """Prints each failure and the tally under `label` (the component drivers' form); the exit status."""
        for failure in self.failed:
            print(f"FAILED {failure}")
        print(f"{label}: {self.passed} passed, {len(self.failed)} failed")
        return 1 if self.failed else 0


def texts(result) -> list[str]:
    return [c.text for c in result.content if c.type == "text"]


def dump(model) -> Any:
    """The model as JSON, without the 2026 wire's `resultType` (not what is checked here)."""
    data = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(data, dict):
        data.pop("resultType", None)
    return data
