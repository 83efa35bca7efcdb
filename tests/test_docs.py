"""The documentation keeps its promises: references resolve, links land, and the repository stays small.

A reader follows a section reference in a docstring to the mechanics specification in `docs/spec/`, clicks a link in
the README, or clones the repository on a slow line; each of those breaks silently when a section is
renumbered, a page is renamed or a model file is copied into the tree. These tests catch it the moment it
happens. Each one names what to fix.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec" / "nh-mechanics.md"

# The size budget of the repository's tracked files (docs/contributing.md, "Size budget").
SIZE_BUDGET_BYTES = 20_000_000
MODEL_SUFFIXES = (".nhmodel", ".pt", ".pth", ".ckpt", ".onnx", ".safetensors")

# Directories that are not part of the project's sources when the tree is walked without git.
_SKIP_DIRS = {".git", ".venv", "experiments", "__pycache__", ".pytest_cache", ".ruff_cache", "build"}

# History belongs in CHANGELOG.md; everything else says how things are (docs/contributing.md).
HISTORY_WORDING = re.compile(r"session [0-9]+|this\s+session|last\s+session|issue [0-9]+", re.IGNORECASE)
HISTORY_EXEMPT = {"CHANGELOG.md"}


@cache
def project_files() -> tuple[Path, ...]:
    """The project's files: tracked ones plus new ones git does not ignore (so an uncommitted page counts)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
        return tuple(sorted({ROOT / n for n in names if (ROOT / n).is_file()}))
    except (OSError, subprocess.CalledProcessError):
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(ROOT):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
            found.extend(Path(dirpath) / f for f in filenames)
        return tuple(sorted(found))


