"""A PEP 517 build backend for the dtq package, on the standard library alone.

pip builds a project in an isolated environment and installs its backend's
requirements from an index first; this one has none (``requires = []``), so
``pip install ./clients/python`` works offline. It builds:

- a wheel: the ``dtq`` package (every file under dtq/ but caches), its
  dist-info (METADATA, WHEEL, RECORD with sha256 hashes);
- an sdist: pyproject.toml, this backend, the package and README.md;
- an editable wheel (PEP 660): a .pth file that puts this folder on sys.path.

The version and metadata are read from pyproject.toml with tomllib where
Python has it (3.11+), else with the few lines of parsing the file needs.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "dtq"
TAG = "py3-none-any"


def _project() -> Dict[str, Any]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib  # Python 3.11+
        return dict(tomllib.loads(raw.decode())["project"])
    except ImportError:
        text = raw.decode()
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        out: Dict[str, Any] = {}
        for key in ("name", "version", "description", "requires-python"):
            m = re.search(r'^%s\s*=\s*"([^"]*)"' % re.escape(key), section, re.M)
            if m:
                out[key] = m.group(1)
        return out


def _names() -> Tuple[str, str]:
    p = _project()
    return p["name"], p["version"]


def _metadata() -> str:
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: %s" % p["name"], "Version: %s" % p["version"]]
    if p.get("description"):
        lines.append("Summary: %s" % p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    for c in p.get("classifiers", []):
        lines.append("Classifier: %s" % c)
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _package_files() -> List[Tuple[str, str]]:
    """(path in the archive, path on disk) of the package's files."""
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(dirpath, fn)
            out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory: str, files: List[Tuple[str, bytes]]) -> str:
    name, version = _names()
    dist = "%s-%s" % (name.replace("-", "_"), version)
    info = dist + ".dist-info"
    files = list(files) + [
        (info + "/METADATA", _metadata().encode()),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: dtq_build\nRoot-Is-Purelib: true\nTag: %s\n" % TAG).encode()),
    ]
    record = [_record_line(p, d) for p, d in files] + [info + "/RECORD,,"]
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    filename = "%s-%s.whl" % (dist, TAG)
    stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            zi = zipfile.ZipInfo(path, date_time=stamp)  # type: ignore[arg-type]
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return filename


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    files = []
    for arc, full in _package_files():
        with open(full, "rb") as f:
            files.append((arc, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    name, _ = _names()
    return _write_wheel(wheel_directory, [("_%s_editable.pth" % name, (ROOT + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    name, version = _names()
    base = "%s-%s" % (name, version)
    filename = base + ".tar.gz"
    members = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
               ("_build/dtq_build.py", os.path.abspath(__file__))]
    if os.path.exists(os.path.join(ROOT, "README.md")):
        members.append(("README.md", os.path.join(ROOT, "README.md")))
    members += _package_files()
    pkg_info = _metadata().encode()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arc, full in members:
            tar.add(full, arcname=base + "/" + arc, recursive=False)
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        ti.mtime = int(time.time())
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename
