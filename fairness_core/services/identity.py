"""Who a user is, spelled one way: the pair (issuer, subject), written ``issuer|subject`` by :func:`identity` alone.

A signed-in user is the OpenID Connect issuer that vouched for them (its ``iss``, e.g.
``https://accounts.example.org``) and the subject that issuer gave them (its ``sub``). Neither alone names a
person: two providers may hand out the same ``sub``, and an e-mail address may be unverified, change, or be claimed
at two providers. So the store keys owners, readers, link makers and events by the pair, and keeps an e-mail only
as a display name (:meth:`~fairness_core.store.AuditStore.remember`).

The spelling: each part is percent-escaped (``%`` → ``%25``, then ``|`` → ``%7C``), and the two are joined by
``|``. It is injective (an escaped part holds no ``|``, so the one ``|`` splits the pair back) and there is one
spelling per pair: :func:`parse` refuses any other (a bare name, a lower-case ``%7c``, a stray ``%``), so two
spellings of one user never stand for two users.

Users without sign-in are *local*: the issuer :data:`LOCAL_ISSUER` ("local", which no OpenID provider can be:
issuers are https addresses) and a name. :data:`LOCAL_USER` (``local|local``) is the one analyst of a workbench
without sign-in; ``--user NAME`` on the command line is ``local_user(NAME)``.

>>> identity("https://accounts.example.org", "10769150350006150715113082367")
'https://accounts.example.org|10769150350006150715113082367'
>>> identity("https://a.example", "x|y%"), parse(identity("https://a.example", "x|y%"))
('https://a.example|x%7Cy%25', ('https://a.example', 'x|y%'))
>>> local_user("ana"), LOCAL_USER
('local|ana', 'local|local')
"""

from __future__ import annotations

import re
from typing import Any

from ..common import text

__all__ = ["LOCAL_ISSUER", "LOCAL_USER", "MAX_USER", "SEPARATOR", "identity", "is_local", "local_user", "parse",
           "subject_of"]

#: The issuer of users without sign-in (the command line's ``--user``, a workbench on a laptop).
LOCAL_ISSUER = "local"
#: Between the escaped issuer and the escaped subject.
SEPARATOR = "|"
#: Longest identity, in characters: an issuer address and a subject of up to 255 characters each (OpenID Connect
#: Core 1.0, section 2: ``sub`` "MUST NOT exceed 255 ASCII characters") with room for escapes.
MAX_USER = 600


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace(SEPARATOR, "%7C")


_ESCAPED = re.compile("%(25|7C)")


def _unescape(part: str) -> str:
    return _ESCAPED.sub(lambda m: "%" if m.group(1) == "25" else SEPARATOR, part)


def _part(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{what} must not be blank")
    if value != value.strip():
        raise ValueError(f"{what} {value!r} begins or ends with a space: an issuer or subject is kept exactly, so "
                         "one with spaces around it would be another user")
    if (shown := text.hidden_characters(value)) is not None:
        raise ValueError(f"{what} {shown!r} holds a hidden character (shown as ⟨U+…⟩): it would print like another "
                         "user's")
    return value


def identity(issuer: str, subject: str) -> str:
    """The one spelling of the user ``subject`` of ``issuer``: ``escape(issuer) + "|" + escape(subject)``, where
    escape writes ``%`` as ``%25`` and ``|`` as ``%7C``. Each part is text, not blank, without hidden characters,
    kept exactly (a ``sub`` is compared as it is: no trimming, no case folding); the whole is at most
    :data:`MAX_USER` characters. Raises ValueError naming the part."""
    key = f"{_escape(_part(issuer, 'the issuer'))}{SEPARATOR}{_escape(_part(subject, 'the subject'))}"
    if len(key) > MAX_USER:
        raise ValueError(f"the identity {key[:40]!r}… is {len(key):,} characters long; at most {MAX_USER} are kept")
    return key


def local_user(name: str) -> str:
    """A user without sign-in, named ``name``: ``identity("local", name)``."""
    return identity(LOCAL_ISSUER, name)


#: The one analyst of a workbench without sign-in: every store call's default ``user``.
LOCAL_USER = local_user("local")


def parse(user: Any, what: str = "user") -> tuple[str, str]:
    """``(issuer, subject)`` of an identity spelled by :func:`identity`; ValueError for anything else — a bare name
    or e-mail address (which issuer?), or another spelling of a pair — saying how to write one."""
    if not isinstance(user, str):
        raise ValueError(f"{what} must be an identity 'issuer|subject' (fairness_core.services.identity.identity), "
                         f"got {type(user).__name__}")
    parts = user.split(SEPARATOR)
    if len(parts) != 2:
        shown = text.terminal_safe(user)[:80]
        raise ValueError(f"{what} {shown!r} is not an identity: a user is the pair (issuer, subject), written "
                         f"'issuer|subject' by identity(issuer, subject) — a bare name or e-mail could be two people; "
                         f"a user without sign-in is local_user(name), e.g. {local_user('ana')!r}")
    pair = _unescape(parts[0]), _unescape(parts[1])
    try:
        again = identity(*pair)
    except ValueError as e:
        raise ValueError(f"{what} {text.terminal_safe(user)[:80]!r} is not an identity: {e}") from None
    if again != user:
        raise ValueError(f"{what} {text.terminal_safe(user)[:80]!r} is not an identity's one spelling: "
                         f"identity{pair!r} writes it {again!r}")
    return pair


def is_local(user: str) -> bool:
    """Whether ``user`` (an identity) is a local user, without sign-in."""
    return parse(user)[0] == LOCAL_ISSUER


def subject_of(user: str) -> str:
    """The subject of ``user`` (a local user's name), for a short display where nothing better is known."""
    return parse(user)[1]
