"""The machinery every app uses and that uses no app: the domain error and the REST base
(``errors``, ``views``, ``schema``, ``parsers``), one way to send a side effect after the
commit (``events``), the hooks through which a higher app reacts to a lower one
(``hooks``), the socket base with its leases and clock (``sockets``, ``socket_leases``,
``clock``) and the throttles (``throttle``). Nothing here imports an app of ``foolgame``
(``tests/test_layers.py`` checks it)."""
