""""Get a model" in a repository of many quantizations: the best fit is found by a search along the file sizes in
about log2(n) + 1 header reads (the same best as reading every header), the other files say "Not checked", and
choosing one reads its header then."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt

from app.core.hub.files import HubFile, HubModel
from app.core.hub.fit import FileFit, FitVerdict, mark_best
from app.core.synthetic.tiny_llama import TinyModelSpec, write_tiny_llama
from app.ui.steps.model import get_model_work as work
from app.ui.steps.model.get_model_dialog import GetModelDialog
from tests.hub.fake_hub import FakeHub, FakeRepo
from tests.ui.conftest import LONG

GIB = 1 << 30
MANY = "test/many-quants-GGUF"


def _model(name: str, size: int) -> HubModel:
    return HubModel("o/r", name, None, (HubFile(name, size, "0" * 64, f"http://x/{name}"),))


def _fit(model: HubModel, verdict: FitVerdict, ctx: int = 4096) -> FileFit:
    return FileFit(model.name, model.size, verdict, ctx=ctx if verdict is not FitVerdict.DOES_NOT_FIT else None,
                   trained_ctx=8192)


@pytest.mark.parametrize("pattern", [
    "GGGGGGGGGGGGGGGGGGGG", "GGGGGGGPPPPPPPPPPPPN", "GPPPPPPPPPPPPPPPPPPP", "CCCCCCCCCCNNNNNNNNNN",
    "GGGGGGGGGGGGGPPPPPPP", "NNNNNNNNNNNNNNNNNNNN", "PPPPPPPPPPPPPPPPPPPN",
])
def test_the_search_finds_the_best_of_every_header_in_few_reads(pattern):
    """Verdicts by size (smallest first): G on the card, P partly, C processor, N does not fit."""
    kinds = {"G": FitVerdict.FITS_GPU, "P": FitVerdict.PARTIAL_GPU, "C": FitVerdict.CPU_ONLY,
             "N": FitVerdict.DOES_NOT_FIT}
    models = [_model(f"m{i:02d}.gguf", (i + 1) << 20) for i in range(len(pattern))]
    truth = {m.name: _fit(m, kinds[k]) for m, k in zip(models, pattern, strict=True)}
    read: list[str] = []

    def judge(model):
        read.append(model.name)
        return truth[model.name]

    found = mark_best(work.frontier(list(reversed(models)), judge, lambda fit: None))
    every = mark_best(list(truth.values()))
    assert [f.name for f in found if f.best] == [f.name for f in every if f.best]
    assert len(read) <= math.ceil(math.log2(len(models))) + 1, read


def test_a_cancelled_search_stops():
    models = [_model(f"m{i}.gguf", (i + 1) << 20) for i in range(10)]
    assert work.frontier(models, lambda model: None, lambda fit: None) == []


@pytest.fixture
def many_quants(tmp_path):
    """Eight files of one model that differ in size (a larger vocabulary each), as a repository of quantizations."""
    files = {f"many-{i}.gguf": write_tiny_llama(tmp_path / f"many-{i}.gguf",
                                                TinyModelSpec(f16=True, n_extra_tokens=2000 * i))
             for i in range(8)}
    with FakeHub() as hub:
        hub.add(FakeRepo(MANY, files, downloads=3))
        yield hub, files


@pytest.mark.slow  # eight header reads and a search over loopback HTTP (about 2.5 s here)
def test_many_files_are_searched_and_a_chosen_one_is_read_then(qtbot, many_quants):
    hub, files = many_quants
    dialog = GetModelDialog(None, choice=work.HubChoice(endpoint=hub.url),
                            options={"endpoint": hub.url, "vram_budget": 8 * GIB})
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.machine is not None, timeout=LONG)
    dialog.open_repo(MANY)
    qtbot.waitUntil(lambda: dialog.fits is not None, timeout=LONG)
    read = len(dialog.fits)
    assert read <= 4 and len(dialog.listing.models) == 8
    largest = max(files, key=lambda name: files[name].stat().st_size)
    assert [f.name for f in dialog.fits if f.best] == [largest]  # every file fits: the largest is the best
    pills = {name: cell.verdict.text() for name, cell in dialog.files.cells.items()}
    assert sum(text == "Not checked" for text in pills.values()) == 8 - read
    assert dialog.status.text().startswith(f"Read the headers of {read} of 8 files (")
    unread = next(name for name, text in pills.items() if text == "Not checked")
    dialog.files.select(unread)
    qtbot.waitUntil(lambda: unread in dialog.files.fits, timeout=LONG)
    assert dialog.files.cells[unread].verdict.text() == "Fits on the graphics card"
    assert dialog.files.verdict.text().startswith("Fits on the graphics card: all")
    assert [f.name for f in dialog.fits if f.best] == [largest] and len(dialog.fits) == read + 1
    assert dialog.download_button.isEnabled()
    qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)

