"""The `units` world of wit/units.wit, in Python, for componentize-py.

A plain component: it exports ordinary WIT functions (no `warden:plugin` interface),
which Warden serves as MCP tools. Everything here is deterministic: no clock, no
randomness, no I/O.

    componentize-py -d wit -w units componentize app -o python-component.wasm
"""

import re
from typing import List, Optional

import wit_world
from componentize_py_types import Err
from wit_world import Dimension, Quantity
from wit_world.exports import length

# Linear units: how many of the dimension's base unit (metre, kilogram, second) one
# unit is. Each dimension's units are listed smallest first.
FACTORS = {
    Dimension.DISTANCE: {
        "mm": 0.001,
        "cm": 0.01,
        "in": 0.0254,
        "ft": 0.3048,
        "yd": 0.9144,
        "m": 1.0,
        "km": 1000.0,
        "mi": 1609.344,
    },
    Dimension.MASS: {
        "mg": 0.000001,
        "g": 0.001,
        "oz": 0.028349523125,
        "lb": 0.45359237,
        "kg": 1.0,
        "t": 1000.0,
    },
    Dimension.DURATION: {
        "ms": 0.001,
        "s": 1.0,
        "min": 60.0,
        "h": 3600.0,
        "d": 86400.0,
        "wk": 604800.0,
    },
}
# Temperatures are affine, converted through degrees Celsius.
TEMPERATURES = ["°C", "°F", "K"]

DIMENSIONS = {symbol: dim for dim, units in FACTORS.items() for symbol in units}
DIMENSIONS.update({symbol: Dimension.TEMPERATURE for symbol in TEMPERATURES})

LENGTH_FACTORS = {
    length.LengthUnit.MILLIMETRE: 0.001,
    length.LengthUnit.CENTIMETRE: 0.01,
    length.LengthUnit.METRE: 1.0,
    length.LengthUnit.KILOMETRE: 1000.0,
    length.LengthUnit.INCH: 0.0254,
    length.LengthUnit.FOOT: 0.3048,
    length.LengthUnit.YARD: 0.9144,
    length.LengthUnit.MILE: 1609.344,
}

# A number, then a unit symbol that does not start like a number.
QUANTITY = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d.+-]\S*)\s*")


def units_of(dimension: Dimension) -> List[str]:
    if dimension == Dimension.TEMPERATURE:
        return list(TEMPERATURES)
    return list(FACTORS[dimension])


def dimension_of(symbol: str) -> Dimension:
    if symbol not in DIMENSIONS:
        raise Err(f'unknown unit "{symbol}"')
    return DIMENSIONS[symbol]


def to_celsius(value: float, unit: str) -> float:
    if unit == "°F":
        return (value - 32.0) * 5.0 / 9.0
    if unit == "K":
        return value - 273.15
    return value


def from_celsius(value: float, unit: str) -> float:
    if unit == "°F":
        return value * 9.0 / 5.0 + 32.0
    if unit == "K":
        return value + 273.15
    return value


class WitWorld(wit_world.WitWorld):
    def parse_quantity(self, text: str) -> Quantity:
        found = QUANTITY.fullmatch(text)
        if found is None:
            raise Err(f'expected a number and a unit symbol, e.g. "3.5 km", got "{text}"')
        unit = found.group(2)
        return Quantity(value=float(found.group(1)), unit=unit, dimension=dimension_of(unit))

    def convert(self, value: float, from_unit: str, to_unit: str) -> float:
        source, target = dimension_of(from_unit), dimension_of(to_unit)
        if source != target:
            raise Err(
                f"cannot convert {from_unit} ({source.name.lower()}) to {to_unit} ({target.name.lower()})"
            )
        if source == Dimension.TEMPERATURE:
            return from_celsius(to_celsius(value, from_unit), to_unit)
        return value * FACTORS[source][from_unit] / FACTORS[source][to_unit]

    def list_units(self, dimension: Dimension) -> List[str]:
        return units_of(dimension)

    def format_duration(self, seconds: int, max_parts: Optional[int]) -> str:
        days, rest = divmod(seconds, 86400)
        hours, rest = divmod(rest, 3600)
        minutes, secs = divmod(rest, 60)
        parts = [f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")) if n]
        if not parts:
            return "0s"
        if max_parts is not None:
            parts = parts[: max(max_parts, 1)]
        return " ".join(parts)

    def check_unit(self, symbol: str) -> None:
        if symbol not in DIMENSIONS:
            known = ", ".join(s for dim in Dimension for s in units_of(dim))
            raise Err(f'unknown unit "{symbol}"; known units: {known}')


class Length(wit_world.exports.Length):
    def convert(self, value: float, from_unit: length.LengthUnit, to_unit: length.LengthUnit) -> float:
        return value * LENGTH_FACTORS[from_unit] / LENGTH_FACTORS[to_unit]
