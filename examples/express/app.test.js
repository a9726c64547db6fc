// The Express example over real HTTP: the app on 127.0.0.1 port 0 over a temporary SQLite file,
// a partner made through the binding, codes from otplib (an authenticator app's implementation).
'use strict'

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { authenticator } = require('otplib')

const rampart = require('rampart')
const { createApp, openService, readKeyFile } = require('./app.js')

const STEP = 30_000
const CODE = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/ // Crockford base32, six groups
const FAILED = { message: 'Google 2FA failed', code: 401 }
const CONFLICT = { message: 'Give token or recoveryCode, not both', code: 400 }
const NOT_HERE = { message: 'recoveryCode is not accepted here', code: 400 }
let dir, service, server, base, key, publishableKey

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-express-'))
  service = openService({ RAMPART_DB: path.join(dir, 'partner.db') })
  ;({ secretKey: key, publishableKey } = await service.createPartner('Express example'))
  server = createApp(service).listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  base = `http://127.0.0.1:${server.address().port}`
})

after(() => {
  server?.close()
  service?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

// One request; every answer is JSON whose `code` is the HTTP status.
async function call(method, route, { body, auth = `Bearer ${key}`, raw } = {}) {
  const headers = auth === null ? {} : { Authorization: auth }
  if (body !== undefined || raw !== undefined) headers['Content-Type'] = 'application/json'
  const res = await fetch(base + route, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) })
  const json = await res.json()
  assert.equal(json.code, res.status, `${method} ${route}: code equals the status`)
  return { res, json }
}
const get = async (route, opts) => (await call('GET', route, opts)).json
const post = async (route, body, opts) => (await call('POST', route, { ...opts, body })).json

// The code an authenticator app shows at `ms` (Unix milliseconds).
const codeAt = (manual, ms) => authenticator.clone({ epoch: ms }).generate(manual)
const wrong = (right) => (right === '000000' ? '111111' : '000000')

test('the 2FA lifecycle over HTTP with authenticator codes', async () => {
  const contact = crypto.randomUUID()
  const c = { contactId: contact }
  // The lifecycle uses three consecutive steps around now (the window is one step either side);
  // near the end of a step, wait for the next one so that "now" stays one step throughout.
  if (STEP - (Date.now() % STEP) < 3000) await new Promise((r) => setTimeout(r, STEP - (Date.now() % STEP) + 50))
  const now = Date.now()

  const { res, json: created } = await call('GET', `/v1/auth/create2fa?contactId=${contact}`)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.deepEqual(Object.keys(created), ['message', 'code', 'details'])
  assert.equal(created.message, 'Successfully created 2fa!')
  assert.match(created.details.qrCode, /^data:image\/png;base64,/)
  assert.match(created.details.manual, /^[A-Z2-7]{32}$/)
  const manual = created.details.manual

  assert.deepEqual(await post('/v1/auth/enable2fa', c), { message: 'Google 2FA requires the token to be passed in', code: 401 })
  const previous = codeAt(manual, now - STEP)
  assert.deepEqual(await post('/v1/auth/enable2fa', { ...c, token: wrong(previous) }), { message: 'Google 2FA failed', code: 401 })
  const { res: enabledRes, json: enabled } = await call('POST', '/v1/auth/enable2fa', { body: { ...c, token: previous } })
  assert.equal(enabledRes.headers.get('cache-control'), 'no-store')
  const { details: { recoveryCodes }, ...rest } = enabled
  assert.deepEqual(rest, { message: 'Successfully enabled 2fa!', code: 200 })
  assert.equal(recoveryCodes.length, 10)
  for (const r of recoveryCodes) assert.match(r, CODE)
  assert.deepEqual(await post('/v1/auth/enable2fa', { ...c, token: previous }), { message: 'Cannot enable 2FA again, it is already set', code: 409 })
  assert.deepEqual(await get(`/v1/auth/create2fa?contactId=${contact}`), { message: 'Must disable 2FA before creating a new one', code: 403 })

  const current = codeAt(manual, now)
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, token: current }), { message: '2FA token is valid.', code: 200, method: 'token', recoveryCodesRemaining: 10 })
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, token: current }), { message: 'Google 2FA failed', code: 401 }, 'a replay')
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, token: wrong(current) }), { message: 'Google 2FA failed', code: 401 })
  assert.deepEqual(await get(`/v1/auth/2fa?contactId=${contact}`), { message: '2FA is true.', code: 200, status: true, recoveryCodesRemaining: 10 })

  const next = codeAt(manual, now + STEP)
  assert.deepEqual(await post('/v1/auth/disable2fa', { ...c, token: wrong(next) }), { message: 'Google 2FA failed', code: 401 })
  assert.deepEqual(await post('/v1/auth/disable2fa', { ...c, token: next }), { message: 'Successfully disbaled 2fa!', code: 200 })
  assert.deepEqual(await get(`/v1/auth/2fa?contactId=${contact.toUpperCase()}`), { message: '2FA is false.', code: 200, status: false, recoveryCodesRemaining: 0 })
  assert.deepEqual(await post('/v1/auth/disable2fa', { ...c, token: next }), { message: '2FA is not enabled', code: 409 })
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, token: next }), { message: '2FA is not enabled', code: 409 })
})

