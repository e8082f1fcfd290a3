"""``python -m jurybench.validity [--quick] [--json] [AREA ...]``: the validity suite."""

from __future__ import annotations

import argparse
import json
import sys

from jurybench.validity import AREAS, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jurybench.validity", description=__doc__)
    parser.add_argument("areas", nargs="*", help=f"areas to check: {', '.join(AREAS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="fewer replications; fails only on evidence")
    parser.add_argument("--json", action="store_true", help="one JSON object per claim")
    args = parser.parse_args(argv)
    from jurybench.errors import JurybenchError

    try:
        claims = run(quick=args.quick, areas=tuple(args.areas) or AREAS)
    except JurybenchError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 2
    for c in claims:
        if args.json:
            print(json.dumps(c.as_dict(), default=float))
            continue
        mark = "ok  " if c.holds else "FAIL"
        print(
            f"{mark} [{c.area}] {c.claim}: measured {c.measured:.3g} "
            f"(95 % {c.ci[0]:.3g}..{c.ci[1]:.3g}, n = {c.replications}; allowed {c.target()})"
            + (f" -- {c.note}" if c.note else "")
        )
    failed = [c for c in claims if not c.holds]
    if not args.json:
        print(f"{len(claims) - len(failed)} of {len(claims)} claims hold ({'quick' if args.quick else 'full'} suite)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
