"""Sign-in (ui.auth): one local user without ``[auth]``, the sign-in screen before any data with it, the
signed-in user named in the sidebar, and a server that refuses to serve when FAIRNESS_REQUIRE_LOGIN=1 lacks it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from fairness_core import store
from fairness_core.services.identity import identity
from ui import auth

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "a-test-cookie-secret-of-32-chars",
        "client_id": "workbench", "client_secret": "not-a-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
ISSUER = "https://accounts.example.org"


def app(page: str | None = None, auth_section: dict | None = None, user: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if auth_section is not None:
        at.secrets["auth"] = auth_section
    if user is not None:
        at.user = user
    if page:
        at.switch_page(page)
    return at.run()


def shown(at: AppTest) -> list[str]:
    """The type of every element on the page, main area and sidebar."""
    return [e.type for e in [*at.main, *at.sidebar] if not isinstance(e, Block)]


def test_local_user_is_the_stores_owner_name() -> None:
    assert auth.LOCAL_USER == "local|local"
    assert getattr(store, "LOCAL_USER", auth.LOCAL_USER) == auth.LOCAL_USER


def test_without_auth_the_app_runs_as_the_single_local_user() -> None:
    at = app()
    assert not at.exception and not at.error
    assert at.session_state["user"] == auth.LOCAL_USER
    assert any("Single local user (no sign-in configured)" in c.value for c in at.sidebar.caption)
    assert not [b for b in at.button if b.label in ("Sign in", "Sign out")]
    assert at.session_state["audit"].total().n == 6172   # the demo, as always


@pytest.mark.parametrize("page", [None, "pages/1_Upload.py", "pages/2_Bias_Audit.py", "pages/8_Saved_Audits.py"])
def test_require_login_without_auth_refuses_every_page(monkeypatch, page) -> None:
    monkeypatch.setenv(auth.REQUIRE_ENV, "1")
    at = app(page)
    assert not at.exception
    assert shown(at) == ["error"], shown(at)
    assert "FAIRNESS\\_REQUIRE\\_LOGIN=1" in at.error[0].value or "FAIRNESS_REQUIRE_LOGIN=1" in at.error[0].value
    assert "[auth]" in at.error[0].value and "secrets.toml" in at.error[0].value
    assert "audit" not in at.session_state and "user" not in at.session_state


def test_require_login_with_auth_asks_for_sign_in(monkeypatch) -> None:
    monkeypatch.setenv(auth.REQUIRE_ENV, "1")
    at = app(auth_section=AUTH, user={"is_logged_in": False})
    assert not at.exception and not at.error
    assert [b.label for b in at.button] == ["Sign in"]


def test_signed_out_sees_the_sign_in_button_and_nothing_of_the_data() -> None:
    for page in (None, "pages/2_Bias_Audit.py"):
        at = app(page, auth_section=AUTH, user={"is_logged_in": False})
        assert not at.exception and not at.error
        assert [b.label for b in at.button] == ["Sign in"]
        assert shown(at) == ["title", "markdown", "button"], shown(at)   # nothing in the sidebar either
        assert "audit" not in at.session_state and "user" not in at.session_state
        assert not any("COMPAS" in m.value for m in [*at.markdown, *at.caption])


def test_sign_in_buttons_call_st_login_with_their_provider(monkeypatch) -> None:
    """Each button starts Streamlit's login for its provider (the whole flow, redirect and cookie, runs in the
    browser test: AppTest's secrets do not reach the ones st.login reads)."""
    calls: list[str | None] = []
    monkeypatch.setattr(st, "login", calls.append)
    at = app(auth_section=AUTH, user={"is_logged_in": False})
    at.button(key="auth-sign-in-default").click().run()
    assert calls == [None]
    provider = {k: AUTH[k] for k in auth.PROVIDER_KEYS}
    section = {"redirect_uri": AUTH["redirect_uri"], "cookie_secret": AUTH["cookie_secret"],
               "google": provider, "microsoft": provider, "client_kwargs": {"prompt": "login"}}
    at = app(auth_section=section, user={"is_logged_in": False})
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in with google", "Sign in with microsoft"]
    at.button(key="auth-sign-in-microsoft").click().run()
    assert calls == [None, "microsoft"]


def test_signed_in_user_is_named_in_the_sidebar_and_kept_in_the_session() -> None:
    at = app(auth_section=AUTH, user={"is_logged_in": True, "email": " Alice@Example.org ", "name": "Alice *A*",
                                      "sub": "1234", "iss": ISSUER})
    assert not at.exception and not at.error
    assert at.session_state["user"] == identity(ISSUER, "1234")           # never the e-mail
    assert at.session_state[auth.DISPLAY_KEY] == ("alice@example.org", "Alice *A*")
    (mine,) = [c.value for c in at.sidebar.caption if "Signed in as" in c.value]
    assert "**Alice \\*A\\***" in mine and "alice@" in mine   # the name escaped: shown as typed, never as markup
    assert at.session_state["audit"].total().n == 6172
    at.sidebar.button(key="auth-sign-out").click().run()
    assert at.user == {"is_logged_in": False}
    at.run()
    assert [b.label for b in at.button] == ["Sign in"] and "user" not in at.session_state


