"""The widget through the binding: the shared vectors of tests/vectors/widget and addresses,
keyword-argument options, and results."""

from __future__ import annotations

from typing import Any, Optional

import pytest

import rampart
from conftest import VECTORS, load_vectors


def config_of(data: dict[str, Any], case: dict[str, Any]) -> Optional[rampart.WidgetConfig]:
    raw = case["config"] if "config" in case else data.get("config")
    return None if raw is None else rampart.WidgetConfig.from_dict(raw)


def check_issues(got: tuple[rampart.Issue, ...], want: list[dict[str, Any]], name: str) -> None:
    assert [(i.code, i.path) for i in got] == [(w["code"], w["path"]) for w in want], name
    for issue, w in zip(got, want):
        for field in ("value", "suggestion"):
            if field in w:
                assert getattr(issue, field) == w[field], (name, field)


def cases(name: str) -> list[Any]:
    data = load_vectors(name)
    return [pytest.param(data, c, id=c["name"]) for c in data["cases"]]


@pytest.mark.parametrize(("data", "case"), cases("widget/validate.json"))
def test_validate_vectors(data, case):
    v = rampart.validate(
        case["options"], target=case["target"], default_environment=case["environment"], config=config_of(data, case)
    )
    check_issues(v.errors, case["errors"], case["name"])
    check_issues(v.warnings, case["warnings"], case["name"])
    assert v.mode.to_dict() == case["mode"]
    assert v.valid == (not case["errors"]) == (v.options is not None) == bool(v)
    if not case["errors"]:
        assert v.url == case["url"]
        assert rampart.build_url(v.options) == case["url"]
        roundtrip(v.options, config_of(data, case))
    else:
        assert v.url is None


def roundtrip(options: rampart.ValidatedOptions, config: Optional[rampart.WidgetConfig]) -> None:
    url = options.url()
    parsed = rampart.parse_url(url, config=config)
    assert parsed.warnings == ()
    assert parsed.options == options.url_options()
    assert parsed.validate().url == url


@pytest.mark.parametrize(("data", "case"), cases("widget/build.json"))
def test_build_vectors(data, case):
    v = rampart.validate(
        case["options"], target=case["target"], default_environment=case["environment"], config=config_of(data, case)
    )
    assert v.errors == ()
    check_issues(v.warnings, case.get("warnings", []), case["name"])
    if "mode" in case:
        assert v.mode.to_dict() == case["mode"]
    assert v.url == case["url"]


@pytest.mark.parametrize(("data", "case"), cases("widget/parse.json"))
def test_parse_vectors(data, case):
    config = config_of(data, case)
    if "error" in case:
        with pytest.raises(rampart.WidgetError) as e:
            rampart.parse_url(case["url"], config=config)
        assert (e.value.kind, e.value.code) == (case["error"], 400)
        return
    parsed = rampart.parse_url(case["url"], config=config)
    assert parsed.environment == case["environment"]
    assert parsed.options == case["options"]
    check_issues(parsed.warnings, case["warnings"], case["name"])
    v = rampart.validate(parsed.options, target="url", default_environment=parsed.environment, config=config)
    check_issues(v.errors, case["validation"]["errors"], case["name"])
    check_issues(v.warnings, case["validation"]["warnings"], case["name"])
    assert v.url == case["canonical"]


@pytest.mark.parametrize(("data", "case"), cases("widget/sign.json"))
def test_sign_vectors(data, case):
    config = config_of(data, case)
    if case["kind"] == "sign":
        options = rampart.validate(case["options"], target="url", config=config).options
        assert options is not None
        if "error" in case:
            with pytest.raises(rampart.SignatureError) as e:
                rampart.sign_url(options, case["secretKey"], timestamp=case["timestamp"])
            assert e.value.kind == case["error"]
        else:
            assert rampart.sign_url(options, case["secretKey"], timestamp=case["timestamp"]) == case["url"]
        return
    call = lambda: rampart.verify_signed_url(  # noqa: E731
        case["url"], case["secretKey"], max_age=case["maxAge"], now=case["now"], config=config
    )
    if "error" in case:
        with pytest.raises(rampart.WidgetError) as e:
            call()
        assert e.value.kind == case["error"]
    else:
        parsed = call()
        assert (parsed.options, parsed.environment) == (case["options"], case["environment"])


