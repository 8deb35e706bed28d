#!/usr/bin/env python3
"""Upgrading the operator restarts no node unless the release says so.

The goldens under crates/controller/golden/pod-templates/ are the nodes' pod templates of a set
of fleet shapes (a test compares them with what the operator renders). Each is recorded in
accepted.txt with its sha256 and the reason the release notes give for its last change: either
`baseline` (as first recorded) or words of a line of docs/install.md's "Upgrading the operator"
section that says which fleets' nodes restart ("... restarts the nodes of fleets that ...").
A golden whose hash is not the one recorded, or whose line is not in docs/install.md, fails.
"""

import hashlib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "crates/controller/golden/pod-templates"
ACCEPTED = GOLDEN / "accepted.txt"
INSTALL = ROOT / "docs/install.md"
RESTARTS = "restarts the nodes of"


def upgrading_section() -> str:
    text = INSTALL.read_text()
    start = text.find("## Upgrading the operator")
    if start < 0:
        sys.exit(f"check-pod-templates: {INSTALL} has no '## Upgrading the operator' section")
    end = text.find("\n## ", start + 1)
    return " ".join(text[start : end if end > 0 else len(text)].split())


def main() -> int:
    section = upgrading_section()
    recorded = {}
    for number, line in enumerate(ACCEPTED.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(" ", 2)
        if len(parts) != 3:
            sys.exit(f"check-pod-templates: {ACCEPTED}:{number}: expected '<file> <sha256> <why>'")
        recorded[parts[0]] = (parts[1], parts[2].strip(), number)
    problems = []
    goldens = sorted(p.name for p in GOLDEN.glob("*.yaml"))
    for name in goldens:
        digest = hashlib.sha256((GOLDEN / name).read_bytes()).hexdigest()
        if name not in recorded:
            problems.append(f"{name} is not recorded in accepted.txt: add '{name} {digest} baseline' for a new shape")
            continue
        want, why, number = recorded[name]
        if want != digest:
            problems.append(
                f"the pod template of {name[:-5]} fleets changed (sha256 {digest}, accepted.txt:{number} has {want}): "
                f"upgrading the operator would restart their nodes. Add a line to docs/install.md's 'Upgrading the operator' "
                f"saying so ('... {RESTARTS} fleets that ...'), then record '{name} {digest} <words of that line>'"
            )
        elif why != "baseline" and (RESTARTS not in why or " ".join(why.split()) not in section):
            problems.append(
                f"accepted.txt:{number}: '{why}' is neither 'baseline' nor words of docs/install.md's 'Upgrading the operator' that say '{RESTARTS}'"
            )
    for name in sorted(set(recorded) - set(goldens)):
        problems.append(f"accepted.txt:{recorded[name][2]}: {name} has no golden: remove the line")
    for problem in problems:
        print(f"check-pod-templates: {problem}", file=sys.stderr)
    if not problems:
        print(f"check-pod-templates: {len(goldens)} pod templates, each as accepted")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
