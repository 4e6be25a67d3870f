"""The README's commands work as written: blocks marked `<!-- runnable -->` are run in an empty
folder; every shell block is parsed, and each command in it checked against what exists (the
`quotactor` subcommands and flags, the extras, the tools). The test command is CI's."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from quotactor.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"(?:<!-- (runnable(?:: check)?) -->\n)?```(\w*)\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Block:
    marker: str | None  # "runnable", "runnable: check" or None
    language: str
    text: str
    line: int


def _blocks(text: str) -> list[Block]:
    return [Block(m.group(1), m.group(2), m.group(3), text.count("\n", 0, m.start()) + 1)
            for m in FENCE.finditer(text)]


BLOCKS = _blocks(README.read_text())
SHELL = [b for b in BLOCKS if b.language == "bash"]


def _commands(script: str) -> list[list[str]]:
    """The simple commands of a shell block: continuation lines joined, comments dropped,
    split at `&&`, `;`, `|` and newlines."""
    joined = script.replace("\\\n", " ")
    commands: list[list[str]] = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in words:
            if word in ("&&", "||", ";", "|"):
                commands.append(command)
                command = []
            elif word.startswith(">"):
                break  # a redirection ends the arguments on this line
            else:
                command.append(word)
        commands.append(command)
    return [c for c in commands if c]


def _extras() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return set(tomllib.load(file)["project"]["optional-dependencies"])


def _check_command(words: list[str]) -> None:
    """Fail unless `words` names something that exists, with arguments it accepts."""
    program = words[0].removeprefix(".venv/bin/")
    arguments = words[1:]
    if program == "quotactor":
        parser = build_parser()
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()) as errors:
            try:
                parser.parse_args(arguments)
            except SystemExit as exit_:
                assert exit_.code in (0, None), f"{shlex.join(words)}: {errors.getvalue()}"
    elif program == "pip":
        assert arguments[:2] in (["install", "-q"], ["install", "-e"]), words
        spec = arguments[-1]
        match = re.fullmatch(r"\.(?:\[([a-z,]+)\])?", spec)
        assert match, f"pip installs {spec!r}, not this checkout"
        assert set((match.group(1) or "").split(",")) - {""} <= _extras(), spec
    elif program in ("python3", "python"):
        assert arguments[:1] == ["-m"] and arguments[1] in ("venv", "pytest"), words
    elif program == "mypy":
        assert arguments == ["--strict", "quotactor"], words
    elif program == "mkdocs":
        assert arguments[0] in ("build", "serve"), words
        assert (ROOT / "mkdocs.yml").is_file()
    else:
        pytest.fail(f"README line: unknown program {program!r} in {shlex.join(words)}")


def test_the_readme_is_a_short_guide() -> None:
    assert len(README.read_text().splitlines()) <= 300


def test_the_two_commands_are_marked_and_the_test_command_is_cis() -> None:
    checked = [b for b in SHELL if b.marker == "runnable: check"]
    assert len(checked) == 2
    demo, tests = (" ".join(b.text.replace("\\\n", " ").split()) for b in checked)
    assert demo.endswith(".venv/bin/quotactor demo")
    ci = " ".join((ROOT / ".ci" / "run").read_text().replace("\\\n", " ").split())
    assert demo in ci, "the README's main-job command must be one .ci/run runs"
    assert tests in ci, "the README's test command must be the one .ci/run runs"


@pytest.mark.parametrize("block", SHELL, ids=[f"line{b.line}" for b in SHELL])
def test_every_shell_block_parses_and_names_what_exists(block: Block) -> None:
    parsed = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True,
                            timeout=10)
    assert parsed.returncode == 0, parsed.stderr
    for words in _commands(block.text):
        if words[0] in ("curl", "export", "cd") or "=" in words[0]:
            continue
        _check_command(words)


RUNNABLE = [b for b in BLOCKS if b.marker == "runnable"]


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=[f"line{b.line}" for b in RUNNABLE])
def test_runnable_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    if block.language == "bash":
        command = ["bash", "-euo", "pipefail", "-c", block.text]
    else:
        assert block.language == "python"
        command = [sys.executable, "-c", block.text]
    run = subprocess.run(command, capture_output=True, text=True, timeout=55, cwd=tmp_path,
                         env=env)
    assert run.returncode == 0, run.stderr[-2000:]


def test_the_readme_links_to_files_that_exist() -> None:
    for target in re.findall(r"\]\(([^)#]+)\)", README.read_text()):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_every_docs_page_is_in_the_site_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert {page for page in pages if f": {page}\n" not in nav} == set()
