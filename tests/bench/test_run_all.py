"""bench/run_all.py: what make bench runs, and how many times."""

from __future__ import annotations

from bench import run_all


def test_the_socket_and_rest_benches_run_three_times_and_the_others_once():
    runs = {name: repeat for name, _args, _which, repeat in run_all.BENCHES}
    assert {name for name, repeat in runs.items() if repeat == 3} == {"bench_rounds_ws", "bench_rooms_ws", "bench_rest_pool"}
    assert set(runs.values()) == {1, 3}
