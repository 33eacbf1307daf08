"""`python -m app`: the GUI, or a CLI command when one is given."""

import sys


def _run_embedded_server() -> int:
    """A packaged app has no `python -m`: the supervisor re-launches the app with this switch instead."""
    import runpy

    sys.argv = ["llama_cpp.server", *sys.argv[2:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    from app.core.launch_config import EMBEDDED_SERVER_SWITCH

    if sys.argv[1:2] == [EMBEDDED_SERVER_SWITCH]:
        sys.exit(_run_embedded_server())
    from app.cli import main

    sys.exit(main())
