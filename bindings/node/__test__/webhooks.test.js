// Standard Webhooks signatures (SPEC section 10): the shared vectors, and interoperability with the
// reference implementation nobody here wrote (npm `standardwebhooks`, a pinned devDependency),
// which reads the real clock, so those messages are stamped with the current time.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { Webhook, WebhookVerificationError } = require('standardwebhooks')

const { rampart, loadVectors, throws } = require('./helpers')

const VECTORS = loadVectors('webhooks/standard.json')
const SECRET = `whsec_${Buffer.from([...Array(32).keys()]).toString('base64')}`
const BODY = Buffer.from('{"type":"order.completed","timestamp":"2026-11-26T15:00:00Z","data":{"orderId":"o-1"}}')
const NOW = 1_795_000_000

function headers(id, timestamp, signature) {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }
}

// The call throws a RampartError 'webhook_verification_failed' for `reason`; returns its message.
function failsWith(call, reason) {
  let message
  assert.throws(call, (err) => {
    assert.ok(err instanceof rampart.RampartError, `a RampartError, got ${err}`)
    assert.deepEqual([err.code, err.status, err.kind, err.reason], ['webhook_verification_failed', 400, 'webhook_verification_failed', reason])
    assert.deepEqual(Object.keys(err), ['code', 'status', 'reason'])
    message = err.message
    return true
  })
  return message
}

function nowSeconds() {
  return Math.floor(Date.now() / 1000)
}

test('sign vectors: exactly the signature, from a Buffer or a string body', () => {
  assert.ok(VECTORS.sign.length >= 3)
  for (const c of VECTORS.sign) {
    assert.equal(rampart.webhookSign(c.secret, c.id, c.timestamp, Buffer.from(c.body)), c.signature, c.name)
    assert.equal(rampart.webhookSign(c.secret, c.id, c.timestamp, c.body), c.signature, c.name)
  }
})

test('verify vectors: valid, or the named reason', () => {
  assert.ok(VECTORS.verify.length >= 11)
  const reasons = new Set()
  for (const c of VECTORS.verify) {
    const verify = () => rampart.webhookVerify(c.secret, headers(c.id, c.timestamp, c.signature), Buffer.from(c.body), { now: c.now })
    if (c.valid) {
      assert.equal(verify(), undefined, c.name)
    } else {
      failsWith(verify, c.error)
      reasons.add(c.error)
    }
  }
  assert.deepEqual([...reasons].sort(), ['bad_timestamp', 'no_match', 'too_new', 'too_old'])
})

test('headers in any case, from a plain object or a Fetch API Headers', () => {
  const sig = rampart.webhookSign(SECRET, 'msg_1', NOW, BODY)
  rampart.webhookVerify(SECRET, { 'Webhook-Id': 'msg_1', 'WEBHOOK-TIMESTAMP': String(NOW), 'webhook-Signature': sig }, BODY, { now: NOW })
  rampart.webhookVerify(SECRET, new Headers(headers('msg_1', NOW, sig)), BODY, { now: NOW })
  // Node's http gives a header sent once as a string; an array of one is read the same
  rampart.webhookVerify(SECRET, { ...headers('msg_1', NOW, sig), 'webhook-id': ['msg_1'] }, BODY, { now: NOW })
  // a null-prototype object (as Node's req.headers), the secret without its prefix, a string body
  const bare = Object.assign(Object.create(null), headers('msg_1', NOW, sig))
  rampart.webhookVerify(SECRET.slice('whsec_'.length), bare, BODY.toString(), { now: NOW })
})

