"""The export's memory: scikit-learn without the data-frame libraries it never needs here.

``import sklearn`` imports pandas when pandas is installed (``sklearn.utils.fixes``: a
``try: import pandas``), and pandas 3 imports pyarrow when that is installed: about 60 MB
of resident memory an export never uses (it hands the classifier lists of strings), on top
of the classifier's fit, the export's peak (``bench/bench_export.py``: <= 300 MB). So the
export imports scikit-learn once with those two refused, as if they were not installed,
which scikit-learn supports (both are optional for it and it checks for them at call time,
in ``sys.modules``). Only the import is affected: the refusal is lifted right after, so
anything that imports pandas later in the process gets it as usual.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
from typing import Any

DATA_FRAME_LIBRARIES = frozenset({"pandas", "pyarrow"})
_lock = threading.Lock()


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname.partition(".")[0] in DATA_FRAME_LIBRARIES:
            raise ModuleNotFoundError(f"No module named {fullname!r} (not loaded with the export's classifier)", name=fullname)
        return None


def sklearn_import_lean() -> None:
    """Import the parts of scikit-learn the export's classifier uses, without pandas and
    pyarrow, unless scikit-learn or either of them is already loaded (then nothing changes)."""
    with _lock:
        if "sklearn" in sys.modules or DATA_FRAME_LIBRARIES & set(sys.modules):
            return
        finder = _Refuse()
        sys.meta_path.insert(0, finder)
        try:
            import sklearn.feature_extraction.text  # noqa: F401
            import sklearn.linear_model  # noqa: F401
            import sklearn.model_selection  # noqa: F401
            import sklearn.pipeline  # noqa: F401
        finally:
            sys.meta_path.remove(finder)
