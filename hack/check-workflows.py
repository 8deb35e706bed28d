#!/usr/bin/env python3
"""Checks the GitHub workflows and the release path against the rules a verifiable release needs.

  pinned-uses          every action that is not local (./...) is pinned by a full 40-hex commit
                       SHA, the release tag in a trailing comment (`uses: o/a@<sha> # v1.2.3`);
                       a docker:// action by @sha256:
  workflow-permissions the workflow's `permissions` exists and grants no write ({} or read only)
  job-permissions      every job says which permissions it needs; id-token: write only in a job
                       that signs or attests, attestations: write only where it attests,
                       packages: write only where it logs in to a registry, contents: write only
                       where it publishes (release-please, `gh release`, `git push`) or calls a
                       workflow
  secrets-inherit      no `secrets: inherit`
  checkout-credentials every actions/checkout has `persist-credentials: false`, unless the step
                       carries the comment `check-workflows: allow-persist-credentials <why>`
  release-workflow     release.yml renders its manifests with hack/render-release.sh from the
                       pushed images' digests (docker/build-push-action's `digest` output), never
                       ships the repository's install-operator.yaml (image by tag) as it is, and
                       builds every image on a base by digest
  release-manifest     the install manifests (install-*.yaml) rendered as the release workflow
                       renders them (made-up digests) run no image by tag alone, and
                       install-operator.yaml runs the pushed operator image; deployer.Dockerfile's
                       default celld image is pinned by digest

Usage: hack/check-workflows.py [--self-test]   (needs PyYAML: hack/check-packaging.sh puts the
pinned one from hack/tools.sh on PYTHONPATH). --self-test feeds a bad sample to every rule and
fails unless each is refused (and a good sample passes).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
REGISTRY = "ghcr.io/anthaathi"
ALLOW_PERSIST = "check-workflows: allow-persist-credentials"

PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}$")
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*['\"]?([^'\"\s#]+)['\"]?\s*(?:#\s*(.*))?$")
VERSION_COMMENT = re.compile(r"^v?\d+(\.\d+)*\b")
DIGEST_IMAGE = re.compile(r"@sha256:[0-9a-f]{64}$")
CHECKS_DIGEST = re.compile(r"sha256:\[0-9a-f\]\{64\}")
STEP_OUTPUT = re.compile(r"^\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.[A-Za-z0-9_-]+\s*\}\}$")


class LDict(dict):
    """A mapping that knows the lines (1-based, inclusive) it spans in its file."""

    first = last = 0


class Loader(yaml.SafeLoader):
    pass


def _mapping(loader: Loader, node: yaml.MappingNode) -> LDict:
    d = LDict(loader.construct_mapping(node, deep=True))
    d.first, d.last = node.start_mark.line + 1, node.end_mark.line + 1
    return d


Loader.add_constructor("tag:yaml.org,2002:map", _mapping)


@dataclass
class Finding:
    where: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: [{self.rule}] {self.message}"


def load(text: str):
    return yaml.load(text, Loader=Loader)  # noqa: S506 (a SafeLoader subclass)


def uses_of(job: dict) -> list[str]:
    return [s.get("uses", "") for s in job.get("steps") or [] if isinstance(s, dict)]


def runs_of(job: dict) -> str:
    return "\n".join(str(s.get("run", "")) for s in job.get("steps") or [] if isinstance(s, dict))


def check_workflow(name: str, text: str) -> list[Finding]:
    """The rules every workflow follows."""
    out: list[Finding] = []
    lines = text.splitlines()

    # pinned-uses, line by line: the version comment is not in the parsed YAML.
    for n, line in enumerate(lines, 1):
        m = USES_LINE.match(line)
        if not m:
            continue
        ref, comment = m.group(1), (m.group(2) or "").strip()
        if ref.startswith("./"):
            continue
        if ref.startswith("docker://"):
            if not DIGEST_IMAGE.search(ref):
                out.append(Finding(f"{name}:{n}", "pinned-uses", f"{ref} is not pinned by @sha256:<digest>"))
            continue
        if not PINNED.match(ref):
            out.append(Finding(f"{name}:{n}", "pinned-uses", f"{ref} is not pinned by a full 40-hex commit SHA"))
        elif not VERSION_COMMENT.match(comment):
            out.append(Finding(f"{name}:{n}", "pinned-uses", f"{ref} has no version comment (`# vX.Y.Z`)"))

    try:
        doc = load(text)
    except yaml.YAMLError as e:
        return out + [Finding(name, "yaml", f"does not parse: {e}")]
    if not isinstance(doc, dict):
        return out + [Finding(name, "yaml", "is not a mapping")]

    # workflow-permissions
    if "permissions" not in doc:
        out.append(Finding(name, "workflow-permissions", "no workflow-level `permissions` (the default token may write)"))
    else:
        perms = doc["permissions"]
        if isinstance(perms, str):
            if perms != "read-all":
                out.append(Finding(name, "workflow-permissions", f"workflow-level `permissions: {perms}` (use {{}} or read)"))
        elif isinstance(perms, dict):
            for scope, level in perms.items():
                if level not in ("read", "none"):
                    out.append(Finding(f"{name}:{perms.first}", "workflow-permissions",
                                       f"workflow-level `{scope}: {level}`: grant writes to the job that needs them"))
        elif perms is not None:
            out.append(Finding(name, "workflow-permissions", f"unexpected `permissions: {perms!r}`"))

    jobs = doc.get("jobs") or {}
    for job_id, job in jobs.items():
        if not isinstance(job, dict):
            continue
        where = f"{name}:{job.first}"
        # secrets-inherit
        if job.get("secrets") == "inherit":
            out.append(Finding(where, "secrets-inherit", f"job {job_id} passes every secret on (`secrets: inherit`)"))
        # job-permissions
        if "permissions" not in job:
            out.append(Finding(where, "job-permissions", f"job {job_id} does not say which permissions it needs"))
        else:
            out += job_permissions(name, job_id, job)
        # checkout-credentials
        for step in job.get("steps") or []:
            if not isinstance(step, dict) or not str(step.get("uses", "")).startswith("actions/checkout@"):
                continue
            persist = (step.get("with") or {}).get("persist-credentials")
            if persist is False or str(persist).lower() == "false":
                continue
            span = "\n".join(lines[max(step.first - 3, 0): step.last])
            if ALLOW_PERSIST in span:
                continue
            out.append(Finding(f"{name}:{step.first}", "checkout-credentials",
                               f"job {job_id}: actions/checkout without `persist-credentials: false` leaves the token in the git config "
                               f"(or say why with a `# {ALLOW_PERSIST} <why>` comment)"))
    return out


def job_permissions(name: str, job_id: str, job: dict) -> list[Finding]:
    perms = job["permissions"]
    where = f"{name}:{job.first}"
    if isinstance(perms, str):
        if perms == "write-all":
            return [Finding(where, "job-permissions", f"job {job_id}: `permissions: write-all`")]
        return []
    if not isinstance(perms, dict):
        return []
    if "uses" in job:  # calls a workflow: grants the most its jobs ask for, each asks for its own
        return []
    uses, runs = uses_of(job), runs_of(job)
    signs = any(u.startswith(("sigstore/cosign-installer@", "actions/attest")) for u in uses)
    attests = any(u.startswith("actions/attest") for u in uses)
    logs_in = any(u.startswith("docker/login-action@") for u in uses)
    publishes = (any(u.startswith("googleapis/release-please-action@") for u in uses)
                 or "gh release" in runs or "git push" in runs)
    need = {
        "id-token": (signs, "signs or attests nothing (cosign, actions/attest-*)"),
        "attestations": (attests, "attests nothing (actions/attest-*)"),
        "packages": (logs_in, "pushes no image (docker/login-action)"),
        "contents": (publishes, "publishes nothing (release-please, gh release, git push)"),
    }
    out = []
    for scope, level in perms.items():
        if level != "write" or scope not in need:
            continue
        ok, why = need[scope]
        if not ok:
            out.append(Finding(where, "job-permissions", f"job {job_id} has `{scope}: write` but {why}"))
    return out


def check_release_workflow(name: str, text: str) -> list[Finding]:
    """release.yml: the manifests are rendered from the pushed images' digests."""
    out: list[Finding] = []
    doc = load(text)
    jobs = (doc or {}).get("jobs") or {}
    runs = "\n".join(runs_of(j) for j in jobs.values() if isinstance(j, dict))
    if "hack/render-release.sh" not in runs:
        out.append(Finding(name, "release-workflow", "no step renders the release manifests with hack/render-release.sh"))
    if re.search(r"\bcp\s+(\./)?install-operator\.yaml\b", runs):
        out.append(Finding(name, "release-workflow", "ships the repository's install-operator.yaml (its image by tag) as it is"))
    builds = 0
    for job_id, job in jobs.items():
        if not isinstance(job, dict):
            continue
        steps = [s for s in job.get("steps") or [] if isinstance(s, dict)]
        by_id = {s.get("id"): s for s in steps if s.get("id")}
        for i, step in enumerate(steps):
            if not str(step.get("uses", "")).startswith("docker/build-push-action@"):
                continue
            builds += 1
            at = f"{name}:{step.first}"
            step_id = step.get("id")
            later = repr(steps[i + 1:])
            if not step_id or f"steps.{step_id}.outputs.digest" not in later:
                out.append(Finding(at, "release-workflow",
                                   f"job {job_id}: the image's digest (steps.<id>.outputs.digest) is not used after it is pushed"))
            args = str((step.get("with") or {}).get("build-args", "")).strip()
            for arg in filter(None, (a.strip() for a in args.splitlines())):
                value = arg.split("=", 1)[1] if "=" in arg and not arg.startswith("${{") else arg
                m = STEP_OUTPUT.match(value)
                if m:
                    source = by_id.get(m.group(1))
                    if source is None or not CHECKS_DIGEST.search(str(source.get("run", ""))):
                        out.append(Finding(at, "release-workflow",
                                           f"job {job_id}: build-arg {arg} comes from a step that does not check it is a sha256 digest"))
                elif "${{" in value or not DIGEST_IMAGE.search(value):
                    out.append(Finding(at, "release-workflow", f"job {job_id}: build-arg {arg} is not an image by digest"))
            if not args:
                out.append(Finding(at, "release-workflow", f"job {job_id}: the base image is not passed by digest (no build-args)"))
    if builds == 0:
        out.append(Finding(name, "release-workflow", "builds no image with docker/build-push-action"))
    return out