@cache
def text_of(path: Path) -> str | None:
    """A file's text, or None for a binary file (a NUL byte or undecodable UTF-8)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def text_files() -> list[tuple[Path, str]]:
    """Every project text file with its contents."""
    result = []
    for path in project_files():
        text = text_of(path)
        if text is not None:
            result.append((path, text))
    return result


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- the mechanics specification ----------------------------------------------------------------------

_NUMBERED_HEADING = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s")
_APPENDIX_HEADING = re.compile(r"^#{2,6}\s+Appendix\s+([A-Z])\b")


@cache
def spec_sections() -> frozenset[str]:
    """The section numbers the specification defines ("6", "6.10.5", ...) and its appendices ("Appendix C")."""
    sections: set[str] = set()
    in_fence = False
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        if m := _NUMBERED_HEADING.match(line):
            sections.add(m.group(1))
        elif m := _APPENDIX_HEADING.match(line):
            sections.add(f"Appendix {m.group(1)}")
    return frozenset(sections)


# The section sign, spelt by name so that this file's own patterns are not references. Forms read: the
# sign before "6.9" (or "6.10.5", "19"), with an optional space; a range such as "12.1–12.4" or "6.5–" + sign
# + "6.9", whose both ends must exist; the sign before a capital ("C", "C.2") names an appendix.
SIGN = "\N{SECTION SIGN}"
_SECTION_REF = re.compile(
    SIGN
    + r"\s?(?P<first>\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)(?:\s?[–-]\s?"
    + SIGN
    + r"?(?P<last>\d+(?:\.\d+)*)(?![\d.]*[A-Za-z]))?"
)
_APPENDIX_REF = re.compile(r"\bAppendix (?P<letter>[A-Z])\b")


@dataclass(frozen=True)
class SectionRef:
    path: str
    line: int
    text: str
    section: str


def _normalise(number: str) -> str:
    """A capital names an appendix; the spec numbers no appendix subsections, so a "C.2" stays unresolved."""
    if number[0].isalpha():
        return f"Appendix {number}"
    return number


def section_references() -> list[SectionRef]:
    """Every reference into the specification, with where it was found."""
    refs: list[SectionRef] = []
    for path, text in text_files():
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in _SECTION_REF.finditer(line):
                refs.append(SectionRef(rel(path), lineno, m.group(0), _normalise(m.group("first"))))
                if m.group("last"):
                    refs.append(SectionRef(rel(path), lineno, m.group(0), m.group("last")))
            for m in _APPENDIX_REF.finditer(line):
                refs.append(SectionRef(rel(path), lineno, m.group(0), f"Appendix {m.group('letter')}"))
    return refs


def test_spec_is_in_the_repository() -> None:
    """The project owns its specification: the sections every reference points at are in docs/spec/."""
    sections = spec_sections()
    assert {"1", "6.9", "6.10.5", "14.3", "19", "Appendix A", "Appendix C"} <= sections


def test_every_section_reference_resolves() -> None:
    """Each section reference (and each named appendix) in code, tests, configs and docs names a heading of the spec."""
    sections = spec_sections()
    refs = section_references()
    # The tree holds well over a thousand references; a parser that finds few has stopped seeing them.
    assert len(refs) > 1000, f"only {len(refs)} section references found: has the reference syntax changed?"
    broken = [r for r in refs if r.section not in sections]
    assert not broken, "references to sections docs/spec/nh-mechanics.md lacks:\n" + "\n".join(
        f"  {r.path}:{r.line}: {r.text!r} (no section {r.section})" for r in broken[:50]
    )


OUTSIDE_SPEC = "../" + "shared/specs"  # spelt in two parts, so this file is not an offender itself


def test_nothing_points_outside_the_repository_for_the_spec() -> None:
    """The specification is read from docs/spec/, never from a checkout beside this one."""
    offenders = [
        f"{rel(p)}:{n}"
        for p, text in text_files()
        if p.name != "CHANGELOG.md"
        for n, line in enumerate(text.splitlines(), 1)
        if OUTSIDE_SPEC in line
    ]
    assert not offenders, f"mentions of {OUTSIDE_SPEC} (use docs/spec/nh-mechanics.md): " + ", ".join(offenders)


# -- links ----------------------------------------------------------------------------------------------

_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def _strip_code(text: str) -> str:
    """Markdown without fenced blocks and inline code, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", text)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors_of(path: Path) -> frozenset[str]:
    seen: defaultdict[str, int] = defaultdict(int)
    anchors: set[str] = set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not (m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            continue
        base = github_anchor(m.group(1))
        count = seen[base]
        anchors.add(base if count == 0 else f"{base}-{count}")
        seen[base] += 1
    return frozenset(anchors)


def markdown_pages() -> list[Path]:
    """The pages a user reads: the README, the changelog and everything under docs/ and configs/."""
    return [
        p
        for p in project_files()
        if p.suffix == ".md" and (p.parent == ROOT or rel(p).split("/")[0] in {"docs", "configs", "results"})
    ]


def test_markdown_pages_exist() -> None:
    names = {rel(p) for p in markdown_pages()}
    assert {"README.md", "CHANGELOG.md", "configs/README.md", "docs/spec/nh-mechanics.md"} <= names


def test_every_relative_link_resolves() -> None:
    """Every relative link (and image) of the README and docs/ names a file that exists, and an anchor its page has."""
    broken: list[str] = []
    checked = 0
    for page in markdown_pages():
        body = _strip_code(page.read_text(encoding="utf-8"))
        targets = [m.group("target") for m in _LINK.finditer(body)] + [
            m.group("target") for m in _IMAGE.finditer(body)
        ]
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            checked += 1
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                broken.append(f"{rel(page)}: {target} (no such file)")
                continue
            if anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
                broken.append(f"{rel(page)}: {target} (no heading with anchor #{anchor})")
    assert checked > 20, f"only {checked} links found: has the link syntax changed?"
    assert not broken, "broken links:\n  " + "\n  ".join(broken)


_REPO_PATH = re.compile(r"(?<![\w/.-])((?:configs|benchmarks|tools|models|docs|results|notebooks|tests)/[\w./-]*\w)")


def test_paths_named_in_the_readmes_exist() -> None:
    """A file the README or the configs map names in a command or in passing (configs/nh.yml, a benchmark script,
    a model file) exists, so the first commands a newcomer copies work."""
    missing = []
    for page in (ROOT / "README.md", ROOT / "configs" / "README.md"):
        for m in _REPO_PATH.finditer(page.read_text(encoding="utf-8")):
            name = m.group(1)
            base = page.parent if page.parent.name == "configs" and not name.startswith("configs/") else ROOT
            if "*" in name or name.startswith(("experiments/",)):
                continue
            if not (base / name).exists() and not (ROOT / name).exists():
                missing.append(f"{rel(page)}: {name}")
    assert not missing, "paths that do not exist:\n  " + "\n  ".join(missing)


def test_github_anchor_rule() -> None:
    assert github_anchor("Why not redraw every iteration") == "why-not-redraw-every-iteration"
    assert github_anchor("A ladder fine-tune of `exploiters`") == "a-ladder-fine-tune-of-exploiters"
    assert github_anchor("Win probability (`winrate` extension)") == "win-probability-winrate-extension"


# -- history wording ------------------------------------------------------------------------------------


def test_no_history_wording_outside_the_changelog() -> None:
    """Docs, code, tests and configs say how things are; the project's history lives in CHANGELOG.md."""
    offenders = [
        f"{rel(p)}:{n}: {line.strip()[:100]}"
        for p, text in text_files()
        if rel(p) not in HISTORY_EXEMPT
        for n, line in enumerate(text.splitlines(), 1)
        if HISTORY_WORDING.search(line)
    ]
    assert not offenders, "history wording (move it to CHANGELOG.md):\n  " + "\n  ".join(offenders[:40])


# -- the size budget ------------------------------------------------------------------------------------


@cache
def tracked_files() -> tuple[Path, ...]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the size budget is defined over tracked files")
    return tuple(ROOT / n for n in out.decode().split("\0") if n and (ROOT / n).is_file())


def test_tracked_files_fit_the_size_budget() -> None:
    sizes = {rel(p): p.stat().st_size for p in tracked_files()}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:8]
    assert total <= SIZE_BUDGET_BYTES, (
        f"tracked files total {total / 1e6:.2f} MB, over the {SIZE_BUDGET_BYTES / 1e6:.0f} MB budget; "
        f"largest: {largest}"
    )


