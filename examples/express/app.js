#!/usr/bin/env node
// A partner backend on Express over the Rampart Node binding: the 2FA routes of SPEC section 3
// (with the recovery codes of section 8) and one widget route. Copy it, then put your own routes
// beside these.
//
//   RAMPART_DB=partner.db node app.js        # serve on 127.0.0.1:3000 (HOST, PORT)
//
// Every answer is `{"message", "code", ...}` with the HTTP status equal to `code`. The binding's
// storage calls return Promises worked on the libuv pool, so the event loop stays free; Express 5
// hands a rejected Promise to the error handler at the bottom, which answers a RampartError with
// its `status` and fixed `message`.
'use strict'

const fs = require('node:fs')
const express = require('express')

const rampart = require('rampart')

/**
 * The Service the environment describes: `RAMPART_DB` (a SQLite file, or a postgres:// URL;
 * default `rampart.db`), `RAMPART_ENVIRONMENT` (`sandbox` or `production`) and
 * `RAMPART_MASTER_KEY_FILE`. Without a key file, a SQLite store keeps its key in `<db>.key`.
 * @param {Record<string, string | undefined>} [env]
 * @returns {import('rampart').Service}
 */
function openService(env = process.env) {
  const options = { environment: env.RAMPART_ENVIRONMENT || 'sandbox' }
  if (env.RAMPART_MASTER_KEY_FILE) Object.assign(options, readKeyFile(env.RAMPART_MASTER_KEY_FILE))
  return new rampart.Service(env.RAMPART_DB || 'rampart.db', options)
}

/**
 * The newest key of a key file in the server's format (`ID:HEX` lines, 64 hex digits; `#`
 * comments). The binding holds one key, so secrets sealed under an older id must be re-sealed
 * (`rampart-server keys rewrap`) first; the Service refuses to open a store it cannot read.
 * @param {string} file
 */
function readKeyFile(file) {
  if (fs.statSync(file).mode & 0o077) throw new Error(`master key file ${file}: chmod 600 it (owner only)`)
  let best = null
  const seen = new Set()
  fs.readFileSync(file, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.trim()
    if (!line || line.startsWith('#')) return
    const m = /^(?:(\d+)\s*:)?\s*([0-9a-fA-F]{64})$/.exec(line)
    if (!m) throw new Error(`master key file ${file}: line ${i + 1} must be ID:HEX with 64 hex digits`)
    const id = m[1] === undefined ? 1 : Number(m[1])
    if (seen.has(id)) throw new Error(`master key file ${file}: line ${i + 1} gives key id ${id} twice`)
    seen.add(id)
    if (!best || id > best.masterKeyId) best = { masterKeyId: id, masterKey: Buffer.from(m[2], 'hex') }
  })
  if (!best) throw new Error(`master key file ${file}: holds no key`)
  return best
}

/** Answers `{"message", "code", ...extra}` with the status `code`. */
function send(res, code, message, extra = {}) {
  res.status(code).json({ message, code, ...extra })
}

/** A 4xx of this app's own, shaped as the binding's errors are. */
function invalid(message) {
  return new rampart.RampartError(message, { code: 'invalid_input', status: 400 })
}

/** Given, as SPEC section 8.1 means it: present, not null, not only (ASCII) white space. */
function given(value) {
  return value != null && !(typeof value === 'string' && /^[ \t\n\f\r]*$/.test(value))
}

/** The answer that shows recovery codes: `details.recoveryCodes`, never cached. */
function sendCodes(res, message, codes) {
  res.set('Cache-Control', 'no-store')
  send(res, 200, message, { details: { recoveryCodes: codes } })
}

/**
 * The Express app over `service`; it does not listen (the caller does) nor close the service.
 * @param {import('rampart').Service} service
 */
