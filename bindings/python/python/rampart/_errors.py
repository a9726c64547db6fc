"""Rampart's exceptions: one base, one subclass per family.

Every error carries ``code`` (HTTP-style int), ``kind`` (the stable name, for example
``"token_failed"``; several kinds share a code) and ``message`` (the fixed text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from typing import Literal

    # Why a webhook message did not verify (`WebhookVerificationError.reason`). For checkers only:
    # mypy.stubtest cannot compare a Literal alias with its runtime object.
    _WebhookVerificationReason = Literal["missing_header", "bad_timestamp", "too_old", "too_new", "no_match"]


class RampartError(Exception):
    """Base of every Rampart error."""

    code: int = 500
    kind: str = "internal"
    message: str = ""
    retry_after: Optional[int] = None

    def __init__(self, message: str, code: int = 500, kind: str = "internal", retry_after: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.kind = kind
        self.retry_after = retry_after

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.message, self.code, self.kind, self.retry_after))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, kind={self.kind!r}, message={self.message!r})"

    def __str__(self) -> str:
        return self.message


class InvalidInputError(RampartError):
    """400 (and 413): an argument breaks a rule; the message names it. ``factor_conflict``: both
    a token and a recovery code were given ("Give token or recoveryCode, not both")."""


class AuthenticationError(RampartError):
    """401: ``unauthorized`` (bad credentials), ``token_missing`` or ``token_failed``; in the
    widget's purchase flow ``session_expired``, ``sign_in_required``, ``sign_in_code_failed`` or
    ``sign_in_code_expired``."""


class ConflictError(RampartError):
    """403/409: the contact's 2FA state does not allow the call (``two_factor_required``: pass
    the 2FA step before buying; ``purchase_hold``: purchases are on hold after a 2FA recovery or
    reset, the message says until when)."""


class ForbiddenError(RampartError):
    """403: the partner's widget may not be used here: ``widget_not_approved`` (production,
    awaiting an operator), ``origin_not_allowed`` (an embedding origin not registered) or
    ``sandbox_only``."""


class LockedError(RampartError):
    """423: too many failures; an operator must call ``reset_lock``."""


class ThrottledError(RampartError):
    """429: attempts (``throttled``) or sign-in codes (``sign_in_throttled``) are refused for
    ``retry_after`` seconds."""


class NotFoundError(RampartError):
    """404: no such partner (``partner_not_found``), order (``order_not_found``) or contact
    (``contact_not_found``)."""


class StorageError(RampartError):
    """500: the store failed; the operation did not succeed (fail closed)."""


class UnavailableError(RampartError):
    """503: the server lacks a service the call needs: ``purchases_unavailable`` (production
    purchases need a payment provider) or ``sign_in_unavailable`` (a mail service)."""


class ConfigError(RampartError):
    """500: invalid settings, or a closed service."""


class WidgetError(RampartError):
    """400: a widget URL, configuration or snippet call failed as a whole; ``kind`` is its code."""


class SignatureError(WidgetError):
    """400: a URL could not be signed, or its signature does not verify."""


class WebhookVerificationError(RampartError):
    """400 ``webhook_verification_failed``: a received webhook message did not verify (raised by
    ``webhook_verify``); drop it. ``reason`` says why: ``"missing_header"`` (``webhook-id``,
    ``webhook-timestamp`` or ``webhook-signature`` absent), ``"bad_timestamp"`` (not a whole
    number of seconds), ``"too_old"`` or ``"too_new"`` (more than 5 minutes from now),
    ``"no_match"`` (no ``v1`` signature matches the secret, id, timestamp and body)."""

    reason: _WebhookVerificationReason = "no_match"

    def __init__(
        self,
        message: str,
        code: int = 400,
        kind: str = "webhook_verification_failed",
        retry_after: Optional[int] = None,
        *,
        reason: _WebhookVerificationReason = "no_match",
    ) -> None:
        super().__init__(message, code, kind, retry_after)
        self.reason = reason

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.message, self.code, self.kind, self.retry_after), {"reason": self.reason})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(reason={self.reason!r}, message={self.message!r})"
