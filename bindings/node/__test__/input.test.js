// SPEC section 5's input rules through the binding:
// - text that is not valid Unicode (a lone surrogate) is the field's own 400, never U+FFFD;
//   a token that is not valid text is a code that does not verify;
// - every numeric argument out of its range, NaN, fractional or of another type is an
//   invalid_input 400 naming the argument and its range.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')

const { rampart, START, code, setup, enabled, rejects, throws } = require('./helpers')

const LONE = ['\ud800', 'Acme\ud800', '\udc00x', 'a\udfffb\ud83d']
const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'
const PK = 'pk_sandbox_0123456789abcdef'
const SECONDS = 'must be a whole number of seconds from 0 to 9007199254740991'

function notUnicode(field) {
  return ['invalid_input', 400, `${field} must be valid Unicode text`]
}
const ISSUER = ['issuer_invalid', 400, "twoFactorIssuer must be 1 to 64 characters without ':' or control characters"]
const CONTACT = ['contact_id_invalid', 400, 'contactId must be a UUID']

test('Service methods reject text that is not valid Unicode with the field\'s own 400', async () => {
  const { service, partner: p } = await setup()
  const c = crypto.randomUUID()
  // [method, good arguments, index to spoil, expected [code, status, message]]
  const cases = [
    ['createPartner', ['Acme', 'sandbox'], 0, notUnicode('name')],
    ['createPartner', ['Acme', 'sandbox'], 1, notUnicode('environment')],
    ['rotateKeys', [p, 'ops'], 0, notUnicode('partnerId')],
    ['rotateKeys', [p, 'ops'], 1, notUnicode('operator')],
    ['partner', [p], 0, notUnicode('partnerId')],
    ['authenticate', ['sk_x'], 0, notUnicode('bearer')],
    ['setWidgetText', [p, 'Buy'], 1, ['widget_text_invalid', 400, 'widgetText must be 1 to 64 characters without control characters']],
    [
      'setWidgetButtonUrl',
      [p, 'https://a.example'],
      1,
      ['widget_button_url_invalid', 400, 'widgetButtonURL must be an absolute http(s) URL without credentials, at most 2048 characters'],
    ],
    ['set2faWaiver', [p, true, 'ops'], 2, notUnicode('operator')],
    ['setWidgetOrigins', [p, []], 0, notUnicode('partnerId')],
    ['widgetOrigins', [p], 0, notUnicode('partnerId')],
    ['setWidgetApproval', [p, true, 'ops'], 2, notUnicode('operator')],
    ['create2fa', [p, c, 'Shop', 'alice'], 0, notUnicode('partnerId')],
    ['create2fa', [p, c, 'Shop', 'alice'], 1, CONTACT],
    ['create2fa', [p, c, 'Shop', 'alice'], 2, ISSUER],
    ['create2fa', [p, c, 'Shop', 'alice'], 3, notUnicode('label')],
    ['enable2fa', [p, c, '123456'], 1, CONTACT],
    ['disable2fa', [p, c, '123456'], 1, CONTACT],
    ['status2fa', [p, c], 1, CONTACT],
    ['verify2fa', [p, c, '123456'], 1, CONTACT],
    ['setKycPassed', [p, c, true, 'ops'], 3, notUnicode('operator')],
    ['resetLock', [p, c, 'ops'], 2, notUnicode('operator')],
    ['is2faRequired', [p, c], 1, CONTACT],
    ['mayPurchase', [p, c], 1, CONTACT],
    ['contactsRequiring2fa', [p], 0, notUnicode('partnerId')],
    ['rewrapSecrets', ['ops'], 0, notUnicode('operator')],
  ]
  for (const [method, good, at, [code_, status, message]] of cases) {
    for (const bad of LONE) {
      const args = good.slice()
      args[at] = bad
      await rejects(service[method](...args), code_, status, message)
    }
  }
  // Nothing was written: the issuer never became "Acme\ufffd".
  assert.equal(await service.partnerCount(), 1)
  assert.equal(await service.status2fa(p, c), false)
  assert.equal(await service.widgetText(p), null)
})

