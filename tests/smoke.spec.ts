import { expect } from 'chai'
import { ChildProcess, spawn } from 'child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'fs'
import { request } from 'http'
import { createServer } from 'net'
import { tmpdir } from 'os'
import { join, resolve } from 'path'
import { ConsoleSocket } from './helpers/console'
import { freePort, sleep } from './helpers/wait'

// End-to-end: `node scripts/start.js` builds and installs the plugin, starts
// Koishi in a temp demo folder and serves the console; stopping it leaves
// nothing behind. Run alone: `npx mocha tests/smoke.spec.ts` (about 10-30 s).

const root = resolve(__dirname, '..')

function get(url: string): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 5000 }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => body += chunk)
      res.on('end', () => resolve({ status: res.statusCode, body }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('timeout')))
    req.on('error', reject)
    req.end()
  })
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(true))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)))
  })
}

describe('npm start (smoke)', function () {
  this.timeout(150000)

  let demoDir: string
  let port: number
  let child: ChildProcess
  let output = ''
  let exited: Promise<{ code: number, signal: NodeJS.Signals }>

  function killTree(signal: NodeJS.Signals) {
    try {
      process.kill(-child.pid, signal)
    } catch {}
  }

  // SIGTERM lets start.js stop Koishi (which runs in a process group of its
  // own); SIGKILL only if that takes more than 20 s.
  async function stop() {
    killTree('SIGTERM')
    const timer = setTimeout(() => killTree('SIGKILL'), 20000)
    const result = await exited
    clearTimeout(timer)
    return result
  }

  before(async () => {
    demoDir = mkdtempSync(join(tmpdir(), 'chatluna-tools-smoke-'))
    port = await freePort()
    child = spawn(process.execPath, [join(root, 'scripts/start.js')], {
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CHATLUNA_TOOLS_DEMO_DIR: demoDir, KOISHI_PORT: String(port) },
    })
    child.stdout.on('data', (chunk) => output += chunk)
    child.stderr.on('data', (chunk) => output += chunk)
    exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  })

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) await stop()
    if (demoDir) rmSync(demoDir, { recursive: true, force: true })
  })

  it('serves the console, then stops cleanly', async () => {
    const started = Date.now()
    const url = `http://127.0.0.1:${port}/`
    let page: { status: number, body: string }
    let ended = false
    exited.then(() => ended = true)
    while (Date.now() - started < 90000) {
      if (ended) break
      page = await get(url).catch(() => undefined)
      if (page && page.status === 200) break
      await sleep(500)
    }
    if (!page || page.status !== 200) {
      throw new Error(`console did not answer at ${url} (${ended ? 'start.js exited' : 'timed out'}); output:\n${output}`)
    }
    expect(page.body).to.match(/^<!DOCTYPE html>/i)
    expect(page.body).to.include('<div id="app">')
    expect(output).to.include(`http://127.0.0.1:${port}/`)

    // The demo folder was generated.
    for (const file of [
      'koishi.yml',
      'package.json',
      'demo-workspace/README.md',
      'demo-workspace/notes.txt',
      'demo-workspace/data/sample.json',
      'demo-workspace/src/hello.py',
      'demo-workspace/skills/todo-triage/SKILL.md',
      'demo-workspace/skills/write-a-skill/SKILL.md',
    ]) {
      expect(existsSync(join(demoDir, file)), file).to.be.true
    }
    expect(readFileSync(join(demoDir, 'koishi.yml'), 'utf8')).to.include('chatluna-tools')
    const notes = readFileSync(join(demoDir, 'demo-workspace/notes.txt'), 'utf8').trim().split('\n')
    expect(notes.length).to.be.at.least(20)
    expect(JSON.parse(readFileSync(join(demoDir, 'demo-workspace/data/sample.json'), 'utf8'))).to.be.an('object')
    // The plugin itself loaded without errors, and the demo MCP server connected.
    expect(output).to.match(/apply plugin chatluna-tools/)
    for (let waited = 0; !/MCP server everything connected \(stdio, \d+ tools\)/.test(output) && waited < 15000; waited += 200) await sleep(200)
    expect(output).to.match(/MCP server everything connected \(stdio, \d+ tools\)/)
    expect(output).not.to.match(/\[E\]/)

    // The console page is served from the installed copy (production mode:
    // the built dist/ inside node_modules), as it is for a marketplace install.
    const socket = await ConsoleSocket.connect(port)
    try {
      const entries = await socket.until('entry', (value) => value && Object.keys(value).length > 1, 20000)
      const files = Object.entries(entries).filter(([key]) => key !== '_id').flatMap(([, entry]: [string, any]) => entry.files)
      const scripts = await Promise.all(files.filter((file) => file.endsWith('.js')).map((file) => get(`http://127.0.0.1:${port}${file}`)))
      const page = scripts.find((script) => script.status === 200 && script.body.includes('chatluna-tools/scope'))
      expect(page, `no console entry serves the tools page: ${files.join(', ')}`).to.not.equal(undefined)
    } finally {
      socket.close()
    }

    // Stop the whole tree and wait for it.
    const { code, signal } = await stop()
    expect(signal, output).to.equal(null)
    expect(code, output).to.equal(0)
    expect(await isListening(port), `port ${port} still in use`).to.be.false
  })
})
