"""What the device-id tests share: an environment like a user's machine (onnxruntime keeps
quiet by itself under CI variables, which would make the tests prove nothing) and the control
that shows onnxruntime still writes a device id there when nothing stops it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CI_VARIABLES = (
    "CI",
    "TF_BUILD",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "CIRCLECI",
    "TRAVIS",
    "JENKINS_URL",
    "CODEBUILD_BUILD_ID",
    "BUILDKITE",
    "TEAMCITY_VERSION",
    "APPVEYOR",
    "BITBUCKET_BUILD_NUMBER",
    "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI",
    "ORT_DISABLE_TELEMETRY",
    "ORT_TELEMETRY_DISABLED",
    "ORT_RUNNING_UNIT_TESTS",
)


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def user_env() -> dict[str, str]:
    """This process's environment without CI markers or XDG dirs: as on a user's machine."""
    return {k: v for k, v in os.environ.items() if k not in CI_VARIABLES and not k.startswith("XDG_")}


def assert_onnxruntime_writes_a_device_id(tmp_path: Path) -> None:
    """The control: `import onnxruntime` with a fresh HOME writes a device id."""
    control_home = tmp_path / "control-home"
    control_home.mkdir()
    subprocess.run(
        [sys.executable, "-c", "import onnxruntime"],
        env={**user_env(), "HOME": str(control_home)},
        check=True,
        timeout=120,
    )
    assert any(p.endswith("deviceid") for p in files_under(control_home)), (
        "onnxruntime no longer writes a device id here: this test would prove nothing",
        files_under(control_home),
    )


def fresh_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home
