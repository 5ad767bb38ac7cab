"""The export's classifier is imported without pandas and pyarrow (foolgame/dataset/lean.py):
about 60 MB of the export's peak memory it never used."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, os, sys
import django
os.environ["DJANGO_SETTINGS_MODULE"] = "foolgame.settings"
django.setup()
from foolgame.dataset.lean import DATA_FRAME_LIBRARIES, sklearn_import_lean
from foolgame.dataset import reports  # what the export imports before its classifier
sklearn_import_lean()
from scoring.artifacts import claim_only_pipeline
model = claim_only_pipeline(0)
model.fit(["the king was born", "the city was never a king", "a film of the war", "his first film"], ["SUPPORTS", "REFUTES", "SUPPORTS", "REFUTES"])
predicted = [str(label) for label in model.predict(["the king of the city", "his war film"])]
loaded = sorted(DATA_FRAME_LIBRARIES & set(sys.modules))
import pandas  # refused only while scikit-learn was imported: anything later gets it
print(json.dumps({"loaded": loaded, "predicted": predicted, "pandas_later": pandas.__name__}))
"""


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed: nothing to leave out")
def test_the_export_fits_its_classifier_without_loading_pandas_or_pyarrow(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FM2_DATA_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded"] == []
    assert len(result["predicted"]) == 2
    assert result["pandas_later"] == "pandas"