def manifest_images(text: str) -> list[tuple[int, str]]:
    """(line, image) of every `image:` with a value in a Kubernetes manifest."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(?:-\s+)?image:\s*['\"]?([^'\"\s#]+)", line)
        if m:
            found.append((n, m.group(1)))
    return found


def check_manifest(name: str, text: str) -> list[Finding]:
    out = []
    images = manifest_images(text)
    if not images:
        out.append(Finding(name, "release-manifest", "names no image"))
    for n, image in images:
        if not DIGEST_IMAGE.search(image):
            out.append(Finding(f"{name}:{n}", "release-manifest", f"image {image} is a tag alone (no @sha256:<digest>)"))
    # The same, through the parsed objects: every container image of every object.
    for doc in yaml.safe_load_all(text):
        for image in container_images(doc):
            if not DIGEST_IMAGE.search(image):
                out.append(Finding(name, "release-manifest", f"a container runs {image}, a tag alone"))
    return out


def container_images(node) -> list[str]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers", "ephemeralContainers") and isinstance(value, list):
                found += [c["image"] for c in value if isinstance(c, dict) and isinstance(c.get("image"), str)]
            else:
                found += container_images(value)
    elif isinstance(node, list):
        for item in node:
            found += container_images(item)
    return found


def render_release(tag: str, refs: dict[str, str], out_dir: Path) -> subprocess.CompletedProcess:
    refs_dir = out_dir / "refs"
    refs_dir.mkdir(parents=True, exist_ok=True)
    for file, ref in refs.items():
        (refs_dir / f"{file}.ref").write_text(ref + "\n")
    return subprocess.run(["bash", str(ROOT / "hack" / "render-release.sh"), tag, str(refs_dir), str(out_dir / "dist")],
                          capture_output=True, text=True, cwd=ROOT)


def fake_refs(tag: str) -> dict[str, str]:
    digest = lambda c: "@sha256:" + c * 64  # noqa: E731
    return {
        "celld-operator": f"{REGISTRY}/celld-operator:{tag}{digest('a')}",
        "celld-operator-deployer": f"{REGISTRY}/celld-operator-deployer:{tag}{digest('b')}",
        "celld-operator-deployer-celld-v0.6.2": f"{REGISTRY}/celld-operator-deployer:{tag}-celld-v0.6.2{digest('c')}",
    }


def check_rendered_release() -> list[Finding]:
    """Renders the release manifests as release.yml does, with made-up digests, and checks them."""
    out = []
    tag = "v" + (ROOT / "VERSION").read_text().strip()
    refs = fake_refs(tag)
    with tempfile.TemporaryDirectory() as tmp:
        run = render_release(tag, refs, Path(tmp))
        if run.returncode != 0:
            return [Finding("hack/render-release.sh", "release-manifest", f"failed: {run.stderr.strip()}")]
        dist = Path(tmp) / "dist"
        manifests = sorted(p.name for p in ROOT.glob("install-*.yaml"))
        for manifest in manifests:
            if not (dist / manifest).exists():
                out.append(Finding(f"{manifest} (rendered)", "release-manifest", "hack/render-release.sh did not render it"))
                continue
            rendered = (dist / manifest).read_text()
            if manifest_images(rendered):  # install-watched-namespace.yaml, a Role, runs nothing
                out += check_manifest(f"{manifest} (rendered for the release)", rendered)
        rendered = (dist / "install-operator.yaml").read_text() if (dist / "install-operator.yaml").exists() else ""
        if f"image: {refs['celld-operator']}" not in rendered:
            out.append(Finding("install-operator.yaml (rendered)", "release-manifest", "does not run the pushed operator image by digest"))
        deployers = sorted(ref.split(":", 1)[1].replace("@", "=") for name, ref in refs.items() if name.startswith("celld-operator-deployer"))
        if f'value: "{",".join(deployers)}"' not in rendered:
            out.append(Finding("install-operator.yaml (rendered)", "release-manifest", "does not give the operator the deployer images' digests (DEPLOYER_DIGESTS)"))
    plugin_builds = (WORKFLOWS / "release.yml").read_text()
    if "hack/deployer-digests.sh" not in plugin_builds or "CELLD_DEPLOYER_DIGESTS" not in plugin_builds:
        out.append(Finding(".github/workflows/release.yml", "release-workflow", "the plugin is not built with the deployer images' digests (CELLD_DEPLOYER_DIGESTS from hack/deployer-digests.sh)"))
        listed = (Path(tmp) / "dist" / "images.txt").read_text().split()
        if sorted(listed) != sorted(refs.values()):
            out.append(Finding("images.txt (rendered)", "release-manifest", f"lists {listed}, not the pushed images"))
    default = re.search(r"^ARG CELLD_IMAGE=(\S+)$", (ROOT / "deployer.Dockerfile").read_text(), re.M)
    if not default or not DIGEST_IMAGE.search(default.group(1)):
        out.append(Finding("deployer.Dockerfile", "release-manifest", "the default CELLD_IMAGE is not pinned by @sha256:<digest>"))
    return out


def check_repository() -> list[Finding]:
    findings = []
    files = sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
    if not files:
        return [Finding(str(WORKFLOWS), "yaml", "no workflow")]
    for path in files:
        rel = str(path.relative_to(ROOT))
        text = path.read_text()
        findings += check_workflow(rel, text)
        if path.name == "release.yml":
            findings += check_release_workflow(rel, text)
    if not (WORKFLOWS / "release.yml").exists():
        findings.append(Finding(".github/workflows", "release-workflow", "no release.yml"))
    findings += check_rendered_release()
    return findings


# --- self test ---------------------------------------------------------------------------------

SHA = "0123456789abcdef0123456789abcdef01234567"
GOOD = f"""\
name: good
on: push
permissions:
  contents: read
