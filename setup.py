"""Map the top-level folders (server/, cli/, ...) under the `memorywiki` import namespace.

pyproject.toml holds all metadata; this file only lists packages, because setuptools'
declarative `packages.find` cannot rename a folder into a dotted namespace.

Every folder below a root is listed, also those without __init__.py (templates/, static/,
store/migrations/, store/functions/): setuptools ships a folder's files only when the folder
itself is a package, and warns once per unlisted data folder otherwise. The data files
themselves are picked by the patterns in pyproject.toml's package-data.
tests/ and bench/ are not shipped: they run from a checkout (`python -m pytest`,
`python -m bench`).
"""

import os

from setuptools import setup

# client/ and formats/ appear as the client package and the pure converters land.
ROOTS = [root for root in ("server", "client", "formats", "cli", "skill", "adapters") if os.path.isdir(root)]


def folders(root: str) -> list[str]:
    """root and every folder under it, minus caches and hidden folders."""
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        found.append(dirpath)
    return found


packages = ["memorywiki." + folder.replace(os.sep, ".") for root in ROOTS for folder in folders(root)]

setup(
    packages=sorted(packages),
    package_dir={f"memorywiki.{root}": root for root in ROOTS},
)
