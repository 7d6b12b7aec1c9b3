"""Another pyspark for one qtt command, in a virtual environment of its own.

``qtt run --spark 4.2.1`` tries a candidate Spark on the whole project before the pin moves,
and says what breaks; ``qtt snapshot --spark 4.1.4`` stores the checkpoints an older line
writes, for today's line to restore. The environment is made on first use under the cache
directory (``.qtt_cache/spark/<version>``, or ``$QTT_CACHE_DIR/spark/<version>``): this qtt
installed from its own source tree (or the same release from the package index), then the
asked pyspark over it. The project's own environment is never touched. The command itself
runs unchanged in it but for ``--spark`` (and a snapshot stores checkpoints only).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import qtt
from qtt.errors import QttError
from qtt.harness.lastfailed import cache_dir
from qtt.runtime.spark.lines import CANDIDATE_ENV

_MARKER = "qtt-spark-env.json"
_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[.\w-]*)$")


def check_version(text: str) -> str:
    """``text`` when it names a pyspark release (``4.1.4``); a usage error otherwise."""
    if not _VERSION.match(text):
        raise QttError(f"--spark {text}: expected a pyspark release such as 4.1.4 (see pip index versions pyspark)")
    return text


def environment(version: str, say: Callable[[str], None]) -> Path:
    """The Python of the environment for pyspark ``version``, made if it is not there yet."""
    root = cache_dir() / "spark" / version
    python = root / "bin" / "python"
    source = _source_tree()
    wanted = {"pyspark": version, "qtt": str(source) if source else qtt.__version__}
    marker = root / _MARKER
    if python.is_file() and marker.is_file() and json.loads(marker.read_text(encoding="utf-8")) == wanted:
        return python
    say(f"preparing pyspark {version} in {root} (first use: pip downloads pyspark, a few minutes)")
    _step([sys.executable, "-m", "venv", "--clear", str(root)], f"could not make a virtual environment in {root}")
    target = ["-e", str(source)] if source else [f"qtt=={qtt.__version__}"]
    _step([str(python), "-m", "pip", "install", "-q", *target], "pip could not install qtt")
    _step(
        [str(python), "-m", "pip", "install", "-q", f"pyspark[connect]=={version}"],
        f"pip could not install pyspark {version}",
    )
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    return python


def rerun(version: str, argv: Sequence[str], say: Callable[[str], None]) -> int:
    """Run ``qtt argv`` under pyspark ``version`` and return its exit status."""
    python = environment(check_version(version), say)
    say(f"running under pyspark {version}: qtt {' '.join(argv)}")
    env = {**os.environ, CANDIDATE_ENV: version}
    return subprocess.run([str(python), "-m", "qtt.cli", *argv], env=env, check=False).returncode


def without_spark_option(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``--spark VERSION`` (or ``--spark=VERSION``)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--spark":
            skip = True
        elif not arg.startswith("--spark="):
            out.append(arg)
    return out


def _source_tree() -> Path | None:
    """This qtt's source tree (a checkout, installed editable), or None for an installed release."""
    tree = Path(qtt.__file__).resolve().parents[1]
    return tree if (tree / "pyproject.toml").is_file() else None


def _step(command: list[str], failure: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise QttError(
            f"{failure}:\n{tail}", hint="check the version exists (pip index versions pyspark) and the network"
        )
