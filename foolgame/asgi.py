"""ASGI entry point: HTTP to Django, WebSockets through the origin check, the session and the router."""

import asyncio
import gc
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse
from django.urls import set_script_prefix

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")


# Request threads kept idle for the next requests: above the concurrency a process serves
# (its database pool's connections, 20 by default) a thread would only wait for a connection.
IDLE_REQUEST_THREADS = 64


class RequestThread(ThreadPoolExecutor):
    """One thread that runs a request's sync work (signals, middleware, view, closing), kept
    for the requests after it.

    Django gives each request a thread-sensitive context of its own, and asgiref a new
    one-thread executor for it: a thread started and joined per request, a sixth of a web
    process's CPU under the REST bench. One thread still serves one request at a time, so
    what Django keeps per thread (the database connection, closed or handed back to the
    pool by ``request_finished`` on this thread) stays the request's. A request abandoned by
    its client (Django cancels its task, but its view runs on) keeps the thread until the
    view returns: only then is the thread idle again."""

    def __init__(self, idle: list["RequestThread"]) -> None:
        super().__init__(max_workers=1, thread_name_prefix="fm2-request")
        self._idle = idle
        self._lock = threading.Lock()
        self._running = 0
        self._released = False

    def submit(self, fn, /, *args, **kwargs) -> Future:  # type: ignore[no-untyped-def, override]
        with self._lock:
            self._running += 1
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: Future) -> None:
        with self._lock:
            self._running -= 1
            idle_now = self._released and not self._running
            if idle_now:
                self._released = False
        if idle_now:
            self._rest()

    def release(self) -> None:
        """The request is over: idle now, or as soon as its last call returns."""
        with self._lock:
            if self._running:
                self._released = True
                return
        self._rest()

    def _rest(self) -> None:
        if len(self._idle) < IDLE_REQUEST_THREADS:
            self._idle.append(self)  # list.append and pop are atomic: the loop pops, a thread may append
        else:
            self.shutdown(wait=False)


class OneTripASGIHandler(ASGIHandler):
    """Django's ASGI handler with a request's sync work done in one trip to the request's
    thread, as under WSGI.

    Django's own loads the middleware in async mode: the first middleware that is sync only
    (ours: the guest and participant limits) turns everything above it sync, one trip from the
    event loop to a thread; below it the rest go back to the loop (``async_to_sync``), and the
    sync view to the thread again, and each ``MiddlewareMixin`` below runs its hooks with a
    trip of their own. Around them it makes a trip of their own for ``request_started`` and
    for the response's closing (``request_finished``). Each trip wakes a thread and then the
    loop: a fifth of a web process's CPU under the REST bench. Here the chain is loaded sync,
    as WSGI's, and one trip sends ``request_started``, runs the chain and the view, and closes
    the response (its content is already whole); only a streaming response (an export's
    download) is closed in a second trip, once it has been sent. The database connection so
    goes back to the pool before the answer is written to the socket.

    An async view (liveness, readiness) is run by Django's sync chain in the loop, as any sync
    chain runs it. The request's thread is a ``RequestThread`` kept from an earlier request,
    not a new one. As in Django's, a client that hangs up cancels the waiting, not the view:
    its trip runs on and closes its response when the view returns."""

    def __init__(self) -> None:
        super().__init__()
        self._idle_threads: list[RequestThread] = []

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def __call__(self, scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            thread = self._idle_threads.pop()
        except IndexError:
            thread = RequestThread(self._idle_threads)
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        finally:
            thread.release()

    async def handle(self, scope, receive, send):  # type: ignore[no-untyped-def]
        """Django's ``ASGIHandler.handle`` with its three trips to the thread made one."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)

        async def process_request():  # type: ignore[no-untyped-def]
            response = await sync_to_async(self._respond, thread_sensitive=True)(scope, request, error_response)
            try:
                await self.send_response(response, send)
            except asyncio.CancelledError:
                pass  # the client hung up while being sent the response
            return response

        # The client's hanging up is watched while the response is made, as Django's does.
        tasks = [asyncio.create_task(self.listen_for_disconnect(receive)), asyncio.create_task(process_request())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                try:
                    task.result()
                except RequestAborted:
                    pass
                except AssertionError:
                    body_file.close()
                    raise
            else:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
        try:
            response = tasks[1].result()
        except asyncio.CancelledError:
            pass  # the trip runs on in the thread and closes the response
        else:
            if response.streaming:
                await sync_to_async(response.close, thread_sensitive=True)()
        body_file.close()

    def _respond(self, scope, request, error_response):  # type: ignore[no-untyped-def]
        """In the request's thread: ``request_started``, the response, and unless it streams
        its closing (``request_finished``: the database connection goes back)."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        response = error_response if request is None else self.get_response(request)
        response._handler_class = self.__class__
        if isinstance(response, FileResponse):
            response.block_size = self.chunk_size  # the server chunks it: larger reads
        if not response.streaming:
            response.close()
        return response


# Django must be set up before the consumers (and the models they import) are loaded.
django.setup(set_prefix=False)
django_asgi_app = OneTripASGIHandler()

from django.conf import settings  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from foolgame.core.sockets import SocketAuthMiddlewareStack  # noqa: E402
from foolgame.middleware import BodySizeLimitMiddleware  # noqa: E402
from foolgame.routing import websocket_urlpatterns  # noqa: E402
from foolgame.security import OriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Request bodies past the cap are refused before Django spools them (FM2_HTTP).
        "http": BodySizeLimitMiddleware(django_asgi_app),
        # The socket reads its user as it opens (core.sockets.PendingUser), in its opening trip.
        "websocket": OriginValidator(SocketAuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

# Everything loaded so far lives as long as the process: move it out of the collector's sight,
# so that a full collection scans only what connections and requests made since. With 1,000
# open sockets a full collection then pauses the server about 60 ms less (the 130,000 objects
# of Django and the app). Collected first, so no garbage is frozen with it.
gc.collect()
gc.freeze()
# A full collection still scans every object made since: with 1,000 open sockets that is a
# 70-110 ms pause of the whole server, which CPython's default thresholds (700, 10, 10) ran
# every 5-20 s on the rooms benchmark, each time stalling every socket's vote and answer at
# once (most of the vote ack's p99). Fewer, larger young collections and a full one only
# after 100 middle ones (FM2_GC_THRESHOLDS, default 10000,50,100) took them out of the run;
# little cyclic garbage reaches the old generation (the full collections found 50-1,000
# objects), so the deferred ones cost little memory.
gc.set_threshold(*settings.FM2_GC_THRESHOLDS)

# The first request that needs the sentence encoder (a claim's clue list, the model in the
# loop's verdict) would load it, 2-3 s, or 15 s on a machine that never exported it to ONNX:
# load it on a thread as the server starts instead (FM2_WARM_MODELS=false skips it).
if settings.FM2_RETRIEVAL.get("WARM_ON_START"):
    from foolgame.serving import warm_models_in_background  # noqa: E402

    warm_models_in_background()
