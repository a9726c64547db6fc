// Loading the package: `require` and `import` (named exports included), and the error that
// names the platform when the prebuilt addon does not fit or is missing (main.js).
'use strict'

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..')
const NODE = `Node.js ${process.version}`

// Runs `code` in a fresh node whose process.platform / process.arch are replaced first.
function load(dir, { platform, arch } = {}, code = "require('./main.js')") {
  const fake = [
    platform && `Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} })`,
    arch && `Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })`,
  ].filter(Boolean)
  const script = `${fake.join(';')}; try { ${code}; console.log('loaded') } catch (e) { console.log(e.message) }`
  const run = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  return run.stdout.trim()
}

test('require and ESM import both give every export, RampartError and the named ones', () => {
  assert.equal(load(ROOT), 'loaded')
  const esm = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `import { Service, RampartError, codeAt, VERSION } from ${JSON.stringify(path.join(ROOT, 'main.js'))};
      console.log(typeof Service, typeof RampartError, typeof codeAt, VERSION)`],
    { encoding: 'utf8' },
  )
  assert.equal(esm.status, 0, esm.stderr)
  assert.equal(esm.stdout.trim(), `function function function ${require('../package.json').version}`)
})

test('another architecture or OS gets an error naming it and the shipped one', () => {
  const advice =
    'this package ships one for linux-x64-gnu only. Build the addon from source ' +
    '(see README.md, "Other platforms") and point NAPI_RS_NATIVE_LIBRARY_PATH at it.'
  assert.equal(load(ROOT, { arch: 'arm64' }), `rampart: no prebuilt addon for linux-arm64-gnu (${NODE}); ${advice}`)
  assert.equal(load(ROOT, { platform: 'darwin', arch: 'arm64' }), `rampart: no prebuilt addon for darwin-arm64 (${NODE}); ${advice}`)
  assert.equal(load(ROOT, { platform: 'win32' }), `rampart: no prebuilt addon for win32-x64 (${NODE}); ${advice}`)
})

test('a missing or broken addon on linux-x64-gnu says which file and why, not npm bug advice', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-platform-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  for (const file of ['main.js', 'index.js', 'package.json']) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file))
  const prefix = `rampart: the prebuilt linux-x64-gnu addon (rampart.linux-x64-gnu.node) did not load on ${NODE}: `
  const suffix = '. It needs glibc 2.34 or later and Node.js 18 or later; reinstall the package if the file is missing.'
  assert.equal(load(dir), `${prefix}Cannot find module './rampart.linux-x64-gnu.node'${suffix}`)
  fs.writeFileSync(path.join(dir, 'rampart.linux-x64-gnu.node'), 'not an ELF file\n')
  assert.equal(load(dir), `${prefix}${path.join(dir, 'rampart.linux-x64-gnu.node')}: file too short${suffix}`)
})
