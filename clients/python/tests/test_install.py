"""The package installs offline with pip (its in-tree build backend), and the
installed copy works against the server; the backend's sdist and editable
wheel hold what they should."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile

from _support import PACKAGE_ROOT


class InstallTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="dtq-py-install-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_pip_install_offline_and_import(self) -> None:
        if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
            self.fail("pip is not installed for %s (make deps installs python3-pip)" % sys.executable)
        target = os.path.join(self.tmp, "site")
        # A copy of the source, so that pip's build leaves no file in the checkout.
        src = os.path.join(self.tmp, "src")
        shutil.copytree(PACKAGE_ROOT, src, ignore=shutil.ignore_patterns("__pycache__", "tests", "*.go"))
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--target", target, src],
                           capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(r.returncode, 0, "pip install failed:\n%s\n%s" % (r.stdout, r.stderr))
        self.assertTrue(os.path.exists(os.path.join(target, "dtq", "py.typed")))
        infos = [d for d in os.listdir(target) if d.endswith(".dist-info")]
        self.assertEqual(infos, ["dtq-0.1.0.dist-info"])
        # The installed copy, in a fresh interpreter that cannot see the checkout.
        code = ("import dtq, os, sys; assert dtq.__file__.startswith(%r), dtq.__file__; "
                "c = dtq.Client(); names = [q.name for q in c.queues.list()]; "
                "print(dtq.LIBRARY, type(names).__name__)" % target)
        r = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, %r); %s" % (target, code)],
                           capture_output=True, text=True, cwd=self.tmp, timeout=60,
                           env=dict(os.environ))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "dtq-python/0.1.0 list")

    def _backend(self):
        sys.path.insert(0, os.path.join(PACKAGE_ROOT, "_build"))
        try:
            return importlib.import_module("dtq_build")
        finally:
            sys.path.pop(0)

    def test_sdist_and_editable(self) -> None:
        b = self._backend()
        self.assertEqual(b.get_requires_for_build_wheel(), [])
        sdist = b.build_sdist(self.tmp)
        with tarfile.open(os.path.join(self.tmp, sdist)) as t:
            names = set(t.getnames())
        for want in ("dtq-0.1.0/pyproject.toml", "dtq-0.1.0/_build/dtq_build.py", "dtq-0.1.0/PKG-INFO",
                     "dtq-0.1.0/dtq/__init__.py", "dtq-0.1.0/dtq/py.typed", "dtq-0.1.0/dtq/worker.py"):
            self.assertIn(want, names)
        self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        wheel = b.build_editable(self.tmp)
        with zipfile.ZipFile(os.path.join(self.tmp, wheel)) as z:
            pth = z.read("_dtq_editable.pth").decode().strip()
            record = z.read("dtq-0.1.0.dist-info/RECORD").decode()
        self.assertEqual(pth, PACKAGE_ROOT)
        self.assertIn("_dtq_editable.pth,sha256=", record)


if __name__ == "__main__":
    unittest.main()
