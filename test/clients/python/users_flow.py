"""The users area driven by python-gitlab 3.12 (Debian's python3-gitlab), unchanged.

Usage: /usr/bin/python3 test/clients/python/users_flow.py <url> <admin token>
Environment: SSH_PUBLIC_KEY, an OpenSSH public key line to add to a user.

Every check raises on a mismatch, so any failure exits non-zero with a traceback; on success the
observed values are printed as one JSON object on stdout for the calling test to assert on.
Warnings from the client (a Link URL on another host, a truncated list) are errors too.
"""

import base64
import hashlib
import json
import os
import sys
import warnings

import gitlab

# A warning from python-gitlab means the server said something a client would trip on.
warnings.simplefilter("error", UserWarning)


def check(name, actual, expected):
    if actual != expected:
        raise AssertionError(f"{name}: expected {expected!r}, got {actual!r}")


def ensure(name, condition):
    if not condition:
        raise AssertionError(f"{name}: check failed")


def expect_error(name, error_cls, code, fn):
    try:
        fn()
    except error_cls as err:
        check(f"{name} status", err.response_code, code)
        return str(err.error_message)
    raise AssertionError(f"{name}: expected {error_cls.__name__} {code}, nothing raised")


def fingerprints(line):
    blob = base64.b64decode(line.split()[1])
    md5 = hashlib.md5(blob).hexdigest()
    sha256 = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return ":".join(md5[i:i + 2] for i in range(0, len(md5), 2)), f"SHA256:{sha256}"


