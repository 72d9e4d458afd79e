import { ChildProcess, spawn } from 'child_process'
import { resolve } from 'path'
import { freePort, sleep, waitFor } from './wait'

export { freePort, sleep, waitFor }

/** Entry scripts of the real MCP servers from npm (dev dependencies). */
export const everythingBin = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
export const filesystemBin = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
/** Our own fixture server for the edge cases. */
export const fixtureBin = resolve(__dirname, '../fixtures/mcp-fixture.cjs')

/** A stdio server entry for the config: `node <script> ...args`. */
export function stdioServer(id: string, script: string, args: string[] = [], extra: Record<string, unknown> = {}) {
  return { id, transport: 'stdio', command: process.execPath, args: [script, ...args], ...extra }
}

/** Whether a process with this id exists. */
export function isAlive(pid: number) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}


/**
 * `server-everything` over HTTP on a free port (or `port`): `streamableHttp`
 * mode (endpoint `/mcp`) or the old `sse` mode (endpoint `/sse`); `url` is
 * the endpoint on 127.0.0.1.
 */
export async function startEverythingHttp(port?: number, mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  port ??= await freePort()
  const child = spawn(process.execPath, [everythingBin, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => output += chunk)
  child.stderr.on('data', (chunk) => output += chunk)
  await waitFor(() => /(listening on|running on) port/.test(output) || child.exitCode !== null, 10000, 'server-everything to listen')
  if (child.exitCode !== null) throw new Error(`server-everything exited: ${output}`)
  return {
    url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    },
  }
}
