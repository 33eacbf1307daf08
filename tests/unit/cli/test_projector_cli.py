"""`doctor` and `plan` name a vision projector found next to the model: one check row / one line, a JSON field."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.core.synthetic import SyntheticSpec, write_model
from app.core.synthetic.projector import write_projector


@pytest.fixture
def vision_model(tmp_path):
    model = write_model("llama", tmp_path / "tiny-vision.gguf", SyntheticSpec(n_layers=1))
    write_projector(tmp_path / "mmproj-tiny-vision-f16.gguf", 256)
    return model


def test_doctor_reports_the_projector_row_and_field(capsys, vision_model):
    assert main(["doctor", str(vision_model), "--no-sha256", "--backend", "embedded", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["projector"]["path"].endswith("mmproj-tiny-vision-f16.gguf")
    assert doc["projector"]["used"] is False and doc["projector"]["weight_bytes"] == 793088
    row = next(c for c in doc["checks"] if c["id"] == "projector")
    assert row["status"] == "ok" and "built-in engine" in row["message"] and "--" not in row["message"]
    assert main(["doctor", str(vision_model), "--no-sha256", "--json"]) == 0  # the default engine: llama-server
    assert json.loads(capsys.readouterr().out)["projector"]["used"] is True


def test_plan_prints_one_projector_line_in_both_languages(capsys, vision_model, tmp_path):
    for lang, words in (("en", "Vision projector found"), ("zh", "视觉投影文件")):
        main(["--lang", lang, "plan", str(vision_model), "--ctx", "256", "--backend", "llama-server"])
        lines = [line for line in capsys.readouterr().out.splitlines() if "mmproj-tiny-vision-f16.gguf" in line]
        assert len(lines) == 1 and words in lines[0] and "llama-server" in lines[0]
    main(["plan", str(vision_model), "--ctx", "256", "--json"])
    assert json.loads(capsys.readouterr().out)["projector"]["compute_bytes"] > 0
    alone = write_model("llama", tmp_path / "alone" / "model.gguf", SyntheticSpec(n_layers=1))
    main(["plan", str(alone), "--ctx", "256", "--json"])
    assert json.loads(capsys.readouterr().out)["projector"] is None


def test_serve_takes_the_found_projector_an_explicit_one_or_none(vision_model, tmp_path):
    from app.cli import build_parser
    from app.cli.serve import config_from_args
    from app.core.problem import UserError

    def config(*extra):
        return config_from_args(build_parser().parse_args(["serve", str(vision_model), *extra]))

    found = config("--backend", "llama-server").mmproj
    assert found is not None and found.endswith("mmproj-tiny-vision-f16.gguf")
    assert config("--no-mmproj").mmproj is None
    other = write_projector(tmp_path / "elsewhere" / "vision.gguf", 256)
    assert config("--mmproj", str(other)).mmproj == str(other.absolute())
    with pytest.raises(UserError):
        config("--mmproj", str(vision_model))  # a language model is no projector
