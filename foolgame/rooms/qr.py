"""A room's join link as a QR code, drawn on the server as an inline SVG (the ``qrcode``
package's path image: no image library, no script, nothing fetched by the page)."""

from __future__ import annotations

import io

import qrcode
from qrcode.image.svg import SvgPathImage


def qr_svg(text: str) -> str:
    """The SVG element (no XML declaration) of a QR code of ``text``, medium error correction
    (a projector's glare and a phone held at an angle), scaled by its ``viewBox`` to any size
    the page gives it."""
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, border=4, image_factory=SvgPathImage)
    code.add_data(text)
    code.make(fit=True)
    buffer = io.BytesIO()
    code.make_image().save(buffer)
    svg = buffer.getvalue().decode("utf-8")
    svg = svg[svg.index("<svg") :]
    # Sized by the page's CSS, not in millimetres.
    return svg.replace(' width="', ' data-mm-width="', 1).replace(' height="', ' data-mm-height="', 1)
