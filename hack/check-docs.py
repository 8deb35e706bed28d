#!/usr/bin/env python3
"""Checks every command shown in README.md and docs/*.md, so the docs cannot rot.

Every ```sh block must be valid bash. Each command in it is then checked by what it runs:
  make TARGET VAR=v    TARGET is a target of the Makefile, VAR a variable it sets
  kubectl celld ...    parses with the built plugin's own argument parser (ARGS --help)
  kubectl-celld ...    the same
  celld-operator ...   parses with the built operator's argument parser
  cargo run -p P -- A  P is a workspace package; A parses when P is celld-operator
  kubectl ...          parses with the local control plane's kubectl (ARGS --help)
  ln -s kubectl-celld D  D is named kubectl_complete-celld, and the built plugin started through
                       a link of that name answers kubectl's completion requests
  anything else        a tool outside this repository: shell syntax only, listed in the report
and every argument that names a file or directory of the repository must exist.

Run by `make check-docs` (part of `make test`), which builds the binaries first.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
PLUGIN = TARGET_DIR / "debug" / "kubectl-celld"
OPERATOR = TARGET_DIR / "debug" / "celld-operator"
# Tools that are not part of this repository: the docs show how to use them with it, and this
# check can only parse their command lines as shell.
EXTERNAL = {
    "curl", "docker", "kind", "git", "sha256sum", "shasum", "chmod", "sudo", "mv", "grep", "echo",
    "export", "set", "source", ".", "cd", "jq", "celld", "tee", "head", "cat", "sed", "awk", "uname",
    "tr", "cosign", "gh",
}
KUBECTL_EXTERNAL_PLUGINS = {"krew"}
SHELL_BLOCK = re.compile(r"^```(sh|bash|shell|console)\s*$")
# The name kubectl runs to complete `kubectl celld ...`: a link to the plugin.
KUBECTL_COMPLETE = "kubectl_complete-celld"


def kubectl_binary() -> Path:
    version = ""
    for line in (ROOT / "testenv" / "versions.env").read_text().splitlines():
        if line.startswith("KUBERNETES_VERSION="):
            version = line.split("=", 1)[1].strip()
    cache = os.environ.get("CELLD_TESTENV_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "celld-operator", "testenv"
    )
    return Path(cache) / f"kubernetes-{version}" / "bin" / "kubectl"


def shell_blocks(path: Path):
    """(first line number, text) of every shell code block."""
    block, start = None, 0
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if block is None:
            if SHELL_BLOCK.match(line.strip()):
                block, start = [], n + 1
        elif line.strip() == "```":
            yield start, "\n".join(block) + "\n"
            block = None
        else:
            block.append(line)


def logical_lines(text: str):
    """(line number offset, command line) with continuations joined and heredoc bodies dropped."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        heredoc = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", line)
        if heredoc:
            end = heredoc.group(1)
            while i + 1 < len(lines) and lines[i + 1].strip() != end:
                i += 1
            i += 1
            line = line[: heredoc.start()]
        i += 1
        if line.strip():
            yield start, line


def substitutions(line: str) -> list[str]:
    """Commands inside $(...) and <(...)."""
    return re.findall(r"[$<]\(([^()]*)\)", line)