test('recovery codes over HTTP, as the Rust server answers', async () => {
  const contact = crypto.randomUUID()
  const c = { contactId: contact }
  if (STEP - (Date.now() % STEP) < 3000) await new Promise((r) => setTimeout(r, STEP - (Date.now() % STEP) + 50))
  const now = Date.now()
  const manual = (await get(`/v1/auth/create2fa?contactId=${contact}`)).details.manual
  const previous = codeAt(manual, now - STEP)

  assert.deepEqual(await post('/v1/auth/enable2fa', { ...c, token: previous, recoveryCode: '7KQ2-M9XD-A1B2-C3D4-E5F6-G7H8' }), NOT_HERE)
  const codes = (await post('/v1/auth/enable2fa', { ...c, token: previous, recoveryCode: '  ' })).details.recoveryCodes
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, token: codeAt(manual, now), recoveryCode: codes[0] }), CONFLICT)
  assert.deepEqual(await post('/v1/auth/disable2fa', { ...c, token: codeAt(manual, now), recoveryCode: codes[0] }), CONFLICT)
  const typed = codes[0].toLowerCase().replaceAll('-', ' ')
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, recoveryCode: typed }), {
    message: '2FA token is valid.',
    code: 200,
    method: 'recoveryCode',
    recoveryCodesRemaining: 9,
  })
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, recoveryCode: codes[0] }), FAILED, 'used up')
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, recoveryCode: 5 }), FAILED, 'not a string')
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, token: null, recoveryCode: null }), {
    message: 'Google 2FA requires the token to be passed in',
    code: 401,
  })

  assert.deepEqual(await post('/v1/auth/recoveryCodes', { ...c, recoveryCode: codes[1] }), NOT_HERE)
  assert.deepEqual(await post('/v1/auth/recoveryCodes', { ...c, token: '000000x' }), FAILED)
  const { res, json: regenerated } = await call('POST', '/v1/auth/recoveryCodes', { body: { ...c, token: codeAt(manual, now) } })
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.deepEqual(Object.keys(regenerated), ['message', 'code', 'details'])
  assert.equal(regenerated.message, 'Recovery codes regenerated.')
  const fresh = regenerated.details.recoveryCodes
  assert.ok(fresh.length === 10 && fresh.every((r) => CODE.test(r) && !codes.includes(r)))
  assert.deepEqual(await post('/v1/auth/verify2fa', { ...c, recoveryCode: codes[1] }), FAILED, 'the old set is gone')
  assert.deepEqual(await get(`/v1/auth/2fa?contactId=${contact}`), { message: '2FA is true.', code: 200, status: true, recoveryCodesRemaining: 10 })

  assert.deepEqual(await post('/v1/auth/disable2fa', { ...c, recoveryCode: fresh[0] }), { message: 'Successfully disbaled 2fa!', code: 200 })
  assert.deepEqual(await get(`/v1/auth/2fa?contactId=${contact}`), { message: '2FA is false.', code: 200, status: false, recoveryCodesRemaining: 0 })
  assert.deepEqual(await post('/v1/auth/recoveryCodes', { ...c, token: codeAt(manual, now + STEP) }), { message: '2FA is not enabled', code: 409 })
  assert.deepEqual(await post('/v1/auth/disable2fa', { ...c, recoveryCode: fresh[1] }), { message: '2FA is not enabled', code: 409 })
  // the contactId answers come before the recoveryCode one, as in the Rust server
  assert.deepEqual(await post('/v1/auth/enable2fa', { recoveryCode: 'x' }), { message: 'contactId is required', code: 400 })
  assert.deepEqual(await post('/v1/auth/recoveryCodes', { contactId: 'nope', recoveryCode: 'x' }), { message: 'contactId must be a UUID', code: 400 })
})

