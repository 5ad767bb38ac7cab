"""docs/websocket.md keeps up with the room socket: each frame and code it can send is named."""

from __future__ import annotations

import re

from tests.conftest import REPO


def test_websocket_doc_names_every_room_frame_and_code() -> None:
    from foolgame.rooms import consumers

    doc = (REPO / "docs" / "websocket.md").read_text(encoding="utf-8")
    room_doc = doc[doc.index("# The room WebSocket"):]
    source = (REPO / "foolgame" / "rooms" / "consumers.py").read_text(encoding="utf-8")
    services = (REPO / "foolgame" / "rooms" / "services.py").read_text(encoding="utf-8")
    codes = set(re.findall(r'FrameError\(\s*"([a-z_]+)"', source)) | set(re.findall(r'ServiceError\(\s*"([a-z_]+)"', services))
    codes -= {"invalid_questions", "invalid_seconds", "unknown_category", "try_again", "room_full", "too_many_open_rooms", "room_rate_limited"}  # REST only: creating and joining
    codes |= {code for code, _ in consumers.RoomConsumer.CLOSE_REASONS.values()}
    assert codes and sorted(code for code in codes if f"`{code}`" not in room_doc) == []
    frames = set(consumers.RoomConsumer.HANDLERS) | set(re.findall(r'send_frame\(\s*"([a-z]+)"', source)) | {"room", "question", "answer", "members", "ended"}
    assert sorted(frame for frame in frames if f'"type": "{frame}"' not in room_doc and f"| `{frame}` |" not in room_doc) == []