test('a surrogate pair is text: an emoji issuer reaches the Key URI as UTF-8', async () => {
  const { service, partner, contact } = await setup()
  const s = await service.create2fa(partner, contact, 'Acme \u{1F512}')
  assert.ok(s.uri.startsWith(`otpauth://totp/Acme%20%F0%9F%94%92:${contact}?`), s.uri)
  assert.ok(!s.uri.includes('%EF%BF%BD'))
  assert.ok(rampart.newSecret('Acme \u{1F512}', 'ada').uri.startsWith('otpauth://totp/Acme%20%F0%9F%94%92:ada?'))
  assert.equal(rampart.validate({ publicKey: PK, clientName: 'Shop \u{1F6D2}' }).valid, true)
})

test('the constructor rejects a path or option that is not valid Unicode', () => {
  throws(() => new rampart.Service('db\ud800.sqlite'), ...notUnicode('path'))
  throws(() => new rampart.Service(null, { serviceName: 'Acme\ud800' }), ...notUnicode('serviceName'))
  throws(() => new rampart.Service(null, { environment: 'sandbox\udc00' }), ...notUnicode('environment'))
})

test('a token that is not valid text is a code that does not verify, never a 400', async () => {
  const t = await setup()
  const s = await t.service.create2fa(t.partner, t.contact)
  const right = code(s.manual, t.clock.now)
  for (const token of ['\ud800', `${right}\ud800`, `${right.slice(0, 3)}\udc00${right.slice(3)}`]) {
    await rejects(t.service.enable2fa(t.partner, t.contact, token), 'token_failed', 401, 'Google 2FA failed')
    assert.deepEqual(rampart.parseToken(token), { kind: 'malformed' })
    assert.equal(rampart.verify(s.manual, token, { unixTime: t.clock.now }), false)
    assert.equal(rampart.verifyStep(s.manual, token, { unixTime: t.clock.now }), null)
  }
  await t.service.enable2fa(t.partner, t.contact, right)
  t.clock.advance(30)
  assert.equal(await t.service.verify2fa(t.partner, t.contact, `${code(s.manual, t.clock.now)}\ud800`), false)
  assert.equal((await t.service.verify2fa(t.partner, t.contact, code(s.manual, t.clock.now))).method, 'token')
})

test('the synchronous helpers throw the field\'s own 400 for text that is not valid Unicode', () => {
  const options = { environment: 'sandbox', publicKey: PK }
  for (const bad of LONE) {
    throws(() => rampart.newSecret(bad, 'ada'), ...ISSUER)
    throws(() => rampart.newSecret('Shop', bad), ...notUnicode('account'))
    throws(() => rampart.keyUri(bad, 'ada', SECRET), ...ISSUER)
    throws(() => rampart.keyUri('Shop', bad, SECRET), ...notUnicode('account'))
    throws(() => rampart.keyUri('Shop', 'ada', bad), ...notUnicode('secret'))
    throws(() => rampart.codeAt(bad), ...notUnicode('secret'))
    throws(() => rampart.hotp(bad, 1), ...notUnicode('secret'))
    throws(() => rampart.verify(bad, '123456'), ...notUnicode('secret'))
    throws(() => rampart.qrPngDataUri(bad), ...notUnicode('text'))
    throws(() => rampart.parseUrl(bad), ...notUnicode('url'))
    throws(() => rampart.signUrl(options, bad), ...notUnicode('secretKey'))
    throws(() => rampart.verifySignedUrl(bad, 'sk_x'), ...notUnicode('url'))
    throws(() => rampart.verifySignedUrl('https://x.example', bad), ...notUnicode('secretKey'))
    throws(() => rampart.cspDirectives(bad), ...notUnicode('environment'))
    throws(() => rampart.validateAddress(bad, 'x'), ...notUnicode('chain'))
    throws(() => rampart.validateAddress('bitcoin', bad), ...notUnicode('address'))
    for (const field of ['target', 'defaultEnvironment', 'nonce', 'title']) {
      throws(() => rampart.scriptSnippet(options, { [field]: bad }), ...notUnicode(field))
    }
  }
})

