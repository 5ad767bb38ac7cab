"""32 logged-in sockets each sending one 16 MiB frame to one uvicorn process (issue 12).

Starts the server as the Procfile runs it (its flags from foolgame.serving, --ws-max-size
included) on a fresh SQLite database in a temporary FM2_DATA_DIR (or a throwaway PostgreSQL
one beside --database-url) and a Redis channel layer (--redis-url, or a redis-server started
here), with FM2_WARM_MODELS=0 (the encoder's warm-up, about 1 GB, would hide the frames' share
of the peak; bench_first_save.py measures it), opens --sockets logged-in round sockets at once and has each send one text frame of
--frame-mib MiB (a few bytes under, so that it also fits uvicorn's own 16 MiB default), then
plays one normal round on a fresh socket. With --no-limit the server runs without
--ws-max-size (uvicorn's default, 16 MiB), which is the problem the issue measured (2.3 GB).
Prints:
- the server's peak RSS (VmHWM) and its RSS before and after, in MiB;
- how the sockets ended: closed by the server with which code, or answered with which frame
  (a close or an error frame is the server refusing the flood: the figure, not a failure);
- whether a normal round (start, reveal, vote) still plays afterwards.
A socket that could not connect, a server that died, or a normal round that does not play
afterwards is an error: the bench prints it and exits non-zero. --record PATH appends the
figures as lines of JSON (bench/harness.py).

    python bench/bench_ws_flood.py
    python bench/bench_ws_flood.py --no-limit
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rounds_ws import SETUP  # noqa: E402
from harness import REPO, Record, add_service_args, free_port, refuse_errors, services, stop, wait_port  # noqa: E402

sys.path.insert(0, str(REPO))
from foolgame.serving import uvicorn_flags  # noqa: E402


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


async def flood(port: int, info: dict, payload: str, outcomes: collections.Counter) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    headers = {"Cookie": f"sessionid={info['session']}", "Origin": f"http://127.0.0.1:{port}"}
    try:
        async with connect(f"ws://127.0.0.1:{port}/ws/rounds/{info['round']}/", additional_headers=headers,
                           max_size=None, open_timeout=60, close_timeout=10, ping_interval=None) as ws:
            try:
                await ws.send(payload)
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 60))
                    if frame["type"] != "tick":
                        outcomes[f"answered {frame['type']} {frame.get('code', '')}".strip()] += 1
                        return
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd is not None else "no close frame (connection reset)"
                outcomes[f"closed {code}"] += 1
    except Exception as error:  # noqa: BLE001 - a figure, not a failure
        outcomes[f"failed {type(error).__name__}"] += 1


async def normal_round(port: int, info: dict) -> str:
    from websockets.asyncio.client import connect

    headers = {"Cookie": f"sessionid={info['session']}", "Origin": f"http://127.0.0.1:{port}"}
    async with connect(f"ws://127.0.0.1:{port}/ws/rounds/{info['round']}/", additional_headers=headers, open_timeout=60) as ws:
        seen = []
        for request, wanted in (({"type": "start"}, "state"), ({"type": "reveal", "claim": 0}, "clue"),
                                ({"type": "vote", "false_claim": info["false"]}, "result")):
            await ws.send(json.dumps(request))
            while (frame := json.loads(await asyncio.wait_for(ws.recv(), 30)))["type"] == "tick":
                pass
            seen.append(frame["type"])
            if frame["type"] != wanted:
                return f"no: {request['type']} got {frame}"
        return "yes (" + ", ".join(seen) + ")"


async def run(port: int, infos: list[dict], payload: str, server_pid: int) -> tuple[collections.Counter, float, str]:
    outcomes: collections.Counter = collections.Counter()
    started = time.monotonic()
    await asyncio.gather(*(flood(port, info, payload, outcomes) for info in infos[:-1]))
    seconds = time.monotonic() - started
    return outcomes, seconds, await normal_round(port, infos[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=32)
    parser.add_argument("--frame-mib", type=float, default=16)
    parser.add_argument("--no-limit", action="store_true", help="run uvicorn without --ws-max-size (the problem)")
    add_service_args(parser)
    args = parser.parse_args()
    record = Record("bench_ws_flood", args.record)
    args.sockets = max(1, min(args.sockets, 64))  # bounded: this runs on a shared machine
    flags = uvicorn_flags()
    if args.no_limit:
        at = flags.index("--ws-max-size")
        del flags[at : at + 2]
    payload = json.dumps({"type": "state", "pad": ""})
    payload = payload[:-2] + "x" * (int(args.frame_mib * 1024 * 1024) - len(payload) - 64) + '"}'
    with services(args, "flood") as svc:
        env = svc.env(FM2_WARM_MODELS="0")
        manage = [sys.executable, "manage.py"]
        subprocess.run(manage + ["migrate", "--no-input", "-v0"], cwd=REPO, env=env, check=True)
        subprocess.run(manage + ["load_demo"], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
        setup = subprocess.run(manage + ["shell", "-c", SETUP.replace("sys.argv[-1]", repr(str(args.sockets + 1)))],
                               cwd=REPO, env=env, check=True, capture_output=True, text=True)
        infos = json.loads(setup.stdout.strip().splitlines()[-1])
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "uvicorn", "foolgame.asgi:application", "--host", "127.0.0.1",
                                   "--port", str(port), "--log-level", "warning", *flags], cwd=REPO, env=env)
        try:
            wait_port(port)
            time.sleep(1)
            before = status_kib(server.pid, "VmRSS")
            outcomes, seconds, played = asyncio.run(run(port, infos, payload, server.pid))
            alive = server.poll() is None
            peak = status_kib(server.pid, "VmHWM") if alive else 0
            after = status_kib(server.pid, "VmRSS") if alive else 0
        finally:
            stop(server)
    print(f"server flags: {' '.join(flags)}")
    print(f"sockets: {args.sockets}, frame: {len(payload.encode()) / 2**20:.2f} MiB each, sent in {seconds:.1f} s")
    print(f"server RSS MiB: before {before / 1024:.0f}, peak (VmHWM) {peak / 1024:.0f}, after {after / 1024:.0f}; server alive: {alive}")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {count:3d} x {outcome}")
    print(f"a normal round plays afterwards: {played}")
    case = f"{args.sockets} x {len(payload.encode()) / 2**20:.0f} MiB frames, {'no --ws-max-size' if args.no_limit else 'Procfile flags'}, {svc.database}"
    for figure, value in (("server_rss_mib_before", before / 1024), ("server_rss_mib_peak", peak / 1024), ("server_rss_mib_after", after / 1024)):
        record.add(case, figure, round(value, 1), "MiB")
    errors = {outcome: count for outcome, count in outcomes.items() if outcome.startswith("failed")}
    if not alive:
        errors["server died"] = 1
    if not played.startswith("yes"):
        errors[f"normal round afterwards: {played}"] = 1
    refuse_errors(errors, "outcomes")


if __name__ == "__main__":
    main()
