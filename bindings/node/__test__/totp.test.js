// The pure TOTP helpers against otplib and the shared RFC and token-grammar vectors.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { authenticator, hotp: otplibHotp } = require('otplib')

const { rampart, START, code, loadVectors, rejects, throws } = require('./helpers')

const RFC_SECRET = Buffer.from('12345678901234567890', 'ascii')

test('RFC 4226 HOTP vectors', () => {
  const v = loadVectors('totp/rfc4226.json')
  for (const c of v.cases) assert.equal(rampart.hotp(Buffer.from(v.secret_ascii, 'ascii'), c.counter), c.code)
})

test('RFC 6238 SHA-1 vectors (6 digits)', () => {
  const v = loadVectors('totp/rfc6238.json')
  for (const c of v.cases) {
    assert.equal(rampart.codeAt(Buffer.from(v.secret_ascii, 'ascii'), c.time), c.code)
    assert.equal(rampart.verifyStep(RFC_SECRET, c.code, { unixTime: c.time, window: 0 }), c.step)
  }
})

test('token grammar vectors', () => {
  const v = loadVectors('tokens.json')
  for (const c of v.cases) {
    // JS numbers carry no integer/float distinction: JSON's 123456.0 reads as 123456 here.
    if (/float/i.test(c.note ?? '') && Number.isInteger(c.input)) continue
    const got = rampart.parseToken(c.input)
    assert.equal(got.kind, c.expect, JSON.stringify(c))
    if (c.expect === 'code') assert.equal(got.code, c.value)
  }
  assert.equal(rampart.parseToken(undefined).kind, 'missing')
  assert.equal(rampart.parseToken('1'.repeat(1 << 20)).kind, 'malformed')
})

test('new secret: 160 bits, Key URI and QR data URI', () => {
  const e = rampart.newSecret('Acme', 'ada@example.com')
  assert.equal(e.secret.length, 32)
  assert.equal(e.manual, e.secret)
  assert.equal(e.uri, `otpauth://totp/Acme:ada%40example.com?secret=${e.secret}&issuer=Acme&algorithm=SHA1&digits=6&period=30`)
  assert.match(e.qrCode, /^data:image\/png;base64,/)
  assert.equal(rampart.keyUri('Acme', 'ada@example.com', e.secret), e.uri)
})

test('codes computed by otplib are accepted, within the window only', () => {
  for (let i = 0; i < 50; i++) {
    const { secret } = rampart.newSecret('Acme', 'a')
    const at = START + i * 7919
    assert.equal(rampart.codeAt(secret, at), code(secret, at))
    assert.equal(rampart.verify(secret, code(secret, at), { unixTime: at }), true)
    assert.equal(rampart.verify(secret, code(secret, at - 30), { unixTime: at }), true)
    assert.equal(rampart.verify(secret, code(secret, at + 30), { unixTime: at }), true)
    assert.equal(rampart.verify(secret, code(secret, at - 30), { unixTime: at, window: 0 }), code(secret, at - 30) === code(secret, at))
    const far = code(secret, at + 90)
    if (![-30, 0, 30].some((d) => code(secret, at + d) === far)) {
      assert.equal(rampart.verify(secret, far, { unixTime: at }), false)
    }
  }
  // otplib's own helper agrees with ours at the current time.
  const { secret } = rampart.newSecret('Acme', 'a')
  assert.equal(rampart.verify(secret, authenticator.generate(secret)), true)
  assert.equal(rampart.hotp(secret, 7), otplibHotp.clone({ encoding: 'hex' }).generate(authenticator.decode(secret), 7))
})

test('wrong and malformed codes are false, not errors', () => {
  const { secret } = rampart.newSecret('Acme', 'a')
  for (const token of ['abcdef', '12345', 12.5, true, null, {}, [], '']) {
    assert.equal(rampart.verify(secret, token, { unixTime: START }), false)
  }
  assert.equal(rampart.verifyStep(secret, 'junk'), null)
})

test('bad arguments throw clear errors', () => {
  throws(() => rampart.verify('JBSWY3DPEHPK3PXP', '123456', { window: 3 }), 'invalid_input', 400, 'window must be 0, 1 or 2')
  throws(() => rampart.codeAt('not base32 !!!'), 'invalid_input', 400, 'secret must be base32')
  throws(() => rampart.codeAt(42), 'invalid_input', 400, 'secret must be a base32 string or a Buffer')
  throws(() => rampart.codeAt('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', -5), 'invalid_input', 400, 'unixTime must be a whole number of seconds from 0 to 9007199254740991')
})

test('errors are RampartErrors with code, status and message', async () => {
  const clock = new rampart.ManualClock(START)
  const service = new rampart.Service(null, {}, clock)
  const p = (await service.createPartner('Acme')).partnerId
  await rejects(service.status2fa(p, 'not-a-uuid'), 'contact_id_invalid', 400, 'contactId must be a UUID')
  await rejects(service.status2fa(p, ''), 'contact_id_required', 400, 'contactId is required')
  await rejects(service.create2fa(p, require('node:crypto').randomUUID(), 'a:b'), 'issuer_invalid', 400, "twoFactorIssuer must be 1 to 64 characters without ':' or control characters")
  await rejects(service.partner('nope'), 'invalid_input', 400, 'partnerId must be a UUID')
  await rejects(service.authenticate('sk_wrong'), 'unauthorized', 401, 'Unauthorized')
  throws(() => new rampart.Service(null, { environment: 'staging' }), 'invalid_input', 400, 'environment must be sandbox or production')
  throws(() => new rampart.Service(null, { environment: 'production' }), 'config', 500, 'production refuses to start without a master key')
  throws(() => new rampart.Service(null, { masterKey: Buffer.alloc(5) }), 'config', 500, 'master key must be exactly 32 bytes')
  const prod = new rampart.Service(null, { environment: 'production', masterKey: Buffer.alloc(32, 7), serviceName: 'Shop', window: 2 })
  assert.deepEqual([prod.environment, prod.serviceName, prod.window, prod.path], ['production', 'Shop', 2, null])
  await prod.ping()
  // Keys: create, authenticate (bare and as a header), rotate.
  const creds = await service.createPartner('Keys')
  assert.match(creds.secretKey, /^sk_/)
  assert.deepEqual(await service.authenticate(`Bearer ${creds.secretKey}`), { partnerId: creds.partnerId, method: 'secretKey' })
  const rotated = await service.rotateKeys(creds.partnerId, 'ops')
  assert.notEqual(rotated.secretKey, creds.secretKey)
  assert.equal(await service.partnerCount(), 2)
  assert.equal(await service.setWidgetText(p, 'Buy'), 'Buy')
  assert.equal(await service.widgetText(p), 'Buy')
})
