"""Who is who on a team server: sign-in the Streamlit way (``st.login`` / ``st.user``) with an OpenID Connect
provider configured in the ``[auth]`` section of ``.streamlit/secrets.toml``.

Without ``[auth]`` (the embedded default: one analyst on a laptop) the app runs as one local user,
:data:`LOCAL_USER`, and the sidebar says so. With it, every page shows a sign-in screen until the browser has
signed in (:func:`require_user`, called by ``ui.state.page_setup``), and the signed-in user is
:func:`current_user`: the identity (issuer, subject) of the provider's ID token (``iss``, ``sub``), spelled
``issuer|subject`` by :func:`fairness_core.services.identity.identity` — never the e-mail address (unverified at
some providers, shared by two providers' users) nor the bare ``sub`` (two providers may hand out the same one).
The e-mail (when the provider does not say it is unverified), else the name, is only what is shown
(:func:`display_name`), and what owners find each other by when they share (``ui.saved``). ``FAIRNESS_REQUIRE_LOGIN=1`` makes a server refuse to serve anything without a complete
``[auth]``: every page shows an error naming what to configure, and ``python -m ui.auth --check`` (run before
``streamlit run``) exits with that message, so a deployment script refuses to start the server
(docs/server.md, "Sign-in").

Streamlit's own rules apply: the ``[auth]`` section needs ``redirect_uri`` and ``cookie_secret``, and a
provider with ``client_id``, ``client_secret`` and ``server_metadata_url``, either directly in ``[auth]`` (the
default provider, ``st.login()``) or in named subsections ``[auth.<name>]`` (``st.login("<name>")``); Authlib
must be installed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from ui.widgets import md_escape

from fairness_core.services.identity import LOCAL_ISSUER, LOCAL_USER, identity

#: The environment variable that makes sign-in required (read on every page run, and by ``--check``).
REQUIRE_ENV = "FAIRNESS_REQUIRE_LOGIN"
#: Where :func:`require_user` keeps the signed-in user's identity, and what is shown for it, for the rest of the
#: session's code.
USER_KEY, DISPLAY_KEY = "user", "user-display"
#: The keys every provider needs (Streamlit's ``validate_auth_credentials``), and those ``[auth]`` itself needs.
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
SHARED_KEYS = ("redirect_uri", "cookie_secret")
#: Subsections of ``[auth]`` that are settings, not providers.
_NOT_PROVIDERS = {"client_kwargs"}
_ON, _OFF = {"1", "true", "yes", "on"}, {"", "0", "false", "no", "off"}


class NotSignedIn(PermissionError):
    """Sign-in is configured (or required) and this session has no signed-in user."""


def _secrets() -> tuple[Mapping[str, Any] | None, str | None]:
    """The ``[auth]`` section (None when there is none) and a problem reading the secrets (None when none).

    ``st.secrets`` is probed with ``load_if_toml_exists``, which neither raises nor writes anything when there is
    no secrets file; a file that exists but cannot be read is a problem, never "no sign-in" (a typo must not
    turn a team server into one shared local user)."""
    secrets = st.secrets
    try:
        if not secrets.load_if_toml_exists():
            unreadable = [p for p in _secrets_paths() if Path(p).is_file()]
            if unreadable:
                return None, (f"the secrets file {unreadable[0]} could not be read (is it valid TOML?), so whether "
                              "sign-in is configured is unknown")
            return None, None
        section = secrets.get("auth")
    except Exception as e:  # noqa: BLE001 - any failure to read the secrets is said, not raised
        return None, f"the secrets could not be read ({type(e).__name__}: {e})"
    if section is None:
        return None, None
    if not isinstance(section, Mapping):
        return None, "`auth` in the secrets is a value, not a section `[auth]`"
    return section, None


def _secrets_paths() -> list[str]:
    try:
        from streamlit import config

        return [str(p) for p in config.get_option("secrets.files")]
    except Exception:  # noqa: BLE001 - no config: nothing to name
        return []


def providers(section: Mapping[str, Any]) -> list[str | None]:
    """The providers ``section`` (an ``[auth]`` section) configures, in order: None for the default one (its
    keys directly in ``[auth]``), else each ``[auth.<name>]`` that has every key in :data:`PROVIDER_KEYS`."""
    found: list[str | None] = [None] if all(section.get(k) for k in PROVIDER_KEYS) else []
    for name, value in section.items():
        if name not in _NOT_PROVIDERS and isinstance(value, Mapping) and all(value.get(k) for k in PROVIDER_KEYS):
            found.append(str(name))
    return found


def auth_problem() -> str | None:
    """What keeps the configured sign-in from working, in words (None when ``[auth]`` is complete or absent)."""
    section, problem = _secrets()
    if problem or section is None:
        return problem
    missing = [k for k in SHARED_KEYS if not section.get(k)]
    if missing:
        return f"`[auth]` in the secrets lacks {', '.join(f'`{k}`' for k in missing)}"
    named = providers(section)
    if not named:
        return ("`[auth]` in the secrets names no complete provider: it needs " +
                ", ".join(f"`{k}`" for k in PROVIDER_KEYS) + " in `[auth]` itself or in a section `[auth.<name>]`")
    bad = [n for n in named if n and "_" in n]
    if bad:
        return f"Streamlit refuses provider names with an underscore: `[auth.{bad[0]}]`"
    from streamlit.auth_util import is_authlib_installed

    if not is_authlib_installed():
        return "sign-in needs the Authlib package (>= 1.3.2): `pip install -r requirements.txt`"
    return None


def login_configured() -> bool:
    """Whether ``[auth]`` configures sign-in completely (see :func:`auth_problem` for what may be missing)."""
    section, problem = _secrets()
    return section is not None and problem is None and auth_problem() is None


def login_required(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``FAIRNESS_REQUIRE_LOGIN`` asks for sign-in (1, true, yes, on; unset, 0, false, no, off do not).
    Any other value raises ValueError naming the variable."""
    raw = (os.environ if environ is None else environ).get(REQUIRE_ENV, "")
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ValueError(f"{REQUIRE_ENV}={raw!r} is neither 1 nor 0")