test('missing headers, the error shape, and the clock', () => {
  const sig = rampart.webhookSign(SECRET, 'msg_1', NOW, BODY)
  const full = headers('msg_1', NOW, sig)
  for (const name of Object.keys(full)) {
    const partial = { ...full }
    delete partial[name]
    assert.equal(failsWith(() => rampart.webhookVerify(SECRET, partial, BODY, { now: NOW }), 'missing_header'), `${name} is missing`)
    assert.equal(failsWith(() => rampart.webhookVerify(SECRET, { ...full, [name]: undefined }, BODY, { now: NOW }), 'missing_header'), `${name} is missing`)
  }
  assert.equal(failsWith(() => rampart.webhookVerify(SECRET, new Headers(), BODY, { now: NOW }), 'missing_header'), 'webhook-id is missing')
  assert.equal(failsWith(() => rampart.webhookVerify(SECRET, full, BODY, { now: NOW + 301 }), 'too_old'), 'webhook-timestamp is too old')
  assert.equal(failsWith(() => rampart.webhookVerify(SECRET, full, BODY, { now: NOW - 301 }), 'too_new'), 'webhook-timestamp is too far in the future')
  assert.equal(failsWith(() => rampart.webhookVerify(SECRET, { ...full, 'webhook-timestamp': 'soon' }, BODY, { now: NOW }), 'bad_timestamp'), 'webhook-timestamp is not a number')
  assert.equal(failsWith(() => rampart.webhookVerify(SECRET, full, Buffer.concat([BODY, Buffer.from(' ')]), { now: NOW }), 'no_match'), 'no signature matches')
  // options.now defaults to the system clock
  const now = nowSeconds()
  rampart.webhookVerify(SECRET, headers('msg_1', now, rampart.webhookSign(SECRET, 'msg_1', now, BODY)), BODY)
  rampart.webhookVerify(SECRET, headers('msg_1', now, rampart.webhookSign(SECRET, 'msg_1', now, BODY)), BODY, null)
  const old = now - 3600
  failsWith(() => rampart.webhookVerify(SECRET, headers('msg_1', old, rampart.webhookSign(SECRET, 'msg_1', old, BODY)), BODY), 'too_old')
  // a caller can build the same error (tests and wrappers)
  const e = new rampart.RampartError('no signature matches', { code: 'webhook_verification_failed', status: 400, reason: 'no_match' })
  assert.deepEqual([e.code, e.status, e.reason], ['webhook_verification_failed', 400, 'no_match'])
})

test('bad arguments are invalid_input; header text that is not valid Unicode fails verification', () => {
  const sig = rampart.webhookSign(SECRET, 'msg_1', NOW, BODY)
  const h = headers('msg_1', NOW, sig)
  for (const bad of ['whsec_', 'whsec_not base64!', '', 'whsec_QUJD*']) {
    throws(() => rampart.webhookVerify(bad, h, BODY, { now: NOW }), 'invalid_input', 400, 'secret must be whsec_ followed by base64')
    throws(() => rampart.webhookSign(bad, 'msg_1', NOW, BODY), 'invalid_input', 400, 'secret must be whsec_ followed by base64')
  }
  throws(() => rampart.webhookSign(undefined, 'msg_1', NOW, BODY), 'invalid_input', 400, 'secret is required')
  throws(() => rampart.webhookSign(Buffer.from('x'), 'msg_1', NOW, BODY), 'invalid_input', 400, 'secret must be a string')
  throws(() => rampart.webhookSign(SECRET, 'msg_\ud800', NOW, BODY), 'invalid_input', 400, 'msgId must be valid Unicode text')
  throws(() => rampart.webhookSign(SECRET, 'msg_1', -1, BODY), 'invalid_input', 400, 'timestamp must be a whole number of seconds from 0 to 9007199254740991')
  throws(() => rampart.webhookSign(SECRET, 'msg_1', NOW, 5), 'invalid_input', 400, 'body must be a Buffer or a string')
  throws(() => rampart.webhookSign(SECRET, 'msg_1', NOW), 'invalid_input', 400, 'body is required')
  throws(() => rampart.webhookSign(SECRET, 'msg_1', NOW, '\ud800'), 'invalid_input', 400, 'body must be valid Unicode text')
  throws(() => rampart.webhookVerify(SECRET, h, BODY, { now: 1.5 }), 'invalid_input', 400, 'now must be a whole number of seconds from 0 to 9007199254740991')
  throws(() => rampart.webhookVerify(SECRET, h, BODY, 5), 'invalid_input', 400, 'options must be an object')
  throws(() => rampart.webhookVerify(SECRET, undefined, BODY), 'invalid_input', 400, 'headers is required')
  throws(() => rampart.webhookVerify(SECRET, 'webhook-id: msg_1', BODY), 'invalid_input', 400, 'headers must be an object of header names to values, or a Headers')
  throws(() => rampart.webhookVerify(SECRET, [h], BODY), 'invalid_input', 400, 'headers must be an object of header names to values, or a Headers')
  throws(() => rampart.webhookVerify(SECRET, { ...h, 'webhook-timestamp': NOW }, BODY, { now: NOW }), 'invalid_input', 400, "headers['webhook-timestamp'] must be a string")
  throws(() => rampart.webhookVerify(SECRET, { ...h, 'webhook-id': ['msg_1', 'msg_2'] }, BODY, { now: NOW }), 'invalid_input', 400, "headers['webhook-id'] must be a string")
  failsWith(() => rampart.webhookVerify(SECRET, { ...h, 'webhook-timestamp': `${NOW}\ud800` }, BODY, { now: NOW }), 'bad_timestamp')
  // a signature list is still read for its valid entries
  rampart.webhookVerify(SECRET, { ...h, 'webhook-signature': `v1,\ud800 ${sig}` }, BODY, { now: NOW })
})

