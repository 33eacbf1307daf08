"""A vision projector (mmproj) next to its model is not listed as a model of its own: it cannot be opened alone."""

from __future__ import annotations

from app.core.library.scan import find_local_models
from app.core.synthetic.projector import write_projector
from app.core.synthetic.tiny_llama import write_tiny_llama
from tests.fakes.local_models import fake_env


def test_the_projector_is_left_out_of_the_list_the_model_stays(tmp_path):
    folder = tmp_path / "vision"
    model = write_tiny_llama(folder / "tiny-vision.gguf")
    write_projector(folder / "mmproj-tiny-vision-f16.gguf", 64)
    models = find_local_models(env=fake_env(tmp_path / "nobody"), extra_folders=[str(folder)], platform="linux")
    assert [m.path for m in models] == [str(model)]