test('a missing or invalid bearer is 401 before anything else', async () => {
  const unauthorized = { message: 'Unauthorized', code: 401 }
  for (const auth of [null, '', 'Bearer', `Basic ${key}`, 'Bearer sk_sandbox_wrong', `Bearer ${publishableKey}`]) {
    assert.deepEqual(await get('/v1/auth/2fa?contactId=nope', { auth }), unauthorized, String(auth))
    assert.deepEqual(await post('/v1/auth/enable2fa', undefined, { auth, raw: '{not json' }), unauthorized, String(auth))
  }
})

test('bad input is a 4xx with the exact message', async () => {
  assert.deepEqual(await get('/v1/auth/2fa'), { message: 'contactId is required', code: 400 })
  assert.deepEqual(await get('/v1/auth/2fa?contactId=nope'), { message: 'contactId must be a UUID', code: 400 })
  assert.deepEqual(await get('/v1/auth/create2fa?contactId=12345678-1234-1234-1234-1234567890'), { message: 'contactId must be a UUID', code: 400 })
  assert.deepEqual(await get('/v1/auth/2fa?contactId=a&contactId=b'), { message: 'duplicate field: contactId', code: 400 })
  assert.deepEqual(await post('/v1/auth/verify2fa', { token: '123456' }), { message: 'contactId is required', code: 400 })
  assert.deepEqual(await post('/v1/auth/enable2fa', { contactId: 5, token: '123456' }), { message: 'contactId must be a string', code: 400 })
  assert.deepEqual(await post('/v1/auth/disable2fa', { contactId: 'nope', token: '123456' }), { message: 'contactId must be a UUID', code: 400 })
  assert.deepEqual((await call('POST', '/v1/auth/enable2fa', { raw: '{"contactId":' })).json, { message: 'body must be valid JSON', code: 400 })
  for (const raw of ['[1]', 'null', '"x"']) {
    assert.deepEqual((await call('POST', '/v1/auth/enable2fa', { raw })).json, { message: 'body must be a JSON object', code: 400 }, raw)
  }
  const big = JSON.stringify({ contactId: crypto.randomUUID(), pad: 'x'.repeat(70_000) })
  assert.deepEqual((await call('POST', '/v1/auth/enable2fa', { raw: big })).json, { message: 'Request body is too large', code: 413 })
  assert.deepEqual(await get('/v1/nowhere'), { message: 'Not found', code: 404 })
  assert.deepEqual((await call('DELETE', '/v1/auth/2fa')).json, { message: 'Method not allowed', code: 405 })
})

test('the widget snippet route builds the URL and snippets from options', async () => {
  const options = { tokens: 'eth', receiveAddress: { eth: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }, amount: '25.50', targetContainerId: 'rampart-widget' }
  const built = await post('/v1/widget/snippet', options)
  const expected = { ...options, publicKey: publishableKey }
  assert.deepEqual(built, {
    message: 'Widget snippets built.',
    code: 200,
    url: rampart.buildUrl(expected),
    script: rampart.scriptSnippet(expected),
    iframe: rampart.iframeSnippet(expected),
    warnings: [],
    mode: { kind: 'oneScreenCheckout' },
  })
  assert.ok(built.url.startsWith(`https://widget-sandbox.rampart.network/?publicKey=${publishableKey}&`))

  const bad = await post('/v1/widget/snippet', { amount: '25.50' })
  assert.equal(bad.code, 400)
  assert.equal(bad.message, `Invalid widget options: ${bad.errors.map((e) => e.path).join(', ')}`)
  assert.ok(bad.errors.some((e) => e.path === 'targetContainerId'), JSON.stringify(bad.errors))
})

test('RAMPART_MASTER_KEY_FILE: the newest key of an owner-only file', async () => {
  const file = path.join(dir, 'master.key')
  fs.writeFileSync(file, `# keys\n1:${'07'.repeat(32)}\n2:${'09'.repeat(32)}\n`, { mode: 0o600 })
  assert.deepEqual(readKeyFile(file), { masterKeyId: 2, masterKey: Buffer.alloc(32, 9) })
  const db = path.join(dir, 'keyed.db')
  const keyed = openService({ RAMPART_DB: db, RAMPART_MASTER_KEY_FILE: file })
  const { partnerId } = await keyed.createPartner('Keyed')
  await keyed.create2fa(partnerId, crypto.randomUUID())
  keyed.close()
  assert.equal(fs.existsSync(`${db}.key`), false, 'no generated key beside the database')
  fs.chmodSync(file, 0o640)
  assert.throws(() => readKeyFile(file), /chmod 600/)
  fs.writeFileSync(file, `1:${'07'.repeat(32)}\n1:${'08'.repeat(32)}\n`, { mode: 0o600 })
  fs.chmodSync(file, 0o600)
  assert.throws(() => readKeyFile(file), /line 2 gives key id 1 twice/)
})
