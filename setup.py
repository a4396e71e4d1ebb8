"""Map the top-level folders (server/, cli/, ...) under the `memorywiki` import namespace.

pyproject.toml holds all metadata; this file only lists packages, because setuptools'
declarative `packages.find` cannot rename a folder into a dotted namespace.
"""

import os

from setuptools import setup

ROOTS = ["server", "formats", "cli", "skill", "adapters", "tests", "bench"]

packages = [
    "memorywiki." + dirpath.replace(os.sep, ".")
    for root in ROOTS
    for dirpath, dirnames, filenames in os.walk(root)
    if "__init__.py" in filenames and "__pycache__" not in dirpath
]

setup(
    packages=sorted(packages),
    package_dir={f"memorywiki.{root}": root for root in ROOTS},
)
