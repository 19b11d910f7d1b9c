"""Validates request bodies of POST /responses against OpenAI's published types.

The `openai` Python package is generated from OpenAI's OpenAPI document; its `ResponseCreateParams` TypedDicts are
the published request schema. Every object of those types is closed here (an unknown member is a violation, as the
service's 400 would be), and every list is validated to its last item (pydantic checks `Iterable` members lazily).

Usage: python3 validate_bodies.py BODIES.jsonl   (one JSON body per line, optionally {"label": ..., "body": ...})
Prints one line per violation and exits 1 when there is any; prints the count checked and exits 0 otherwise.
"""

import importlib
import json
import pkgutil
import sys

import openai.types
from pydantic import ConfigDict, TypeAdapter, ValidationError

for info in pkgutil.walk_packages(openai.types.__path__, "openai.types."):
    try:
        module = importlib.import_module(info.name)
    except Exception:  # a module of another API surface that needs an optional dependency
        continue
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, dict) and hasattr(value, "__total__"):
            value.__pydantic_config__ = ConfigDict(extra="forbid")

from openai.types.responses.response_create_params import (  # noqa: E402 (after the types are closed)
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)

STREAMING = TypeAdapter(ResponseCreateParamsStreaming)
WHOLE = TypeAdapter(ResponseCreateParamsNonStreaming)


def drain(value):
    """Consumes every lazily validated iterable, so its items are validated too."""
    if isinstance(value, dict):
        for v in value.values():
            drain(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            drain(v)
    elif hasattr(value, "__next__"):
        for v in value:
            drain(v)


def main(path):
    checked, violations = 0, 0
    with open(path, encoding="utf-8") as lines:
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            label, body = (record["label"], record["body"]) if "body" in record else (f"line {n}", record)
            adapter = STREAMING if body.get("stream") else WHOLE
            checked += 1
            try:
                drain(adapter.validate_python(body))
            except ValidationError as error:
                violations += 1
                # Of a union's errors, the member the body names by its `type` says what is wrong.
                print(f"{label}: {error.error_count()} errors: {str(error)[:2000]}")
    print(f"{checked} bodies checked, {violations} with violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
