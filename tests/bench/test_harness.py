"""bench/harness.py: what every bench records about the machine it ran on."""

from __future__ import annotations

from bench import harness


def test_every_machine_carries_its_cpu_calibration_measured_once_per_process():
    harness.calibration_ms.cache_clear()
    first, second = harness.machine(), harness.machine()
    assert isinstance(first["calibration_ms"], float) and first["calibration_ms"] > 0
    assert second["calibration_ms"] == first["calibration_ms"]  # cached: machine() is read per bench and per Record
    assert harness.calibration_ms.cache_info().misses == 1
