#!/usr/bin/env node
// A small partner backend: SPEC section 3's create / enable / status routes over the Node
// binding, with only Node's `http` module.
//
//   node examples/node/partner_backend.js --db partner.db   # serve on 127.0.0.1:8082
//   node examples/node/partner_backend.js --self-test       # serve, call, stop
//
// One `Service` serves every request; its storage calls are Promises worked on the libuv pool,
// so the event loop keeps accepting requests. A rejected `RampartError` is answered as
// `{"message", "code"}` with `code` and the HTTP status both its `status` (the wire format of
// SPEC section 3); its `code` (the stable name, e.g. 'token_failed') is what the log records.
'use strict'

const http = require('node:http')
const crypto = require('node:crypto')

const rampart = require('../../bindings/node')

const MAX_BODY = 64 * 1024

function answer(res, code, body, headers = {}) {
  const { message, ...rest } = body
  const payload = JSON.stringify({ message, code, ...rest })
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers })
  res.end(payload)
}

// A 4xx of this server's own (body size, JSON), shaped as the binding's errors are.
function badRequest(message, status = 400) {
  return new rampart.RampartError(message, { code: status === 413 ? 'payload_too_large' : 'invalid_input', status })
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    let size = 0
    const chunks = []
    req.on('data', (c) => {
      size += c.length
      if (size > MAX_BODY) {
        reject(badRequest('Request body is too large', 413))
        req.destroy()
      } else chunks.push(c)
    })
    req.on('end', () => {
      try {
        const data = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {}
        if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new Error('body must be a JSON object')
        resolve(data)
      } catch (e) {
        reject(badRequest(e instanceof SyntaxError ? 'body must be JSON' : e.message))
      }
    })
    req.on('error', reject)
  })
}

function handler(service) {
  const routes = {
    'GET /v1/auth/create2fa': async (partner, query) => {
      const setup = await service.create2fa(partner, query.get('contactId'), query.get('twoFactorIssuer'))
      return [200, { message: 'Successfully created 2fa!', details: { qrCode: setup.qrCode, manual: setup.manual } }, { 'Cache-Control': 'no-store' }]
    },
    'POST /v1/auth/enable2fa': async (partner, _query, req) => {
      const body = await readJson(req)
      if (body.contactId != null && typeof body.contactId !== 'string') {
        throw badRequest('contactId must be a string')
      }
      // The token goes in as sent (string, number, anything): the binding applies the grammar.
      // Enable hands out the 10 recovery codes: answered once, never cached, stored or logged.
      const recoveryCodes = await service.enable2fa(partner, body.contactId, body.token)
      return [200, { message: 'Successfully enabled 2fa!', details: { recoveryCodes } }, { 'Cache-Control': 'no-store' }]
    },
    'GET /v1/auth/2fa': async (partner, query) => {
      const on = await service.status2fa(partner, query.get('contactId'))
      const recoveryCodesRemaining = await service.recoveryCodesRemaining(partner, query.get('contactId'))
      return [200, { message: `2FA is ${on}.`, status: on, recoveryCodesRemaining }]
    },
  }
  return async (req, res) => {
    const url = new URL(req.url, 'http://localhost')
    const route = routes[`${req.method} ${url.pathname}`]
    let kind = null
    try {
      if (!route) {
        const known = Object.keys(routes).some((k) => k.endsWith(` ${url.pathname}`))
        return answer(res, known ? 405 : 404, { message: known ? 'Method not allowed' : 'Not found' })
      }
      const { partnerId } = await service.authenticate(req.headers.authorization ?? '')
      const [code, body, headers] = await route(partnerId, url.searchParams, req)
      answer(res, code, body, headers)
    } catch (err) {
      if (err instanceof rampart.RampartError) {
        kind = err.code
        answer(res, err.status, { message: err.message }, err.retryAfter != null ? { 'Retry-After': String(err.retryAfter) } : {})
      } else {
        // Anything else is a bug here: a 500 that never carries its detail, which is logged instead.
        kind = 'internal'
        console.error(err)
        answer(res, 500, { message: 'Internal error' })
      }
    } finally {
      // Method, path without the query (it may hold ids), status and error name: never bodies or codes.
      if (process.env.RAMPART_EXAMPLE_LOG) console.error(`${req.method} ${url.pathname} ${res.statusCode}${kind ? ` ${kind}` : ''}`)
    }
  }
}