def test_docs_hold_no_model_files() -> None:
    models = [rel(p) for p in tracked_files() if p.suffix in MODEL_SUFFIXES and rel(p).startswith("docs/")]
    assert not models, f"model files belong in models/ or results/, not docs/: {models}"


def test_no_two_model_files_are_identical() -> None:
    by_digest: defaultdict[str, list[str]] = defaultdict(list)
    for p in tracked_files():
        if p.suffix in MODEL_SUFFIXES:
            by_digest[hashlib.sha256(p.read_bytes()).hexdigest()].append(rel(p))
    copies = [names for names in by_digest.values() if len(names) > 1]
    assert not copies, f"byte-identical model files (keep one, cite it by checksum): {copies}"


_MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|tmp|home|Users|mnt|var)/[^\s\"')]*")


def test_results_name_files_relative_to_the_repository() -> None:
    """`results/` is read on other machines: a file it names is relative to where its command ran (the checkout),
    never a path of the machine that wrote it (`common.paths.portable` writes them so)."""
    found = []
    for path in sorted((ROOT / "results").rglob("*")):
        if path.is_file() and path.suffix != ".nhmodel":
            text = path.read_text(encoding="utf-8", errors="ignore")
            found += [f"{path.relative_to(ROOT)}: {m}" for m in _MACHINE_PATH.findall(text)]
    assert not found, "\n".join(found[:20])