def test_a_user_without_email_is_shown_by_their_subject() -> None:
    at = app("pages/2_Bias_Audit.py", auth_section=AUTH, user={"is_logged_in": True, "sub": "u-42", "iss": ISSUER})
    assert not at.exception and not at.error
    assert at.session_state["user"] == identity(ISSUER, "u-42")
    assert any("Signed in as **u\\-42**" in c.value for c in at.sidebar.caption)


def test_a_token_without_issuer_gets_the_sign_in_screen_never_a_user() -> None:
    for claims in ({"sub": "u-42", "email": "a@example.org"}, {"sub": "u-42", "iss": "local"}):
        at = app(auth_section=AUTH, user={"is_logged_in": True, **claims})
        assert not at.exception and "user" not in at.session_state
        assert "issuer" in at.error[0].value and "audit" not in at.session_state


def test_incomplete_auth_is_an_error_never_a_local_user() -> None:
    section = {k: v for k, v in AUTH.items() if k != "cookie_secret"}
    at = app(auth_section=section, user={"is_logged_in": True, "email": "alice@example.org"})
    assert not at.exception
    assert shown(at) == ["error"]
    assert "cookie\\_secret" in at.error[0].value or "cookie_secret" in at.error[0].value
    assert "audit" not in at.session_state and "user" not in at.session_state


@pytest.mark.parametrize("claims, expected, email", [
    ({"email": " Bob@Example.org ", "sub": "b", "iss": ISSUER}, identity(ISSUER, "b"), "bob@example.org"),
    ({"email": "bob@example.org", "email_verified": True, "sub": "b", "iss": ISSUER}, identity(ISSUER, "b"),
     "bob@example.org"),
    ({"email": "bob@example.org", "email_verified": False, "sub": "b-1", "iss": ISSUER}, identity(ISSUER, "b-1"),
     None),                                                                          # anyone could claim it
    ({"email": "bob@example.org", "sub": "b", "iss": "https://other.example"}, identity("https://other.example", "b"),
     "bob@example.org"),                                                             # the same sub elsewhere
    ({"sub": 12345, "iss": ISSUER}, identity(ISSUER, "12345"), None),
    ({"sub": "x|y", "iss": ISSUER}, identity(ISSUER, "x|y"), None),
    ({"email": "bob@example.org", "sub": "b"}, None, "bob@example.org"),             # no issuer: no identity
    ({"sub": "b", "iss": "local"}, None, None),                                      # no provider speaks for local
    ({"sub": " b ", "iss": ISSUER}, None, None), ({"sub": True, "iss": ISSUER}, None, None),
    ({"email": " ", "sub": " ", "iss": ISSUER}, None, None),
    ({}, None, None),
])
def test_user_id_is_the_issuer_and_subject_never_the_email(claims, expected, email) -> None:
    assert auth.user_id(claims) == expected and auth.verified_email(claims) == email


@pytest.mark.parametrize("value, required", [("1", True), ("true", True), (" ON ", True), ("0", False),
                                             ("", False), ("no", False)])
def test_require_login_values(value, required) -> None:
    assert auth.login_required({auth.REQUIRE_ENV: value}) is required
    assert auth.login_required({}) is False


def test_an_unreadable_require_login_value_is_named() -> None:
    with pytest.raises(ValueError, match="FAIRNESS_REQUIRE_LOGIN='maybe'"):
        auth.login_required({auth.REQUIRE_ENV: "maybe"})
    assert "FAIRNESS_REQUIRE_LOGIN='maybe'" in auth.startup_problem({auth.REQUIRE_ENV: "maybe"})


def _check(cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``python -m ui.auth --check`` run where a server would start: secrets under ``cwd`` (and a home of its own,
    so no developer's ~/.streamlit/secrets.toml is read)."""
    environ = {k: v for k, v in os.environ.items() if k != auth.REQUIRE_ENV}
    environ.update(HOME=str(cwd), PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-m", "ui.auth", "--check"], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=120)


def test_check_refuses_a_required_login_without_auth(tmp_path) -> None:
    ok = _check(tmp_path)
    assert ok.returncode == 0 and "single local user" in ok.stdout and ok.stderr == ""   # no secrets: no noise
    refused = _check(tmp_path, FAIRNESS_REQUIRE_LOGIN="1")
    assert refused.returncode == 1 and "FAIRNESS_REQUIRE_LOGIN=1 requires sign-in" in refused.stderr
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n" + "".join(f'{k} = "{v}"\n' for k, v in AUTH.items()))
    configured = _check(tmp_path, FAIRNESS_REQUIRE_LOGIN="1")
    assert configured.returncode == 0 and "Sign-in configured (default provider)" in configured.stdout
    (tmp_path / ".streamlit" / "secrets.toml").write_text("[auth\nredirect_uri = ")   # a typo: never "no sign-in"
    broken = _check(tmp_path)
    assert broken.returncode == 1 and "could not be read" in broken.stderr


def test_the_example_secrets_configure_sign_in(tmp_path) -> None:
    (tmp_path / ".streamlit").mkdir()
    example = (ROOT / ".streamlit" / "secrets.toml.example").read_text()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(example)
    done = _check(tmp_path, FAIRNESS_REQUIRE_LOGIN="1")
    assert done.returncode == 0, done.stderr
