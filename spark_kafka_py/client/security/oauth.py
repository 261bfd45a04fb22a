"""OAUTHBEARER tokens built by the client: the unsecured JWS of Kafka's unsecured login."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["unsecured_jws"]


def unsecured_jws(claims: Mapping[str, Any], lifetime_s: int, now: float | None = None) -> str:
    """An unsecured JWS (``alg: none``, RFC 7515 appendix A.5) with ``iat``/``exp`` set.

    Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` builds the same kind of token from the
    ``unsecuredLogin*`` JAAS options; Kafka's unsecured validator accepts it (KIP-255). Tests
    and development only: anyone can forge such a token.
    """
    t = int(time.time() if now is None else now)
    body = {"iat": t, "exp": t + lifetime_s, **dict(claims)}

    def b64(obj: Any) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    return f"{b64({'alg': 'none'})}.{b64(body)}."
