// Side by side in one Node process: the binding's pure helpers against otplib, speakeasy and
// the `qrcode` package, and the service's store-backed verify on a SQLite file (Promises
// resolved per second). Run with `make node-bench` (release build).
'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { authenticator } = require('otplib')
const speakeasy = require('speakeasy')
const QRCode = require('qrcode')

const rampart = require('..')

// Runs fn repeatedly for about `ms` milliseconds (after a warm-up), returns ops per second.
function rate(fn, ms = 1500) {
  const until = (budget) => {
    const end = process.hrtime.bigint() + BigInt(budget) * 1_000_000n
    let n = 0
    let t0 = process.hrtime.bigint()
    const start = t0
    while (t0 < end) {
      for (let i = 0; i < 100; i++) fn()
      n += 100
      t0 = process.hrtime.bigint()
    }
    return n / (Number(t0 - start) / 1e9)
  }
  until(200)
  return until(ms)
}

async function rateAsync(fn, ms = 2000) {
  const start = process.hrtime.bigint()
  const end = start + BigInt(ms) * 1_000_000n
  let n = 0
  while (process.hrtime.bigint() < end) {
    await fn()
    n += 1
  }
  return n / (Number(process.hrtime.bigint() - start) / 1e9)
}

function fmt(x) {
  return x >= 1000 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1)
}

async function main() {
  const secret = rampart.newSecret('Bench', 'user').secret
  const now = Math.floor(Date.now() / 1000)
  const token = rampart.codeAt(secret, now - 30) // a neighbour step: every candidate is computed
  const otp = authenticator.clone({ window: 1 })
  if (!rampart.verify(secret, token) || !otp.check(token, secret)) throw new Error('setup: codes disagree')
  if (!speakeasy.totp.verify({ secret, encoding: 'base32', token, window: 1 })) throw new Error('setup: speakeasy disagrees')

  const rows = []
  const ours = rate(() => rampart.verify(secret, token))
  const theirs = rate(() => otp.check(token, secret))
  const speak = rate(() => speakeasy.totp.verify({ secret, encoding: 'base32', token, window: 1 }))
  rows.push(['verify, window 1: rampart.verify', ours, ''])
  rows.push(['verify, window 1: otplib authenticator.check', theirs, `rampart ${(ours / theirs).toFixed(1)}x (target >= 15x)`])
  rows.push(['verify, window 1: speakeasy.totp.verify', speak, `rampart ${(ours / speak).toFixed(1)}x`])

  const enrolOurs = rate(() => rampart.newSecret('Bench', 'user@example.com'), 2000)
  // otplib's secret and Key URI, then qrcode's PNG data URI: the same enrolment in JS.
  let pending = 0
  const enrolTheirs = await (async () => {
    const once = () => {
      const s = authenticator.generateSecret(20)
      return QRCode.toDataURL(authenticator.keyuri('user@example.com', 'Bench', s))
    }
    for (let i = 0; i < 50; i++) await once()
    const start = process.hrtime.bigint()
    const end = start + 2_000_000_000n
    while (process.hrtime.bigint() < end) {
      await once()
      pending++
    }
    return pending / (Number(process.hrtime.bigint() - start) / 1e9)
  })()
  rows.push(['new secret + Key URI + QR data URI: rampart.newSecret', enrolOurs, ''])
  rows.push(['new secret + Key URI + QR: otplib + qrcode.toDataURL', enrolTheirs, `rampart ${(enrolOurs / enrolTheirs).toFixed(1)}x (target >= 10x)`])

  // The store-backed verify: a SQLite file, one contact per request stream, each verify a
  // wrong code (an evaluated, counted attempt) with throttling off so every call does the work.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-bench-'))
  const service = new rampart.Service(path.join(dir, 'bench.db'), { throttling: false })
  try {
    const partner = (await service.createPartner('Bench')).partnerId
    const contacts = []
    for (let i = 0; i < 64; i++) {
      const c = crypto.randomUUID()
      const s = await service.create2fa(partner, c)
      await service.enable2fa(partner, c, rampart.codeAt(s.manual))
      contacts.push({ c, wrong: rampart.codeAt(s.manual, now + 3600) })
    }
    const one = contacts[0]
    const serial = await rateAsync(() => service.verify2fa(partner, one.c, one.wrong))
    const batch = await rateAsync(() => Promise.all(contacts.map((x) => service.verify2fa(partner, x.c, x.wrong))))
    rows.push(['service.verify2fa (SQLite file), one at a time', serial, 'Promises resolved / s'])
    rows.push(['service.verify2fa (SQLite file), 64 in flight', batch * contacts.length, 'Promises resolved / s'])
  } finally {
    service.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }

  console.log(`node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}`)
  console.log('| benchmark | ops/s | note |')
  console.log('|---|---:|---|')
  for (const [name, r, note] of rows) console.log(`| ${name} | ${fmt(r)} | ${note} |`)
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