test('widget options: a string or key that is not valid Unicode names its option path', () => {
  throws(() => rampart.validate({ publicKey: PK, clientName: 'Shop\ud800' }), ...notUnicode('clientName'))
  throws(() => rampart.buildUrl({ publicKey: PK, receiveAddress: { btc: 'bc1\udc00' } }), ...notUnicode('receiveAddress.btc'))
  throws(() => rampart.validate({ publicKey: PK, tokens: ['btc', 'eth\ud800'] }), ...notUnicode('tokens[1]'))
  throws(() => rampart.validate({ publicKey: PK, ['clientName\ud800']: 'Shop' }), ...notUnicode('options'))
  throws(() => rampart.validate({ receiveAddress: { ['btc\ud800']: 'x' } }), ...notUnicode('receiveAddress'))
  throws(() => rampart.validate('\ud800'), ...notUnicode('options'))
  throws(() => rampart.validate({ publicKey: PK }, { config: { brand: 'Acme\ud800' } }), ...notUnicode('config.brand'))
  // Other values keep their JSON reading.
  throws(() => rampart.validate({ onDone: () => 1 }), 'invalid_input', 400, 'options must be plain JSON data (no functions, symbols or BigInts)')
  throws(() => rampart.validate({ amount: 10n }), 'invalid_input', 400, 'options must be plain JSON data (no functions, symbols or BigInts)')
  const cyclic = { publicKey: PK }
  cyclic.self = cyclic
  throws(() => rampart.validate(cyclic), 'invalid_input', 400, 'options must be plain JSON data (no functions, symbols or BigInts)')
  const v = rampart.validate({ publicKey: PK, clientName: undefined, [Symbol('x')]: 1, amount: '50' })
  assert.deepEqual([v.valid, v.url], [true, 'https://widget-sandbox.rampart.network/?publicKey=pk_sandbox_0123456789abcdef&amount=50'])
})

// Each bad value for a numeric argument; `fraction` is the argument's own fraction, if it has one.
const NOT_WHOLE = [NaN, Infinity, -Infinity, 1.5, '1', true, 1n, {}]

