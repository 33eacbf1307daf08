"""The GPU engine choice: compute capability and driver (as NVML reads them) pick CUDA 13, CUDA 12 or Vulkan.

NVIDIA's numbers: app/core/launch/cuda_facts.py (minimum driver 580 for CUDA 13.x, 525 for CUDA 12.x; CUDA 13 needs
compute capability 7.5). The field case: altic-dev/FluidVoice#988, "CUDA 13 dropped Pascal support — it requires
compute capability **7.5+** — so on a GTX 1070 (**CC 6.1**) `ggml-cuda.dll` never loads".
"""

from __future__ import annotations

from app.core.launch.cuda_facts import CardFacts
from app.core.launch.engine_folder import FolderCheck
from app.core.launch.gpu_choice import EngineCandidate, choose_gpu_engine

CUDA13 = EngineCandidate("/e/llama-b7000-bin-win-cuda-13.3-x64/llama-server.exe", ("CUDA",), "13.3")
CUDA12 = EngineCandidate("/e/llama-b7000-bin-win-cuda-12.4-x64/llama-server.exe", ("CUDA",), "12.4")
VULKAN = EngineCandidate("/e/llama-b7000-bin-win-vulkan-x64/llama-server.exe", ("Vulkan",))
GTX1070 = CardFacts("NVIDIA GeForce GTX 1070", "6.1", "581.57", "13.0")
RTX3060 = CardFacts("NVIDIA GeForce RTX 3060", "8.6", "581.57", "13.0")
RTX3060_OLD_DRIVER = CardFacts("NVIDIA GeForce RTX 3060", "8.6", "551.61", "12.4")


def test_pascal_card_gets_cuda_12_and_is_told_why_not_cuda_13():
    choice = choose_gpu_engine(GTX1070, [CUDA13, CUDA12, VULKAN])
    assert choice.chosen == CUDA12
    assert choice.reason.render("en") == (
        "The CUDA 12.4 llama-server was chosen: the CUDA 13.3 build needs a card with compute capability 7.5 or "
        "newer, and the NVIDIA GeForce GTX 1070 has 6.1.")
    assert "计算能力 7.5" in choice.reason.render("zh")
    assert [c for c, _ in choice.refused] == [CUDA13]


def test_turing_or_newer_card_with_a_new_driver_gets_the_newest_cuda():
    choice = choose_gpu_engine(RTX3060, [VULKAN, CUDA12, CUDA13])
    assert choice.chosen == CUDA13
    assert "fits the NVIDIA GeForce RTX 3060 (compute capability 8.6) and driver 581.57" in choice.reason.render("en")


def test_driver_too_old_for_cuda_13_picks_cuda_12_and_names_the_driver_needed():
    choice = choose_gpu_engine(RTX3060_OLD_DRIVER, [CUDA13, CUDA12])
    assert choice.chosen == CUDA12
    assert "needs NVIDIA driver 580 or newer, and this one is 551.61" in choice.reason.render("en")


def test_pascal_card_with_only_cuda_13_gets_vulkan():
    assert choose_gpu_engine(GTX1070, [CUDA13, VULKAN]).chosen == VULKAN


def test_nothing_fits_says_why_and_what_to_do():
    choice = choose_gpu_engine(GTX1070, [CUDA13])
    assert choice.chosen is None
    text = choice.reason.render("en")
    assert text.startswith("None of the llama-server programs found here fits the NVIDIA GeForce GTX 1070: the CUDA")
    assert text.endswith("Update the NVIDIA driver, or use the CUDA 12 or Vulkan build of llama.cpp.")
    assert "not offered:" in choice.evidence()[0]


def test_unknown_readings_refuse_nothing():
    unknown = CardFacts("NVIDIA GeForce GTX 1070")
    assert choose_gpu_engine(unknown, [CUDA13, CUDA12]).chosen == CUDA13


def test_driver_branch_decides_when_nvml_gave_no_cuda_version():
    card = CardFacts("NVIDIA GeForce RTX 4060", "8.9", "560.94", None)
    choice = choose_gpu_engine(card, [CUDA13, CUDA12])
    assert choice.chosen == CUDA12


def test_an_incomplete_folder_is_never_offered():
    broken = EngineCandidate(CUDA13.path, ("CUDA",), "13.3",
                             FolderCheck(CUDA13.path, ("CPU", "CUDA"), "13.3", ("cudart64_13.dll",)))
    choice = choose_gpu_engine(RTX3060, [broken, VULKAN])
    assert choice.chosen == VULKAN
    assert choice.reason.render("en") == ("The Vulkan llama-server was chosen: this CUDA build of llama.cpp cannot use "
                                          "the graphics card: the CUDA runtime files it needs are missing "
                                          "(cudart64_13.dll).")


def test_only_an_incomplete_folder_found_says_how_to_complete_it():
    broken = EngineCandidate(CUDA13.path, ("CUDA",), "13.3",
                             FolderCheck(CUDA13.path, ("CPU", "CUDA"), "13.3", ("cudart64_13.dll",)))
    text = choose_gpu_engine(RTX3060, [broken]).reason.render("en")
    assert text.endswith("Download cudart-llama-bin-win-cuda-13.3-x64.zip from the same llama.cpp release and unpack "
                         "it into the folder of llama-server.exe, or use the Vulkan build.")


def test_no_gpu_build_found():
    choice = choose_gpu_engine(RTX3060, [])
    assert choice.chosen is None and "No llama-server that can use a graphics card" in choice.reason.render("en")