def main():
    url, token = sys.argv[1], sys.argv[2]
    ssh_key = os.environ["SSH_PUBLIC_KEY"]
    check("python-gitlab version", gitlab.__version__, "3.12.0")
    out = {"version": gitlab.__version__}

    gl = gitlab.Gitlab(url, private_token=token)
    gl.auth()
    check("gl.user.id", gl.user.id, 1)
    out["me"] = {"id": gl.user.id, "username": gl.user.username}

    # Create more than four pages of users at per_page=5.
    created = []
    for i in range(22):
        user = gl.users.create({
            "email": f"py.user{i:02d}@example.com",
            "username": f"py_user_{i:02d}",
            "name": f"Py User {i:02d}",
            "password": "a-long-enough-password-42",
            "skip_confirmation": True,
        })
        check("created username", user.username, f"py_user_{i:02d}")
        check("created state", user.state, "active")
        created.append(user.id)
    out["created"] = created

    # get_all follows Link rel="next" to the end.
    everyone = gl.users.list(get_all=True, per_page=5)
    ids = [u.id for u in everyone]
    ensure("every created user listed", set(created) <= set(ids))
    check("no duplicates", len(ids), len(set(ids)))
    check("newest first", ids, sorted(ids, reverse=True))
    out["listed_all"] = ids

    # iterator=True reads X-Total and X-Total-Pages, then fetches page after page.
    it = gl.users.list(iterator=True, per_page=5)
    check("iterator len (X-Total)", len(it), len(ids))
    check("iterator total_pages", it.total_pages, (len(ids) + 4) // 5)
    check("iterator per_page", it.per_page, 5)
    check("iterator ids", [u.id for u in it], ids)
    out["iterator"] = {"total": it.total, "total_pages": it.total_pages}

    # The search filter travels in every next link.
    found = gl.users.list(search="py_user_", get_all=True, per_page=5)
    check("search across pages", sorted(u.id for u in found), sorted(created))

    # A bare list() returns one page and warns that more exist (X-Total > X-Per-Page).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first_page = gl.users.list(per_page=5)
    check("bare list size", len(first_page), 5)
    ensure("bare list warns", any("get_all=True" in str(w.message) for w in caught))
    page2 = gl.users.list(per_page=5, page=2)
    check("page 2", [u.id for u in page2], ids[5:10])

    # Block and unblock return the server's literals: true, null, true, false.
    user = gl.users.get(created[0])
    results = [user.block()]
    check("state after block", user.state, "blocked")
    check("stored state after block", gl.users.get(user.id).state, "blocked")
    results.append(user.block())
    results.append(user.unblock())
    check("state after unblock", user.state, "active")
    results.append(user.unblock())
    check("block/unblock results", results, [True, None, True, False])
    out["block_unblock"] = results

    # An SSH key for the user, listed and found again by fingerprint.
    key = user.keys.create({"title": "py key", "key": ssh_key})
    check("key title", key.title, "py key")
    ensure("key body kept", key.key.startswith(" ".join(ssh_key.split()[:2])))
    keys = user.keys.list()
    ensure("key listed", key in keys)
    check("key count", len(keys), 1)
    check("key by id", user.keys.get(key.id).title, "py key")
    md5, sha256 = fingerprints(ssh_key)
    check("key by sha256 fingerprint", gl.keys.get(fingerprint=sha256).id, key.id)
    by_md5 = gl.keys.get(fingerprint=md5)
    check("key by md5 fingerprint", by_md5.id, key.id)
    check("key owner", by_md5.user["id"], user.id)
    out["key"] = {"id": key.id, "title": key.title, "md5": md5, "sha256": sha256}

    # Secondary emails: unconfirmed by default, confirmed with skip_confirmation.
    email = user.emails.create({"email": "py.second@example.com"})
    check("email", email.email, "py.second@example.com")
    check("email unconfirmed", email.confirmed_at, None)
    confirmed = user.emails.create({"email": "py.third@example.com", "skip_confirmation": True})
    ensure("email confirmed", confirmed.confirmed_at is not None)
    emails = user.emails.list()
    ensure("email listed", email in emails and confirmed in emails)
    check("emails listed", sorted(e.email for e in emails), ["py.second@example.com", "py.third@example.com"])
    message = expect_error("taken email", gitlab.exceptions.GitlabCreateError, 400,
                           lambda: user.emails.create({"email": "py.third@example.com"}))
    ensure("taken email message", "taken" in message)
    out["emails"] = sorted(e.email for e in emails)

    # sudo is a query parameter here: the admin token acting as the user.
    me_as_user = gl.http_get("/user", sudo=user.username)
    check("sudo by username", me_as_user["id"], user.id)
    check("sudo by id", gl.http_get("/user", sudo=user.id)["username"], user.username)
    sudo_emails = gl.user.emails.list(sudo=user.id)
    check("sudo /user/emails", sorted(e.email for e in sudo_emails), out["emails"])
    sudo_keys = gl.user.keys.list(sudo=user.username)
    check("sudo /user/keys", [k.id for k in sudo_keys], [key.id])
    out["sudo"] = {"id": me_as_user["id"], "emails": len(sudo_emails), "keys": len(sudo_keys)}

    # An impersonation token works as the user until revoked.
    imp = user.impersonationtokens.create({"name": "py impersonation", "scopes": ["api"]})
    check("impersonation flag", imp.impersonation, True)
    check("impersonation active", imp.active, True)
    ensure("impersonation secret", isinstance(imp.token, str) and len(imp.token) > 0)
    as_user = gitlab.Gitlab(url, private_token=imp.token)
    as_user.auth()
    check("impersonated user", as_user.user.id, user.id)
    check("active tokens", [x.id for x in user.impersonationtokens.list(state="active")], [imp.id])
    check("token by id", user.impersonationtokens.get(imp.id).name, "py impersonation")
    user.impersonationtokens.delete(imp.id)
    check("inactive tokens", [x.id for x in user.impersonationtokens.list(state="inactive")], [imp.id])
    expect_error("revoked token", gitlab.exceptions.GitlabAuthenticationError, 401, as_user.auth)
    out["impersonation"] = {"id": imp.id, "user_id": imp.user_id}

    # Deleting users: by object and by id.
    doomed = gl.users.get(created[1])
    doomed.delete()
    gl.users.delete(created[2])
    for gone in (created[1], created[2]):
        expect_error("deleted user", gitlab.exceptions.GitlabGetError, 404, lambda: gl.users.get(gone))
    out["deleted"] = [created[1], created[2]]

    left = [u.id for u in gl.users.list(search="py_user_", get_all=True, per_page=5)]
    check("users left", sorted(left), sorted(set(created) - {created[1], created[2]}))
    out["left"] = len(left)

    print(json.dumps(out))


if __name__ == "__main__":
    main()
