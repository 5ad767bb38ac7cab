"""The export's memory: scikit-learn without the data-frame libraries it never needs here.

``import sklearn`` imports pandas when pandas is installed (``sklearn.utils.fixes``: a
``try: import pandas``), and pandas 3 imports pyarrow when that is installed: about 60 MB
of resident memory an export never uses (it hands the classifier lists of strings), on top
of the classifier's fit, the export's peak (``bench/bench_export.py``: <= 300 MB). So the
export imports scikit-learn once with those two refused, as if they were not installed,
which scikit-learn supports (both are optional for it and it checks for them at call time,
in ``sys.modules``). Only the import is affected: the refusal is lifted right after, so
anything that imports pandas later in the process gets it as usual.

And glibc's malloc is kept from holding on to large freed blocks
(:func:`large_allocations_mapped`): about 24 MB off the classifier's fit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.abc
import sys
import threading
from typing import Any

DATA_FRAME_LIBRARIES = frozenset({"pandas", "pyarrow"})
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_ALLOCATION = 128 * 1024
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


def large_allocations_mapped() -> None:
    """Keep every allocation of 128 KiB or more in its own mapping, returned to the system
    when freed (glibc's own starting threshold, held there).

    glibc raises that threshold each time such a block is freed, up to 32 MiB, after which
    the large temporary arrays of the export (the LMI's token arrays, the classifier's
    sparse matrices) come from the heap and their pages stay resident after they are freed:
    the classifier's fit then peaked about 24 MB higher (280 against 256 MiB on 8,000 claims).
    Nothing changes but where those blocks live; on another C library this does nothing."""
    if not sys.platform.startswith("linux"):
        return
    name = ctypes.util.find_library("c")
    if not name:
        return
    try:
        ctypes.CDLL(name).mallopt(M_MMAP_THRESHOLD, LARGE_ALLOCATION)
    except (OSError, AttributeError):
        pass
