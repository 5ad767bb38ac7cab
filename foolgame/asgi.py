"""ASGI entry point: HTTP to Django, WebSockets through the origin check, the session and the router."""

import gc
import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foolgame.settings")


class OneTripASGIHandler(ASGIHandler):
    """Django's ASGI handler with the middleware and the view run in one trip to the request's
    thread, as under WSGI.

    Django's own loads the middleware in async mode: the first middleware that is sync only
    (ours: the guest and participant limits) turns everything above it sync, one trip from the
    event loop to a thread; below it the rest go back to the loop (``async_to_sync``), and the
    sync view to the thread again, and each ``MiddlewareMixin`` below runs its hooks with a
    trip of their own. Those trips and their thread handoffs were a sixth of a web process's
    CPU under the REST bench. Here the chain is loaded sync, as WSGI's, and run whole in one
    ``sync_to_async`` (thread-sensitive: the request's own thread, as before). An async view
    (the readiness check) is run by Django's sync chain in the loop, as any sync chain runs it."""

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):  # type: ignore[no-untyped-def]
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


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