def startup_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """Why this server must not serve anyone, in words, or None: ``FAIRNESS_REQUIRE_LOGIN`` unreadable, sign-in
    required without a complete ``[auth]``, or an ``[auth]`` (or secrets file) that does not work."""
    try:
        required = login_required(environ)
    except ValueError as e:
        return f"{e}: set it to 1 to require sign-in, or unset it."
    problem = auth_problem()
    if problem:
        return f"Sign-in is misconfigured: {problem}. See .streamlit/secrets.toml.example and docs/server.md."
    if required and not login_configured():
        return (f"{REQUIRE_ENV}=1 requires sign-in, and no `[auth]` section is configured: add one to "
                "`.streamlit/secrets.toml` (`redirect_uri`, `cookie_secret`, and the provider's `client_id`, "
                "`client_secret` and `server_metadata_url`; see .streamlit/secrets.toml.example and "
                "docs/server.md), or unset the variable to run as a single local user.")
    return None


def user_id(claims: Mapping[str, Any]) -> str | None:
    """The signed-in user's identity from the provider's ID-token claims: ``identity(iss, sub)`` — the issuer the
    token's signature was checked against and the subject it names, both exactly as given. None when either is
    missing or unusable (blank, hidden characters, spaces around it), or when ``iss`` is the local users' issuer
    ("local": no provider may speak for them)."""
    issuer, subject = claims.get("iss"), claims.get("sub")
    if isinstance(subject, int) and not isinstance(subject, bool):
        subject = str(subject)
    if not isinstance(issuer, str) or not isinstance(subject, str) or issuer == LOCAL_ISSUER:
        return None
    try:
        return identity(issuer, subject)
    except ValueError:
        return None


def verified_email(claims: Mapping[str, Any]) -> str | None:
    """The e-mail address (trimmed, lower case) unless the provider says it is unverified (``email_verified``
    false: anyone could claim it); None without one. Shown, and found by when sharing; never an identity."""
    email = claims.get("email")
    if isinstance(email, str) and email.strip() and claims.get("email_verified") is not False:
        return email.strip().lower()
    return None


def display_name(claims: Mapping[str, Any]) -> str | None:
    """What is shown for the signed-in user: the verified e-mail, else the name, else the subject."""
    name = claims.get("name")
    sub = claims.get("sub")
    return verified_email(claims) or (name.strip() if isinstance(name, str) and name.strip() else None) or \
        (str(sub).strip() if sub is not None and str(sub).strip() else None)


