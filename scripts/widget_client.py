"""A minimal client of the example server's widget session routes, for scripts (the API test,
the order bench): sign in to a sandbox partner's widget as an email, with the code the sandbox
answers, and place orders.

    python3 scripts/widget_client.py BASE_URL PUBLIC_KEY EMAIL...   # one signed-in token per line
"""

import json
import sys
import urllib.request


def call(base, path, body, token=None):
    """POST `body` as JSON to `base + path`; the parsed answer (an HTTP error raises)."""
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def signed_in_session(base, public_key, email):
    """A new widget session of the partner, signed in as `email`: its token."""
    token = call(base, "/v1/widget/session", {"publicKey": public_key})["token"]
    code = call(base, "/v1/widget/session/email", {"email": email}, token)["sandboxCode"]
    call(base, "/v1/widget/session/signin", {"email": email, "code": code}, token)
    return token


def place_order(base, token, order):
    """Buy `order` ({coin, amount, currency, address}) in the session: the order."""
    return call(base, "/v1/widget/session/orders", order, token)["order"]


if __name__ == "__main__":
    base_url, key = sys.argv[1], sys.argv[2]
    for address in sys.argv[3:]:
        print(signed_in_session(base_url, key, address))