function serve(service, host, port) {
  return new Promise((resolve) => {
    const server = http.createServer(handler(service))
    server.listen(port, host, () => resolve(server))
  })
}

async function call(base, key, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return res.json()
}

async function selfTest() {
  const assert = require('node:assert/strict')
  const service = new rampart.Service()
  const key = (await service.createPartner('Example')).secretKey
  const server = await serve(service, '127.0.0.1', 0)
  const base = `http://127.0.0.1:${server.address().port}`
  const contact = crypto.randomUUID()
  try {
    const created = await call(base, key, 'GET', `/v1/auth/create2fa?contactId=${contact}`)
    assert.equal(created.code, 200)
    assert.match(created.details.qrCode, /^data:image\/png;base64,/)
    assert.deepEqual(await call(base, key, 'POST', '/v1/auth/enable2fa', { contactId: contact, token: '12345' }), { message: 'Google 2FA failed', code: 401 })
    const token = rampart.codeAt(created.details.manual)
    const { details, ...enabled } = await call(base, key, 'POST', '/v1/auth/enable2fa', { contactId: contact, token })
    assert.deepEqual(enabled, { message: 'Successfully enabled 2fa!', code: 200 })
    assert.equal(details.recoveryCodes.length, 10)
    assert.deepEqual(await call(base, key, 'GET', `/v1/auth/2fa?contactId=${contact}`), { message: '2FA is true.', code: 200, status: true, recoveryCodesRemaining: 10 })
    // A lost phone: a recovery code in place of the token, once.
    const partnerId = (await service.authenticate(key)).partnerId
    assert.deepEqual(await service.verify2fa(partnerId, contact, { recoveryCode: details.recoveryCodes[0] }), { method: 'recoveryCode', recoveryCodesRemaining: 9 })
    assert.equal(await service.verify2fa(partnerId, contact, { recoveryCode: details.recoveryCodes[0] }), false)
    assert.deepEqual(await call(base, 'sk_sandbox_wrong', 'GET', `/v1/auth/2fa?contactId=${contact}`), { message: 'Unauthorized', code: 401 })
    assert.deepEqual(await call(base, key, 'GET', '/v1/auth/2fa?contactId=nope'), { message: 'contactId must be a UUID', code: 400 })
    assert.deepEqual(await call(base, key, 'POST', '/v1/auth/enable2fa', { contactId: 5 }), { message: 'contactId must be a string', code: 400 })
    assert.deepEqual(await call(base, key, 'POST', '/v1/auth/enable2fa', { contactId: contact, token }), { message: 'Cannot enable 2FA again, it is already set', code: 409 })
    console.log('self-test passed: create, enable, status, errors')
  } finally {
    server.close()
    service.close()
  }
}

async function main() {
  const args = process.argv.slice(2)
  const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
  if (args.includes('--self-test')) return selfTest()
  const db = opt('--db', 'partner.db')
  const listen = opt('--listen', '127.0.0.1:8082')
  const [host, port] = [listen.slice(0, listen.lastIndexOf(':')), Number(listen.slice(listen.lastIndexOf(':') + 1))]
  const service = new rampart.Service(db)
  if ((await service.partnerCount()) === 0) {
    // Keys are stored only as hashes: they can be printed once, now.
    const creds = await service.createPartner('Demo partner')
    console.log(`demo partner ${creds.partnerId}\nKEY=${creds.secretKey}`)
    console.log(`curl -s -H "Authorization: Bearer $KEY" "http://${listen}/v1/auth/create2fa?contactId=${crypto.randomUUID()}"`)
  }
  await serve(service, host, port)
  console.log(`serving on http://${listen} over ${db}`)
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err)
    process.exitCode = 1
  })
}

module.exports = { serve, selfTest }