jobs:
  build:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@{SHA} # v4.2.2
        with:
          persist-credentials: false
      - uses: ./.github/actions/local
      - run: make test
  sign:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
      id-token: write
      attestations: write
      packages: write
    steps:
      - uses: docker/login-action@{SHA} # v3.4.0
      - uses: sigstore/cosign-installer@{SHA} # v4.1.2
      - uses: actions/attest-build-provenance@{SHA} # v3.2.0
        with:
          subject-path: dist/*
  call:
    permissions:
      contents: write
    uses: ./.github/workflows/release.yml
"""

GOOD_RELEASE = f"""\
name: release
on: workflow_dispatch
permissions: {{}}
jobs:
  images:
    runs-on: ubuntu-24.04
    permissions:
      packages: write
    steps:
      - uses: docker/login-action@{SHA} # v3.4.0
      - id: base
        run: |
          digest=$(docker buildx imagetools inspect "$ref" --format '{{{{json .Manifest}}}}' | jq -r .digest)
          [[ "$digest" =~ ^sha256:[0-9a-f]{{64}}$ ]]
          echo "build-arg=CELLD_IMAGE=$ref@$digest" >> "$GITHUB_OUTPUT"
      - uses: docker/build-push-action@{SHA} # v6.18.0
        id: build
        with:
          build-args: ${{{{ steps.base.outputs.build-arg }}}}
          push: true
      - env:
          DIGEST: ${{{{ steps.build.outputs.digest }}}}
        run: echo "$DIGEST" > image.ref
  assets:
    runs-on: ubuntu-24.04
    permissions:
      contents: write
    steps:
      - run: hack/render-release.sh "$TAG" refs dist
      - run: gh release upload "$TAG" dist/*
"""

# (rule, what the sample does wrong, replace this, with this) applied to GOOD or GOOD_RELEASE
BAD = [
    ("pinned-uses", "an action by tag", f"actions/checkout@{SHA} # v4.2.2", "actions/checkout@v4.2.2"),
    ("pinned-uses", "an action by a short SHA", f"actions/checkout@{SHA} # v4.2.2", "actions/checkout@0123456 # v4.2.2"),
    ("pinned-uses", "an action by branch", f"sigstore/cosign-installer@{SHA} # v4.1.2", "sigstore/cosign-installer@main"),
    ("pinned-uses", "a SHA without its version comment", f"docker/login-action@{SHA} # v3.4.0", f"docker/login-action@{SHA}"),
    ("pinned-uses", "a docker:// action by tag", "      - uses: ./.github/actions/local", "      - uses: docker://alpine:3.20"),
    ("workflow-permissions", "workflow-level contents: write", "permissions:\n  contents: read\njobs:", "permissions:\n  contents: write\njobs:"),
    ("workflow-permissions", "workflow-level write-all", "permissions:\n  contents: read\njobs:", "permissions: write-all\njobs:"),
    ("workflow-permissions", "no workflow-level permissions", "permissions:\n  contents: read\njobs:", "jobs:"),
    ("job-permissions", "a job without permissions", "    runs-on: ubuntu-24.04\n    permissions:\n      contents: read\n    steps:\n      - uses: actions/checkout",
     "    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout"),
    ("job-permissions", "id-token: write in a job that signs nothing", "    permissions:\n      contents: read\n    steps:\n      - uses: actions/checkout",
     "    permissions:\n      contents: read\n      id-token: write\n    steps:\n      - uses: actions/checkout"),
    ("job-permissions", "contents: write in a job that publishes nothing", "      contents: read\n      id-token: write", "      contents: write\n      id-token: write"),
    ("secrets-inherit", "secrets: inherit", "    uses: ./.github/workflows/release.yml\n", "    uses: ./.github/workflows/release.yml\n    secrets: inherit\n"),
    ("checkout-credentials", "a checkout that keeps its token", "        with:\n          persist-credentials: false\n", ""),
    ("checkout-credentials", "persist-credentials: true", "persist-credentials: false", "persist-credentials: true"),
]
BAD_RELEASE = [
    ("release-workflow", "ships the repository's install-operator.yaml", 'hack/render-release.sh "$TAG" refs dist', "cp install-operator.yaml dist/"),
    ("release-workflow", "never uses the pushed digest", "DIGEST: ${{ steps.build.outputs.digest }}", "DIGEST: unknown"),
    ("release-workflow", "passes a base image by tag", "build-args: ${{ steps.base.outputs.build-arg }}", "build-args: CELLD_IMAGE=ghcr.io/denoland/celld:v0.6.2"),
    ("release-workflow", "passes a base digest nothing checks", "          [[ \"$digest\" =~ ^sha256:[0-9a-f]{64}$ ]]\n", ""),
    ("release-workflow", "passes no base image", "          build-args: ${{ steps.base.outputs.build-arg }}\n", ""),
]
ALLOWED = ("checkout-credentials", "the allow comment",
           "      - uses: actions/checkout@" + SHA + " # v4.2.2\n        with:\n          persist-credentials: false\n",
           f"      # {ALLOW_PERSIST}: this job pushes the release commit\n      - uses: actions/checkout@{SHA} # v4.2.2\n")

TAG_ONLY_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: op}
spec:
  template:
    spec:
      containers:
        - name: manager
          image: ghcr.io/anthaathi/celld-operator:v0.1.0
"""


def self_test() -> int:
    failures = []

    def expect(label: str, findings: list[Finding], rule: str | None):
        rules = {f.rule for f in findings}
        if rule is None and findings:
            failures.append(f"{label}: expected no finding, got: " + "; ".join(map(str, findings)))
        elif rule is not None and rule not in rules:
            failures.append(f"{label}: expected a [{rule}] finding, got: " + ("; ".join(map(str, findings)) or "none"))
        else:
            print(f"ok   {label}" + (f" -> [{rule}]" if rule else ""))

    expect("the good workflow", check_workflow("good.yml", GOOD), None)
    expect("the good release workflow", check_workflow("release.yml", GOOD_RELEASE) + check_release_workflow("release.yml", GOOD_RELEASE), None)
    for rule, what, old, new in BAD:
        assert old in GOOD, f"self-test sample for {what!r} does not apply"
        expect(f"refuses {what}", check_workflow("bad.yml", GOOD.replace(old, new, 1)), rule)
    for rule, what, old, new in BAD_RELEASE:
        assert old in GOOD_RELEASE, f"self-test sample for {what!r} does not apply"
        expect(f"refuses a release workflow that {what}", check_release_workflow("release.yml", GOOD_RELEASE.replace(old, new, 1)), rule)
    rule, what, old, new = ALLOWED
    assert old in GOOD
    expect(f"accepts a checkout that keeps its token with {what}", check_workflow("allowed.yml", GOOD.replace(old, new, 1)), None)

    expect("refuses a manifest with an image by tag", check_manifest("bad.yaml", TAG_ONLY_MANIFEST), "release-manifest")
    pinned = TAG_ONLY_MANIFEST.replace("v0.1.0\n", "v0.1.0@sha256:" + "d" * 64 + "\n")
    expect("accepts a manifest with the image by digest", check_manifest("good.yaml", pinned), None)
    flow = TAG_ONLY_MANIFEST.replace("        - name: manager\n          image: ghcr.io/anthaathi/celld-operator:v0.1.0\n",
                                     "        - {name: manager, image: 'ghcr.io/anthaathi/celld-operator:v0.1.0'}\n")
    expect("refuses an image by tag in flow style", check_manifest("flow.yaml", flow), "release-manifest")

    tag = "v" + (ROOT / "VERSION").read_text().strip()
    with tempfile.TemporaryDirectory() as tmp:
        refs = fake_refs(tag)
        refs["celld-operator"] = f"{REGISTRY}/celld-operator:{tag}"
        run = render_release(tag, refs, Path(tmp))
        if run.returncode == 0:
            failures.append("hack/render-release.sh accepted an operator image by tag")
        else:
            print("ok   hack/render-release.sh refuses an image by tag")
    with tempfile.TemporaryDirectory() as tmp:
        refs = fake_refs(tag)
        del refs["celld-operator"]
        run = render_release(tag, refs, Path(tmp))
        if run.returncode == 0:
            failures.append("hack/render-release.sh rendered without the operator's digest")
        else:
            print("ok   hack/render-release.sh refuses to render without the operator's digest")

    for f in failures:
        print(f"FAIL {f}")
    print(f"check-workflows self-test: {len(failures)} failed")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    findings = check_repository()
    for f in findings:
        print(f"check-workflows: {f}")
    if findings:
        print(f"check-workflows: {len(findings)} finding(s)")
        return 1
    print("check-workflows: workflows pinned and least-privileged; the release renders its manifests with images by digest")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
