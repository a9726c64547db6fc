"""Partners, authentication, widget settings, the exception hierarchy and reprs."""

from __future__ import annotations

import pickle
import uuid

import pytest

import rampart


def test_partner_keys_and_authentication(service):
    creds = service.create_partner("Acme")
    assert creds.secret_key.startswith("sk_sandbox_")
    assert creds.publishable_key.startswith("pk_sandbox_")
    assert creds.environment == "sandbox"
    assert creds.secret_key not in repr(creds) and "<redacted>" in repr(creds)
    auth = service.authenticate(creds.secret_key)
    assert (auth.partner_id, auth.method) == (creds.partner_id, "secret_key")
    assert service.authenticate(f"Bearer {creds.secret_key}") == auth
    for bad in [creds.publishable_key, "sk_sandbox_nope", "sk_production_x", ""]:
        with pytest.raises(rampart.AuthenticationError) as e:
            service.authenticate(bad)
        assert (e.value.code, e.value.kind, e.value.message) == (401, "unauthorized", "Unauthorized")
    rotated = service.rotate_keys(creds.partner_id, operator="ops")
    with pytest.raises(rampart.AuthenticationError):
        service.authenticate(creds.secret_key)
    assert service.authenticate(rotated.secret_key).partner_id == creds.partner_id
    assert service.partner_count() == 1


def test_widget_settings(service, partner):
    assert service.widget_text(partner) is None
    assert service.set_widget_text(partner, "Buy now") == "Buy now"
    assert service.widget_text(partner) == "Buy now"
    assert service.set_widget_button_url(partner, "https://acme.example/done") == "https://acme.example/done"
    assert service.widget_button_url(partner) == "https://acme.example/done"
    p = service.partner(partner)
    assert (p.name, p.widget_text, p.environment) == ("Acme", "Buy now", "sandbox")
    with pytest.raises(rampart.InvalidInputError) as e:
        service.set_widget_text(partner, "")
    assert (e.value.code, e.value.kind) == (400, "widget_text_invalid")
    with pytest.raises(rampart.InvalidInputError) as e:
        service.set_widget_button_url(partner, "ftp://x")
    assert e.value.kind == "widget_button_url_invalid"
    with pytest.raises(rampart.NotFoundError) as e:
        service.widget_text(str(uuid.uuid4()))
    assert (e.value.code, e.value.kind, e.value.message) == (404, "partner_not_found", "Partner not found")


def test_error_hierarchy_and_attributes():
    families = [
        rampart.InvalidInputError,
        rampart.AuthenticationError,
        rampart.ConflictError,
        rampart.LockedError,
        rampart.ThrottledError,
        rampart.NotFoundError,
        rampart.StorageError,
        rampart.ConfigError,
        rampart.WidgetError,
    ]
    for cls in families:
        assert issubclass(cls, rampart.RampartError) and issubclass(cls, Exception)
    assert issubclass(rampart.SignatureError, rampart.WidgetError)
    err = rampart.ThrottledError("Too many failed 2FA attempts, try again in 30 seconds", 429, "throttled", 30)
    assert repr(err) == "ThrottledError(code=429, kind='throttled', message='Too many failed 2FA attempts, try again in 30 seconds')"
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.code, back.kind, back.message, back.retry_after) == (rampart.ThrottledError, 429, "throttled", err.message, 30)


def test_config_errors(tmp_path):
    with pytest.raises(rampart.InvalidInputError) as e:
        rampart.Service(window=3)
    assert (e.value.code, e.value.kind, e.value.message) == (400, "invalid_input", "window must be 0, 1 or 2")
    with pytest.raises(rampart.ConfigError) as e:
        rampart.Service(tmp_path / "p.db", environment="production")
    assert e.value.message == "production refuses to start without a master key"
    assert not (tmp_path / "p.db").exists()
    with pytest.raises(rampart.InvalidInputError):
        rampart.Service(environment="staging")  # type: ignore[arg-type]
    with pytest.raises(rampart.ConfigError):
        rampart.Service(master_key=b"short")


def test_sqlite_file_and_context_manager(tmp_path):
    db = tmp_path / "rampart.db"
    with rampart.Service(db) as service:
        partner = service.create_partner("Acme").partner_id
        assert repr(service).startswith("Service(") and not service.closed
    assert service.closed
    with pytest.raises(rampart.ConfigError) as e:
        service.partner_count()
    assert e.value.message == "the service is closed"
    assert (tmp_path / "rampart.db.key").exists()
    with rampart.Service(str(db)) as again:  # the key file beside the database is reused
        assert again.partner(partner).name == "Acme"
        assert again.path == db


def test_production_with_master_key():
    with rampart.Service(environment="production", master_key=bytes(range(32))) as service:
        creds = service.create_partner("Live")
        assert creds.secret_key.startswith("sk_production_")
        assert service.environment == "production"


def test_reprs_hide_secrets(service, partner, contact):
    setup = service.create_2fa(partner, contact)
    enrolment = rampart.new_secret("Acme", "ada")
    for obj in [setup, enrolment]:
        text = repr(obj)
        assert "redacted" in text
        assert obj.manual not in text and obj.uri not in text
    assert repr(rampart.ManualClock(5)) == "ManualClock(now=5)"
