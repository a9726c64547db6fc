#!/usr/bin/env python3
"""Seed fuzz/corpus/<target>/ from the shared vectors (tests/vectors/**) and hand-picked edge
cases. Files are named by the SHA-1 of their content, as libFuzzer names them, so seeding twice
adds nothing. Run from anywhere; then minimise with `cargo fuzz cmin` (see README.md).

    python3 fuzz/seed_corpus.py
"""

import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
VECTORS = ROOT / "tests" / "vectors"
CORPUS = ROOT / "fuzz" / "corpus"


def load(path):
    return json.loads((VECTORS / path).read_text(encoding="utf-8"))


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write(target, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


HEX_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
CONTACT = "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11"


def token():
    for case in load("tokens.json")["cases"]:
        write("token", compact(case["input"]))
        if isinstance(case["input"], str):
            write("token", case["input"])
    for raw in ["", " ", "\x0b123456", "\u00a0123456", "123\u00a0456", "１２３４５６", "+12345", "123  456",
                "123--456", "12-3456", " 123456 7", "1" * 64, " " * 70 + "123456", "123456" + " " * 59,
                "-0", "1e400", "123456.0", "1000000", "-1", "18446744073709551616", "0.5e1",
                '"\\u0031\\u0032\\u0033\\u0034\\u0035\\u0036"', '"\\ud800"', "[123456]", '{"token":1}', "true"]:
        write("token", raw)


def widget_options():
    for name in ["widget/validate.json", "widget/build.json", "widget/snippet.json", "widget/sign.json"]:
        for case in load(name)["cases"]:
            if isinstance(case.get("options"), dict):
                write("widget_options", compact(case["options"]))
    addresses = {
        "btc": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        "ltc": "ltc1qx88q7zjd74lxwgkjmmwlqv5pd3vujuehexfttt",
        "eth": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        "usdc": "0xdAC17F958D2ee523a2206206994597C13D831ec7",
        "usdt": "0xdAC17F958D2ee523a2206206994597C13D831ec7",
        "dai": "0x0000000000000000000000000000000000000000",
        "sol": "So11111111111111111111111111111111111111112",
    }
    every = {
        "clientName": "Acme </script><!-- \"&' é\u2028",
        "environment": "production",
        "publicKey": "pk_production_9Zx4LmQ2wErTy7UiOp3AsDfG",
        "tokens": ",".join(addresses),
        "homeScreenMessage": "Buy <b>now</b> & save",
        "receiveAddress": addresses,
        "targetContainerId": "w",
        "darkTheme": True,
        "currencies": "gbp",
        "amount": "5.00",
        "showRampartLogo": False,
    }
    for options in [
        every,
        {**every, "apiKey": "0b7f1e2c-4d5a-4e6f-8a9b-1c2d3e4f5a6b", "publicKey": None},
        {"environment": "sandbox", "apiKey": "0b7f1e2c-4d5a-4e6f-8a9b-1c2d3e4f5a6b", "targetContainerId": "x"},
        {"environment": "sandbox", "publicKey": "sk_sandbox_9fJ2kLmN3pQrS7tUvWxYz", "clientName": "sk_production_ab"},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "amount": "4.99", "currencies": "eur"},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "amount": 50},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "tokens": "btc,BTC, eth,,doge,btc"},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "receiveAddress": {"BTC": "x", "doge": 1}},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "darktheme": True, "showCarbonLogo": True},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "clientName": "é" * 120},
        {f"option{i}": i for i in range(70)},
        [], "options", None, 1.5,
    ]:
        write("widget_options", compact(options))


def widget_url():
    for name, keys in [("widget/parse.json", ["url", "canonical"]), ("widget/build.json", ["url"]),
                       ("widget/validate.json", ["url"]), ("widget/sign.json", ["url"])]:
        for case in load(name)["cases"]:
            for key in keys:
                if isinstance(case.get(key), str):
                    write("widget_url", case[key])
    root = "https://widget-sandbox.rampart.network/"
    for url in [root, root + "?", root + "#", root + "?a=%FF", root + "?clientName=%E2%82", root + "?%zz=1",
                root + "?tokens=btc&tokens=eth&tokens=", root + "?receiveAddressBTC=x&receiveAddressbtc=y",
                root + "?publicKey=pk_sandbox_x&publicKey=pk_sandbox_y&timestamp=1&signature=00",
                root + "?environment=production&darkTheme=TRUE&showCarbonLogo=false",
                root + "?clientName=a+b%20c&amount=5#frag", "https://widget.rampart.network?x", "http://x/",
                "https://widget.rampart.network:443/?publicKey=pk_production_x", "not a url", ""]:
        write("widget_url", url)


def address():
    for path in sorted((VECTORS / "addresses").glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            write("address", case["address"])
    for raw in ["", "0x", "bc1", "1" * 129, "0X52908400098527886E0F7030069857D2E4169EE7"]:
        write("address", raw)


def key_file():
    other = "ff" * 32
    for text in [
        f"1:{HEX_KEY}\n",
        f"{HEX_KEY}\n",
        f"# master keys\n\n1:{HEX_KEY}\r\n2:{other}\n",
        f" 7 : {HEX_KEY.upper()} \n",
        f"1:{HEX_KEY}\n1:{other}\n",
        f"1:{HEX_KEY[:-1]}\n",
        f"1:{HEX_KEY}0\n",
        f"1:{HEX_KEY[:-1]}g\n",
        f"4294967296:{HEX_KEY}\n",
        f"-1:{HEX_KEY}\n",
        f"+1:{HEX_KEY}\n",
        f"x:{HEX_KEY}\n",
        f"1:2:{HEX_KEY}\n",
        "# only a comment\n",
        "",
        "\n\n\n",
        f"1:{HEX_KEY}\n3\n",
        f"\u00a01:{HEX_KEY}\n",
    ]:
        write("key_file", text)


def http_body():
    for body in [
        {"contactId": CONTACT, "token": "123456"},
        {"contactId": CONTACT, "token": 123456},
        {"contactId": CONTACT.upper(), "token": None},
        {"contactId": 5, "token": [1]},
        {"widgetText": "Back to the shop"},
        {"widgetButtonURL": "https://shop.example/done"},
        {"environment": "sandbox", "publicKey": "pk_sandbox_x", "receiveAddress": {"btc": "x"}, "tokens": "btc"},
    ]:
        write("http_body", compact(body))
    for raw in [
        '{"token":"111111","token":"222222"}',
        '{"receiveAddress":{"btc":"a","btc":"b"}}',
        '{"a":[{"x":1,"x":2}]}',
        '{"token":1e400,"contactId":"\\ud800","n":-1e999,"ok":"\\ud83d\\ude00"}',
        '{"\\ud800":1}',
        '{"a":' + "[" * 31 + "]" * 31 + "}",
        '{"a":' + "[" * 32 + "]" * 32 + "}",
        "{} {}", "[]", "1e400", "", " \n", "{", b'{"a":"\xff"}',
        "contactId=" + CONTACT + "&twoFactorIssuer=Acme+Inc",
        "contactId=a&contactId=b",
        "twoFactorIssuer=Acme%FF&contactId=%ED%A0%80",
        "target=url&sign=true&=&&flag",
    ]:
        write("http_body", raw)


if __name__ == "__main__":
    for seed in [token, widget_options, widget_url, address, key_file, http_body]:
        seed()
    for directory in sorted(CORPUS.iterdir()):
        print(f"{directory.name}: {sum(1 for _ in directory.iterdir())} files")
