"""Proof, before Ready, that the server answering on the port is the one the app started.

A port that answers does not prove it: on Windows a second server may bind a busy port without failing and take its
answers over, and any program may bind the port before a slow engine does. Two proofs, each "ours", "another
program" or "cannot tell" (with why):

- the listening socket: our child (or a process it started) listens on the port (:func:`listens_on`);
- the model: llama-server's ``/props`` names our model file (``model_path``); the built-in engine's ``/v1/models``
  names it by the alias the app gave it (the file name). An answer that refuses our key is another server too.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass
from typing import Any

import httpx

from app.core.server.readiness import listens_on

logger = logging.getLogger(__name__)

BUILTIN = "embedded"


@dataclass(frozen=True)
class Proof:
    """``ours``: True (proved), False (another program answers), None (cannot tell); ``why``: what was seen."""

    ours: bool | None
    why: str


def prove_ours(pid: int | None, port: int, base: str, *, api_key: str | None, model: str, alias: str,
               kind: str, client: httpx.Client | None = None) -> Proof:
    """Both proofs for the server at ``base`` (port ``port``): the first that says "another program" decides;
    "ours" only when both say so. ``client``: one already holding the app's key (a new one costs ~20 ms)."""
    socket_proof = _socket_proof(pid, port, _host_of(base))
    if socket_proof.ours is False:
        return socket_proof
    model_proof = model_proof_of(base, api_key=api_key, model=model, alias=alias, kind=kind, client=client)
    if model_proof.ours is False:
        return model_proof
    if socket_proof.ours and model_proof.ours:
        return Proof(True, f"{socket_proof.why}; {model_proof.why}")
    unknown = [p.why for p in (socket_proof, model_proof) if p.ours is None]
    return Proof(None, "; ".join(unknown))


def _socket_proof(pid: int | None, port: int, probe_ip: str) -> Proof:
    listening = listens_on(pid, port)
    if listening is None:
        return Proof(None, f"the system did not show which process listens on port {port}")
    if not listening:
        return Proof(False, f"process {pid} (the server started) does not listen on port {port}")
    other = other_listener(pid, port, probe_ip)
    if other is not None:
        return Proof(False, f"process {other} also listens on port {port} and takes its connections")
    return Proof(True, f"process {pid} (the server started) listens on port {port}")


def other_listener(pid: int | None, port: int, probe_ip: str) -> int | None:
    """Another process listening on ``port`` that takes connections to ``probe_ip`` ahead of (or as well as) our
    server: on Windows (and BSD) a second socket may bind a busy port and take its connections over. None when
    there is none or the system does not say whose a socket is (Linux hides other users' processes)."""
    import psutil

    try:
        ours = {pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))} if pid else set()
        listeners = [(c.laddr.ip, c.pid) for c in psutil.net_connections(kind="tcp")
                     if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port]
    except (psutil.Error, OSError):
        logger.info("listening sockets on port %s unreadable: another listener cannot be seen", port, exc_info=True)
        return None
    hidden = [ip for ip, owner in listeners if owner is None]
    if hidden:
        logger.info("sockets listening on port %s at %s: their processes are not shown", port, ", ".join(hidden))
    return connection_taker(listeners, ours, probe_ip)


WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def connection_taker(listeners: list[tuple[str, int | None]], ours: set[int], probe_ip: str) -> int | None:
    """The process, not ours, whose listening socket ((address, pid) pairs) gets connections to ``probe_ip``: one
    bound to that very address, or to any address while ours is not bound to that very address (the most specific
    bind wins; two alike may share or take over)."""
    probe_ip = "127.0.0.1" if probe_ip == "localhost" else probe_ip
    try:
        ipaddress.ip_address(probe_ip)
    except ValueError:  # a host name: which address it reaches is the resolver's; not judged here
        return None
    family_v6 = ":" in probe_ip
    same_family = [(ip, owner) for ip, owner in listeners if (":" in ip) == family_v6 or ip == ""]
    ours_exact = any(ip == probe_ip and owner in ours for ip, owner in same_family)
    for ip, owner in same_family:
        if owner is None or owner in ours:
            continue
        if ip == probe_ip or (ip in WILDCARDS and not ours_exact):
            return owner
    return None


def model_proof_of(base: str, *, api_key: str | None, model: str, alias: str, kind: str,
                   client: httpx.Client | None = None) -> Proof:
    """Whether the server at ``base`` serves ``model``: /props (llama-server) or /v1/models (both engines)."""
    if client is not None:
        return _model_proof(client, base, model, alias, kind)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with httpx.Client(timeout=httpx.Timeout(2.0, connect=0.5), headers=headers, trust_env=False) as own:
        return _model_proof(own, base, model, alias, kind)


def _model_proof(client: httpx.Client, base: str, model: str, alias: str, kind: str) -> Proof:
    paths = ("/v1/models",) if kind == BUILTIN else ("/props", "/v1/models")
    try:
        for path in paths:
            proof = _ask(client, base + path, model, alias)
            if proof is not None:
                return proof
    except httpx.HTTPError as error:
        logger.info("model of the server at %s not readable", base, exc_info=True)
        return Proof(None, f"the server's model could not be read ({type(error).__name__})")
    return Proof(None, "the server did not name its model")


def _ask(client: httpx.Client, url: str, model: str, alias: str) -> Proof | None:
    response = client.get(url)
    if response.status_code in (401, 403):
        return Proof(False, f"the answer on {_path(url)} refused the app's key (HTTP {response.status_code})")
    if response.status_code != 200:
        return None
    try:
        body = response.json()
    except ValueError:
        return Proof(False, f"the answer on {_path(url)} is not a model server's (not JSON)")
    names = _model_names(body)
    if not names:
        return None
    if any(name == alias or _same_file(name, model) for name in names):
        return Proof(True, f"{_path(url)} names the model {alias}")
    return Proof(False, f"{_path(url)} names the model {', '.join(sorted(names))[:200]}, not {alias}")


def _model_names(body: Any) -> set[str]:
    """Model names in a /props answer (model_path) or a /v1/models answer (data[].id, models[].name/model)."""
    if not isinstance(body, dict):
        return set()
    names: set[str] = set()
    if isinstance(body.get("model_path"), str):
        names.add(body["model_path"])
    for key, fields in (("data", ("id",)), ("models", ("name", "model"))):
        entries = body.get(key)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                names.update(entry[f] for f in fields if isinstance(entry.get(f), str))
    return {name for name in names if name}


def _same_file(name: str, model: str) -> bool:
    if not os.path.isabs(name):
        return False
    try:
        return os.path.samefile(name, model)
    except OSError:
        return os.path.normcase(os.path.abspath(name)) == os.path.normcase(os.path.abspath(model))


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[-1] if url.count("/") >= 3 else url



def _host_of(base: str) -> str:
    """The address in ``http://host:port`` (brackets of an IPv6 address removed)."""
    host = base.split("//", 1)[-1].rsplit(":", 1)[0]
    return host.strip("[]")