@pytest.mark.parametrize(("data", "case"), cases("widget/snippet.json"))
def test_snippet_vectors(data, case):
    config = config_of(data, case)
    if case["kind"] == "csp":
        d = rampart.csp_directives(case["environment"], config=config)
        assert (d.frame_src, d.script_src, d.header) == (case["frameSrc"], case["scriptSrc"], case["header"])
        return
    v = rampart.validate(
        case["options"],
        target=case.get("target", "script" if case["kind"] == "script" else "url"),
        default_environment=case.get("environment"),
        config=config,
    )
    options = v.options
    assert options is not None, v
    if case["kind"] == "script":
        if "error" in case:
            with pytest.raises(rampart.WidgetError) as e:
                rampart.script_snippet(options, nonce=case.get("nonce"))
            assert e.value.kind == case["error"]
        else:
            assert rampart.script_snippet(options, nonce=case.get("nonce")) == case["html"]
    else:
        assert rampart.iframe_snippet(options, **case.get("iframe", {})) == case["html"]


def address_cases() -> list[Any]:
    out = []
    for path in sorted((VECTORS / "addresses").glob("*.json")):
        data = load_vectors(f"addresses/{path.name}")
        out += [pytest.param(c, id=f"{path.stem}:{c['address'][:40]}:{c['allow_testnet']}") for c in data["cases"]]
    return out


@pytest.mark.parametrize("case", address_cases())
def test_address_vectors(case):
    r = rampart.validate_address(case["chain"], case["address"], allow_testnet=case["allow_testnet"])
    assert r.valid == case["valid"] == bool(r)
    if case["valid"]:
        assert (r.network, r.kind, r.error) == (case["network"], case["kind"], None)
    else:
        assert r.error == case["error"] and r.message


def test_keyword_options_and_results():
    kw = rampart.validate(
        default_environment="sandbox",
        public_key="pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc",
        tokens="btc",
        receive_address={"btc": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"},
        amount="50",
        dark_theme=True,
        show_logo=True,
    )
    as_dict = rampart.validate(
        {
            "publicKey": "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc",
            "tokens": "btc",
            "receiveAddress": {"btc": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"},
            "amount": "50",
            "darkTheme": True,
            "showRampartLogo": True,
        },
        default_environment="sandbox",
    )
    assert kw.url == as_dict.url and kw.url is not None
    assert "darkTheme=true" in kw.url and "showRampartLogo=true" in kw.url
    assert kw.mode.kind == "oneScreenCheckout"
    assert repr(kw.mode) == "Mode(kind='oneScreenCheckout')"
    bad = rampart.validate(
        {"publicKey": "sk_sandbox_leakedKey123", "amount": "4.999", "darktheme": True}, default_environment="sandbox"
    )
    assert not bad and bad.url is None and bad.options is None
    assert [i.code for i in bad.errors] == ["public_key_secret", "amount_too_many_decimals"]
    assert bad.errors[0].value == "sk_sandbox_…" and "leakedKey" not in repr(bad)
    assert bad.warnings[0].suggestion == "darkTheme" and bad.warnings[0].severity == "warning"
    assert bad.errors[1].to_dict()["path"] == "amount"
    incomplete = rampart.validate(public_key="pk_sandbox_x1", tokens="eth", amount="20", default_environment="sandbox")
    assert (incomplete.mode.kind, incomplete.mode.missing) == ("incomplete", "receiveAddress")


def test_widget_config_and_misuse():
    config = rampart.WidgetConfig(domain="example.com", brand="Acme")
    assert config.logo_option == "showAcmeLogo"
    assert config.sandbox_root == "https://widget-sandbox.example.com/"
    v = rampart.validate(publicKey="pk_production_9Zx4LmQ2wErTy7UiOp3AsDfG", show_logo=False, default_environment="production", config=config)
    assert v.url == "https://widget.example.com/?publicKey=pk_production_9Zx4LmQ2wErTy7UiOp3AsDfG&showAcmeLogo=false"
    with pytest.raises(rampart.WidgetError) as e:
        rampart.WidgetConfig(production_root="http://insecure.example")
    assert e.value.kind == "config_root_not_https"
    assert rampart.validate(["not", "a", "dict"]).errors[0].code == "options_not_object"  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rampart.validate({"amount": object()})
    with pytest.raises(rampart.WidgetError):
        rampart.validate({}, target="page")  # type: ignore[arg-type]


def test_result_reprs_are_readable():
    v = rampart.validate(public_key="pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc", amount="4", default_environment="sandbox")
    assert repr(v) == "Validation(valid=False, errors=['amount_below_minimum'], warnings=[], mode=Mode(kind='standard'))"
    assert repr(v.errors[0]) == "Issue(code='amount_below_minimum', path='amount', value='4')"
    ok = rampart.validate(public_key="pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc", default_environment="sandbox")
    assert repr(ok.options) == "ValidatedOptions(target='url', environment='sandbox', mode=Mode(kind='standard'))"
    assert ok.url is not None
    assert repr(rampart.parse_url(ok.url)) == "ParsedUrl(environment='sandbox', options=1, warnings=0)"
    check = rampart.validate_address("ethereum", "0x0", allow_testnet=False)
    assert repr(check).startswith("AddressCheck(valid=False, chain='ethereum', error='address_")
