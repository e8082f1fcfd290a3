"""A generation unit: one prompt under one combination of treatment arms, written
``prompt_id|variable=arm|...`` (the engine's subject id when generating)."""

from __future__ import annotations


def unit_id(prompt_id: str, arms: dict[str, str]) -> str:
    return prompt_id + "".join(f"|{k}={v}" for k, v in arms.items())


def parse_unit(unit: str) -> tuple[str, dict[str, str]]:
    prompt_id, *parts = unit.split("|")
    return prompt_id, dict(p.split("=", 1) for p in parts)