def _claims() -> dict[str, Any]:
    """``st.user``'s claims when this session has signed in, else an empty dict."""
    claims = st.user.to_dict()
    return claims if claims.get("is_logged_in") is True else {}


def current_user() -> str:
    """The user this session acts for: :data:`LOCAL_USER` when sign-in is not configured, else the signed-in
    user's :func:`user_id`. Raises :class:`NotSignedIn` when sign-in is configured or required and this session
    has not signed in (pages never get here: :func:`require_user` shows the sign-in screen first)."""
    if login_configured():
        ident = user_id(_claims())
        if ident is None:
            raise NotSignedIn("this session has not signed in")
        return ident
    problem = startup_problem()
    if problem is not None:
        raise NotSignedIn(problem)
    return LOCAL_USER


def require_user() -> str:
    """Every page's gate (``ui.state.page_setup`` calls it first): the user this session acts for, kept in
    ``st.session_state["user"]``. A server that must not serve (:func:`startup_problem`) shows the reason and
    stops; with sign-in configured, a session that has not signed in gets the sign-in screen and stops."""
    problem = startup_problem()
    if problem:
        st.session_state.pop(USER_KEY, None)
        st.error(f"**This server refuses to show anything.** {problem}", icon=":material/lock:")
        st.stop()
    if not login_configured():
        st.session_state[USER_KEY] = LOCAL_USER
        st.session_state.pop(DISPLAY_KEY, None)
        return LOCAL_USER
    claims = _claims()
    ident = user_id(claims)
    if ident is None:
        st.session_state.pop(USER_KEY, None)
        st.session_state.pop(DISPLAY_KEY, None)
        _sign_in_screen(signed_in_without_id=bool(claims))
        st.stop()
    st.session_state[USER_KEY] = ident
    name = claims.get("name")
    st.session_state[DISPLAY_KEY] = (verified_email(claims), name.strip() if isinstance(name, str) and name.strip()
                                     else display_name(claims))
    return ident


def _sign_in_screen(signed_in_without_id: bool = False) -> None:
    st.title("Fairness audit workbench")
    if signed_in_without_id:
        st.error("The sign-in provider's token named no issuer (`iss`) and subject (`sub`) the workbench can use "
                 "for this account, so it cannot tell whose work is whose. Sign out and use another account, or "
                 "ask the operator to check the provider (an OpenID Connect ID token carries both).",
                 icon=":material/error:")
        if st.button("Sign out", key="auth-sign-out-screen"):
            st.logout()
        return
    st.markdown("This workbench is shared by a team: **sign in** to see your own saved audits and work.")
    section, _ = _secrets()
    for name in providers(section or {}):
        label = "Sign in" if name is None else f"Sign in with {name}"
        if st.button(label, key=f"auth-sign-in-{name or 'default'}", type="primary", icon=":material/login:"):
            st.login(name)


def user_sidebar() -> None:
    """Who this session is, in the sidebar: the signed-in user with a "Sign out" button, or the single local
    user when no sign-in is configured."""
    if not login_configured():
        st.caption(":material/person: Single local user (no sign-in configured)")
        return
    claims = _claims()
    ident = user_id(claims)
    if ident is None:
        return
    name, email = claims.get("name"), verified_email(claims)
    if isinstance(name, str) and name.strip():
        shown = f"**{md_escape(name)}**" + (f" ({md_escape(email)})" if email else "")
    else:
        shown = f"**{md_escape(display_name(claims) or '')}**"
    st.caption(f":material/person: Signed in as {shown}", help=f"Your identity here: {md_escape(ident)} (the "
               "provider's issuer and your subject at it).")
    if st.button("Sign out", key="auth-sign-out", icon=":material/logout:"):
        st.logout()


def main(argv: list[str] | None = None) -> int:
    """``python -m ui.auth --check``: exit 1 with the reason when this server must not start (run it before
    ``streamlit run app.py``, in the same directory and environment), else print who may use it and exit 0."""
    parser = argparse.ArgumentParser(prog="python -m ui.auth", description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="check the sign-in configuration and exit")
    args = parser.parse_args(argv)
    if not args.check:
        parser.print_help()
        return 2
    problem = startup_problem()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    if login_configured():
        names = [n or "default" for n in providers(_secrets()[0] or {})]
        print(f"Sign-in configured ({', '.join(names)} provider); every page asks for sign-in.")
    else:
        print("No sign-in configured: the app runs as a single local user.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
