"""Browser test of sign-in: a real OpenID Connect provider (oidc-provider-mock) on 127.0.0.1, a Streamlit server
whose ``[auth]`` points at it, and Debian's Chromium driven by Playwright. Two users sign in, each in a browser of
their own, and each page names its own user; signing out brings the sign-in screen back.

The provider runs in a thread of this process at a free port; the server reads a secrets file written for the
test (``--secrets.files``), so the repository's own ``.streamlit`` is never touched. Chromium may reach only
127.0.0.1 (the mock's pages link a stylesheet on a CDN: that request is refused, nothing is downloaded).
Skipped only outside CI when Chromium is absent.
"""

import os
import shutil
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import browser_helpers
from browser_helpers import CONTEXT, IDLE, app_server, free_port

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium")
#: Chromium may resolve no host name but 127.0.0.1 (the provider's pages link a stylesheet on a CDN, which is never
#: fetched). A rule of the resolver, not a Playwright route: routing every request through the test process disables
#: the browser's cache, and every page then fetched and compiled the app's scripts anew (measured: the module took
#: 64 CPU-seconds of the machine with a route).
ARGS = [*browser_helpers.ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
USERS = {"alice@example.org": "Alice Analyst", "bob@example.org": "Bob Reviewer"}

# The mock provider (this process) still calls an older Authlib grant API; the server (its own process, whose
# log is checked) does not.
pytestmark = [pytest.mark.filterwarnings("ignore:get_jwt_config.* is deprecated"),
              pytest.mark.browser]   # drives the app in Chromium: run first (tests/conftest.py)

if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("Debian chromium not installed (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def provider():
    """The OpenID provider's address; its users' claims are an e-mail address and a name."""
    from authlib.deprecate import AuthlibDeprecationWarning   # it makes its warnings "always" when imported

    with warnings.catch_warnings():   # the mock's import of Authlib's older JOSE API (this process only)
        warnings.simplefilter("ignore", AuthlibDeprecationWarning)
        import oidc_provider_mock
    import werkzeug.serving

    users = [oidc_provider_mock.User(sub=f"sub-{email.split('@')[0]}", claims={"email": email, "name": name})
             for email, name in USERS.items()]
    server = werkzeug.serving.make_server("127.0.0.1", 0, oidc_provider_mock.app(require_nonce=True,
                                                                                  user_claims=users), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(5)
    server.server_close()


#: The audit store the test server uses (set by :func:`server`), for audits saved before the browsers come.
STORE: dict[str, str] = {}


@pytest.fixture(scope="module")
def server(provider, tmp_path_factory):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    data = tmp_path_factory.mktemp("auth")
    secrets = data / "secrets.toml"
    secrets.write_text(f"""[auth]
redirect_uri = "{url}/oauth2callback"
cookie_secret = "a-cookie-secret-for-the-browser-test-only"
client_id = "fairness-workbench"
client_secret = "any-secret-the-mock-accepts"
server_metadata_url = "{provider}/.well-known/openid-configuration"
""")
    STORE["url"] = f"sqlite:///{data / 'audits.db'}"
    env = {"FAIRNESS_DATA_DIR": str(data), "FAIRNESS_AUDIT_STORE": STORE["url"], "FAIRNESS_REQUIRE_LOGIN": "1"}
    with app_server(data / "streamlit.log", env, port, ("--secrets.files", str(secrets)),
                    forbidden=("Traceback", "Error", "Warning")) as served:
        yield served


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@contextmanager
def own_browser(chromium):
    """A browser context of its own (its own cookies: another person's browser) that reaches only 127.0.0.1
    (``ARGS``); fails if a page threw a JavaScript error."""
    context = chromium.new_context(**CONTEXT)
    answered: list[str] = []   # every request that got an answer: none may be from elsewhere
    context.on("requestfinished", lambda request: answered.append(request.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, errors
    assert answered and all(urlsplit(url).hostname == "127.0.0.1" for url in answered), \
        [url for url in answered if urlsplit(url).hostname != "127.0.0.1"]


def sidebar_text(page) -> str:  # type: ignore[no-untyped-def]
    return page.locator('[data-testid="stSidebar"]').inner_text().replace("\u2060", "")


def sign_in(page, url: str, provider: str, email: str) -> None:  # type: ignore[no-untyped-def]
    """Open the app, press "Sign in", pick the user on the provider's form, and come back signed in."""
    page.goto(url)
    page.get_by_role("button", name="Sign in").click(timeout=60000)
    page.wait_for_url(f"{provider}/**", timeout=30000)
    page.get_by_placeholder("sub").fill(f"sub-{email.split('@')[0]}")
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/**", timeout=30000)
    page.locator('[data-testid="stSidebar"]').get_by_text("Signed in as").wait_for(timeout=60000)


def test_two_users_sign_in_and_each_sees_their_own_name(server, provider, chromium) -> None:
    with own_browser(chromium) as alice, own_browser(chromium) as bob:
        for page in (alice, bob):   # before signing in: the sign-in screen and nothing of the data
            page.goto(server)
            page.get_by_role("button", name="Sign in").wait_for(timeout=60000)
            assert "COMPAS" not in page.locator("body").inner_text()
            assert not page.locator('[data-testid="stSidebar"]').count() or "Signed in" not in sidebar_text(page)
        sign_in(alice, server, provider, "alice@example.org")
        sign_in(bob, server, provider, "bob@example.org")
        for page, me, other in ((alice, "alice@example.org", "bob@example.org"),
                                (bob, "bob@example.org", "alice@example.org")):
            text = sidebar_text(page)
            assert f"Signed in as {USERS[me]} ({me})" in text, text
            assert other not in text and USERS[other] not in text
            assert "Single local user" not in text
        # a reload (a new Streamlit session) keeps the sign-in: the identity cookie, not the session
        alice.reload()
        alice.locator('[data-testid="stSidebar"]').get_by_text("Signed in as").wait_for(timeout=60000)
        assert "alice@example.org" in sidebar_text(alice)
        # signing out ends the session at the provider and comes back to the sign-in screen
        bob.locator('[data-testid="stSidebar"]').get_by_role("button", name="Sign out").click()
        bob.wait_for_url(f"{provider}/**", timeout=30000)
        bob.get_by_role("button", name="End session").click()
        bob.wait_for_url(f"{server}/**", timeout=30000)
        bob.get_by_role("button", name="Sign in").wait_for(timeout=60000)
        assert "bob@example.org" not in bob.locator("body").inner_text()
        assert "alice@example.org" in sidebar_text(alice)   # the other browser stays signed in


def _identity(provider: str, email: str) -> str:
    """The workbench's identity of the mock provider's user with this e-mail: (its issuer, their sub)."""
    import json
    import urllib.request

    from fairness_core.store import identity

    with urllib.request.urlopen(f"{provider}/.well-known/openid-configuration", timeout=10) as answer:
        issuer = json.load(answer)["issuer"]
    return identity(issuer, f"sub-{email.split('@')[0]}")


def _main_text(page) -> str:  # type: ignore[no-untyped-def]
    page.wait_for_function(IDLE, timeout=60000)
    return page.locator('[data-testid="stMain"]').inner_text().replace("\u2060", "")


def test_two_signed_in_users_cannot_reach_each_others_private_audits(server, provider, chromium) -> None:
    """Alice's private audit: Bob's list does not show it and its id opens nothing for him (the same words as an id
    that never existed); a link Alice makes opens it read-only in Bob's browser until she revokes it."""
    from fairness_core import datasets
    from fairness_core.store import AuditStore

    store = AuditStore(STORE["url"])
    alice_id, bob_id = _identity(provider, "alice@example.org"), _identity(provider, "bob@example.org")
    private = store.save(datasets.load_demo("ricci_b"), "alice's private audit", user=alice_id)
    with own_browser(chromium) as alice, own_browser(chromium) as bob:
        sign_in(alice, server, provider, "alice@example.org")
        sign_in(bob, server, provider, "bob@example.org")
        alice.goto(f"{server}/Saved_Audits")
        alice.get_by_text("Your saved audits").wait_for(timeout=60000)
        alice.get_by_text("Delete…").wait_for(timeout=60000)      # hers: she may delete it
        bob.goto(f"{server}/Saved_Audits")
        bob.get_by_text("You have no saved audit yet").wait_for(timeout=60000)
        bob.goto(f"{server}/Saved_Audits?audit={private}")
        bob.get_by_text("This address opens no saved audit").wait_for(timeout=60000)
        refused = _main_text(bob)
        assert "alice's private audit" not in refused and "Delete" not in refused
        bob.goto(f"{server}/Saved_Audits?audit={'A' * 22}")
        bob.get_by_text("This address opens no saved audit").wait_for(timeout=60000)
        assert _main_text(bob).replace("A" * 22, "ID") == refused.replace(private, "ID")
        token = store.link(private, user=alice_id)
        bob.goto(f"{server}/Saved_Audits?link={token}")
        bob.get_by_text("Opened from a link").wait_for(timeout=60000)
        opened = _main_text(bob)
        assert "alice's private audit" in opened and "Make a link" not in opened and "Share" not in opened
        store.revoke_link(token, user=alice_id)
        bob.goto(f"{server}/Saved_Audits?link={token}")
        bob.get_by_text("This address opens no saved audit").wait_for(timeout=60000)
        events = store.events(private)
        assert ((events["user"] == bob_id) & ~events["allowed"] & (events["action"] == "load")).any()
        assert ((events["user"] == bob_id) & events["allowed"] & (events["action"] == "open_link")).any()
        assert store.display_names([alice_id, bob_id]) == {alice_id: "alice@example.org", bob_id: "bob@example.org"}
    store.close()
