"""Schemathesis hooks for the Rampart example server's OpenAPI document.

The document names, with a `format`, the widget-option rules JSON Schema cannot state (a coin
list without duplicates, an address with its checksum). These hooks give schemathesis a
generator for each such format, built from the running server's own document (the coins and
their chains) and from the shared address vectors in tests/vectors/addresses (valid entries
only), so positive-data acceptance tests values the server must accept. A body hook keeps the
one rule stated in words (a receive address only for a coin listed in `tokens`).
"""

import json
import os
import pathlib
import urllib.request

import schemathesis
from hypothesis import strategies as st

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = os.environ["RAMPART_API"]

with urllib.request.urlopen(f"{API}/openapi.json") as response:
    DOCUMENT = json.load(response)

_options = DOCUMENT["paths"]["/v1/widget/url"]["post"]["requestBody"]["content"]["application/json"]["schema"]
_addresses = _options["properties"]["receiveAddress"]["properties"]
COINS = list(_addresses)
SANDBOX = _options["properties"]["environment"]["enum"] == ["sandbox"]


def _valid_addresses(chain):
    found = []
    for path in sorted((ROOT / "tests" / "vectors" / "addresses").glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            if case.get("chain") == chain and case.get("valid") and case.get("allow_testnet") == SANDBOX:
                found.append(case["address"])
    if not found:
        raise RuntimeError(f"no valid {chain} address in tests/vectors/addresses")
    return sorted(set(found))


for chain in sorted({schema["format"] for schema in _addresses.values()}):
    name = chain.removeprefix("rampart-").removesuffix("-address")
    schemathesis.openapi.format(chain, st.sampled_from(_valid_addresses(name)))

schemathesis.openapi.format(
    "rampart-coin-list", st.lists(st.sampled_from(COINS), min_size=1, unique=True).map(",".join)
)


@schemathesis.hook
def map_body(ctx, body):
    """Keep the one cross-field rule the document states in words (`receiveAddress`'s
    description): a receive address only for a coin listed in `tokens`. A generated body that
    gives both gets the receive-address coins added to `tokens`; every other body is sent as
    generated."""
    if isinstance(body, dict) and isinstance(body.get("tokens"), str) and isinstance(body.get("receiveAddress"), dict):
        listed = body["tokens"].split(",")
        body["tokens"] = ",".join(listed + [coin for coin in body["receiveAddress"] if coin not in listed])
    return body


# Origins a partner registers (`rampart-origin`): canonical ones, as a browser serialises them,
# https only in production.
_label = st.from_regex(r"[a-z][a-z0-9]{0,15}", fullmatch=True)
_host = st.lists(_label, min_size=1, max_size=4).map(".".join)
_scheme = st.just("https") if not SANDBOX else st.sampled_from(["http", "https"])
_port = st.one_of(st.just(""), st.integers(min_value=1000, max_value=65535).map(lambda p: f":{p}"))
schemathesis.openapi.format("rampart-origin", st.builds(lambda s, h, p: f"{s}://{h}{p}", _scheme, _host, _port))


# Webhook endpoint URLs (`rampart-webhook-url`): https to a public address. IPv4 literals of a
# global range, so the server's resolution at save needs no DNS and never meets a private one.
_octet = st.integers(min_value=1, max_value=254)
_path = st.from_regex(r"/[a-z0-9/_-]{0,40}", fullmatch=True)
schemathesis.openapi.format(
    "rampart-webhook-url", st.builds(lambda c, d, p: f"https://93.184.{c}.{d}{p}", _octet, _octet, _path)
)
