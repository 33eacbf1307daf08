"""The redaction rules: secrets by value and by shape, home, user and host; ordinary log lines stay as they are."""

from __future__ import annotations

import pytest

from app.core.report.redact import Redactor

R = Redactor(home="/home/alice", user="alice", host="alicebox", secrets=["known-secret-123"])


@pytest.mark.parametrize("text, expected", [
    ("llama-server -m /home/alice/m.gguf --api-key abc123def --port 8080",
     "llama-server -m ~/m.gguf --api-key <secret> --port 8080"),
    ("python -m llama_cpp.server --api_key=abc123def", "python -m llama_cpp.server --api_key=<secret>"),
    ('"argv": ["--api-key", "x1"], "cmd": "--api-key sEcReT9"',
     '"argv": ["--api-key", "<secret>"], "cmd": "--api-key <secret>"'),
    ("['--api_key', 'x1']", "['--api_key', '<secret>']"),
    ("Authorization: Bearer eyJhbGciOi.J9", "Authorization: Bearer <secret>"),
    ('{"api_key": "zz-top-1"}', '{"api_key": "<secret>"}'),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuv", "HF_TOKEN=<secret>"),
    ("found hf_abcdefghijklmnopqrstuv in cache", "found <secret> in cache"),
    ("key sk-proj-abcdefghijklmnop1234", "key <secret>"),
    ("a known-secret-123 value", "a <secret> value"),
    (r"C:\Users\alice\Downloads", r"C:\Users\<user>\Downloads"),
    ("/data/alice_models/x.gguf by alice", "/data/<user>_models/x.gguf by <user>"),
    ("host alicebox, ALICEBOX", "host <host>, <host>"),
])
def test_secrets_and_places_are_replaced(text, expected):
    assert R.text(text) == expected


@pytest.mark.parametrize("line", [
    "print_info: EOS token        = 2 '</s>'",
    "llama_model_loader: - kv  21: tokenizer.ggml.add_bos_token bool = true",
    "slot update_slots: id  0 | task 0 | new prompt, n_ctx_slot = 4096, n_keep = 0, n_tokens = 512",
    '"kv_bytes_per_token": 36864, "max_tokens": 256',
    "malice and palace stay; the token embedding is 2 MiB",
    "llama_kv_cache: size = 48.00 MiB (512 cells, 12 layers, 1/1 seqs)",
])
def test_ordinary_lines_are_left_alone(line):
    assert R.text(line) == line


def test_values_lose_secret_strings_but_keep_numbers_and_lists():
    value = {"api_key": "k-123456", "hf_token": None, "max_tokens": 5, "kv_bytes_per_token": 3,
             "profile": {"token": "abc", "tokens": [1, 2], "model": "/home/alice/m.gguf"}}
    assert R.value(value) == {"api_key": "<secret>", "hf_token": None, "max_tokens": 5, "kv_bytes_per_token": 3,
                              "profile": {"token": "<secret>", "tokens": [1, 2], "model": "~/m.gguf"}}


def test_keeping_host_names():
    assert Redactor(host="alicebox", keep_host=True).text("on alicebox") == "on alicebox"


def test_environment_secrets_are_known_by_their_names_but_paths_and_short_values_are_not():
    redactor = Redactor.for_this_machine(environ={"MY_SERVICE_TOKEN": "tok-abcdef-123", "SSH_AUTH_SOCK": "/tmp/x/a",
                                                  "KEYBOARD_LAYOUT_KEY": "us", "PATH": "/usr/bin"})
    assert "tok-abcdef-123" in redactor.secrets and "/tmp/x/a" not in redactor.secrets and "us" not in redactor.secrets
    assert redactor.text("sent tok-abcdef-123") == "sent <secret>"