// Interoperability with the reference library, on the real clock.

test('the reference library accepts Rampart signatures, and refuses what Rampart refuses', () => {
  const now = nowSeconds()
  const id = `msg_${crypto.randomBytes(8).toString('hex')}`
  const h = headers(id, now, rampart.webhookSign(SECRET, id, now, BODY))
  const wh = new Webhook(SECRET)
  assert.deepEqual(wh.verify(BODY, h), JSON.parse(BODY))
  assert.deepEqual(wh.verify(BODY.toString(), h), JSON.parse(BODY))
  // rotation: Rampart's signature beside another secret's
  const other = rampart.webhookSign(`whsec_${crypto.randomBytes(32).toString('base64')}`, id, now, BODY)
  wh.verify(BODY, { ...h, 'webhook-signature': `${other} ${h['webhook-signature']}` })
  // one changed body byte, and a timestamp 301 s off either way (302 ahead: the reference reads
  // its own clock, which may have moved into the next second since `now`)
  const changed = Buffer.from(BODY)
  changed[changed.length - 3] ^= 0x01
  assert.throws(() => wh.verify(changed, h), (e) => e instanceof WebhookVerificationError && /No matching signature/.test(e.message))
  for (const [at, words] of [[now - 301, /too old/], [now + 302, /too new/]]) {
    const stale = headers(id, at, rampart.webhookSign(SECRET, id, at, BODY))
    assert.throws(() => wh.verify(BODY, stale), (e) => e instanceof WebhookVerificationError && words.test(e.message))
  }
})

test('Rampart accepts the reference library\'s signatures, and refuses what it refuses', () => {
  const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`
  const wh = new Webhook(secret)
  const now = nowSeconds()
  const id = `msg_${crypto.randomBytes(8).toString('hex')}`
  const signed = (at) => headers(id, at, wh.sign(id, new Date(at * 1000), BODY))
  rampart.webhookVerify(secret, signed(now), BODY)
  rampart.webhookVerify(secret, signed(now), BODY, { now })
  assert.equal(signed(now)['webhook-signature'], rampart.webhookSign(secret, id, now, BODY))
  const changed = Buffer.from(BODY)
  changed[changed.length - 3] ^= 0x01
  failsWith(() => rampart.webhookVerify(secret, signed(now), changed), 'no_match')
  for (const [at, reason] of [[now - 301, 'too_old'], [now + 301, 'too_new']]) {
    failsWith(() => rampart.webhookVerify(secret, signed(at), BODY, { now }), reason)
    rampart.webhookVerify(secret, signed(at), BODY, { now: at }) // the signature itself is good
  }
})

test('the reference vector through the reference library', () => {
  const c = VECTORS.sign[0]
  const sig = new Webhook(c.secret).sign(c.id, new Date(c.timestamp * 1000), c.body)
  assert.equal(sig, c.signature)
  assert.equal(rampart.webhookSign(c.secret, c.id, c.timestamp, c.body), sig)
})
