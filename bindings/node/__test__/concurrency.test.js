// Many Promises on one service: storage work runs off the event loop, and of N concurrent
// submissions of one valid code exactly one is accepted.
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { rampart, START, code } = require('./helpers')

function tempDb(ctx, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-node-'))
  ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return path.join(dir, name)
}

test('64 concurrent verifies of one code on a SQLite service: exactly one succeeds', async (ctx) => {
  const clock = new rampart.ManualClock(START)
  const service = new rampart.Service(tempDb(ctx, 'race.db'), {}, clock)
  ctx.after(() => service.close())
  const partner = (await service.createPartner('Acme')).partnerId
  const contact = crypto.randomUUID()
  const s = await service.create2fa(partner, contact)
  await service.enable2fa(partner, contact, code(s.manual, clock.now))
  for (let round = 0; round < 5; round++) {
    clock.advance(30)
    const c = code(s.manual, clock.now)
    const results = await Promise.all(Array.from({ length: 64 }, () => service.verify2fa(partner, contact, c)))
    assert.equal(results.filter(Boolean).length, 1, `round ${round}`)
  }
})

test('concurrent disables with one code: exactly one succeeds, the rest reject', async (ctx) => {
  const clock = new rampart.ManualClock(START)
  const service = new rampart.Service(tempDb(ctx, 'disable.db'), {}, clock)
  ctx.after(() => service.close())
  const partner = (await service.createPartner('Acme')).partnerId
  const contact = crypto.randomUUID()
  const s = await service.create2fa(partner, contact)
  await service.enable2fa(partner, contact, code(s.manual, clock.now))
  clock.advance(30)
  const c = code(s.manual, clock.now)
  const settled = await Promise.allSettled(Array.from({ length: 32 }, () => service.disable2fa(partner, contact, c)))
  assert.equal(settled.filter((r) => r.status === 'fulfilled').length, 1)
  for (const r of settled.filter((x) => x.status === 'rejected')) assert.ok(['token_failed', 'not_enabled'].includes(r.reason.code), r.reason.message)
})

test('many contacts at once, and the event loop keeps turning', async (ctx) => {
  const service = new rampart.Service(tempDb(ctx, 'many.db'))
  ctx.after(() => service.close())
  const partner = (await service.createPartner('Acme')).partnerId
  let ticks = 0
  const timer = setInterval(() => ticks++, 0)
  const lifecycle = async () => {
    const contact = crypto.randomUUID()
    const s = await service.create2fa(partner, contact)
    await service.enable2fa(partner, contact, code(s.manual, Math.floor(Date.now() / 1000)))
    const statuses = await Promise.all(Array.from({ length: 10 }, () => service.status2fa(partner, contact)))
    return statuses.every(Boolean)
  }
  const results = await Promise.all(Array.from({ length: 50 }, lifecycle))
  clearInterval(timer)
  assert.deepEqual(results, Array(50).fill(true))
  assert.ok(ticks > 0, 'timers ran while the work was pending')
})