def simple_commands(line: str) -> list[list[str]]:
    """The simple commands of a line: split on ; && || | and parsed as shell words."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands, words = [], []
    try:
        tokens = list(lexer)
    except ValueError as e:
        raise ValueError(f"cannot split into words: {e}") from e
    for token in tokens:
        if token and set(token) <= set(";&|()"):
            if words:
                commands.append(words)
            words = []
        elif token and set(token) <= set("<>"):
            words.append(token)
        else:
            words.append(token)
    if words:
        commands.append(words)
    cleaned = []
    for words in commands:
        # drop redirections and their targets, and leading VAR=value assignments
        out, skip = [], False
        for w in words:
            if skip:
                skip = False
                continue
            if set(w) <= set("<>") or re.fullmatch(r"\d?>>?|<", w):
                skip = True
                continue
            out.append(w)
        while out and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", out[0]):
            out.pop(0)
        if out:
            cleaned.append(out)
    return cleaned


def makefile_targets() -> set[str]:
    targets = set()
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_-]+):(?!=)", line)
        if m:
            targets.add(m.group(1))
    return targets


def makefile_variables() -> set[str]:
    """The variables the Makefile sets (VAR = ..., VAR ?= ..., VAR := ...)."""
    names = set()
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*[?:+]?=", line)
        if m:
            names.add(m.group(1))
    return names


def parses(binary: Path, args: list[str]) -> str | None:
    """None when `binary ARGS --help` exits 0 (every flag and value before --help parsed)."""
    args = [a for a in args if a != "--"]
    out = subprocess.run([str(binary), *args, "--help"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "KUBECONFIG": "/nonexistent"})
    if out.returncode == 0:
        return None
    return (out.stderr or out.stdout).strip().splitlines()[0] if (out.stderr or out.stdout).strip() else f"exit {out.returncode}"


def repository_paths(words: list[str]) -> list[str]:
    """Arguments that name a file of this repository (relative paths with a known top-level)."""
    tops = {p.name for p in ROOT.iterdir()}
    found = []
    for w in words:
        value = w.split("=", 1)[1] if w.startswith("--") and "=" in w else w
        if "$" in value or "://" in value or value.startswith("-"):
            continue
        first = value.split("/", 1)[0]
        if "/" in value and first in tops and first not in {"bin", "target", "dist"}:
            found.append(value)
    return found


class Checker:
    def __init__(self):
        self.targets = makefile_targets()
        self.variables = makefile_variables()
        self.kubectl = kubectl_binary()
        self.failures: list[str] = []
        self.counts: dict[str, int] = {}
        self.external: set[str] = set()
        workspace = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
                                   capture_output=True, text=True, cwd=ROOT)
        self.packages = set(re.findall(r'"name":"([^"]+)","version"', workspace.stdout))

    def count(self, kind: str):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def fail(self, where: str, words: list[str], why: str):
        self.failures.append(f"{where}: `{' '.join(words)}`: {why}")

    def command(self, where: str, words: list[str]):
        if words[0] == "sudo":
            words = words[1:]
        for path in repository_paths(words):
            if not (ROOT / path).exists():
                self.fail(where, words, f"{path} does not exist in the repository")
        program, args = words[0], words[1:]
        if program == "make":
            self.count("make")
            for t in args:
                if t.startswith("-"):
                    continue
                if "=" in t:
                    name = t.split("=", 1)[0]
                    if name not in self.variables:
                        self.fail(where, words, f"the Makefile sets no variable '{name}'")
                elif t not in self.targets:
                    self.fail(where, words, f"the Makefile has no target '{t}'")
        elif program == "kubectl" and args[:1] == ["celld"]:
            self.plugin(where, words, args[1:])
        elif program in ("kubectl-celld", "bin/kubectl-celld"):
            self.plugin(where, words, args)
        elif program == "celld-operator":
            self.count("celld-operator")
            why = parses(OPERATOR, args)
            if why:
                self.fail(where, words, f"celld-operator refuses the arguments: {why}")
        elif program == "cargo":
            self.cargo(where, words, args)
        elif program == "kubectl":
            if args[:1] and args[0] in KUBECTL_EXTERNAL_PLUGINS:
                self.external.add(f"kubectl {args[0]}")
                return
            self.count("kubectl")
            if not self.kubectl.exists():
                self.fail(where, words, f"no kubectl at {self.kubectl}: run 'make testenv' first")
                return
            why = parses(self.kubectl, args)
            if why:
                self.fail(where, words, f"kubectl refuses the arguments: {why}")
        elif program == "ln":
            self.link(where, words, args)
        elif program.startswith(("hack/", "testenv/")):
            self.count("script")
            if not (ROOT / program).exists():
                self.fail(where, words, f"{program} does not exist")
        elif program in EXTERNAL or re.fullmatch(r"kubectl-celld_\$\{?OS", program):
            self.external.add(program)
        else:
            self.fail(where, words, f"'{program}' is neither a command this check knows how to verify nor a listed external tool (add it to EXTERNAL in hack/check-docs.py with care)")

    def plugin(self, where: str, words: list[str], args: list[str]):
        self.count("kubectl celld")
        why = parses(PLUGIN, args)
        if why:
            self.fail(where, words, f"the plugin refuses the arguments: {why}")

    def link(self, where: str, words: list[str], args: list[str]):
        """`ln -s[f] kubectl-celld DEST`: the completion link, which must work as kubectl runs it."""
        self.count("ln")
        flags = [a for a in args if a.startswith("-")]
        operands = [a for a in args if not a.startswith("-")]
        if not any("s" in f for f in flags) or len(operands) != 2 or operands[0] != "kubectl-celld":
            self.fail(where, words, "the only link the docs may show is `ln -s kubectl-celld DIR/kubectl_complete-celld`")
            return
        if Path(operands[1]).name != KUBECTL_COMPLETE:
            self.fail(where, words, f"kubectl completes `kubectl celld` through {KUBECTL_COMPLETE}, not {Path(operands[1]).name}")
            return
        with tempfile.TemporaryDirectory() as tmp:
            link = Path(tmp) / KUBECTL_COMPLETE
            link.symlink_to(PLUGIN.resolve())
            out = subprocess.run([str(link), "hi"], capture_output=True, text=True, timeout=60,
                                 env={**os.environ, "KUBECONFIG": "/nonexistent"})
        lines = out.stdout.splitlines()
        if out.returncode != 0 or not lines or lines[-1] != ":4" or not lines[0].startswith("history\t"):
            self.fail(where, words, f"the plugin started as {KUBECTL_COMPLETE} does not answer a completion request (`{KUBECTL_COMPLETE} hi` printed {out.stdout!r}, exit {out.returncode})")

    def cargo(self, where: str, words: list[str], args: list[str]):
        self.count("cargo")
        package = None
        if "-p" in args:
            package = args[args.index("-p") + 1]
        if package is not None and package not in self.packages:
            self.fail(where, words, f"the workspace has no package '{package}'")
        if args[:1] == ["run"] and package == "celld-operator" and "--" in args:
            why = parses(OPERATOR, args[args.index("--") + 1:])
            if why:
                self.fail(where, words, f"celld-operator refuses the arguments: {why}")

    def file(self, path: Path):
        rel = path.relative_to(ROOT)
        for start, block in shell_blocks(path):
            where = f"{rel}:{start}"
            syntax = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True)
            if syntax.returncode != 0:
                self.failures.append(f"{where}: the block is not valid bash: {syntax.stderr.strip()}")
                continue
            self.count("block")
            for offset, line in logical_lines(block):
                at = f"{rel}:{start + offset}"
                try:
                    commands = simple_commands(line)
                    for inner in substitutions(line):
                        commands += simple_commands(inner)
                except ValueError as e:
                    self.failures.append(f"{at}: {e}")
                    continue
                for words in commands:
                    self.command(at, words)


def main() -> int:
    for binary in (PLUGIN, OPERATOR):
        if not binary.exists():
            print(f"check-docs: {binary} is missing: run 'cargo build -p kubectl-celld -p celld-operator' (make check-docs does)", file=sys.stderr)
            return 1
    checker = Checker()
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for f in files:
        checker.file(f)
    counts = ", ".join(f"{n} {k}" for k, n in sorted(checker.counts.items()))
    print(f"check-docs: {len(files)} files: {counts}")
    print(f"check-docs: shell syntax only (tools outside the repository): {', '.join(sorted(checker.external))}")
    if checker.failures:
        print("\n".join(f"check-docs: {f}" for f in checker.failures), file=sys.stderr)
        print(f"check-docs: {len(checker.failures)} command(s) in the docs do not work as shown", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
