/* fm2.socket: the game's WebSockets (a round's on the play page, a room's on the room page and
   the projector) and the one way they come back after a close (docs/websocket.md,
   "Reconnecting"):

   - 4400-4499 is a refusal (not logged in, not yours, no such round or room, too many sockets):
     the same session asking again gets the same answer, so the socket stays closed;
   - once the page's round or room is over (``live()`` says no; a room closes with 1000 after
     its ``ended`` frame), no close reconnects;
   - any other close (a network drop, 1000 or 1001, 1012 on a restart, 1013 while Redis or
     the database recovers, 1009, another 4xxx) reconnects after FIRST_WAIT_MS, doubling with
     each attempt up to MAX_WAIT_MS, and at least BUSY_WAIT_MS after a 1013; every wait is
     lengthened by up to JITTER of itself at random, so that a room's fifty players do not all
     come back in the same instant. The count starts again once a reconnected socket brings a
     frame other than ``error`` (a 1013 socket is accepted, sent an error and closed: that is
     no recovery).

   Every retry, refusal and stop is also a "fm2:socket" event on window (detail: type, path,
   code, attempt, delay), for the browser tests. Loaded after common.js, before the page's script. */
(function () {
  "use strict";
  const FIRST_WAIT_MS = 500;
  const MAX_WAIT_MS = 15000;
  const BUSY_WAIT_MS = 2000; // 1013 "try again later": a service the server needs is down
  const JITTER = 0.25;

  /**
   * The wait before reconnect number ``attempt`` (0 for the first) after a close with ``code``;
   * ``random`` is in [0, 1): Math.random() on the page, fixed in tests.
   */
  function retryDelay(attempt, code, random) {
    let wait = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** attempt);
    if (code === 1013) wait = Math.max(wait, BUSY_WAIT_MS);
    return Math.round(wait * (1 + JITTER * random));
  }

  /** The server refused this session on this socket: reconnecting gets the same answer. */
  function isRefusal(code) {
    return code >= 4400 && code <= 4499;
  }

  function report(detail) {
    window.dispatchEvent(new CustomEvent("fm2:socket", { detail }));
  }

  /**
   * Open the socket at ``path`` ("/ws/rounds/42/") and keep it open until ``close()``.
   * ``options``: ``onFrame(frame)`` for each JSON frame; ``onOpen()`` when a socket opens (the
   * first and each reconnect); ``onRefused(code)`` after a 4400-4499 close; ``live()`` whether
   * the page still plays its round or room (no close reconnects once it says no);
   * ``reconnecting``, the element that says "Reconnecting…", shown from an unexpected close
   * until the socket is back.
   * Returns ``{send(frame), close()}``; ``send`` answers false when not connected.
   */
  function open(path, options) {
    const url = (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host + path;
    let socket = null;
    let attempt = 0;
    let timer = null;
    let closed = false; // closed on purpose: no handler of it runs again, nothing reconnects

    function showReconnecting(on) {
      if (options.reconnecting) options.reconnecting.hidden = !on;
    }

    function connect() {
      if (closed) return;
      const ws = new WebSocket(url);
      let recovered = false;
      socket = ws;
      const mine = () => !closed && socket === ws;
      ws.addEventListener("open", () => {
        if (!mine()) return;
        report({ type: "open", path, attempt });
        if (options.onOpen) options.onOpen();
      });
      ws.addEventListener("message", (event) => {
        if (!mine()) return;
        let frame;
        try { frame = JSON.parse(event.data); } catch (error) { return; }
        if (!recovered && frame.type !== "error") {
          recovered = true;
          attempt = 0;
          showReconnecting(false);
        }
        options.onFrame(frame);
      });
      ws.addEventListener("close", (event) => {
        if (!mine()) return;
        socket = null;
        if (isRefusal(event.code)) {
          showReconnecting(false);
          report({ type: "refused", path, code: event.code, attempt });
          if (options.onRefused) options.onRefused(event.code);
          return;
        }
        if (options.live && !options.live()) {
          showReconnecting(false);
          report({ type: "done", path, code: event.code, attempt });
          return;
        }
        const delay = retryDelay(attempt, event.code, Math.random());
        attempt += 1;
        showReconnecting(true);
        report({ type: "retry", path, code: event.code, attempt, delay });
        timer = setTimeout(connect, delay);
      });
    }

    connect();
    return {
      send(frame) {
        if (closed || !socket || socket.readyState !== WebSocket.OPEN) return false;
        socket.send(JSON.stringify(frame));
        return true;
      },
      close() {
        closed = true;
        clearTimeout(timer);
        if (socket) socket.close(1000);
        socket = null;
      },
    };
  }

  window.fm2.socket = { open, retryDelay, isRefusal, FIRST_WAIT_MS, MAX_WAIT_MS, BUSY_WAIT_MS, JITTER };
})();
