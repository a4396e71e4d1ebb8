"""The hook as `memorywiki install TOOL --hooks` registers it: `PYTHON -I -S .../hooks/run.py
TOOL EVENT`, the same as `python -m memorywiki.adapters.hooks TOOL EVENT`, started faster.

A tool starts a hook for every session and, with --recall-prompts, every prompt, and waits for
it; most of a hook's time is the interpreter's start. `-S` skips `site` (site-packages' .pth
files, an editable install's import finder: a third of that start), `-I` the user's site and
PYTHON* variables. Without site the package is found from this file: the folder holding
`adapters/` is the `memorywiki` package's, in a wheel (site-packages/memorywiki/) as in a
checkout installed editable (the setup.py mapping). The hook imports the standard library
only; the capture that needs the rest is a child started the usual way (main.detach).
"""

import os
import sys

if __name__ == "__main__":
    if "memorywiki" not in sys.modules:
        package = type(sys)("memorywiki")
        here = os.path.dirname(os.path.abspath(__file__))  # .../adapters/hooks
        package.__path__ = [os.path.dirname(os.path.dirname(here))]
        sys.modules["memorywiki"] = package
    from memorywiki.adapters.hooks.main import main

    sys.exit(main())