test('every numeric argument out of its range is invalid_input naming it and its range', async () => {
  const cases = [
    // [call with the value, message, values out of range beyond NOT_WHOLE]
    [(v) => rampart.codeAt(SECRET, v), `unixTime ${SECONDS}`, [-1, 1e20, 2 ** 53]],
    [(v) => rampart.verify(SECRET, '123456', { unixTime: v }), `unixTime ${SECONDS}`, [-1, 1e20, 2 ** 53]],
    [(v) => rampart.verifyStep(SECRET, '123456', { unixTime: v }), `unixTime ${SECONDS}`, [-1, 1e20]],
    [(v) => rampart.verify(SECRET, '123456', { window: v }), 'window must be 0, 1 or 2', [-1, 3, 1e20]],
    [(v) => rampart.hotp(SECRET, v), 'counter must be a whole number from 0 to 9007199254740991', [-1, 1e20, 2 ** 53]],
    [(v) => new rampart.ManualClock(v), `now ${SECONDS}`, [-1, 1e20, 2 ** 53]],
    [(v) => new rampart.ManualClock(START).set(v), `now ${SECONDS}`, [-1, 1e20]],
    [(v) => new rampart.ManualClock(0).advance(v), `seconds ${SECONDS}`, [-1, 1e20, 2 ** 53]],
    [(v) => new rampart.Service(null, { window: v }), 'window must be 0, 1 or 2', [-1, 3, 2 ** 32]],
    [(v) => new rampart.Service(null, { pendingTtlSecs: v }), 'pendingTtlSecs must be a whole number of seconds from 1 to 4294967295', [0, -1, 2 ** 32]],
    [(v) => new rampart.Service(null, { masterKey: Buffer.alloc(32), masterKeyId: v }), 'masterKeyId must be a whole number from 0 to 4294967295', [-1, 2 ** 32]],
    [(v) => rampart.signUrl({ publicKey: PK }, 'sk_sandbox_abc', { timestamp: v }), `timestamp ${SECONDS}`, [-1, 1e20]],
    [(v) => rampart.verifySignedUrl('https://x.example', 'sk_x', { now: v }), `now ${SECONDS}`, [-1, 1e20]],
    [(v) => rampart.verifySignedUrl('https://x.example', 'sk_x', { maxAge: v }), `maxAge ${SECONDS}`, [-1, 1e20]],
    [(v) => rampart.iframeSnippet({ publicKey: PK }, { width: v }), 'width must be a whole number of pixels from 1 to 4294967295', [0, -1, 2 ** 32]],
    [(v) => rampart.iframeSnippet({ publicKey: PK }, { height: v }), 'height must be a whole number of pixels from 1 to 4294967295', [0, -1, 2 ** 32]],
  ]
  for (const [call, message, beyond] of cases) {
    for (const v of [...NOT_WHOLE, ...beyond]) {
      assert.throws(() => call(v), (err) => {
        assert.ok(err instanceof rampart.RampartError, `${message} <- ${String(v)}`)
        assert.deepEqual([err.code, err.status, err.message], ['invalid_input', 400, message], String(v))
        return true
      })
    }
  }
  // The bounds themselves are accepted.
  assert.match(rampart.codeAt(SECRET, 2 ** 53 - 1), /^\d{6}$/)
  assert.match(rampart.codeAt(SECRET, 0), /^\d{6}$/)
  assert.match(rampart.hotp(SECRET, 2 ** 53 - 1), /^\d{6}$/)
  for (const window of [0, 2]) assert.equal(rampart.verify(SECRET, rampart.codeAt(SECRET, START), { unixTime: START, window }), true)
  assert.equal(new rampart.Service(null, { window: 0, pendingTtlSecs: 1 }).window, 0)
  assert.equal(new rampart.Service(null, { pendingTtlSecs: 2 ** 32 - 1, masterKey: Buffer.alloc(32), masterKeyId: 0 }).window, 1)
  assert.match(rampart.iframeSnippet({ publicKey: PK }, { width: 1, height: 2 ** 32 - 1 }), /width="1" height="4294967295"/)
  assert.equal(new rampart.ManualClock(2 ** 53 - 1).now, 2 ** 53 - 1)
  assert.equal(new rampart.ManualClock().now, 0)
})

test('a clock cannot be moved past 2^53 - 1 seconds', () => {
  const clock = new rampart.ManualClock(START)
  throws(() => clock.advance(2 ** 53 - 1), 'invalid_input', 400, `seconds must be a whole number of seconds from 0 to ${2 ** 53 - 1 - START}`)
  clock.advance(2 ** 53 - 1 - START)
  assert.equal(clock.now, 2 ** 53 - 1)
  throws(() => clock.advance(1), 'invalid_input', 400, 'seconds must be a whole number of seconds from 0 to 0')
  clock.advance(0)
})

test('Service methods keep rejecting (not throwing) on bad numbers and text', async () => {
  const t = await setup({ throttling: false })
  const manual = await enabled(t)
  let promise
  assert.doesNotThrow(() => {
    promise = t.service.verify2fa(t.partner, t.contact, '\ud800')
  })
  assert.equal(await promise, false)
  assert.doesNotThrow(() => {
    promise = t.service.status2fa(t.partner, '\ud800')
  })
  await rejects(promise, ...CONTACT)
  assert.equal((await t.service.verify2fa(t.partner, t.contact, code(manual, t.clock.now))).method, 'token')
})