function createApp(service) {
  const app = express()
  app.disable('x-powered-by')

  // The partner is the owner of the secret key in `Authorization: Bearer sk_...`; 401 otherwise.
  const auth = async (req, res, next) => {
    res.locals.partner = (await service.authenticate(req.get('authorization') ?? '')).partnerId
    // A name given twice (`?contactId=a&contactId=b`) is refused, as SPEC section 3 asks.
    const twice = Object.keys(req.query).find((name) => Array.isArray(req.query[name]))
    next(twice === undefined ? undefined : invalid(`duplicate field: ${twice}`))
  }
  // Whatever the content type (curl -d sends a form type), at most 64 KiB, a JSON object;
  // read after authenticating, so a stranger's body is never parsed.
  const json = [
    express.json({ limit: '64kb', strict: false, type: () => true }),
    (req, _res, next) => {
      const b = req.body === undefined ? {} : req.body // undefined: no body was sent
      next(b !== null && typeof b === 'object' && !Array.isArray(b) ? undefined : invalid('body must be a JSON object'))
    },
  ]
  // A route, and 405 for its path with any other method.
  const route = (method, path, ...handlers) => {
    app[method](path, auth, ...handlers)
    app.all(path, (_req, res) => send(res, 405, 'Method not allowed'))
  }

  route('get', '/v1/auth/create2fa', async (req, res) => {
    const { contactId, twoFactorIssuer } = req.query
    const setup = await service.create2fa(res.locals.partner, contactId, twoFactorIssuer || null)
    res.set('Cache-Control', 'no-store') // the only answer that carries a secret
    send(res, 200, 'Successfully created 2fa!', { details: { qrCode: setup.qrCode, manual: setup.manual } })
  })
  // Enable and regenerate take only `token`: a given `recoveryCode` is 400, after the contactId
  // answers (the binding gives those, here from a read that changes nothing).
  const onlyToken = async (req, res, next) => {
    if (!given(req.body?.recoveryCode)) return next()
    await service.recoveryCodesRemaining(res.locals.partner, req.body?.contactId)
    next(invalid('recoveryCode is not accepted here'))
  }
  // The token goes in as sent (string, number, anything): the binding applies SPEC section 2's
  // grammar. Enable answers the 10 recovery codes, once.
  route('post', '/v1/auth/enable2fa', json, onlyToken, async (req, res) => {
    const codes = await service.enable2fa(res.locals.partner, req.body?.contactId, req.body?.token)
    sendCodes(res, 'Successfully enabled 2fa!', codes)
  })
  route('post', '/v1/auth/recoveryCodes', json, onlyToken, async (req, res) => {
    const codes = await service.regenerateRecoveryCodes(res.locals.partner, req.body?.contactId, req.body?.token)
    sendCodes(res, 'Recovery codes regenerated.', codes)
  })
  // Disable and verify take `token` or `recoveryCode`, each as sent; both given reject with the
  // binding's 400 "Give token or recoveryCode, not both".
  const factor = (body) => ({ token: body?.token, recoveryCode: body?.recoveryCode })
  route('post', '/v1/auth/disable2fa', json, async (req, res) => {
    await service.disable2fa(res.locals.partner, req.body?.contactId, factor(req.body))
    send(res, 200, 'Successfully disbaled 2fa!') // sic: the wire-compatible message
  })
  // verify2fa resolves false for a wrong or replayed code (an outcome); over HTTP that is a 401.
  route('post', '/v1/auth/verify2fa', json, async (req, res) => {
    const verified = await service.verify2fa(res.locals.partner, req.body?.contactId, factor(req.body))
    if (!verified) throw new rampart.RampartError('Google 2FA failed', { code: 'token_failed', status: 401 })
    send(res, 200, '2FA token is valid.', verified) // method, recoveryCodesRemaining
  })
  route('get', '/v1/auth/2fa', async (req, res) => {
    const on = await service.status2fa(res.locals.partner, req.query.contactId)
    const remaining = await service.recoveryCodesRemaining(res.locals.partner, req.query.contactId)
    send(res, 200, `2FA is ${on}.`, { status: on, recoveryCodesRemaining: remaining })
  })

  // The widget for these options (SPEC section 4): its URL, the script and iframe snippets to
  // paste into a page. The partner's publishable key and environment fill what is not given.
  route('post', '/v1/widget/snippet', json, async (req, res) => {
    const partner = await service.partner(res.locals.partner)
    const options = { ...req.body }
    if (options.publicKey === undefined && options.apiKey === undefined) options.publicKey = partner.publishableKey
    const settings = { defaultEnvironment: partner.environment }
    const checked = rampart.validate(options, { ...settings, target: 'script' })
    const { errors, warnings, mode } = checked
    if (!checked.valid) {
      return send(res, 400, `Invalid widget options: ${errors.map((e) => e.path).join(', ')}`, { errors, warnings, mode })
    }
    const script = rampart.scriptSnippet(options, settings)
    send(res, 200, 'Widget snippets built.', { url: checked.url, script, iframe: rampart.iframeSnippet(options, settings), warnings, mode })
  })

  app.use((_req, res) => send(res, 404, 'Not found'))

  // One place maps every failure to `{"message","code"}`; a 500 never carries its detail.
  app.use((err, req, res, _next) => {
    if (err instanceof rampart.RampartError) {
      if (err.retryAfter != null) res.set('Retry-After', String(err.retryAfter))
      return send(res, err.status, err.message)
    }
    if (err.type === 'entity.too.large') return send(res, 413, 'Request body is too large')
    if (err.type === 'entity.parse.failed') return send(res, 400, 'body must be valid JSON')
    if (err.type && err.status >= 400 && err.status < 500) return send(res, 400, 'body could not be read')
    console.error(`${req.method} ${req.path}:`, err) // method and path only: the query may hold ids
    send(res, 500, 'Internal server error')
  })
  return app
}

module.exports = { createApp, openService, readKeyFile }

if (require.main === module) {
  const service = openService()
  const host = process.env.HOST || '127.0.0.1'
  const port = Number(process.env.PORT || 3000)
  ;(async () => {
    if ((await service.partnerCount()) === 0) {
      // Secret keys are stored only as hashes: this is the one time it can be printed.
      const { partnerId, secretKey } = await service.createPartner('Demo partner', service.environment)
      console.log(`demo partner ${partnerId}\nKEY=${secretKey}`)
    }
    createApp(service).listen(port, host, (err) => {
      if (err) throw err // Express 5 passes listen errors (EADDRINUSE) here
      console.log(`serving on http://${host}:${port}`)
    })
  })().catch((err) => {
    console.error(err.message)
    process.exitCode = 1
  })
}
